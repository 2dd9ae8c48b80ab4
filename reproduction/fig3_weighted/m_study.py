"""Does memoryless DRFQ's departure from weighted DRF on the weighted Figure 3 shrink as
flows get longer? (issue 22; docs/models.md, "DRFQ as its authors defined it")

The packaged run (``scenario.toml``: weights 1, 1, 3, m = 1000, 40 000 flows) finds the
weight-3 class 8%, 12% and 22% below the weighted fluid DRF γ at link loads 0.7, 0.8,
0.9. Here ``drfq`` (the in-service clock, the default) runs the same scenario at link
loads 0.5–0.9 with m = 1000, 4000 and 16 000 packets per flow on average and 160 000
flows per point (four times the packaged run's, for intervals half as wide), each m a
sweep of its own (``m_study/m<m>/``: resumable, summary.csv and validation.csv), and
prints every class's γ / γ_DRF − 1 with its 95% interval per m and load
(``m_study/m_study.csv``).

    PYTHONPATH=. python reproduction/fig3_weighted/m_study.py [--jobs 2]

About 10 CPU-minutes at ~60 M packet-resource services per CPU-second.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

import mrfq
from mrfq.scenario import scenario_from_dict

HERE = Path(__file__).parent
MEAN_SIZES = (1000, 4000, 16000)
LOADS = [0.5, 0.6, 0.7, 0.8, 0.9]
FLOWS = 160_000


def variant(mean_size: int) -> mrfq.Scenario:
    """The packaged weighted Figure 3 with drfq only, loads 0.5–0.9, m = ``mean_size``."""
    raw = mrfq.load_scenario(HERE / "scenario.toml").to_dict()
    raw["name"] = f"fig3_weighted_m{mean_size}"
    raw["description"] = (f"BR Figure 3 classes with weights 1, 1, 3, drfq, m = {mean_size}, "
                          f"{FLOWS} flows per point")
    raw["load"]["values"] = LOADS
    raw["fluid"]["policies"] = ["drf"]
    raw["packet"].update(policies=["drfq"], mean_size=mean_size, flows=FLOWS)
    return scenario_from_dict(raw, str(HERE / "scenario.toml"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for m in MEAN_SIZES:
        out = HERE / "m_study" / f"m{m}"
        mrfq.sweep(variant(m), out, jobs=args.jobs)
        table = mrfq.validate(out)
        rows.append(table.assign(mean_size=m))
    table = pd.concat(rows, ignore_index=True)
    table["low"] = table["ci_low"] / table["fluid_gamma"] - 1
    table["high"] = table["ci_high"] / table["fluid_gamma"] - 1
    columns = ["mean_size", "load", "class", "fluid_gamma", "packet_gamma",
               "relative_difference", "low", "high", "passed"]
    table[columns].to_csv(HERE / "m_study" / "m_study.csv", index=False)
    wide = table.pivot_table(index=["load", "class"], columns="mean_size",
                             values="relative_difference")
    print("drfq γ / weighted fluid DRF γ − 1, by link load and class (columns: m)")
    print((100 * wide).round(1).to_string())
    print("\n95% intervals of γ / γ_DRF − 1, weight-3 class (%)")
    three = table[table["class"] == "3"]
    for _, row in three.iterrows():
        print(f"  m = {row.mean_size:>5}, load {row.load}: {100 * row.relative_difference:+.1f} "
              f"[{100 * row.low:+.1f}, {100 * row.high:+.1f}]")


if __name__ == "__main__":
    main()
