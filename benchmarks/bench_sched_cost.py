"""Scheduling cost against the number of backlogged flows (issue 15; the O(log n) against
O(1) comparison of the MR3 paper), measured side by side in one process.

n flows of the Figure 3 classes (cycled 1, 2, 3) all arrive at t = 0, each too large to
finish, window W; the run stops after ``--services`` packet-resource services (the
measured flow is the first, sized to end there). Reported: CPU nanoseconds per
packet-resource service of the whole event loop (the scheduling decision plus the event
bookkeeping, which does not depend on n), per policy and n, interleaved by round.

Usage: python benchmarks/bench_sched_cost.py [--flows 10,100,1000,10000]
       [--policies bmf,drfq,mr3,fifo] [--services 2e7] [--rounds 3] [--window 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mrfq.packet.engine import run_replication  # noqa: E402
from mrfq.packet.model import PacketModel  # noqa: E402
from mrfq.scenario import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cost(policy: str, n: int, services: float, window: int) -> float:
    """CPU ns per packet-resource service with n backlogged flows."""
    scenario = load_scenario(ROOT / "scenarios" / "fig3_packet.toml")
    model = PacketModel.from_scenario(scenario)
    # the first flow gets about services / (2 n) packets: it ends after ~services in all
    size = max(10, int(services / (2 * n)))
    trace = ([0.0] * n, [k % 3 for k in range(n)], [size] + [10**12] * (n - 1))
    cpu0 = time.process_time()
    run = run_replication(model, policy, scenario.class_loads(0.5), np.random.SeedSequence(0),
                          flows=1, mean_size=10, window=window, arrivals=trace)
    return (time.process_time() - cpu0) / run.services * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", default="10,100,1000,10000")
    parser.add_argument("--policies", default="bmf,drfq,mr3,fifo")
    parser.add_argument("--services", type=float, default=2e7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=int, default=4)
    args = parser.parse_args()
    flows = [int(x) for x in args.flows.split(",")]
    policies = args.policies.split(",")
    for policy in policies:  # compile / load the cache outside the timing
        cost(policy, 3, 1e4, args.window)
    times: dict[tuple[str, int], list[float]] = {}
    for r in range(args.rounds):
        order = policies if r % 2 == 0 else policies[::-1]
        for n in flows:
            for policy in order:
                times.setdefault((policy, n), []).append(
                    cost(policy, n, args.services, args.window))
    print(f"CPU ns per packet-resource service, median of {args.rounds} rounds "
          f"(W = {args.window}, {args.services:.0e} services per run)")
    print("| backlogged flows | " + " | ".join(policies) + " |")
    print("|---|" + "---|" * len(policies))
    for n in flows:
        cells = [f"{statistics.median(times[(p, n)]):.1f}" for p in policies]
        print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
