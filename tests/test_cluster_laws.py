"""``[cluster] tasks`` and ``duration_law`` beyond the built-in laws: any flow-size law of
:mod:`mrfq.sizes` (one for every class, or a table per class), so a job's number of tasks
and a task's duration can be heavy-tailed, as in real clusters.

Checked against theory: the number of tasks is a flow's packet count of the law
(N = 1 + ⌊x / θ⌋, P(N ≤ n) = F(nθ)); jobs alone on a large pool take the longest of
their tasks, E[T] = ∫ 1 − F(t / d)^N dt; the built-in laws in disguise draw exactly the
built-in numbers; a class keeps its draws whatever the others' laws; the kernel equals
the slow twin; validation names the law as a known limitation; a heavy tail warns; bad
input is one line naming its field."""

import dataclasses
import math

import numpy as np
import pytest
from conftest import assert_cluster_refuses, assert_kernel_matches_twin
from scipy import integrate, stats

from mrfq import policies
from mrfq.cluster import pooled_model, workload
from mrfq.cluster.model import ClusterModel, run_jobs, task_durations
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict
from mrfq.sizes import parse_size
from mrfq.validation import known_limitations

NAME = policies.named(policies.CLUSTER)
CLUSTER = policies.entries(policies.CLUSTER)
LOGNORMAL = {"distribution": "lognormal", "sigma": 1.0}


def _raw(**cluster):
    return {"resources": ["cpu", "mem"],
            "classes": [{"name": "a", "requirements": [1.0, 0.4], "load_share": 1},
                        {"name": "b", "requirements": [0.3, 1.0], "load_share": 1}],
            "load": {"values": [0.6]},
            "cluster": {"policies": [NAME.DRF], "tasks_per_resource": 6, "jobs": 400,
                        **cluster}}


class _Point:
    policy, load = NAME.DRF, 0.6


def _model(**laws):
    return pooled_model([[1.0, 0.4], [0.3, 1.0]], [0.3, 0.3], NAME.DRF,
                        tasks_per_resource=8, mean_tasks=[5.0, 9.0], duration=[1.0, 2.0],
                        **laws)


def test_the_number_of_tasks_is_a_flows_packet_count_of_the_law():
    """N = 1 + ⌊x / θ⌋ (θ = −ln(1 − 1/m)), so P(N ≤ n) = P(x < nθ) = F(nθ): the
    empirical law of 40 000 jobs' N against F within 4 standard errors at every n, and
    E[N] within 4 standard errors of m (the O(1/m) term is ~1e-4 at m = 50)."""
    law = parse_size(LOGNORMAL)
    model = pooled_model([[1.0, 0.5]], [0.5], NAME.DRF, tasks_per_resource=100,
                         mean_tasks=50.0, tasks=law)
    _, _, tasks = workload(model, 40_000, 3)
    theta = -math.log1p(-1 / 50)
    for n in (5, 20, 50, 100, 300):
        p = float(law.cdf(n * theta))
        se = math.sqrt(p * (1 - p) / tasks.size)
        assert abs(np.mean(tasks <= n) - p) < 4 * se, n
    se = tasks.std() / math.sqrt(tasks.size)
    assert abs(tasks.mean() - 50.0) < 4 * se
    assert se < 0.5  # the check has teeth: a 1% bias in E[N] is beyond it


@pytest.mark.parametrize("spec", [LOGNORMAL,
                                  {"distribution": "pareto", "shape": 2.5, "max": 30.0},
                                  {"distribution": "hyperexponential", "scv": 4.0}])
def test_a_job_alone_takes_its_longest_task(spec):
    """Jobs of N = 4 fixed tasks on a pool far larger than the load needs (no task ever
    waits): T = max of 4 durations d x, E[T] = ∫_0^∞ 1 − F(t / d)^4 dt (the law's own
    CDF, integrated by scipy). 20 000 jobs: the mean within 4 standard errors, and the
    standard error below 1.5% of E[T]."""
    law = parse_size(spec)
    d = 2.0
    model = pooled_model([[1.0, 0.5]], [0.02], NAME.DRF, tasks_per_resource=1000,
                         mean_tasks=4.0, duration=d, tasks="fixed", duration_law=law)
    arrival, classes, tasks = workload(model, 20_000, 7)
    run = run_jobs(model, arrival, classes, tasks, seed=7)
    sojourn = run.finish - arrival
    exact, _ = integrate.quad(lambda t: 1 - float(law.cdf(t / d)) ** 4, 0, np.inf,
                              limit=400)
    se = sojourn.std() / math.sqrt(sojourn.size)
    assert abs(sojourn.mean() - exact) < 4 * se, (sojourn.mean(), exact, se)
    assert se < 0.015 * exact


def test_built_in_laws_in_disguise_draw_the_built_in_numbers():
    """An exponential size law is the exponential duration law and the geometric task
    law; a deterministic one is "fixed": same models, same runs, bit for bit."""
    exponential, deterministic = parse_size(None), parse_size({"distribution":
                                                               "deterministic"})
    for built_in, disguised in (({"tasks": "geometric", "duration_law": "exponential"},
                                 {"tasks": exponential, "duration_law": exponential}),
                                ({"tasks": "fixed", "duration_law": "fixed"},
                                 {"tasks": deterministic, "duration_law": deterministic})):
        one, other = _model(**built_in), _model(**disguised)
        assert one.task_laws == other.task_laws
        assert one.duration_laws == other.duration_laws
        jobs = workload(one, 300, 2)
        assert all(np.array_equal(x, y) for x, y in zip(jobs, workload(other, 300, 2),
                                                        strict=True))
        np.testing.assert_array_equal(run_jobs(one, *jobs, seed=2).finish,
                                      run_jobs(other, *jobs, seed=2).finish)


def test_a_class_keeps_its_draws_whatever_the_others_laws():
    """Class b (geometric, exponential) has the same jobs and task durations when class a
    takes a lognormal task count and fixed durations (durations are a hash of (seed,
    job, task) through the class's own law); ``task_durations`` gives the durations the
    kernel runs with (a run given them is the same run). At the same job rates: at the same
    loads class a's rate follows its law's exact E[N] (mrfq.counts), class b's does not."""
    plain = _model()
    mixed = _model(tasks=[parse_size(LOGNORMAL), "geometric"],
                   duration_law=["fixed", "exponential"])
    assert mixed.rates[1] == plain.rates[1] and mixed.rates[0] != plain.rates[0]
    np.testing.assert_allclose(mixed.loads, plain.loads, rtol=1e-15)
    mixed = dataclasses.replace(mixed, rates=plain.rates)
    arrival, classes, tasks = workload(plain, 500, 4)
    arrival2, classes2, tasks2 = workload(mixed, 500, 4)
    assert np.array_equal(arrival, arrival2) and np.array_equal(classes, classes2)
    assert np.array_equal(tasks[classes == 1], tasks2[classes == 1])
    assert not np.array_equal(tasks[classes == 0], tasks2[classes == 0])
    for model in (plain, mixed):
        drawn = task_durations(model, classes, tasks, 4)
        np.testing.assert_array_equal(run_jobs(model, arrival, classes, tasks, 4).finish,
                                      run_jobs(model, arrival, classes, tasks, 4,
                                               task_time=drawn).finish)
    of_b = np.repeat(classes, tasks) == 1
    drawn, mixed_drawn = (task_durations(m, classes, tasks, 4) for m in (plain, mixed))
    np.testing.assert_array_equal(mixed_drawn[of_b], drawn[of_b])
    assert np.all(mixed_drawn[~of_b] == 1.0)  # class a: fixed, d = 1


#: a CDF table with an atom at its first size (F_0 = 0.3) and a flat segment (no mass
#: between sizes 2 and 3)
ATOM_AND_GAP = [[1.0, 0.3], [2.0, 0.5], [3.0, 0.5], [5.0, 1.0]]


def _table_laws(tmp_path):
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("size\n1\n2\n2\n7\n")
    return [parse_size({"distribution": "empirical", "file": str(sizes)}),
            parse_size({"distribution": "cdf", "points": [[0.5, 0.0], [1.0, 0.6],
                                                          [4.0, 1.0]], "rescale": False}),
            parse_size({"distribution": "cdf", "points": ATOM_AND_GAP, "rescale": False})]


SIZE_LAWS = [LOGNORMAL, {"distribution": "hyperexponential", "scv": 5.0},
             {"distribution": "pareto", "shape": 1.5},
             {"distribution": "pareto", "shape": 2.2, "max": 40.0},
             {"distribution": "cdf", "workload": "websearch"}]


@pytest.mark.parametrize("spec", SIZE_LAWS, ids=lambda s: "-".join(map(str, s.values())))
def test_durations_follow_the_law(spec):
    """50 000 task durations drawn by the kernel's hash through a law, against the law's
    own CDF (:meth:`mrfq.sizes.SizeLaw.cdf`): Kolmogorov–Smirnov distance below its 0.1%
    critical value 1.95/√n; the same draws read as a slightly other law (every duration
    ×1.05) are beyond it, so the check can fail."""
    law = parse_size(spec)
    model = pooled_model([[1.0, 0.5]], [0.5], NAME.DRF, tasks_per_resource=10,
                         mean_tasks=50.0, duration=3.0, tasks="fixed", duration_law=law)
    drawn = task_durations(model, np.zeros(1000, np.int64), np.full(1000, 50), 11) / 3.0
    n = drawn.size
    for scale, fits in ((1.0, True), (1.05, False)):
        distance = stats.kstest(drawn * scale, law.cdf).statistic
        assert (distance < 1.95 / math.sqrt(n)) == fits, (scale, distance)


def test_a_cdf_table_draws_as_its_inverse(tmp_path):
    """The kernel's bisection against :func:`mrfq.workloads.quantile` (searchsorted) on
    the same uniforms, for a table with an atom at its first size and a flat segment:
    equal bit for bit; 30% of the draws at size 1, none strictly between 2 and 3."""
    from mrfq.cluster.durations import uniform
    from mrfq.workloads import quantile

    law = _table_laws(tmp_path)[2]
    model = pooled_model([[1.0]], [0.5], NAME.DRF, tasks_per_resource=10, mean_tasks=50.0,
                         tasks="fixed", duration_law=law)
    jobs = np.zeros(400, np.int64), np.full(400, 50)
    drawn = task_durations(model, *jobs, 9)
    u = np.array([uniform(9, j, i) for j in range(400) for i in range(50)])
    np.testing.assert_array_equal(drawn, quantile(law.values[0], law.values[1], u))
    share = np.mean(drawn == 1.0)
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / drawn.size)
    assert not np.any((drawn > 2.0) & (drawn < 3.0))


def test_table_laws_draw_their_rows(tmp_path):
    """Empirical: each of the file's rows (sizes 1, 2, 2, 7 over their mean 3) a quarter
    of the time; CDF table (sizes as given): 60% at most 1, 30% at most 0.75 (linear
    between its points); and each law's mean. 40 000 draws, within 4 standard
    errors."""
    empirical, table, _ = _table_laws(tmp_path)
    jobs = np.zeros(800, np.int64), np.full(800, 50)
    for law, checks in ((empirical, [(np.isclose, 1 / 3, 0.25), (np.isclose, 2 / 3, 0.5),
                                     (np.isclose, 7 / 3, 0.25)]),
                        (table, [(np.less_equal, 1.0, 0.6), (np.less_equal, 0.75, 0.3)])):
        model = pooled_model([[1.0]], [0.5], NAME.DRF, tasks_per_resource=10,
                             mean_tasks=50.0, tasks="fixed", duration_law=law)
        drawn = task_durations(model, *jobs, 5)
        for test, value, p in checks:
            share = np.mean(test(drawn, value))
            assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / drawn.size), (value, share)
        se = drawn.std() / math.sqrt(drawn.size)
        assert abs(drawn.mean() - law.mean) < 4 * se


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_kernel_matches_the_twin_with_per_class_laws(entry, tmp_path):
    """Every law, two classes at a time: the twin draws each class's durations from
    its law's definition (tests/naive_cluster.draw) with its own hash."""
    laws = [parse_size(spec) for spec in SIZE_LAWS] + _table_laws(tmp_path)
    pairs = [["fixed", "exponential"], *zip(laws[::2], laws[1::2], strict=True)]
    for durations in pairs:
        model = pooled_model([[1.0, 0.4], [0.3, 1.0]], [0.4, 0.4], entry.name,
                             tasks_per_resource=5, mean_tasks=[3.0, 4.0],
                             duration=[1.0, 0.5], slots_per_server=3,
                             tasks=[parse_size({"distribution": "pareto", "shape": 1.5}),
                                    "geometric"], duration_law=list(durations))
        assert_kernel_matches_twin(entry.name, model, 5, [
            law == "exponential" if isinstance(law, str) else law for law in durations])


def test_a_duration_law_mean_enters_the_fluid_load_and_tasks_keep_mean_one():
    """An un-rescaled duration table of mean 2 doubles the mean duration: the rates halve
    so that ρ_k stays the scenario's load. A tasks law keeps mean 1 (E[N] is
    mean_tasks): an un-rescaled table is refused, from Python and from a file."""
    points = [[1.0, 0.0], [2.0, 0.5], [3.0, 1.0]]  # sizes 1–3, mean 2
    law = parse_size({"distribution": "cdf", "points": points, "rescale": False})
    assert law.mean == pytest.approx(2.0)
    base, model = _model(), _model(duration_law=law)
    np.testing.assert_allclose(model.rates, base.rates / 2, rtol=1e-12)
    np.testing.assert_allclose(model.loads, base.loads, rtol=1e-12)
    with pytest.raises(InputError, match="tasks.rescale: a tasks law keeps mean 1"):
        _model(tasks=law)
    with pytest.raises(InputError, match=r"tasks\[1\].rescale: a tasks law keeps mean 1"):
        _model(tasks=["geometric", law])
    # every other law has mean 1, up to rounding (websearch's is 0.9999999999999999)
    for spec in ({"distribution": "cdf", "workload": "websearch"},
                 {"distribution": "pareto", "shape": 2.4}):
        assert _model(tasks=parse_size(spec)).task_laws[0].distribution == spec[
            "distribution"]
    spec = {"distribution": "cdf", "points": points, "rescale": False}
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(tasks={"b": spec}), "s.toml")
    assert str(info.value).startswith("s.toml: cluster.tasks.b.rescale: a tasks law keeps")


def test_python_takes_tables_names_in_any_case_and_none():
    model = _model(tasks={"distribution": "lognormal", "sigma": 1.0},
                   duration_law=["Fixed", None])
    assert [law.distribution for law in model.task_laws] == ["lognormal"] * 2
    assert model.duration_laws == ("fixed", "exponential")


def test_scenario_laws_reach_the_model_round_trip_and_key():
    from mrfq.kinds import cluster as kind

    scenario = scenario_from_dict(_raw(duration_law=LOGNORMAL, tasks={"b": "fixed"}),
                                  "s.toml")
    model = kind.model(scenario, NAME.DRF, 0.6)
    assert model.task_laws == ("geometric", "fixed")
    assert [law.distribution for law in model.duration_laws] == ["lognormal"] * 2
    np.testing.assert_allclose(model.loads, scenario.class_loads(0.6), rtol=1e-12)
    again = scenario_from_dict(scenario.to_dict())
    assert again.cluster == scenario.cluster
    assert scenario.to_dict()["cluster"]["duration_law"] == LOGNORMAL
    key = kind.key_parts(scenario, _Point())["cluster"]
    assert key["duration_law"] == {"distribution": "lognormal", "sigma": 1.0}
    # the default section keys as before: the law names themselves
    plain = kind.key_parts(scenario_from_dict(_raw(), "s.toml"), _Point())["cluster"]
    assert (plain["tasks"], plain["duration_law"]) == ("geometric", "exponential")


def test_validation_names_the_task_laws_as_known_limitations():
    """The tasks law against the class's flow-size law (geometric ↔ exponential, fixed
    ↔ deterministic, or the same law), and any size law of the durations."""
    def found(classes_size=None, **cluster):
        raw = _raw(**cluster)
        for c in raw["classes"]:
            if classes_size:
                c["size"] = classes_size
        return known_limitations(scenario_from_dict(raw, "s.toml")).get(
            f"cluster:{NAME.DRF}", "")

    assert found() == ""
    assert found({"distribution": "deterministic"}, tasks="fixed") == ""
    assert found(LOGNORMAL, tasks=LOGNORMAL) == ""
    assert found(LOGNORMAL, tasks={"a": LOGNORMAL, "b": LOGNORMAL}) == ""
    for text in (found(tasks="fixed"), found(tasks={"b": LOGNORMAL}), found(LOGNORMAL)):
        assert text.startswith("a job's number of tasks ([cluster] tasks) does not follow")
        assert "task durations" not in text
    text = found(duration_law={"b": LOGNORMAL})
    assert text.startswith("task durations follow a size law")
    both = found(tasks="fixed", duration_law=LOGNORMAL, max_parallel=3)
    assert both.count("; ") == 2 and both.startswith("the scenario caps the tasks")


def test_validation_reads_the_laws_as_run(tmp_path):
    """A built-in law in disguise is not flagged (it is the built-in law); one file named
    by two paths is one law; the point keys of the disguised laws are the built-ins'."""
    from mrfq.kinds import cluster as kind

    exponential = {"distribution": "exponential"}
    for cluster in ({"duration_law": exponential}, {"tasks": exponential},
                    {"duration_law": {"distribution": "deterministic"}},
                    {"tasks": {"a": "geometric"}}):
        scenario = scenario_from_dict(_raw(**cluster), "s.toml")
        assert known_limitations(scenario) == {}, cluster
        plain = scenario_from_dict(_raw(), "s.toml")
        key = kind.key_parts(scenario, _Point())["cluster"]
        if "deterministic" not in str(cluster):
            assert (key["tasks"], key["duration_law"]) == ("geometric", "exponential")
            assert kind.key_parts(plain, _Point()) == kind.key_parts(scenario, _Point())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "sizes.csv").write_text("1\n2\n5\n")
    raw = _raw(tasks={"distribution": "empirical", "file": str(tmp_path / "sub" / "sizes.csv")})
    for c in raw["classes"]:  # the same file, relative to the scenario's folder
        c["size"] = {"distribution": "empirical", "file": "../sub/sizes.csv"}
    (tmp_path / "dir").mkdir()
    scenario = scenario_from_dict(raw, str(tmp_path / "dir" / "s.toml"))
    assert known_limitations(scenario) == {}


def test_a_stored_scenario_reads_back_its_laws_from_anywhere(tmp_path, monkeypatch):
    """A CDF law given by its points, and a file law named relative to the scenario's
    folder: the stored scenario (what a results directory keeps) reads back the same
    laws from another working directory."""
    (tmp_path / "sizes.csv").write_text("1\n2\n5\n")
    monkeypatch.chdir(tmp_path)
    raw = _raw(tasks={"distribution": "empirical", "file": "sizes.csv"},
               duration_law={"distribution": "cdf", "points": ATOM_AND_GAP})
    scenario = scenario_from_dict(raw, "s.toml")
    stored = scenario.to_dict()
    assert stored["cluster"]["duration_law"]["points"] == ATOM_AND_GAP
    monkeypatch.chdir(tmp_path.parent)
    again = scenario_from_dict(stored)
    assert again.cluster == scenario.cluster


def test_heavy_tailed_task_laws_warn():
    from mrfq.kinds import cluster as kind

    plain = scenario_from_dict(_raw(), "s.toml")
    heavy = scenario_from_dict(_raw(tasks={"b": {"distribution": "pareto", "shape": 1.8}}),
                               "s.toml")
    warnings = kind.interval_warnings(heavy, 0.6)
    assert len(warnings) == 2 and warnings[0] == warnings[1]
    assert "infinite variance" in warnings[0] and "class b (cluster.tasks)" in warnings[0]
    assert "huge jobs" in warnings[0] and "flows" not in warnings[0].split("(74")[0]
    # named for what the law draws, and the flows' coverage figure cited as such
    assert warnings[0].startswith("unreliable interval: pareto tasks per job with")
    assert "not measured for jobs" in warnings[0]
    assert kind.interval_warnings(plain, 0.6) == ["", ""]
    # the most severe of the two laws: infinite variance (durations) over an infinite
    # third moment (tasks, at load >= 0.8)
    both = scenario_from_dict(_raw(tasks={"a": {"distribution": "pareto", "shape": 2.5}},
                                   duration_law={"b": {"distribution": "pareto",
                                                       "shape": 1.5}}), "s.toml")
    assert "third moment" in kind.interval_warnings(scenario_from_dict(_raw(tasks={
        "a": {"distribution": "pareto", "shape": 2.5}}), "s.toml"), 0.9)[0]
    text = kind.interval_warnings(both, 0.9)[0]
    assert "infinite variance" in text and "class b (cluster.duration_law)" in text
    assert text.startswith("unreliable interval: pareto task durations with")


@pytest.mark.parametrize("cluster,field,problem", [
    ({"tasks": "poisson"}, "cluster.tasks",
     "must be 'geometric' or 'fixed', or a size-law table"),
    ({"duration_law": "geometric"}, "cluster.duration_law",
     "must be 'exponential' or 'fixed', or a size-law table"),
    ({"duration_law": {"distribution": "lognormal"}}, "cluster.duration_law.sigma",
     "missing (required by the lognormal law)"),
    ({"tasks": {"distribution": "pareto", "shape": 0.9}}, "cluster.tasks.shape",
     "must be > 1 (finite mean), got 0.9"),
    ({"tasks": {"zz": "fixed"}}, "cluster.tasks.zz", "unknown key (known keys: a, b)"),
    ({"duration_law": {"a": {"distribution": "weibull"}}},
     "cluster.duration_law.a.distribution", "unknown distribution 'weibull'"),
])
def test_a_bad_law_names_its_field(cluster, field, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(**cluster), "s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: {problem}"), str(info.value)


def test_python_laws_are_checked():
    with pytest.raises(InputError, match="tasks: must be one law or 2 laws"):
        _model(tasks=["fixed"] * 3)
    with pytest.raises(InputError, match="duration_law: must be 'exponential' or 'fixed'"):
        ClusterModel(capacity=[[4.0, 4.0]], demand=[[1.0, 1.0]], policy=NAME.DRF,
                     duration_law="lognormal")


def test_a_trace_takes_no_law(tmp_path):
    """A size law is refused (the trace brings its tasks and durations), and so is any
    field the trace run would ignore, given with another value than its default; the
    default (what a stored trace scenario holds), in any spelling, reads; the trace's
    point keys are computed without a warning (it has no classes to key laws by)."""
    import warnings
    from pathlib import Path

    from mrfq.kinds import Point, point_filename

    trace = Path(__file__).resolve().parent / "data" / "task_events_small.csv"

    def raw(**fields):
        return {"resources": ["cpu", "memory"],
                "cluster": {"trace": str(trace), "servers": [[1.0, 1.0]], **fields}}

    with pytest.raises(InputError) as info:
        scenario_from_dict(raw(duration_law=LOGNORMAL), "s.toml")
    assert str(info.value).startswith("s.toml: cluster.duration_law: a trace gives")
    for fields, why in (({"tasks": "fixed"}, "tasks"), ({"duration_law": "Fixed"}, "duration"),
                        ({"mean_tasks": 50}, "tasks"), ({"duration": 2.0}, "duration"),
                        ({"seed": 3}, "drawn"), ({"jobs": 500}, "every job"),
                        ({"warmup": 0.2}, "measured"), ({"tasks_per_resource": 10},
                                                       "servers")):
        (key,) = fields
        with pytest.raises(InputError) as info:
            scenario_from_dict(raw(**fields), "s.toml")
        assert str(info.value).startswith(f"s.toml: cluster.{key}: a trace run does not "
                                           "use it (") and why in str(info.value)
    for fields in ({"tasks": "Geometric"}, {"duration_law": {"distribution": "exponential"}},
                   {"mean_tasks": 1000, "duration": 1, "seed": 1, "jobs": 20000}):
        scenario = scenario_from_dict(raw(**fields), "s.toml")
        assert scenario_from_dict(scenario.to_dict(), "s.toml") == scenario
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (no classes: no class loads to divide)
            name = point_filename(scenario, Point("cluster", "tsf", 1.0))
        assert name.startswith("cluster-tsf-")


def test_a_bad_law_is_one_line_exit_2_and_nothing_written(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "mem"]\n[[classes]]\nname = "a"\n'
                    'requirements = [1, 0.5]\nload_share = 1\n[cluster]\n'
                    'duration_law = {distribution = "lognormal", sigma = -1}\n')
    assert_cluster_refuses(path, f"error: {path}: cluster.duration_law.sigma: must be "
                                 "non-negative, "
                                 "got -1")
