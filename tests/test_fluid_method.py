"""The fluid method choice (Markov solver or flow-level simulator), its keys, tables and
the validation of packet points against a simulated fluid value."""

import hashlib
import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from mrfq import pipeline
from mrfq.errors import InputError
from mrfq.fluid import fluid_method, service_rates
from mrfq.fluid.balanced import bf_service_rates
from mrfq.fluid.markov import MAX_STATES, SOLVER_VERSION
from mrfq.fluid.method import flow_point, predicted_bf_states, predicted_states
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.sweeps import Point, point_key, run_sweep
from mrfq.validation import validate_summary

PARETO = {"distribution": "pareto", "shape": 1.5}


def _scenario(size=None, fluid=None, packet=None, values=(0.5, 0.9)):
    classes = [{"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
               {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
               {"name": "3", "requirements": [1.0, 1.0], "load_share": 1}]
    if size is not None:
        for c in classes:
            c["size"] = size
    raw = {"name": "m", "resources": ["cpu", "link"], "classes": classes,
           "load": {"axis": "link", "values": list(values)}, "fluid": fluid or {},
           "packet": packet or {}}
    return scenario_from_dict(raw)


def test_auto_takes_the_markov_solver_only_where_it_is_exact_and_within_budget():
    exponential, pareto = _scenario(), _scenario(PARETO)
    assert fluid_method(exponential, "drf", 0.5) == "markov"
    assert fluid_method(exponential, "pf", 0.9) == "markov"
    assert fluid_method(exponential, "pf", 0.98) == "simulation"  # beyond the budget
    assert predicted_states(exponential.requirements, exponential.class_loads(0.98),
                            1e-5) > MAX_STATES
    assert fluid_method(pareto, "bmf", 0.5) == "simulation"        # not exponential
    assert fluid_method(pareto, "bf", 0.98) == "markov"            # BF is insensitive
    forced = _scenario(fluid={"method": "simulation"})
    assert fluid_method(forced, "bf", 0.5) == "simulation"


def test_auto_sends_balanced_fairness_over_its_budget_to_simulation(monkeypatch):
    import mrfq.fluid.balanced as balanced

    scenario = _scenario(PARETO, values=(0.9, 0.99))
    rho = scenario.class_loads(0.9)
    predicted = predicted_bf_states(scenario.requirements, rho, scenario.fluid.tolerance)
    monkeypatch.setattr(balanced, "MAX_STATES", predicted)      # just within
    assert fluid_method(scenario, "bf", 0.9) == "markov"
    monkeypatch.setattr(balanced, "MAX_STATES", predicted - 1)  # just over
    assert fluid_method(scenario, "bf", 0.9) == "simulation"
    monkeypatch.undo()
    # the real budget: three classes at 0.98 fit it, at 0.99 they do not
    assert fluid_method(scenario, "bf", 0.98) == "markov"
    assert predicted_bf_states(scenario.requirements, scenario.class_loads(0.99),
                               1e-5) > balanced.MAX_STATES
    assert fluid_method(scenario, "bf", 0.99) == "simulation"
    # forced, the exact law is kept (and fails on the budget when computed)
    forced = _scenario(PARETO, fluid={"method": "markov", "policies": ["bf"]},
                       values=(0.99,))
    assert fluid_method(forced, "bf", 0.99) == "markov"


@pytest.mark.parametrize("load", [0.3, 0.5, 0.7, 0.9, 0.95])
def test_predicted_bf_states_cover_what_the_law_needs(load):
    """Balanced fairness's budget check must not under-predict either (a three-resource
    triangle, whose level/ln(tol)/ln(r) was the largest of the calibration)."""
    a = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1.0]])
    rho = np.full(3, load / 2)
    used = bf_service_rates(a, rho, tolerance=1e-5).states
    predicted = predicted_bf_states(a, rho, 1e-5)
    assert used <= predicted <= 40 * used, (used, predicted)


def _forced_markov(path, out):
    """``mrfq fluid PATH -o OUT --method markov`` run from PATH's folder."""
    return subprocess.run([sys.executable, "-m", "mrfq", "fluid", str(path), "-o", str(out),
                           "--method", "markov"], capture_output=True, text=True,
                          cwd=path.parent, timeout=120)


def test_cli_balanced_fairness_over_its_budget(tmp_path):
    """Six classes sharing one link at load 0.9: BF's truncation needs C(L + 6, 6) states
    at L ≳ 110, far over the budget. auto simulates; forced markov fails at once with the
    one-line error."""
    classes = "".join(f'[[classes]]\nname = "c{k}"\nrequirements = [1]\nload_share = 1\n'
                      for k in range(6))
    path = tmp_path / "s.toml"
    path.write_text('resources = ["link"]\n' + classes + '[load]\nvalues = [0.9]\n'
                    '[fluid]\npolicies = ["bf"]\nflows = 400\nreplications = 2\n')
    out = tmp_path / "o.csv"
    result = subprocess.run([sys.executable, "-m", "mrfq", "fluid", str(path), "-o", str(out)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert set(pd.read_csv(out)["method"]) == {"simulation"}
    result = _forced_markov(path, out)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {path}: fluid.tolerance: balanced fairness "
                                    "truncation needs more than")
    assert result.stderr.count("\n") == 1 and "simulation" in result.stderr


def test_forced_markov_beyond_its_budget_fails_before_any_work(tmp_path):
    """Four classes at load 0.98: the Markov truncation is predicted at ~2·10^11 states.
    auto simulates the point; forced markov is a one-line error before anything is
    computed or written (it used to enumerate the states and die of a MemoryError), and
    the solver itself counts a truncation's states before enumerating them."""
    from mrfq.fluid import markov_solver

    classes = "".join(f'[[classes]]\nname = "c{k}"\nrequirements = [1, {0.25 * k}]\n'
                      'load_share = 1\n' for k in range(4))
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "link"]\n' + classes + '[load]\nvalues = [0.98]\n'
                    '[fluid]\npolicies = ["drf"]\n')
    scenario = load_scenario(str(path))
    assert fluid_method(scenario, "drf", 0.98) == "simulation"
    out = tmp_path / "o.csv"
    result = _forced_markov(path, out)
    assert result.returncode == 2  # named as the option that forced it, not the file
    assert result.stderr.startswith("error: --method: the Markov solver would need about")
    assert result.stderr.count("\n") == 1 and not out.exists()
    # the same choice made in the file is named as the file's field
    path.write_text(path.read_text().replace('[fluid]\n', '[fluid]\nmethod = "markov"\n'))
    result = subprocess.run([sys.executable, "-m", "mrfq", "fluid", str(path), "-o", str(out)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {path}: fluid.method: the Markov solver would "
                                    "need about")
    assert result.stderr.count("\n") == 1 and not out.exists()
    a = np.array([[1.0, 0.0], [1.0, 0.25], [1.0, 0.5], [1.0, 0.75]])
    with pytest.raises(InputError, match="truncation needs more than"):
        markov_solver._solve_truncation(0, a, np.ones(4), np.full(4, 0.2), 100_000)


@pytest.mark.parametrize("policy, load", [("drf", 0.7), ("pf", 0.8), ("bmf", 0.8),
                                          ("pf", 0.7), ("bmf", 0.1), ("drf", 0.4)])
def test_predicted_states_cover_what_the_solver_needs(policy, load):
    """The budget check must not under-predict: the states the solver really used at
    the default tolerance are fewer than predicted."""
    scenario = load_scenario("fig1_balanced")
    rho = scenario.class_loads(load)
    used = service_rates(policy, scenario.requirements, rho, tolerance=1e-5).states
    predicted = predicted_states(scenario.requirements, rho, 1e-5)
    assert used <= predicted <= 40 * used, (used, predicted)


def test_markov_is_rejected_for_laws_it_does_not_model():
    with pytest.raises(InputError) as err:
        _scenario(PARETO, fluid={"method": "markov"})
    assert err.value.field == "fluid.method" and "exponential" in err.value.problem
    # balanced fairness alone is exact for any law
    only_bf = _scenario(PARETO, fluid={"method": "markov", "policies": ["bf"]})
    assert fluid_method(only_bf, "bf", 0.5) == "markov"
    with pytest.raises(InputError) as err:
        pipeline.fluid(_scenario(PARETO), "unused", method="markov", policies=["pf"])
    assert err.value.field == "method"  # the argument's value, named as the argument
    for bad in ({"method": "exact"}, {"flows": 0}, {"replications": 0}, {"seed": -1},
                {"method": 3}):
        with pytest.raises(InputError) as err:
            _scenario(fluid=bad)
        assert err.value.field == f"fluid.{next(iter(bad))}"


def _old_fluid_key(scenario, policy, load):
    """The fluid key as it was before the method choice (commit 7757886), written out."""
    parts = {"requirements": [float(v) for v in scenario.requirements.ravel()],
             "shape": list(scenario.requirements.shape),
             "weights": [float(v) for v in scenario.weights],
             "rho": [float(v) for v in scenario.class_loads(load)],
             "tolerance": scenario.fluid.tolerance, "solver": SOLVER_VERSION,
             "kind": "fluid", "policy": policy}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def test_keys_markov_points_unchanged_simulation_points_cover_their_settings(monkeypatch):
    base = _scenario()
    assert point_key(base, Point("fluid", "pf", 0.5)) == _old_fluid_key(base, "pf", 0.5)
    pareto = _scenario(PARETO, fluid={"flows": 1000})
    point = Point("fluid", "pf", 0.5)
    key = point_key(pareto, point)
    changes = [{"flows": 2000}, {"replications": 3}, {"seed": 9}]
    for change in changes:
        assert point_key(_scenario(PARETO, fluid={"flows": 1000, **change}), point) != key
    assert point_key(_scenario({"distribution": "pareto", "shape": 2.5},
                               fluid={"flows": 1000}), point) != key
    # the Markov-only settings do not touch a simulated point, and the reverse
    assert point_key(_scenario(PARETO, fluid={"flows": 1000, "tolerance": 1e-3}),
                     point) == key
    assert point_key(_scenario(fluid={"flows": 5}), point) == point_key(base, point)
    import mrfq.fluid.flowsim as flowsim

    monkeypatch.setattr(flowsim, "FLOWSIM_VERSION", "changed")
    assert point_key(pareto, point) != key
    assert point_key(base, point) == _old_fluid_key(base, "pf", 0.5)


def test_fluid_table_has_method_and_interval(tmp_path):
    scenario = _scenario(fluid={"flows": 3000, "replications": 10})
    table = pipeline.fluid(scenario, tmp_path, policies=["pf", "bf"], loads=[0.5])
    assert set(table["method"]) == {"markov"}
    assert (table["ci_low"] == table["gamma"]).all() and (table["ci_high"] ==
                                                           table["gamma"]).all()
    simulated = pipeline.fluid(scenario, tmp_path, policies=["pf"], loads=[0.5],
                               method="simulation")
    assert set(simulated["method"]) == {"simulation"}
    assert (simulated["ci_low"] < simulated["gamma"]).all()
    assert (simulated["gamma"] < simulated["ci_high"]).all()
    assert simulated["states"].isna().all()
    # the simulated and exact PF values agree within the interval (±4 half-widths)
    exact = table[table["policy"] == "pf"]["gamma"].to_numpy()
    half = ((simulated["ci_high"] - simulated["ci_low"]) / 2).to_numpy()
    assert np.all(np.abs(simulated["gamma"].to_numpy() - exact) <= 4 * half)
    # cached: the same call computes nothing and returns the same numbers
    again = pipeline.fluid(scenario, tmp_path, policies=["pf"], loads=[0.5],
                           method="simulation")
    pd.testing.assert_frame_equal(simulated, again)


def test_flow_point_is_the_flow_level_simulator_with_the_scenario_settings():
    from mrfq.fluid.flowsim import flow_service_rates

    scenario = _scenario(PARETO, fluid={"flows": 2000, "replications": 3, "seed": 4})
    record = flow_point(scenario, "drf", 0.5)
    direct = flow_service_rates(scenario.requirements, scenario.class_loads(0.5), "drf",
                                scenario.size_laws, flows=2000, replications=3, seed=4)
    assert record["method"] == "simulation" and record["replications"] == 3
    # the ratio estimator Σ S / Σ T and its interval (as the packet side's γ)
    assert [c["gamma"] for c in record["classes"]] == direct.ratio.tolist()
    assert [c["ci_low"] for c in record["classes"]] == direct.ratio_low.tolist()
    assert [c["ci_high"] for c in record["classes"]] == direct.ratio_high.tolist()


@pytest.mark.parametrize("spec, load, start", [
    ({"distribution": "pareto", "shape": 1.5}, 0.5, "unreliable interval"),
    ({"distribution": "pareto", "shape": 2.0}, 0.1, "unreliable interval"),
    ({"distribution": "pareto", "shape": 2.01}, 0.5, ""),
    ({"distribution": "pareto", "shape": 2.5}, 0.5, ""),
    # finite variance, infinite third moment: from HEAVY_TAIL_LOAD on (VALIDATION.md)
    ({"distribution": "pareto", "shape": 2.5}, 0.9, "unreliable interval"),
    ({"distribution": "pareto", "shape": 3.0}, 0.9, "unreliable interval"),
    ({"distribution": "pareto", "shape": 2.5}, None, "unreliable interval"),
    ({"distribution": "pareto", "shape": 3.5}, 0.9, ""),
    ({"distribution": "pareto", "shape": 1.5, "max": 1000}, 0.9, ""),  # bounded: all moments
    ({"distribution": "hyperexponential", "scv": 10}, 0.9, ""),
    ({"distribution": "lognormal", "sigma": 2}, 0.9, ""),
    (None, 0.9, "")])
def test_interval_warning_for_heavy_tails(spec, load, start):
    from mrfq.sizes import interval_warning, parse_size

    warning = interval_warning(parse_size(spec), load)
    assert warning.startswith(start) and bool(warning) == bool(start)


def test_fluid_table_warns_on_simulated_infinite_variance_classes():
    from mrfq.fluid.method import fluid_table

    classes = [{"gamma": 0.5, "ci_low": 0.4, "ci_high": 0.6, "mean_in_progress": 1.0,
                "error_estimate": 0.2}] * 3
    records = [{"policy": p, "load": 0.5, "method": m, "classes": classes}
               for p, m in (("pf", "simulation"), ("bf", "markov"))]
    heavy = fluid_table(_scenario(PARETO), records)
    assert heavy.loc[heavy["policy"] == "pf", "ci_warning"].str.startswith(
        "unreliable interval").all()
    assert (heavy.loc[heavy["policy"] == "bf", "ci_warning"] == "").all()
    light = fluid_table(_scenario({"distribution": "pareto", "shape": 2.5}), records)
    assert (light["ci_warning"] == "").all()


def test_cli_fluid_method_option(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["link"]\n[[classes]]\nrequirements = [1]\nload_share = 1\n'
                    'size = {distribution = "pareto", shape = 2.5}\n'
                    '[load]\nvalues = [0.5]\n[fluid]\npolicies = ["drf", "bf"]\n'
                    'flows = 2000\nreplications = 10\n')
    out = tmp_path / "o.csv"
    result = subprocess.run([sys.executable, "-m", "mrfq", "fluid", str(path), "-o", str(out)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert dict(zip(table["policy"], table["method"], strict=True)) == {
        "drf": "simulation", "bf": "markov"}
    bf = table[table["policy"] == "bf"].iloc[0]
    assert bf["gamma"] == pytest.approx(0.5, rel=1e-4)  # processor sharing, 1 − ρ
    # Pareto 2.5 has a finite variance: no warning (see the next test for shape ≤ 2)
    assert table["ci_warning"].isna().all()  # empty strings read back as NaN
    result = subprocess.run([sys.executable, "-m", "mrfq", "fluid", str(path), "-o", str(out),
                             "--method", "markov"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --method: ")


def _summary(fluid_gamma, low, high, packet, p_low, p_high, method="simulation"):
    return pd.DataFrame([
        {"kind": "fluid", "policy": "bmf", "load": 0.5, "class": "1", "gamma": fluid_gamma,
         "ci_low": low, "ci_high": high, "ci_problem": np.nan, "method": method},
        {"kind": "packet", "policy": "bmf", "load": 0.5, "class": "1", "gamma": packet,
         "ci_low": p_low, "ci_high": p_high, "ci_problem": "", "method": np.nan},
    ])


@pytest.mark.parametrize("fluid, packet, passed, verdict", [
    # half-widths 0.03 and 0.04 on the facing sides: joint 0.05
    ((0.50, 0.47, 0.53), (0.549, 0.509, 0.60), True, "within joint CI"),
    ((0.50, 0.47, 0.53), (0.451, 0.40, 0.491), True, "within joint CI"),
    ((0.50, 0.47, 0.53), (0.551, 0.511, 0.60), False, "outside CI and tolerance"),
    # outside the packet CI alone, inside the joint one
    ((0.50, 0.47, 0.53), (0.54, 0.51, 0.57), True, "within joint CI"),
    ((0.50, np.nan, np.nan), (0.50, 0.45, 0.55), False, "no interval: fluid"),
    # an exact fluid value (NaN bounds as in older summaries): the packet CI alone
    ((0.50, np.nan, np.nan, "markov"), (0.54, 0.51, 0.57), False, "outside CI"),
])
def test_validation_against_a_simulated_fluid_value(fluid, packet, passed, verdict):
    table = validate_summary(_summary(*fluid[:3], *packet, *fluid[3:]), tolerance=0.05)
    row = table.iloc[0]
    assert bool(row["passed"]) is passed and row["verdict"].startswith(verdict), row


def test_packet_sweep_with_pareto_sizes_validates_against_the_flow_level_fluid(tmp_path):
    scenario = _scenario(PARETO, fluid={"flows": 20000, "replications": 10, "policies": ["bmf"]},
                         packet={"policies": ["bmf"], "flows": 3000, "mean_size": 20,
                                 "window": 5, "warmup": 0.1}, values=(0.5,))
    summary = run_sweep(scenario, tmp_path, jobs=1)
    fluid = summary[summary["kind"] == "fluid"]
    assert set(fluid["method"]) == {"simulation"} and set(fluid["policy"]) == {"bmf"}
    table = pipeline.validate(tmp_path, 0.1)
    assert len(table) == 3 and set(table["fluid_method"]) == {"simulation"}
    assert table["passed"].all(), table
    # the stored scenario keeps the laws and the fluid settings
    stored = json.loads((tmp_path / "scenario.json").read_text())
    assert stored["classes"][0]["size"] == PARETO and stored["fluid"]["flows"] == 20000
    assert replace(scenario, source="x").fluid.flows == 20000


def test_insensitivity_study_shares_exact_points_and_plots(tmp_path):
    from mrfq.plots import insensitivity as plot

    scenario = _scenario(fluid={"flows": 2000, "replications": 10,
                                "policies": ["pf", "bf"]}, values=(0.5,))
    laws = {"exp": {"distribution": "exponential"}, "pareto": PARETO}
    table = pipeline.insensitivity(scenario, laws, tmp_path)
    methods = table.groupby(["law", "policy"])["method"].first().to_dict()
    assert methods == {("exp", "bf"): "markov", ("exp", "pf"): "markov",
                       ("pareto", "bf"): "markov", ("pareto", "pf"): "simulation"}
    bf = table[table["policy"] == "bf"]
    assert np.array_equal(bf[bf["law"] == "exp"]["gamma"], bf[bf["law"] == "pareto"]["gamma"])
    # one file per distinct point: BF's exact law is computed once for both laws
    assert len(list((tmp_path / "points").iterdir())) == 3
    assert all(law.distribution == "pareto" for law in scenario.with_sizes(PARETO).size_laws)
    written = plot(table, tmp_path / "ins", "t")  # no suffix: PNG and PDF
    assert [p.suffix for p in written] == [".png", ".pdf"] and written[0].stat().st_size > 0
