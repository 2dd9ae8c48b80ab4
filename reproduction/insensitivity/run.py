"""Issue 14's insensitivity study: how far does each policy's γ_k move with the flow-size
law, and does the paper's ranking (PF ≈ BMF better than DRF) survive heavy tails?

Usage (from the checkout): python reproduction/insensitivity/run.py [--jobs 2]
       [--results results/insensitivity] [--no-packet]

1. Fluid: ``study.toml`` (BR Figure 2's classes, DRF/PF/BMF/BF, link loads 0.1…0.95)
   with every class's law replaced by each of ``LAWS`` (:func:`mrfq.pipeline.insensitivity`;
   each point takes the method the pipeline chooses: exact where it can — Markov for
   exponential sizes up to load 0.9, BF's explicit law always — and the flow-level
   simulator otherwise) → ``insensitivity.csv`` here.
2. Packet: ``packet_pareto.toml`` (the same classes with Pareto 2.5 sizes, m = 2000,
   W = 30, 10 replications of 10 000 flows, loads 0.3/0.5/0.7/0.9) swept into the same
   results directory (so its fluid points are the study's) and validated against the
   flow-level fluid γ → ``packet_summary.csv``, ``packet_validation.csv`` here.
3. Control: BF by flow-level simulation (forced) for every non-exponential law, with the
   study's run lengths, against BF's exact (insensitive) γ: the simulation's own error
   at these settings → ``bf_control.csv`` here.
4. ``plots/insensitivity.png`` (+ PDF): one panel per policy, line style per law, packet
   crosses for Pareto 2.5.
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import replace
from pathlib import Path

from mrfq import pipeline
from mrfq.io import write_csv
from mrfq.plots import insensitivity as plot_insensitivity
from mrfq.scenario import load_scenario

HERE = Path(__file__).resolve().parent
LAWS = {
    "exponential": {"distribution": "exponential"},
    "deterministic": {"distribution": "deterministic"},
    "H2 (SCV 10)": {"distribution": "hyperexponential", "scv": 10},
    "Pareto 2.5": {"distribution": "pareto", "shape": 2.5},
    "Pareto 1.5": {"distribution": "pareto", "shape": 1.5},
}
PACKET_LAW = "Pareto 2.5"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results", default="results/insensitivity")
    parser.add_argument("--plots", default="plots")
    parser.add_argument("--no-packet", action="store_true")
    args = parser.parse_args()
    study = load_scenario(HERE / "study.toml")
    started = time.perf_counter()
    table = pipeline.insensitivity(study, LAWS, args.results, jobs=args.jobs)
    write_csv(table, HERE / "insensitivity.csv")
    print(f"fluid: {len(table)} rows in {time.perf_counter() - started:.0f} s")
    forced = replace(study, fluid=replace(study.fluid, policies=("bf",), method="simulation"))
    control = pipeline.insensitivity(forced, {k: v for k, v in LAWS.items()
                                              if k != "exponential"}, args.results,
                                     jobs=args.jobs)
    exact = table[table["policy"] == "bf"].drop_duplicates(["load", "class"]).set_index(
        ["load", "class"])["gamma"]
    control["exact_gamma"] = [exact[(load, name)] for load, name in
                              zip(control["load"], control["class"], strict=True)]
    control["inside"] = ((control["ci_low"] <= control["exact_gamma"])
                         & (control["exact_gamma"] <= control["ci_high"]))
    write_csv(control, HERE / "bf_control.csv")
    for law, part in control.groupby("law", sort=False):
        error = (part["gamma"] / part["exact_gamma"] - 1).abs()
        print(f"control {law}: BF simulated vs exact, {int(part['inside'].sum())}/{len(part)} "
              f"inside the 95% CI, max |error| {error.max():.2%} (loads <= 0.8: "
              f"{error[part['load'] <= 0.8].max():.2%})")
    packet = None
    if not args.no_packet:
        started = time.perf_counter()
        summary = pipeline.sweep(load_scenario(HERE / "packet_pareto.toml"), args.results,
                                 jobs=args.jobs)
        validation = pipeline.validate(args.results, 0.05)
        shutil.copy(Path(args.results) / "summary.csv", HERE / "packet_summary.csv")
        shutil.copy(Path(args.results) / pipeline.VALIDATION_FILE,
                    HERE / "packet_validation.csv")
        packet = summary[summary["kind"] == "packet"]
        print(f"packet: {int(validation['passed'].sum())}/{len(validation)} pass "
              f"({int(validation['fluid_in_ci'].sum())} within the joint CI) in "
              f"{time.perf_counter() - started:.0f} s")
    for path in plot_insensitivity(table, Path(args.plots) / "insensitivity.png",
                                   study.description.split(":")[0] + ": Figure 2's classes",
                                   "load of resource 'link'", packet, PACKET_LAW):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
