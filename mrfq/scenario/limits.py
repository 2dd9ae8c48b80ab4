"""The bounds of a cluster run's sizes, each defined once with its reason: the scenario
file's checks (:mod:`mrfq.scenario.cluster`, the trace loader) and the Python API's
(:mod:`mrfq.cluster.checks`) refuse the same values, before any work.

Bounds of memory are round numbers, each at most ~12 GB at its bound (3.2 GB for
MAX_RUNNING, ~10 GB for MAX_SERVERS, ~12 GB for MAX_JOBS): they stop a typo (10^12)
from building arrays until memory runs out, not a run that would merely be slow; a run
near several bounds at once may still need more memory than a machine has.
"""

from __future__ import annotations

from mrfq import fields
from mrfq.errors import InputError
from mrfq.fields import count_text  # noqa: F401 - the cluster checks' import

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


#: flows the packet engine allocates records for before a run (mrfq.packet.engine)
PACKET_SLOTS = 128
#: the most memory those first records may take: each flow slot holds its window's
#: packets on every resource, so a window of 10^9 ("no window") asked for terabytes
MAX_WINDOW_BYTES = 12 * 2**30


def window_bytes(window: int, n_resources: int, n_classes: int) -> int:
    """Bytes of the packet engine's first :data:`PACKET_SLOTS` flow records for a window
    of ``window`` packets (:func:`mrfq.packet.kernel.record_layout`: per slot and packet
    of window, 2 + 2J integers and 2 + 3J floats, up to 2J more integers for MR3's
    ingresses, and a round-trip ring of 16 bytes per class; per slot, at most 16 + 10J
    words more), an upper bound."""
    per_packet = 8 * (4 + 7 * n_resources) + 16 * n_classes
    return PACKET_SLOTS * (per_packet * int(window) + 8 * (16 + 10 * n_resources))


def check_window(window: int, n_resources: int, n_classes: int, field: str,
                 source: str | None) -> None:
    """InputError when a window's first flow records would exceed
    :data:`MAX_WINDOW_BYTES` (before any work: the run would stop on a memory error)."""
    if window_bytes(window, n_resources, n_classes) > MAX_WINDOW_BYTES:
        most = (MAX_WINDOW_BYTES - window_bytes(0, n_resources, n_classes)) // (
            window_bytes(1, n_resources, n_classes) - window_bytes(0, n_resources, n_classes))
        raise InputError(f"must be <= {most:,} packets with {n_resources} resources and "
                         f"{n_classes} classes (the packet engine holds every packet of "
                         f"the window of its first {PACKET_SLOTS} flows: "
                         f"{window_bytes(window, n_resources, n_classes) / 2**30:.3g} GiB "
                         f"for this one, at most {MAX_WINDOW_BYTES / 2**30:g}), got "
                         f"{window:,}", field, source)


#: a listed server's capacities, each 0 or in this range (relative: capacities are in any
#: units; chosen when the kernel's fit tolerance was an absolute 1e-9, under which 1e-9
#: over-packed servers, a crash, and 1e-8 gave a γ 6% off; it is now relative,
#: :data:`mrfq.cluster.kernel.EPS`, and the range keeps the servers within 10^15 of each
#: other)
MIN_CAPACITY, MAX_CAPACITY = 1e-6, 1e9


def check_capacity(capacity: tuple[float, ...], field: str, source: str | None) -> None:
    """InputError unless every entry of a server's ``capacity`` is 0 or in [MIN_CAPACITY,
    MAX_CAPACITY]."""
    bad = [c for c in capacity if c != 0 and not MIN_CAPACITY <= c <= MAX_CAPACITY]
    if bad:
        raise InputError(f"entries must be 0 or between {MIN_CAPACITY:g} and "
                         f"{MAX_CAPACITY:g} (capacities are relative: scale them), got "
                         f"{bad[0]:g}", field, source)


#: tasks of a cluster run, jobs × the largest mean tasks per job: as many events as the
#: packet engine's 2^43 packet arrivals, days at ~10^6 task events per CPU-second
#: (mean_tasks = 2^53, the bound of one job's count, hung)
MAX_RUN_TASKS = 2**43


def check_mean_tasks(value: object, field: str, source: str | None) -> float:
    """A job's mean number of tasks E[N]: a number in [1, MAX_TASKS], else InputError."""
    mean = fields.number(value, field, source, positive=True)
    if mean < 1:
        raise InputError(f"must be >= 1 task, got {mean:g}", field, source)
    if mean > MAX_TASKS:
        raise InputError(f"must be <= 2^53 tasks (counts stay exact), got {mean:g}", field,
                         source)
    return mean


def check_task_budget(jobs: int, means: list[float], source: str | None) -> None:
    """InputError when ``jobs`` jobs of up to max(``means``) tasks each reach
    MAX_RUN_TASKS."""
    expected = jobs * max(means)
    if expected >= MAX_RUN_TASKS:
        raise InputError(f"{jobs:,} jobs × up to {max(means):g} tasks = {expected:.3g} tasks, "
                         "more than 2^43 in one run: fewer jobs or tasks", "cluster.mean_tasks",
                         source)


#: a class's mean task duration d_k (``[cluster] duration``; time is in the durations'
#: unit, so they are relative: scale them). A run's times reach ~1e22 d (2^43 tasks at a
#: load of 1e-9) and its batch-means interval squares them: within 1e±100, the times and
#: their squares stay finite and resolvable in float64 (1e±308). Measured (2026-11-27):
#: from 1e-140 to 1e140 the same γ and interval as d = 1; d = 1e154 gave the interval
#: [0, inf] (squares overflowed), 1e-200 one of width 0 (they underflowed); 1e308 (zero
#: arrival rates) and 1e-320 (infinite ones) errors naming no field of the file, 1e308's
#: after the sweep had begun
MIN_DURATION, MAX_DURATION = 1e-100, 1e100


def check_duration(value: object, field: str, source: str | None) -> float:
    """A mean task duration: a number in [MIN_DURATION, MAX_DURATION], else InputError."""
    d = fields.number(value, field, source, positive=True)
    if not MIN_DURATION <= d <= MAX_DURATION:
        raise InputError(f"must be between {MIN_DURATION:g} and {MAX_DURATION:g} (durations "
                         f"are relative: scale them), got {d:g}", field, source)
    return d


def check_task_times(durations: list[float], laws: list, names: list[str], per_class: bool,
                     source: str | None) -> None:
    """InputError (field ``cluster.duration_law[.<class>]``) when a class's task durations,
    its mean d_k times the sizes of a ``rescale = false`` table law (whose sizes are not
    over their mean), leave [MIN_DURATION, MAX_DURATION]: each factor within its own range,
    d = 1e100 and a table at 1e100 gave task times of 1e200 and the interval [0, inf]."""
    for name, d, law in zip(names, durations, laws, strict=True):
        if not getattr(law, "unscaled", False):
            continue  # (a built-in law, or a table over its mean: d's own range holds)
        sizes = law.values[0] if law.distribution == "cdf" else law.values
        low, high = d * float(sizes.min()), d * float(sizes.max())
        if low < MIN_DURATION or high > MAX_DURATION:
            where = "cluster.duration_law" + (f".{name}" if per_class else "")
            raise InputError(f"task durations d × size reach {low:.3g}..{high:.3g} with d = "
                             f"{d:g}: they must lie in [1e-100, 1e100]", where, source)


def check_batches(jobs: int, warmup: float, batches: int, given: set,
                  source: str | None) -> None:
    """InputError unless the jobs measured after the warm-up, jobs − ⌊warmup · jobs⌋,
    make at least 2 per batch (fewer: a NaN interval), naming the field the user set
    (``given``: the section's keys): ``batches``, else ``warmup``, else ``jobs``."""
    measured = jobs - int(warmup * jobs) if warmup < 1 else 0
    if measured >= 2 * batches:
        return
    if "batches" in given:
        raise InputError(f"must be <= {measured // 2:,} (2 measured jobs per batch: "
                         f"{measured:,} of the {jobs:,} jobs after the warm-up), got "
                         f"{batches:,}", "cluster.batches", source)
    if "warmup" in given or warmup >= 1:
        raise InputError(f"leaves fewer than {2 * batches} jobs to measure (2 per batch, "
                         f"{batches} batches)", "cluster.warmup", source)
    need = max(2 * batches, int(2 * batches / (1 - warmup)) - 1)
    while need - int(warmup * need) < 2 * batches:
        need += 1
    raise InputError(f"must be >= {need:,} (2 measured jobs per batch, {batches} batches, "
                     f"after the warm-up {warmup:g}), got {jobs:,}", "cluster.jobs", source)


def check_round_trips(rtts: list[float], class_loads: list[float], mean_counts: list[float],
                      window: int, limit: int, source: str | None,
                      beyond_window: list[float] | None = None) -> None:
    """InputError (field ``classes[k].rtt``) when the round trips alone keep more than
    ``limit`` flows in progress on average (the packet engine's bound on flows at once,
    where a run stops). A flow of N packets under a window of W packets waits at least
    ⌈N/W⌉ − 1 ≥ N/W − 1 round trips, so by Jensen and Little's law class k keeps at least
    λ_k · max(E[N_k]/W − 1, 0) · rtt_k flows in progress, λ_k = ρ_k / E[N_k] flows per
    time unit (ρ_k its load, E[N_k] = ``mean_counts[k]`` its mean packets per flow,
    :func:`mrfq.counts.mean_count`; time in packet-service units). An rtt of 1e10 stopped
    a run after seconds, blaming the load. Since ⌈N/W⌉ − 1 ≥ 1 whenever N > W, the
    round trips per flow are also at least P(N > W) (``beyond_window[k]``,
    :func:`mrfq.counts.more_than`), which holds where E[N] ≤ W leaves Jensen's bound at 0
    (a review: rtt = 1e308 with m = W = 5 ran, then failed blaming the load)."""
    tails = beyond_window or [0.0] * len(rtts)
    per_class = [rho / n * max(n / window - 1.0, tail, 0.0) * rtt if rtt > 0 else 0.0
                 for rtt, rho, n, tail in zip(rtts, class_loads, mean_counts, tails,
                                             strict=True)]
    if sum(per_class) > limit:
        k = max(range(len(per_class)), key=per_class.__getitem__)
        raise InputError(f"{rtts[k]:g} keeps at least {sum(per_class):.3g} flows in progress "
                         "on average (Little's law: a flow waits ceil(packets / window) − 1 "
                         f"round trips), more than the packet engine's {limit} at once: a "
                         "shorter rtt or a larger window", f"classes[{k}].rtt", source)
