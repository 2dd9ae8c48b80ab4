"""Bad input to the cluster simulator's Python entry points is one InputError naming the
argument, raised before the Numba kernel (which trusts its arrays: an out-of-range class
crashed the process, other inputs gave NaN or silently wrong numbers); the γ interval's
upper bound is ∞ when the sojourn's interval reaches 0; the trace loader says what
happened to the tasks it drops; a zero-length trace window has NaN utilisation, no
warning."""

import warnings
from pathlib import Path

import numpy as np
import pytest

from mrfq import policies
from mrfq.cluster import pooled_model, run_cluster, workload
from mrfq.cluster.model import ClusterModel, run_jobs, simulate_jobs, task_durations
from mrfq.cluster.servers import TABLES, draw_servers
from mrfq.cluster.trace import (
    Trace,
    google_like,
    load_task_events,
    run_trace,
    trace_summary,
)
from mrfq.errors import InputError
from mrfq.sizes import parse_size

NAME = policies.named(policies.CLUSTER)


def _model(**options):
    return pooled_model([[0.1, 1.0], [1.0, 0.1]], [0.3, 0.3], NAME.DRF,
                        tasks_per_resource=10, mean_tasks=20, **options)


def _raises(field: str, problem: str, call, *args, **kwargs):
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    assert info.value.field == field, str(info.value)
    assert problem in info.value.problem, str(info.value)
    assert "\n" not in str(info.value)


# --- given jobs: run_jobs, simulate_jobs, task_durations ---------------------------------

@pytest.mark.parametrize("arrival,job_class,job_tasks,options,field,problem", [
    ([1.0, 2.0], [0, 1_000_000], [2, 2], {}, "job_class", "must be a class 0 to 1"),
    ([1.0, 2.0], [0, 7], [2, 2], {}, "job_class", "got 7 (job 1)"),
    ([1.0, 2.0], [0, -1], [2, 2], {}, "job_class", "got -1 (job 1)"),
    ([1.0, 2.0], [0, 0.5], [2, 2], {}, "job_class", "must be integers"),
    ([1.0, 2.0, 3.0], [0, 1], [2, 2], {}, "job_class", "one entry per job (3"),
    ([1.0, 2.0], [0, 1], [2, 2, 2], {}, "job_tasks", "one entry per job (2"),
    ([1.0, 2.0], [0, 1], [0, 2], {}, "job_tasks", ">= 1 task per job, got 0 (job 0)"),
    ([1.0, 2.0], [0, 1], [2, -3], {}, "job_tasks", "got -3 (job 1)"),
    ([2.0, 1.0], [0, 1], [1, 1], {}, "arrival", "must be sorted: job 1 arrives at 1"),
    ([-2.0, 1.0], [0, 1], [1, 1], {}, "arrival", "must be >= 0"),
    ([1.0, np.nan], [0, 1], [1, 1], {}, "arrival", "must be finite"),
    ([1.0, np.inf], [0, 1], [1, 1], {}, "arrival", "must be finite"),
    ([1.0, 2.0], [0, 1], [1, 1], {"task_time": [-1.0, 1.0]}, "task_time",
     "must be >= 0, got -1 (task 0)"),
    ([1.0, 2.0], [0, 1], [1, 1], {"task_time": [1.0, np.nan]}, "task_time",
     "must be finite"),
    ([1.0, 2.0], [0, 1], [1, 1], {"task_time": [1.0, 2.0, 3.0]}, "task_time",
     "must hold 2 durations"),
    ([1.0, 2.0], [0, 1], [1, 1], {"seed": -1}, "seed", "must be an integer >= 0"),
    ([1.0, 2.0], [0, 1], [1, 1], {"seed": 2**63}, "seed", "<= 2^63 - 1"),
    ([1.0, 2.0], [0, 1], [1, 1], {"seed": 1.5}, "seed", "must be an integer"),
    ([1.0, 2.0], [0, 1], [1, 1], {"window": (5.0, 1.0)}, "window", "start <= end"),
    ([1.0, 2.0], [0, 1], [1, 1], {"window": (np.nan, 1.0)}, "window", "start <= end"),
    ([1.0, 2.0], [0, 1], [1, 1], {"n_samples": -1}, "n_samples", "integer >= 0"),
    ([1.0, 2.0], [0, 1], [1, 1], {"n_samples": 3, "sample_dt": 0.0}, "sample_dt",
     "must be positive"),
])
def test_bad_jobs_name_their_argument_before_the_kernel(arrival, job_class, job_tasks,
                                                        options, field, problem):
    """Each of these crashed the process (class 10^6), read outside the kernel's arrays
    (NaN), ran a job as another class (−1), never finished a job (0 tasks), finished a
    job before it arrived (a negative task time) or ran the clock backwards."""
    model = _model()
    _raises(field, problem, run_jobs, model, arrival, job_class, job_tasks, **options)
    _raises(field, problem, simulate_jobs, model, arrival, job_class, job_tasks,
            **options)


@pytest.mark.parametrize("job_class,job_tasks,seed,field,problem", [
    ([5], [3], 1, "job_class", "must be a class 0 to 1 (the model has 2), got 5"),
    ([0, 1], [3], 1, "job_tasks", "one entry per job (2, as job_class), got 1"),
    ([0], [0], 1, "job_tasks", ">= 1 task per job"),
    ([0], [3], -1, "seed", "must be an integer >= 0"),
])
def test_task_durations_checks_its_jobs(job_class, job_tasks, seed, field, problem):
    """task_durations([5], [3]) segfaulted (class 5 of a 2-class model)."""
    _raises(field, problem, task_durations, _model(), job_class, job_tasks, seed)


def test_valid_jobs_of_any_integer_or_whole_float_type_run_the_same():
    model = _model()
    a = run_jobs(model, [0.0, 1.0, 1.0], [0, 1, 0], [3, 2, 1], 4).finish
    b = run_jobs(model, np.array([0, 1, 1]), np.array([0.0, 1.0, 0.0]),
                 np.array([3, 2, 1], dtype=np.int32), np.int64(4)).finish
    np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(a))


# --- run_cluster and workload ---------------------------------------------------------

@pytest.mark.parametrize("args,field,problem", [
    ({"jobs": 0}, "jobs", "must be an integer >= 1, got 0"),
    ({"jobs": 10.5}, "jobs", "must be an integer"),
    ({"warmup": 1.0}, "warmup", "must be < 1"),
    ({"warmup": -0.1}, "warmup", "must be >= 0"),
    ({"warmup": np.nan}, "warmup", "must be finite"),
    ({"batches": 0}, "batches", "must be an integer >= 2"),
    ({"batches": 1}, "batches", "must be an integer >= 2"),
    ({"seed": -1}, "seed", "must be an integer >= 0"),
    ({"seed": 2**63}, "seed", "<= 2^63 - 1"),
])
def test_run_cluster_checks_its_arguments(args, field, problem):
    """jobs = 0 and warmup = 1 gave an IndexError, batches = 0 a raw ValueError,
    batches = 1 RuntimeWarnings and NaN, seed = −1 numpy's ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _raises(field, problem, run_cluster, _model(), **{"jobs": 100, **args})


def test_workload_checks_jobs_and_seed():
    _raises("jobs", "must be an integer >= 1", workload, _model(), -5, 1)
    _raises("seed", "must be an integer >= 0", workload, _model(), 5, -1)


def test_gamma_s_interval_is_the_ratio_estimator_s_and_never_below_zero():
    """γ_k = Σ work / Σ sojourn of the measured jobs times Tin's factor, with the
    delta-method interval over the batches (lugsail from 10 batches on; here 2 plain
    ones: :func:`mrfq.intervals.ratio_interval`), recomputed from the run's sojourns;
    where the half-width exceeds γ (heavy-tailed durations, two batches) the lower bound
    is 0, not a negative γ. (Before 2026-11-28 the interval was the mean sojourn's
    mapped through work / T, with γ_high = ∞ where it reached 0.)"""
    from mrfq.intervals import ratio_interval

    pareto = parse_size({"distribution": "pareto", "shape": 1.5})
    model = pooled_model([[1.0, 0.5], [0.5, 1.0]], [0.3, 0.3], NAME.DRF,
                         tasks_per_resource=4, mean_tasks=3, duration_law=pareto)
    run = run_cluster(model, 60, 1, 0.1, 2)
    measured = run.arrival >= run.arrival[int(0.1 * 60)]
    clipped = []
    for k in range(2):
        parts = np.array_split(run.sojourn[measured & (run.job_class == k)], 2)
        ci = ratio_interval(np.array([model.work[k] * b.size for b in parts]),
                            np.array([b.sum() for b in parts]), 0.95, correct_bias=True)
        assert run.gamma[k] == ci.estimate and run.gamma_high[k] == ci.high
        assert run.gamma_low[k] == max(ci.low, 0.0)
        clipped.append(ci.low < 0)
    assert any(clipped)  # seed 1: one class's interval reaches below 0


# --- the model: ClusterModel, pooled_model --------------------------------------------

@pytest.mark.parametrize("mean_tasks", [10.5, [10.0, 2.5]])
def test_fixed_tasks_need_a_whole_mean(mean_tasks):
    """A fixed-tasks job had round(m) tasks (banker's rounding) while its work and the
    rates used m: γ > 1 for a lone job."""
    _raises("mean_tasks", "fixed tasks need a whole number", pooled_model,
            [[1.0, 0.5], [0.5, 1.0]], [0.01, 0.01], NAME.DRF, tasks_per_resource=10,
            mean_tasks=mean_tasks, tasks="fixed", duration_law="fixed")
    _raises("mean_tasks", "fixed tasks need a whole number", ClusterModel,
            capacity=[[10.0, 10.0]], demand=[[1.0, 0.5], [0.5, 1.0]], policy=NAME.DRF,
            mean_tasks=np.broadcast_to(mean_tasks, (2,)), tasks="fixed")
    # a whole mean: every job has exactly m tasks
    model = pooled_model([[1.0, 0.5]], [0.01], NAME.DRF, tasks_per_resource=10,
                         mean_tasks=10.0, tasks="fixed")
    assert (workload(model, 20, 1)[2] == 10).all()


def test_mean_tasks_is_bounded_so_task_counts_stay_integers():
    """m = 1e20 fixed gave negative task counts (int64 overflow)."""
    for tasks in ("fixed", "geometric"):
        _raises("mean_tasks", "must be <= 2^53", pooled_model, [[1.0, 0.5]], [0.01],
                NAME.DRF, tasks_per_resource=10, mean_tasks=1e20, tasks=tasks)
    assert pooled_model([[1.0, 0.5]], [0.01], NAME.DRF, mean_tasks=2.0**53,
                        tasks="fixed").mean_tasks[0] == 2.0**53


@pytest.mark.parametrize("change,field,problem", [
    ({"capacity": [[np.nan, 1.0], [1.0, 1.0]]}, "capacity", "must be finite numbers, got nan"),
    ({"capacity": [[np.inf, 1.0], [1.0, 1.0]]}, "capacity", "must be finite numbers, got inf"),
    ({"capacity": [[1e308, 1.0], [1e308, 1.0]]}, "capacity", "(finite) capacity"),
    ({"demand": [[np.nan, 0.1]]}, "demand", "must be finite numbers, got nan"),
    ({"rates": [np.inf]}, "rates", "must be finite"),
    ({"rates": [-1.0]}, "rates", "must be >= 0"),
    ({"durations": [np.nan]}, "durations", "must be finite"),
    ({"weights": [np.inf]}, "weights", "must be finite"),
    ({"weights": [0.0]}, "weights", "must be positive"),
    ({"mean_tasks": [0.5]}, "mean_tasks", "must be >= 1"),
    ({"rates": [1.0, 2.0]}, "rates", "must be one number or 1 (one per class)"),
    ({"slots_per_server": 2.5}, "slots_per_server", "must be an integer"),
    ({"slots_per_server": 0}, "slots_per_server", "must be an integer >= 1"),
])
def test_cluster_model_refuses_non_finite_numbers_naming_them(change, field, problem):
    """A NaN capacity was accepted; an infinite one gave a ZeroDivisionError in the
    Best-Fit kernel; a NaN demand was "larger than every server"."""
    base = {"capacity": [[1.0, 1.0], [1.0, 1.0]], "demand": [[0.1, 0.1]],
            "policy": NAME.DRFH_BEST_FIT, "rates": [1.0]}
    _raises(field, problem, ClusterModel, **{**base, **change})


@pytest.mark.parametrize("change,field,problem", [
    ({"loads": [0.3]}, "loads", "must be one number or 2 (one per class), got shape (1,)"),
    ({"loads": [0.3, 0.3, 0.3]}, "loads", "got shape (3,)"),
    ({"loads": [0.3, -0.1]}, "loads", "must be >= 0, got -0.1 (class 2)"),
    ({"loads": [0.3, np.nan]}, "loads", "must be finite"),
    ({"mean_tasks": [1, 2, 3]}, "mean_tasks", "got shape (3,)"),
    ({"mean_tasks": 0}, "mean_tasks", "must be >= 1, got 0"),
    ({"mean_tasks": np.inf}, "mean_tasks", "must be finite"),
    ({"duration": 0}, "duration", "must be positive, got 0"),
    ({"duration": -1}, "duration", "must be positive, got -1"),
    ({"duration": [1.0, 2.0, 3.0]}, "duration", "got shape (3,)"),
    ({"tasks_per_resource": 0.5}, "tasks_per_resource", "must be >= 1"),
    ({"tasks_per_resource": np.nan}, "tasks_per_resource", "must be finite"),
    ({"requirements": [[0.1, np.nan], [1.0, 0.1]]}, "requirements", "must be finite"),
    ({"requirements": [[0.0, 0.0], [1.0, 0.1]]}, "requirements", "some resource > 0"),
])
def test_pooled_model_checks_each_argument_naming_it(change, field, problem):
    """loads = [0.3] with two classes was broadcast silently; three loads or three
    mean_tasks a numpy broadcast error; mean_tasks = 0 or duration = 0, −1 blamed the
    rates."""
    args = {"requirements": [[0.1, 1.0], [1.0, 0.1]], "loads": [0.3, 0.3],
            "mean_tasks": 20, "duration": 1.0, "tasks_per_resource": 10, **change}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _raises(field, problem, pooled_model, args.pop("requirements"), args.pop("loads"),
                NAME.DRF, **args)


def test_pooled_model_takes_one_number_or_one_per_class_alike():
    one = pooled_model([[0.1, 1.0], [1.0, 0.1]], 0.3, NAME.DRF, mean_tasks=20, duration=2)
    each = pooled_model([[0.1, 1.0], [1.0, 0.1]], [0.3, 0.3], NAME.DRF,
                        mean_tasks=[20, 20], duration=[2.0, 2.0])
    for name in ("rates", "mean_tasks", "durations"):
        np.testing.assert_array_equal(getattr(one, name), getattr(each, name))


# --- servers, synthetic and loaded traces ----------------------------------------------

def test_google_like_checks_its_arguments():
    """google_like(0, 1) gave an IndexError, rate = 0 a ZeroDivisionError."""
    _raises("jobs", "must be an integer >= 1", google_like, 0, 1)
    _raises("rate", "must be positive", google_like, 5, 1, rate=0)
    _raises("rate", "must be finite", google_like, 5, 1, rate=np.nan)
    _raises("seed", "must be an integer >= 0", google_like, 5, -1)


def test_draw_servers_takes_the_bundled_table_names_and_checks_its_counts():
    """draw_servers(5, 1, "google") said "no such server table file"; n = −1 gave
    numpy's ValueError."""
    np.testing.assert_array_equal(draw_servers(5, 1, "google"), draw_servers(5, 1))
    np.testing.assert_array_equal(draw_servers(5, 1, TABLES["google"]),
                                  draw_servers(5, 1))
    _raises("n", "must be an integer >= 1, got -1", draw_servers, -1, 1)
    _raises("n", "must be an integer", draw_servers, 2.5, 1)
    _raises("seed", "must be an integer >= 0, got -1", draw_servers, 5, -1)
    _raises("table", "unknown table 'gogle' (names: google", draw_servers, 5, 1, "gogle")


EMPTY = Trace(np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
              np.zeros((1, 2)), np.zeros(0, np.int64))


def test_an_empty_trace_or_bad_batches_name_the_argument():
    """An empty Trace said "rates: must be 1 non-negative numbers" (or an IndexError);
    batches = 0 gave a raw ValueError."""
    _raises("trace", "holds no job", run_trace, EMPTY, [[1.0, 1.0]], NAME.DRF)
    _raises("trace", "holds no job", trace_summary, EMPTY, [[1.0, 1.0]], NAME.DRF)
    trace = google_like(30, 1)
    _raises("batches", "must be an integer >= 2", trace_summary, trace,
            draw_servers(5, 1), NAME.DRFH_BEST_FIT, batches=0)


def test_a_directory_is_not_a_trace_file(tmp_path):
    with pytest.raises(InputError) as info:
        load_task_events(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory, not a trace file"


def _events(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "t.csv"
    path.write_text("".join(f"{row}\n" for row in rows))
    return path


def _row(t, job, index, event, cpu="0.1", mem="0.2"):
    return f"{t},,{job},{index},3,{event},u1,2,4,{cpu},{mem},0.001,0"


def test_finished_tasks_without_a_request_are_dropped_and_counted_apart(tmp_path):
    """Job 1 task 0: kept. Task 1: finishes with CPU and memory 0. Task 2: finishes
    with blank requests. Task 3: killed (never finishes). dropped = 3 (the tasks not
    kept), of them unrequested = 2."""
    rows = [_row(1, 1, 0, 1), _row(5_000_000, 1, 0, 4),
            _row(1, 1, 1, 1, "0", "0"), _row(6_000_000, 1, 1, 4, "0", "0"),
            _row(1, 1, 2, 1, "", ""), _row(7_000_000, 1, 2, 4, "", ""),
            _row(1, 1, 3, 1), _row(8_000_000, 1, 3, 5)]
    trace = load_task_events(_events(tmp_path, rows))
    np.testing.assert_array_equal(trace.job_tasks, [1])
    assert (trace.dropped, trace.unrequested) == (3, 2)


def _loader_refuses(tmp_path, rows, message):
    """The trace of ``rows`` is refused with exactly ``message`` ({path}: its file)."""
    path = _events(tmp_path, rows)
    with pytest.raises(InputError) as info:
        load_task_events(path)
    assert str(info.value) == message.format(path=path)


def test_a_trace_with_no_requested_finished_task_says_so(tmp_path):
    """Every finished task with CPU and memory 0 or blank: it said "holds no task that
    finishes" (kinds/cluster.py), now the loader says what it found."""
    rows = [_row(1, 1, 0, 1, "0", "0"), _row(5_000_000, 1, 0, 4, "0", "0"),
            _row(1, 1, 1, 1, "", ""), _row(5_000_000, 1, 1, 4, "", ""),
            _row(1, 2, 0, 1), _row(5_000_000, 2, 0, 5)]
    _loader_refuses(tmp_path, rows, (
        "{path}: holds no finished task with a CPU and memory request (3 tasks: "
        "1 never finishing, 2 finishing without one or with both 0)"))
    _raises(None, "holds no task event", load_task_events, _events(tmp_path, []))


def test_rows_out_of_time_order_are_an_error_not_a_lost_task(tmp_path):
    """A FINISH row above its task's SCHEDULE row (earlier in the file, later in time)
    ended nothing, and the SCHEDULE then started a run that never ended: the task was
    dropped silently."""
    rows = [_row(0, 1, 0, 1), _row(5_000_000, 1, 0, 4),
            _row(9_000_000, 2, 0, 4), _row(2_000_000, 2, 0, 1)]
    _loader_refuses(tmp_path, rows, (
        "{path}: row 4, timestamp: SCHEDULE at 2000000 µs comes after an event of the "
        "same task at 9000000 µs (job 2, task 0): the rows must be in time order"))


def test_a_zero_length_trace_window_has_nan_utilisation_without_a_warning():
    """Every job arriving at 0 with 0-s tasks: busy 0 over a window of length 0 printed
    "RuntimeWarning: invalid value encountered in divide"; now NaN, silently (the
    docstring says so)."""
    trace = Trace(np.zeros(3), np.zeros(3, np.int64), np.ones(3, np.int64), np.zeros(3),
                  np.array([[0.1, 0.1]]), np.arange(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = trace_summary(trace, [[1.0, 1.0]], NAME.DRF, batches=2)
    assert np.isnan(out["utilisation"]).all() and out["utilisation"].shape == (2,)
    assert out["makespan"] == 0.0 and out["jct_mean"] == 0.0
