"""Wall time of all fluid curves of BR Figures 1 and 2 (2 scenarios × 3 policies × 9 loads).

Usage: python benchmarks/bench_fluid.py [--jobs N]
Reports the wall time, the worst relative error estimate and the largest truncation, and
(as the in-script baseline) the time of the same points with one worker.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

from mrfq import pipeline
from mrfq.fluid import fluid_curves
from mrfq.scenario import load_scenario


def run(jobs: int) -> tuple[float, float, int]:
    """The fluid sweeps of `mrfq plot` (no arguments) into an empty results directory."""
    with tempfile.TemporaryDirectory() as results:
        started = time.perf_counter()
        tables = [pipeline.fluid(name, f"{results}/{name}", jobs=jobs)
                  for name, _ in pipeline.PAPER_FLUID_FIGURES]
        wall = time.perf_counter() - started
    worst = max(float(t["error_estimate"].max()) for t in tables)
    biggest = max(int(t["states"].max()) for t in tables)
    return wall, worst, biggest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    # warm the Numba cache so compile time is not counted
    fluid_curves(load_scenario("fig2_unbalanced"), loads=[0.1])
    wall, worst, biggest = run(args.jobs)
    print(f"fluid Figures 1-2, 54 points, jobs={args.jobs}: {wall:.1f} s wall, "
          f"worst relative error estimate {worst:.2e}, largest truncation {biggest} states")
    if not args.no_baseline and args.jobs != 1:
        wall1, _, _ = run(1)
        print(f"baseline jobs=1: {wall1:.1f} s wall; speed-up {wall1 / wall:.2f}x")


if __name__ == "__main__":
    main()
