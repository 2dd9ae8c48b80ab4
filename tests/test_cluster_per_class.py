"""Per-class ``[cluster] mean_tasks`` and ``duration`` (a number for every class, or a table
class name → value, the classes not named keeping the default): the point's model has
E[N_k] and d_k per class at the fluid loads, the kernel equals its slow twin on it for
every scheduler, a number is what it was before tables existed (bit for bit), the section
round-trips, and a bad value is one line naming its field."""


import numpy as np
import pytest
from conftest import assert_cluster_refuses, assert_kernel_matches_twin

from mrfq import policies
from mrfq.cluster import pooled_model, workload
from mrfq.cluster.model import simulate_jobs
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

CLUSTER = policies.entries(policies.CLUSTER)
NAME = policies.named(policies.CLUSTER)


def _raw(**cluster):
    return {"resources": ["cpu", "mem"],
            "classes": [{"name": "a", "requirements": [1.0, 0.4], "load_share": 1},
                        {"name": "b", "requirements": [0.3, 1.0], "load_share": 1},
                        {"name": "c", "requirements": [1.0, 1.0], "load_share": 1}],
            "load": {"values": [0.6]},
            "cluster": {"policies": [NAME.DRF], "tasks_per_resource": 6, "jobs": 400,
                        **cluster}}


class _Point:
    policy, load = NAME.DRF, 0.6


def test_per_class_values_reach_the_model_at_the_fluid_loads():
    from mrfq.kinds import cluster as kind  # the kind sits above the scenario layer

    for cluster in ({"mean_tasks": {"a": 3, "c": 8.0}, "duration": {"b": 0.5, "c": 2}},
                    {"mean_tasks": {"a": 3, "c": 8.0}, "duration": {"b": 0.5, "c": 2},
                     "servers": [[2, 4], [4, 2]]}):
        scenario = scenario_from_dict(_raw(**cluster), "s.toml")
        model = kind.model(scenario, NAME.DRF, 0.6)
        assert model.mean_tasks.tolist() == [3.0, 1000.0, 8.0]  # b keeps the default
        assert model.durations.tolist() == [1.0, 0.5, 2.0]      # a keeps the default
        # ρ_k = λ_k E[N_k] d_k δ_k is the scenario's fluid load of class k
        np.testing.assert_allclose(model.loads, scenario.class_loads(0.6), rtol=1e-12)


def test_a_number_is_what_it_was_and_an_equal_table_is_the_same_model():
    from mrfq.kinds import cluster as kind

    plain = scenario_from_dict(_raw(mean_tasks=4, duration=0.5), "s.toml")
    table = scenario_from_dict(_raw(mean_tasks={"a": 4, "b": 4, "c": 4},
                                    duration={"a": 0.5, "b": 0.5, "c": 0.5}), "s.toml")
    one, other = kind.model(plain, NAME.DRF, 0.6), kind.model(table, NAME.DRF, 0.6)
    for name in ("rates", "mean_tasks", "durations", "demand", "capacity"):
        assert np.array_equal(getattr(one, name), getattr(other, name)), name
    # the rates as the scalar formula computed them before per-class values
    C, K = 6.0, 3
    old = np.asarray(plain.class_loads(0.6), dtype=float) / np.full(K, 4 * 0.5 / C)
    assert np.array_equal(one.rates, old)
    stored = plain.to_dict()["cluster"]
    assert (stored["mean_tasks"], stored["duration"]) == (4.0, 0.5)  # numbers stay numbers
    assert kind.key_parts(plain, _Point())["cluster"]["mean_tasks"] == 4.0


def test_the_section_round_trips():
    for cluster in ({"mean_tasks": {"b": 5}}, {"duration": {"a": 0.25, "c": 3}},
                    {"mean_tasks": 7, "duration": {"c": 2}}, {}):
        scenario = scenario_from_dict(_raw(**cluster), "s.toml")
        again = scenario_from_dict(scenario.to_dict())
        assert again.cluster == scenario.cluster
    stored = scenario_from_dict(_raw(duration={"a": 0.25}), "s.toml").to_dict()["cluster"]
    assert stored["duration"] == {"a": 0.25}


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_kernel_matches_the_twin_with_per_class_tasks_and_durations(entry):
    """The twin takes the model's per-class mean durations; the workload draws each
    job's tasks from its class's E[N_k]."""
    from mrfq.kinds import cluster as kind

    cluster = {"policies": [entry.name], "mean_tasks": {"a": 2, "b": 6, "c": 4},
               "duration": {"a": 1.5, "b": 0.5, "c": 1.0},
               "servers": [[2, 6], [6, 2], [3, 3]]}
    if entry.name == NAME.SLOTS:  # (only the slot scheduler reads k)
        cluster["slots_per_server"] = 3
    scenario = scenario_from_dict(_raw(**cluster), "s.toml")
    model = kind.model(scenario, entry.name, 0.6)
    assert model.mean_tasks.tolist() == [2, 6, 4]
    assert model.durations.tolist() == [1.5, 0.5, 1.0]
    assert_kernel_matches_twin(entry.name, model, 5, True)


def test_fixed_laws_give_each_class_its_own_n_and_d():
    """tasks = "fixed", duration_law = "fixed": a class-k job has exactly E[N_k] tasks;
    one job alone on the pool of C = 6 slots of its dominant resource takes ⌈N/6⌉ d_k."""
    model = pooled_model([[1.0, 0.5], [0.5, 1.0]], [0.2, 0.2], NAME.DRF,
                         tasks_per_resource=6, mean_tasks=np.array([7.0, 12.0]),
                         duration=np.array([2.0, 0.5]), tasks="fixed",
                         duration_law="fixed")
    _, classes, tasks = workload(model, 50, 1)
    assert np.all(tasks == np.where(classes == 0, 7, 12))
    for k, (n, d) in enumerate([(7, 2.0), (12, 0.5)]):
        finish, _, _, _, _ = simulate_jobs(model, [0.0], [k], [n], 1)
        assert finish[0] == pytest.approx(np.ceil(n / 6) * d)


@pytest.mark.parametrize("cluster,field,problem", [
    ({"mean_tasks": {"a": 0.5}}, "cluster.mean_tasks.a", "must be >= 1 task, got 0.5"),
    ({"mean_tasks": {"b": "x"}}, "cluster.mean_tasks.b", "must be a number, got 'x'"),
    ({"mean_tasks": {"zz": 3}}, "cluster.mean_tasks.zz", "unknown key (known keys: a, b, c)"),
    ({"mean_tasks": 0.5}, "cluster.mean_tasks", "must be >= 1 task, got 0.5"),
    ({"duration": {"c": 0}}, "cluster.duration.c", "must be positive, got 0"),
    ({"duration": {"a": -1}}, "cluster.duration.a", "must be positive, got -1"),
    ({"duration": [1, 2]}, "cluster.duration", "must be a number, got [1, 2]"),
])
def test_a_bad_per_class_value_names_its_field(cluster, field, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(**cluster), "s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: {problem}"), str(info.value)


def test_a_trace_takes_no_per_class_table(tmp_path):
    from pathlib import Path

    trace = Path(__file__).resolve().parent / "data" / "task_events_small.csv"
    raw = {"resources": ["cpu", "memory"],
           "cluster": {"trace": str(trace), "servers": [[1.0, 1.0]],
                       "mean_tasks": {"x": 3}}}
    with pytest.raises(InputError) as info:
        scenario_from_dict(raw, "s.toml")
    assert str(info.value) == ("s.toml: cluster.mean_tasks: names scenario classes; a "
                               "trace's classes are its distinct demands")


def test_a_bad_table_is_one_line_exit_2_and_nothing_written(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "mem"]\n[[classes]]\nname = "a"\n'
                    'requirements = [1, 0.5]\nload_share = 1\n[cluster]\n'
                    '[cluster.duration]\nzz = 2\n')
    assert_cluster_refuses(path, f"error: {path}: cluster.duration.zz: unknown key (known "
                                 "keys: a)")
