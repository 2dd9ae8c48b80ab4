"""Coverage of the flow-level simulator's intervals with independent seeds: balanced
fairness simulated against its exact (insensitive) γ, the insensitivity study's classes
and run lengths (10 replications of 10^5 flows, 5% warm-up, 95%).

Usage: python benchmarks/flowsim_coverage.py [--seeds 40] [--loads 0.5,0.8]
       [--laws exponential,pareto-2.5,pareto-1.5]

The study's ``bf_control.csv`` uses one seed for every load and law (common random
numbers), so its points are not independent trials; here every run has its own seed
(1001, 1002, …). One line per (law, load): runs, per class how many intervals contained
the exact γ, and the mean relative error of the ratio estimator.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mrfq.fluid.balanced import bf_service_rates
from mrfq.fluid.flowsim import flow_service_rates
from mrfq.scenario import load_scenario

STUDY = Path(__file__).resolve().parents[1] / "reproduction" / "insensitivity" / "study.toml"
LAWS = {"exponential": None, "deterministic": {"distribution": "deterministic"},
        "pareto-2.5": {"distribution": "pareto", "shape": 2.5},
        "pareto-1.5": {"distribution": "pareto", "shape": 1.5}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--loads", default="0.5,0.8")
    parser.add_argument("--laws", default="exponential,pareto-2.5,pareto-1.5")
    args = parser.parse_args()
    study = load_scenario(STUDY)
    cfg = study.fluid
    for law in args.laws.split(","):
        for load in (float(v) for v in args.loads.split(",")):
            rho = study.class_loads(load)
            exact = bf_service_rates(study.requirements, rho).gamma
            inside = np.zeros(exact.size, dtype=int)
            errors = []
            for i in range(args.seeds):
                r = flow_service_rates(study.requirements, rho, "bf", LAWS[law],
                                       flows=cfg.flows, replications=cfg.replications,
                                       seed=1001 + i, confidence=0.95)
                inside += (r.ratio_low <= exact) & (exact <= r.ratio_high)
                errors.append(r.ratio / exact - 1)
            mean_error = np.mean(errors, axis=0)
            print(f"{law:13s} load {load:.2f}: {args.seeds} runs; inside the 95% CI per "
                  f"class " + ", ".join(f"{n}/{args.seeds}" for n in inside)
                  + "; mean error " + ", ".join(f"{e:+.2%}" for e in mean_error),
                  flush=True)


if __name__ == "__main__":
    main()
