"""The cluster simulator (SPEC §6): the kernel against its slow twin, exactly, for every
scheduler of the registry; the most-deprived DRF against the static DRF allocation; the
exact anchors of a job alone."""

import numpy as np
import pytest
from naive_cluster import naive_cluster

from mrfq import policies
from mrfq.allocation import Problem, allocate
from mrfq.cluster import ClusterModel, pooled_model, run_cluster, workload
from mrfq.cluster.model import simulate_jobs
from mrfq.errors import InputError

CLUSTER = policies.entries(policies.CLUSTER)
NAME = policies.named(policies.CLUSTER)
FIG2 = [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]


def _twin_case(entry, capacity, demand, loads, seed, weights=None):
    model = ClusterModel(capacity=capacity, demand=demand, policy=entry.name,
                         rates=loads, mean_tasks=[4.0] * len(demand),
                         durations=[1.0, 0.5, 2.0][:len(demand)], weights=weights,
                         slots_per_server=3)
    arrival, classes, tasks = workload(model, 40, seed)
    finish, _, _, _, events = simulate_jobs(model, arrival, classes, tasks, seed)
    twin, twin_events = naive_cluster(entry.name, model.capacity, model.demand,
                                      model.weights, arrival, classes, tasks,
                                      model.durations, True, seed, 3)
    return finish, np.array(twin), events, twin_events


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
@pytest.mark.parametrize("seed", [1, 2])
def test_kernel_matches_the_twin_on_a_pooled_cluster(entry, seed):
    finish, twin, events, twin_events = _twin_case(
        entry, [[6.0, 6.0]], [[0.6, 6 / 10 * 1.0 * 10 / 10], [3.0, 0.6], [2.0, 2.0]],
        [0.8, 0.3, 0.2], seed)
    assert events == twin_events
    np.testing.assert_array_equal(finish, twin)


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_kernel_matches_the_twin_on_heterogeneous_servers(entry):
    finish, twin, events, twin_events = _twin_case(
        entry, [[2.0, 12.0], [12.0, 2.0], [4.0, 4.0]], [[0.2, 1.0], [1.0, 0.2]],
        [1.0, 1.0], 3, weights=[1.0, 2.0])
    assert events == twin_events
    np.testing.assert_array_equal(finish, twin)


def test_the_twin_comparison_can_fail():
    """A different scheduler gives different finish times on the same jobs."""
    a = _twin_case(CLUSTER[0], [[6.0, 6.0]], [[0.6, 6.0], [6.0, 0.6]], [0.6, 0.6], 1)
    model = ClusterModel(capacity=[[6.0, 6.0]], demand=[[0.6, 6.0], [6.0, 0.6]],
                         policy=NAME.FIFO, rates=[0.6, 0.6], mean_tasks=[4.0, 4.0],
                         durations=[1.0, 0.5], slots_per_server=3)
    arrival, classes, tasks = workload(model, 40, 1)
    fifo = simulate_jobs(model, arrival, classes, tasks, 1)[0]
    assert not np.array_equal(a[0], fifo)


@pytest.mark.parametrize("capacity,demand", [
    ([[9.0, 18.0]], [[1.0, 4.0], [3.0, 1.0]]),            # DRF slides: 3 and 2 tasks
    ([[100.0, 100.0]], [[1.0, 10.0], [10.0, 1.0], [7.0, 7.0]]),
])
def test_drf_most_deprived_with_backlogged_jobs_is_the_static_drf(capacity, demand):
    """One job per class at time 0, each with more tasks than it can finish: once the
    first tasks have turned over (t ≥ 10 mean durations) the most-deprived rule holds the
    static DRF allocation to within one task of every job."""
    K = len(demand)
    model = ClusterModel(capacity=capacity, demand=demand, policy=NAME.DRF,
                         rates=[1.0] * K, durations=[1.0] * K)
    static = allocate(Problem(capacity=capacity, demand=demand), "drf").user_tasks
    _, _, _, samples, _ = simulate_jobs(model, np.zeros(K), np.arange(K),
                                        np.full(K, 10**6), 1, sample_dt=0.5,
                                        n_samples=200)
    running = samples[20:]
    assert np.all(np.abs(running - static) < 1.0), (static, running.min(0), running.max(0))
    if np.allclose(static, np.round(static)):
        assert np.all(running == static)


def test_a_job_alone_runs_at_rate_one_up_to_its_tail():
    """One job of N fixed tasks of fixed duration 1 on C slots: it takes ⌈N/C⌉ time
    units, so γ = (N/C)/⌈N/C⌉ exactly."""
    model = ClusterModel(capacity=[[10.0, 10.0]], demand=[[1.0, 0.5]], policy=NAME.DRF,
                         rates=[1.0], durations=[1.0], mean_tasks=[95.0],
                         tasks="fixed", duration_law="fixed")
    finish = simulate_jobs(model, [0.0], [0], [95])[0]
    assert finish[0] == pytest.approx(10.0)
    assert model.work[0] == pytest.approx(9.5)


def test_low_load_gamma_is_one_per_class_and_ordered_as_ps():
    """One resource, one class: the cluster is processor sharing in the fluid limit,
    γ = 1 − ρ (SPEC §2), here with many tasks per job (tail error ~ C ln C / N)."""
    model = pooled_model([[1.0]], [0.5], NAME.DRF, tasks_per_resource=10, mean_tasks=2000)
    run = run_cluster(model, 4000, seed=3)
    assert run.gamma_low[0] < run.gamma_high[0] < run.gamma_low[0] * 1.3
    assert run.gamma[0] == pytest.approx(0.5, rel=0.06)
    assert run.utilisation[0] == pytest.approx(0.5, rel=0.05)


def test_a_task_larger_than_every_server_is_an_input_error():
    with pytest.raises(InputError, match="larger than every server"):
        ClusterModel(capacity=[[1.0, 1.0], [2.0, 0.5]], demand=[[1.5, 1.0]],
                     policy=NAME.DRF)


@pytest.mark.parametrize("policy", [NAME.DRF, NAME.PF, NAME.BMF])
@pytest.mark.parametrize("counts", [(4, 1, 1), (2, 1, 1), (1, 2, 1), (3, 1, 0)])
def test_most_deprived_rules_hold_their_fluid_allocation_when_backlogged(policy, counts):
    """BR Figure 2's classes on a pool of 20 tasks per resource, jobs that never run out
    of tasks: every rule holds its class's fluid share φ_k n_k C to within one task per
    job (BMF's ranks at task granularity: with strict ranks class 2 got 0 of 14.8 tasks
    in state (4, 1, 1))."""
    from mrfq.fluid import allocate as fluid_allocate

    a = np.array(FIG2)
    C = 20.0
    classes = np.repeat(np.arange(3), counts)
    model = ClusterModel(capacity=[[C, C]], demand=a, policy=policy, rates=[1.0] * 3,
                         durations=[1.0] * 3)
    samples = simulate_jobs(model, np.zeros(classes.size), classes,
                            np.full(classes.size, 10**6), 1, sample_dt=0.5,
                            n_samples=200)[3][20:]
    target = fluid_allocate(policy, a, counts) * np.array(counts) * C
    assert np.all(np.abs(samples - target) <= np.maximum(counts, 1) + 1e-9), (
        target, samples.min(0), samples.max(0))


def test_best_fit_places_by_eq9_and_first_fit_by_order():
    """Servers (10, 7) and (8, 1); a (3, 1) task at t = 0 for 1 time unit, then a (10, 7)
    task at t = 0.5 that fits only on an empty server 1. Eq. (9) puts the first task on
    server 2 (0.469 < 0.825, see the allocation lab's test), so the second starts at once;
    First-Fit puts it on server 1, so the second waits until t = 1."""
    finish = {}
    for policy in (NAME.DRFH_BEST_FIT, NAME.DRFH_FIRST_FIT):
        model = ClusterModel(capacity=[[10.0, 7.0], [8.0, 1.0]],
                             demand=[[3.0, 1.0], [10.0, 7.0]], policy=policy,
                             rates=[1.0, 1.0], durations=[1.0, 1.0], duration_law="fixed")
        finish[policy] = simulate_jobs(model, [0.0, 0.5], [0, 1], [1, 1])[0].tolist()
    assert finish[NAME.DRFH_BEST_FIT] == [1.0, 1.5]
    assert finish[NAME.DRFH_FIRST_FIT] == [1.0, 2.0]
