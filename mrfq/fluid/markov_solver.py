"""Markov demand model (BR §4.1): mean service rates γ_k = ρ_k / E[n_k] per policy and load.

The state n = (n_1 … n_K) has birth rate λ_k = ρ_k (μ_k = 1, SPEC §4) and death rate
n_k φ_k(n). We solve for the stationary distribution on the level truncation
T(L) = {n : Σ_k n_k ≤ L} (arrivals blocked at level L), with

* the generator built in Numba (incoming-rate CSR, states in level order);
* BiCGSTAB preconditioned by a forward Gauss–Seidel sweep in level order (an O(nnz)
  triangular solve; a direct sparse LU fills in catastrophically on these 3-D chains);
  GMRES with an SSOR preconditioner is the fallback;
* a tail correction instead of brute force. All three policies are scale invariant
  (φ(cn) = φ(n)/c), so far from the origin the level mass behaves like l^α r^l and the
  class mix within a level is (asymptotically) affine in l. We fit
  log P(Σn = l) = a + α log l + l log r and E[n_k | l] = b_k + c_k l on the levels
  [0.5 L, 0.8 L] (below the blocking boundary's distortion) and replace the distribution
  above 0.8 L by that fit, summed to infinity. This converges ~10× faster in L than the
  plain truncated mean, which is also reported (``gamma_truncated``);
* the error estimate comes from the changes d of the corrected γ_k between successive
  truncations (relative): when they shrink geometrically with ratio q < 1/2 per step the
  remaining error is d q / (1 − q), otherwise d itself. L grows until every estimate is
  ≤ tol, or we stop with an error rather than a silent answer.

This module is the solver of the policies whose registry ``law`` is
:data:`mrfq.policies.MARKOV_LAW` (DRF, PF, BMF: their kernels in :mod:`mrfq.fluid.kernels`);
:mod:`mrfq.fluid.laws` chooses it, and :mod:`mrfq.fluid.markov` is the public face (one
BLAS thread, the point record).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from numba import njit
from numpy.typing import ArrayLike

from mrfq.errors import InputError
from mrfq.fluid import kernels
from mrfq.fluid.problem import MarkovResult, as_problem, check_truncation, stable_loads
from mrfq.scenario.checks import MIN_TOLERANCE, TOLERANCE_FLOOR

#: bump when the solver's results change; part of every stored fluid point's key
#: (:func:`mrfq.fluid.laws.solver_version`). Not bumped when the records' ``flow_variance``
#: was added beside unchanged numbers (issue 25; a record from before it gives its packet
#: points their runs' own intervals), bumped when its value changed (6: settled by
#: :mod:`mrfq.fluid.markov_variance`; γ the same as in 5, at least two changes before a
#: stop)
SOLVER_VERSION = "6"
#: largest truncated state space we attempt (states); beyond it we raise, not guess
MAX_STATES = 5_000_000
#: largest truncation level we attempt: one class at load 0.997 needs ~3 000 levels (5–100 s
#: measured, by the machine's load) and at 0.999 ~5 800, where the iterative solve ran 20 s
#: and did not converge; beyond this the flow-level simulator is the method
MAX_LEVEL = 2000


def initial_level(resource_loads: ArrayLike, tolerance: float) -> int:
    """The first truncation level of :func:`solve`: the level mass decays about like
    r^(2l) from there (r the largest resource load, at least 0.05), so
    L = max(16, ⌈½ ln(tol) / ln r⌉)."""
    r0 = max(float(np.max(resource_loads)), 0.05)
    return max(16, math.ceil(0.5 * math.log(tolerance) / math.log(r0)))


@njit(cache=True)
def _enumerate_states(level, K):
    """All n ∈ N^K with Σ n_k ≤ level, ordered by level then lexicographically."""
    total = 1
    for k in range(1, K + 1):
        total = total * (level + k) // k  # C(level + K, K)
    states = np.zeros((total, K), dtype=np.int64)
    current = np.zeros(K, dtype=np.int64)
    row = 0
    for lev in range(level + 1):
        # lexicographic enumeration of compositions of lev into K parts
        current[:] = 0
        current[K - 1] = lev
        while True:
            states[row, :] = current
            row += 1
            if not kernels.next_composition(current):
                break
    return states


@njit(cache=True)
def build_incoming(states, phi, rho, level):
    """CSR of incoming transition rates (row i = rates into state i) and out-rates."""
    S, K = states.shape
    stride = np.ones(K, dtype=np.int64)
    for k in range(K - 2, -1, -1):
        stride[k] = stride[k + 1] * (level + 1)
    lookup = np.full(stride[0] * (level + 1), -1, dtype=np.int64)
    for s in range(S):
        key = 0
        for k in range(K):
            key += states[s, k] * stride[k]
        lookup[key] = s
    indptr = np.zeros(S + 1, dtype=np.int64)
    indices = np.empty(2 * K * S, dtype=np.int64)
    data = np.empty(2 * K * S)
    out_rate = np.zeros(S)
    p = 0
    for s in range(S):
        key = 0
        lev = 0
        for k in range(K):
            key += states[s, k] * stride[k]
            lev += states[s, k]
        for k in range(K):
            out_rate[s] += states[s, k] * phi[s, k]
            if lev < level:
                out_rate[s] += rho[k]
        for k in range(K):
            if states[s, k] > 0 and rho[k] > 0.0:  # arrival from n - e_k
                indices[p] = lookup[key - stride[k]]
                data[p] = rho[k]
                p += 1
        if lev < level:
            for k in range(K):  # departure from n + e_k
                src = lookup[key + stride[k]]
                rate = (states[s, k] + 1) * phi[src, k]
                if rate > 0.0:
                    indices[p] = src
                    data[p] = rate
                    p += 1
        indptr[s + 1] = p
    return indptr, indices[:p], data[:p], out_rate


@njit(cache=True)
def _lower_solve(indptr, indices, data, diag, rhs, out):
    """Solve (D + L) y = rhs for the lower-triangular part of a CSR matrix (GS sweep)."""
    n = rhs.shape[0]
    for i in range(n):
        total = rhs[i]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j < i:
                total -= data[p] * out[j]
        out[i] = total / diag[i]


@njit(cache=True)
def _upper_solve(indptr, indices, data, diag, rhs, out):
    """Solve (D + U) y = rhs for the upper-triangular part of a CSR matrix."""
    n = rhs.shape[0]
    for i in range(n - 1, -1, -1):
        total = rhs[i]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j > i:
                total -= data[p] * out[j]
        out[i] = total / diag[i]


class PinnedSystem(NamedTuple):
    """Qᵀ of a truncated chain (row n = the rates into n, minus the rate out on the
    diagonal), its block without state 0 (sorted CSR; pinning one entry of a solution
    removes the free multiple of π), that block's diagonal and its forward Gauss–Seidel
    preconditioner (one sweep in level order)."""

    system: sp.csr_matrix
    sub: sp.csr_matrix
    diag: np.ndarray
    gauss_seidel: sla.LinearOperator


def pinned_system(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                  out_rate: np.ndarray) -> PinnedSystem:
    """The :class:`PinnedSystem` of the incoming-rate CSR of :func:`build_incoming` (the
    stationary solve here and the Poisson equation of :mod:`mrfq.fluid.markov_variance`
    both solve with it)."""
    n = out_rate.shape[0]
    incoming = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    system = (incoming - sp.diags(out_rate)).tocsr()
    sub = system[1:, 1:].tocsr()
    sub.sort_indices()
    diag = sub.diagonal().copy()

    def gauss_seidel(r):
        y = np.empty_like(r)
        _lower_solve(sub.indptr, sub.indices, sub.data, diag, r, y)
        return y

    return PinnedSystem(system, sub, diag, sla.LinearOperator(sub.shape, gauss_seidel))


def _stationary(indptr, indices, data, out_rate, guess: np.ndarray | None) -> np.ndarray:
    """Stationary vector of the truncated chain: π Q = 0, Σ π = 1 (π_0 pinned to 1)."""
    if out_rate.shape[0] == 1:
        return np.ones(1)
    system, sub, diag, gauss_seidel = pinned_system(indptr, indices, data, out_rate)
    rhs = -system[1:, 0].toarray().ravel()
    x0 = None if guess is None else guess[1:] / guess[0]

    def ssor(r):
        y = np.empty_like(r)
        _lower_solve(sub.indptr, sub.indices, sub.data, diag, r, y)
        z = np.empty_like(r)
        _upper_solve(sub.indptr, sub.indices, sub.data, diag, diag * y, z)
        return z

    scale = np.abs(rhs).sum()
    pi = None
    x, info = sla.bicgstab(sub, rhs, x0=x0, rtol=1e-12, maxiter=20000, M=gauss_seidel)
    if info == 0 and np.all(np.isfinite(x)):
        pi = np.concatenate(([1.0], x))
    if pi is None or np.abs(system @ pi).sum() > 1e-9 * max(scale, 1.0) * pi.sum():
        x, info = sla.gmres(sub, rhs, x0=x0, rtol=1e-13, restart=100, maxiter=200,
                            M=sla.LinearOperator(sub.shape, ssor))
        pi = np.concatenate(([1.0], x))
        if info != 0 or np.abs(system @ pi).sum() > 1e-9 * max(scale, 1.0) * pi.sum():
            raise InputError("the stationary solver did not converge (a load too close to "
                             "saturation?): lower the load or use [fluid] method = "
                             "'simulation'", "tolerance")
    pi = np.maximum(pi, 0.0)
    return pi / pi.sum()


def _level_decay(pi: np.ndarray, states: np.ndarray, level: int) -> float:
    """Geometric decay rate r of P(Σ n = l), fitted over the middle of the truncation."""
    mass = np.bincount(states.sum(axis=1), weights=pi, minlength=level + 1)
    lo, hi = max(1, int(0.5 * level)), max(2, int(0.9 * level))
    tail = mass[lo:hi + 1]
    ok = tail > 1e-300
    if ok.sum() < 3:
        return 0.5
    slope = np.polyfit(np.arange(lo, hi + 1)[ok], np.log(tail[ok]), 1)[0]
    return float(min(max(math.exp(slope), 1e-6), 0.999))


def tail_corrected_mean(pi: np.ndarray, states: np.ndarray, level: int
                        ) -> tuple[np.ndarray, float]:
    """E[n_k] with the distribution above 0.8 L replaced by its fitted asymptotic form.

    Returns (corrected means, fitted asymptotic level-decay rate r). Falls back to the
    plain truncated mean when too few levels carry mass to fit.
    """
    K = states.shape[1]
    lev = states.sum(axis=1)
    mass = np.bincount(lev, weights=pi, minlength=level + 1)
    moments = np.stack([np.bincount(lev, weights=pi * states[:, k], minlength=level + 1)
                        for k in range(K)], axis=1)
    top, low = int(0.8 * level), int(0.5 * level)
    levels = np.arange(low, top + 1)
    ok = mass[low:top + 1] > 1e-280
    plain = pi @ states
    if ok.sum() < 6 or low < 4:
        return plain, _level_decay(pi, states, level)
    x = levels[ok].astype(float)
    design = np.c_[np.ones_like(x), np.log(x), x]
    coef = np.linalg.lstsq(design, np.log(mass[low:top + 1][ok]), rcond=None)[0]
    rate = float(np.exp(coef[2]))
    if not rate < 1.0:
        return plain, rate
    conditional = moments[low:top + 1][ok] / mass[low:top + 1][ok, None]
    slope, intercept = np.polyfit(x, conditional, 1)
    # tail levels until the fitted mass is negligible
    span = int(min(200_000, max(100, 60.0 / max(-coef[2], 1e-6))))
    tail = np.arange(top + 1, top + 1 + span, dtype=float)
    model = coef[0] + coef[1] * np.log(tail) + coef[2] * tail
    anchor = coef[0] + coef[1] * np.log(top) + coef[2] * top
    tail_mass = mass[top] * np.exp(model - anchor)
    total = mass[: top + 1].sum() + tail_mass.sum()
    tail_moments = tail_mass[:, None] * (np.outer(tail, slope) + intercept)
    corrected = (moments[: top + 1].sum(axis=0) + tail_moments.sum(axis=0)) / total
    return corrected, rate


def _solve_truncation(code, requirements, weights, rho, level, guess_pi=None, previous_phi=None):
    """Stationary solve on T(level); returns (π, states, E[n], φ per state).

    States are in level order, so a smaller truncation is a prefix: its π is the initial
    guess and its allocations ``previous_phi`` are reused (only new states are allocated).
    """
    K = requirements.shape[0]
    # counted before they are enumerated: at a high load the enumeration alone would
    # exhaust the memory (a MemoryError, not this message)
    if level > MAX_LEVEL:
        raise InputError(
            f"truncation needs more than {MAX_LEVEL} levels (level {level}): the load is too "
            "close to saturation for the Markov solver; relax the tolerance, lower the load "
            "or use [fluid] method = 'simulation'", "tolerance")
    if math.comb(level + K, K) > MAX_STATES:
        raise InputError(
            f"truncation needs more than {MAX_STATES} states (level {level}); "
            "relax the tolerance, lower the load or use [fluid] method = 'simulation'",
            "tolerance")
    states = _enumerate_states(level, K)
    done = 0 if previous_phi is None else previous_phi.shape[0]
    phi = np.empty((states.shape[0], K))
    if done:
        phi[:done] = previous_phi
    phi[done:] = kernels.allocate_states(code, requirements, weights,
                                         states[done:].astype(np.float64))
    if np.any(np.isnan(phi)):
        raise InputError("no BMF allocation found in some state", "requirements")
    indptr, indices, data, out_rate = build_incoming(states, phi, rho, level)
    guess = None
    if guess_pi is not None:
        guess = np.zeros(states.shape[0])
        guess[: guess_pi.shape[0]] = guess_pi
        guess[guess_pi.shape[0]:] = guess_pi[-1] * 1e-3
    pi = _stationary(indptr, indices, data, out_rate, guess)
    mean = pi @ states
    return pi, states, mean, phi


class Truncation(NamedTuple):
    """One truncation T(level) of a solve: its stationary law ``pi`` on ``states`` (S×K,
    level order), the per-flow rates ``phi`` (S×K) there, and the problem it belongs to
    (``requirements`` K×J and ``weights`` K as :func:`as_problem` leaves them, loads
    ``rho`` K), so that :func:`grow` can go on from it."""
    pi: np.ndarray
    states: np.ndarray
    phi: np.ndarray
    level: int
    code: int
    requirements: np.ndarray
    weights: np.ndarray
    rho: np.ndarray


def grow(truncation: Truncation, max_states: int = MAX_STATES) -> Truncation | None:
    """The truncation after ``truncation``, max(10, L/4) levels larger (the step
    :func:`solve` takes before its changes can be extrapolated), its law solved from the
    smaller one's; None where it would exceed :data:`MAX_LEVEL`, :data:`MAX_STATES` or
    ``max_states`` (the caller keeps what it has: no error, the budget is the γ solve's
    to enforce). A solve's ``max_level`` does not bound it."""
    K = truncation.states.shape[1]
    level = truncation.level + max(10, truncation.level // 4)
    if level > MAX_LEVEL or math.comb(level + K, K) > min(MAX_STATES, max_states):
        return None
    pi, states, _, phi = _solve_truncation(truncation.code, truncation.requirements,
                                           truncation.weights, truncation.rho, level,
                                           truncation.pi, truncation.phi)
    return truncation._replace(pi=pi, states=states, phi=phi, level=level)


def solve(code: int, requirements: ArrayLike, loads: ArrayLike,
          weights: ArrayLike | None = None, tolerance: float = 1e-5,
          max_level: int | None = None
          ) -> tuple[MarkovResult, tuple[Truncation, ...]]:
    """The stationary solve of a policy with a kernel (``code``: its kernel code, DRF, PF
    or BMF): (result, its last three truncations, the final one last: what
    :mod:`mrfq.fluid.markov_variance` estimates its variance's truncation error from).

    ``requirements`` K×J, ``loads`` ρ_k (K, work per unit time with μ_k = 1); must be stable
    (Σ_k ρ_k a_kj < 1, BR eq. 8). ``tolerance``: target relative truncation error of every
    γ_k; InputError if it cannot be reached within :data:`MAX_STATES` states and
    :data:`MAX_LEVEL` levels, or from at least two changes of the corrected γ. γ_k = ρ_k /
    E[n_k] with E[n_k] tail-corrected (module doc); π is the truncated chain's law on the
    final level. BLAS threads are the caller's (:mod:`mrfq.fluid.markov` pins one).
    """
    check_truncation(tolerance, max_level)
    if tolerance < MIN_TOLERANCE:  # (the estimate counts truncation only)
        raise InputError(TOLERANCE_FLOOR.format(tolerance), "tolerance")
    a, _, w = as_problem(requirements, None, weights)
    rho = stable_loads(a, loads, nonzero=True)
    resource_load = rho @ a
    level = initial_level(resource_load, tolerance)
    if max_level is not None:
        level = min(level, max_level)
    pi, states, plain, phi = _solve_truncation(code, a, w, rho, level)
    mean, decay = tail_corrected_mean(pi, states, level)
    estimate = np.full(a.shape[0], np.inf)
    history: list[np.ndarray] = []
    earlier: tuple[Truncation, ...] = ()
    ratios: list[np.ndarray] = []
    steps: list[int] = []
    for _ in range(14):
        step = max(10, level // 4)
        if len(history) >= 2 and np.all(np.isfinite(history[-1])):
            # successive changes shrink geometrically: aim the next one at tolerance / 3,
            # growing L by at most a third (the state count by at most 2.4x) per step
            ratio = float(np.max(history[-1] / np.maximum(history[-2], 1e-300)))
            if 0.0 < ratio < 0.9:
                per_level = math.log(ratio) / steps[-1]
                need = math.log(tolerance / (3 * float(np.max(history[-1])))) / per_level
                step = int(min(max(max(10, level // 5), math.ceil(need)), level // 3))
        if max_level is not None:
            step = min(step, max_level - level)
            if step <= 0:
                break
        previous = mean
        # the last truncations: markov_variance extrapolates v's changes from them
        earlier = (*earlier[-1:], Truncation(pi, states, phi, level, code, a, w, rho))
        pi, states, plain, phi = _solve_truncation(code, a, w, rho, level + step, pi, phi)
        level += step
        mean, decay = tail_corrected_mean(pi, states, level)
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.abs(mean - previous) / np.where(mean > 0, mean, 1.0)
        change = np.where(rho > 0, change, 0.0)
        estimate = change
        ratio = None
        if history:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # (over: a change of 0 after one at rounding level, raised to a power)
                ratio = (change / np.maximum(history[-1], 1e-300)) ** (step / steps[-1])
            ratio = np.where(change > 0, ratio, 0.0)
        if ratio is not None and ratios:
            # geometric tail of the remaining changes, d q / (1 - q), with q the larger of
            # the last two per-step ratios, doubled: the ratio of a pre-asymptotic first
            # step is far too small, and q creeps up as L grows (one ratio, undoubled,
            # underestimated the true error up to 109x on the exact anchors)
            q = 2.0 * np.maximum(ratio, ratios[-1])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                estimate = np.where(q < 0.5, change * q / (1.0 - q), change)
        if ratio is not None:
            ratios.append(ratio)
        history.append(change)
        steps.append(step)
        # one change alone is no estimate: convergence is not monotone (Figure 1, PF at
        # load 0.9: levels 33 and 43 differ by 5e-5 where both are 2e-3 off, and a stop
        # there returned an error 39 times the estimate, twice the tolerance 1e-3)
        if len(history) >= 2 and np.all(estimate <= tolerance):
            break
    if len(history) < 2:  # (max_level stopped the growth: one change is no estimate)
        raise InputError(f"max_level {max_level} leaves fewer than two truncation changes "
                         "to estimate the error from: raise it or leave it out", "max_level")
    if not np.all(estimate <= tolerance):
        raise InputError(f"truncation error {estimate.max():.2e} above tolerance "
                         f"{tolerance:g} at level {level}", "tolerance")
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(rho > 0, rho / mean, np.nan)
        truncated = np.where(rho > 0, rho / plain, np.nan)
    return MarkovResult(gamma=gamma, mean_in_progress=mean, error_estimate=estimate,
                        level=level, states=int(states.shape[0]), level_decay=decay,
                        gamma_truncated=truncated), (
        *earlier, Truncation(pi, states, phi, level, code, a, w, rho))


