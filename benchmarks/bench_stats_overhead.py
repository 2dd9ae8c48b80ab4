"""What the intervals of issue 25 cost per packet replication, side by side in one run.

The kernel is unchanged (it already records one sojourn histogram per flow bucket); the
cost is in reducing a run to its record: per-batch quantiles at every merge level
(:func:`mrfq.stats.packet_delay_sums` with ``edges``), per-batch flow sums
(:func:`mrfq.stats.flow_metric_sums` with ``batches``) and utilisation batches. For one
replication of ``fig3_quick`` (BMF, load 0.9, m = 1000, 40 000 flows) the script times
the kernel run once, then the reductions with and without the new parts, ``--repeat``
times alternating, and prints medians.

Usage: python benchmarks/bench_stats_overhead.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from mrfq.packet.engine import run_replication, sojourn_bin_edges
from mrfq.packet.model import PacketModel
from mrfq.scenario import load_scenario
from mrfq.stats import (
    first_full_bucket,
    flow_metric_sums,
    packet_delay_sums,
    utilisation_batches,
)

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    scenario = load_scenario(ROOT / "scenarios" / "fig3_quick.toml")
    cfg = scenario.packet
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.9)
    run_replication(model, "bmf", rho, np.random.SeedSequence(0), flows=50,
                    mean_size=cfg.mean_size, window=cfg.window)  # compile / load cache
    t0 = time.perf_counter()
    run = run_replication(model, "bmf", rho, np.random.SeedSequence(1), flows=cfg.flows,
                          mean_size=cfg.mean_size, window=cfg.window)
    kernel_s = time.perf_counter() - t0
    edges = sojourn_bin_edges()
    cut = int(0.1 * cfg.flows)
    bucket = first_full_bucket(cut, cfg.flows, run.sojourn_hist.shape[0])
    T = (run.completion - run.arrival)[cut:]
    N = run.size[cut:].astype(np.float64)

    def before() -> None:
        packet_delay_sums(run.sojourn_hist, run.sojourn_sum, bucket)
        flow_metric_sums(T, N)

    def after() -> None:
        packet_delay_sums(run.sojourn_hist, run.sojourn_sum, bucket, edges)
        flow_metric_sums(T, N, batches=cfg.batches)
        utilisation_batches(run.work, run.bucket_work, run.bucket_time, run.end_time,
                            bucket)

    times = {"before": [], "after": []}
    for _ in range(args.repeat):
        for name, f in (("before", before), ("after", after)):
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    b, a = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"fig3_quick BMF load 0.9, {cfg.flows} flows: kernel run {kernel_s:.2f} s; "
          f"reductions median of {args.repeat}: before {b * 1e3:.1f} ms, with the "
          f"interval sums {a * 1e3:.1f} ms (+{(a - b) * 1e3:.1f} ms, "
          f"{(a - b) / kernel_s:.2%} of the kernel run)")


if __name__ == "__main__":
    main()
