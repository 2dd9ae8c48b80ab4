"""BR's cluster claim (issue 24): the Figure 2 scenario as a pooled cluster against the
fluid γ of DRF, PF and BMF at loads 0.3, 0.6, 0.9, and the policy ordering of Figure 2.

    cd <repo> && PYTHONPATH=. nice -n 10 python reproduction/cluster_fig2/run.py [jobs]

Writes summary.csv and validation.csv here (points cached under points/).
"""

import sys
from pathlib import Path

from mrfq import policies
from mrfq.scenario import load_scenario
from mrfq.sweeps import run_sweep
from mrfq.validation import validate_summary

HERE = Path(__file__).resolve().parent


def main() -> None:
    scenario = load_scenario(HERE / "scenario.toml")
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    summary = run_sweep(scenario, HERE, jobs=workers, kinds=(policies.FLUID, policies.CLUSTER),
                        log=print)
    table = validate_summary(summary)
    table.to_csv(HERE / "validation.csv", index=False)
    shown = table.assign(ci=[f"[{a:.4f}, {b:.4f}]" for a, b in
                             zip(table["ci_low"], table["ci_high"], strict=True)])
    print(shown[["policy", "load", "class", "fluid_gamma", "packet_gamma", "ci",
                 "relative_difference", "verdict"]].to_string(index=False))
    within = (table["relative_difference"].abs() <= 0.05)
    print(f"{int(within.sum())}/{len(table)} within 5% of the fluid γ; "
          f"{int(table['fluid_in_ci'].sum())} with the fluid γ in the 95% interval")
    cluster = summary[summary["kind"] == policies.CLUSTER].pivot_table(
        index=["load", "class"], columns="policy", values="gamma")
    print("cluster γ by policy (BR Fig. 2: class 2 gains under PF and BMF over DRF):")
    print(cluster.round(4).to_string())


if __name__ == "__main__":  # workers are spawned processes
    main()
