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
5. ``delta.csv``: dovetailing DRFQ on ``skip.toml`` at link load 0.8 for Δ = 0, 1, 10,
   W = 30 (the default) and ∞ (``mrfq.simulate``, same seed): each class's γ and
   interval against its fluid DRF γ; printed.
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
    deltas = delta_study(table)
    write_csv(deltas, HERE / "delta.csv")
    with pd.option_context("display.width", 200, "display.max_rows", 100):
        print(table.drop(columns="known_limitation").round(4).to_string(index=False))
        print(shares.round(4).to_string(index=False))
        print(deltas.round(4).to_string(index=False))
    print("DRF of the mean vectors: X 10/21 = 0.476 of each resource; memoryless charge "
          "(1 per packet): X 5/16 = 0.3125")


def delta_study(table: pd.DataFrame, load: float = 0.8) -> pd.DataFrame:
    """Dovetailing DRFQ's γ per class on the skipping mix at ``load`` against Δ (time
    units), with the fluid DRF γ of ``table`` (the same scenario's validation rows)."""
    fluid = table[(table["scenario"] == "skip") & (table["policy"] == "drfq-dovetail")
                  & (table["load"] == load)].set_index("class")["fluid_gamma"]
    rows = []
    for delta in (0.0, 1.0, 10.0, 30.0, float("inf")):
        point = mrfq.simulate(HERE / "skip.toml", "drfq-dovetail", load, delta=delta)
        for row in point.classes.to_dict("records"):
            name = row["class"]
            rows.append({"delta": delta, "load": load, "class": name, "gamma": row["gamma"],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                         "fluid_drf_gamma": fluid[name],
                         "relative_difference": row["gamma"] / fluid[name] - 1})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main()
