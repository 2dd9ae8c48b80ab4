"""Cluster points: one run of the cluster simulator (SPEC §6, :mod:`mrfq.cluster`) at one
(policy, load) of a scenario with a ``[cluster]`` section — the scenario's classes as jobs
of tasks on a pooled cluster — and its summary rows (γ_k comparable with the fluid γ_k).

A record is ``{kind, policy, load, replication, classes, utilisation, events, wall_s}``
with, per class (scenario order), γ_k = E[N] d δ_k / E[T_k], its 95% batch-means interval,
the jobs measured and the time-average jobs in the system.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.cluster import pooled_model, run_cluster
from mrfq.cluster.kernel import EPS
from mrfq.cluster.metrics import (
    completion_ratio,
    jct_by_tasks,
    shares_frame,
    utilisation_frame,
)
from mrfq.cluster.model import ClusterModel, configured_laws, law_key
from mrfq.cluster.trace import Trace, load_task_events, trace_summary
from mrfq.errors import InputError
from mrfq.fluid.flowsim_stats import MIN_MEASURED_RELAXATIONS
from mrfq.fluid.method import class_warnings
from mrfq.intervals import RELAXATIONS, relaxation_flows
from mrfq.kinds.fluid_records import (  # noqa: F401 - the one-run face of fluid points
    first_replications,
    floats,
    max_replications,
    model_key_parts,
    stopping,
)
from mrfq.kinds.point import Point
from mrfq.scenario import Scenario, limits
from mrfq.scenario.cluster import (
    cluster_arrays,
    max_parallel_caps,
    per_class_values,
)
from mrfq.scenario.slots import most_running, slot_shortfall
from mrfq.sizes import SizeLaw, parse_size

#: the law that no interval warning is about (the built-in laws: light tails)
EXPONENTIAL_LAW = parse_size(None)

NAME = "cluster"
REALISATION = policies.CLUSTER
REPLICATED = False
PRIORITY = 0  # the expensive points first
#: what every class of a cluster record holds (a stored file without them was edited)
RECORD_CLASS_KEYS = ("gamma", "ci_low", "ci_high", "jobs_measured", "mean_in_progress")
#: bump when the kernel's rules or the run's estimator change what a run computes (2:
#: γ with Tin's factor and lugsail batches, :func:`mrfq.intervals.lugsail_ratio_interval`)
KERNEL_VERSION = 2


def model(scenario: Scenario, policy: str, load: float) -> ClusterModel:
    """The cluster of a scenario's point (``[cluster]``): the pool of
    :func:`pooled_model`, or the listed servers with their placement constraints
    (:func:`mrfq.scenario.cluster.cluster_arrays`) at the same fluid loads; jobs capped
    by ``max_parallel`` (:func:`mrfq.scenario.cluster.max_parallel_caps`); E[N_k] and d_k
    per class (:func:`mrfq.scenario.cluster.per_class_values`), and their laws
    (:func:`mrfq.cluster.model.configured_laws`)."""
    cfg = scenario.cluster
    caps = max_parallel_caps(cfg, scenario.class_names)
    mean_tasks = per_class_values(cfg, "mean_tasks", scenario.class_names)
    duration = per_class_values(cfg, "duration", scenario.class_names)
    laws = {key: configured_laws(cfg, scenario.class_names, key)
            for key in ("tasks", "duration_law")}
    if cfg.servers or cfg.placement:
        capacity, demand, allowed = cluster_arrays(cfg, scenario.class_names,
                                                   scenario.requirements, scenario.source)
        pooled = pooled_model(scenario.requirements, scenario.class_loads(load), policy,
                              tasks_per_resource=cfg.tasks_per_resource,
                              mean_tasks=mean_tasks, duration=duration, **laws)
        return ClusterModel(capacity=capacity, demand=demand, policy=policy,
                            rates=pooled.rates, mean_tasks=pooled.mean_tasks,
                            durations=pooled.durations, weights=scenario.weights,
                            slots_per_server=cfg.slots_per_server, allowed=allowed,
                            max_parallel=caps, **laws)
    return pooled_model(scenario.requirements, scenario.class_loads(load), policy,
                        tasks_per_resource=cfg.tasks_per_resource,
                        mean_tasks=mean_tasks, duration=duration,
                        weights=scenario.weights,
                        slots_per_server=cfg.slots_per_server, max_parallel=caps, **laws)


def check(scenario: Scenario, policy: str, load: float) -> None:
    """InputError (naming the field) if the point's cluster cannot be built."""
    model(scenario, policy, load)


def _some_server_unusable(scenario: Scenario) -> bool:
    """Whether a class with jobs cannot use some server (its placement bars it, or a task
    is larger than the server): only then does holding the usable servers differ from
    holding them all. A trace's jobs bring their own demands: assumed so."""
    cfg = scenario.cluster
    if not (cfg.servers or cfg.placement):
        return False
    if not scenario.classes:
        return True
    capacity, demand, allowed = cluster_arrays(cfg, scenario.class_names,
                                               scenario.requirements, scenario.source)
    # the kernel's fit test on an empty server (mrfq.cluster.kernel._fits)
    fits = np.all(demand[:, None, :] <= capacity + EPS * capacity, axis=2)
    loaded = np.array([c.load_share > 0 for c in scenario.classes])
    return bool(np.any(~(allowed & fits)[loaded]))


def key_parts(scenario: Scenario, point: Point) -> dict:
    """The fluid model of the point, the ``[cluster]`` section (policies aside) and the
    kernel's version."""
    # empty servers / placement / caps (the pool, no constraints) leave the key as it was
    cfg = {k: v for k, v in scenario.cluster.__dict__.items() if k != "policies" and (
        v or k not in ("servers", "placement", "trace", "max_parallel"))}
    for k in ("tasks", "duration_law"):  # as run (a size law by its key: a file's digest)
        if scenario.classes:  # (a trace has none: its jobs bring tasks and durations)
            cfg[k] = law_key(configured_laws(scenario.cluster, scenario.class_names, k))
    if scenario.classes and any(  # a size law of tasks: rates from the exact E[N]
            isinstance(law, SizeLaw)
            for law in configured_laws(scenario.cluster, scenario.class_names, "tasks")):
        cfg["task_rate"] = "rho / E[N] d delta"
    if not policies.get(policies.CLUSTER, point.policy).parameters:
        cfg.pop("slots_per_server")  # only the slot scheduler reads it
    # rules changed where they apply only, so the other points keep their keys: a held
    # job keeps only the servers it can use; BMF ranks weighted shares
    ideal = policies.named(policies.CLUSTER)
    if point.policy in (ideal.DRF, ideal.PF, ideal.BMF) and _some_server_unusable(scenario):
        cfg["hold"] = "usable servers"
    loaded = [c.load_share > 0 for c in scenario.classes]
    if point.policy == ideal.BMF and len(set(scenario.weights[loaded])) > 1:
        cfg["bmf_ranks"] = "weighted"
    return {**model_key_parts(scenario, point.load), "cluster": cfg,
            "kernel": KERNEL_VERSION}


def compute(scenario: Scenario, point: Point) -> dict:
    """The record of one cluster run (module doc)."""
    cfg = scenario.cluster
    start = time.perf_counter()
    run = run_cluster(model(scenario, point.policy, point.load), cfg.jobs, cfg.seed,
                      cfg.warmup, cfg.batches)
    measured = run.arrival >= run.arrival[int(cfg.warmup * cfg.jobs)]
    classes = [{"gamma": float(run.gamma[k]), "ci_low": float(run.gamma_low[k]),
                "ci_high": float(run.gamma_high[k]),
                "jobs_measured": int(np.sum(measured & (run.job_class == k))),
                "mean_in_progress": float(run.jobs_mean[k])}
               for k in range(len(scenario.classes))]
    return {"kind": policies.CLUSTER, "policy": point.policy, "load": point.load,
            "replication": 0, "classes": classes, "utilisation": floats(run.utilisation),
            "events": run.events, "wall_s": time.perf_counter() - start}


def prepare(chosen_policies: set[str], jobs: int = 1) -> None:
    """Compile the kernel once before the workers start (a tiny run; one kernel for every
    policy, so ``jobs`` is not needed)."""
    tiny = pooled_model([[1.0, 0.5]], [0.3], policies.defaults(policies.CLUSTER)[0],
                        tasks_per_resource=2, mean_tasks=2)
    run_cluster(tiny, 40, 1, 0.1, 2)


def interval_warnings(scenario: Scenario, load: float) -> list[str]:
    """Per class, why the point's intervals should not be trusted at face value (""
    when nothing is known against them): a heavy-tailed law of the tasks per job or of
    the task durations (:func:`mrfq.fluid.method.class_warnings`: a job's work has
    infinite variance, or third moment, when either has), the most severe of the two
    (infinite variance before infinite third moment; the tasks law first); else a run
    too short for its load (:func:`transient_warning`)."""
    found = []
    for key, quantity in (("tasks", "tasks per job"), ("duration_law", "task durations")):
        laws = [law if isinstance(law, SizeLaw) else EXPONENTIAL_LAW
                for law in configured_laws(scenario.cluster, scenario.class_names, key)]
        found.append(class_warnings(scenario, load, laws, f"cluster.{key}", unit="jobs",
                                    quantity=quantity))
    for severe in ("infinite variance", "infinite third moment"):
        for warnings in found:
            if severe in warnings[0]:
                return warnings
    return [transient_warning(scenario, load)] * len(scenario.classes)


def transient_warning(scenario: Scenario, load: float) -> str:
    """What a cluster point's interval must say when its run is too short for the load
    ("" otherwise): the warm-up (``warmup`` · ``jobs``) shorter than
    :data:`mrfq.intervals.RELAXATIONS` relaxation times of the busiest resource
    (:func:`mrfq.intervals.relaxation_flows`, in jobs of every class), or the measured
    jobs spanning fewer than :data:`mrfq.fluid.flowsim_stats.MIN_MEASURED_RELAXATIONS`.
    One resource holding one task at load 0.9 (an M/M/1 queue of jobs, γ = 1 − ρ): 1 000
    jobs gave γ +28% and 60% coverage, 5 000 jobs +6.6% and 81% (a review, 2026-11-28)."""
    cfg = scenario.cluster
    rates = model(scenario, (cfg.policies or policies.defaults(policies.CLUSTER))[0],
                  load).rates
    relaxation = relaxation_flows(scenario.class_loads(load), scenario.requirements, rates)
    warm = int(cfg.warmup * cfg.jobs)
    if warm >= RELAXATIONS * relaxation and \
            cfg.jobs - warm >= MIN_MEASURED_RELAXATIONS * relaxation:
        return ""
    return (f"unreliable interval: at load {load:.12g} a relaxation time of the busiest "
            f"resource is about {relaxation:.3g} jobs; the warm-up ({warm:,} jobs) needs "
            f"{RELAXATIONS:g} of them and the measured jobs ({cfg.jobs - warm:,}) "
            f"{MIN_MEASURED_RELAXATIONS}: the run is measured in its start-up transient, so "
            "gamma comes out high and the interval does not hold; more [cluster] jobs, or a "
            "lower load")


def summary_rows(scenario: Scenario, records: list[dict],
                 fluid_records: dict | None = None) -> list[dict]:
    """One row per class: γ and its interval, the jobs measured, E[n_k], and the
    interval's warning (:func:`interval_warnings`)."""
    rows = []
    for record in records:
        warnings = interval_warnings(scenario, record["load"])
        for traffic, c, warning in zip(scenario.classes, record["classes"], warnings,
                                       strict=True):
            name = traffic.name
            # (the interval is symmetric about γ with its lower bound clipped at 0, so the
            # upper side is the half-width; records of other versions have other keys)
            half = c["ci_high"] - c["gamma"]
            low, high = c["ci_low"], c["ci_high"]
            problem = _withheld(c, scenario.cluster.batches) if traffic.load_share > 0 else ""
            if problem:  # (the error estimate stays: h / γ ≥ 1 says how far off)
                low = high = np.nan
            rows.append({"kind": policies.CLUSTER, "policy": record["policy"],
                         "load": record["load"], "class": name, "gamma": c["gamma"],
                         "ci_low": low, "ci_high": high, "ci_problem": problem,
                         "replications": 1, "flows_measured": c["jobs_measured"],
                         "mean_in_progress": c["mean_in_progress"],
                         "error_estimate": half / c["gamma"] if c["gamma"] > 0 else np.nan,
                         "method": NAME, "ci_warning": warning})
    return rows


def _withheld(measured: dict, batches: int) -> str:
    """Why a loaded class's γ interval is withheld ("" when it is not): γ has none, the
    class having fewer than 2 measured jobs per batch; or the interval reaches 0 (its
    half-width is γ or more), so the batches hold too few of the class's jobs for the
    delta method (pooled runs of 250 jobs, Figure 2's classes at class loads 0.33, 0.083,
    0.083: 9 of 120 class intervals over seeds 1–40, classes of 28–136 measured jobs)."""
    if measured["gamma"] > 0 and measured["ci_low"] > 0:
        return ""
    jobs = f"only {measured['jobs_measured']:,} jobs of the class measured"
    if not measured["gamma"] > 0:  # (NaN: the kernel needs 2 per batch for γ)
        return f"{jobs}, fewer than 2 per batch ({batches} batches): no γ; more [cluster] jobs"
    return f"{jobs}, too few per batch for an interval (it reaches 0); more [cluster] jobs"


def size_bin_rows(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Cluster points have no per-size table (yet)."""
    return pd.DataFrame()


def load_trace(scenario: Scenario) -> tuple[Trace, np.ndarray]:
    """The jobs of a trace scenario (``[cluster] trace``) and its servers (L×2), read and
    checked before any run: InputError on a malformed row (``<file>: row n, <column>``),
    a trace without a finished task, a task larger than every server, tasks so small
    that more than MAX_RUNNING could run at once (:mod:`mrfq.scenario.limits`), or (with
    the slot scheduler) a task that fits no server's slots."""
    cfg = scenario.cluster
    trace = load_task_events(cfg.trace)  # (refuses a trace with no task to run)
    capacity = np.array([cap for cap, count, _ in cfg.servers for _ in range(count)])
    for need in trace.demand:
        if not np.any(np.all(need <= capacity + 1e-9, axis=1)):
            raise InputError(f"a task of the trace (demand {need.tolist()}) is larger "
                             "than every server", "cluster.servers", scenario.source)
    slots = policies.named(policies.CLUSTER).SLOTS
    most = most_running(capacity, trace.demand, False, cfg.slots_per_server)
    if most > limits.MAX_RUNNING and set(cfg.policies) - {slots}:  # (slots: its own sizes)
        k = int(np.argmin((trace.demand / capacity.sum(axis=0)).max(axis=1)))
        raise InputError(f"its smallest tasks (demand {trace.demand[k].tolist()}) could run "
                         f"{limits.count_text(most)} at once on the listed servers, more than "
                         f"{limits.MAX_RUNNING:,} ({limits.RUNNING_WHY})", "cluster.trace",
                         scenario.source)
    if slots in cfg.policies:
        allowed = np.ones((trace.demand.shape[0], capacity.shape[0]), dtype=bool)
        short = slot_shortfall(capacity, trace.demand, allowed, cfg.slots_per_server)
        if short:
            k, need, most = short
            raise InputError(f"with {cfg.slots_per_server} slots per largest server a task "
                             f"of the trace (demand {trace.demand[k].tolist()}) takes {need} "
                             f"slot(s) and no server holds more than {most}: raise it, or "
                             "leave slots out", "cluster.slots_per_server", scenario.source)
    return trace, capacity


def _user_names(trace: Trace) -> np.ndarray:
    """Per job, the user whose task completion ratio it counts to: the trace's user when
    the file names more than one, else its demand class ("class <k>", from 1)."""
    if trace.job_user is not None and len(set(trace.job_user.tolist())) > 1:
        return trace.job_user
    return np.array([f"class {k + 1}" for k in trace.job_class])


#: a trace run's files: the summary (one row per policy) and its other tables by name
TRACE_FILE = "trace_summary.csv"
TRACE_TABLES = {"timeline": "utilisation.csv", "shares": "shares.csv", "jct": "jct.csv",
                "jobs": "jobs.csv", "completion": "completion.csv"}


def trace_tables(scenario: Scenario, trace: Trace, capacity: np.ndarray,
                 timeline_dt: float = 0.0) -> dict[str, pd.DataFrame]:
    """One run of a trace per cluster policy (:func:`trace_summary`), as tables with a
    ``policy`` column: ``summary`` (one row per policy), ``timeline`` (utilisation per
    resource per time bin, :func:`mrfq.cluster.metrics.utilisation_frame`), ``shares``
    (per bin and demand class, :func:`~mrfq.cluster.metrics.shares_frame`), ``jct`` (by
    job size, :func:`~mrfq.cluster.metrics.jct_by_tasks`), ``jobs`` (per job: class,
    user, tasks, arrival, finish, jct) and ``completion`` (task completion ratio per
    user at the last arrival, :func:`~mrfq.cluster.metrics.completion_ratio`). Every
    policy's timeline has the same bins: width ``timeline_dt`` (0: chosen, about 1/256
    of the last arrival plus the mean task time), doubled until the longest run fits."""
    cfg = scenario.cluster
    users = _user_names(trace)
    labels = [f"class {k + 1}" for k in range(trace.demand.shape[0])]
    if not timeline_dt:
        timeline_dt = (float(trace.arrival[-1]) + float(trace.task_time.mean())) / 256
    rows, parts = [], {name: [] for name in ("timeline", "shares", "jct", "jobs",
                                             "completion")}
    runs = []
    for policy in cfg.policies:
        start = time.perf_counter()
        out = trace_summary(trace, capacity, policy, cfg.batches, timeline_dt=timeline_dt,
                            slots_per_server=cfg.slots_per_server,
                            max_parallel=cfg.max_parallel or None)  # one cap, or none
        rows.append({"kind": policies.CLUSTER, "policy": policy,
                     "trace": Path(cfg.trace).name, "servers": len(capacity),
                     "jobs": out["jobs"], "tasks": out["tasks"],
                     "dropped_tasks": trace.dropped, "events": out["events"],
                     **{f"utilisation_{name}": float(u) for name, u in
                        zip(scenario.resources, out["utilisation"], strict=True)},
                     **{key: out[key] for key in ("jct_mean", "jct_ci_low", "jct_ci_high",
                                                  "jct_p95", "makespan")},
                     "wall_s": time.perf_counter() - start})
        runs.append((out["run"], out["end"]))
    width = max(run.timeline.dt for run, _ in runs)  # the runs' common bins
    for run, end in runs:
        timeline = run.timeline.coarsen(width)
        jct = run.finish - trace.arrival
        parts["timeline"].append(utilisation_frame(timeline, scenario.resources))
        parts["shares"].append(shares_frame(timeline, scenario.resources, labels))
        parts["jct"].append(jct_by_tasks(jct, trace.job_tasks))
        parts["jobs"].append(pd.DataFrame({
            "job": trace.job_id, "class": np.asarray(labels)[trace.job_class],
            "user": users, "tasks": trace.job_tasks, "arrival": trace.arrival,
            "finish": run.finish, "jct": jct}))
        parts["completion"].append(completion_ratio(users, trace.arrival, trace.job_tasks,
                                                    run.done_by_end, end))
    tables = {"summary": pd.DataFrame(rows)}
    for name, frames in parts.items():
        tables[name] = pd.concat([f.assign(policy=p) for f, p in
                                  zip(frames, cfg.policies, strict=True)],
                                 ignore_index=True)
        tables[name] = tables[name][["policy", *frames[0].columns]]
    return tables
