"""Which stationary law computes a fluid policy: the one place that reads the registry's
``law`` field (:data:`mrfq.policies.MARKOV_LAW` or :data:`mrfq.policies.EXPLICIT_LAW`)
to choose between the two implementations.

* ``MARKOV_LAW`` (DRF, PF, BMF): φ(n) from the policy's kernel (:mod:`mrfq.fluid.kernels`),
  γ and π from the Markov demand model's solver (BR §4.1, :mod:`mrfq.fluid.markov_solver`);
* ``EXPLICIT_LAW`` (balanced fairness): φ_k(n) = Φ(n − e_k) / (n_k Φ(n)) and γ from the
  product-form law π(n) ∝ Φ(n) Π_k ρ_k^{n_k} (:mod:`mrfq.fluid.balanced`), with no
  generator to solve.

Both return the same types (φ as a K-array, :class:`~mrfq.fluid.problem.MarkovResult`), so
the public functions above this module (:func:`mrfq.fluid.allocate`,
:mod:`mrfq.fluid.markov`) do not know which law they use. Everything here is
single-threaded as its callers leave it: :mod:`mrfq.fluid.markov` pins BLAS to one thread.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid import balanced, kernels, markov_solver, markov_variance
from mrfq.fluid.problem import MarkovResult


def _explicit(entry: policies.Policy) -> bool:
    """The policy's stationary law is written down (no generator to solve)."""
    return entry.law == policies.EXPLICIT_LAW


def rates(policy: str, requirements: np.ndarray, counts: np.ndarray,
          weights: np.ndarray) -> np.ndarray:
    """Per-transaction rates φ_k(n) of a fluid policy in one state (BR §2.1, eq. 1), from
    arrays already validated by :func:`mrfq.fluid.problem.as_problem`."""
    entry = policies.get(policies.FLUID, policy)
    if _explicit(entry):
        return balanced.allocate_bf(requirements, counts, weights)
    phi = np.zeros(requirements.shape[0])
    kernels.allocate_into(entry.code, requirements, counts, weights, phi)
    if np.any(np.isnan(phi)):
        raise InputError("no BMF allocation found by the mapping enumeration", "requirements")
    return phi


def service_rates(policy: str, requirements: ArrayLike, loads: ArrayLike,
                  weights: ArrayLike | None = None, tolerance: float = 1e-5,
                  max_level: int | None = None) -> MarkovResult:
    """Stationary γ_k = ρ_k / E[n_k] of one fluid policy (BR §4.1): arguments and result
    as :func:`mrfq.fluid.markov.service_rates` (which pins BLAS to one thread)."""
    entry = policies.get(policies.FLUID, policy)
    if _explicit(entry):
        # an explicit stationary law: no linear solve
        return balanced.bf_service_rates(requirements, loads, weights, tolerance, max_level)
    return markov_solver.solve(entry.code, requirements, loads, weights, tolerance,
                               max_level)[0]


def stationary_distribution(policy: str, requirements: ArrayLike, loads: ArrayLike,
                            weights: ArrayLike | None = None, tolerance: float = 1e-5
                            ) -> tuple[np.ndarray, np.ndarray]:
    """(states S×K, π S) of the Markov solver's final truncation for a policy of the
    Markov law (as :func:`mrfq.fluid.markov.stationary_distribution`); InputError (field
    ``policy``) for an explicit law, which has no generator here."""
    entry = policies.get(policies.FLUID, policy)
    if _explicit(entry):
        raise InputError(f"{entry.label} has no generator-based stationary law here (its "
                         "law is explicit)", "policy")
    final = markov_solver.solve(entry.code, requirements, loads, weights, tolerance,
                                None)[1][-1]
    return final.states, final.pi


def service_rates_and_variances(policy: str, requirements: ArrayLike, loads: ArrayLike,
                                weights: ArrayLike | None = None, tolerance: float = 1e-5
                                ) -> tuple[MarkovResult, np.ndarray, np.ndarray, int]:
    """:func:`service_rates` and, per class, the relative variance per measured flow of a
    simulated γ_k (Var(γ̂_k) / γ_k² ≈ v_k / n_k) with its relative truncation-error
    estimate and the level of the truncation v settled on, grown from the same solve
    (:func:`mrfq.fluid.markov_variance.settled_flow_variances`); v NaN where the state
    budget stopped the growth before the estimate reached
    :data:`~mrfq.fluid.markov_variance.VARIANCE_TOLERANCE` (an interval built on it would
    be too narrow: the packet point keeps its runs' own), and both NaN for a policy of the
    explicit law (no generator here; level 0)."""
    entry = policies.get(policies.FLUID, policy)
    if _explicit(entry):
        result = balanced.bf_service_rates(requirements, loads, weights, tolerance, None)
        return result, np.full(result.gamma.shape, np.nan), np.full(result.gamma.shape,
                                                                    np.nan), 0
    result, truncations = markov_solver.solve(entry.code, requirements, loads, weights,
                                              tolerance, None)
    variances, errors, level = markov_variance.settled_flow_variances(truncations)
    unsettled = errors > markov_variance.VARIANCE_TOLERANCE
    return result, np.where(unsettled, np.nan, variances), errors, level


def solver_version(policy: str) -> str:
    """Version of the code that computes a fluid policy's γ (part of a stored point's key):
    ``<name>-<BF_VERSION>`` for an explicit law (balanced fairness's), the Markov
    solver's :data:`~mrfq.fluid.markov_solver.SOLVER_VERSION` otherwise. Both constants
    are read at the call, so bumping either changes the keys."""
    entry = policies.get(policies.FLUID, policy)
    if _explicit(entry):
        return f"{entry.name}-{balanced.BF_VERSION}"
    return markov_solver.SOLVER_VERSION
