"""``[cluster]`` at the extremes (a numeric review of issue 24): SIGTERM and Ctrl-C waited
for the cluster kernel's whole run; task durations of 1e154 or 1e-200 gave intervals
[0, inf] or of width 0, and 1e308 or 1e-320 an error naming no field of the file (1e308
after the sweep had started); a CDF point at 1.7e308 (a tasks law) gave jobs of -2^63 tasks, a
server table's capacity of 1e308 blamed ``tasks_per_resource``, and a load axis on a
resource no class uses printed RuntimeWarnings. Each input is now one line naming the
file and field, exit 2, before any work; the signals stop the kernel at its next event."""

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_cluster_refuses

from mrfq import console, policies
from mrfq.cluster import pooled_model, run_cluster
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parent.parent
linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

SCENARIO = """name = "extremes"
resources = ["cpu", "mem"]
[[classes]]
name = "a"
requirements = [1.0, 0.4]
load_share = 1
[[classes]]
name = "b"
requirements = [0.3, 1.0]
load_share = 1
[load]
values = [0.3]
[fluid]
policies = ["drf"]
[cluster]
policies = ["drf"]
tasks_per_resource = 6
"""


def _raw(classes=None, load=None, **cluster):
    return {"resources": ["cpu", "mem"],
            "classes": classes or [
                {"name": "a", "requirements": [1.0, 0.4], "load_share": 1},
                {"name": "b", "requirements": [0.3, 1.0], "load_share": 1}],
            "load": load or {"values": [0.5]},
            "cluster": {"policies": ["drf"], "tasks_per_resource": 6, "jobs": 400,
                        "mean_tasks": 20, **cluster}}


def _refused(raw, field, starts, source="s.toml"):
    """One InputError naming ``source`` and ``field``, and not one warning on the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a RuntimeWarning is output before the error)
        with pytest.raises(InputError) as info:
            scenario_from_dict(raw, "s.toml")
    assert str(info.value).startswith(f"{source}: {field}: {starts}"), str(info.value)
    assert "\n" not in str(info.value)


# --- interrupts ------------------------------------------------------------------------

#: seconds of one kernel call (1000 jobs, 2·10^7 tasks): running when signalled
LONG = dict(requirements=[[1.0, 0.4], [0.3, 1.0]], loads=[0.15, 0.15],
            policy=policies.named(policies.CLUSTER).DRF, tasks_per_resource=6,
            mean_tasks=20000)


def test_sigterm_inside_the_kernel_stops_it_at_once():
    """The kernel is one compiled call per run: Python runs signal handlers between
    bytecodes only, so SIGTERM (and Ctrl-C) waited for the run's end, then came out as a
    SystemError from the call's return."""
    model = pooled_model(**LONG)
    run_cluster(model, 20, 1, 0.1, 2)  # compiled (or loaded) before the signal
    def terminated(signum, frame):
        raise console.Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        start = time.perf_counter()
        timer.start()
        with pytest.raises(console.Terminated):
            run_cluster(model, 1000, 1, 0.1, 10)
        assert time.perf_counter() - start < 3.0
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)


def test_interruptible_gives_the_kernels_result_or_its_error():
    from mrfq.executor import interruptible

    seen = []

    def kernel(x, stop):
        seen.append((threading.current_thread() is threading.main_thread(), stop.tolist()))
        if x < 0:
            raise ValueError("negative")
        return 2 * x

    assert interruptible(kernel, 21) == 42
    with pytest.raises(ValueError, match="negative"):
        interruptible(kernel, -1)
    assert seen[0] == (False, [0])  # in a thread of its own, told nothing yet
    out = []
    worker = threading.Thread(target=lambda: out.append(interruptible(kernel, 1)))
    worker.start()
    worker.join()
    assert out == [2] and seen[-1] == (False, [0])  # outside the main thread: in place


@pytest.mark.slow
@linux
def test_sigterm_stops_a_cluster_sweep_promptly_and_keeps_finished_points(tmp_path):
    """``mrfq cluster --jobs 1``: SIGTERM during a cluster point (about 50 s of kernel)
    ended the command only once the point's run was over; now at once, with the finished
    (fluid) point kept for the next run and nothing of the interrupted one written. (The
    bound, 10 s, leaves room for a loaded machine: 3 s failed once beside a CI run.)"""
    from mrfq.sweeps import run_sweep

    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + "mean_tasks = 100000\njobs = 2000\n")
    res = tmp_path / "res"
    run_sweep(str(path), res, jobs=1, kinds=(policies.FLUID,), record=False)
    (kept,) = (res / "points").iterdir()
    err = tmp_path / "err.txt"
    with open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "mrfq", "cluster", str(path), "-o",
                                 str(res), "--jobs", "1"], cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(ROOT)},
                                stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.time() + 120
        while "to compute" not in err.read_text() and time.time() < deadline:
            time.sleep(0.1)
        assert "2 points, 1 already done, 1 to compute" in err.read_text()
        time.sleep(3)  # past the compile (or cache load): inside the kernel
        start = time.time()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        elapsed = time.time() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.read_text()
    assert proc.returncode == 143, text
    assert text.splitlines()[-1] == ("interrupted by SIGTERM (finished points are kept; run "
                                     "again to resume)"), text
    assert elapsed < 10.0, f"stopped {elapsed:.1f} s after SIGTERM"
    assert list((res / "points").iterdir()) == [kept]


# --- durations ---------------------------------------------------------------------------

@pytest.mark.parametrize("cluster,field,got", [
    ({"duration": 1e154}, "cluster.duration", "1e+154"),     # interval [0, inf]
    ({"duration": 1e-200}, "cluster.duration", "1e-200"),    # interval of width 0
    ({"duration": 1e308}, "cluster.duration", "1e+308"),     # "classes: no class has ..."
    ({"duration": 1e-320}, "cluster.duration", "9.99989e-321"),  # "rates: must be finite"
    ({"duration": {"b": 1e101}}, "cluster.duration.b", "1e+101"),
    ({"duration": {"a": 9e-101}}, "cluster.duration.a", "9e-101"),
])
def test_durations_beyond_float64s_reach_are_refused_when_read(cluster, field, got):
    _refused(_raw(**cluster), field, f"must be between 1e-100 and 1e+100 (durations are "
             f"relative: scale them), got {got}")


def test_durations_at_the_bounds_give_the_same_run_as_one():
    """Time is in the durations' unit: at 1e-100 and 1e100 (the bounds, accepted) the run
    is the one of d = 1 scaled, with finite intervals of the same width relative to γ."""
    runs = []
    for d in (1e-100, 1.0, 1e100):
        scenario_from_dict(_raw(duration=d), "s.toml")  # accepted
        model = pooled_model([[1.0, 0.4], [0.3, 1.0]], [0.25, 0.25], "drf",
                             tasks_per_resource=6, mean_tasks=20, duration=d)
        runs.append(run_cluster(model, 400, 1, 0.1, 10))
    for run in runs:
        assert np.all(np.isfinite(run.gamma_high)) and np.all(run.gamma_high > run.gamma_low)
        np.testing.assert_allclose(run.gamma, runs[1].gamma, rtol=1e-9)
        np.testing.assert_allclose(run.gamma_low, runs[1].gamma_low, rtol=1e-9)
        np.testing.assert_allclose(run.gamma_high, runs[1].gamma_high, rtol=1e-9)


@pytest.mark.parametrize("duration", [1e308, 1e-320])
def test_pooled_model_refuses_the_same_durations(duration):
    with pytest.raises(InputError) as info:
        pooled_model([[1.0, 0.4]], [0.3], "drf", tasks_per_resource=6, duration=duration)
    assert info.value.field == "duration"


# --- table laws, server tables, load axis, batches ---------------------------------------

@pytest.mark.parametrize("where,field", [
    ({"tasks": {"distribution": "cdf", "points": [[1.0, 0.5], [1.7e308, 1.0]]}},
     "cluster.tasks.points"),
    ({"duration_law": {"distribution": "cdf", "points": [[1.0, 0.5], [1e120, 1.0]]}},
     "cluster.duration_law.points"),
    ({"duration_law": {"b": {"distribution": "cdf", "rescale": False,
                             "points": [[1e-200, 0.5], [2e-200, 1.0]]}}},
     "cluster.duration_law.b.points"),
])
def test_table_laws_whose_moments_overflow_are_refused(where, field):
    """A CDF point at 1.7e308 made the law's mean NaN: the tasks law then drew jobs of
    -2^63 tasks (`job_tasks: must be >= 1 task per job`, after the sweep had started),
    the durations law NaN arrival rates; sizes of 1e-200 squared to 0 (a wrong mean).
    The sizes as used (over their mean, unless rescale = false) lie in [1e-100, 1e100]."""
    _refused(_raw(**where), field, "sizes ")
    with pytest.raises(InputError, match=r"must lie in \[1e-100, 1e100\]"):
        scenario_from_dict(_raw(**where), "s.toml")


def test_a_class_size_table_and_an_empirical_file_have_the_same_range(tmp_path):
    big = {"distribution": "cdf", "points": [[1.0, 0.5], [1.7e308, 1.0]]}
    classes = [{"name": "a", "requirements": [1.0, 0.4], "load_share": 1, "size": big}]
    _refused(_raw(classes), "classes[0].size.points", "sizes divided by their mean must lie")
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("1\n2\n1.7e308\n")
    _refused(_raw(duration_law={"distribution": "empirical", "file": str(sizes)}),
             "cluster.duration_law.file", "sizes divided by their mean must lie in "
             "[1e-100, 1e100]")


@pytest.mark.parametrize("capacity", ["1e308", "1e-300"])
def test_a_server_table_files_capacities_are_bounded_as_listed_servers(tmp_path, capacity):
    """A table row of 1e308 overflowed the pool's total: every task 'larger than every
    server', blaming cluster.tasks_per_resource; 1e-300 ran (listed: refused)."""
    table = tmp_path / "servers.csv"
    table.write_text(f"servers,cpu,mem\n3,{capacity},{capacity}\n1,0.5,2.0\n")
    _refused(_raw(servers={"table": str(table), "count": 10, "seed": 1}), "row 2, cpu",
             f"must be between 1e-06 and 1e+09 (capacities are relative: scale them), got "
             f"{capacity}", source=str(table))


def test_a_load_axis_no_class_loads_is_refused_without_warnings():
    """Its load, 0, divided the class loads (RuntimeWarnings, then an error naming
    load.values[0] with a load 'inf')."""
    classes = [{"name": "a", "requirements": [1.0, 0.4, 0.0], "load_share": 1},
               {"name": "b", "requirements": [0.3, 1.0, 0.5], "load_share": 0}]
    raw = {**_raw(classes, load={"axis": "disk", "values": [0.5]}),
           "resources": ["cpu", "mem", "disk"]}
    _refused(raw, "load.axis", "no class with a positive load_share uses resource 'disk'")


def test_too_many_batches_name_batches_and_too_few_jobs_name_jobs():
    """Both blamed cluster.warmup (even at its default, or 0)."""
    _refused(_raw(batches=1000, warmup=0), "cluster.batches",
             "must be <= 200 (2 measured jobs per batch: 400 of the 400 jobs after the "
             "warm-up), got 1,000")
    _refused(_raw(jobs=10), "cluster.jobs", "must be >= 22 (2 measured jobs per batch, 10 "
             "batches, after the warm-up 0.1), got 10")
    _refused(_raw(warmup=0.99), "cluster.warmup", "leaves fewer than 20 jobs")


@pytest.mark.parametrize("jobs, cluster, field", [
    (10, {}, "cluster.jobs"), (37, {"batches": 20}, "cluster.batches"),
    (1000, {"batches": 600}, "cluster.batches"), (401, {"batches": 900, "warmup": 0.25},
                                                  "cluster.batches"),
    (5, {"batches": 3, "warmup": 0.0}, "cluster.batches"), (3, {}, "cluster.jobs")])
def test_the_stated_bound_on_jobs_or_batches_is_accepted(jobs, cluster, field):
    """The number a batches or jobs error states is itself accepted (the first version
    ignored the warm-up: jobs = 20 then failed on cluster.warmup, batches = 500 too)."""
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(jobs=jobs, **cluster), "s.toml")
    assert info.value.field == field
    text = str(info.value).split("must be >= " if field == "cluster.jobs" else "must be <= ")
    stated = int(text[1].split(" ")[0].replace(",", ""))
    if field == "cluster.jobs":
        scenario_from_dict(_raw(**{**cluster, "jobs": stated}), "s.toml")
        with pytest.raises(InputError):  # (and it is the least)
            scenario_from_dict(_raw(**{**cluster, "jobs": stated - 1}), "s.toml")
    else:
        scenario_from_dict(_raw(jobs=jobs, **{**cluster, "batches": max(stated, 2)}),
                           "s.toml")


def test_task_times_of_a_duration_and_an_unscaled_table_are_bounded():
    """d = 1e100 and a rescale = false table at 1e100, each within its range, made task
    times of 1e200: the interval [0, inf]."""
    law = {"distribution": "cdf", "points": [[1e99, 0.0], [1e100, 1.0]], "rescale": False}
    _refused(_raw(duration=1e100, duration_law=law), "cluster.duration_law",
             "task durations d × size reach 1e+199..1e+200 with d = 1e+100")
    _refused(_raw(duration=1e100, duration_law={"b": law}), "cluster.duration_law.b",
             "task durations")
    scenario_from_dict(_raw(duration=1e-99, duration_law=law), "s.toml")  # 1e0..1e1
    scenario_from_dict(_raw(duration=1e100, duration_law={**law, "rescale": True}), "s.toml")


# --- the command line: one line, exit 2, nothing written ---------------------------------

@pytest.mark.parametrize("extra,line", [
    ("duration = 1e308\n", "cluster.duration: must be between 1e-100 and 1e+100 "
     "(durations are relative: scale them), got 1e+308"),
    ('tasks = {distribution = "cdf", points = [[1.0, 0.5], [1.7e308, 1.0]]}\n',
     "cluster.tasks.points: sizes divided by their mean must lie in [1e-100, 1e100], got "
     "2.35e-308..4"),
])
def test_the_command_line_refuses_them_in_one_line(tmp_path, extra, line):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + extra)
    assert_cluster_refuses(path, f"error: {path}: {line}")


def test_the_command_line_names_the_table_file_and_the_load_axis(tmp_path):
    (tmp_path / "big.csv").write_text("servers,cpu,mem\n3,1e308,1e308\n1,0.5,2.0\n")
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + 'servers = { table = "big.csv", count = 10, seed = 1 }\n')
    assert_cluster_refuses(path, f"error: {tmp_path / 'big.csv'}: row 2, cpu: must be "
                           "between 1e-06 and 1e+09 (capacities are relative: scale them), "
                           "got 1e308")
    path.write_text(SCENARIO.replace('["cpu", "mem"]', '["cpu", "mem", "disk"]')
                    .replace("[1.0, 0.4]", "[1.0, 0.4, 0]").replace("[0.3, 1.0]", "[0.3, 1.0, 0]")
                    .replace("[load]\n", '[load]\naxis = "disk"\n'))
    assert_cluster_refuses(path, f"error: {path}: load.axis: no class with a positive "
                           "load_share uses resource 'disk': its load is 0 whatever the "
                           "value; choose a resource some class uses, or max")
