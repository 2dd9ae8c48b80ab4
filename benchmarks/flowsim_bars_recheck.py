"""Re-check one point of benchmarks/flowsim_bars.py with new, independent seeds (and
optionally more flows): is a miss chance, or a bias?

Usage: python benchmarks/flowsim_bars_recheck.py SCENARIO POLICY LAW LOAD
       [--seeds 6001,6002,...] [--flows N[,N...]]

LAW is a key of flowsim_bars.LAWS or "exponential". The exact γ is BF's explicit law for
``bf``, the Markov solver otherwise (tolerance 1e-6). Every (seed, flows) pair is one run
of 10 replications at 99%; one line per run: the ratio estimator, its interval, the
relative error and half-width, and whether the exact value is inside.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from flowsim_bars import CONFIDENCE, LAWS, REPLICATIONS  # noqa: E402

from mrfq.fluid import service_rates  # noqa: E402
from mrfq.fluid.flowsim import flow_service_rates  # noqa: E402
from mrfq.scenario import load_scenario  # noqa: E402
from mrfq.sizes import parse_size  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario")
    parser.add_argument("policy")
    parser.add_argument("law")
    parser.add_argument("load", type=float)
    parser.add_argument("--seeds", default="6001,6002,6003,6004,6005")
    parser.add_argument("--flows", default="2500000")
    args = parser.parse_args()
    scenario = load_scenario(args.scenario)
    rho = scenario.class_loads(args.load)
    law = parse_size(None if args.law == "exponential" else LAWS[args.law])
    exact = service_rates(args.policy, scenario.requirements, rho, tolerance=1e-6).gamma
    print("exact " + " ".join(f"{g:.6f}" for g in exact))
    for flows in (int(v) for v in args.flows.split(",")):
        for seed in (int(v) for v in args.seeds.split(",")):
            started = time.process_time()
            r = flow_service_rates(scenario.requirements, rho, args.policy, law, flows=flows,
                                   replications=REPLICATIONS, seed=seed,
                                   confidence=CONFIDENCE)
            inside = (r.ratio_low <= exact) & (exact <= r.ratio_high)
            half = (r.ratio_high - r.ratio_low) / 2 / r.ratio
            print(f"seed {seed} flows {flows:,d}x{REPLICATIONS} " + " | ".join(
                f"class {k + 1} {r.ratio[k]:.5f} [{r.ratio_low[k]:.5f}, {r.ratio_high[k]:.5f}]"
                f" err {r.ratio[k] / exact[k] - 1:+.2%} half {half[k]:.2%} "
                f"{'in' if inside[k] else 'OUT'}" for k in range(exact.size))
                + f" ({time.process_time() - started:.0f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
