"""Packet mixes against the fluid model: a class whose packets differ in profile, with
and without types that skip a resource (a zero requirement passes instantly, SPEC §3).

Usage (from the checkout): python reproduction/packet_mixes/run.py [--jobs 2]

1. ``skip.toml``: X sends (1, 0) and (0, 1) packets half and half (mean vector (1, 1)
   after normalisation), against BR Figure 3's L (0.1, 1) and C (1, 0.1); link loads 0.5
   and 0.8, m = 1000, W = 30, 20 000 flows; every packet policy realising a fluid one,
   validated as ``mrfq run`` does → ``skip/`` (summary, validation, plots).
2. ``no_skip.toml``: the same with (1, 0.01) and (0.01, 1): nearly the same mean vector,
   no type skips a resource → ``no_skip/``.
3. ``backlogged.toml``: one backlogged flow of each class for 4000 time units under each
   policy (``mrfq flows``) → ``backlogged/`` and ``backlogged.csv``: each flow's share of
   each resource, against DRF of the mean vectors (X 10/21 of each resource) and the
   memoryless charge (every packet charged 1: X 5/16).
4. ``table.csv``: the validation rows of 1 and 2 side by side; printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

import mrfq
from mrfq.io import write_csv

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tables = []
    for name in ("skip", "no_skip"):
        result = mrfq.run(HERE / f"{name}.toml", HERE / name, jobs=args.jobs)
        table = result.validation.assign(scenario=name)
        tables.append(table[["scenario", "policy", "load", "class", "fluid_policy",
                             "fluid_gamma", "packet_gamma", "ci_low", "ci_high",
                             "relative_difference", "passed", "known_limitation"]])
    table = pd.concat(tables, ignore_index=True)
    write_csv(table, HERE / "table.csv")
    flows = mrfq.flows(HERE / "backlogged.toml", HERE / "backlogged")
    rows = flows.timeline[flows.timeline["resource"] != "dominant"]
    shares = rows.pivot_table(index=["policy", "flow"], columns="resource",
                              values="share").reset_index()
    write_csv(shares, HERE / "backlogged.csv")
    with pd.option_context("display.width", 200, "display.max_rows", 100):
        print(table.drop(columns="known_limitation").round(4).to_string(index=False))
        print(shares.round(4).to_string(index=False))
    print("DRF of the mean vectors: X 10/21 = 0.476 of each resource; memoryless charge "
          "(1 per packet): X 5/16 = 0.3125")


if __name__ == "__main__":
    main()
