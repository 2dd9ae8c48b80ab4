"""The run-length advisor (mrfq.advisor, ``mrfq plan``): its table follows the formula
n = (z σ_rel / h)² with the warm-up allowance, the wall time, the console and the errors."""

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from mrfq.advisor import (
    MIN_REPLICATIONS,
    advice_text,
    advise,
    pilot_length,
    relaxation_flows,
    sweep_wall_time,
)
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.stats import LUGSAIL_BATCHES
from mrfq.stats.runlength import interval_factor, variance_factor

TINY = {"resources": ["cpu", "link"],
        "classes": [{"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
                    {"name": "2", "requirements": [1.0, 0.1], "load_share": 1}],
        "load": {"axis": "link", "values": [0.5, 0.8]},
        "packet": {"policies": ["bmf"], "mean_size": 10, "window": 4, "flows": 4000,
                   "warmup": 0.1}}
TOML = """resources = ["cpu", "link"]
[[classes]]
name = "1"
requirements = [0.1, 1.0]
load_share = 4
[[classes]]
name = "2"
requirements = [1.0, 0.1]
load_share = 1
[load]
axis = "link"
values = [0.5]
[packet]
policies = ["bmf"]
mean_size = 10
window = 4
flows = 4000
warmup = 0.1
"""


@pytest.fixture(scope="module")
def table():
    return advise(scenario_from_dict(TINY), pilot_flows=2000, loads=[0.5])


def test_flows_needed_follow_the_formula(table):
    z = sps.norm.ppf(0.975)
    # one run's γ interval: t over 5 lugsail batches, whose median half-width factor is q
    q = interval_factor(0.95, LUGSAIL_BATCHES, lugsail=True)
    assert 2.6 < q < 2.7
    assert list(table["class"]) == ["1", "2"] and (table["target_precision"] == 0.02).all()
    for row in table.itertuples():
        one_run = (q * row.sigma_rel / 0.02) ** 2  # n = (q σ_rel / h)², measured flows
        assert row.flows_needed == math.ceil(one_run / 0.9)  # + the 10% warm-up
        measured = (z * row.sigma_rel / 0.02) ** 2  # replications: the stopping rule's z
        assert row.replications_needed == max(MIN_REPLICATIONS,
                                               math.ceil(measured / (4000 * 0.9)))
        # the run as configured (4 000 flows, 3 600 measured, one run): q σ_rel / √3600
        assert row.half_width_configured == pytest.approx(q * row.sigma_rel / 60)
        assert 0.5 < row.sigma_rel < 20 and row.pilot_flows == 2000
        # χ² on the batches, or on the relaxation times spanned / 20 if fewer
        assert row.pilot_relaxations == pytest.approx(2000 / relaxation_flows(
            scenario_from_dict(TINY), 0.5))
        assert row.pilot_dof <= row.pilot_relaxations / 20
        assert (row.factor_low, row.factor_high) == pytest.approx(
            variance_factor(row.pilot_dof))
    assert table["binding"].sum() == 1
    binding = table[table["binding"]].iloc[0]
    assert binding["flows_needed"] == table["flows_needed"].max()
    assert (table["mode"] == "one run").all()
    # one run of the binding class's flows at the pilot's speed
    seconds_per_flow = binding["services_per_flow"] / binding["services_per_cpu_s"]
    assert table["wall_s"].iloc[0] == pytest.approx(binding["flows_needed"] * seconds_per_flow)


def test_precision_target_of_the_scenario_means_replications():
    spec = {**TINY, "packet": {**TINY["packet"], "precision": 0.1}}
    table = advise(scenario_from_dict(spec), pilot_flows=2000, loads=[0.5])
    assert (table["target_precision"] == 0.1).all() and (table["mode"] == "replications").all()
    top = table[table["binding"]].iloc[0]
    seconds_per_flow = top["services_per_flow"] / top["services_per_cpu_s"]
    assert top["wall_s"] == pytest.approx(top["replications_needed"] * 4000 * seconds_per_flow)


def test_sweep_wall_time_shares_points_over_jobs():
    rows = pd.DataFrame({"policy": ["a", "a", "b"], "load": [0.5, 0.5, 0.5],
                         "wall_s": [10.0, 10.0, 30.0], "wall_s_configured": [1.0, 1.0, 2.0],
                         "mode": "one run", "configured_replications": 1})
    assert sweep_wall_time(rows, 1) == 40.0
    assert sweep_wall_time(rows, 2) == 30.0  # one run of 30 s is not split
    assert sweep_wall_time(rows, 4) == 30.0
    assert sweep_wall_time(rows.assign(mode="replications"), 4) == 10.0
    assert sweep_wall_time(rows, 1, configured=True) == 3.0


def test_console_text_says_it_is_an_estimate(table):
    text = advice_text(table, jobs=2)
    assert "an estimate from pilots of 2000 flows" in text
    assert "estimated sweep wall time on 2 job(s)" in text
    assert text.count("*") >= 2  # the binding class's mark and the legend
    assert np.isfinite(table["wall_s"]).all()


def _run(*args):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", "plan", *args],
                          capture_output=True, text=True)


def test_cli_writes_the_table(tmp_path):
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TOML)
    out = tmp_path / "plan.csv"
    result = _run(str(scenario), "--pilot-flows", "2000", "--precision", "0.05",
                  "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "target: 95% half-width 0.05" in result.stdout
    written = pd.read_csv(out)
    assert len(written) == 2 and (written["target_precision"] == 0.05).all()
    assert written["flows_needed"].gt(0).all()


@pytest.mark.parametrize("args, field", [
    (["--precision", "1.5"], "--precision"),
    (["--pilot-flows", "10"], "--pilot-flows"),
    (["--policies", "bnf"], "--policies"),
    (["--loads", "1.5"], "--loads"),
    (["--loads", "x"], "--loads"),
    (["--jobs", "0"], "--jobs"),
])
def test_cli_errors_are_one_line(tmp_path, args, field):
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TOML)
    out = tmp_path / "plan.csv"
    result = _run(str(scenario), "--pilot-flows", "2000", *args, "-o", str(out))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"{field}: " in lines[0]
    assert "Traceback" not in result.stderr and not out.exists()


def test_default_pilot_spans_sixty_relaxation_times():
    scenario = scenario_from_dict(TINY)  # the link is the bottleneck: its load is the axis
    # Abate-Whitt relaxation time 1/(1 - √ρ)² service times, ρ arrivals per service time
    assert relaxation_flows(scenario, 0.9) == pytest.approx(0.9 / (1 - math.sqrt(0.9)) ** 2)
    assert pilot_length(scenario, 0.9) == 20_600  # 60 × 342.6, rounded up to 100
    assert pilot_length(scenario, 0.5) == 5_000  # the floor
    assert pilot_length(scenario, 0.95) > 4 * pilot_length(scenario, 0.9)


def test_cli_warns_about_a_pilot_too_short_for_its_load(tmp_path):
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TOML.replace("values = [0.5]", "values = [0.8]"))
    # 800 flows at load 0.8: 11 relaxation times of 71 flows, under the 20 of one dof
    result = _run(str(scenario), "--pilot-flows", "800")
    assert result.returncode == 0, result.stderr
    assert "unknown" in result.stdout  # no range for the need
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2 and all("spans 11 relaxation times" in w for w in warnings)


def test_a_pilot_spans_the_relaxation_times_of_the_runs_warm_up():
    """On a network where not every class crosses the busiest resource the relaxation
    time in flows of all classes is (Λ / Λ*) ρ*/(1 − √ρ*)² (the run's warm-up rule); the
    advisor's copy left out Λ / Λ* (linear_network at 0.9: 342 instead of 570 flows)."""
    scenario = load_scenario("linear_network")
    rho = float(np.max(scenario.resource_loads(0.9)))
    bare = rho / (1 - math.sqrt(rho)) ** 2
    loads, a = scenario.class_loads(0.9), np.asarray(scenario.requirements)
    busiest = int(np.argmax(np.asarray(loads) @ a))
    share = np.sum(loads) / np.sum(np.asarray(loads)[a[:, busiest] > 0])
    assert share > 1.5
    assert relaxation_flows(scenario, 0.9) == pytest.approx(share * bare, rel=1e-12)


def test_the_configured_half_width_uses_the_runs_own_units():
    """3 replications pool 5 lugsail batches each (t over 15 units); 12 replications give
    t over 12; one run t over 5 (a review found 3 replications sized as one run)."""
    for replications, units, lugsail in ((3, 15, True), (12, 12, False), (1, 5, True)):
        scenario = scenario_from_dict(TINY).with_overrides(replications=replications)
        table = advise(scenario, pilot_flows=2000, loads=[0.5])
        measured = 4000 * 0.9 * replications
        for row in table.itertuples():
            assert row.half_width_configured == pytest.approx(
                interval_factor(0.95, units, lugsail) * row.sigma_rel / math.sqrt(measured))
