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

The variance needs a larger truncation than the mean (it weighs the tail by n²), so it is
computed on the final truncation of the same solve; at link load 0.9 on Figure 3's
classes √v_k changes by 1–2% between the truncations for tolerances 1e-4 and 1e-5.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as sla

from mrfq.fluid import markov_solver

#: relative residual the adjoint solves stop at: v_k to about 1e-4 (measured against
#: 1e-8 on Figure 3's classes at link load 0.9: √v_k agree to 0.2%)
RESIDUAL = 1e-4


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
