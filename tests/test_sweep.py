"""Sweeps: resume after SIGKILL, worker-count independence, Dask, validate, plots."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mrfq.sweeps import POINTS_DIR, run_sweep

TINY = """
name = "tiny"
description = "tiny sweep for tests"
resources = ["cpu", "link"]
[[classes]]
name = "1"
requirements = [0.1, 1.0]
load_share = 4
[[classes]]
name = "2"
requirements = [1.0, 0.1]
load_share = 1
[[classes]]
name = "3"
requirements = [1.0, 1.0]
load_share = 1
[load]
axis = "link"
values = [LOADS]
[fluid]
policies = ["drf", "pf", "bmf"]
[packet]
policies = ["drfq", "bmf"]
mean_size = MEAN
window = 5
flows = FLOWS
replications = 2
seed = 4
"""


def tiny(tmp_path, loads="0.3, 0.6", mean=20, flows=400) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.replace("LOADS", loads).replace("MEAN", str(mean))
                    .replace("FLOWS", str(flows)))
    return path


def cli(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", *args], capture_output=True,
                          text=True, **kwargs)


def test_jobs_1_and_2_give_identical_results(tmp_path):
    scenario = tiny(tmp_path)
    one = run_sweep(scenario, tmp_path / "one", jobs=1)
    two = run_sweep(scenario, tmp_path / "two", jobs=2)
    # exactly: fluid and packet values bit for bit (the fluid solver pins BLAS threads)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert set(one["kind"]) == {"fluid", "packet"}
    assert len(one) == (3 * 2 + 2 * 2) * 3  # fluid (3 policies) + packet (2), 2 loads
    # a second run recomputes nothing
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "one" / POINTS_DIR).iterdir()}
    again = run_sweep(scenario, tmp_path / "one", jobs=1)
    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "one" / POINTS_DIR).iterdir()}
    assert before == after
    pd.testing.assert_frame_equal(one, again, check_exact=True)


def _edited(change):
    return lambda text: json.dumps(change(json.loads(text))).encode()


@pytest.mark.parametrize("damage", [
    lambda text: b'{"kind": "packet", "pol', lambda text: b"[1, 2]", lambda text: b"\xff\xfe",
    # valid JSON, not a whole record (a review: KeyError tracebacks, exit 3)
    _edited(lambda r: {"kind": r["kind"]}),
    _edited(lambda r: {k: v for k, v in r.items() if k != "classes"}),
    _edited(lambda r: {**r, "classes": []}),
    _edited(lambda r: {**r, "classes": r["classes"][:-1]}),
    _edited(lambda r: {**r, "classes": [{k: v for k, v in c.items() if k != "flows_measured"}
                                        for c in r["classes"]]}),
    _edited(lambda r: {**r, "replication": r["replication"] + 1}),
])
def test_a_damaged_point_file_is_computed_again_or_named(tmp_path, damage):
    """A truncated or edited point file (mrfq writes atomically, but an OS crash or a
    hand can still leave one) was a JSONDecodeError traceback, exit 3, on resume; one
    that is JSON but not a whole record of its point, a KeyError traceback."""
    from mrfq.errors import InputError
    from mrfq.scenario import load_scenario
    from mrfq.sweeps import load_records

    scenario = tiny(tmp_path, loads="0.3")
    results = tmp_path / "res"
    first = run_sweep(scenario, results, jobs=1)
    victim = sorted((results / POINTS_DIR).glob("packet-*"))[0]
    victim.write_bytes(damage(victim.read_text()))
    # reading the directory names the file
    with pytest.raises(InputError, match="not a point record") as info:
        load_records(load_scenario(scenario), results)
    assert info.value.source == str(victim)
    # a sweep computes it again, says so, and gives the same numbers
    said = []
    again = run_sweep(scenario, results, jobs=1, log=said.append)
    assert said[0] == ("1 stored point file(s) not a point record, computed again: "
                       + victim.name)
    assert said[1].endswith("1 to compute")
    json.loads(victim.read_text())
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_resume_after_sigkill(tmp_path):
    scenario = tiny(tmp_path, loads="0.2, 0.4, 0.6, 0.8", mean=100, flows=3000)
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "mrfq.cli", "sweep", str(scenario),
                             "-o", str(killed), "--jobs", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    points = killed / POINTS_DIR

    def stored():
        # a kill during a write may leave a hidden temporary file, which loading ignores
        return [p for p in points.glob("*.json") if not p.name.startswith(".")]

    deadline = time.time() + 120
    while time.time() < deadline:
        if points.exists() and len(stored()) >= 2:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in stored()}
    total = 4 * 3 + 4 * 2 * 2
    assert 2 <= len(finished) < total, "the sweep must be killed mid-way"
    resumed = run_sweep(scenario, killed, jobs=1)
    for name, mtime in finished.items():  # nothing finished was recomputed
        assert (points / name).stat().st_mtime_ns == mtime
    assert len(stored()) == total
    clean = run_sweep(scenario, tmp_path / "clean", jobs=2)
    pd.testing.assert_frame_equal(resumed, clean, check_exact=True)


def test_dask_workers_in_another_directory_match_local(tmp_path, monkeypatch):
    """Workers get the scenario object, not its path: a cluster whose workers run in a
    directory where the (relative) scenario path does not exist gives the same results."""
    distributed = pytest.importorskip("distributed")
    main, elsewhere = tmp_path / "main", tmp_path / "elsewhere"
    main.mkdir()
    elsewhere.mkdir()
    tiny(main, loads="0.5")
    monkeypatch.chdir(main)
    local = run_sweep("tiny.toml", "local", jobs=1)
    monkeypatch.chdir(elsewhere)  # the workers are spawned here
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        monkeypatch.chdir(main)
        remote = run_sweep("tiny.toml", "dask", scheduler=cluster.scheduler_address)
    pd.testing.assert_frame_equal(local, remote, check_exact=True)
    # byte for byte: the summary file; every point file but its wall-clock time
    assert (main / "local" / "summary.csv").read_bytes() == (
        main / "dask" / "summary.csv").read_bytes()
    points = sorted(p.relative_to(main / "local") for p in (main / "local" / "points").iterdir())
    assert points
    for point in points:
        here, there = (json.loads((main / side / point).read_text()) for side in ("local", "dask"))
        here.pop("wall_s", None)
        there.pop("wall_s", None)
        assert here == there, point


def test_validate_exit_codes_and_plots(tmp_path):
    scenario = tiny(tmp_path, loads="0.4")
    results = tmp_path / "res"
    assert cli("sweep", str(scenario), "-o", str(results), "--jobs", "2").returncode == 0
    ok = cli("validate", str(results), "--tolerance", "0.5")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    table = pd.read_csv(results / "validation.csv")
    assert {"policy", "load", "class", "fluid_gamma", "packet_gamma", "ci_low", "ci_high",
            "relative_difference", "passed"} <= set(table.columns)
    # validation reads the summary the sweep wrote: break its fluid BMF reference
    summary = pd.read_csv(results / "summary.csv")
    fluid_bmf = (summary["kind"] == "fluid") & (summary["policy"] == "bmf")
    summary.loc[fluid_bmf, "gamma"] *= 3
    summary.to_csv(results / "summary.csv", index=False)
    bad = cli("validate", str(results), "--tolerance", "0.05")
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout
    out = tmp_path / "fig.png"
    drawn = cli("plot", str(results), "-o", str(out))
    assert drawn.returncode == 0, drawn.stderr
    assert out.stat().st_size > 10_000 and not out.with_suffix(".pdf").exists()  # -o: PNG
    assert cli("plot", str(results), "-o", str(out), "--format", "png,pdf").returncode == 0
    assert out.with_suffix(".pdf").stat().st_size > 0
    assert (tmp_path / "fig_fluid.png").exists()
    assert (tmp_path / "fig_delays.png").stat().st_size > 10_000
    # the sweep wrote the delay columns and the size-bin table
    assert {"p99_sojourn", "mean_packet_sojourn", "jain_index", "jain_overall",
            "utilisation_link", "mean_slowdown"} <= set(summary.columns)
    packet = summary[summary["kind"] == "packet"]
    assert (packet["p50_sojourn"] <= packet["p99_sojourn"]).all()
    bins = pd.read_csv(results / "size_bins.csv")
    assert {"policy", "load", "class", "size_low", "size_high", "flows", "mean_fct",
            "mean_slowdown"} <= set(bins.columns)
    assert bins.groupby(["policy", "class"])["flows"].sum().eq(
        packet.set_index(["policy", "class"])["flows_measured"]).all()


def test_sweep_rejects_bad_input(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.replace("LOADS", "1.5").replace("MEAN", "20").replace("FLOWS", "10"))
    result = cli("sweep", str(bad), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and result.stderr.startswith("error: ")
    assert not (tmp_path / "out").exists()
    result = cli("validate", str(tmp_path / "nowhere"))
    assert result.returncode == 2


def test_editing_description_or_adding_a_load_keeps_finished_points(tmp_path):
    scenario = tiny(tmp_path, loads="0.3")
    results = tmp_path / "res"
    run_sweep(scenario, results, jobs=1)
    before = {p.name: p.stat().st_mtime_ns for p in (results / POINTS_DIR).iterdir()}
    text = scenario.read_text().replace('description = "tiny sweep for tests"',
                                        'description = "edited"')
    scenario.write_text(text.replace("values = [0.3]", "values = [0.3, 0.5]"))
    summary = run_sweep(scenario, results, jobs=1)
    after = {p.name: p.stat().st_mtime_ns for p in (results / POINTS_DIR).iterdir()}
    assert {name: after[name] for name in before} == before  # none recomputed
    assert len(after) == 2 * len(before)  # the new load's points were added
    assert sorted(set(summary["load"])) == [0.3, 0.5]
    # a change that does alter the numbers (the seed) computes new packet points only
    scenario.write_text(scenario.read_text().replace("seed = 4", "seed = 5"))
    run_sweep(scenario, results, jobs=1)
    added = set(p.name for p in (results / POINTS_DIR).iterdir()) - set(after)
    assert added and all(name.startswith("packet-") for name in added)


@pytest.mark.slow
def test_fluid_solver_result_does_not_depend_on_the_callers_blas_threads():
    """The parent process (default BLAS threads) and a worker (one thread) must compute
    the same bits: at load 0.9 (2·10^5 states) unpinned BLAS differs in the 12th digit."""
    from threadpoolctl import threadpool_limits

    from mrfq.fluid.markov import service_rates
    from mrfq.scenario import load_scenario

    scenario = load_scenario("fig3_quick")
    rho = scenario.class_loads(0.9)
    with threadpool_limits(limits=2):
        two = service_rates("pf", scenario.requirements, rho)
    with threadpool_limits(limits=1):
        one = service_rates("pf", scenario.requirements, rho)
    assert one.gamma.tolist() == two.gamma.tolist()


@pytest.mark.parametrize("entry", ["compute_point", "run_point"])
def test_a_packet_point_does_not_depend_on_the_callers_blas_threads(entry):
    """`--jobs 1` computes in the calling process (BLAS on every core), a worker with one
    BLAS thread, and `mrfq simulate` in the caller: a point's record must be the same bits
    in all (a replication of over 10^4 flows per class summed Σ x² through a threaded BLAS
    dot product, and its Jain index differed in the last digit between --jobs 1 and 2)."""
    from threadpoolctl import threadpool_limits

    from mrfq.kinds import Point, compute_point
    from mrfq.kinds.packet import run_point
    from mrfq.scenario import load_scenario

    scenario = load_scenario("quickstart").with_overrides(flows=40000, mean_size=20)

    def record():
        if entry == "compute_point":
            out = compute_point(scenario, Point("packet", "bmf", 0.6, 0))
        else:
            out = run_point(scenario, "bmf", 0.6, 0)[0]
        out.pop("wall_s")
        return out

    with threadpool_limits(limits=4):
        many = record()
    with threadpool_limits(limits=1):
        one = record()
    assert many == one


def test_a_changed_summary_drops_what_was_derived_from_the_old_one(tmp_path):
    """A sweep of an edited scenario into a run's directory replaced the summary but kept
    the old validation.csv, whose failed points `mrfq plot` then ringed on the new ones
    (and size_bins.csv of packet points the new scenario does not have)."""
    from mrfq.pipeline import VALIDATION_FILE, validate

    scenario, results = tiny(tmp_path, loads="0.5"), tmp_path / "res"
    run_sweep(scenario, results, jobs=1)
    validate(results)
    run_sweep(scenario, results, jobs=1)  # the same summary: its validation holds
    assert (results / VALIDATION_FILE).is_file()
    assert (results / "size_bins.csv").is_file()
    scenario.write_text(scenario.read_text().replace("seed = 4", "seed = 5"))
    run_sweep(scenario, results, jobs=1)
    assert not (results / VALIDATION_FILE).exists()
    validate(results)
    # a sweep of some kinds only (as `mrfq cluster` runs) keeps the directory's other
    # points in its summary: the same summary, so what was derived from it holds
    run_sweep(scenario, results, jobs=1, kinds=("fluid",))
    assert (results / VALIDATION_FILE).is_file()
    assert (results / "size_bins.csv").is_file()


def test_partial_fluid_sweep_leaves_the_directory_summary_alone(tmp_path):
    """`mrfq fluid --loads` into a run's directory caches its points there but must not
    replace the run's scenario and summary."""
    from mrfq import pipeline

    scenario = tiny(tmp_path, loads="0.3")
    results = tmp_path / "res"
    run_sweep(scenario, results, jobs=1)
    summary = (results / "summary.csv").read_bytes()
    stored = (results / "scenario.json").read_bytes()
    table = pipeline.fluid(scenario, results, loads=[0.5], policies=["pf", "PF"])
    assert sorted(set(table["load"])) == [0.5] and set(table["policy"]) == {"pf"}
    assert len(table) == 3  # one policy (given twice), one load, three classes
    assert (results / "summary.csv").read_bytes() == summary
    assert (results / "scenario.json").read_bytes() == stored
    assert pipeline.validate(results, 0.5)["passed"].all()


def _key_scenario(**changes):
    from mrfq.scenario import scenario_from_dict

    classes = [{"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
               {"name": "2", "requirements": [1.0, 0.1], "load_share": 1}]
    raw = {"name": "k", "description": "d", "resources": ["cpu", "link"],
           "classes": classes, "load": {"axis": "link", "values": [0.5, 0.7]},
           "packet": {"policies": ["bmf", "drfq-dovetail"]}}
    for path, value in changes.items():
        target = raw
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    return scenario_from_dict(raw)


@pytest.mark.parametrize("kind, policy, change, same", [
    ("packet", "bmf", {"name": "other"}, True),
    ("packet", "bmf", {"description": "other"}, True),
    ("packet", "bmf", {"classes.0.name": "renamed"}, True),
    ("packet", "bmf", {"load.values": [0.5, 0.6, 0.7]}, True),
    ("packet", "bmf", {"packet.delta": 2.0}, True),           # Δ acts on dovetail only
    ("packet", "drfq-dovetail", {"packet.delta": 2.0}, False),
    ("packet", "bmf", {"packet.fq_resource": "cpu"}, True),   # bottleneck FQ's only
    ("packet", "bottleneck-fq", {"packet.fq_resource": "cpu"}, False),
    ("packet", "bottleneck-fq", {"packet.fq_resource": "link"}, True),  # the default
    ("packet", "bmf", {"classes.0.weight": 2.0}, False),
    ("packet", "bmf", {"classes.0.rtt": 1.0}, False),
    ("packet", "bmf", {"classes.0.load_share": 3}, False),     # changes the class loads
    ("packet", "bmf", {"classes.1.requirements": [1.0, 0.2]}, False),
    ("packet", "bmf", {"packet.seed": 7}, False),
    ("packet", "bmf", {"packet.mean_size": 100}, False),
    ("packet", "bmf", {"packet.window": 5}, False),
    ("packet", "bmf", {"packet.flows": 500}, False),
    ("packet", "bmf", {"packet.warmup": 0.1}, False),
    ("packet", "bmf", {"packet.batches": 10}, False),
    ("packet", "bmf", {"classes.0.size": {"distribution": "exponential"}}, True),
    ("packet", "bmf", {"classes.0.size": {"distribution": "pareto", "shape": 1.5}}, False),
    ("fluid", "pf", {"description": "other"}, True),
    ("fluid", "pf", {"packet.seed": 7}, True),
    ("fluid", "pf", {"classes.0.weight": 2.0}, False),
    ("fluid", "pf", {"fluid": {"tolerance": 1e-6}}, False),
])
def test_point_key_depends_on_what_determines_the_point(kind, policy, change, same):
    from mrfq.sweeps import Point, point_key

    point = Point(kind, policy, 0.5)
    base = point_key(_key_scenario(), point)
    assert (point_key(_key_scenario(**change), point) == base) is same


@pytest.mark.parametrize("module, constant, kind, policy", [
    ("mrfq.packet.kernel", "ENGINE_VERSION", "packet", "bmf"),
    ("mrfq.stats", "STATS_VERSION", "packet", "bmf"),
    ("mrfq.fluid.markov_solver", "SOLVER_VERSION", "fluid", "pf"),
    ("mrfq.fluid.balanced", "BF_VERSION", "fluid", "bf"),
])
def test_point_key_follows_the_code_versions(monkeypatch, module, constant, kind, policy):
    import importlib

    from mrfq.sweeps import Point, point_key

    point = Point(kind, policy, 0.5)
    base = point_key(_key_scenario(), point)
    monkeypatch.setattr(importlib.import_module(module), constant, "changed")
    assert point_key(_key_scenario(), point) != base


@pytest.mark.slow
def test_sigint_to_the_sweep_does_not_wait_for_running_points(tmp_path):
    """Ctrl-C in a notebook or a terminal reaches the main process: it must stop at once,
    keep every finished point and exit 130."""
    # one packet point of about 8e9 services (minutes, even on a machine three times this
    # one's speed; killed, so it costs nothing when the sweep stops at once)
    # and three fluid points of a second or two: the sweep starts the longest point
    # first, so the first fluid point is written while the packet point has most to go
    scenario = tiny(tmp_path, loads="0.8", mean=20000, flows=200000)
    scenario.write_text(scenario.read_text().replace('["drfq", "bmf"]', '["drfq"]')
                        .replace("replications = 2", "replications = 1"))
    results = tmp_path / "res"
    # a test run started in the background by a non-interactive shell has SIGINT ignored,
    # and so would the sweep (Python keeps an ignored SIGINT ignored): restore it
    proc = subprocess.Popen([sys.executable, "-m", "mrfq.cli", "sweep", str(scenario),
                             "-o", str(results), "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    points = results / POINTS_DIR
    deadline = time.time() + 120

    def written():  # finished points: not the hidden files they are written to first
        return {p.name for p in points.glob("*.json") if not p.name.startswith(".")}

    try:  # a failing check must not leave the sweep computing minutes in the background
        while time.time() < deadline and not (points.exists() and written()):
            time.sleep(0.05)
        finished = written()
        assert finished, "no point finished in two minutes"
        proc.send_signal(signal.SIGINT)
        started = time.time()
        _, err = proc.communicate(timeout=60)
        waited = time.time() - started
    finally:
        if proc.poll() is None:  # (its workers end with it)
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert finished <= written()
    # the packet point still running when the signal came had tens of seconds to go
    assert not any(name.startswith("packet-") for name in written())
    assert waited < 10, f"waited {waited:.1f} s for running points"
