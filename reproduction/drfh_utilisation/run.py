"""DRFH's utilisation result (§VI, Table II, Figs. 5–6; issue 24) on a heterogeneous,
Google-like workload: servers drawn from DRFH's Table I, jobs from
:func:`mrfq.cluster.trace.google_like` (per-job CPU and memory requests spread over two
decades and a 16× range of CPU/memory ratios, 60% one-task jobs, log-normal task times),
offered faster than the cluster can serve them so that the schedulers' packing shows (as
the paper's 24 h of trace on 2 000 servers). Best-Fit DRFH, First-Fit DRFH and the slot
scheduler for every k in SLOT_SIZES (the paper keeps the best, 14); CPU and memory
utilisation over the arrival window [0, last arrival] and the mean and 95th percentile job
completion time of all jobs (each run to completion), per server draw / workload seed.

    cd <repo> && PYTHONPATH=. nice -n 10 python reproduction/drfh_utilisation/run.py [seeds]
"""

import sys

import numpy as np

from mrfq import policies
from mrfq.cluster.servers import draw_servers
from mrfq.cluster.trace import google_like, run_trace

NAME = policies.named(policies.CLUSTER)
SERVERS, JOBS, RATE = 100, 2000, 0.4
SLOT_SIZES = (8, 14, 20, 28, 40, 56, 80)


def measure(trace, capacity, policy, k=14):
    finish, _, busy, _, _ = run_trace(trace, capacity, policy, slots_per_server=k)
    util = busy / trace.arrival[-1] / capacity.sum(axis=0)
    jct = finish - trace.arrival
    return util, jct.mean(), np.percentile(jct, 95)


def main(seeds: int) -> None:
    for seed in range(1, seeds + 1):
        trace = google_like(JOBS, seed, RATE)
        capacity = draw_servers(SERVERS, seed)
        rows = {"Best-Fit DRFH": measure(trace, capacity, NAME.DRFH_BEST_FIT),
                "First-Fit DRFH": measure(trace, capacity, NAME.DRFH_FIRST_FIT)}
        slots = {k: measure(trace, capacity, NAME.SLOTS, k) for k in SLOT_SIZES}
        best = max(slots, key=lambda k: slots[k][0].sum())
        rows[f"slots, best k = {best}"] = slots[best]
        print(f"seed {seed}: {SERVERS} servers (pool {capacity.sum(0).round(2).tolist()}), "
              f"{JOBS} jobs, {trace.job_tasks.sum()} tasks, {trace.demand.shape[0]} "
              f"demand classes; slots k -> (CPU, memory): " + ", ".join(
                  f"{k}: ({v[0][0]:.1%}, {v[0][1]:.1%})" for k, v in slots.items()))
        for name, (util, mean, p95) in rows.items():
            print(f"  {name:22s} CPU {util[0]:.1%}  memory {util[1]:.1%}  | job completion "
                  f"time mean {mean:.0f} s, 95th percentile {p95:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
