"""Placement constraints and TSF in the cluster simulator (issue 24): the kernel against
its slow twin with constraints and with given task durations, TSF with backlogged jobs
against the static TSF of the allocation lab (the TSF paper's toy example), and the
one-line errors of a placement naming no server or a task fitting no allowed server."""


import numpy as np
import pytest
from conftest import assert_cluster_refuses
from naive_cluster import naive_cluster

from mrfq import policies
from mrfq.allocation import Problem, allocate
from mrfq.cluster import ClusterModel, workload
from mrfq.cluster.model import simulate_jobs
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

CLUSTER = policies.entries(policies.CLUSTER)
NAME = policies.named(policies.CLUSTER)
SERVERS = [[2.0, 12.0], [12.0, 2.0], [4.0, 4.0], [6.0, 6.0]]
DEMAND = [[0.2, 1.0], [1.0, 0.5], [2.0, 2.0]]
# overlapping sets, and T_k δ_k unequal (22/24, 16/24, 14/24): TSF ≠ online DRF here
ALLOWED = [[True, False, True, True], [False, True, True, True], [True, True, False, True]]
TSF_TOY = dict(capacity=[[9, 12], [3, 4], [9, 12]], demand=[[1, 2], [3, 1], [1, 4]],
               allowed=[[1, 1, 0], [0, 1, 0], [1, 1, 1]])


def _model(policy, allowed=ALLOWED):
    return ClusterModel(capacity=SERVERS, demand=DEMAND, policy=policy,
                        rates=[4.0, 4.0, 2.0], mean_tasks=[5.0] * 3,
                        durations=[1.0, 0.5, 2.0], weights=[1.0, 2.0, 1.0],
                        slots_per_server=3, allowed=allowed)


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_kernel_matches_the_twin_with_placement_constraints(entry):
    model = _model(entry.name)
    arrival, classes, tasks = workload(model, 40, 4)
    finish, _, _, _, events = simulate_jobs(model, arrival, classes, tasks, 4)
    twin, twin_events = naive_cluster(entry.name, model.capacity, model.demand,
                                      model.weights, arrival, classes, tasks,
                                      model.durations, True, 4, 3, ALLOWED)
    assert events == twin_events
    np.testing.assert_array_equal(finish, np.array(twin))


def test_the_tsf_twin_case_tells_tsf_from_online_drf():
    model = _model(NAME.TSF)
    arrival, classes, tasks = workload(model, 40, 4)
    other = simulate_jobs(_model(NAME.DRF_ONLINE), arrival, classes, tasks, 4)[0]
    assert not np.array_equal(simulate_jobs(model, arrival, classes, tasks, 4)[0], other)


@pytest.mark.parametrize("policy", [NAME.TSF, NAME.DRFH_BEST_FIT, NAME.DRF])
def test_kernel_matches_the_twin_with_given_task_durations(policy):
    model = _model(policy)
    arrival, classes, tasks = workload(model, 30, 5)
    times = np.random.default_rng(5).uniform(0.1, 3.0, tasks.sum())
    finish = simulate_jobs(model, arrival, classes, tasks, 5, task_time=times)[0]
    twin, _ = naive_cluster(policy, model.capacity, model.demand, model.weights, arrival,
                            classes, tasks, model.durations, True, 5, 3, ALLOWED,
                            times.tolist())
    np.testing.assert_array_equal(finish, np.array(twin))
    # a job of one task lasts exactly its given duration when it starts at once
    first = simulate_jobs(model, [0.0], [0], [1], task_time=[2.5])[0]
    assert first[0] == 2.5


def test_constraints_change_the_schedule():
    model = _model(NAME.TSF)
    arrival, classes, tasks = workload(model, 40, 4)
    free = simulate_jobs(_model(NAME.TSF, None), arrival, classes, tasks, 4)[0]
    assert not np.array_equal(simulate_jobs(model, arrival, classes, tasks, 4)[0], free)


def test_tsf_with_backlogged_jobs_holds_the_static_tsf_of_the_papers_toy():
    """The TSF paper's toy example (tests/test_allocation.py): static TSF runs 6, 1 and 3
    tasks. One backlogged job per user, the constrained user 2 arriving first: the
    cluster's TSF holds exactly that allocation at every later instant."""
    static = allocate(Problem(**TSF_TOY), "tsf").user_tasks
    assert static == pytest.approx([6, 1, 3])
    model = ClusterModel(policy=NAME.TSF, rates=[1.0] * 3, durations=[1.0] * 3, **TSF_TOY)
    _, _, _, samples, _ = simulate_jobs(model, np.zeros(3), np.array([1, 0, 2]),
                                        np.full(3, 2000), 1, sample_dt=0.5, n_samples=200)
    assert np.all(samples[1:] == static)


def test_tsf_normalises_by_the_tasks_alone_without_constraints():
    """Two users of (1, 1) tasks on two (10, 10) servers, user 1 confined to server 0:
    T = 20 for both, so TSF gives 10 and 10 (user 2 keeps server 1 only) whatever the
    start; online DRF (dominant shares of the pool) gives the same here, and the task
    shares differ from DRF's when the users' T differ (next case)."""
    model = ClusterModel(capacity=[[10, 10], [10, 10]], demand=[[1, 1], [1, 1]],
                         policy=NAME.TSF, rates=[1.0] * 2, durations=[1.0] * 2,
                         allowed=[[1, 0], [1, 1]])
    _, _, _, samples, _ = simulate_jobs(model, np.zeros(2), np.array([1, 0]),
                                        np.full(2, 10**4), 1, sample_dt=0.5, n_samples=100)
    assert np.all(samples[40:] == [10, 10])
    # user 1's tasks fit 4 to a server, user 2's 2: T = (8, 4); TSF equalises x / T.
    # (User 2 arrives first: arriving second, its 2-unit task never finds two free
    # units, as user 1 refills every unit it frees — online TSF is work-conserving.)
    model = ClusterModel(capacity=[[4, 4], [4, 4]], demand=[[1, 1], [2, 2]],
                         policy=NAME.TSF, rates=[1.0] * 2, durations=[1.0] * 2)
    _, _, _, samples, _ = simulate_jobs(model, np.zeros(2), np.array([1, 0]),
                                        np.full(2, 10**4), 1, sample_dt=0.5, n_samples=100)
    assert np.all(samples[40:] == [4, 2])


def test_a_class_on_no_server_or_on_servers_too_small_is_an_input_error():
    with pytest.raises(InputError, match="may run on no server"):
        _model(NAME.TSF, [[False] * 4, [True] * 4, [True] * 4])
    with pytest.raises(InputError, match="larger than every server it may use"):
        ClusterModel(capacity=[[1, 1], [4, 4]], demand=[[2, 2]], policy=NAME.TSF,
                     allowed=[[True, False]])


def _raw(**cluster):
    return {"resources": ["cpu", "mem"], "classes": [
        {"name": "a", "requirements": [1.0, 0.5], "load_share": 1},
        {"name": "b", "requirements": [0.2, 1.0], "load_share": 1}],
        "load": {"values": [0.5]},
        "cluster": {"policies": [NAME.TSF], "tasks_per_resource": 20, "mean_tasks": 20,
                    "jobs": 400, "servers": [[4, 4], {"capacity": [8, 2], "count": 2,
                                                       "type": "cpu"}], **cluster}}


def test_a_scenario_lists_servers_and_placement_and_round_trips():
    scenario = scenario_from_dict(_raw(placement={"a": ["cpu"], "b": [0, 2]}), "s.toml")
    assert scenario_from_dict(scenario.to_dict()).cluster == scenario.cluster
    from mrfq.kinds import cluster as kind  # the kind sits above the scenario layer

    model = kind.model(scenario, NAME.TSF, 0.5)
    assert model.allowed.tolist() == [[False, True, True], [True, False, True]]
    # a dominant task holds 1/C of the pool: demand a_k · (20, 8) / 20
    np.testing.assert_allclose(model.demand, [[1.0, 0.2], [0.2, 0.4]])


@pytest.mark.parametrize("placement,problem", [
    ({"a": ["gpu"]}, "server type 'gpu' names no server"),
    ({"a": [3]}, "server index 3 names no server"),
    ({"a": []}, "names no server"),
    ({"a": [True]}, "must list server indices or type names"),
])
def test_a_placement_naming_no_server_names_its_field(placement, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(placement=placement), "s.toml")
    assert str(info.value).startswith("s.toml: cluster.placement.a: "), str(info.value)
    assert problem in str(info.value)


def test_unknown_class_and_oversized_tasks_name_their_field():
    with pytest.raises(InputError, match="cluster.placement.zz: unknown key"):
        scenario_from_dict(_raw(placement={"zz": [0]}), "s.toml")
    with pytest.raises(InputError, match="cluster.tasks_per_resource: a task of class a"):
        scenario_from_dict(_raw(tasks_per_resource=2), "s.toml")
    with pytest.raises(InputError, match="cluster.placement.a: a task of class a is larger"):
        scenario_from_dict(_raw(tasks_per_resource=3, placement={"a": [0]}), "s.toml")


def test_a_bad_placement_is_one_line_exit_2_and_nothing_written(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "mem"]\n[[classes]]\nname = "a"\n'
                    'requirements = [1, 0.5]\nload_share = 1\n[cluster]\n'
                    'servers = [[1, 1], [2, 2]]\n[cluster.placement]\na = [5]\n')
    assert_cluster_refuses(path, f"error: {path}: cluster.placement.a: server index 5 names "
                                 "no server (0 to 1)")
