"""The Markov flow variance's truncation error (:func:`mrfq.fluid.markov_variance.
settled_flow_variances`): v_k weighs the tail by n², so the truncation that settles γ
leaves it low (one class on one resource at load 0.9: 4.4%); it is grown until its own
estimate is at most VARIANCE_TOLERANCE. Checked against the closed form of processor
sharing, v = 2ρ(1 + ρ)/(1 − ρ)² (the birth–death Poisson equation: see
tests/test_markov_variance.py), and the estimator against exact geometric sequences."""

from __future__ import annotations

import numpy as np
import pytest

from mrfq import policies
from mrfq.fluid import markov_solver, markov_variance
from mrfq.fluid.markov import markov_point, service_rates, service_rates_and_variances
from mrfq.fluid.markov_variance import VARIANCE_TOLERANCE, truncation_error


@pytest.mark.parametrize("rho", [0.8, 0.9, 0.95, 0.98])
def test_processor_sharing_variance_is_settled_within_its_estimate_of_the_closed_form(rho):
    result, v, error, _ = service_rates_and_variances("pf", [[1.0]], [rho])
    exact = 2 * rho * (1 + rho) / (1 - rho) ** 2
    low = 1 - v[0] / exact  # the truncated chain's lighter tail: v from below
    # the estimate covers the error left and is within the tolerance; the error left is
    # at most half the tolerance (0.9–1.8% here), not the γ truncation's 4.2–4.4% at 0.9+
    assert -1e-3 <= low <= error[0] <= VARIANCE_TOLERANCE
    assert low < VARIANCE_TOLERANCE / 2
    # γ keeps the γ solve's truncation: the same numbers as service_rates'
    np.testing.assert_array_equal(result.gamma, service_rates("pf", [[1.0]], [rho]).gamma)


def test_the_estimate_is_exact_on_a_geometric_sequence_and_errs_high_on_uneven_steps():
    # v_L = 1 − c r^L: the changes shrink by q = r^s per step of s levels and what is
    # left after the last is its change times q / (1 − q)
    r = 0.3 ** 0.1
    levels = [10, 20, 30]
    values = [np.array([1 - r ** level]) for level in levels]
    left = (1 - values[-1]) / values[-1]
    np.testing.assert_allclose(truncation_error(values, levels), left, rtol=1e-12)
    # the second step twice the first: the ratio per level is taken from the first
    # step's, raised to the second's length — high here (a longer last step, as growth
    # takes); a shorter last step can make it low by ~10%
    levels = [10, 20, 40]
    values = [np.array([1 - r ** level]) for level in levels]
    left = (1 - values[-1]) / values[-1]
    estimate = truncation_error(values, levels)
    assert left < estimate < 2 * left
    # changes that do not shrink, above the solves' scatter: q capped at 0.9, so 9 times
    # the last change (unsettled at any tolerance it exceeds)
    values = [np.array([1.0]), np.array([1.01]), np.array([1.03])]
    np.testing.assert_allclose(truncation_error(values, [10, 20, 30]), 9 * 0.02 / 1.03)
    # within the scatter (SCATTER = 1%) the trend is noise: the last change itself
    values = [np.array([1.0]), np.array([1.003]), np.array([1.008])]
    np.testing.assert_allclose(truncation_error(values, [10, 20, 30]), 0.005 / 1.008)
    # two truncations: the change alone
    np.testing.assert_allclose(truncation_error(values[1:], [20, 30]), 0.005 / 1.008)


def test_a_variance_the_budget_leaves_unsettled_is_not_given(monkeypatch):
    # processor sharing at load 0.9: γ settles at level 85, v needs 106; with no level
    # beyond 85 allowed, v stays 4.4% low (estimate 9.3%), and such a number is not given
    monkeypatch.setattr(markov_solver, "MAX_LEVEL", 85)
    result, v, error, _ = service_rates_and_variances("pf", [[1.0]], [0.9])
    assert result.level == 85
    assert np.isnan(v[0]) and error[0] > VARIANCE_TOLERANCE
    monkeypatch.setattr(markov_solver, "MAX_LEVEL", 106)
    _, v, error, level = service_rates_and_variances("pf", [[1.0]], [0.9])
    assert v[0] > 0 and error[0] <= VARIANCE_TOLERANCE and level == 106


def test_growth_is_limited_and_a_failed_solve_leaves_gamma_standing(monkeypatch):
    # processor sharing at load 0.9: v needs one step beyond γ's 86 states
    gamma = service_rates("pf", [[1.0]], [0.9]).gamma
    monkeypatch.setattr(markov_variance, "GROWTH_LIMIT", 1.2)
    result, v, error, level = service_rates_and_variances("pf", [[1.0]], [0.9])
    assert np.isnan(v[0]) and error[0] == np.inf and level == 85
    np.testing.assert_array_equal(result.gamma, gamma)
    monkeypatch.undo()

    def fails(*args):
        raise RuntimeError("Poisson equation of class 0 did not converge")

    truncations = markov_solver.solve(policies.get(policies.FLUID, "pf").code, [[1.0]],
                                      [0.9])[1]
    monkeypatch.setattr(markov_solver, "_solve_truncation", fails)  # what grow solves
    v, error, level = markov_variance.settled_flow_variances(truncations)
    assert v[0] > 0 and error[0] == np.inf and level == 85
    with pytest.raises(ValueError, match="at least two truncations"):
        markov_variance.settled_flow_variances(truncations[-1:])


def test_the_fluid_point_records_the_variance_and_its_estimate():
    from mrfq.scenario import load_scenario
    record = markov_point(load_scenario("fig3_quick"), "bmf", 0.6)
    for c in record["classes"]:
        assert c["flow_variance"] > 0
        assert 0 <= c["flow_variance_error"] <= VARIANCE_TOLERANCE
    assert record["flow_variance_level"] >= record["level"]
