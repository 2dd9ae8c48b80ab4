"""linear_network at load 0.3 over many seeds (issue 23, "Which misses are packet
effects"): is a miss a bias of the packet system or one seed's sample path? Each seed is
one packet point as the sweep computes it (`mrfq.simulate`: 10 replications of 20 000
flows, W and m as given); the relative difference to the Markov fluid γ, averaged over
seeds with its standard error.

    python reproduction/networks/effects/seeds.py run bmf --seeds 12-25
    python reproduction/networks/effects/seeds.py run pf --seeds 11-16 --mean-size 4000
    python reproduction/networks/effects/seeds.py summary

Rows go to ``seeds/<policy>_W<window>_m<mean size>.csv`` (one row per seed and class).
``--label`` names the rows' policy otherwise (and their file, slugged), for runs of a
patched kernel: ``PYTHONPATH=<patched checkout> python ... run pf --label "pf, Q at head
(patch)"`` (reproduction/networks/pf_head_reading.patch).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent / "seeds"
COLUMNS = ["policy", "load", "window", "mean_size", "seed", "class", "gamma", "ci_low",
           "ci_high", "fluid_gamma"]


def run(policy: str, seeds: range, window: int, mean_size: int, load: float,
        label: str | None = None) -> None:
    import mrfq
    from mrfq.fluid import fluid_curves

    scenario = mrfq.load_scenario("linear_network")
    fluid = fluid_curves(scenario, policies=[policy], loads=[load]).set_index("class")["gamma"]
    label = label or policy
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    path = HERE / f"{slug}_W{window}_m{mean_size}.csv"
    for seed in seeds:
        r = mrfq.simulate(scenario, policy, load, seed=seed, window=window,
                          mean_size=mean_size)
        rows = r.classes.assign(policy=label, load=load, window=window,
                                mean_size=mean_size, seed=seed,
                                fluid_gamma=lambda d: d["class"].map(fluid))[COLUMNS]
        rows.to_csv(path, mode="a", header=not path.exists(), index=False)
        print(rows.to_string(index=False), flush=True)


def summary() -> None:
    rows = pd.concat([pd.read_csv(p) for p in sorted(HERE.glob("*.csv"))])
    rows["diff"] = rows["gamma"] / rows["fluid_gamma"] - 1
    rows["covered"] = (rows["ci_low"] <= rows["fluid_gamma"]) & (
        rows["fluid_gamma"] <= rows["ci_high"])
    table = rows.groupby(["policy", "load", "window", "mean_size", "class"]).agg(
        seeds=("seed", "nunique"), mean=("diff", "mean"), sd=("diff", "std"),
        covered=("covered", "mean"), half_width=("ci_high", "mean"))
    table["se"] = table["sd"] / table["seeds"] ** 0.5
    table["half_width"] = (rows.groupby(["policy", "load", "window", "mean_size", "class"])
                           .apply(lambda d: ((d.ci_high - d.ci_low) / 2 / d.fluid_gamma).mean(),
                                  include_groups=False))
    for column in ("mean", "sd", "se", "half_width"):
        table[column] = (100 * table[column]).round(2)
    table["covered"] = (100 * table["covered"]).round(0)
    print("relative difference to the fluid γ, % (mean over seeds, its sd and standard "
          "error), mean 95% half-width %, seeds whose interval covers %")
    print(table[["seeds", "mean", "se", "sd", "half_width", "covered"]].to_string())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("policy")
    go.add_argument("--seeds", default="11-16", help="first-last")
    go.add_argument("--window", type=int, default=30)
    go.add_argument("--mean-size", type=int, default=1000)
    go.add_argument("--load", type=float, default=0.3)
    go.add_argument("--label", help="the rows' policy name (default: the policy)")
    sub.add_parser("summary")
    args = parser.parse_args()
    if args.command == "summary":
        summary()
        return
    first, last = (int(s) for s in args.seeds.split("-"))
    HERE.mkdir(exist_ok=True)
    run(args.policy, range(first, last + 1), args.window, args.mean_size, args.load,
        args.label)


if __name__ == "__main__":
    main()
