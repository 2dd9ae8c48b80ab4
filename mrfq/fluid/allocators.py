"""Public, validated fluid allocators: ``allocate(policy, requirements, counts)``.

φ_k is the rate of each class-k transaction: class k holds n_k φ_k a_kj of resource j
(BR §2.1, eq. 1). With normalised requirements (max_j a_kj = 1) φ_k is the transaction's
share of its dominant resource.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid import kernels


def policy_code(policy: str) -> int:
    """Kernel code of a fluid policy name; InputError naming the choices otherwise."""
    return policies.get(policies.FLUID, policy).code


def as_problem(requirements: Sequence | np.ndarray, counts: Sequence | np.ndarray | None = None,
               weights: Sequence | np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert (requirements K×J, counts K, weights K) to float arrays."""
    a = np.array(requirements, dtype=np.float64, ndmin=2)
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
    n = np.ones(K) if counts is None else np.array(counts, dtype=np.float64).reshape(-1)
    if n.shape != (K,) or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise InputError(f"must be {K} non-negative numbers", "counts")
    w = np.ones(K) if weights is None else np.array(weights, dtype=np.float64).reshape(-1)
    if w.shape != (K,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise InputError(f"must be {K} positive numbers", "weights")
    return np.ascontiguousarray(a), n, w


def stable_loads(requirements: np.ndarray, loads, field: str = "loads",
                 nonzero: bool = False) -> np.ndarray:
    """Per-class loads ρ_k (K non-negative numbers; not all zero with ``nonzero``) under
    which every resource is stable: Σ_k ρ_k a_kj < 1 (BR eq. 8). InputError otherwise."""
    K = requirements.shape[0]
    rho = np.array(loads, dtype=np.float64).reshape(-1)
    if (rho.shape != (K,) or np.any(~np.isfinite(rho)) or np.any(rho < 0)
            or (nonzero and rho.sum() <= 0)):
        raise InputError(f"must be {K} non-negative numbers"
                         + (", not all zero" if nonzero else ""), field)
    resource_load = rho @ requirements
    if np.any(resource_load >= 1):
        j = int(np.argmax(resource_load))
        raise InputError(f"resource {j} has load {resource_load[j]:.4g} >= 1 (unstable)",
                         field)
    return rho


def allocate(policy: str, requirements: Sequence | np.ndarray,
             counts: Sequence | np.ndarray | None = None,
             weights: Sequence | np.ndarray | None = None) -> np.ndarray:
    """Per-transaction rates φ_k of a fluid policy ("drf", "pf" or "bmf") in one state.

    ``requirements``: K×J, a_kj ≥ 0 (fraction of resource j per unit rate).
    ``counts``: transactions in progress per class (default one each).
    ``weights``: per-class weights (default 1). Empty classes get φ_k = 0.

    >>> allocate("pf", [[0.5, 1], [1, 0.5]]).round(4).tolist()
    [0.6667, 0.6667]
    """
    code = policy_code(policy)
    a, n, w = as_problem(requirements, counts, weights)
    if code == policies.get(policies.FLUID, "bf").code:
        from mrfq.fluid.balanced import allocate_bf  # balanced builds on this module

        return allocate_bf(a, n, w)
    phi = np.zeros(a.shape[0])
    kernels.allocate_into(code, a, n, w, phi)
    if np.any(np.isnan(phi)):
        raise InputError("no BMF allocation found by the mapping enumeration", "requirements")
    return phi


def resource_usage(requirements: np.ndarray, counts: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Σ_k n_k φ_k a_kj for every resource j (left side of BR eq. 1)."""
    return (np.asarray(counts) * np.asarray(phi)) @ np.asarray(requirements)


def saturated_resources(requirements, counts, phi, tol: float = 1e-8) -> np.ndarray:
    """Boolean mask of resources used to capacity (within ``tol``)."""
    return resource_usage(requirements, counts, phi) >= 1.0 - tol


def is_pareto_efficient(requirements, counts, phi, tol: float = 1e-8) -> bool:
    """Every active class uses (a_kj > 0) some saturated resource, so no φ_k can grow."""
    a, n, _ = as_problem(requirements, counts)
    saturated = saturated_resources(a, n, phi, tol)
    return all(np.any(saturated & (a[k] > 0)) for k in range(len(n)) if n[k] > 0)


def bmf_conditions(requirements, counts, phi, weights=None, tol: float = 1e-8) -> dict:
    """Check the BMF definition (BR §2.4) for any allocation ``phi``.

    Returns ``{"feasible", "bmf", "violations"}``: the allocation must satisfy capacity and
    every active class k must have a saturated resource j with a_kj > 0 on which its
    weighted share φ_k a_kj / w_k is maximal among active classes.
    """
    a, n, w = as_problem(requirements, counts, weights)
    phi = np.asarray(phi, dtype=np.float64)
    usage = resource_usage(a, n, phi)
    feasible = bool(np.all(usage <= 1.0 + tol) and np.all(phi >= -tol))
    saturated = usage >= 1.0 - tol
    active = n > 0
    shares = phi[:, None] * a / w[:, None]
    top = np.where(active[:, None], shares, -np.inf).max(axis=0)
    violations = []
    for k in np.flatnonzero(active):
        ok = saturated & (a[k] > 0) & (shares[k] >= top - tol * np.maximum(1.0, top))
        if not ok.any():
            violations.append(int(k))
    return {"feasible": feasible, "bmf": feasible and not violations, "violations": violations}
