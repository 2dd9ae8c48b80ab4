"""Argument checks of the cluster simulator's Python entry points (:mod:`mrfq.cluster.
model`, :mod:`mrfq.cluster.trace`): every bad argument is one
:class:`~mrfq.errors.InputError` naming it, raised before the Numba kernel runs — the
kernel trusts its arrays (an out-of-range class reads, or writes, outside them).

The checks only look: a valid argument comes back as the same numbers (float64 or int64
arrays, Python numbers), so a run of valid input is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrfq import policies
from mrfq.errors import InputError
from mrfq.scenario.limits import (  # (the file's bounds too: one definition)
    MAX_RUNNING,
    MAX_SEED,
    MAX_SERVERS,
    RUNNING_WHY,
    SERVERS_WHY,
    SLOTS_WHY,
    count_text,
    pool_why,
)
from mrfq.scenario.slots import fits, most_running, slot_shortfall

#: the most tasks of a run in all (their cumulative sum indexes an int64 array)
MAX_TOTAL_TASKS = 2.0**62


def _bound(x: float) -> str:
    """A bound as written: 2^k or 2^k − 1 for the powers of two, else as a number."""
    for k in (53, 62, 63):
        if x in (2**k, 2**k - 1):
            return f"2^{k}" + (" - 1" if x == 2**k - 1 else "")
    return f"{x:g}"


def integer(value: Any, name: str, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as a Python int in [minimum, maximum] (an int, a NumPy integer or a
    float with a whole value; not a bool), else InputError naming ``name``."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise InputError(f"must be an integer, got {value!r}", name)
    value = int(value)
    if value < minimum:
        raise InputError(f"must be an integer >= {minimum}, got {value}", name)
    if maximum is not None and value > maximum:
        raise InputError(f"must be an integer <= {_bound(maximum)}, got {value}", name)
    return value


def seed(value: Any, name: str = "seed") -> int:
    """A seed: an integer in 0 … 2^63 − 1 (NumPy refuses negative seeds, the kernel's
    hash takes an int64)."""
    return integer(value, name, 0, MAX_SEED)


def number(value: Any, name: str, minimum: float | None = None, positive: bool = False,
           below: float | None = None) -> float:
    """A finite real number (not a bool or a string) ≥ ``minimum``, > 0 if ``positive``
    and < ``below`` when given, as a float; InputError naming ``name`` otherwise."""
    try:
        if isinstance(value, bool | np.bool_ | str | bytes):
            raise TypeError
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"must be a number, got {value!r}", name) from None
    _in_range(out, f"{out:g}", name, minimum, positive, below=below)
    return out


def _in_range(x: float, shown: str, name: str, minimum: float | None = None,
              positive: bool = False, maximum: float | None = None,
              below: float | None = None) -> None:
    """InputError naming ``name`` (the value ``shown``) unless x is finite and within the
    bounds: the one range check of :func:`number` and :func:`per_class`."""
    if not np.isfinite(x):
        raise InputError(f"must be finite, got {shown}", name)
    if positive and x <= 0:
        raise InputError(f"must be positive, got {shown}", name)
    if minimum is not None and x < minimum:
        raise InputError(f"must be >= {minimum:g}, got {shown}", name)
    if maximum is not None and x > maximum:
        raise InputError(f"must be <= {_bound(maximum)}, got {shown}", name)
    if below is not None and x >= below:
        raise InputError(f"must be < {below:g}, got {shown}", name)


def reals(value: Any, name: str, ndim: int = 1) -> np.ndarray:
    """``value`` as a float64 array of ``ndim`` dimensions (2: a 1-D value is one row),
    every entry finite; InputError naming ``name`` and the first bad entry otherwise."""
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"must be an array of numbers ({ndim}-D)", name) from None
    if ndim == 2 and out.ndim < 2:
        out = np.atleast_2d(out)
    if out.ndim != ndim:
        raise InputError(f"must be a {ndim}-D array of numbers, got {out.ndim} "
                         "dimensions", name)
    bad = np.argwhere(~np.isfinite(out))
    if bad.size:
        where = list(map(int, bad[0]))
        raise InputError(f"must be finite numbers, got {out[tuple(where)]} at {where}",
                         name)
    return out


def integers(value: Any, name: str) -> np.ndarray:
    """``value`` as a 1-D int64 array (integers, or floats with whole values; no bools);
    InputError naming ``name`` otherwise."""
    raw = np.asarray(value)
    if raw.dtype == object:
        try:
            raw = raw.astype(float)
        except (TypeError, ValueError):
            raise InputError("must be integers", name) from None
    if raw.ndim != 1:
        raise InputError(f"must be a 1-D array of integers, got {raw.ndim} dimensions",
                         name)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    if raw.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(raw) | (raw % 1 != 0) | (np.abs(raw) > 2.0**62))
        if bad.size:
            raise InputError(f"must be integers, got {raw[bad[0]]!r} (entry {bad[0]})",
                             name)
    elif raw.dtype.kind == "u":
        if raw.max() > MAX_SEED:
            raise InputError(f"must be integers < 2^63, got {raw.max()}", name)
    elif raw.dtype.kind != "i":
        raise InputError(f"must be integers, got {raw.dtype} values", name)
    return raw.astype(np.int64)


def per_class(value: Any, K: int, name: str, minimum: float | None = None,
              positive: bool = False, maximum: float | None = None) -> np.ndarray:
    """One number for every class or K of them (finite, ≥ ``minimum``, > 0 if
    ``positive``, ≤ ``maximum``), as a float64 array of K; InputError naming ``name``."""
    try:
        out = np.array(value, dtype=float)  # (a copy: the model keeps it)
    except (TypeError, ValueError):
        raise InputError(f"must be one number or {K} (one per class)", name) from None
    if out.ndim == 0:
        out = np.full(K, float(out))
    if out.shape != (K,):
        raise InputError(f"must be one number or {K} (one per class), got shape "
                         f"{out.shape}", name)
    for k, x in enumerate(out):
        _in_range(x, f"{x:g}" + (f" (class {k + 1})" if K > 1 else ""), name, minimum,
                  positive, maximum)
    return out


def parallel_caps(value: Any, K: int) -> np.ndarray:
    """``max_parallel``: None (no cap), one cap for every class or K of them, each an
    integer ≥ 1 or inf (no cap), as a float64 array of K; InputError otherwise."""
    why = "must be integers >= 1 (inf: no cap), one per class or one for all"
    try:
        cap = np.asarray(np.inf if value is None else value, float)
    except (TypeError, ValueError):  # (a string: a raw ValueError before)
        raise InputError(f"{why}, got {value!r}", "max_parallel") from None
    cap = np.full(K, float(cap)) if cap.ndim == 0 else cap
    if cap.shape != (K,) or np.any(np.isnan(cap)) or np.any(cap < 1) or np.any(
            cap[np.isfinite(cap)] % 1):
        raise InputError(why, "max_parallel")
    return cap


def jobs(K: int, job_class: Any, job_tasks: Any, arrival: Any = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Given jobs, as the kernel assumes them (:func:`mrfq.cluster.kernel.simulate`):
    ``job_class`` each a class 0 … K − 1, ``job_tasks`` each ≥ 1 task (a job of none
    would never finish), one entry per job each, and ``arrival`` (None: not checked)
    finite, ≥ 0 (the cluster starts empty at 0) and sorted. Returns (job_class int64,
    job_tasks int64, arrival float64 or None); InputError naming the argument."""
    job_class = integers(job_class, "job_class")
    job_tasks = integers(job_tasks, "job_tasks")
    J = job_class.size
    if arrival is not None:
        arrival = reals(arrival, "arrival")
        J = arrival.size
        if J and arrival.min() < 0:
            j = int(np.argmin(arrival))
            raise InputError(f"must be >= 0 (the cluster starts empty at time 0), got "
                             f"{arrival[j]:g} (job {j})", "arrival")
        late = np.flatnonzero(np.diff(arrival) < 0)
        if late.size:
            j = int(late[0]) + 1
            raise InputError(f"must be sorted: job {j} arrives at {arrival[j]:g}, before "
                             f"job {j - 1} at {arrival[j - 1]:g}", "arrival")
    for name, values in (("job_class", job_class), ("job_tasks", job_tasks)):
        if values.size != J:
            raise InputError(f"must hold one entry per job ({J}"
                             + (", as arrival" if arrival is not None else ", as job_class")
                             + f"), got {values.size}", name)
    if J:
        bad = np.flatnonzero((job_class < 0) | (job_class >= K))
        if bad.size:
            raise InputError(f"must be a class 0 to {K - 1} (the model has {K}), got "
                             f"{job_class[bad[0]]} (job {bad[0]})", "job_class")
        bad = np.flatnonzero(job_tasks < 1)
        if bad.size:
            raise InputError(f"must be >= 1 task per job, got {job_tasks[bad[0]]} (job "
                             f"{bad[0]})", "job_tasks")
        if job_tasks.sum(dtype=float) > MAX_TOTAL_TASKS:
            raise InputError("holds more than 2^62 tasks in all", "job_tasks")
    return job_class, job_tasks, arrival


def task_times(value: Any, total: int) -> np.ndarray:
    """A trace's task durations (``task_time``: one per task, job after job, finite,
    ≥ 0); None or empty: none given (the model's laws draw them)."""
    if value is None:
        return np.zeros(0)
    times = reals(value, "task_time")
    if times.size and times.size != total:
        raise InputError(f"must hold {total} durations (one per task), got {times.size}",
                         "task_time")
    if times.size and times.min() < 0:
        i = int(np.argmin(times))
        raise InputError(f"must be >= 0, got {times[i]:g} (task {i})", "task_time")
    return times


def pool(capacity: np.ndarray) -> None:
    """Servers' capacities (L×R, finite): at most MAX_SERVERS servers, each resource
    ≥ 0, every resource some in all, and its total finite (a sum of large capacities
    may overflow)."""
    if capacity.shape[0] > MAX_SERVERS:
        raise InputError(f"must be at most {MAX_SERVERS:,} servers ({SERVERS_WHY}), got "
                         f"{capacity.shape[0]:,}", "capacity")
    with np.errstate(over="ignore"):  # (the overflow is what is checked)
        total = capacity.sum(axis=0)
    if np.any(capacity < 0) or np.any(total <= 0) or np.any(np.isinf(total)):
        raise InputError("every resource needs some (finite) capacity", "capacity")


def placement(capacity: np.ndarray, demand: np.ndarray, allowed: Any, policy: str,
              slots_per_server: int) -> np.ndarray:
    """``allowed`` (classes × servers, default everywhere) as a bool array, every class
    with some server it may use whose capacity holds one of its tasks, as the kernel
    decides (:func:`~mrfq.scenario.slots.fits`), and under the slot
    scheduler (``policy`` slots) with ``slots_per_server`` slots per largest server, as
    many slots as its task takes (:func:`~mrfq.scenario.slots.slot_shortfall`): a class
    that can never run is an InputError, not a run that ends with NaN."""
    K, L = demand.shape[0], capacity.shape[0]
    ok = np.ones((K, L), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    if ok.shape != (K, L):
        raise InputError(f"must be {K}×{L} (classes × servers)", "allowed")
    for k in range(K):
        if not ok[k].any():
            raise InputError(f"class {k + 1} may run on no server", f"allowed[{k}]")
        if not fits(demand[k], capacity[ok[k]]).any():
            where = "every server" if ok[k].all() else "every server it may use"
            raise InputError(f"a task of class {k + 1} is larger than {where}",
                             f"classes[{k}].demand")
    short = (slot_shortfall(capacity, demand, ok, slots_per_server)
             if policy == policies.named(policies.CLUSTER).SLOTS else None)
    if short:
        k, need, most = short
        raise InputError(f"with {slots_per_server} slots per largest server a task of class "
                         f"{k + 1} takes {need} slot(s) and no server it may use holds more "
                         f"than {most}: raise it, or choose another policy",
                         "slots_per_server")
    return ok


def slots_per_server(value: Any) -> int:
    """k of the slot scheduler: an integer 1 … MAX_RUNNING (the largest server holds k
    slots, and the kernel allocates its event heap for every slot)."""
    k = integer(value, "slots_per_server", 1)
    if k > MAX_RUNNING:
        raise InputError(f"must be <= {MAX_RUNNING:,} ({SLOTS_WHY}), got {k:,}",
                         "slots_per_server")
    return k


def tasks_per_resource(value: Any, n_resources: int) -> float:
    """C of a pool (units of every resource, a dominant task holding 1): 1 ≤ C (a
    dominant task fits) ≤ MAX_RUNNING / R (R · C tasks can run at once: :func:`running`)."""
    C = number(value, "tasks_per_resource", minimum=1.0)
    if C * n_resources > MAX_RUNNING:
        raise InputError(f"must be <= {MAX_RUNNING / n_resources:,.0f} ("
                         f"{pool_why(n_resources)}), got {C:g}", "tasks_per_resource")
    return C


def running(capacity: np.ndarray, demand: np.ndarray, policy: str, k: int) -> None:
    """The tasks that can run at once on servers ``capacity`` (L×R, checked by
    :func:`pool`) with per-task ``demand`` (K×R, every class some > 0) under the cluster
    ``policy``, ``k`` slots per largest server
    (:func:`mrfq.scenario.slots.most_running`): the kernel allocates its event heap for
    all of them before the run, so more than MAX_RUNNING is an InputError naming
    ``slots_per_server``, or ``demand`` (tasks so small that that many fit)."""
    slots = policy == policies.named(policies.CLUSTER).SLOTS
    most = most_running(capacity, demand, slots, k)
    if most <= MAX_RUNNING:
        return
    if slots:
        raise InputError(f"with {k:,} slots per largest server the {len(capacity):,} "
                         f"servers hold {count_text(most)} slots in all, more than "
                         f"{MAX_RUNNING:,} tasks at once ({RUNNING_WHY})", "slots_per_server")
    with np.errstate(divide="ignore"):
        small = int(np.argmin((demand / capacity.sum(axis=0)).max(axis=1)))
    raise InputError(f"up to {count_text(most)} tasks could run at once (class {small + 1}'s, "
                     f"demand {demand[small].tolist()}, is that small a part of the servers), "
                     f"more than {MAX_RUNNING:,} ({RUNNING_WHY})", "demand")


def requirements(value: Any) -> np.ndarray:
    """pooled_model's requirement vectors (classes × resources): finite, ≥ 0, each
    class some resource > 0."""
    a = reals(value, "requirements", 2)
    if np.any(a < 0) or np.any(a.max(axis=1) <= 0):
        raise InputError("must be >= 0, some resource > 0 per class", "requirements")
    return a


def run(seed_: Any, window_: Any, sample_dt: Any, n_samples: Any
        ) -> tuple[int, tuple[float, float], float, int]:
    """run_jobs' ``seed``, ``window``, ``sample_dt`` (> 0 when samples are taken; else
    unused, returned as 1.0) and ``n_samples`` (≥ 0)."""
    n_samples = integer(n_samples, "n_samples", 0)
    dt = number(sample_dt, "sample_dt", positive=True) if n_samples else 1.0
    return seed(seed_), window(window_), dt, n_samples


def measured(jobs: Any, warmup: Any, batches: Any) -> tuple[int, float, int]:
    """run_cluster's ``jobs`` (≥ 1), ``warmup`` (a fraction in [0, 1): the first job
    measured is one of them) and ``batches`` (≥ 2: an interval from 1 batch mean has
    no spread)."""
    return (integer(jobs, "jobs", 1), number(warmup, "warmup", minimum=0, below=1),
            integer(batches, "batches", 2))


def window(value: Any) -> tuple[float, float]:
    """A measurement window (start, end): two numbers, not NaN, start ≤ end (end may be
    inf)."""
    try:
        start, end = (float(x) for x in value)
    except (TypeError, ValueError):
        raise InputError(f"must be two numbers (start, end), got {value!r}",
                         "window") from None
    if np.isnan(start) or np.isnan(end) or start > end:
        raise InputError(f"must be (start, end) with start <= end, got ({start:g}, "
                         f"{end:g})", "window")
    return start, end
