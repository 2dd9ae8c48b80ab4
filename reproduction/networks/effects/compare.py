"""Which of the networks' uncovered points are packet effects (issue 23)? The packaged
settings (m = 1000, W = 30, seed 1; ``<network>_m1000``, bmf and pf only, run with
today's intervals) beside variants (larger m, larger W, other seeds; ``*_pf_m16000``: pf
only, m = 16000), per policy, load
and class: the packet γ's relative difference to the fluid γ, and whether the fluid γ
is in the packet γ's 95% interval. Then, per run and policy, how many rows cover with
those intervals and with family-wise ones: "every point covers" is a claim about all n
rows of a run at once, and n separate 95% intervals miss about 5% of rows when every
point is right; Bonferroni's family-wise intervals (each widened from z_{0.975} to
z_{1 − 0.025/n}, 3.12 for n = 28) all cover with probability ≥ 95% then, for
z-intervals around an exact fluid value. Two simplifications make covering harder, not
easier: Student-t intervals (loads 0.8–0.9, replications) get the z ratio, smaller than
the t ratio, and a simulated fluid γ's own interval is ignored.

    python reproduction/networks/effects/compare.py
"""

from pathlib import Path

import pandas as pd
from scipy.stats import norm

HERE = Path(__file__).parent
KEYS = ["policy", "load", "class"]
#: network: its variants (directory, column label), the packaged settings first
VARIANTS = {
    "nfv_chain": [("nfv_chain_m1000", "m=1000"), ("nfv_chain_m4000", "m=4000"),
                  ("nfv_chain_m4000_w120", "m=4000 W=120"), ("nfv_chain_seed2", "seed 2"),
                  ("nfv_chain_seed3", "seed 3"), ("nfv_chain_pf_m16000", "pf m=16000"),
                  ("nfv_chain_seed101", "seed 101"), ("nfv_chain_seed102", "seed 102"),
                  ("nfv_chain_pf_m16000_seed201", "pf m=16000 seed 201"),
                  ("nfv_chain_pf_m16000_seed202", "pf m=16000 seed 202")],
    "linear_network": [("linear_network_m1000", "m=1000"),
                       ("linear_network_m4000", "m=4000"), ("linear_network_w120", "W=120"),
                       ("linear_network_seed2", "seed 2"),
                       ("linear_network_pf_m16000", "pf m=16000"),
                       ("linear_network_seed101", "seed 101"),
                       ("linear_network_seed102", "seed 102"),
                       ("linear_network_pf_m16000_seed201", "pf m=16000 seed 201"),
                       ("linear_network_pf_m16000_seed202", "pf m=16000 seed 202")],
}


def main() -> None:
    for network, variants in VARIANTS.items():
        table = None
        for directory, label in variants:
            run = pd.read_csv(HERE / directory / "validation.csv")[
                KEYS + ["relative_difference", "fluid_in_ci"]]
            run = run.rename(columns={"relative_difference": label,
                                      "fluid_in_ci": f"{label} covered"})
            table = run if table is None else table.merge(run, on=KEYS, how="left")
        print(f"{network}: packet γ / fluid γ − 1, and whether the 95% interval covers "
              "the fluid γ (blank: not run)")
        print(table.round(4).astype(object).where(table.notna(), "").to_string(index=False))
        for policy, rows in table.groupby("policy"):
            counts = ", ".join(
                f"{label} {int((rows[f'{label} covered'] == True).sum())}"  # noqa: E712
                f"/{int(rows[f'{label} covered'].notna().sum())}"
                for _, label in variants)
            print(f"  {policy}: covered {counts}")
        for directory, label in variants:
            print(f"  {label}: {family_wise(HERE / directory / 'validation.csv')}")
        print()


def family_wise(path: Path) -> str:
    """Rows whose 95% interval covers the fluid γ, and rows whose family-wise interval
    (Bonferroni over the run's rows of the policy, same centre) does, per policy."""
    run = pd.read_csv(path)
    parts = []
    for policy, rows in run.groupby("policy"):
        n = len(rows)
        widen = norm.ppf(1 - 0.025 / n) / norm.ppf(0.975)
        half = (rows["ci_high"] - rows["ci_low"]) / 2
        family = (rows["fluid_gamma"] - rows["packet_gamma"]).abs() <= widen * half
        parts.append(f"{policy} {int(rows['fluid_in_ci'].sum())}/{n} per row, "
                     f"{int(family.sum())}/{n} family-wise")
    return "; ".join(parts)


if __name__ == "__main__":
    main()
