"""Public, validated fluid allocators: ``allocate(policy, requirements, counts)``.

φ_k is the rate of each class-k transaction: class k holds n_k φ_k a_kj of resource j
(BR §2.1, eq. 1). With normalised requirements (max_j a_kj = 1) φ_k is the transaction's
share of its dominant resource.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mrfq.fluid import laws
from mrfq.fluid.problem import as_problem, policy_code


def allocate(policy: str, requirements: Sequence | np.ndarray,
             counts: Sequence | np.ndarray | None = None,
             weights: Sequence | np.ndarray | None = None) -> np.ndarray:
    """Per-transaction rates φ_k of a fluid policy (any of the registry's: a kernel's or
    balanced fairness's, :mod:`mrfq.fluid.laws`) in one state.

    ``requirements``: K×J, a_kj ≥ 0 (fraction of resource j per unit rate).
    ``counts``: transactions in progress per class (default one each).
    ``weights``: per-class weights (default 1). Empty classes get φ_k = 0.

    >>> allocate("pf", [[0.5, 1], [1, 0.5]]).round(4).tolist()
    [0.6667, 0.6667]
    """
    policy_code(policy)  # an unknown name fails before the arrays are checked
    a, n, w = as_problem(requirements, counts, weights)
    return laws.rates(policy, a, n, w)


def resource_usage(requirements: np.ndarray, counts: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Σ_k n_k φ_k a_kj for every resource j (left side of BR eq. 1)."""
    return (np.asarray(counts) * np.asarray(phi)) @ np.asarray(requirements)


def saturated_resources(requirements: Sequence | np.ndarray, counts: Sequence | np.ndarray,
                        phi: Sequence | np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """Boolean mask of resources used to capacity (within ``tol``)."""
    return resource_usage(requirements, counts, phi) >= 1.0 - tol


def is_pareto_efficient(requirements: Sequence | np.ndarray, counts: Sequence | np.ndarray,
                        phi: Sequence | np.ndarray, tol: float = 1e-8) -> bool:
    """Every active class uses (a_kj > 0) some saturated resource, so no φ_k can grow."""
    a, n, _ = as_problem(requirements, counts)
    saturated = saturated_resources(a, n, phi, tol)
    return all(np.any(saturated & (a[k] > 0)) for k in range(len(n)) if n[k] > 0)


def bmf_conditions(requirements: Sequence | np.ndarray, counts: Sequence | np.ndarray,
                   phi: Sequence | np.ndarray, weights: Sequence | np.ndarray | None = None,
                   tol: float = 1e-8) -> dict:
    """Check the BMF definition (BR §2.4) for any allocation ``phi``.

    Returns ``{"feasible", "holds", "violations"}``: the allocation must satisfy capacity and
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
    return {"feasible": feasible, "holds": feasible and not violations, "violations": violations}
