"""One Python function per CLI verb (mrfq.api): each takes a packaged name and an object
(a Scenario, a dict, a Path) and returns the documented type; bad arguments raise
InputError with the CLI's one-line message."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest

import mrfq
from mrfq.allocation import AllocationReport
from mrfq.scenario import scenario_path

#: a small two-class scenario: every verb on it runs in about a second
SMALL = {
    "name": "small", "resources": ["cpu", "link"],
    "classes": [{"name": "1", "requirements": [0.5, 1], "load_share": 1},
                {"name": "2", "requirements": [1, 0.5], "load_share": 1}],
    "load": {"values": [0.4]}, "fluid": {"policies": ["bmf"]},
    "packet": {"policies": ["bmf"], "mean_size": 10, "window": 5, "flows": 600, "seed": 3}}


def test_every_cli_verb_is_a_top_level_function():
    from mrfq.cli import main

    python_name = {"list": "available"}
    for verb in main.commands:
        assert callable(getattr(mrfq, python_name.get(verb, verb))), verb


def test_fluid_by_name_and_by_object_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    by_name = mrfq.fluid("fig1_balanced", loads=[0.3], policies=["drf"], jobs=1)
    by_object = mrfq.fluid(mrfq.load_scenario("fig1_balanced"), loads=[0.3],
                           policies=["drf"], jobs=1)
    assert isinstance(by_name, pd.DataFrame) and len(by_name) == 3
    pd.testing.assert_frame_equal(by_name, by_object)
    assert list(tmp_path.iterdir()) == []  # no results/ in the current directory
    # the subpackage is still the subpackage
    import importlib

    markov = importlib.import_module("mrfq.fluid.markov")
    assert mrfq.fluid.markov is markov and callable(mrfq.fluid)


def test_fluid_with_a_results_directory_caches(tmp_path):
    first = mrfq.fluid(SMALL, tmp_path / "r", jobs=1)
    assert any((tmp_path / "r").iterdir())
    pd.testing.assert_frame_equal(first, mrfq.fluid(SMALL, tmp_path / "r", jobs=1))


def test_simulate_by_name_dict_and_object():
    raw = tomllib.loads(scenario_path("fig3_quick").read_text())
    by_name = mrfq.simulate("fig3_quick", "bmf", 0.5, flows=400, mean_size=20)
    by_dict = mrfq.simulate(raw, "bmf", 0.5, flows=400, mean_size=20)
    assert isinstance(by_name, mrfq.SimulationResult)
    assert by_name.classes["gamma"].tolist() == by_dict.classes["gamma"].tolist()


def test_sweep_validate_run_plot_on_a_dict(tmp_path):
    seen = []
    result = mrfq.run(SMALL, tmp_path / "r", jobs=1,
                      progress=lambda done, total: seen.append((done, total)))
    assert isinstance(result, mrfq.RunResult)
    assert seen and seen[-1][0] == seen[-1][1] > 0  # every point reported, the last done
    summary = mrfq.sweep(SMALL, tmp_path / "r", jobs=1)
    assert isinstance(summary, pd.DataFrame)
    assert isinstance(mrfq.validate(tmp_path / "r"), pd.DataFrame)
    fluid = mrfq.fluid("fig1_balanced", loads=[0.3], policies=["drf", "bmf"], jobs=1)
    written = mrfq.plot(tmp_path / "r", fluid, output=tmp_path / "fig.png")
    # one stem per source, so the fluid table's figure does not overwrite the run's
    assert [p.name for p in written] == ["fig.png", "fig_delays.png", "fig_fluid.png",
                                         "fig_2.png"]
    assert all(p.exists() for p in written)
    assert {p.suffix for p in written} == {".png"}
    csv = tmp_path / "fluid.csv"
    fluid.to_csv(csv, index=False)
    assert mrfq.plot(csv)[0] == tmp_path / "fluid.png"  # a fluid CSV, as on the CLI


def test_flows_returns_its_tables(tmp_path):
    result = mrfq.flows("isolation_rogue", tmp_path / "iso", policies=["fifo"])
    assert isinstance(result, mrfq.FlowsResult)
    assert len(result.flows) == 4 and set(result.timeline["resource"]) == {
        "cpu", "link", "dominant"}
    assert all(Path(p).exists() for p in result.files)


def test_plan_and_allocate_and_available():
    table = mrfq.plan("fig3_quick", pilot_flows=800, precision=0.1, policies=["bmf"],
                      loads=[0.5], jobs=2)
    assert isinstance(table, pd.DataFrame) and {"flows_needed"} <= set(table.columns)
    # the CLI's --jobs: the sweep's wall time on that many cores (a review: the Python
    # verb did not take it)
    from mrfq.advisor import sweep_wall_time

    assert table.attrs["jobs"] == 2
    assert table.attrs["sweep_wall_s"] == sweep_wall_time(table, 2) > 0
    assert table.attrs["sweep_wall_s_configured"] == sweep_wall_time(table, 2, configured=True)
    report = mrfq.allocate("drf_slides", ["drf"], properties=False)
    assert isinstance(report, AllocationReport)
    from mrfq.allocation.files import PACKAGED_PROBLEMS

    again = mrfq.allocate(PACKAGED_PROBLEMS / "drf_slides.toml", ["drf"], properties=False)
    pd.testing.assert_frame_equal(report.table(), again.table())
    from mrfq.allocation import load_problem

    problem = load_problem("drf_slides")
    assert isinstance(problem, mrfq.allocation.Problem)
    as_object = mrfq.allocate(problem, ["drf"], properties=False)  # a Problem itself
    pd.testing.assert_frame_equal(report.table(), as_object.table())
    listing = mrfq.available()
    assert "fig3_quick" in set(listing["scenarios"]["name"])
    assert "drf_slides" in set(listing["problems"]["name"])
    assert {"drfq", "bmf"} <= set(listing["policies"]["name"])
    assert "pareto" in set(listing["size_laws"]["distribution"])


def test_cluster_by_dict(tmp_path):
    raw = {**SMALL, "cluster": {"policies": ["drf"], "tasks_per_resource": 10,
                                "mean_tasks": 50, "jobs": 600}}
    result = mrfq.cluster(raw, tmp_path / "c", jobs=1)
    assert isinstance(result, mrfq.RunResult)
    assert set(result.summary["kind"]) == {"fluid", "cluster"}
    assert len(result.validation) == 2  # drf, two classes
    import importlib

    kernel = importlib.import_module("mrfq.cluster.kernel")  # still the subpackage too
    assert mrfq.cluster.kernel is kernel and callable(mrfq.cluster)
    with pytest.raises(mrfq.InputError, match="no \\[cluster\\] section"):
        mrfq.cluster(SMALL, tmp_path / "d")


@pytest.mark.parametrize("call, field", [
    (lambda: mrfq.simulate(42, "bmf", 0.5), "scenario"),
    (lambda: mrfq.sweep(["fig3_quick"]), "scenario"),
    (lambda: mrfq.allocate(3.0), "problem"),
    (lambda: mrfq.simulate(SMALL, "bmf", 0.4, progress="yes"), "progress"),
    (lambda: mrfq.plot(pd.DataFrame()), "output"),
])
def test_bad_arguments_raise_input_error(call, field):
    with pytest.raises(mrfq.InputError, match=field):
        call()


@pytest.mark.parametrize("call, field", [
    (lambda: mrfq.simulate(SMALL, "drfq", 0.4, virtual_time="x"), "virtual_time"),
    (lambda: mrfq.simulate(SMALL, "bmf", 0.4, flows=0), "flows"),
    (lambda: mrfq.simulate(SMALL, "bmf", 0.4, mean_size=0.5), "mean_size"),
    (lambda: mrfq.simulate(SMALL, "bmf", 0.4, init="warm"), "init"),
    (lambda: mrfq.fluid(SMALL, loads=[1.5]), "loads"),
    (lambda: mrfq.fluid(SMALL, tolerance=-1), "tolerance"),
    (lambda: mrfq.fluid(SMALL, policies=["wfq"]), "policies"),
    (lambda: mrfq.plan(SMALL, precision=1.5), "precision"),
])
def test_argument_errors_name_the_python_keyword(call, field):
    """The Python API's errors name its keyword, not the CLI's option (``--flows``), and
    no file (the value is an argument's)."""
    with pytest.raises(mrfq.InputError) as info:
        call()
    assert info.value.field == field and info.value.source is None, str(info.value)


def test_a_misspelt_scenario_names_the_packaged_ones():
    with pytest.raises(mrfq.InputError, match="did you mean 'fig3_quick'"):
        mrfq.simulate("fig3_quik", "bmf", 0.5)


def test_a_script_without_a_main_guard_gets_told_why_its_workers_died(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text("import mrfq\n"
                      "mrfq.fluid('fig1_balanced', loads=[0.2, 0.3], policies=['drf'],"
                      " jobs=2)\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "if __name__ == " in result.stderr and "jobs=1" in result.stderr
    guarded = tmp_path / "guarded.py"
    guarded.write_text("import mrfq\nif __name__ == '__main__':\n"
                       "    print(len(mrfq.fluid('fig1_balanced', loads=[0.2, 0.3],"
                       " policies=['drf'], jobs=2)))\n")
    result = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "6"


def test_every_verb_by_packaged_name_and_by_object(tmp_path, monkeypatch):
    """The bar of issue 26: each verb called with a packaged name and with an object, and
    the type of what it returns (the small packaged `quickstart` keeps this to seconds)."""
    monkeypatch.chdir(tmp_path)
    scenario = mrfq.load_scenario("quickstart")
    for argument, where in (("quickstart", "by_name"), (scenario, "by_object")):
        run = mrfq.run(argument, tmp_path / where, jobs=1)
        assert isinstance(run, mrfq.RunResult) and run.passed
        assert isinstance(mrfq.sweep(argument, tmp_path / where, jobs=1), pd.DataFrame)
        assert isinstance(mrfq.validate(tmp_path / where), pd.DataFrame)
        assert isinstance(mrfq.cluster(argument, tmp_path / where, jobs=1), mrfq.RunResult)
        assert isinstance(mrfq.fluid(argument, loads=[0.3], jobs=1), pd.DataFrame)
        assert isinstance(mrfq.simulate(argument, "bmf", 0.3), mrfq.SimulationResult)
        assert isinstance(mrfq.plan(argument, pilot_flows=800, policies=["bmf"],
                                    loads=[0.3]), pd.DataFrame)
        assert all(isinstance(p, Path) for p in mrfq.plot(tmp_path / where))
    pd.testing.assert_frame_equal(mrfq.sweep("quickstart", tmp_path / "by_name", jobs=1),
                                  mrfq.sweep(scenario, tmp_path / "by_object", jobs=1))
    rogue = mrfq.load_scenario("isolation_rogue")
    assert isinstance(mrfq.flows(rogue, tmp_path / "iso", policies=["fifo"]),
                      mrfq.FlowsResult)


def test_simulate_reports_the_parameters_its_policy_ran_with():
    """A simulate table did not say which clock or Δ a DRFQ run used (Δ's default, one
    window, resolved); only the parameters the policy reads are columns."""
    run = mrfq.simulate("fig3_quick", "drfq-dovetail", 0.5, flows=300, window=12)
    assert list(run.classes.columns[:3]) == ["policy", "delta", "virtual_time"]
    assert (run.classes["delta"] == 12.0).all()
    assert (run.classes["virtual_time"] == "in-service").all()
    run = mrfq.simulate("fig3_quick", "drfq", 0.5, flows=300, virtual_time="started")
    assert (run.classes["virtual_time"] == "started").all() and "delta" not in run.classes
    run = mrfq.simulate("fig3_quick", "bottleneck-fq", 0.5, flows=300)
    assert (run.classes["fq_resource"] == "link").all()
    run = mrfq.simulate("fig3_quick", "pf", 0.5, flows=300)
    assert not {"delta", "virtual_time", "fq_resource"} & set(run.classes)
