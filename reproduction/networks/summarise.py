"""Summarise the network runs (issue 23): for every results directory given, per packet
policy, how many (load, class) points pass against the fluid policy it realises, how
many with the fluid value inside the packet 95% interval (or within the joint interval
when the fluid value is simulated), and the largest relative difference.

    python reproduction/networks/summarise.py reproduction/networks/linear_network ...
"""

import sys
from pathlib import Path

import pandas as pd


def main() -> None:
    for folder in sys.argv[1:]:
        table = pd.read_csv(Path(folder) / "validation.csv")
        print(f"## {Path(folder).name}")
        print("| packet | fluid | points | pass | covered (CI or joint CI) | within 5% only "
              "| max abs rel. diff | loads |")
        print("|---|---|---|---|---|---|---|---|")
        for policy, rows in table.groupby("policy", sort=False):
            covered = rows["verdict"].str.startswith(("fluid in CI", "within joint CI"))
            tolerance = rows["verdict"].str.startswith("within tolerance")
            print(f"| {policy} | {rows['fluid_policy'].iloc[0]} | {len(rows)} "
                  f"| {int(rows['passed'].sum())} | {int(covered.sum())} "
                  f"| {int(tolerance.sum())} "
                  f"| {rows['relative_difference'].abs().max():.3f} "
                  f"| {rows['load'].min():g}-{rows['load'].max():g} |")
        print()


if __name__ == "__main__":
    main()
