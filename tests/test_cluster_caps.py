"""Per-job parallelism caps in the cluster simulator (``max_parallel``, SPEC §6
"Granularity effects"): the kernel against its slow twin with caps for every scheduler,
a job alone against its exact completion time (fixed durations: ⌈N/c⌉ d; exponential:
d Σ_{m=1}^{N} 1/min(c, m)), and the one-line errors of a bad cap."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import assert_cluster_refuses
from naive_cluster import naive_cluster

from mrfq import policies
from mrfq.cluster import ClusterModel, workload
from mrfq.cluster.model import run_jobs, simulate_jobs
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

CLUSTER = policies.entries(policies.CLUSTER)
NAME = policies.named(policies.CLUSTER)
CAPS = [2.0, 1.0, 3.0]


def _model(policy, capacity, demand, caps, allowed=None):
    K = len(demand)
    return ClusterModel(capacity=capacity, demand=demand, policy=policy,
                        rates=[0.6, 0.3, 0.3][:K], mean_tasks=[6.0] * K,
                        durations=[1.0, 0.5, 2.0][:K], weights=[1.0, 2.0, 1.0][:K],
                        slots_per_server=6, allowed=allowed, max_parallel=caps)


def _most_running(log, n_jobs):
    """Per job, the most of its tasks running at one instant (from the twin's task log;
    a task ending at t frees its place before one starting at t)."""
    most = [0] * n_jobs
    for j in range(n_jobs):
        edges = sorted([(end, -1) for job, _, _, end in log if job == j]
                       + [(start, 1) for job, _, start, _ in log if job == j])
        now = 0
        for _, step in edges:
            now += step
            most[j] = max(most[j], now)
    return most


CASES = {
    "pooled": ([[6.0, 6.0]], [[0.6, 0.3], [1.0, 0.6], [1.0, 1.0]], None),
    "servers": ([[2.0, 12.0], [12.0, 2.0], [4.0, 4.0], [6.0, 6.0]],
                [[0.2, 1.0], [1.0, 0.5], [2.0, 2.0]],
                [[True, False, True, True], [False, True, True, True],
                 [True, True, False, True]]),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_kernel_matches_the_twin_with_caps(entry, case):
    capacity, demand, allowed = CASES[case]
    model = _model(entry.name, capacity, demand, CAPS, allowed)
    arrival, classes, tasks = workload(model, 40, 2)
    finish, _, _, _, events = simulate_jobs(model, arrival, classes, tasks, 2)
    log = []
    twin, twin_events = naive_cluster(entry.name, model.capacity, model.demand,
                                      model.weights, arrival, classes, tasks,
                                      model.durations, True, 2, 6, allowed, None, log,
                                      max_parallel=CAPS)
    assert events == twin_events
    np.testing.assert_array_equal(finish, np.array(twin))
    # the caps hold and bind: some job of every class runs exactly its cap at once
    most = np.array(_most_running(log, len(arrival)))
    assert np.all(most <= np.array(CAPS)[classes])
    for k, cap in enumerate(CAPS):
        assert np.any(most[classes == k] == cap), (k, cap)
    uncapped = simulate_jobs(_model(entry.name, capacity, demand, None, allowed), arrival,
                             classes, tasks, 2)[0]
    assert not np.array_equal(finish, uncapped)


def test_a_cap_no_job_reaches_changes_nothing():
    """Caps of at least every job's tasks give the uncapped run bit for bit (so does
    the default), for every scheduler."""
    capacity, demand, allowed = CASES["servers"]
    for entry in CLUSTER:
        model = _model(entry.name, capacity, demand, None, allowed)
        jobs = workload(model, 40, 3)
        free = run_jobs(model, *jobs, seed=3, n_samples=50, timeline_dt=0.0)
        big = run_jobs(_model(entry.name, capacity, demand, [jobs[2].max()] * 3, allowed),
                       *jobs, seed=3, n_samples=50, timeline_dt=0.0)
        np.testing.assert_array_equal(free.finish, big.finish)
        np.testing.assert_array_equal(free.samples, big.samples)
        np.testing.assert_array_equal(free.timeline.area, big.timeline.area)


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
@pytest.mark.parametrize("n,cap", [(10, 3), (12, 4), (7, 1), (5, 8)])
def test_fixed_tasks_alone_take_ceil_n_over_c_rounds(entry, n, cap):
    """A job of N tasks of fixed duration d alone on a pool of 100 tasks with cap c runs
    c at a time: it takes ⌈N/c⌉ d exactly, whatever the scheduler."""
    model = ClusterModel(capacity=[[100.0, 100.0]], demand=[[1.0, 0.5]], policy=entry.name,
                         durations=[1.5], duration_law="fixed", max_parallel=cap)
    finish = simulate_jobs(model, [2.0], [0], [n])[0]
    assert finish[0] == 2.0 + math.ceil(n / cap) * 1.5


def _alone_moments(n, cap, d):
    """Mean and variance of the completion time of a job of n exponential(d) tasks
    with cap c, alone: with m tasks unfinished, min(c, m) run, so the next ends after
    an exponential of mean d / min(c, m) (memoryless), and the n stages add up."""
    stages = [d / min(cap, m) for m in range(1, n + 1)]
    return sum(stages), sum(s * s for s in stages)


@pytest.mark.parametrize("policy", [NAME.DRF, NAME.FIFO, NAME.TSF])
@pytest.mark.parametrize("n,cap", [(20, 4), (20, 1), (6, 10)])
def test_exponential_tasks_alone_match_the_order_statistics(policy, n, cap):
    """20 000 jobs, each alone (arrivals 10^4 apart), N tasks of exponential durations of
    mean d = 2, cap c on a pool of 100: the mean sojourn is d Σ_m 1/min(c, m) = d ((N −
    c)/c + H_c) for N ≥ c, within 4 standard errors — and the standard error is under
    0.5% of it, so the check is tight."""
    jobs, d = 20_000, 2.0
    model = ClusterModel(capacity=[[100.0, 100.0]], demand=[[1.0, 1.0]], policy=policy,
                         durations=[d], max_parallel=cap)
    arrival = np.arange(jobs) * 1e4
    finish = simulate_jobs(model, arrival, np.zeros(jobs, np.int64),
                           np.full(jobs, n), seed=7)[0]
    sojourn = finish - arrival
    assert sojourn.max() < 1e4  # every job was alone
    mean, var = _alone_moments(n, cap, d)
    if n >= cap:
        assert mean == pytest.approx(d * ((n - cap) / cap + sum(1 / i for i in
                                                                 range(1, cap + 1))))
    se = math.sqrt(var / jobs)
    assert se < 0.005 * mean
    assert abs(sojourn.mean() - mean) < 4 * se, (sojourn.mean(), mean, se)
    assert sojourn.var() == pytest.approx(var, rel=0.05)


def test_the_model_checks_its_caps():
    base = dict(capacity=[[4.0, 4.0]], demand=[[1.0, 1.0], [2.0, 1.0]], policy=NAME.DRF)
    assert ClusterModel(**base).max_parallel.tolist() == [np.inf, np.inf]
    assert ClusterModel(**base, max_parallel=3).max_parallel.tolist() == [3.0, 3.0]
    assert ClusterModel(**base, max_parallel=[np.inf, 2]).max_parallel.tolist() == [
        np.inf, 2.0]
    for bad in (0, 2.5, [1, 2, 3], [1, np.nan], -1):
        with pytest.raises(InputError, match="max_parallel: must be integers >= 1"):
            ClusterModel(**base, max_parallel=bad)


def _raw(**cluster):
    return {"resources": ["cpu", "mem"], "classes": [
        {"name": "a", "requirements": [1.0, 0.5], "load_share": 1},
        {"name": "b", "requirements": [0.2, 1.0], "load_share": 1}],
        "load": {"values": [0.5]},
        "cluster": {"policies": [NAME.DRF], "tasks_per_resource": 20, "mean_tasks": 20,
                    "jobs": 400, **cluster}}


def test_scenario_caps_every_class_or_the_named_ones_and_round_trips():
    from mrfq.kinds import cluster as kind  # the kind sits above the scenario layer

    for cluster, caps in (({"max_parallel": 4}, [4, 4]),
                          ({"max_parallel": {"b": 3}}, [np.inf, 3]),
                          ({"max_parallel": {"a": 2.0, "b": 5}}, [2, 5]),
                          ({"max_parallel": {"b": 2}, "servers": [[4, 4], [8, 2]],
                            "placement": {"a": [0]}}, [np.inf, 2]),
                          ({}, [np.inf, np.inf])):
        scenario = scenario_from_dict(_raw(**cluster), "s.toml")
        assert scenario_from_dict(scenario.to_dict()).cluster == scenario.cluster
        assert kind.model(scenario, NAME.DRF, 0.5).max_parallel.tolist() == caps
    # no cap: the point's key is what it was before caps existed
    plain = scenario_from_dict(_raw(), "s.toml")
    assert "max_parallel" not in plain.to_dict()["cluster"]
    assert "max_parallel" not in kind.key_parts(plain, _Point())["cluster"]
    capped = scenario_from_dict(_raw(max_parallel=4), "s.toml")
    assert kind.key_parts(capped, _Point())["cluster"]["max_parallel"] == 4


class _Point:
    policy, load = NAME.DRF, 0.5


@pytest.mark.parametrize("value,field,problem", [
    (0, "cluster.max_parallel", "must be >= 1, got 0"),
    (2.5, "cluster.max_parallel", "must be an integer, got 2.5"),
    ("four", "cluster.max_parallel", "must be an integer >= 1 (every class) or a table"),
    ([2, 3], "cluster.max_parallel", "must be an integer >= 1 (every class) or a table"),
    ({"b": 0}, "cluster.max_parallel.b", "must be >= 1, got 0"),
    ({"a": 1.5}, "cluster.max_parallel.a", "must be an integer, got 1.5"),
    ({"zz": 2}, "cluster.max_parallel.zz", "unknown key (known keys: a, b)"),
])
def test_a_bad_cap_names_its_field(value, field, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(max_parallel=value), "s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: {problem}"), str(info.value)


BAD = {"zero": ("max_parallel = 0\n", "cluster.max_parallel: must be >= 1, got 0"),
       "fraction": ("max_parallel = 2.5\n",
                    "cluster.max_parallel: must be an integer, got 2.5"),
       "class": ("[cluster.max_parallel]\nzz = 2\n",
                 "cluster.max_parallel.zz: unknown key (known keys: a)")}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_cap_is_one_line_exit_2_and_nothing_written(tmp_path, case):
    text, message = BAD[case]
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "mem"]\n[[classes]]\nname = "a"\n'
                    'requirements = [1, 0.5]\nload_share = 1\n[cluster]\n' + text)
    assert_cluster_refuses(path, f"error: {path}: {message}")


TRACE_SCENARIO = """resources = ["cpu", "memory"]
[cluster]
trace = "{trace}"
policies = ["drfh-best-fit", "tsf"]
batches = 2
servers = [{{ capacity = [0.5, 0.5], count = 2 }}, [1.0, 0.25]]
"""


def test_a_trace_takes_one_cap_for_every_job(tmp_path):
    """The hand-made trace (tests/test_cluster_trace_scenario.py): jobs of tasks (60 s, 80
    s), (5.5 s), (10 s), each starting at once, JCT 80, 5.5, 10 s. With max_parallel = 1
    the two-task job runs its tasks one after the other: 140 s. A table of class names
    is refused (a trace's classes are its distinct demands)."""
    from click.testing import CliRunner

    from mrfq.cli import main

    trace = Path(__file__).resolve().parent / "data" / "task_events_small.csv"
    path = tmp_path / "s.toml"
    path.write_text(TRACE_SCENARIO.format(trace=trace) + "max_parallel = 1\n")
    result = CliRunner().invoke(main, ["cluster", str(path), "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "r" / "trace_summary.csv")
    assert table["jct_mean"].tolist() == pytest.approx([(140 + 5.5 + 10) / 3] * 2)
    path.write_text(TRACE_SCENARIO.format(trace=trace) + "[cluster.max_parallel]\nx = 1\n")
    result = CliRunner().invoke(main, ["cluster", str(path), "-o", str(tmp_path / "q")])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: cluster.max_parallel: names scenario classes; a trace's classes "
        "are its distinct demands (one number caps every job)"]
    assert not (tmp_path / "q").exists()


def test_validation_names_the_caps_as_a_known_limitation_of_cluster_points_only():
    """The fluid model has no caps: a capped scenario's failing cluster points say so;
    a packet point of the same policy name (pf) is not touched."""
    from mrfq.validation import known_limitations, validate_summary

    capped = scenario_from_dict(_raw(max_parallel=2, policies=["pf", "drf"]), "s.toml")
    found = known_limitations(capped)
    assert set(found) == {f"cluster:{name}" for name in capped.cluster.policies}
    assert "max_parallel" in found["cluster:pf"]
    assert known_limitations(scenario_from_dict(_raw(), "s.toml")) == {}
    row = {"load": 0.5, "class": "a", "gamma": 0.1, "ci_low": 0.09, "ci_high": 0.11}
    summary = pd.DataFrame([
        {"kind": "fluid", "policy": "pf", "load": 0.5, "class": "a", "gamma": 0.7,
         "ci_low": 0.7, "ci_high": 0.7, "method": "markov"},
        {"kind": "cluster", "policy": "pf", **row}, {"kind": "packet", "policy": "pf", **row}])
    table = validate_summary(summary, 0.05, found).set_index("kind")
    assert table.loc["cluster", "verdict"] == "outside CI and tolerance; known limitation"
    assert not table.loc["cluster", "passed"]
    assert table.loc["packet", "known_limitation"] == ""
