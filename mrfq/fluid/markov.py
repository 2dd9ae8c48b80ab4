"""The Markov demand model's fluid point (BR §4.1): γ_k = ρ_k / E[n_k] of one policy at
one load from its stationary law, exact up to a reported truncation error.

The law is the registry's (:mod:`mrfq.fluid.laws` chooses): the Markov solver
(:mod:`mrfq.fluid.markov_solver`: truncated generator, BiCGSTAB, tail correction) for DRF,
PF and BMF, which assumes exponential sizes, and balanced fairness's explicit law
(:mod:`mrfq.fluid.balanced`), which holds for every size law. This module is their public
face: it runs them with one BLAS thread, so a result is bit-identical wherever it is
computed, and makes the point record of the ``markov`` method (:mod:`mrfq.fluid.method`).
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from mrfq.errors import InputError
from mrfq.fluid import laws
from mrfq.fluid.laws import solver_version  # noqa: F401 - public here (point keys)
from mrfq.fluid.markov_solver import MAX_STATES, SOLVER_VERSION  # noqa: F401 - public here
from mrfq.fluid.problem import MarkovResult
from mrfq.scenario import Scenario


def service_rates(policy: str, requirements: ArrayLike, loads: ArrayLike,
                  weights: ArrayLike | None = None, tolerance: float = 1e-5,
                  max_level: int | None = None) -> MarkovResult:
    """Stationary γ_k = ρ_k / E[n_k] of the Markov demand model (BR §4.1) for one policy.

    ``requirements`` K×J, ``loads`` ρ_k (K, work per unit time with μ_k = 1); must be stable
    (Σ_k ρ_k a_kj < 1, BR eq. 8). ``tolerance``: target relative truncation error of every
    γ_k; InputError if it cannot be reached within the law's state budget
    (:data:`MAX_STATES`, :data:`mrfq.fluid.balanced.MAX_STATES`). The solver runs with one
    BLAS thread wherever it is called (the parent, a local worker or a Dask worker), so the
    result is bit-identical everywhere: BLAS sums in an order that depends on its thread
    count.
    """
    with threadpool_limits(limits=1):
        return laws.service_rates(policy, requirements, loads, weights, tolerance, max_level)


def stationary_distribution(policy: str, requirements: ArrayLike, loads: ArrayLike,
                            weights: ArrayLike | None = None, tolerance: float = 1e-5
                            ) -> tuple[np.ndarray, np.ndarray]:
    """The stationary law π(n) of the Markov demand model (BR §4.1, π Q = 0) of a DRF, PF
    or BMF point, as the solver of :func:`service_rates` leaves it: (states S×K of flows
    in progress per class, probabilities S), on the final level truncation Σ_k n_k ≤ L of
    the same solve (arrivals blocked at L, so the mass it misses above L is below the
    truncation error ``tolerance`` asks for). One BLAS thread, so bit-identical wherever
    it runs. InputError for a policy of the explicit law (balanced fairness: its law is
    :mod:`mrfq.fluid.balanced`'s).
    """
    with threadpool_limits(limits=1):
        return laws.stationary_distribution(policy, requirements, loads, weights, tolerance)


def service_rates_and_variances(policy: str, requirements: ArrayLike, loads: ArrayLike,
                                weights: ArrayLike | None = None, tolerance: float = 1e-5
                                ) -> tuple[MarkovResult, np.ndarray, np.ndarray, int]:
    """:func:`service_rates` and, per class, v_k = lim n_k Var(γ̂_k) / γ_k², the relative
    variance of a simulated γ_k per measured class-k flow in the Markov demand model,
    v_k's relative truncation-error estimate and the level of the truncation v_k is
    computed on (:mod:`mrfq.fluid.markov_variance`: the
    truncation grown until the estimate is at most
    :data:`~mrfq.fluid.markov_variance.VARIANCE_TOLERANCE`, 4%; v NaN where the state
    budget or the growth limit stopped it first, its estimate inf; both NaN for balanced
    fairness, level 0), from one solve with one BLAS thread. The estimate counts the
    truncation only: the adjoint solves add up to ~0.3% in v."""
    with threadpool_limits(limits=1):
        return laws.service_rates_and_variances(policy, requirements, loads, weights,
                                                tolerance)


def markov_point(scenario: Scenario, policy: str, load: float) -> dict:
    """The Markov fluid point (:mod:`mrfq.fluid.method` chooses it): γ_k = ρ_k / E[n_k]
    of one policy at one value on the scenario's load axis, as a JSON-serialisable record
    ``{kind, policy, load, replication, method, classes, level, states,
    flow_variance_level, wall_s}``; per
    class (scenario order) γ_k, E[n_k], the relative truncation-error estimate,
    ``flow_variance`` v_k (NaN if unsettled) and ``flow_variance_error``, its relative
    truncation-error estimate (:func:`service_rates_and_variances`: what a packet point's
    γ interval rests on); ``flow_variance_level``: the truncation v_k is computed on."""
    started = time.perf_counter()
    try:
        result, variances, variance_errors, variance_level = service_rates_and_variances(
            policy, scenario.requirements, scenario.class_loads(load), scenario.weights,
            scenario.fluid.tolerance)
    except InputError as exc:  # e.g. over the state budget: the scenario's [fluid] tolerance
        if exc.field == "tolerance":
            exc.field = "fluid.tolerance"
        raise exc.located(scenario.source) from None
    classes = [{"gamma": float(result.gamma[k]),
                "mean_in_progress": float(result.mean_in_progress[k]),
                "error_estimate": float(result.error_estimate[k]),
                "flow_variance": float(variances[k]),
                "flow_variance_error": float(variance_errors[k])}
               for k in range(len(scenario.classes))]
    return {"kind": "fluid", "policy": policy, "load": float(load), "replication": 0,
            "method": "markov", "classes": classes, "level": int(result.level),
            "states": int(result.states), "flow_variance_level": int(variance_level),
            "wall_s": time.perf_counter() - started}
