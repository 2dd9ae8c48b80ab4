"""Heavy tails (issue 25): a simulated interval that the size law makes unreliable
(:func:`mrfq.sizes.interval_warning`, thresholds measured in VALIDATION.md "Heavy tails")
is carried into summary.csv, validation.csv (never a plain pass) and the console of
``mrfq run``, ``sweep``, ``simulate`` and ``fluid``, for every class of the point (the
classes beside a heavy-tailed one share its congestion); exponential classes alone carry
none."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mrfq.sizes import HEAVY_TAIL_LOAD, interval_warning, parse_size
from mrfq.validation import UNRELIABLE, validate_summary, warning_reason

PARETO_18 = parse_size({"distribution": "pareto", "shape": 1.8})
WARNING = interval_warning(PARETO_18, 0.5, "heavy")

SCENARIO = """
name = "tails"
resources = ["link"]
[[classes]]
name = "exp"
requirements = [1.0]
load_share = 1
[[classes]]
name = "heavy"
requirements = [1.0]
load_share = 1
{size}
[load]
values = [0.5]
[fluid]
policies = ["drf"]
flows = 20000
replications = 10
[packet]
policies = ["drfq"]
mean_size = 10
window = 5
flows = 3000
seed = 2
"""
HEAVY = 'size = {distribution = "pareto", shape = 1.8}'


def _mrfq(cwd, *args):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


def _summary(packet_warning="", fluid_method="markov", fluid_warning=""):
    return pd.DataFrame([
        {"kind": "fluid", "policy": "drf", "load": 0.5, "class": "1", "gamma": 0.5,
         "ci_low": 0.49, "ci_high": 0.51, "ci_problem": "", "method": fluid_method,
         "ci_warning": fluid_warning},
        {"kind": "packet", "policy": "drfq", "load": 0.5, "class": "1", "gamma": 0.5,
         "ci_low": 0.48, "ci_high": 0.52, "ci_problem": "", "ci_warning": packet_warning}])


def test_the_warning_names_what_to_do():
    assert WARNING.startswith("unreliable interval: pareto sizes with infinite variance")
    for advice in ("far more flows", "upper estimate", "size max", "in class heavy"):
        assert advice in WARNING
    third = interval_warning(parse_size({"distribution": "pareto", "shape": 2.5}),
                             HEAVY_TAIL_LOAD)
    assert "infinite third moment" in third and "more flows" in third
    assert interval_warning(parse_size({"distribution": "pareto", "shape": 2.5}),
                            HEAVY_TAIL_LOAD - 0.01) == ""


@pytest.mark.parametrize("packet_warning, fluid_method, fluid_warning, verdict", [
    ("", "markov", "", "fluid in CI"),
    (WARNING, "markov", "", f"fluid in CI{UNRELIABLE} ({warning_reason(WARNING)})"),
    ("", "simulation", "", "within joint CI"),
    # the simulated fluid value's warning alone (a summary whose packet rows have none)
    ("", "simulation", WARNING, f"within joint CI{UNRELIABLE} ({warning_reason(WARNING)})"),
])
def test_validation_names_an_unreliable_interval(packet_warning, fluid_method,
                                                 fluid_warning, verdict):
    row = validate_summary(_summary(packet_warning, fluid_method, fluid_warning)).iloc[0]
    assert row["verdict"] == verdict
    assert bool(row["passed"])  # the comparison passed; the verdict says what it is worth
    assert row["ci_warning"] == (packet_warning or fluid_warning)
    assert warning_reason(WARNING) == ("pareto sizes with infinite variance (shape 1.8 <= 2) "
                                       "in class heavy")


def test_older_summaries_without_the_column_validate_as_before():
    summary = _summary().drop(columns="ci_warning")
    row = validate_summary(summary).iloc[0]
    assert row["verdict"] == "fluid in CI" and row["ci_warning"] == ""


@pytest.fixture(scope="module")
def heavy_run(tmp_path_factory):
    """``mrfq run`` on a Pareto 1.8 class beside an exponential one (one resource)."""
    where = tmp_path_factory.mktemp("tails")
    (where / "tails.toml").write_text(SCENARIO.format(size=HEAVY))
    return where, _mrfq(where, "run", "tails.toml", "--jobs", "1")


def test_run_carries_the_warning_into_summary_validation_and_console(heavy_run):
    where, result = heavy_run
    assert result.returncode in (0, 1), result.stderr
    results = where / "results" / "tails"
    summary = pd.read_csv(results / "summary.csv", dtype={"class": str})
    summary["ci_warning"] = summary["ci_warning"].fillna("")
    # packet rows and the simulated fluid rows (drf with a Pareto class: flow level), of
    # both classes: the exponential one shares the heavy one's congestion
    assert set(summary["kind"]) == {"fluid", "packet"} and len(summary) == 4
    assert (summary["ci_warning"] == WARNING).all()
    validation = pd.read_csv(results / "validation.csv", dtype={"class": str})
    assert list(validation["class"]) == ["exp", "heavy"]
    assert (validation["ci_warning"] == WARNING).all()
    for verdict in validation["verdict"]:
        assert verdict.endswith(f"{UNRELIABLE} ({warning_reason(WARNING)})")
        assert verdict not in ("fluid in CI", "within joint CI", "within tolerance")
    # the console: no point is shown as a plain pass, and the warning is printed
    lines = [line.split() for line in result.stdout.splitlines()]
    rows = [line for line in lines if line[:2] == ["packet", "drfq"]]  # kind, policy
    assert len(rows) == 2
    assert all(("warn" in row or "FAIL" in row) and "pass" not in row for row in rows)
    assert "2 points have an unreliable interval" in result.stdout
    assert f"warning: 2 points (class exp, heavy; load 0.5): {WARNING}" in result.stdout


def test_sweep_and_simulate_print_the_warning(heavy_run):
    where, _ = heavy_run
    swept = _mrfq(where, "sweep", "tails.toml", "--jobs", "1")  # cached points
    assert swept.returncode == 0, swept.stderr
    assert f"warning: 4 points (class exp, heavy; load 0.5): {WARNING}" in swept.stderr
    simulated = _mrfq(where, "simulate", "tails.toml", "--policy", "drfq", "--load", "0.5",
                      "--flows", "1000", "-o", "classes.csv")
    assert simulated.returncode == 0, simulated.stderr
    assert f"warning: 2 points (class exp, heavy; load 0.5): {WARNING}" in simulated.stderr
    table = pd.read_csv(where / "classes.csv", dtype={"class": str})
    assert list(table["ci_warning"]) == [WARNING, WARNING]
    fluid = _mrfq(where, "fluid", "tails.toml", "-o", "fluid.csv")
    assert fluid.returncode == 0, fluid.stderr
    assert f"warning: 2 points (class exp, heavy; load 0.5): {WARNING}" in fluid.stderr


def test_point_warning_names_the_most_severe_law():
    from mrfq.fluid.method import class_warnings
    from mrfq.scenario import scenario_from_dict

    def point(*shapes, load=0.9):
        classes = [{"name": f"c{i}", "requirements": [1.0], "load_share": 1,
                    **({"size": {"distribution": "pareto", "shape": a}} if a else {})}
                   for i, a in enumerate(shapes)]
        return class_warnings(scenario_from_dict({"resources": ["link"], "classes": classes,
                                                  "load": {"values": [load]}}), load)

    assert point(None, None) == ["", ""]
    assert point(None, 2.5, load=0.5) == ["", ""]
    both = point(None, 2.5, 1.8, 1.9)
    assert len(set(both)) == 1 and "infinite variance (shape 1.8 <= 2) in class c2, c3" in both[0]
    third = point(2.5, None)
    assert len(set(third)) == 1 and "infinite third moment (shape 2.5 <= 3) in class c0" in third[0]


def test_exponential_classes_carry_no_warning(tmp_path):
    (tmp_path / "tails.toml").write_text(SCENARIO.format(size=""))
    result = _mrfq(tmp_path, "run", "tails.toml", "--jobs", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stdout + result.stderr
    assert "unreliable" not in result.stdout + result.stderr
    results = tmp_path / "results" / "tails"
    for name in ("summary.csv", "validation.csv"):
        table = pd.read_csv(results / name)
        assert table["ci_warning"].isna().all()  # empty strings read back as NaN
    assert np.all(pd.read_csv(results / "validation.csv")["passed"])
