"""Memoryless DRFQ's throughput under its two virtual-time clocks (issue 22), side by side
in this checkout: the Figure 3 scenario at link load 0.8, m = 2000, W = 30, about
``--services`` packet-resource services per run, each run a separate process (its own
Numba cache is shared, warm), the clocks alternating, ``--rounds`` rounds; prints M
services per CPU-second (min / median / max) and the median of the per-round ratios
in-service / started. The schedules differ (the started clock serves nearly first come
first served), so this measures the schedule as well as the bookkeeping.

Usage: python benchmarks/bench_drfq_clock.py [--rounds 5] [--services 3e7]
"""

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

CLOCKS = ("in-service", "started")


def one_run(clock: str, services: float, policy: str) -> float:
    """M packet-resource services per CPU-second of one run (after a warm-up run)."""
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel
    from mrfq.scenario import load_scenario

    scenario = load_scenario("fig3_packet")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.8)
    run_replication(model, policy, rho, np.random.SeedSequence(0), flows=50, mean_size=2000.0,
                    window=30, virtual_time=clock)
    flows = int(services / 4000) + 1
    started = time.process_time()
    run = run_replication(model, policy, rho, np.random.SeedSequence(1), flows=flows,
                          mean_size=2000.0, window=30, virtual_time=clock)
    return run.services / (time.process_time() - started) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--services", type=float, default=3e7)
    parser.add_argument("--policy", default="drfq")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process's clock
    args = parser.parse_args()
    if args.one:
        print(one_run(args.one, args.services, args.policy))
        return
    rates = {clock: [] for clock in CLOCKS}
    for r in range(args.rounds):
        for clock in (CLOCKS if r % 2 == 0 else CLOCKS[::-1]):
            out = subprocess.run([sys.executable, __file__, "--one", clock, "--services",
                                  str(args.services), "--policy", args.policy],
                                 capture_output=True, text=True, check=True)
            rates[clock].append(float(out.stdout.split()[-1]))
    for clock, values in rates.items():
        print(f"{args.policy} {clock}: {min(values):.1f} / {statistics.median(values):.1f} / "
              f"{max(values):.1f} M services per CPU-second")
    ratios = [a / b for a, b in zip(rates[CLOCKS[0]], rates[CLOCKS[1]], strict=True)]
    print(f"in-service / started: median {statistics.median(ratios):.3f} "
          f"[{min(ratios):.3f}, {max(ratios):.3f}] over {args.rounds} rounds")


if __name__ == "__main__":
    main()
