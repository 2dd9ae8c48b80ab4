"""Markov demand model: exact anchors (SPEC §2) and error estimates."""

import functools

import numpy as np
import pytest

from mrfq.errors import InputError
from mrfq.fluid import fluid_curves, service_rates
from mrfq.scenario import scenario_from_dict

# --- exact anchors and the error estimate ---------------------------------------------
# J = 1: every policy is processor sharing, gamma_k = 1 - sum(rho) for every class;
# orthogonal classes (a = I): independent PS queues, gamma_k = 1 - rho_k.
# The README promises "the estimate is not smaller than the true error". The only slack
# allowed is the stationary solver's own precision, which the truncation estimate cannot
# see: it accepts a solution at a relative residual of 1e-9, and on these chains the
# error of a fully converged truncation (L = 64..100) is measured at up to 1.4e-9.
SOLVER_FLOOR = 2e-9
PS_LOADS = [(0.3,), (0.2, 0.5), (0.1, 0.3, 0.4), (0.8,), (0.9,), (0.45, 0.45)]
ORTHOGONAL_LOADS = [(0.6, 0.3), (0.8, 0.5), (0.9, 0.2), (0.5, 0.5), (0.7, 0.7)]
TOLERANCES = [1e-3, 1e-5, 1e-7]
# These anchors found the estimate below the true error (up to 109x, at (0.7, 0.7) with
# tolerance 1e-3) and one answer above its tolerance ((0.7, 0.7) at 1e-7: true 1.02e-7)
# while the estimator extrapolated from one per-step ratio; with the larger of the last
# two ratios, doubled (markov.py), every case below holds. With a single ratio, undoubled,
# 15 of these cases fail.
UNDERESTIMATED: set = set()
ABOVE_TOLERANCE: set = set()


def _anchor_cases(findings: set, what: str):
    cases = []
    for tol in TOLERANCES:
        for policy in ("drf", "pf", "bmf"):
            for loads in PS_LOADS:
                cases.append(pytest.param(policy, "ps", loads, tol,
                                          id=f"{policy}-ps{list(loads)}-tol{tol:g}"))
            for loads in ORTHOGONAL_LOADS:
                marks = ()
                if (tol, loads) in findings:
                    marks = pytest.mark.xfail(strict=True, reason=f"finding: {what}")
                cases.append(pytest.param(policy, "orthogonal", loads, tol, marks=marks,
                                          id=f"{policy}-orth{list(loads)}-tol{tol:g}"))
    return cases


@functools.cache
def _anchor(policy, kind, loads, tol):
    """(result, exact gamma, true relative error of every gamma)."""
    rho = np.array(loads)
    if kind == "ps":
        a, exact = np.ones((len(rho), 1)), np.full(len(rho), 1 - rho.sum())
    else:
        a, exact = np.eye(len(rho)), 1 - rho
    result = service_rates(policy, a, rho, tolerance=tol)
    return result, exact, np.abs(result.gamma - exact) / exact


@pytest.mark.parametrize("policy,kind,loads,tol", _anchor_cases(
    ABOVE_TOLERANCE, "true error 1.02e-7 above the tolerance 1e-7 (see ABOVE_TOLERANCE)"))
def test_true_error_within_tolerance(policy, kind, loads, tol):
    result, _, true = _anchor(policy, kind, loads, tol)
    assert np.all(result.error_estimate <= tol)
    assert np.all(true <= tol), true


@pytest.mark.parametrize("policy,kind,loads,tol", _anchor_cases(
    UNDERESTIMATED, "the estimate is below the true error (see UNDERESTIMATED)"))
def test_error_estimate_not_smaller_than_true_error(policy, kind, loads, tol):
    result, _, true = _anchor(policy, kind, loads, tol)
    assert np.all(true <= result.error_estimate + SOLVER_FLOOR), (
        f"true relative error {true} above the estimate {result.error_estimate} "
        f"(level {result.level})")


@pytest.mark.parametrize("policy", ["drf", "pf", "bmf"])
def test_tight_tolerance_reaches_the_anchors(policy):
    for loads in PS_LOADS[:3]:
        tight = service_rates(policy, np.ones((len(loads), 1)), loads, tolerance=1e-7)
        assert tight.gamma == pytest.approx(1 - sum(loads), abs=1e-6)
    rho = np.array([0.6, 0.3])
    result = service_rates(policy, [[1, 0], [0, 1]], rho, tolerance=1e-7)
    assert result.gamma == pytest.approx(1 - rho, abs=1e-6)


def test_unstable_load_is_rejected():
    with pytest.raises(InputError, match="unstable"):
        service_rates("pf", [[1, 0.5], [0.5, 1]], [0.8, 0.5])


def test_fluid_curves_table_and_paper_ordering():
    scenario = scenario_from_dict({
        "resources": ["cpu", "link"],
        "classes": [
            {"name": "1", "requirements": [0.1, 1], "load_share": 4},
            {"name": "2", "requirements": [1, 0.1], "load_share": 1},
            {"name": "3", "requirements": [1, 1], "load_share": 1},
        ],
        "load": {"axis": "link", "values": [0.3, 0.6]},
    })
    table = fluid_curves(scenario)
    assert set(table.columns) >= {"policy", "load", "class", "gamma", "mean_in_progress",
                                  "error_estimate"}
    assert len(table) == 3 * 2 * 3
    assert (table["error_estimate"] <= 1e-5).all()
    for (_, _), part in table.groupby(["policy", "load"]):
        g = dict(zip(part["class"], part["gamma"], strict=True))
        assert g["2"] > g["1"] > g["3"]  # BR Figure 2 claim


def test_one_change_is_not_an_estimate():
    """Figure 1's classes under PF at load 0.9: the corrected γ are about 2·10⁻³ off at
    levels 33 and 43 alike, so the first change (5·10⁻⁵) passed a tolerance of 10⁻³
    with γ twice the tolerance off. The solver now takes at least two changes."""
    a = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
    rho = np.full(3, 0.9 / 2.1)
    reference = service_rates("pf", a, rho, tolerance=1e-4)  # itself ~2·10⁻⁵ off
    loose = service_rates("pf", a, rho, tolerance=1e-3)
    assert np.all(np.abs(loose.gamma - reference.gamma) / reference.gamma <= 1e-3 - 3e-5)


def test_a_load_near_saturation_is_an_input_error_and_auto_simulates_it():
    """One class at load 0.999 (M/M/1-PS) asked for ~5 800 levels: the solve ran for
    20 s and ended in a bare RuntimeError; at 0.9999 it did not end. Now the level
    budget refuses it at once, and ``auto`` gives the point to the flow-level simulator."""
    from mrfq.fluid.method import fluid_method

    with pytest.raises(InputError, match="more than 2000 levels") as err:
        service_rates("drf", [[1.0]], [0.999])
    assert err.value.field == "tolerance"
    raw = {"name": "one", "resources": ["link"],
           "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
           "load": {"values": [0.5, 0.999]}}
    scenario = scenario_from_dict(raw)
    assert fluid_method(scenario, "drf", 0.5) == "markov"
    assert fluid_method(scenario, "drf", 0.999) == "simulation"
