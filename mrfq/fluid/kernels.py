"""Numba kernels for the fluid allocations of BR §2–3 (plain arrays in, plain arrays out).

Every kernel takes ``requirements`` (K×J, a_kj ≥ 0, each row with a positive entry),
``counts`` (K, n_k ≥ 0 transactions of class k in progress) and ``weights`` (K, > 0), and
writes ``phi`` (K): the rate φ_k of *each* class-k transaction, so that class k holds the
fraction n_k φ_k a_kj of resource j (capacity Σ_k n_k φ_k a_kj ≤ 1, BR eq. 1). Classes with
n_k = 0 get φ_k = 0. The public, validated wrappers live in :mod:`mrfq.fluid.allocators`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mrfq import policies
from mrfq.fluid import bmf_levels

#: kernel codes of the fluid policies with a kernel here (the registry's, bound at import:
#: the compiled dispatch of :func:`allocate_into` keeps them as constants)
_CODES = policies.codes(policies.FLUID)
DRF, PF, BMF = _CODES.DRF, _CODES.PF, _CODES.BMF
#: relative tolerance used to decide that a resource is saturated
SATURATION_TOL = 1e-10


@njit(cache=True)
def drf(requirements, counts, weights, phi):
    """Weighted DRF by progressive filling (BR §3.1, Ghodsi et al. NSDI'11).

    Dominant shares φ_k max_j a_kj / w_k of all unfrozen classes rise together; when a
    resource saturates every unfrozen class using it (a_kj > 0) is frozen.
    """
    K, J = requirements.shape
    unfrozen = np.zeros(K, dtype=np.bool_)
    rate = np.zeros(K)  # d phi_k / d level for unfrozen classes
    for k in range(K):
        phi[k] = 0.0
        if counts[k] > 0:
            unfrozen[k] = True
            dominant = 0.0
            for j in range(J):
                dominant = max(dominant, requirements[k, j])
            rate[k] = weights[k] / dominant
    fixed = np.zeros(J)  # usage of resource j by frozen classes
    slope = np.zeros(J)
    limit = np.zeros(J)
    while True:
        any_unfrozen = False
        for k in range(K):
            any_unfrozen = any_unfrozen or unfrozen[k]
        if not any_unfrozen:
            break
        level = np.inf
        for j in range(J):
            slope[j] = 0.0
            for k in range(K):
                if unfrozen[k]:
                    slope[j] += counts[k] * rate[k] * requirements[k, j]
            limit[j] = np.inf
            if slope[j] > 0.0:
                limit[j] = max(1.0 - fixed[j], 0.0) / slope[j]
                level = min(level, limit[j])
        for j in range(J):
            if slope[j] > 0.0 and limit[j] <= level * (1.0 + SATURATION_TOL):
                for k in range(K):
                    if unfrozen[k] and requirements[k, j] > 0.0:
                        unfrozen[k] = False
                        phi[k] = rate[k] * level
                        for r in range(J):
                            fixed[r] += counts[k] * phi[k] * requirements[k, r]


@njit(cache=True)
def _solve_small(matrix, rhs, out):
    """Solve a small dense system by Gaussian elimination with partial pivoting.

    Returns False when the matrix is (numerically) singular.
    """
    n = rhs.shape[0]
    a = matrix.copy()
    b = rhs.copy()
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(a[i, j]))
    if scale == 0.0:
        return False
    for col in range(n):
        pivot = col
        for row in range(col + 1, n):
            if abs(a[row, col]) > abs(a[pivot, col]):
                pivot = row
        if abs(a[pivot, col]) <= 1e-14 * scale:
            return False
        if pivot != col:
            for j in range(n):
                a[col, j], a[pivot, j] = a[pivot, j], a[col, j]
            b[col], b[pivot] = b[pivot], b[col]
        for row in range(col + 1, n):
            factor = a[row, col] / a[col, col]
            if factor != 0.0:
                for j in range(col, n):
                    a[row, j] -= factor * a[col, j]
                b[row] -= factor * b[col]
    for row in range(n - 1, -1, -1):
        total = b[row]
        for j in range(row + 1, n):
            total -= a[row, j] * out[j]
        out[row] = total / a[row, row]
    return True


@njit(cache=True)
def _pf_dual(requirements, counts, weights, nu):
    """Dual objective g(ν) = Σ_j ν_j − Σ_k n_k w_k log(a_k·ν); +inf outside its domain."""
    K, J = requirements.shape
    value = 0.0
    for j in range(J):
        value += nu[j]
    for k in range(K):
        if counts[k] > 0:
            dot = 0.0
            for j in range(J):
                dot += requirements[k, j] * nu[j]
            if dot <= 0.0:
                return np.inf
            value -= counts[k] * weights[k] * np.log(dot)
    return value


@njit(cache=True)
def pf(requirements, counts, weights, phi):
    """Weighted proportional fairness: max Σ_k n_k w_k log φ_k s.t. capacity (BR §2.3).

    Solved exactly through the convex dual min_{ν≥0} Σ_j ν_j − Σ_k n_k w_k log(a_k·ν) by a
    projected Newton method; then φ_k = w_k / Σ_j a_kj ν_j (KKT, BR eq. 3), with ν_j > 0
    only on saturated resources.
    """
    K, J = requirements.shape
    total = 0.0
    for k in range(K):
        phi[k] = 0.0
        if counts[k] > 0:
            total += counts[k] * weights[k]
    if total == 0.0:
        return
    nu = np.zeros(J)
    for j in range(J):
        for k in range(K):
            if counts[k] > 0 and requirements[k, j] > 0.0:
                nu[j] = total
    grad = np.zeros(J)
    hess = np.zeros((J, J))
    dots = np.zeros(K)
    trial = np.zeros(J)
    for _ in range(200):
        for k in range(K):
            dots[k] = 0.0
            for j in range(J):
                dots[k] += requirements[k, j] * nu[j]
        for j in range(J):
            grad[j] = 1.0
            for r in range(J):
                hess[j, r] = 0.0
        for k in range(K):
            if counts[k] > 0:
                c = counts[k] * weights[k] / dots[k]
                for j in range(J):
                    if requirements[k, j] > 0.0:
                        grad[j] -= c * requirements[k, j]
                        c2 = c / dots[k] * requirements[k, j]
                        for r in range(J):
                            hess[j, r] += c2 * requirements[k, r]
        # free variables: positive, or at zero with a descent direction into the interior
        free = np.zeros(J, dtype=np.bool_)
        n_free = 0
        worst = 0.0
        for j in range(J):
            if nu[j] > 0.0 or grad[j] < 0.0:
                free[j] = True
                n_free += 1
                worst = max(worst, abs(grad[j]))
        if worst < 1e-14:
            break
        index = np.empty(n_free, dtype=np.int64)
        p = 0
        for j in range(J):
            if free[j]:
                index[p] = j
                p += 1
        sub = np.empty((n_free, n_free))
        rhs = np.empty(n_free)
        step = np.zeros(n_free)
        diag = 0.0
        for a in range(n_free):
            diag = max(diag, hess[index[a], index[a]])
        current = _pf_dual(requirements, counts, weights, nu)
        accepted = False
        # Levenberg damping: a rank-deficient Hessian (classes spanning fewer directions
        # than the free resources) makes the plain Newton step useless, so damp harder
        damping = 1e-12
        for _try in range(8):
            for a in range(n_free):
                rhs[a] = -grad[index[a]]
                for b in range(n_free):
                    sub[a, b] = hess[index[a], index[b]]
                sub[a, a] += damping * diag + 1e-300
            if not _solve_small(sub, rhs, step):
                for a in range(n_free):
                    step[a] = rhs[a] / max(sub[a, a], 1e-300)
            t = 1.0
            for _ls in range(40):
                for j in range(J):
                    trial[j] = nu[j]
                for a in range(n_free):
                    trial[index[a]] = max(nu[index[a]] + t * step[a], 0.0)
                value = _pf_dual(requirements, counts, weights, trial)
                decrease = 0.0
                for j in range(J):
                    decrease += grad[j] * (trial[j] - nu[j])
                if value <= current + 1e-4 * decrease and decrease < 0.0:
                    accepted = True
                    break
                t *= 0.5
            if accepted:
                break
            damping *= 1e3
        if not accepted:
            break
        for j in range(J):
            nu[j] = trial[j]
    for k in range(K):
        if counts[k] > 0:
            dot = 0.0
            for j in range(J):
                dot += requirements[k, j] * nu[j]
            phi[k] = weights[k] / dot
    # Newton stops when the dual can no longer decrease in floating point (|∇| ~ 1e-9);
    # rescale so that capacity holds exactly (a relative change of that order)
    worst = 0.0
    for j in range(J):
        used = 0.0
        for k in range(K):
            used += counts[k] * phi[k] * requirements[k, j]
        worst = max(worst, used)
    if worst > 1.0:
        for k in range(K):
            phi[k] /= worst


@njit(cache=True)
def bmf_mapping_allocation(requirements, counts, weights, mapping, phi):
    """Allocation for one mapping class → bottleneck resource (BR §3.3), if feasible.

    Every mapped resource is saturated and classes mapped to the same resource j get equal
    weighted shares s_j = φ_k a_kj / w_k. Returns True (and fills ``phi``) when the linear
    system is regular, all s_j > 0, capacity holds, and each class's share on its mapped
    resource is maximal there (the BMF conditions).
    """
    K, J = requirements.shape
    slot = np.full(J, -1, dtype=np.int64)
    m = 0
    for k in range(K):
        if counts[k] > 0 and slot[mapping[k]] < 0:
            slot[mapping[k]] = m
            m += 1
    matrix = np.zeros((m, m))
    rhs = np.ones(m)
    shares = np.zeros(m)
    for j in range(J):
        if slot[j] >= 0:
            for k in range(K):
                if counts[k] > 0:
                    r = mapping[k]
                    matrix[slot[j], slot[r]] += (counts[k] * weights[k] * requirements[k, j]
                                                 / requirements[k, r])
    if not _solve_small(matrix, rhs, shares):
        return False
    for a in range(m):
        if not shares[a] > 0.0:
            return False
    for k in range(K):
        phi[k] = 0.0
        if counts[k] > 0:
            r = mapping[k]
            phi[k] = weights[k] * shares[slot[r]] / requirements[k, r]
    for j in range(J):
        used = 0.0
        top = 0.0
        for k in range(K):
            if counts[k] > 0:
                used += counts[k] * phi[k] * requirements[k, j]
                top = max(top, phi[k] * requirements[k, j] / weights[k])
        if used > 1.0 + 1e-9:
            return False
        if slot[j] >= 0 and shares[slot[j]] < top * (1.0 - 1e-9):
            return False
    return True


#: above this many class → bottleneck mappings (Π_k of the resources class k uses, over
#: all classes), :func:`bmf` takes the fixed point of local fair queueing
#: (:mod:`mrfq.fluid.bmf_levels`) instead of enumerating; every packaged scenario but
#: random_network (5.4e9) has at most 64. An enumeration costs up to this many linear
#: solves per state, which the flow-level simulator pays at every new state.
ENUMERATION_LIMIT = 4096


@njit(cache=True)
def bmf(requirements, counts, weights, phi):
    """Bottleneck max fairness (BR §2.4): by enumeration (:func:`bmf_enumerate`) when the
    classes have at most ENUMERATION_LIMIT class → bottleneck mappings, else the
    fixed point of per-resource fair queueing (:func:`mrfq.fluid.bmf_levels.bmf_levels`)
    whose bottleneck mapping is solved exactly and checked against every BMF condition
    (:func:`bmf_mapping_allocation`); ``phi`` is NaN if that fails."""
    K, J = requirements.shape
    # counted over every class, active or not, so that all the states of one scenario
    # take the same path (one rule for choosing among BMF allocations)
    mappings = 1.0
    for k in range(K):
        usable = 0
        for j in range(J):
            if requirements[k, j] > 0.0:
                usable += 1
        mappings *= usable
    if mappings <= ENUMERATION_LIMIT:
        bmf_enumerate(requirements, counts, weights, phi)
        return
    levels = np.zeros(J)
    mapping = np.zeros(K, dtype=np.int64)
    for damping in bmf_levels.DAMPINGS:
        if (bmf_levels.bmf_levels(requirements, counts, weights, levels, damping) > 0
                and bmf_levels.bottleneck_mapping(requirements, counts, weights, levels,
                                                  mapping)
                and bmf_mapping_allocation(requirements, counts, weights, mapping, phi)):
            return
    for k in range(K):
        phi[k] = np.nan


@njit(cache=True)
def bmf_enumerate(requirements, counts, weights, phi):
    """Bottleneck max fairness by enumerating class → bottleneck mappings (BR §3.3).

    For J = 2 the BMF allocation is unique. For J ≥ 3 several may exist; we return, among
    the allocations of all feasible mappings, the one with the largest PF objective
    Σ_k n_k w_k log φ_k; exact ties go to the first mapping in lexicographic order (class 1
    varying slowest, resources in index order). ``phi`` is NaN if no mapping is feasible.
    """
    K, J = requirements.shape
    choices = np.zeros(K, dtype=np.int64)  # position within each class's usable resources
    usable = np.zeros((K, J), dtype=np.int64)
    n_usable = np.zeros(K, dtype=np.int64)
    any_active = False
    for k in range(K):
        phi[k] = 0.0
        if counts[k] > 0:
            any_active = True
            for j in range(J):
                if requirements[k, j] > 0.0:
                    usable[k, n_usable[k]] = j
                    n_usable[k] += 1
        else:
            usable[k, 0] = 0
            n_usable[k] = 1
    if not any_active:
        return
    mapping = np.zeros(K, dtype=np.int64)
    candidate = np.zeros(K)
    best_value = -np.inf
    found = False
    while True:
        for k in range(K):
            mapping[k] = usable[k, choices[k]]
        if bmf_mapping_allocation(requirements, counts, weights, mapping, candidate):
            value = 0.0
            for k in range(K):
                if counts[k] > 0:
                    value += counts[k] * weights[k] * np.log(candidate[k])
            if not found or value > best_value + 1e-12 * abs(best_value):
                best_value = value
                found = True
                for k in range(K):
                    phi[k] = candidate[k]
        # next mapping, last class varying fastest
        k = K - 1
        while k >= 0:
            choices[k] += 1
            if choices[k] < n_usable[k]:
                break
            choices[k] = 0
            k -= 1
        if k < 0:
            break
    if not found:
        for k in range(K):
            phi[k] = np.nan


@njit(cache=True)
def next_composition(state):
    """Advance ``state`` (K parts summing to a level) to the next composition of that level
    in the order (0, …, 0, l), (0, …, 1, l−1), …, (l, 0, …, 0): one unit moves left past the
    last non-zero part, the rest of it goes to the last part. Returns False (``state``
    unchanged) after the last composition. The Markov solver and balanced fairness
    enumerate every level in this order."""
    K = state.shape[0]
    j = K - 1
    while j > 0 and state[j] == 0:
        j -= 1
    if j == 0:
        return False
    carry = state[j]
    state[j] = 0
    state[j - 1] += 1
    state[K - 1] = carry - 1
    return True


@njit(cache=True)
def allocate_into(policy, requirements, counts, weights, phi):
    """Dispatch to the kernel of ``policy`` (the registry's code of DRF, PF or BMF); any
    other code (balanced fairness has no kernel here: :mod:`mrfq.fluid.balanced`) gives
    NaN rates, never another policy's."""
    if policy == DRF:
        drf(requirements, counts, weights, phi)
    elif policy == PF:
        pf(requirements, counts, weights, phi)
    elif policy == BMF:
        bmf(requirements, counts, weights, phi)
    else:
        phi[:] = np.nan


@njit(cache=True)
def allocate_states(policy, requirements, weights, states):
    """φ for every state (row of ``states``, S×K counts); returns an S×K array."""
    S, K = states.shape
    out = np.zeros((S, K))
    counts = np.zeros(K)
    phi = np.zeros(K)
    for s in range(S):
        for k in range(K):
            counts[k] = states[s, k]
        allocate_into(policy, requirements, counts, weights, phi)
        for k in range(K):
            out[s, k] = phi[k]
    return out
