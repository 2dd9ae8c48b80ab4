"""The sampling spread of a simulated γ_k under the Markov demand model (BR §4.1): the
asymptotic variance of the ratio estimator γ̂_k = Σ sizes / Σ sojourn times of the
measured class-k flows, from the Poisson equation of the model's generator.

Over a long window [0, t] the sizes of the class-k flows served sum to ∫ f_k(n(s)) ds,
f_k(n) = n_k φ_k(n) (the work served to class k per unit time), and their sojourn times
to ∫ n_k(s) ds (Little), up to terms that do not grow with t. By the delta method
γ̂_k − γ_k ≈ ∫ h_k(n(s)) ds / (t E[n_k]) with h_k = f_k − γ_k n_k (mean 0 under π), and
the central limit theorem for additive functionals of an ergodic Markov chain gives

    t · Var ∫ h_k / t → σ_k² = 2 Σ_n π(n) h_k(n) g_k(n),   −Q g_k = h_k

(the Poisson equation; e.g. Glynn & Meyn 1996; Asmussen & Glynn, *Stochastic
Simulation*, §IV.1). We solve its adjoint form (−Qᵀ) u_k = π ∘ h_k, which has the
stationary solver's matrix and preconditioner, and σ_k² = 2 u_k · h_k (the free multiple
of π in u_k drops out because π · h_k = 0). With n_k ≈ λ_k t measured class-k flows
(λ_k = ρ_k, μ_k = 1; E[f_k] = ρ_k, the admitted arrival rate on the truncation), the
relative variance of γ̂_k is

    Var(γ̂_k) / γ_k² ≈ σ_k² / (t E[f_k]²) = v_k / n_k,   v_k = σ_k² / E[f_k],

and :func:`flow_variances` returns v_k, which does not depend on the run's length or the
flows' mean size. The packet points use it as their γ interval's variance
(:mod:`mrfq.kinds.packet`): a run's own batches cannot see the long busy periods it did
not have, the model can (VALIDATION.md, issue 25).

The variance needs a larger truncation than the mean: it weighs the tail by n², and the
mean is tail-corrected (:func:`mrfq.fluid.markov_solver.tail_corrected_mean`) where v is
not. So :func:`settled_flow_variances` starts from the γ solve's last three truncations
and grows the truncation (:func:`mrfq.fluid.markov_solver.grow`, L/4 levels a step) until
every class's error estimate (:func:`truncation_error`: the last change of v_k,
extrapolated geometrically from the last two) is at most :data:`VARIANCE_TOLERANCE`. v
grows with the truncation towards its limit (the truncated chain's tail is lighter).
Checked against one class on one resource, where v = 2ρ(1 + ρ)/(1 − ρ)² exactly
(tests/test_variance_truncation.py): at loads 0.8–0.98 the γ solve's truncation left v
up to 4.4% low, the settled one at most 1.8%, each under its estimate. γ keeps the γ
solve's truncation (its own estimate holds there), so its numbers do not move.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as sla

from mrfq.errors import InputError
from mrfq.fluid import markov_solver

#: relative residual the adjoint solves stop at: v_k within ~0.3% of a solve at 1e-7 on
#: Figure 3's classes at link load 0.9 (BMF, level 113: 259.83 against 260.56; DRF,
#: level 150: 255.62 against 254.90); 1e-6 would double the solve's time. The truncation
#: error estimate does not count this scatter
RESIDUAL = 1e-4
#: largest error estimate of v_k (relative) that counts as settled: 4% in v, 2% in the
#: width z γ √(v/n) of an interval built on it, which moves its coverage by about 0.5
#: points (95% → 94.5%), less than the coverage checks resolve (±1.4 points over 1 000
#: seeds, VALIDATION.md). Half of it made the main job (`make run`) 23–30% slower for
#: intervals 0.2–0.45% wider
VARIANCE_TOLERANCE = 0.04
#: a last change of v below this (relative) is within the adjoint solves' scatter
#: (RESIDUAL: up to ~0.6% between truncations), so its trend says nothing and the change
#: itself is the estimate; above it, changes that do not shrink geometrically count as
#: unsettled
SCATTER = 0.01
#: the truncation v may grow to, in states, as a multiple of γ's final one (three steps of
#: L/4 for three classes): beyond it v is left unsettled rather than cost many times the
#: γ solve (PF, classes on separate resources at loads 0.97 and 0.2, γ tolerance 1e-3:
#: 1.1 s for γ, 50 s of growth for v)
GROWTH_LIMIT = 8


def flow_variances(pi: np.ndarray, states: np.ndarray, phi: np.ndarray,
                   rho: np.ndarray) -> np.ndarray:
    """v_k = lim n_k · Var(γ̂_k) / γ_k² per class (module doc; dimensionless) of the
    truncated Markov chain with stationary law ``pi`` on ``states`` (S×K, level order,
    as :func:`mrfq.fluid.markov_solver.solve` leaves them), per-flow rates ``phi`` (S×K)
    and loads ``rho`` (K, arrival rates with μ_k = 1). NaN for a class without load.
    ``pi`` must be the stationary law of that chain (arrivals blocked at its top level)
    for the Poisson equation to be consistent.
    Raises RuntimeError if a solve does not converge (no silent answer)."""
    K = states.shape[1]
    level = int(states.sum(axis=1).max())
    indptr, indices, data, out_rate = markov_solver.build_incoming(states, phi, rho, level)
    # Qᵀ without state 0: u(0) = 0 fixes the free multiple of π
    _, sub, _, precondition = markov_solver.pinned_system(indptr, indices, data, out_rate)
    counts = states.astype(np.float64)
    result = np.full(K, np.nan)
    for k in range(K):
        if not rho[k] > 0:
            continue
        served = counts[:, k] * phi[:, k]
        gamma = (pi @ served) / (pi @ counts[:, k])
        h = served - gamma * counts[:, k]
        h -= pi @ h  # exactly mean 0 on the truncation: the system is then consistent
        rhs = -(pi * h)[1:]  # Qᵀ u = −π ∘ h
        u, info = sla.bicgstab(sub, rhs, rtol=RESIDUAL, maxiter=20000, M=precondition)
        if info != 0 or not np.all(np.isfinite(u)):
            # BiCGSTAB can break down on these chains; restarted GMRES does not
            u, info = sla.gmres(sub, rhs, rtol=RESIDUAL, restart=60, maxiter=500,
                                M=precondition)
            if info != 0:
                raise RuntimeError(f"Poisson equation of class {k} did not converge")
        sigma2 = 2.0 * float(u @ h[1:])
        # n_k measured flows take t = n_k / E[f_k] (the arrivals the truncation admits)
        result[k] = sigma2 / float(pi @ served)
    return result


def settled_flow_variances(truncations: tuple[markov_solver.Truncation, ...],
                           tolerance: float = VARIANCE_TOLERANCE
                           ) -> tuple[np.ndarray, np.ndarray, int]:
    """v_k of :func:`flow_variances` on a truncation grown until settled (module doc):
    from the γ solve's last ``truncations`` (at least two; :func:`mrfq.fluid.markov_solver.
    solve` gives three, the final one last), each next one
    (:func:`mrfq.fluid.markov_solver.grow`) until every class's error estimate
    (:func:`truncation_error`) is at most ``tolerance`` (relative). The change before the
    last is solved for only where the last exceeds :data:`SCATTER`, the smallest
    truncation's solve being the cheapest. Returns (v on the last truncation, its
    relative error estimate — 0 for a class without load —, that truncation's level).
    The estimate is inf, and v not to be trusted, where the growth stopped unsettled: at
    :data:`GROWTH_LIMIT` times γ's states, the state budget, or a solve that failed on a
    larger truncation (v on γ's own final truncation raises as before)."""
    if len(truncations) < 2:
        raise ValueError("the variance's error needs at least two truncations")
    last = truncations[-1]
    limit = GROWTH_LIMIT * last.states.shape[0]
    values = [_on(last)]
    levels = [last.level]
    def loaded(error: np.ndarray) -> np.ndarray:  # a class without load has no error
        return np.where(last.rho > 0, error, 0.0)

    unsettled = loaded(np.full(last.rho.shape, np.inf))
    try:
        earlier = truncations[-2]
        values.insert(0, _on(earlier))
        levels.insert(0, earlier.level)
        while True:
            error = loaded(truncation_error(values, levels))
            if np.any(error > SCATTER) and len(values) == 2 and len(truncations) >= 3:
                first = truncations[-3]
                values.insert(0, _on(first))
                levels.insert(0, first.level)
                error = loaded(truncation_error(values, levels))
            if not np.any(error > tolerance):
                return values[-1], error, last.level
            grown = markov_solver.grow(last, limit)
            if grown is None:  # over the growth limit or the state budget: unsettled
                return values[-1], unsettled, last.level
            last = grown
            values = [*values[-2:], _on(last)]
            levels = [*levels[-2:], last.level]
    except (RuntimeError, InputError):  # a solve that failed: γ stands, v is unsettled
        return values[-1], unsettled, last.level


def _on(truncation: markov_solver.Truncation) -> np.ndarray:
    """:func:`flow_variances` on one truncation of a solve."""
    return flow_variances(truncation.pi, truncation.states, truncation.phi, truncation.rho)


def truncation_error(values: list[np.ndarray], levels: list[int]) -> np.ndarray:
    """Relative error estimate of the last of ``values`` (v_k on truncations at
    ``levels``, increasing): the last change d (relative) times q / (1 − q), q the ratio
    of the last two changes per the last step's levels. Where d is within the solves'
    scatter (:data:`SCATTER`) q is capped at 1/2, so the estimate is at most d (the
    trend of changes that small is noise); above it q is capped at 0.9 (so changes that
    do not shrink give 9 d: unsettled). From two truncations, d alone. No doubling of q as
    for γ: v's error, ~ L^α r^L with α > 0 from the n² weight, shrinks by less per step
    early than late, so an early q errs high (one class on one resource at load 0.9: the
    error's ratio 0.40, 0.29, 0.24 per 20 levels from level 40). The step-length
    correction assumes a geometric error: it errs high where the last step is the longer
    (as :func:`mrfq.fluid.markov_solver.grow`'s growing steps), low by up to ~10% where it
    is shorter (a solve's adaptive steps) and more under a ``max_level`` that cuts the
    last step short (:func:`settled_flow_variances`' callers set none)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        last = np.abs(values[-1] - values[-2]) / values[-1]
        if len(values) < 3:
            return last
        before = np.abs(values[-2] - values[-3]) / values[-1]
        steps = (levels[-1] - levels[-2]) / (levels[-2] - levels[-3])
        ratio = np.where(before > 0, (last / before) ** steps, 1.0)
        q = np.minimum(ratio, np.where(last > SCATTER, 0.9, 0.5))
        return np.where(np.isfinite(q), last * q / (1.0 - q), last)
