"""Defects found in the twenty-fourth session (2026-11-28), each pinned by a test that
fails on the code before its fix."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import FIG3_CLASSES

from mrfq import cli, pipeline, policies
from mrfq.kinds import cluster as cluster_kind
from mrfq.scenario import scenario_from_dict
from mrfq.validation import COLUMNS, validate_summary


def _scenario():
    return scenario_from_dict({"resources": ["cpu", "link"], "classes": FIG3_CLASSES,
                               "load": {"values": [0.5]}, "fluid": {"policies": ["drf"]},
                               "cluster": {"policies": ["drf"], "jobs": 250}})


def _record(low: float, high: float, gamma: float = 0.48) -> dict:
    classes = [{"gamma": gamma, "ci_low": low, "ci_high": high, "jobs_measured": 34,
                "mean_in_progress": 1.0}] * 3
    return {"kind": policies.CLUSTER, "policy": "drf", "load": 0.5, "classes": classes}


def test_a_cluster_interval_reaching_zero_is_withheld_with_its_reason():
    """A class with few measured jobs (one pooled run of 250 jobs at load 0.5: 34 of class
    3) had the interval [0, 0.96] and failed validation as "the interval's lower bound is
    not positive", a reason that does not say what to do."""
    scenario = _scenario()
    rows = pd.DataFrame(cluster_kind.summary_rows(scenario, [_record(0.0, 0.96)]))
    assert rows["ci_low"].isna().all() and rows["ci_high"].isna().all()
    assert np.allclose(rows["error_estimate"], (0.96 - 0.48) / 0.48)  # (h / γ: how far off)
    assert (rows["ci_problem"] == "only 34 jobs of the class measured, too few per batch for "
            "an interval (it reaches 0); more [cluster] jobs").all()
    fluid = rows.assign(kind=policies.FLUID, gamma=0.478, ci_low=np.nan, ci_high=np.nan,
                        ci_problem="", method="markov")
    table = validate_summary(pd.concat([fluid, rows], ignore_index=True))
    assert (~table["passed"]).all()
    assert table["verdict"].str.startswith("no interval: only 34 jobs of the class").all()


def test_a_cluster_interval_above_zero_is_kept():
    rows = cluster_kind.summary_rows(_scenario(), [_record(0.39, 0.69, gamma=0.54)])
    assert all(r["ci_problem"] == "" and r["ci_low"] == 0.39 and r["ci_high"] == 0.69
               for r in rows)
    assert np.isclose(rows[0]["error_estimate"], 0.15 / 0.54)


def test_a_class_without_gamma_says_so_and_an_unloaded_class_says_nothing():
    """A review: a class with γ NaN (fewer than 2 measured jobs per batch) was told its
    interval had "no batch spread", and a `load_share = 0` class (validation leaves it out;
    more jobs never help) was told to run more jobs."""
    classes = [dict(c) for c in FIG3_CLASSES]
    classes[2]["load_share"] = 0
    scenario = scenario_from_dict({"resources": ["cpu", "link"], "classes": classes,
                                   "load": {"values": [0.5]}, "fluid": {"policies": ["drf"]},
                                   "cluster": {"policies": ["drf"], "jobs": 250}})
    record = _record(np.nan, np.nan, gamma=np.nan)
    rows = cluster_kind.summary_rows(scenario, [record])
    assert [r["ci_problem"] for r in rows] == [
        "only 34 jobs of the class measured, fewer than 2 per batch (10 batches): no γ; more "
        "[cluster] jobs"] * 2 + [""]


def test_a_failed_run_names_the_kind_of_point_that_failed(monkeypatch, tmp_path):
    """`mrfq run` said "some packet points do not match the fluid model" when the only
    failure was a cluster point."""
    rows = [dict.fromkeys(COLUMNS, "") | {"kind": kind, "passed": passed, "ci_low": 0.1,
                                          "ci_high": 0.2, "ci_warning": "",
                                          "fluid_in_ci": passed}
            for kind, passed in ((policies.PACKET, True), (policies.CLUSTER, False))]
    result = pipeline.RunResult(tmp_path, pd.DataFrame(), pd.DataFrame(rows, columns=COLUMNS))
    monkeypatch.setattr(pipeline, "run", lambda *args, **kwargs: result)
    out = CliRunner().invoke(cli.main, ["run", "x.toml"])
    assert out.exit_code == 1
    assert ("validation failed: 1 point (cluster) fails against the fluid model (verdicts "
            "above)") in out.output


def _validation(*failing_kinds: str) -> pd.DataFrame:
    kinds = [(policies.PACKET, True)] + [(kind, False) for kind in failing_kinds]
    rows = [dict.fromkeys(COLUMNS, "") | {"kind": kind, "passed": passed, "ci_low": 0.1,
                                          "ci_high": 0.2, "fluid_in_ci": passed}
            for kind, passed in kinds]
    return pd.DataFrame(rows, columns=COLUMNS)


def test_validate_and_cluster_close_a_failure_as_run_does(monkeypatch, tmp_path):
    """`mrfq validate` and `mrfq cluster` exited 1 with no closing line (a new user's
    review): only `mrfq run` said that validation failed."""
    monkeypatch.setattr(pipeline, "validate", lambda *a, **k: _validation(
        policies.PACKET, policies.CLUSTER))
    out = CliRunner().invoke(cli.main, ["validate", str(tmp_path)])
    assert out.exit_code == 1
    assert out.output.rstrip().endswith(
        "validation failed: 2 points (cluster and packet) fail against the fluid model "
        "(verdicts above)")
    result = pipeline.RunResult(tmp_path, pd.DataFrame({"gamma": [0.5]}),
                                _validation(policies.CLUSTER))
    monkeypatch.setattr(cli.api, "cluster", lambda *a, **k: result)
    monkeypatch.setattr(cli, "load_scenario", lambda name: None)
    out = CliRunner().invoke(cli.main, ["cluster", "quickstart"])
    assert out.exit_code == 1
    assert out.output.rstrip().endswith(
        "validation failed: 1 point (cluster) fails against the fluid model (verdicts above)")
    monkeypatch.setattr(pipeline, "validate", lambda *a, **k: _validation())
    out = CliRunner().invoke(cli.main, ["validate", str(tmp_path)])
    assert out.exit_code == 0 and "validation failed" not in out.output


def test_a_boolean_where_a_number_goes_is_spelled_as_toml_spells_it(tmp_path):
    """`window = true` said "got True" (Python's spelling) in a TOML file's error."""
    raw = (Path(__file__).parents[1] / "mrfq" / "scenarios" / "quickstart.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(raw.replace("window = 5", "window = true"))
    run = subprocess.run([sys.executable, "-m", "mrfq", "simulate", str(path), "--policy",
                          "drfq", "--load", "0.3"], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.strip() == f"error: {path}: packet.window: must be an integer, got true"


def test_simulate_says_what_it_wrote(tmp_path):
    """`mrfq simulate -o … --flows-out … --size-bins-out …` wrote its files silently, where
    `mrfq fluid -o` and `mrfq allocate -o` say `wrote <path>` (a new user's review)."""
    outputs = [tmp_path / name for name in ("classes.csv", "flows.csv", "bins.csv")]
    run = subprocess.run([sys.executable, "-m", "mrfq", "simulate", "fig3_quick", "--policy",
                          "bmf", "--load", "0.5", "--flows", "300", "--mean-size", "20",
                          "-o", str(outputs[0]), "--flows-out", str(outputs[1]),
                          "--size-bins-out", str(outputs[2])], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert all(f"wrote {path}" in run.stderr.splitlines() for path in outputs)
    assert all(path.stat().st_size > 0 for path in outputs)


def _with(raw: dict, path: str, value) -> dict:
    """``raw`` with the field at dotted ``path`` (an int indexes a list) set to ``value``."""
    *heads, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = raw
    for head in heads:
        node = node.setdefault(head, {}) if isinstance(head, str) else node[head]
    node[last] = value
    return raw


@pytest.mark.parametrize("path, value", [
    ("cluster.tasks", True), ("cluster.duration_law", True), ("cluster.max_parallel", True),
    ("packet.virtual_time", True), ("packet.init", False), ("classes.0.packet_order", True),
    ("packet.fq_resource", True), ("fluid.method", True), ("classes.0.size", {
        "distribution": True}), ("load.axis", True), ("classes.0.route", [True]),
    ("cluster.placement", {"web": [True]})])
def test_every_boolean_in_an_error_is_spelled_as_toml_spells_it(path, value):
    """A review found a dozen field errors beyond the generic ones still saying "got
    True" (Python's spelling) to a user who wrote `true` in a TOML file."""
    import mrfq
    raw = _with(mrfq.load_scenario("quickstart").to_dict(), path, value)
    with pytest.raises(mrfq.InputError) as info:
        mrfq.scenario_from_dict(raw)
    assert "True" not in str(info.value) and "False" not in str(info.value)
    assert "true" in str(info.value) or "false" in str(info.value), str(info.value)
