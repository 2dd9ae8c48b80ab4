"""The fluid problem, validated, and the stationary result: the low pieces every law uses.

A problem is (requirements K×J, counts K, weights K) as in BR §2.1 (class k holds
n_k φ_k a_kj of resource j, eq. 1) and per-class loads ρ_k under which every resource is
stable (BR eq. 8). Both stationary laws — the Markov solver (:mod:`mrfq.fluid.markov_solver`)
and balanced fairness's explicit law (:mod:`mrfq.fluid.balanced`) — validate with these
functions and return a :class:`MarkovResult`; the choice between them is made in
:mod:`mrfq.fluid.laws`. This module imports nothing of :mod:`mrfq.fluid`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mrfq import fields, policies
from mrfq.errors import InputError
from mrfq.scenario.checks import MIN_LOAD_SHARE_RATIO, STABLE_BELOW


def policy_code(policy: str) -> int:
    """Kernel code of a fluid policy name; InputError naming the choices otherwise."""
    return policies.get(policies.FLUID, policy).code


def floats(value: ArrayLike, field: str, ndmin: int = 0) -> np.ndarray:
    """``value`` as a float array; InputError naming ``field`` for what NumPy cannot read
    as one (a ragged matrix, text)."""
    try:
        return np.array(value, dtype=np.float64, ndmin=ndmin)
    except (TypeError, ValueError):
        raise InputError(f"must be numbers (a list, or rows of equal length), got "
                         f"{value!r}", field) from None


def check_truncation(tolerance: float, max_level: int | None = None) -> None:
    """InputError unless ``tolerance`` (a relative truncation error) is a number in
    (0, 1) and ``max_level``, if given, an integer ≥ 1 (the Markov solver of DRF, PF and
    BMF also refuses a tolerance below MIN_TOLERANCE, which its linear solves cannot
    honour)."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) \
            or not 0 < tolerance < 1:
        raise InputError(f"must be a number in (0, 1), got {tolerance!r}", "tolerance")
    if max_level is not None and (isinstance(max_level, bool) or not isinstance(
            max_level, numbers.Integral) or max_level < 1):
        raise InputError(f"must be an integer >= 1, got {max_level!r}", "max_level")


def as_problem(requirements: Sequence | np.ndarray, counts: Sequence | np.ndarray | None = None,
               weights: Sequence | np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert (requirements K×J, counts K, weights K) to float arrays."""
    a = floats(requirements, "requirements", ndmin=2)
    if a.ndim != 2 or a.size == 0:
        raise InputError("must be a non-empty K×J matrix", "requirements")
    if not np.all(np.isfinite(a)):
        raise InputError("entries must be finite numbers", "requirements")
    if np.any(a < 0):
        raise InputError("entries must be non-negative", "requirements")
    if np.any(a.max(axis=1) <= 0):
        k = int(np.flatnonzero(a.max(axis=1) <= 0)[0])
        raise InputError(f"row {k} is all zero", "requirements")
    K = a.shape[0]
    n = np.ones(K) if counts is None else floats(counts, "counts").reshape(-1)
    if n.shape != (K,) or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise InputError(f"must be {K} non-negative numbers", "counts")
    w = np.ones(K) if weights is None else floats(weights, "weights").reshape(-1)
    if w.shape != (K,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise InputError(f"must be {K} positive numbers", "weights")
    fields.check_weights(w, "weights")
    return np.ascontiguousarray(a), n, w


def stable_loads(requirements: np.ndarray, loads: ArrayLike, field: str = "loads",
                 nonzero: bool = False) -> np.ndarray:
    """Per-class loads ρ_k (K non-negative numbers; not all zero with ``nonzero``) under
    which every resource is stable: Σ_k ρ_k a_kj < 1 (BR eq. 8), every positive ρ_k at
    least MIN_LOAD_SHARE_RATIO of the largest. InputError otherwise."""
    K = requirements.shape[0]
    rho = floats(loads, field).reshape(-1)
    if (rho.shape != (K,) or np.any(~np.isfinite(rho)) or np.any(rho < 0)
            or (nonzero and rho.sum() <= 0)):
        raise InputError(f"must be {K} non-negative numbers"
                         + (", not all zero" if nonzero else ""), field)
    small = (rho > 0) & (rho < MIN_LOAD_SHARE_RATIO * rho.max(initial=0.0))
    if np.any(small):  # (the scenario file's bound on load_share, for every caller)
        k = int(np.argmax(small))
        raise InputError(f"class {k}'s load {rho[k]:.3g} is less than {MIN_LOAD_SHARE_RATIO:g} "
                         f"of the largest ({rho.max():.3g}): too small for the solvers to "
                         "resolve (0 leaves the class out)", field)
    resource_load = rho @ requirements
    if np.any(resource_load >= STABLE_BELOW):
        j = int(np.argmax(resource_load))
        raise InputError(f"resource {j} has load {resource_load[j]:.4g} >= 1 (unstable)",
                         field)
    return rho


@dataclass(frozen=True)
class MarkovResult:
    """Stationary performance of one (policy, loads) point, from either law.

    ``gamma`` (K): mean service rates ρ_k / E[n_k] (work units per time unit; 1 = the whole
    dominant resource). ``mean_in_progress`` (K): E[n_k]. ``error_estimate`` (K): estimated
    relative truncation error of ``gamma``. ``level``: truncation Σ n_k ≤ level.
    ``states``: states of the truncation; ``level_decay``: fitted asymptotic ratio r of
    the level masses; ``gamma_truncated``: γ without the tail correction.
    """

    gamma: np.ndarray
    mean_in_progress: np.ndarray
    error_estimate: np.ndarray
    level: int
    states: int
    level_decay: float
    gamma_truncated: np.ndarray
