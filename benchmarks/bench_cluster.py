"""Cluster simulator throughput (issue 24): task events (launches + completions) per
CPU-second of the Numba kernel, side by side with its plain-Python twin
(``tests/naive_cluster.py``) on the same workload, and a 2 000-server Best-Fit run.

Usage: PYTHONPATH=. python benchmarks/bench_cluster.py [--repeats R] [--jobs N] [--large-only]
[--policies P,Q] [--large P,Q] [--no-twin] [--timeline]. Side by side with another tree:
the same script with ``PYTHONPATH=<that tree>`` (it needs only the model-level API;
``--no-twin`` there, the twin being this tree's). ``--duration-law '{"distribution":
"lognormal", "sigma": 1.5}'``: the pooled runs' task durations from a size law (trees
with task laws). ``--timeline``: every kernel run also
bins its running tasks over time (``run_jobs(..., timeline_dt=0)``, 1024 bins; trees
from this one on).

* pooled: BR Figure 2's classes (ρ_1 = 4ρ_2 = 4ρ_3, resource 2 at load 0.6) on one
  server of 100 units per resource, jobs of 1000 tasks (geometric), exponential task
  durations; every scheduler of the registry (slots: 100 slots); median of ``repeats``
  seeds after a warm-up run (compilation not counted), CPU time of the kernel call;
* twin: the plain-Python twin on the first 60 jobs of the same workload (DRF);
* large: 2 000 servers drawn from DRFH's Table I, DRFH Fig. 4's three users as classes of
  Poisson jobs of 100 tasks (mean duration 10), 10 000 jobs ≈ 10^6 tasks, Best-Fit DRFH
  (and First-Fit), one run each, CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import mrfq
from mrfq import policies
from mrfq.cluster import ClusterModel, pooled_model, workload
from mrfq.cluster.model import simulate_jobs
from mrfq.cluster.servers import draw_servers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from naive_cluster import naive_cluster  # noqa: E402 - the slow twin lives in tests/

FIG2 = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
NAME = policies.named(policies.CLUSTER)


def fig2_model(policy: str, duration_law=None) -> ClusterModel:
    x = 0.6 / 5.1
    # slots: 100 slots of one unit per resource (14 would leave the pool overloaded);
    # a duration law only when asked (trees before task laws take none)
    laws = {} if duration_law is None else {"duration_law": duration_law}
    return pooled_model(FIG2, [4 * x, x, x], policy, tasks_per_resource=100,
                        mean_tasks=1000, slots_per_server=100, **laws)


TIMELINE = "--timeline" in sys.argv


def timed(model, arrival, classes, tasks, seed):
    if TIMELINE:
        # only with --timeline: older trees have no run_jobs
        from mrfq.cluster.model import run_jobs

        start = time.process_time()
        events = run_jobs(model, arrival, classes, tasks, seed, timeline_dt=0.0).events
        return events, time.process_time() - start
    start = time.process_time()
    events = simulate_jobs(model, arrival, classes, tasks, seed)[4]
    return events, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--large-only", action="store_true")
    parser.add_argument("--policies", help="pooled schedulers, comma-separated (default all)")
    parser.add_argument("--large", default=f"{NAME.DRFH_BEST_FIT},{NAME.DRFH_FIRST_FIT}",
                        help="schedulers of the 2 000-server run, comma-separated")
    parser.add_argument("--no-twin", action="store_true")
    parser.add_argument("--timeline", action="store_true")
    parser.add_argument("--duration-law", type=json.loads, help="the pooled runs' task "
                        "duration law, a size-law table as JSON (default: exponential), "
                        "e.g. '{\"distribution\": \"lognormal\", \"sigma\": 1.5}'")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, mrfq from "
          f"{Path(mrfq.__file__).parent}")
    pooled = args.policies.split(",") if args.policies else policies.names(policies.CLUSTER)
    for policy in () if args.large_only else pooled:
        model = fig2_model(policy, args.duration_law)
        timed(model, *workload(model, 50, 0), 0)  # compile / load the cache
        rates = []
        for seed in range(1, args.repeats + 1):
            events, cpu = timed(model, *workload(model, args.jobs, seed), seed)
            rates.append(events / cpu)
        print(f"pooled {policy:15s} {events:.3g} events/run, median "
              f"{statistics.median(rates) / 1e6:.2f} M task events per CPU-second")
    if not args.large_only and not args.no_twin:
        model = fig2_model(NAME.DRF)
        arrival, classes, tasks = workload(model, 60, 1)
        start = time.process_time()
        _, events = naive_cluster(NAME.DRF, model.capacity, model.demand, model.weights,
                                  arrival, classes, tasks, model.durations, True, 1)
        cpu = time.process_time() - start
        print(f"twin   drf             {events:.3g} events, {events / cpu / 1e6:.4f} M "
              "task events per CPU-second (plain Python)")
    capacity = draw_servers(2000, 1)
    demand = np.array([[0.2, 0.3], [0.5, 0.1], [0.1, 0.3]])
    for policy in [p for p in args.large.split(",") if p]:
        # loads: per-class work rate such that the busier resource is ~80% used
        big = ClusterModel(capacity=capacity, demand=demand, policy=policy,
                           rates=[1.0, 1.0, 1.0], mean_tasks=[100.0] * 3,
                           durations=[10.0] * 3)
        usage = (big.demand / big.total).T @ (big.mean_tasks * big.durations)
        big = ClusterModel(capacity=capacity, demand=demand, policy=policy,
                           rates=np.full(3, 0.8 / usage.max()), mean_tasks=[100.0] * 3,
                           durations=[10.0] * 3)
        timed(big, *workload(big, 20, 0), 0)
        arrival, classes, tasks = workload(big, 10_000, 1)
        events, cpu = timed(big, arrival, classes, tasks, 1)
        print(f"large  {policy:15s} 2000 servers, {tasks.sum():.3g} tasks, {events:.3g} "
              f"events in {cpu:.1f} CPU-s ({events / cpu / 1e6:.2f} M events/CPU-s)")


if __name__ == "__main__":
    main()
