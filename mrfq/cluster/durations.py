"""Task durations of the cluster kernel: the counter hash of (seed, job, task) and its
draw through each class's law (:func:`task_duration`), and every task's duration of a run
(:func:`task_durations`). Numba caches :func:`mrfq.cluster.kernel.simulate`, which
inlines these, keyed on kernel.py alone: after a change here, run with a fresh
``NUMBA_CACHE_DIR`` (or touch kernel.py) so that it is recompiled."""

import numpy as np
from numba import njit


@njit(cache=True)
def uniform(seed, job, task):
    """U(0, 1) of task ``task`` of job ``job``: splitmix64 of a counter (exact, portable)."""
    z = (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
         + np.uint64(job) * np.uint64(0xBF58476D1CE4E5B9)
         + np.uint64(task) * np.uint64(0x94D049BB133111EB) + np.uint64(1))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (float(z >> np.uint64(11)) + 0.5) / 9007199254740992.0


#: the laws of a task's duration (:func:`task_duration`)
(D_FIXED, D_EXPONENTIAL, D_HYPEREXPONENTIAL, D_LOGNORMAL, D_PARETO, D_EMPIRICAL,
 D_CDF) = range(7)
#: the second uniform of task i (laws that need two) is the first of task i + 2^40
SECOND_UNIFORM = 1 << 40


# inlined by Numba: called (and not inlined by LLVM) it cost the 2 000-server Best-Fit
# run 9% even when never executed (BENCHMARKS.md, "Cluster simulator")
@njit(cache=True, inline="always")
def task_duration(code, par, table, lo, hi, mean, seed, job, task):
    """The duration of task ``task`` of job ``job``: ``mean`` · x, x of mean 1 (unless
    an un-rescaled table) from the counter-hash uniform u = :func:`uniform` (seed, job,
    task) and, for the laws that need a second one, v = uniform(seed, job, task +
    :data:`SECOND_UNIFORM`) — so a task lasts the same under every scheduler. By
    ``code`` (:mod:`mrfq.sizes` for the laws, ``par`` their parameters):

    * D_EXPONENTIAL: −mean · ln u; D_FIXED: mean;
    * D_HYPEREXPONENTIAL (par = p_1, μ_1, μ_2): −ln u / μ_1 if v < p_1, else / μ_2;
    * D_LOGNORMAL (par = σ): exp(σ z − σ²/2), z = √(−2 ln u) cos 2πv (Box–Muller);
    * D_PARETO (par = α, x_m, H, E): x_m u^(−1/α) (H = ∞), else the inverse CDF of the
      law truncated to [x_m, H], x_m (1 − u (1 − (x_m/H)^α))^(−1/α), over its mean E;
    * D_EMPIRICAL: the value at row ⌊u n⌋ of ``table[0, lo:hi]`` (n = hi − lo rows);
    * D_CDF: the inverse of the piecewise-linear CDF ``table[1, lo:hi]`` over the sizes
      ``table[0, lo:hi]`` (:func:`mrfq.workloads.quantile`'s rule)."""
    u = uniform(seed, job, task)
    if code == D_EXPONENTIAL:  # (the expression of the runs before the other laws)
        return -mean * np.log(u)
    if code == D_FIXED:
        return mean
    if code == D_HYPEREXPONENTIAL:
        rate = par[1] if uniform(seed, job, task + SECOND_UNIFORM) < par[0] else par[2]
        return mean * (-np.log(u) / rate)
    if code == D_LOGNORMAL:
        v = uniform(seed, job, task + SECOND_UNIFORM)
        z = np.sqrt(-2.0 * np.log(u)) * np.cos(2.0 * np.pi * v)
        return mean * np.exp(par[0] * z - par[0] * par[0] / 2.0)
    if code == D_PARETO:
        alpha, low, high = par[0], par[1], par[2]
        if high == np.inf:
            return mean * (low * u ** (-1.0 / alpha))
        return mean * (low * (1.0 - u * (1.0 - (low / high) ** alpha)) ** (-1.0 / alpha)
                       / par[3])
    n = hi - lo
    if code == D_EMPIRICAL:
        return mean * table[0, lo + min(int(u * n), n - 1)]
    # D_CDF: i = #{F ≤ u} by bisection, then F_{i−1} ≤ u < F_i
    a, b = 0, n
    while a < b:
        c = (a + b) // 2
        if table[1, lo + c] <= u:
            a = c + 1
        else:
            b = c
    if a == 0:
        return mean * table[0, lo]
    if a == n:
        return mean * table[0, hi - 1]
    f0, f1 = table[1, lo + a - 1], table[1, lo + a]
    x0, x1 = table[0, lo + a - 1], table[0, lo + a]
    return mean * (x0 + (u - f0) / (f1 - f0) * (x1 - x0))


@njit(cache=True)
def task_durations(job_class, job_tasks, job_first, duration_mean, code, par, table, span,
                   seed):
    """Every task's duration as :func:`simulate` draws it (task i of job j at
    ``job_first[j] + i``; class k's law: ``code[k]``, ``par[k]``, its table rows
    ``span[k, 0]:span[k, 1]``): to read the durations of a run without running it."""
    out = np.empty(job_tasks.sum())
    for j in range(job_tasks.size):
        k = job_class[j]
        for i in range(job_tasks[j]):
            out[job_first[j] + i] = task_duration(code[k], par[k], table, span[k, 0],
                                                  span[k, 1], duration_mean[k], seed, j, i)
    return out
