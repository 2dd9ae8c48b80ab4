"""The pipeline as a Python API and its CLI wiring: validation verdicts, `mrfq run`'s exit
code, the package data, the README's Python snippet."""

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mrfq
from mrfq import policies
from mrfq.validation import validate_summary

ROOT = Path(__file__).resolve().parent.parent


def _summary(fluid_gamma, gamma, low, high, problem=""):
    return pd.DataFrame([
        {"kind": "fluid", "policy": "bmf", "load": 0.5, "class": "1", "gamma": fluid_gamma,
         "ci_low": np.nan, "ci_high": np.nan, "ci_problem": ""},
        {"kind": "packet", "policy": "bmf", "load": 0.5, "class": "1", "gamma": gamma,
         "ci_low": low, "ci_high": high, "ci_problem": problem},
    ])


@pytest.mark.parametrize("fluid_gamma, gamma, low, high, problem, passed, verdict", [
    (0.50, 0.51, 0.49, 0.53, "", True, "fluid in CI"),
    (0.50, 0.52, 0.505, 0.53, "", True, "within tolerance"),       # 4.0% off, outside CI
    (0.50, 0.5245, 0.520, 0.53, "", True, "within tolerance"),     # 4.9%
    (0.50, 0.5255, 0.520, 0.53, "", False, "outside CI and tolerance"),  # 5.1%
    (0.50, 0.4745, 0.47, 0.479, "", False, "outside CI and tolerance"),  # -5.1%
    # an interval that could not be computed fails even when the estimate is spot on
    (0.50, 0.50, 0.0, np.inf, "", False, "no interval"),
    (0.50, 0.50, np.nan, np.nan, "too few measured flows", False, "no interval"),
    (0.50, 0.50, 0.45, 0.55, "batch means correlated", False, "no interval"),
])
def test_validation_verdicts(fluid_gamma, gamma, low, high, problem, passed, verdict):
    table = validate_summary(_summary(fluid_gamma, gamma, low, high, problem), 0.05)
    assert len(table) == 1
    row = table.iloc[0]
    assert bool(row["passed"]) is passed
    assert row["verdict"].startswith(verdict)
    if problem:
        assert problem in row["verdict"]


def test_packet_policy_without_fluid_counterpart_is_not_validated(monkeypatch):
    extra = policies.Policy("no-target", policies.PACKET, 99, "X", "test entry")
    monkeypatch.setitem(policies.REGISTRY, (policies.PACKET, "no-target"), extra)
    summary = _summary(0.5, 0.5, 0.45, 0.55)
    summary.loc[1, "policy"] = "no-target"
    assert validate_summary(summary).empty


MD1 = """
name = "md1"
description = "J = 1, single-packet flows: M/D/1 FIFO, not processor sharing"
resources = ["link"]
[[classes]]
name = "a"
requirements = [1.0]
load_share = 1
[load]
values = [0.6]
[fluid]
policies = ["bmf"]
[packet]
policies = ["bmf"]
mean_size = 1
window = 1
flows = 4000
seed = 2
"""


def test_run_exits_1_when_packets_do_not_match_the_fluid_model(tmp_path):
    # one packet per flow at one resource: M/D/1, γ = 1/(1 + ρ/(2(1−ρ))) = 0.571 at
    # ρ = 0.6, against processor sharing's 1 − ρ = 0.4
    (tmp_path / "md1.toml").write_text(MD1)
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "run", "md1.toml", "--jobs",
                             "1"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL" in result.stdout and "validation failed" in result.stderr
    table = pd.read_csv(tmp_path / "results" / "md1" / "validation.csv")
    assert not table["passed"].any()
    assert table["packet_gamma"].iloc[0] == pytest.approx(1 / (1 + 0.6 / 0.8), rel=0.05)
    assert (tmp_path / "results" / "md1" / "md1.png").exists()


def test_python_api_run_sweep_validate_plot(tmp_path):
    scenario = mrfq.scenario_from_dict({
        "name": "api", "resources": ["cpu", "link"],
        "classes": [{"name": "1", "requirements": [0.5, 1], "load_share": 1},
                    {"name": "2", "requirements": [1, 0.5], "load_share": 1}],
        "load": {"values": [0.4]}, "fluid": {"policies": ["bmf"]},
        "packet": {"policies": ["bmf"], "mean_size": 10, "window": 5, "flows": 3000,
                   "seed": 3}})
    result = mrfq.run(scenario, tmp_path / "api", jobs=1)
    assert result.passed
    summary = mrfq.sweep(scenario, tmp_path / "api", jobs=1)  # cached: same numbers
    pd.testing.assert_frame_equal(summary, result.summary, check_exact=True)
    table = mrfq.validate(summary)
    assert list(table["passed"]) == list(result.validation["passed"])
    assert all(p.exists() for p in result.figures)
    written = mrfq.plot(tmp_path / "api", output=tmp_path / "f.png")
    assert {p.suffix for p in written} == {".png"}  # the suffix of -o picks the format
    written = mrfq.plot(tmp_path / "api", formats="svg,pdf")
    assert {p.suffix for p in written} == {".svg", ".pdf"}


def test_simulate_and_sweep_share_one_schema(tmp_path):
    scenario = mrfq.scenario_from_dict({
        "name": "schema", "resources": ["cpu", "link"],
        "classes": [{"name": "1", "requirements": [0.5, 1], "load_share": 1}],
        "load": {"values": [0.4]}, "fluid": {"policies": ["bmf"]},
        "packet": {"policies": ["bmf"], "mean_size": 10, "window": 5, "flows": 500,
                   "seed": 3, "replications": 2}})
    summary = mrfq.sweep(scenario, tmp_path / "s", jobs=1)
    packet = summary[summary["kind"] == "packet"].reset_index(drop=True)
    single = mrfq.simulate(scenario, "bmf", 0.4).classes
    for column in ("gamma", "ci_low", "ci_high", "flows_measured", "ratio_estimate",
                   "little_gamma", "mean_in_progress"):
        assert packet[column].tolist() == single[column].tolist(), column


def test_importing_mrfq_keeps_the_matplotlib_backend():
    code = ("import matplotlib; matplotlib.use('svg'); import mrfq, mrfq.plots, "
            "mrfq.pipeline, mrfq.cli; print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "svg"


def test_packaged_scenarios_resolve_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # away from the checkout
    assert mrfq.load_scenario("fig3_quick").name == "fig3_quick"
    assert mrfq.load_scenario("fig3_packet.toml").packet.flows == 100000
    with pytest.raises(mrfq.InputError, match="no such file"):
        mrfq.load_scenario("no_such_scenario")


@pytest.mark.slow
def test_wheel_ships_scenarios_and_problems(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "-q", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("mrfq-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for scenario in (ROOT / "mrfq" / "scenarios").glob("*.toml"):
        assert f"mrfq/scenarios/{scenario.name}" in names
    for trace in (ROOT / "mrfq" / "scenarios").glob("*.csv"):  # trace scenarios' files
        assert f"mrfq/scenarios/{trace.name}" in names
    for problem in (ROOT / "mrfq" / "problems").glob("*.toml"):
        assert f"mrfq/problems/{problem.name}" in names
    workloads = list((ROOT / "mrfq" / "workloads").glob("*.csv"))
    assert workloads
    for table in workloads:
        assert f"mrfq/workloads/{table.name}" in names


@pytest.mark.parametrize("page", ["README.md", "docs/guide/python.md",
                                  "docs/getting-started.md"])
def test_documented_python_snippets_run(page, tmp_path, monkeypatch):
    text = (ROOT / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has a Python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, page, "exec"), {})  # noqa: S102
