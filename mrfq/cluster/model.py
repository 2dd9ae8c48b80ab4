"""The cluster model (SPEC §6) and one run of it.

Units: time in the unit of the task durations; capacities and per-task demands in the
servers' own units (``capacity[l, r]``, ``demand[k, r]``). With the pool C_r = Σ_l c_lr,
a task of class k holds the dominant share δ_k = max_r D_kr / C_r, and its fluid
requirement vector is a_kr = (D_kr / C_r) / δ_k (max 1). A class-k job brings N tasks
(mean E[N_k]) of mean duration d_k, i.e. E[N_k] d_k δ_k units of fluid work (dominant
resource × time), so its fluid load is ρ_k = λ_k E[N_k] d_k δ_k and its **service rate**

    γ_k = E[N_k] d_k δ_k / E[T_k]          (T_k: the job's sojourn time)

is the fluid γ_k of SPEC §2 (mean work / mean sojourn): a job alone, running 1/δ_k tasks
at a time, completes at γ = 1 up to the granularity of its tasks (its last tasks finish
one by one, SPEC §6 "Granularity effects"). A parallelism cap c_k (``max_parallel``) keeps
a job to c_k tasks at once, so alone it holds at most c_k δ_k of the pool (γ ≤ c_k δ_k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from mrfq import executor, policies, seeds
from mrfq.cluster import checks, durations, kernel
from mrfq.cluster.timeline import Timeline
from mrfq.counts import mean_count, packet_counts
from mrfq.errors import InputError
from mrfq.intervals import lugsail_ratio_interval
from mrfq.scenario import ClusterConfig
from mrfq.scenario.cluster import per_class_laws
from mrfq.scenario.limits import MAX_DURATION, MAX_TASKS, MIN_DURATION
from mrfq.sizes import SizeLaw, parse_size

#: laws of the number of tasks of a job, and of a task's duration
GEOMETRIC, FIXED, EXPONENTIAL = "geometric", "fixed", "exponential"
#: the built-in laws by name (besides them, any flow-size law of :mod:`mrfq.sizes`)
TASK_LAWS, DURATION_LAWS = (GEOMETRIC, FIXED), (EXPONENTIAL, FIXED)


def class_laws(value: str | SizeLaw | dict | Sequence[str | SizeLaw | dict | None] | None,
               K: int, builtins: tuple[str, str], name: str) -> tuple:
    """Per class, the law of a job's number of tasks (``builtins`` = :data:`TASK_LAWS`) or of a
    task's duration (:data:`DURATION_LAWS`): ``value`` is one law for every class or a sequence
    of K, each a built-in name (any case; None: the default, ``builtins[0]``), a
    :class:`~mrfq.sizes.SizeLaw` or its table (a dict, read by :func:`~mrfq.sizes.parse_size`):
    a flow-size law, mean 1 unless an un-rescaled table. A law that is a built-in one in
    disguise becomes it, so that it draws the same numbers: exponential → ``builtins[0]``
    (geometric tasks, exponential durations), deterministic → ``fixed``. A tasks law must keep
    its mean 1 (the mean number of tasks is ``mean_tasks``): an un-rescaled table is refused
    there. InputError naming ``name`` otherwise."""
    single = value is None or isinstance(value, str | SizeLaw | dict)
    items = [value] * K if single else list(value)
    if len(items) != K:
        raise InputError(f"must be one law or {K} laws (one per class), got {len(items)}",
                         name)
    out = []
    for k, item in enumerate(items):
        where = name if single else f"{name}[{k}]"
        if isinstance(item, dict):
            item = parse_size(item, where)
        if item is None:
            item = builtins[0]
        if isinstance(item, SizeLaw):
            if item.distribution in ("exponential", "deterministic"):
                item = builtins[0] if item.distribution == "exponential" else FIXED
            elif builtins == TASK_LAWS and item.unscaled:
                raise InputError("a tasks law keeps mean 1 (rescale = true): the mean "
                                 "number of tasks is mean_tasks", f"{where}.rescale")
        elif isinstance(item, str) and item.strip().lower() in builtins:
            item = item.strip().lower()
        else:
            raise InputError(f"must be {' or '.join(repr(b) for b in builtins)}, or a size "
                             f"law (mrfq.sizes.parse_size), got {item!r}", where)
        out.append(item)
    return tuple(out)


def configured_laws(config: ClusterConfig, names: list[str], key: str) -> tuple:
    """Per class (``names`` order), the law ``key`` ("tasks" or "duration_law") of a
    ``[cluster]`` section as the model runs it (:func:`class_laws`: a built-in law in
    disguise is the built-in one)."""
    builtins = TASK_LAWS if key == "tasks" else DURATION_LAWS
    return class_laws(per_class_laws(config, key, names), len(names), builtins, key)


def law_key(laws: tuple) -> str | dict | list:
    """The laws of :func:`configured_laws` for a point's key: one built-in name or one
    size law's :meth:`~mrfq.sizes.SizeLaw.key` when every class has it (the default
    keys as the name it always was), else the list per class."""
    keys = [law if isinstance(law, str) else law.key() for law in laws]
    return keys[0] if keys and all(k == keys[0] for k in keys) else keys


def law_mean(law: str | SizeLaw) -> float:
    """The mean of a duration law in units of d_k: 1, except for a table law with
    ``rescale = false`` (:attr:`mrfq.sizes.SizeLaw.mean`)."""
    return 1.0 if isinstance(law, str) else law.mean


def expected_tasks(laws: Sequence, mean_tasks: np.ndarray) -> np.ndarray:
    """E[N_k] per class: m_k for geometric and fixed tasks (the same floats), the exact mean
    of N = 1 + ⌊x/θ⌋ for a size law (:func:`mrfq.counts.mean_count`; m_k + O(1))."""
    return np.array([mean_count(law, float(m)) if isinstance(law, SizeLaw) else m
                     for law, m in zip(laws, mean_tasks, strict=True)], dtype=np.float64)


@dataclass(frozen=True)
class ClusterModel:
    """Servers, job classes and a scheduler (module doc for the units).

    ``rates[k]``: Poisson job arrivals per time unit; ``mean_tasks[k]``: m_k, the mean number
    of tasks of a job, whose law is ``tasks``: geometric on 1, 2, …, fixed (N = m_k rounded),
    or a flow-size law of :mod:`mrfq.sizes` of mean 1 (a :class:`~mrfq.sizes.SizeLaw`: N = 1 +
    ⌊x / θ⌋ for x drawn from it, θ = −ln(1 − 1/m_k), as a flow's packets, whose exact mean
    E[N_k] = m_k + O(1) is :func:`expected_tasks`; m_k = 1: one task per job, whatever the
    law); ``durations[k]``: d_k, a task's mean duration, whose law is ``duration_law``:
    exponential, fixed, or a flow-size law (duration d_k x, E = d_k E[x]: d_k
    unless an un-rescaled table). Each law: one for every class, or a sequence with one per
    class (:func:`class_laws`; ``task_laws`` and ``duration_laws`` hold them per class);
    ``slots_per_server``: k of the slot scheduler (the largest server is cut into k slots);
    ``allowed[k, l]``: class k may run on server l (placement constraints, TSF; default
    everywhere); ``max_parallel[k]`` (or one number for every class): the most tasks a class-k
    job runs at once, an integer ≥ 1 or inf (default: inf, no cap; the kernel's rule). Every
    number finite: capacities, demands, rates, durations ≥ 0, weights > 0, 1 ≤ m_k ≤ 2^53 (a
    whole number for fixed tasks); ``rates`` … ``weights``: one number or one per class."""

    capacity: np.ndarray
    demand: np.ndarray
    policy: str
    rates: np.ndarray = field(default=None)  # type: ignore[assignment]
    mean_tasks: np.ndarray = field(default=None)  # type: ignore[assignment]
    durations: np.ndarray = field(default=None)  # type: ignore[assignment]
    weights: np.ndarray = field(default=None)  # type: ignore[assignment]
    tasks: str | SizeLaw | tuple = GEOMETRIC
    duration_law: str | SizeLaw | tuple = EXPONENTIAL
    slots_per_server: int = 14
    allowed: np.ndarray = field(default=None)  # type: ignore[assignment]
    max_parallel: np.ndarray = field(default=None)  # type: ignore[assignment]
    task_laws: tuple = field(init=False, default=())
    duration_laws: tuple = field(init=False, default=())

    def __post_init__(self):
        cap = checks.reals(self.capacity, "capacity", 2)
        dem = checks.reals(self.demand, "demand", 2)
        K = dem.shape[0]
        set_ = object.__setattr__
        set_(self, "capacity", cap)
        set_(self, "demand", dem)
        set_(self, "policy", policies.get(policies.CLUSTER, self.policy).name)
        for name, default, low in (("rates", 0.0, 0), ("mean_tasks", 1.0, 1),
                                   ("durations", 1.0, 0), ("weights", 1.0, 0)):
            value = getattr(self, name)
            set_(self, name, checks.per_class(
                default if value is None else value, K, name, minimum=low,
                positive=name == "weights",
                maximum=MAX_TASKS if name == "mean_tasks" else None))
        set_(self, "slots_per_server", checks.slots_per_server(self.slots_per_server))
        if cap.shape[1] != dem.shape[1]:
            raise InputError(f"servers have {cap.shape[1]} resources, tasks "
                             f"{dem.shape[1]}", "capacity")
        checks.pool(cap)
        if np.any(dem < 0) or np.any(dem.max(axis=1) <= 0):
            raise InputError("must be >= 0 for every resource, and every task needs some "
                             "resource (a positive entry in each row)", "demand")
        checks.running(cap, dem, self.policy, self.slots_per_server)  # (the kernel's heap)
        set_(self, "allowed", checks.placement(cap, dem, self.allowed, self.policy,
                                               self.slots_per_server))
        set_(self, "max_parallel", checks.parallel_caps(self.max_parallel, K))
        set_(self, "task_laws", class_laws(self.tasks, K, TASK_LAWS, "tasks"))
        for k, law in enumerate(self.task_laws):
            # workload() gives a fixed-tasks job m_k tasks: the work E[N_k] d_k δ_k (and
            # the rates of pooled_model) would not be its work for another m_k
            if law == FIXED and self.mean_tasks[k] % 1:
                raise InputError(f"fixed tasks need a whole number, got "
                                 f"{self.mean_tasks[k]:g} (class {k + 1})", "mean_tasks")
        set_(self, "duration_laws", class_laws(self.duration_law, K, DURATION_LAWS,
                                               "duration_law"))

    @property
    def total(self) -> np.ndarray:
        """C_r = Σ_l c_lr: the pooled capacity of every resource (servers' units)."""
        return self.capacity.sum(axis=0)

    @property
    def delta(self) -> np.ndarray:
        """δ_k: a task's dominant share of the pool."""
        return (self.demand / self.total).max(axis=1)

    @property
    def requirements(self) -> np.ndarray:
        """The fluid requirement vectors a_kr (max 1)."""
        return self.demand / self.total / self.delta[:, None]

    @property
    def expected_duration(self) -> np.ndarray:
        """A class-k task's mean duration: d_k times its law's mean (as E[N_k])."""
        return self.durations * np.array([law_mean(law) for law in self.duration_laws])

    @property
    def work(self) -> np.ndarray:
        """Mean fluid work of a job: E[N_k] d_k δ_k (for the built-in laws, the means
        m_k and d_k themselves: multiplied by 1.0, the same floats as before the laws)."""
        return expected_tasks(self.task_laws, self.mean_tasks) * self.expected_duration \
            * self.delta

    @property
    def loads(self) -> np.ndarray:
        """ρ_k = λ_k E[N_k] d_k δ_k."""
        return self.rates * self.work


def pooled_model(requirements: ArrayLike, loads: ArrayLike, policy: str,
                 tasks_per_resource: float = 100.0, mean_tasks: float | np.ndarray = 1000.0,
                 duration: float | np.ndarray = 1.0, **options) -> ClusterModel:
    """A fluid scenario as a pooled cluster: one server of ``tasks_per_resource`` units of
    every resource, class-k tasks needing a_k (so a dominant task holds 1/C of the pool),
    and arrival rates giving the fluid loads ρ_k = λ_k E[N_k] d_k / C. ``loads`` (≥ 0),
    ``mean_tasks`` E[N_k] (1 to 2^53) and ``duration`` d_k (1e-100 to 1e100): one for every
    class, or one per class; ``tasks_per_resource`` C: 1 (a dominant task fits) to
    MAX_RUNNING / R (:func:`mrfq.cluster.checks.tasks_per_resource`)."""
    a = checks.requirements(requirements)
    a = a / a.max(axis=1, keepdims=True)
    C = checks.tasks_per_resource(tasks_per_resource, a.shape[1])
    K = a.shape[0]
    loads = checks.per_class(loads, K, "loads", minimum=0)
    mean = checks.per_class(mean_tasks, K, "mean_tasks", minimum=1,
                            maximum=MAX_TASKS)
    durations = checks.per_class(duration, K, "duration", MIN_DURATION, True, MAX_DURATION)
    # a duration law's mean: 1.0 but for an un-rescaled table (a tasks law has mean 1),
    # so the same floats as one number's, per class
    duration_mean = np.array([law_mean(law) for law in class_laws(
        options.get("duration_law", EXPONENTIAL), K, DURATION_LAWS, "duration_law")])
    task_laws = class_laws(options.get("tasks", GEOMETRIC), K, TASK_LAWS, "tasks")
    work = expected_tasks(task_laws, mean) * (durations * duration_mean) / C
    return ClusterModel(capacity=np.full((1, a.shape[1]), C), demand=a, policy=policy,
                        rates=loads / work,
                        mean_tasks=mean, durations=durations, **options)


def workload(model: ClusterModel, jobs: int, seed: int) -> tuple[np.ndarray, ...]:
    """``jobs`` (≥ 1) Poisson arrivals of the model's classes: (arrival times, class,
    tasks); ``seed``: 0 … 2^63 − 1."""
    jobs, seed = checks.integer(jobs, "jobs", 1), checks.seed(seed)
    rng = np.random.default_rng(seed)
    rate = model.rates.sum()
    if rate <= 0:
        raise InputError("no class has a positive arrival rate", "classes")
    times = np.cumsum(rng.exponential(1.0 / rate, jobs))
    classes = rng.choice(model.rates.size, size=jobs, p=model.rates / rate)
    m = model.mean_tasks[classes]
    laws = model.task_laws
    if all(law == FIXED for law in laws):
        tasks = np.maximum(np.rint(m), 1)
    else:
        # geometric for every job (the draws of an all-geometric run, so a geometric
        # class keeps its jobs whatever the other classes' laws), then the others'
        tasks = rng.geometric(1.0 / m)
        for k, law in enumerate(laws):
            mine = np.flatnonzero(classes == k)
            if law == FIXED:
                tasks[mine] = max(np.rint(model.mean_tasks[k]), 1)
            elif isinstance(law, SizeLaw):
                stream = seeds.stream(np.random.SeedSequence(seed), seeds.CLUSTER_TASKS + k)
                tasks[mine] = packet_counts(law.sample(stream, mine.size),
                                            float(model.mean_tasks[k]))
    return times, classes.astype(np.int64), tasks.astype(np.int64)


def duration_arrays(laws: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The duration laws as :func:`mrfq.cluster.durations.task_duration` takes them: per
    class a law code and its parameters (K × 4), and a table law's rows
    ``span[k, 0]:span[k, 1]`` of one 2 × T table (sizes; CDF values)."""
    K = len(laws)
    code = np.zeros(K, dtype=np.int64)
    par = np.zeros((K, 4))
    span = np.zeros((K, 2), dtype=np.int64)
    rows = [np.zeros((2, 0))]
    used = 0
    for k, law in enumerate(laws):
        if not isinstance(law, SizeLaw):
            code[k] = durations.D_EXPONENTIAL if law == EXPONENTIAL else durations.D_FIXED
            continue
        name = law.distribution
        if name == "hyperexponential":
            code[k], par[k, :3] = durations.D_HYPEREXPONENTIAL, law.hyperexponential_phases()
        elif name == "lognormal":
            code[k], par[k, 0] = durations.D_LOGNORMAL, law.params["sigma"]
        elif name == "pareto":
            code[k], par[k] = durations.D_PARETO, law.pareto_parameters()
        else:  # a table: empirical sizes (drawn uniformly), or a CDF
            code[k] = durations.D_EMPIRICAL if name == "empirical" else durations.D_CDF
            table = (np.vstack([law.values, np.zeros(law.values.size)])
                     if name == "empirical" else law.values)
            span[k] = used, used + table.shape[1]
            rows.append(table)
            used += table.shape[1]
    return code, par, np.hstack(rows), span


def task_durations(model: ClusterModel, job_class: ArrayLike, job_tasks: ArrayLike,
                   seed: int) -> np.ndarray:
    """Every task's duration in a run of these jobs, job after job (task i of job j at Σ_{j' < j}
    N_j' + i), as the kernel draws them (:func:`mrfq.cluster.durations.task_duration`): to look
    at the laws' draws without running the scheduler. Jobs and seed as in :func:`run_jobs`."""
    job_class, job_tasks, _ = checks.jobs(model.demand.shape[0], job_class, job_tasks)
    first = np.concatenate(([0], np.cumsum(job_tasks)[:-1])).astype(np.int64)
    return durations.task_durations(job_class, job_tasks, first, model.durations,
                                    *duration_arrays(model.duration_laws),
                                    checks.seed(seed))


@dataclass
class ClusterRun:
    """One run: per job ``finish``; per class ``gamma`` (sojourn-based, jobs arriving in the
    measurement window) with ``gamma_low``/``gamma_high`` (95%, batch means; ``gamma_high`` inf
    when the sojourn's interval reaches 0), ``jobs_mean`` (time-average jobs in system in the
    window); ``utilisation[r]`` over the window; ``samples[s, k]`` tasks running at s·sample_dt;
    ``events`` (task launches and completions); ``timeline``
    (:class:`~mrfq.cluster.timeline.Timeline`, from 0 to the last finish) when asked for."""

    model: ClusterModel
    arrival: np.ndarray
    job_class: np.ndarray
    job_tasks: np.ndarray
    finish: np.ndarray
    gamma: np.ndarray
    gamma_low: np.ndarray
    gamma_high: np.ndarray
    jobs_mean: np.ndarray
    utilisation: np.ndarray
    samples: np.ndarray
    events: int
    timeline: Timeline | None = None

    @property
    def sojourn(self) -> np.ndarray:
        """T_j = finish − arrival: every job's sojourn time (time units; γ_k's E[T_k])."""
        return self.finish - self.arrival


#: bins of a run's timeline (the kernel halves its resolution to stay within them)
TIMELINE_BINS = 1024


@dataclass
class JobsRun:
    """The kernel's output on given jobs (:func:`run_jobs`): per job ``finish`` and
    ``done_by_end`` (tasks completed by the window's end), per class ``jobs_area`` (∫ jobs
    in system dt over the window), per resource ``busy`` (∫ in use dt over the window),
    ``samples`` (tasks running per class at s·sample_dt), ``events`` (task launches and
    completions) and the ``timeline`` (None unless asked for)."""

    finish: np.ndarray
    jobs_area: np.ndarray
    busy: np.ndarray
    samples: np.ndarray
    events: int
    done_by_end: np.ndarray
    timeline: Timeline | None = None


def run_jobs(model: ClusterModel, arrival: ArrayLike, job_class: ArrayLike,
             job_tasks: ArrayLike, seed: int = 1, window: tuple[float, float] = (0.0, np.inf),
             sample_dt: float = 1.0, n_samples: int = 0, task_time: ArrayLike | None = None,
             timeline_dt: float | None = None) -> JobsRun:
    """The kernel on given jobs, see :func:`mrfq.cluster.kernel.simulate`: ``arrival``
    (finite, ≥ 0, sorted), ``job_class`` (0 … K − 1), ``job_tasks`` (≥ 1), one entry per job
    each; ``seed`` 0 … 2^63 − 1; ``window`` (start ≤ end); ``n_samples`` ≥ 0 at
    ``sample_dt`` > 0 (InputError naming the argument otherwise). ``task_time``: every task's
    duration (finite, ≥ 0), job after job (a trace); default (None or empty) drawn from the
    model's laws (:func:`duration_arrays`). ``timeline_dt``: the timeline's bin width (time
    units; it doubles as often as needed to cover the run in :data:`TIMELINE_BINS` bins); 0
    chooses it, about 1/256 of the last arrival plus a mean task duration; None: no timeline."""
    job_class, job_tasks, arrival = checks.jobs(model.demand.shape[0], job_class,
                                                job_tasks, arrival)
    times = checks.task_times(task_time, int(job_tasks.sum()))
    seed, window, sample_dt, n_samples = checks.run(seed, window, sample_dt, n_samples)
    if timeline_dt is not None and not timeline_dt >= 0:
        raise InputError(f"must be >= 0, got {timeline_dt}", "timeline_dt")
    bins = 0 if timeline_dt is None else TIMELINE_BINS
    if timeline_dt == 0:
        mean = times.mean() if times.size else float(model.expected_duration.max())
        timeline_dt = (float(arrival[-1]) + mean) / 256 if arrival.size else 1.0
    first = np.concatenate(([0], np.cumsum(job_tasks)[:-1])).astype(np.int64)
    entry = policies.get(policies.CLUSTER, model.policy)
    fluid = (policies.get(policies.FLUID, entry.realises).code
             if entry.realises and entry.code in (kernel.DRF, kernel.PF, kernel.BMF) else -1)
    # no cap: a bound no job reaches (2^62: exact as a float, and an int64)
    cap = np.where(np.isinf(model.max_parallel), 2.0**62, model.max_parallel).astype(np.int64)
    finish, area, busy, samples, events, bins_area, dt, done = executor.interruptible(
        kernel.simulate, entry.code, fluid, model.capacity, model.demand, model.weights,
        model.allowed, cap, arrival, job_class, job_tasks, model.durations,
        *duration_arrays(model.duration_laws), int(seed), int(model.slots_per_server),
        float(window[0]), float(window[1]), float(sample_dt), int(n_samples), times, first,
        float(timeline_dt or 1.0), bins)
    timeline = (Timeline.from_kernel(bins_area, dt, float(np.nanmax(finish, initial=0.0)),
                                     model.demand, model.total) if bins else None)
    return JobsRun(finish, area, busy, samples, int(events), done, timeline)


def simulate_jobs(model: ClusterModel, arrival: ArrayLike, job_class: ArrayLike,
                  job_tasks: ArrayLike, seed: int = 1,
                  window: tuple[float, float] = (0.0, np.inf), sample_dt: float = 1.0,
                  n_samples: int = 0, task_time: ArrayLike | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`run_jobs` as a tuple: (finish, jobs area, busy, samples, events)."""
    run = run_jobs(model, arrival, job_class, job_tasks, seed, window, sample_dt,
                   n_samples, task_time)
    return run.finish, run.jobs_area, run.busy, run.samples, run.events


def run_cluster(model: ClusterModel, jobs: int, seed: int = 1, warmup: float = 0.1,
                batches: int = 10, sample_dt: float = 1.0, n_samples: int = 0,
                timeline_dt: float | None = None) -> ClusterRun:
    """Simulate ``jobs`` Poisson job arrivals from an empty cluster; measure the jobs arriving
    after the first ``warmup`` fraction (in [0, 1); all of them run to completion); their γ
    intervals from ``batches`` (≥ 2) batch means. ``timeline_dt``: as in :func:`run_jobs`."""
    jobs, warmup, batches = checks.measured(jobs, warmup, batches)
    arrival, classes, tasks = workload(model, jobs, seed)
    t_warm = arrival[int(warmup * jobs)]
    t_end = arrival[-1]
    run = run_jobs(model, arrival, classes, tasks, seed, (t_warm, t_end), sample_dt,
                   n_samples, timeline_dt=timeline_dt)
    finish = run.finish
    K = model.demand.shape[0]
    gamma, low, high = np.full(K, np.nan), np.full(K, np.nan), np.full(K, np.nan)
    measured = arrival >= t_warm
    for k in range(K):
        sojourn = (finish - arrival)[measured & (classes == k)]
        if sojourn.size < 2 * batches:
            continue
        parts = np.array_split(sojourn, batches)  # γ = Σ work / Σ sojourn over the batches
        ci = lugsail_ratio_interval([model.work[k] * b.size for b in parts],
                                    [b.sum() for b in parts])
        gamma[k], low[k], high[k] = ci.estimate, max(ci.low, 0.0), ci.high
    span = t_end - t_warm
    return ClusterRun(model, arrival, classes, tasks, finish, gamma, low, high,
                      run.jobs_area / span, run.busy / span / model.total, run.samples,
                      run.events, run.timeline)
