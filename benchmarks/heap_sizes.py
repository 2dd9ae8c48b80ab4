"""Sizes of the packet kernel's per-resource heaps of flow heads (issue 22's speed bar):
the Figure 3 scenario at link load 0.8, m = 2000, W = 30 (the throughput benchmark's
case), about ``--services`` packet-resource services; the kernel is run one event at a
time (``CHUNK_EVENTS = 1``; the lone-flow loop may still run several events in one call)
and every resource's heap size is read after each call. Prints, per resource, the mean
size and the share of calls that saw each size. A count, not a timing: the heap sizes
say which priority queue is worth trying (a 4-ary heap only pays when the heaps are deep).

Usage: python benchmarks/heap_sizes.py [--policies drfq,pf] [--services 4e5]
"""

import argparse
from collections import Counter

import numpy as np


def heap_sizes(policy: str, services: float) -> list[Counter]:
    """Per resource: how many kernel calls ended with its heap at each size."""
    from mrfq.packet import engine, kernel
    from mrfq.packet.model import PacketModel
    from mrfq.scenario import load_scenario

    scenario = load_scenario("fig3_packet")
    model = PacketModel.from_scenario(scenario)
    counts: list[Counter] = []
    real = kernel.run_kernel

    def counting(*args, **kwargs):
        status = real(*args, **kwargs)
        res_i = args[5].res_i  # the State; res_i[3J + j]: heap size of resource j
        J = res_i.shape[0] // 4
        while len(counts) < J:
            counts.append(Counter())
        for j in range(J):
            counts[j][int(res_i[3 * J + j])] += 1
        return status

    saved = engine.CHUNK_EVENTS
    engine.CHUNK_EVENTS = 1
    kernel.run_kernel = counting
    try:
        engine.run_replication(model, policy, scenario.class_loads(0.8),
                               np.random.SeedSequence(1), flows=int(services / 4000) + 1,
                               mean_size=2000.0, window=30)
    finally:
        kernel.run_kernel = real
        engine.CHUNK_EVENTS = saved
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="drfq,pf")
    parser.add_argument("--services", type=float, default=4e5)
    args = parser.parse_args()
    for policy in args.policies.split(","):
        for j, count in enumerate(heap_sizes(policy, args.services)):
            total = sum(count.values())
            mean = sum(size * n for size, n in count.items()) / total
            shares = " ".join(f"{size}:{n / total:.3f}" for size, n in sorted(count.items()))
            print(f"{policy} resource {j}: mean {mean:.2f}, max {max(count)}; {shares}")


if __name__ == "__main__":
    main()
