"""Coverage of the mean per-packet sojourn interval on M/D/1 (issue 15's delay bar).

FIFO, one resource, one-packet flows (service 1): the mean sojourn is
1 + ρ / (2(1 − ρ)) (Pollaczek–Khinchine). For each load, ``--seeds`` independent points of
10 replications × ``--flows`` flows (5% warm-up); prints how many 95% intervals contain
the exact mean and the mean half-width.

Usage: python benchmarks/md1_coverage.py [--seeds 20] [--flows 40000] [--loads 0.5,0.9]
"""

import argparse

import numpy as np

from mrfq.scenario import scenario_from_dict
from mrfq.simulation import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--flows", type=int, default=40_000)
    parser.add_argument("--loads", default="0.5,0.9")
    args = parser.parse_args()
    scenario = scenario_from_dict({
        "name": "md1", "resources": ["link"],
        "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
        "load": {"axis": "link", "values": [0.5]},
        "packet": {"policies": ["fifo"], "mean_size": 1, "window": 1, "flows": args.flows,
                   "replications": 10, "warmup": 0.05}})
    for rho in (float(x) for x in args.loads.split(",")):
        exact = 1.0 + rho / (2.0 * (1.0 - rho))
        inside, halves = 0, []
        for seed in range(1, args.seeds + 1):
            row = simulate(scenario, "fifo", rho, seed=seed).classes.iloc[0]
            inside += bool(row.packet_sojourn_low <= exact <= row.packet_sojourn_high)
            halves.append((row.packet_sojourn_high - row.packet_sojourn_low) / 2 / exact)
        print(f"load {rho}: exact mean {exact:.4f}, inside the 95% interval {inside}/"
              f"{args.seeds}, mean half-width {np.mean(halves):.2%}")


if __name__ == "__main__":
    main()
