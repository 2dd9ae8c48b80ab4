"""Cluster metrics over time (issue 24; DRFH Figs. 4–7): the kernel's timeline (running
tasks per class integrated over time bins) against the slow twin's task log binned by
the definition, for every scheduler; its integral against the run's busy resources;
shares, dominant shares and utilisation on small cases worked out by hand; the task
completion ratio and the completion time by job size by hand."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from naive_cluster import naive_cluster, naive_done_by, naive_timeline

import mrfq
from mrfq import policies
from mrfq.cluster import ClusterModel, pooled_model, run_cluster, workload
from mrfq.cluster.metrics import completion_ratio, jct_by_tasks
from mrfq.cluster.model import TIMELINE_BINS, run_jobs, simulate_jobs
from mrfq.cluster.timeline import Timeline

CLUSTER = policies.entries(policies.CLUSTER)
NAME = policies.named(policies.CLUSTER)


def _case(policy, seed=3):
    model = ClusterModel(capacity=[[2.0, 12.0], [12.0, 2.0], [4.0, 4.0]],
                         demand=[[0.2, 1.0], [1.0, 0.2], [2.0, 2.0]], policy=policy,
                         rates=[1.0, 1.0, 0.3], mean_tasks=[6.0, 6.0, 3.0],
                         durations=[1.0, 0.5, 2.0], weights=[1.0, 2.0, 1.0],
                         slots_per_server=3)
    return model, workload(model, 40, seed)


@pytest.mark.parametrize("entry", CLUSTER, ids=[p.name for p in CLUSTER])
def test_the_timeline_is_the_twins_task_log_binned(entry):
    """Bins of 0.01 time units are coarsened (×2 until 1024 bins cover the run); the
    kernel's lazy per-class integrals equal the twin's task-by-task overlaps with every
    bin, and its tasks done by the window's end the twin's count."""
    model, (arrival, classes, tasks) = _case(entry.name)
    horizon = float(arrival[len(arrival) // 2])
    run = run_jobs(model, arrival, classes, tasks, 3, window=(0.0, horizon),
                   timeline_dt=0.01)
    log = []
    finish, _ = naive_cluster(entry.name, model.capacity, model.demand, model.weights,
                              arrival, classes, tasks, model.durations, True, 3, 3,
                              log=log)
    np.testing.assert_array_equal(run.finish, finish)
    tl = run.timeline
    assert tl.dt > 0.01 and tl.dt / 0.01 == 2 ** round(np.log2(tl.dt / 0.01))
    assert (tl.area.shape[0] - 1) * tl.dt < max(finish) <= tl.area.shape[0] * tl.dt
    twin = np.array(naive_timeline(log, 3, tl.dt, tl.area.shape[0]))
    np.testing.assert_allclose(tl.area, twin, rtol=1e-9, atol=1e-9 * tl.dt)
    np.testing.assert_array_equal(run.done_by_end, naive_done_by(log, len(arrival), horizon))


@pytest.mark.parametrize("policy", [NAME.DRF, NAME.DRFH_BEST_FIT, NAME.SLOTS])
def test_the_timeline_integrates_to_the_runs_busy_resources(policy):
    """Σ_b utilisation_b × width_b × pool = ∫ resources in use dt over [0, ∞), the
    kernel's own running sum, to rounding; the timeline leaves the run unchanged."""
    model, (arrival, classes, tasks) = _case(policy, seed=5)
    run = run_jobs(model, arrival, classes, tasks, 5, timeline_dt=0.0)
    tl = run.timeline
    from_bins = (tl.utilisation * tl.width[:, None]).sum(axis=0) * model.total
    np.testing.assert_allclose(from_bins, run.busy, rtol=1e-10)
    np.testing.assert_allclose(tl.busy(), run.busy, rtol=1e-10)
    plain = simulate_jobs(model, arrival, classes, tasks, 5)
    np.testing.assert_array_equal(plain[0], run.finish)
    np.testing.assert_array_equal(plain[2], run.busy)


def test_shares_over_time_on_one_server_by_hand():
    """Pool (4, 4). Job 0 (class 0, tasks (1, 2)) brings 2 tasks of 10 at t = 0: memory
    full until 10. Job 1 (class 1, task (2, 1)) arrives at 5, fits at 10 (both tasks of
    job 0 end), runs to 20. Bins of 4: [8, 12) holds 2 tasks × 2 + 1 task × 2."""
    model = ClusterModel(capacity=[[4.0, 4.0]], demand=[[1.0, 2.0], [2.0, 1.0]],
                         policy=NAME.DRF_ONLINE, durations=[10.0, 10.0],
                         duration_law="fixed")
    run = run_jobs(model, [0.0, 5.0], [0, 1], [2, 1], timeline_dt=4.0)
    tl = run.timeline
    np.testing.assert_array_equal(run.finish, [10.0, 20.0])
    np.testing.assert_allclose(tl.start, [0, 4, 8, 12, 16])
    np.testing.assert_allclose(tl.tasks, [[2, 0], [2, 0], [1, 0.5], [0, 1], [0, 1]])
    np.testing.assert_allclose(tl.shares[2], [[0.25, 0.5], [0.25, 0.125]])
    np.testing.assert_allclose(tl.dominant[:, 0], [1, 1, 0.5, 0, 0])
    np.testing.assert_allclose(tl.dominant[:, 1], [0, 0, 0.25, 0.5, 0.5])
    np.testing.assert_allclose(tl.utilisation, [[0.5, 1], [0.5, 1], [0.5, 0.625],
                                                [0.5, 0.25], [0.5, 0.25]])


def test_global_dominant_shares_on_drfhs_two_servers_by_hand():
    """DRFH Fig. 1: servers (2 CPU, 12 GB) and (12 CPU, 2 GB), user 1 tasks (0.2, 1),
    user 2 (1, 0.2), 40 tasks of 100 s each, both jobs at 0 (in order). User 1 alone
    fills server 1 (10 tasks, Best-Fit) and 2 on server 2, whose memory is then full:
    user 2 gets nothing. At 100 the 12 tasks end one by one: server 1's ten go back to
    user 1 (user 2's task needs 1 CPU), server 2's two free 2 GB, which user 2 takes
    (10 tasks): the DRFH allocation (§III-D), global dominant shares 10/14 each, CPU and
    memory 12/14 busy, held over [100, 200)."""
    model = ClusterModel(capacity=[[2.0, 12.0], [12.0, 2.0]],
                         demand=[[0.2, 1.0], [1.0, 0.2]], policy=NAME.DRFH_BEST_FIT,
                         durations=[100.0, 100.0], duration_law="fixed")
    tl = run_jobs(model, [0.0, 0.0], [0, 1], [40, 40], timeline_dt=10.0).timeline
    first, second = slice(0, 10), slice(10, 20)  # [0, 100), [100, 200)
    np.testing.assert_allclose(tl.tasks[first], [[12, 0]] * 10)
    np.testing.assert_allclose(tl.dominant[first], [[12 / 14, 0]] * 10)
    np.testing.assert_allclose(tl.tasks[second], 10.0)
    np.testing.assert_allclose(tl.dominant[second], 10 / 14)
    np.testing.assert_allclose(tl.shares[15], [[2 / 14, 10 / 14], [10 / 14, 2 / 14]])
    np.testing.assert_allclose(tl.utilisation[second], 12 / 14)


def test_coarsening_sums_bins_and_refuses_other_widths():
    area = np.arange(10.0).reshape(5, 2)
    tl = Timeline(1.0, 4.5, area, np.array([[1.0], [2.0]]), np.array([4.0]))
    coarse = tl.coarsen(2.0)
    np.testing.assert_allclose(coarse.area, [[2, 4], [10, 12], [8, 9]])
    np.testing.assert_allclose(coarse.width, [2, 2, 0.5])
    np.testing.assert_allclose(coarse.busy(), tl.busy())
    with pytest.raises(ValueError):
        tl.coarsen(3.0)


def test_a_pooled_runs_timeline_matches_its_utilisation_and_shares():
    """run_cluster with a timeline: the time-average utilisation over the bins inside the
    measurement window is the run's (window-)utilisation to within the two partial bins,
    and the classes' time-average dominant shares add up to at most 1 per resource."""
    model = pooled_model([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]], [0.4, 0.1, 0.1], NAME.DRF,
                         tasks_per_resource=20, mean_tasks=200)
    run = run_cluster(model, 400, seed=2, timeline_dt=0.0)
    tl = run.timeline
    assert TIMELINE_BINS // 4 <= tl.area.shape[0] <= TIMELINE_BINS
    assert tl.utilisation.max() <= 1 + 1e-9
    t_warm, t_end = run.arrival[40], run.arrival[-1]
    inside = (tl.start >= t_warm) & (tl.start + tl.dt <= t_end)
    mean = (tl.utilisation[inside] * tl.width[inside, None]).sum(0) / tl.width[inside].sum()
    span = (t_end - t_warm) / tl.dt
    np.testing.assert_allclose(mean, run.utilisation, atol=2.5 / span)


def test_task_completion_ratio_per_user_by_hand():
    """One server (1, 1), tasks (0.5, 0.5) of 10 under FIFO: user a's job 0 (3 tasks) and
    user b's job 1 (2 tasks) at 0, user a's job 2 (1 task) at 30. Job 0 runs 2 tasks to
    10, then its last and job 1's first to 20, job 1's second 20–30, job 2's 30–40. At the
    last arrival (30; a task ending then counts): a completed 3 of 4 tasks, b 2 of 2."""
    model = ClusterModel(capacity=[[1.0, 1.0]], demand=[[0.5, 0.5]], policy=NAME.FIFO,
                         durations=[10.0], duration_law="fixed")
    arrival, tasks = [0.0, 0.0, 30.0], [3, 2, 1]
    run = run_jobs(model, arrival, [0, 0, 0], tasks, window=(0.0, 30.0))
    np.testing.assert_array_equal(run.finish, [20.0, 30.0, 40.0])
    np.testing.assert_array_equal(run.done_by_end, [3, 2, 0])
    table = completion_ratio(["a", "b", "a"], arrival, tasks, run.done_by_end, 30.0)
    assert table.to_dict("list") == {"user": ["a", "b"], "jobs": [2, 1],
                                      "tasks_submitted": [4, 2], "tasks_completed": [3, 2],
                                      "ratio": [0.75, 1.0]}


def test_completion_time_by_job_size_by_hand():
    jct = [1.0, 3.0, 10.0, 100.0, 1000.0]
    table = jct_by_tasks(jct, [1, 1, 10, 100, 2000]).set_index("tasks")  # bounds included
    assert list(table.index) == ["all", "1", "2-10", "11-100", "101-1000", "1001+"]
    assert table["jobs"].tolist() == [5, 2, 1, 1, 0, 1]
    assert table.loc["all", "jct_mean"] == pytest.approx(1114 / 5)
    assert table.loc["1", "jct_mean"] == 2.0 and table.loc["1", "jct_p50"] == 2.0
    assert table.loc["1", "jct_p90"] == pytest.approx(1 + 0.9 * 2)  # linear interpolation
    assert table.loc["1001+", "jct_p99"] == 1000.0
    assert np.isnan(table.loc["101-1000", "jct_mean"])
    assert pd.isna(table.loc["1001+", "tasks_max"])


SMALL = Path(__file__).resolve().parent / "data" / "task_events_small.csv"


def test_a_trace_run_writes_the_metrics_worked_out_by_hand(tmp_path):
    """tests/test_cluster_trace.py derives the small file's jobs: job 10 (user u1, tasks
    (0.1, 0.3) of 60 and 80 s) at 0, job 11 (u2, same demand, 5.5 s) at 50 s, job 12
    (u3, (0.5, 0.1), 10 s) at 300 s, the last arrival, where its task has not ended: task
    completion ratios 1, 1, 0. On the three servers (pool 2 CPU, 1.25 memory) a task of
    0.3 memory fits only on the two of 0.5, one each: job 10's tasks start at 0, job 11's
    when the first ends, at 60 s (its JCT 15.5 s), job 12's at its arrival; so the shares
    and the utilisation integral follow."""
    shutil.copy(SMALL, tmp_path / "trace.csv")
    (tmp_path / "s.toml").write_text(
        'name = "t"\nresources = ["cpu", "memory"]\n[cluster]\ntrace = "trace.csv"\n'
        'policies = ["drfh-best-fit", "fifo"]\nbatches = 2\n'
        'servers = [{ capacity = [0.5, 0.5], count = 2 }, [1.0, 0.25]]\n')
    result = mrfq.cluster(tmp_path / "s.toml", tmp_path / "r")
    out = tmp_path / "r"
    assert sorted(p.name for p in result.figures) == sorted(
        f"{n}.{f}" for n in ("shares", "utilisation", "completion_times")
        for f in ("png", "pdf"))
    completion = pd.read_csv(out / "completion.csv")
    assert completion[["policy", "user", "tasks_submitted", "tasks_completed",
                       "ratio"]].values.tolist() == [
        [p, u, 2 if u == "u1" else 1, n, r] for p in ("drfh-best-fit", "fifo")
        for u, n, r in (("u1", 2, 1.0), ("u2", 1, 1.0), ("u3", 0, 0.0))]
    jobs = pd.read_csv(out / "jobs.csv")
    np.testing.assert_allclose(jobs["jct"], [80, 15.5, 10] * 2)
    jct = pd.read_csv(out / "jct.csv", dtype={"tasks": str}).set_index(["policy", "tasks"])
    assert jct.loc[("fifo", "all"), "jct_mean"] == pytest.approx(105.5 / 3)
    assert jct.loc[("fifo", "2-10"), "jct_mean"] == 80.0
    timeline = pd.read_csv(out / "utilisation.csv")
    for _, part in timeline.groupby("policy"):
        assert (part["utilisation_cpu"] * part["dt"]).sum() * 2.0 == pytest.approx(
            0.1 * 145.5 + 0.5 * 10)
        assert (part["utilisation_memory"] * part["dt"]).sum() * 1.25 == pytest.approx(
            0.3 * 145.5 + 0.1 * 10)
    shares = pd.read_csv(out / "shares.csv")
    first = shares.iloc[0]
    assert (first["time"], first["class"], first["tasks"]) == (0.0, "class 1", 2.0)
    assert (first["share_cpu"], first["share_memory"]) == pytest.approx((0.1, 0.48))
    assert first["dominant_share"] == pytest.approx(0.48)
    assert set(result.tables) == {"timeline", "shares", "jct", "jobs", "completion"}
    pd.testing.assert_frame_equal(result.tables["completion"], completion)
