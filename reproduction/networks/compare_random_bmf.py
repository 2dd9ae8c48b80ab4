"""Packet `bmf` against flow-level BMF on random_network (issue 23's 3% bar): per load,
the largest |relative difference| over the 15 classes, how many classes are within 3%,
and the classes outside 3% with both intervals (relative half-widths).

    python reproduction/networks/compare_random_bmf.py reproduction/networks/random_network
"""

import sys
from pathlib import Path

import pandas as pd


def main(folder: str) -> None:
    v = pd.read_csv(Path(folder) / "validation.csv")
    v = v[(v.policy == "bmf") & (v.fluid_policy == "bmf")].rename(columns={"class": "cls"})
    v = v.assign(rel=v.relative_difference.abs(),
                 packet_hw=(v.ci_high - v.ci_low) / 2 / v.packet_gamma,
                 fluid_hw=(v.fluid_ci_high - v.fluid_ci_low) / 2 / v.fluid_gamma)
    print("| load | classes | within 3% | max abs rel. diff | median packet ±CI | "
          "median fluid ±CI | all covered |")
    print("|---|---|---|---|---|---|---|")
    for load, g in v.groupby("load"):
        print(f"| {load} | {len(g)} | {(g.rel <= 0.03).sum()} | {g.rel.max():.3f} | "
              f"{g.packet_hw.median():.3f} | {g.fluid_hw.median():.3f} | "
              f"{bool(g.fluid_in_ci.all() or g.passed.all())} |")
    out = v[v.rel > 0.03]
    if len(out):
        print("\nOutside 3% (γ packet [95% CI] v flow-level BMF γ [95% CI]):\n")
        for r in out.itertuples():
            print(f"* load {r.load}, {r.cls}: "
                  f"{r.packet_gamma:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] v "
                  f"{r.fluid_gamma:.4f} [{r.fluid_ci_low:.4f}, {r.fluid_ci_high:.4f}] "
                  f"({r.relative_difference:+.3f}; {r.verdict})")


if __name__ == "__main__":
    main(sys.argv[1])
