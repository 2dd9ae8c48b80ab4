"""Network packet throughput (issue 23): the packaged ``random_network`` (6 routers × 2
resources, 15 classes on random routes, m = 1000, W = 30), packet-resource services per
CPU-second of the kernel run (time.process_time), several runs per policy, median
reported. Bar: ≥ 40 M services per CPU-second.

``--loads 0.3,0.5,0.7,0.9`` times each load of the packaged sweep and adds the sweep's
rate: the same services at every load, so their total over the total CPU time (the
harmonic mean of the per-load medians).

Usage: python benchmarks/bench_network.py [--services 4e7] [--policies bmf,pf,drfq]
       [--repeat 5] [--load 0.9 | --loads 0.3,0.5,0.7,0.9] [--scenario random_network]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.scenario import load_scenario


def throughput(scenario_name: str, policy: str, load: float, services: float,
               seed: int) -> float:
    """One timed run; M packet-resource services per CPU-second."""
    scenario = load_scenario(scenario_name)
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(load)
    mean_size = 1000.0
    # services per flow: m × the mean route length, weighted by the classes' flow rates
    # (∝ ρ_k: every class has mean size m)
    rates = rho
    hops = np.array([len(r) for r in scenario.routes], dtype=float)
    per_flow = mean_size * float(rates @ hops / rates.sum())
    flows = int(services / per_flow) + 1
    run_replication(model, policy, rho, np.random.SeedSequence(0), flows=20,
                    mean_size=mean_size, window=30,
                    fq_resource=scenario.fq_resources)  # compile / load the cache
    cpu0, wall0 = time.process_time(), time.perf_counter()
    run = run_replication(model, policy, rho, np.random.SeedSequence(seed), flows=flows,
                          mean_size=mean_size, window=30,
                          fq_resource=scenario.fq_resources)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rate = run.services / cpu / 1e6
    print(f"network: {scenario_name} {policy} load {load} m=1000 W=30 flows={flows}: "
          f"{run.services:.3e} services in {cpu:.1f} CPU-s ({wall:.1f} s wall): "
          f"{rate:.1f} M services per CPU-second", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--services", type=float, default=4e7)
    parser.add_argument("--policies", default="bmf,pf,drfq")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--loads", help="comma-separated loads (instead of --load)")
    parser.add_argument("--scenario", default="random_network")
    args = parser.parse_args()
    loads = [float(x) for x in args.loads.split(",")] if args.loads else [args.load]
    for policy in args.policies.split(","):
        medians = []
        for load in loads:
            rates = [throughput(args.scenario, policy, load, args.services, seed)
                     for seed in range(1, args.repeat + 1)]
            medians.append(statistics.median(rates))
            print(f"{policy} load {load:g}: min / median / max {min(rates):.1f} / "
                  f"{medians[-1]:.1f} / {max(rates):.1f} M services per CPU-second")
        if len(loads) > 1:
            print(f"{policy}: the sweep over loads {args.loads}: "
                  f"{statistics.harmonic_mean(medians):.1f} M services per CPU-second")


if __name__ == "__main__":
    main()
