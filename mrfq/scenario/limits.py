"""The bounds of a cluster run's sizes, each defined once with its reason: the scenario
file's checks (:mod:`mrfq.scenario.cluster`, the trace loader) and the Python API's
(:mod:`mrfq.cluster.checks`) refuse the same values, before any work.

Bounds of memory are round numbers, each at most ~12 GB at its bound (3.2 GB for
MAX_RUNNING, ~10 GB for MAX_SERVERS, ~12 GB for MAX_JOBS): they stop a typo (10^12)
from building arrays until memory runs out, not a run that would merely be slow; a run
near several bounds at once may still need more memory than a machine has.
"""

from __future__ import annotations

#: jobs held in memory (~120 bytes each, measured with run_cluster)
MAX_JOBS = 10**8
#: a seed the kernel takes as a signed 64-bit integer
MAX_SEED = 2**63 - 1
#: task counts that stay exact in a float64 (E[N] and the caps)
MAX_TASKS = 2**53
#: servers in all: about 1 KB of memory each, measured with a drawn table (the servers
#: as read, their copy in the stored scenario and the run's arrays)
MAX_SERVERS = 10**7
#: tasks that can run at once: the kernel allocates its event heap for all of them
#: before the run (32 bytes each; :func:`mrfq.scenario.slots.most_running`)
MAX_RUNNING = 10**8
#: the smallest non-zero request of a trace task (the larger of its CPU and memory, as a
#: fraction of the largest machine): one machine would run more than MAX_RUNNING of them
MIN_REQUEST = 1 / MAX_RUNNING
#: why, as the messages say it
SERVERS_WHY = "about 1 KB of memory each"
RUNNING_WHY = "32 bytes of memory each, allocated before the run"
SLOTS_WHY = ("the largest server holds that many slots, each a task that can run at once: "
             + RUNNING_WHY)


def pool_why(n_resources: int) -> str:
    """Why ``tasks_per_resource`` C is at most MAX_RUNNING / R: R · C tasks can run at once
    (each holds 1/C of its dominant resource)."""
    return f"up to {n_resources} × it tasks run at once, at most {MAX_RUNNING:,}: {RUNNING_WHY}"


def count_text(count: float) -> str:
    """A count as the messages show it: 1,234,567, or 2.4e+300 (inf) when too long to
    read that way."""
    return f"{count:,.0f}" if count < 1e15 else f"{count:.3g}"
