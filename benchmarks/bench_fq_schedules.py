"""Throughput of the fair queues' schedules in this checkout, side by side (issue 22's
speed bar): the Figure 3 scenario at link load 0.8, m = 2000, W = 30, about ``--services``
packet-resource services per run; memoryless DRFQ under both virtual-time clocks, PF and
BMF, each with and without the lone-flow loop; all in one process (warm Numba cache), the
order reversed every other round, ``--rounds`` rounds. Prints M services per CPU-second,
median and all runs. Same code, different schedules: it says whether a policy is slow
because of its schedule's shape (heap depth, flows interleaved) or because of something
only some schedules do.

Usage: python benchmarks/bench_fq_schedules.py [--rounds 4] [--services 2e7]
"""

import argparse
import statistics
import time

import numpy as np

CASES = (("drfq", "in-service"), ("drfq", "started"), ("pf", "in-service"),
         ("bmf", "in-service"))


def main() -> None:
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel
    from mrfq.scenario import load_scenario

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--services", type=float, default=2e7)
    args = parser.parse_args()
    scenario = load_scenario("fig3_packet")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.8)
    configs = [(policy, clock, lone) for lone in (True, False) for policy, clock in CASES]

    def run(config, seed: int, flows: int):
        policy, clock, lone = config
        return run_replication(model, policy, rho, np.random.SeedSequence(seed), flows=flows,
                               mean_size=2000.0, window=30, virtual_time=clock,
                               lone_flow=lone)

    for config in configs:  # compile / load the cache
        run(config, 0, 50)
    rates: dict = {config: [] for config in configs}
    flows = int(args.services / 4000) + 1
    for r in range(args.rounds):
        for config in (configs if r % 2 == 0 else configs[::-1]):
            started = time.process_time()
            services = run(config, 1, flows).services
            rates[config].append(services / (time.process_time() - started) / 1e6)
    print(f"{args.rounds} rounds, {args.services:g} services per run, M services per "
          "CPU-second: median (all runs)")
    for (policy, clock, lone), values in rates.items():
        runs = " ".join(f"{v:.1f}" for v in sorted(values))
        print(f"{policy:5s} {clock:10s} lone-flow loop {'on ' if lone else 'off'}: "
              f"{statistics.median(values):.1f} ({runs})")


if __name__ == "__main__":
    main()
