"""Cluster workloads from the Google cluster-usage trace (2011, "clusterdata-2011-2",
schema v2.1) and a synthetic Google-like generator writing the same schema.

The ``task_events`` table has no header; one event per row, 13 columns: timestamp (µs;
0 = before the trace window, 2^63 − 1 = after it), missing info, job ID, task index,
machine ID, event type, user, scheduling class, priority, CPU request, memory request,
disk request, different-machine restriction. Mandatory: timestamp, job ID, task index,
event type (0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL, 6 LOST,
7 UPDATE_PENDING, 8 UPDATE_RUNNING) and priority. Requests are normalised to the largest
machine (as DRFH's Table I is).

Derivation (:func:`load_task_events`): a task is kept when its last run ends in FINISH;
its duration is that FINISH time minus the SCHEDULE that started the run, in seconds; its
request is the last (CPU, memory) it was given. A run scheduled at timestamp 0 began before
the trace window, at an unknown time: its duration is not known, so it is not a kept run
(a task whose last run it is, is dropped). A job arrives at the first SUBMIT of its kept
tasks, a SUBMIT at 0 counting as the window's start (600 s, or a file's first timestamp
after 0 if earlier: the job was pending, or running, when the window opened), in
seconds, shifted so the first job arrives at 0; its tasks run in task-index
order; its per-task demand is the componentwise largest request of its tasks (so every
task fits where it is placed). Jobs of equal demand form one class. Tasks never finishing
(killed, evicted last, lost, running at the end) and tasks finishing without a request
(CPU and memory blank, or both 0) are dropped and counted. An event that ends a run
(EVICT, FAIL, FINISH, KILL, LOST) of a task that is not running changes nothing, its
request included: a second FINISH, or a KILL after the FINISH, leaves the finished run as
it was; a FINISH with no SCHEDULE before it (a record missing) ends no run, and the task
is dropped and counted with those never finishing. A SCHEDULE starts a new run, ending
any run before it. The rows of a task must be in time order (as the trace's files are):
one out of order is an error, not a lost task; a timestamp must be 0 to 2^63 − 1.
"""

from __future__ import annotations

import csv
import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from mrfq.cluster import checks
from mrfq.cluster.model import ClusterModel, run_jobs, simulate_jobs
from mrfq.errors import InputError
from mrfq.intervals import t_interval
from mrfq.scenario.limits import MAX_RUNNING, MIN_REQUEST, RUNNING_WHY

COLUMNS = ("timestamp", "missing info", "job ID", "task index", "machine ID",
           "event type", "user", "scheduling class", "priority", "CPU request",
           "memory request", "disk request", "different-machine restriction")
SUBMIT, SCHEDULE, FINISH = 0, 1, 4
#: the events that end a run: EVICT, FAIL, FINISH, KILL, LOST
ENDS = range(2, 7)
EVENTS = ("SUBMIT", "SCHEDULE", "EVICT", "FAIL", "FINISH", "KILL", "LOST",
          "UPDATE_PENDING", "UPDATE_RUNNING")
_END = 2**63 - 1
#: the trace window's first instant (µs): the 2011 schema counts time from 600 s before it
OPENS = 600_000_000
_MANDATORY = (0, 2, 3, 5, 8)


@dataclass
class Trace:
    """Jobs of a trace: ``arrival`` (s, sorted), ``job_class``, ``job_tasks``,
    ``task_time`` (s, job after job, task-index order), ``demand`` (classes × (CPU,
    memory), normalised to the largest machine), ``job_id``, ``dropped`` (the tasks not
    kept: never finishing, or finishing without a request), ``job_user`` (the user of a
    job's first kept task; None when not known), ``unrequested`` (of the dropped tasks,
    those that finished but had no request: CPU and memory blank, or both 0) and
    ``before_window`` (of the dropped tasks, those whose last run was scheduled at
    timestamp 0, before the trace window: its duration is not known)."""

    arrival: np.ndarray
    job_class: np.ndarray
    job_tasks: np.ndarray
    task_time: np.ndarray
    demand: np.ndarray
    job_id: np.ndarray
    dropped: int = 0
    job_user: np.ndarray | None = None
    unrequested: int = 0
    before_window: int = 0


def _open(path: Path):
    return gzip.open(path, "rt", newline="") if path.suffix == ".gz" else path.open(newline="")


def _field(row: list[str], col: int, where: str, source: str, real: bool = False):
    text = row[col].strip()
    if not text:
        if col in _MANDATORY:
            raise InputError("is empty (mandatory)", f"{where}, {COLUMNS[col]}", source)
        return None
    try:
        return float(text) if real else int(text)
    except ValueError:
        kind = "a number" if real else "an integer"
        raise InputError(f"must be {kind}, got {text!r}", f"{where}, {COLUMNS[col]}",
                         source) from None


def load_task_events(path: str | Path) -> Trace:
    """The jobs of a ``task_events`` file (``.csv`` or ``.csv.gz``), module doc for the
    rule. One InputError ``<file>: row <n>, <column>: <problem>`` on a malformed row,
    or ``<file>: <problem>`` when no task is kept (none finishes with a request)."""
    path = Path(path)
    source = str(path)
    if path.is_dir():
        raise InputError("is a directory, not a trace file", None, source)
    if not path.is_file():
        raise InputError("no such trace file", None, source)
    tasks: dict[tuple[int, int], dict] = {}
    n, opens = 0, OPENS  # (the window's first instant, module doc)
    try:
        with _open(path) as f:
            for n, row in enumerate(csv.reader(f), start=1):
                t = _read_row(row, f"row {n}", source, tasks)
                opens = t if 0 < t < opens else opens
    # (no row for these two: the file is decoded in blocks, ahead of the rows read)
    except UnicodeDecodeError as exc:
        raise InputError(f"is not UTF-8 text (byte {exc.object[exc.start]:#04x}; {n} rows "
                         "read before it)", None, source) from None
    except (EOFError, zlib.error):  # a partial download of a .csv.gz
        raise InputError(f"the compressed file ends early (truncated .gz?; {n} rows read)",
                         None, source) from None
    except gzip.BadGzipFile:
        raise InputError("is not a gzip file (named .gz)", None, source) from None
    except csv.Error as exc:
        raise InputError(f"is not CSV: {exc}", f"row {n + 1}", source) from None
    trace = _jobs(tasks, opens)
    if trace.job_tasks.size == 0:
        never = trace.dropped - trace.unrequested - trace.before_window
        early = (f"{trace.before_window} begun before the trace window (scheduled at 0), "
                 if trace.before_window else "")
        raise InputError("holds no task event" if not tasks else
                         f"holds no finished task with a CPU and memory request ("
                         f"{len(tasks)} tasks: {never} never finishing, {early}"
                         f"{trace.unrequested} finishing without one or with both 0)",
                         None, source)
    return trace


def _read_row(row: list[str], where: str, source: str, tasks: dict) -> int:
    """One task event into ``tasks`` ((job, index) → submit, start, end, request, user;
    µs), checked: InputError naming the row and column. Returns its timestamp (µs)."""
    if len(row) != len(COLUMNS):
        raise InputError(f"has {len(row)} columns, expected {len(COLUMNS)} "
                         "(task_events, 2011 schema)", where, source)
    t, job, index, event = (_field(row, c, where, source) for c in (0, 2, 3, 5))
    if not 0 <= t <= _END:  # (2^63 − 1 is the schema's "after the window")
        raise InputError(f"must be 0 to 2^63 − 1 (µs), got {t}", f"{where}, {COLUMNS[0]}",
                         source)
    if not 0 <= job < 2**63:  # (the results keep job IDs as 64-bit integers)
        raise InputError(f"must be 0 to 2^63 − 1, got {job}", f"{where}, {COLUMNS[2]}",
                         source)
    if index < 0:  # (the schema numbers a job's tasks from 0)
        raise InputError(f"must be ≥ 0, got {index}", f"{where}, {COLUMNS[3]}", source)
    _field(row, 8, where, source)
    if not 0 <= event <= 8:
        raise InputError(f"must be 0 to 8, got {event}", f"{where}, event type",
                         source)
    cpu, mem = (_field(row, c, where, source, real=True) for c in (9, 10))
    for value, col in ((cpu, 9), (mem, 10)):
        if value is not None and not 0 <= value <= 1:
            raise InputError(f"must be in [0, 1] (normalised), got {value:g}",
                             f"{where}, {COLUMNS[col]}", source)
    if cpu is not None and mem is not None and 0 < max(cpu, mem) < MIN_REQUEST:
        # the kernel sizes its event heap for the tasks that can run at once: a request
        # of 1e-300 is 1e300 tasks per machine (an overflow, or memory that is not there)
        col = 9 if cpu >= mem else 10
        raise InputError(f"must be 0 or >= {MIN_REQUEST:g} (the larger of a task's two "
                         f"requests: a machine of capacity 1 would run more than "
                         f"{MAX_RUNNING:,} such tasks at once, {RUNNING_WHY}), got "
                         f"{max(cpu, mem):g}", f"{where}, {COLUMNS[col]}", source)
    task = tasks.setdefault((job, index), {"submit": None, "start": None,
                                           "end": None, "request": None, "last": 0,
                                           "early": False, "running": False,
                                           "user": row[6].strip()})
    if t != _END:  # (2^63 − 1: after the window, in no order)
        if event == FINISH and task["start"] is not None and t < task["start"]:
            raise InputError(f"FINISH at {t} µs is before its SCHEDULE at "
                             f"{task['start']} µs (job {job}, task {index})",
                             f"{where}, {COLUMNS[0]}", source)
        if t < task["last"]:
            # read in file order, a task's run would be lost silently (a FINISH before
            # its SCHEDULE ends nothing, and the SCHEDULE then starts a run never ending)
            raise InputError(f"{EVENTS[event]} at {t} µs comes after an event of the same "
                             f"task at {task['last']} µs (job {job}, task {index}): the "
                             "rows must be in time order", f"{where}, {COLUMNS[0]}", source)
        task["last"] = t
    if event in ENDS and not task["running"]:
        # an end event of a task not running changes nothing, its request included (a
        # second FINISH lengthened the run; a KILL after the FINISH, with requests 0,
        # dropped a finished task)
        return t
    if cpu is not None and mem is not None:
        task["request"] = (cpu, mem)
    if t == _END:
        return t
    if event == SUBMIT and task["submit"] is None:
        task["submit"] = t
    elif event == SCHEDULE:  # (at 0: begun before the window, module doc)
        task["start"], task["end"] = (t, None) if t > 0 else (None, None)
        task["early"], task["running"] = t == 0, True
    elif event == FINISH:  # (of a run begun before the window: its length unknown)
        task["end"], task["running"] = (t if task["start"] is not None else None), False
    elif event in ENDS:  # the run ended otherwise
        task["start"], task["early"], task["running"] = None, False, False
    return t


def _jobs(tasks: dict, opens: int) -> Trace:
    jobs: dict[int, list] = {}
    dropped = unrequested = early = 0
    for (job, _index), task in sorted(tasks.items()):  # task-index order
        if task["end"] is None or task["request"] is None or max(task["request"]) <= 0:
            dropped += 1
            unrequested += task["end"] is not None
            early += task["end"] is None and task["early"]
            continue
        submit = task["submit"] if task["submit"] is not None else task["start"]
        submit = submit if submit > 0 else opens  # pending when the window opened
        jobs.setdefault(job, []).append((submit, (task["end"] - task["start"]) / 1e6,
                                         task["request"], task["user"]))
    order = sorted(jobs, key=lambda j: (min(s for s, _, _, _ in jobs[j]), j))
    demands: dict[tuple, int] = {}
    arrival, classes, counts, times, users = [], [], [], [], []
    for job in order:
        items = jobs[job]
        need = tuple(max(r[i] for _, _, r, _ in items) for i in range(2))
        classes.append(demands.setdefault(need, len(demands)))
        arrival.append(min(s for s, _, _, _ in items) / 1e6)
        counts.append(len(items))
        times.extend(d for _, d, _, _ in items)
        users.append(items[0][3])
    arrival = np.array(arrival, dtype=float)
    return Trace(arrival - (arrival[0] if arrival.size else 0.0),
                 np.array(classes, dtype=np.int64), np.array(counts, dtype=np.int64),
                 np.array(times, dtype=float), np.array(list(demands), dtype=float),
                 np.array(order, dtype=np.int64), dropped, np.array(users, dtype=str),
                 unrequested, early)


def google_like(jobs: int, seed: int, rate: float = 0.5) -> Trace:
    """A synthetic Google-like workload (not fitted; shaped as the 2011 trace is reported):
    Poisson job arrivals (``rate`` per s); tasks per job 1 with probability 0.6, else
    1 + a geometric of mean 30 (a few large jobs hold most tasks); requests drawn per job
    from a grid, as the trace's requests take few distinct values: CPU one of 12
    log-spaced values on [0.005, 0.25], memory = CPU × one of 9 log-spaced factors on
    [0.25, 4] (capped at 0.5): heterogeneous in both size and CPU/memory ratio, at most
    108 classes; task durations log-normal (median 120 s, σ = 1.2). ``jobs`` ≥ 1,
    ``seed`` 0 … 2^63 − 1, ``rate`` > 0."""
    jobs, seed = checks.integer(jobs, "jobs", 1), checks.seed(seed)
    rate = checks.number(rate, "rate", positive=True)
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1.0 / rate, jobs))
    arrival -= arrival[0]
    counts = np.where(rng.random(jobs) < 0.6, 1, 1 + rng.geometric(1 / 30, jobs))
    cpu = 0.005 * 50.0 ** (rng.integers(0, 12, jobs) / 11)
    mem = np.minimum(cpu * 4.0 ** ((rng.integers(0, 9, jobs) - 4) / 4), 0.5)
    need = np.round(np.c_[cpu, mem], 4)
    demand, classes = np.unique(need, axis=0, return_inverse=True)
    times = np.round(np.exp(rng.normal(np.log(120.0), 1.2, counts.sum())), 3)
    return Trace(arrival, classes.astype(np.int64).ravel(), counts.astype(np.int64),
                 np.maximum(times, 0.001), demand, np.arange(jobs, dtype=np.int64))


def write_task_events(trace: Trace, path: str | Path) -> None:
    """The trace as a ``task_events`` file (2011 schema): per task a SUBMIT at its job's
    arrival, a SCHEDULE then and a FINISH after its duration (µs; requests of its class;
    ``.gz`` compresses). :func:`load_task_events` reads it back to the same jobs."""
    path = Path(path)
    rows = []
    first = np.concatenate(([0], np.cumsum(trace.job_tasks)[:-1]))
    for j, job in enumerate(trace.job_id):
        t0 = int(round(trace.arrival[j] * 1e6)) + OPENS  # (the window opens at 600 s)
        cpu, mem = trace.demand[trace.job_class[j]]
        for i in range(trace.job_tasks[j]):
            end = t0 + int(round(trace.task_time[first[j] + i] * 1e6))
            for t, event in ((t0, SUBMIT), (t0, SCHEDULE), (end, FINISH)):
                machine = "" if event == SUBMIT else str(i % 97)
                user = "user" if trace.job_user is None else str(trace.job_user[j])
                rows.append((t, event, [str(t), "", str(int(job)), str(i), machine,
                                        str(event), user, "1", "2", f"{cpu:.6g}",
                                        f"{mem:.6g}", "0.0001", "0"]))
    rows.sort(key=lambda r: (r[0], r[1]))
    opener = gzip.open(path, "wt", newline="") if path.suffix == ".gz" else path.open(
        "w", newline="")
    with opener as f:
        csv.writer(f, lineterminator="\n").writerows(r[2] for r in rows)


def trace_model(trace: Trace, capacity: ArrayLike, policy: str, **options) -> ClusterModel:
    """The cluster model of a trace on servers ``capacity`` (L×2, normalised as the
    trace's requests, e.g. :func:`mrfq.cluster.servers.draw_servers`): one class per
    distinct demand; rates and durations are unused (the trace gives them). InputError
    naming ``trace`` when it holds no job."""
    if np.size(trace.arrival) == 0:
        raise InputError("holds no job (nothing to run)", "trace")
    K = trace.demand.shape[0]
    return ClusterModel(capacity=capacity, demand=trace.demand, policy=policy,
                        rates=np.zeros(K), **options)


def run_trace(trace: Trace, capacity: ArrayLike, policy: str, **options
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The kernel on a trace's jobs: (finish per job (s), jobs area, resources busy ×
    time per resource over [first, last arrival], samples, task events), as
    :func:`mrfq.cluster.model.simulate_jobs` with the trace's task durations."""
    model = trace_model(trace, capacity, policy, **options)
    return simulate_jobs(model, trace.arrival, trace.job_class, trace.job_tasks,
                         window=(0.0, float(trace.arrival[-1])), task_time=trace.task_time)


def trace_summary(trace: Trace, capacity: ArrayLike, policy: str, batches: int = 10,
                  timeline_dt: float | None = None, **options) -> dict:
    """One run of a trace on servers ``capacity`` under ``policy``, summarised: ``jobs``,
    ``tasks``, ``events`` (launches and completions), ``utilisation`` (per resource: busy
    / capacity while jobs arrive, over [0, last arrival]; over [0, makespan] when every
    job arrives at 0; NaN when that window has length 0: every job arrives at 0 and every
    task lasts 0 s), job completion time JCT = finish − arrival (s): ``jct_mean`` with a
    95% batch-means interval (``batches`` ≥ 2 consecutive groups of jobs in arrival order,
    Student t; NaN under 2 jobs per batch: trace jobs are not independent, so the
    interval is indicative), ``jct_p95`` and the ``makespan`` (last finish, s); and the
    kernel's ``run`` (:class:`~mrfq.cluster.model.JobsRun`, its timeline binned from
    ``timeline_dt``, :func:`~mrfq.cluster.model.run_jobs`) with its window's ``end`` (s:
    the horizon of its ``done_by_end``)."""
    model = trace_model(trace, capacity, policy, **options)
    batches = checks.integer(batches, "batches", 2)
    end = float(trace.arrival[-1]) if trace.arrival[-1] > 0 else np.inf
    run = run_jobs(model, trace.arrival, trace.job_class, trace.job_tasks,
                   window=(0.0, end), task_time=trace.task_time, timeline_dt=timeline_dt)
    finish, busy, events = run.finish, run.busy, run.events
    makespan = float(finish.max())
    jct = finish - trace.arrival
    half = np.nan
    if jct.size >= 2 * batches:
        _, low, high = t_interval([b.mean() for b in np.array_split(jct, batches)])
        half = (high - low) / 2
    mean = float(jct.mean())
    span = min(end, makespan)
    # a window of length 0 has no utilisation: NaN, without dividing 0 by 0
    usage = busy / (model.total * span) if span > 0 else np.full(busy.size, np.nan)
    return {"jobs": int(jct.size), "tasks": int(trace.job_tasks.sum()), "events": int(events),
            "utilisation": usage,
            "jct_mean": mean, "jct_ci_low": mean - half, "jct_ci_high": mean + half,
            "jct_p95": float(np.percentile(jct, 95)), "makespan": makespan, "run": run,
            "end": end}
