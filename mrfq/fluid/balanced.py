"""Balanced fairness (Bonald & Proutière 2003; Bonald, Massoulié, Proutière, Virtamo 2006).

With K classes, J resources of capacity 1 and requirements a_kj (SPEC §1), the balance
function is

    Φ(0) = 1,   Φ(n) = max_j Σ_{k: n_k > 0} a_kj Φ(n − e_k)            (capacities C_j = 1)

and class k, with n_k transactions in progress, receives the total rate
x_k(n) = Φ(n − e_k) / Φ(n), i.e. **φ_k(n) = x_k(n) / n_k per transaction**: the convention
of :mod:`mrfq.fluid.allocators` (class k holds n_k φ_k a_kj = x_k a_kj of resource j, so
capacity reads Σ_k x_k a_kj ≤ 1, with equality on the resource attaining the max). With
J = 1 this is processor sharing: Φ(n) is a multinomial coefficient and each of n flows gets
1/n. BF is the most efficient balanced allocation, hence *insensitive*: the stationary law
of n depends on the size laws only through their means,

    π(n) ∝ Φ(n) Π_k ρ_k^{n_k},

so γ_k = ρ_k / E[n_k] needs no linear solve. Everything is computed in logs (Φ grows like
a multinomial). BF is not always Pareto efficient (it is on polymatroid capacity sets: one
resource, orthogonal classes, …).

**Weights** have no effect, so they are accepted and ignored: a weighted balance function
Φ_w(n) = max_j Σ_k a_kj w_k Φ_w(n − e_k) with x_k = w_k Φ_w(n − e_k)/Φ_w(n) is balanced, but
Φ'(n) = Φ_w(n) / Π_k w_k^{n_k} satisfies the unweighted recursion and gives the same x_k —
BF is unique given the capacity set.

**Truncation.** γ_k is computed on the levels Σ n ≤ L, streamed level by level (memory: one
level of Φ), with the exact π restricted to them (no blocking distortion). The level mass
m_l behaves like l^α r^l; with q = max(m_L / m_{L−1}, r fitted on [L/2, L]) bounding every
further ratio in that model, the missing mass is ≤ m_L q/(1 − q) and the missing moment of
n_k ≤ m_L (L q/(1 − q) + q/(1 − q)²) (using n_k ≤ l). The reported relative error estimate
of γ_k is the larger of the missing fractions of mass and of Σ n_k. L grows until it is ≤
the tolerance.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid.kernels import next_composition
from mrfq.fluid.problem import MarkovResult, as_problem, check_truncation, stable_loads

#: bump when bf_service_rates' results change; for the keys of stored fluid points
BF_VERSION = "1"
#: kernel code of balanced fairness in the flow-level simulator (its registry code)
BF = policies.codes(policies.FLUID).BF
#: most states the truncation may visit (time ~ K·J·states; memory is one level)
MAX_STATES = 400_000_000
#: largest box of Φ values :func:`log_balance_box` builds
MAX_BOX = 30_000_000


@njit(cache=True)
def _log_sum(terms, count):
    """log Σ exp(terms[:count]) (−inf for an empty sum)."""
    top = -np.inf
    for i in range(count):
        top = max(top, terms[i])
    if top == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(count):
        total += math.exp(terms[i] - top)
    return top + math.log(total)


@njit(cache=True)
def _log_phi_state(log_a, state, predecessor_log_phi, terms):
    """log Φ(n) from log Φ(n − e_k) (``predecessor_log_phi[k]``, used where n_k > 0)."""
    K, J = log_a.shape
    best = -np.inf
    for j in range(J):
        count = 0
        for k in range(K):
            if state[k] > 0 and log_a[k, j] > -np.inf:
                terms[count] = predecessor_log_phi[k] + log_a[k, j]
                count += 1
        best = max(best, _log_sum(terms, count))
    return best


@njit(cache=True)
def _log_requirements(requirements):
    """log a_kj (−∞ where a_kj = 0), the terms of the balance recursion in logs."""
    K, J = requirements.shape
    log_a = np.full((K, J), -np.inf)
    for k in range(K):
        for j in range(J):
            if requirements[k, j] > 0.0:
                log_a[k, j] = math.log(requirements[k, j])
    return log_a


@njit(cache=True)
def log_balance_box_kernel(requirements, dims):
    """log Φ on the box Π_k [0, dims_k), flattened row-major (last class fastest)."""
    K, J = requirements.shape
    log_a = _log_requirements(requirements)
    strides = np.ones(K, dtype=np.int64)
    for k in range(K - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    size = strides[0] * dims[0]
    out = np.empty(size)
    state = np.zeros(K, dtype=np.int64)
    previous = np.zeros(K)
    terms = np.empty(K)
    out[0] = 0.0
    for s in range(1, size):
        # odometer: next state in row-major order
        k = K - 1
        while state[k] + 1 == dims[k]:
            state[k] = 0
            k -= 1
        state[k] += 1
        for c in range(K):
            previous[c] = out[s - strides[c]] if state[c] > 0 else 0.0
        out[s] = _log_phi_state(log_a, state, previous, terms)
    return out


def log_balance_box(requirements: ArrayLike, dims: ArrayLike) -> np.ndarray:
    """log Φ(n) for every n with 0 ≤ n_k < dims_k, as a K-dimensional array."""
    a, _, _ = as_problem(requirements)
    dims = np.array(dims, dtype=np.int64).reshape(-1)
    if dims.shape != (a.shape[0],) or np.any(dims < 1):
        raise InputError(f"must be {a.shape[0]} positive integers", "dims")
    if np.prod(dims.astype(float)) > MAX_BOX:
        raise InputError(f"box of {np.prod(dims.astype(float)):.3g} states exceeds "
                         f"{MAX_BOX}", "dims")
    return log_balance_box_kernel(a, dims).reshape(tuple(dims))


def _integer_counts(counts, K: int) -> np.ndarray:
    n = np.array(counts, dtype=np.float64).reshape(-1)
    if n.shape != (K,) or np.any(~np.isfinite(n)) or np.any(n < 0) or np.any(n != np.round(n)):
        raise InputError(f"must be {K} non-negative integers (balanced fairness is "
                         "defined on the integer lattice)", "counts")
    return n.astype(np.int64)


def log_balance(requirements: ArrayLike, counts: ArrayLike) -> float:
    """log Φ(n) of one state."""
    a, _, _ = as_problem(requirements)
    n = _integer_counts(counts, a.shape[0])
    return float(log_balance_box(a, n + 1)[tuple(n)])


def allocate_bf(requirements: ArrayLike, counts: ArrayLike,
                weights: ArrayLike | None = None) -> np.ndarray:
    """Per-transaction BF rates φ_k(n) = Φ(n − e_k) / (n_k Φ(n)); 0 for empty classes.

    Same convention as :func:`mrfq.fluid.allocate` (Σ_k n_k φ_k a_kj ≤ 1). ``weights`` are
    accepted and ignored (they do not change BF; module doc).
    """
    a, _, _ = as_problem(requirements, None, weights)
    n = _integer_counts(counts, a.shape[0])
    box = log_balance_box(a, n + 1)
    phi = np.zeros(a.shape[0])
    here = box[tuple(n)]
    for k in np.flatnonzero(n > 0):
        below = n.copy()
        below[k] -= 1
        phi[k] = math.exp(box[tuple(below)] - here) / n[k]
    return phi


# --- stationary distribution, level by level --------------------------------------------

@njit(cache=True)
def _binomial_table(top, K):
    """C(u, p) for 0 ≤ u ≤ top, 0 ≤ p ≤ K (int64; the callers bound the sizes)."""
    table = np.zeros((top + 1, K + 1), dtype=np.int64)
    for u in range(top + 1):
        table[u, 0] = 1
        for p in range(1, min(u, K) + 1):
            table[u, p] = table[u - 1, p - 1] + (table[u - 1, p] if p <= u - 1 else 0)
    return table


@njit(cache=True)
def _rank(state, level, binom):
    """Lexicographic rank of ``state`` among the compositions of ``level`` into K parts.

    Compositions with a smaller first part come first: Σ_i [C(r_i + p, p) − C(r_i − n_i +
    p, p)], r_i the remaining total, p = K − 1 − i the parts after part i.
    """
    K = state.shape[0]
    rank = 0
    remaining = level
    for i in range(K - 1):
        p = K - 1 - i
        rank += binom[remaining + p, p] - binom[remaining - state[i] + p, p]
        remaining -= state[i]
    return rank


@njit(cache=True)
def stream_levels(requirements, log_rho, first, last, previous, binom):
    """Levels ``first``..``last`` of the unnormalised π(n) = Φ(n) Π ρ_k^{n_k}.

    ``previous``: log Φ on level first − 1 in lexicographic order (level 0: [0.0]).
    Returns (log Φ of level ``last``, log m_l per level, Σ_n n_k π(n) / m_l per level).
    """
    K, J = requirements.shape
    log_a = _log_requirements(requirements)
    count = last - first + 1
    log_mass = np.empty(count)
    conditional = np.zeros((count, K))
    state = np.zeros(K, dtype=np.int64)
    below = np.zeros(K, dtype=np.int64)
    pred = np.zeros(K)
    terms = np.empty(K)
    for level in range(first, last + 1):
        size = binom[level + K - 1, K - 1]
        current = np.empty(size)
        weight = np.empty(size)
        state[:] = 0
        state[K - 1] = level
        top = -np.inf
        for s in range(size):
            for k in range(K):
                below[k] = state[k]
            for k in range(K):
                if state[k] > 0:
                    below[k] -= 1
                    pred[k] = previous[_rank(below, level - 1, binom)]
                    below[k] += 1
            value = _log_phi_state(log_a, state, pred, terms)
            current[s] = value
            w = value
            for k in range(K):
                if state[k] > 0:
                    w += state[k] * log_rho[k]
            weight[s] = w
            top = max(top, w)
            # next composition in lexicographic order
            if not next_composition(state):
                break
        # second pass for the moments, in the same order
        total = 0.0
        state[:] = 0
        state[K - 1] = level
        row = level - first
        for s in range(size):
            e = math.exp(weight[s] - top)
            total += e
            for k in range(K):
                conditional[row, k] += state[k] * e
            if not next_composition(state):
                break
        log_mass[row] = top + math.log(total)
        for k in range(K):
            conditional[row, k] /= total
        previous = current
    return previous, log_mass, conditional


def _tail_estimate(log_mass: np.ndarray, conditional: np.ndarray
                   ) -> tuple[np.ndarray, float, float]:
    """Relative error estimate per class of γ from the truncation at L = len − 1."""
    L = log_mass.size - 1
    shift = log_mass.max()
    mass = np.exp(log_mass - shift)
    q = float(mass[L] / mass[L - 1]) if mass[L - 1] > 0 else 0.0
    low = max(1, L // 2)
    levels = np.arange(low, L + 1, dtype=float)
    ok = np.isfinite(log_mass[low:])
    rate = q
    if ok.sum() >= 4:
        design = np.c_[np.ones(ok.sum()), np.log(levels[ok]), levels[ok]]
        coef = np.linalg.lstsq(design, log_mass[low:][ok], rcond=None)[0]
        rate = float(np.exp(coef[2]))
    q_bound = max(q, rate)
    if not q_bound < 1.0:
        return np.full(conditional.shape[1], np.inf), rate, q_bound
    total = mass.sum()
    moments = mass @ conditional
    tail_mass = mass[L] * q_bound / (1.0 - q_bound)
    tail_moment = mass[L] * (L * q_bound / (1.0 - q_bound) + q_bound / (1.0 - q_bound) ** 2)
    with np.errstate(divide="ignore"):
        estimate = np.maximum(tail_moment / moments, tail_mass / total)
    return estimate, rate, q_bound


def bf_service_rates(requirements: ArrayLike, loads: ArrayLike,
                     weights: ArrayLike | None = None, tolerance: float = 1e-5,
                     max_level: int | None = None) -> MarkovResult:
    """Stationary γ_k = ρ_k / E[n_k] under balanced fairness, for any size laws.

    Arguments and result as :func:`mrfq.fluid.service_rates` (``gamma_truncated`` equals
    ``gamma``: no tail correction is applied, the estimate bounds the truncation error
    in the geometric-tail model; ``level_decay`` is the fitted asymptotic level ratio r).
    Classes with ρ_k = 0 get γ_k = NaN and E[n_k] = 0. ``weights`` are ignored (module doc).
    """
    check_truncation(tolerance, max_level)
    a, _, _ = as_problem(requirements, None, weights)
    K = a.shape[0]
    rho = stable_loads(a, loads, nonzero=True)
    active = np.flatnonzero(rho > 0)
    gamma = np.full(K, np.nan)
    mean = np.zeros(K)
    sub = np.ascontiguousarray(a[active])
    Ka = active.size
    log_rho = np.log(rho[active])
    r0 = max(float((rho @ a).max()), 0.05)
    level = max(16, math.ceil(math.log(tolerance) / math.log(r0)))
    if max_level is not None:
        level = min(level, max_level)
    binom = _binomial_table(level + Ka + 1, Ka)
    previous = np.zeros(1)
    log_mass = np.zeros(1)  # level 0: Φ = 1, π ∝ 1
    conditional = np.zeros((1, Ka))
    done = 0
    states = 1
    estimate = np.full(Ka, np.inf)
    while True:
        # states of the truncation at ``level``: C(level + Ka, Ka); checked before any
        # level is computed, the first included (a point far over the budget fails at once)
        if math.comb(level + Ka, Ka) > MAX_STATES:
            known = f", error estimate {estimate.max():.2e}" if done else ""
            raise InputError(f"balanced fairness truncation needs more than {MAX_STATES} "
                             f"states (level {level}{known}); relax the tolerance or lower "
                             "the load ([fluid] method = 'simulation' needs Φ on a box of "
                             "states too, which near saturation is as large)", "tolerance")
        if binom.shape[0] < level + Ka + 1:
            binom = _binomial_table(2 * level + Ka + 1, Ka)
        previous, more_mass, more_cond = stream_levels(sub, log_rho, done + 1, level,
                                                       previous, binom)
        states += int(sum(math.comb(lv + Ka - 1, Ka - 1) for lv in range(done + 1, level + 1)))
        log_mass = np.concatenate([log_mass, more_mass])
        conditional = np.concatenate([conditional, more_cond])
        done = level
        estimate, rate, q_bound = _tail_estimate(log_mass, conditional)
        if np.all(estimate <= tolerance):
            break
        if max_level is not None and level >= max_level:
            break
        step = max(8, level // 4)
        if 0.0 < q_bound < 1.0 and np.all(np.isfinite(estimate)):
            # the estimate shrinks by about q per level: aim just below the tolerance
            need = math.log(tolerance / (2.0 * float(estimate.max()))) / math.log(q_bound)
            step = int(min(max(8, math.ceil(need)), step))
        if max_level is not None:
            step = min(step, max_level - level)
        level += step
    mass = np.exp(log_mass - log_mass.max())
    mean_active = (mass @ conditional) / mass.sum()
    mean[active] = mean_active
    gamma[active] = rho[active] / mean_active
    error = np.zeros(K)
    error[active] = estimate
    if not np.all(estimate <= tolerance):
        raise InputError(f"truncation error {estimate.max():.2e} above tolerance "
                         f"{tolerance:g} at level {level}", "tolerance")
    return MarkovResult(gamma=gamma, mean_in_progress=mean, error_estimate=error,
                        level=level, states=states, level_decay=rate,
                        gamma_truncated=gamma.copy())
