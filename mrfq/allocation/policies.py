"""Allocation policies over one API: ``allocate(problem, policy) -> Allocation``.

Max-min policies (DRF, asset fairness, DRFH, per-server DRF, TSF) share one engine:
weighted max-min fairness of a per-user *level* u_i = c_i · tasks_i, computed by
sequential linear programmes (scipy HiGHS): raise the common level t, freeze the users
that cannot exceed it, repeat. They differ only in c_i and in the servers they see:

* DRF (pooled, Ghodsi et al. NSDI'11): c_i = max_r d_ir / C_r, the dominant share per task.
* asset fairness (pooled): c_i = Σ_r d_ir / C_r.
* DRFH (Wang et al.): per server, c_i = global dominant share per task.
* per-server DRF: DRF applied on every server separately (the naive baseline of DRFH).
* TSF (Wang et al.): per server with placement constraints, c_i = 1 / T_i, T_i = tasks
  user i could run alone on the whole cluster without constraints.

CEEI is the Eisenberg–Gale programme max Σ w_i log tasks_i (for Leontief users CEEI from
equal incomes coincides with it), i.e. the fluid PF allocator; BMF is the fluid BMF
allocator (both pooled). Discrete heuristics: online DRF (a task at a time to the user with
the smallest dominant share), First-Fit and Best-Fit DRFH. BAA/IBAA: the IBAA paper's LP.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.optimize import linprog

from mrfq import policies as registry
from mrfq.allocation.problem import Allocation, Problem
from mrfq.errors import InputError
from mrfq.fluid.allocators import allocate as fluid_allocate

#: the whole-task rules' tolerance, relative (never in the problem's units): a task fits
#: when its demand is at most the free capacity plus _EPS of the resource's pooled capacity
#: (an absolute 1e-9 let tasks of 1e-30 fit forever and refused the last of 1e80), and
#: dominant shares or Best-Fit scores within _EPS of the least are ties (lowest index)
_EPS = 1e-9
NAME = registry.named(registry.ALLOCATION)
FLUID_NAME = registry.named(registry.FLUID)


# ---------------------------------------------------------------------------------------
# the max-min engine


def _solve(c, A_ub, b_ub, bounds):
    result = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"LP failed: {result.message}")
    return result


def max_min(problem: Problem, per_task: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted max-min fair levels u_i = per_task_i · tasks_i (sequential LPs).

    Returns (tasks[i, l], level[i]). Users' caps (max_tasks) and placement are respected.
    """
    n, L = problem.allowed.shape
    base_rows, base_rhs, bounds = problem.capacity_rows()
    w = problem.weights
    level = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    nv = n * L

    def user_row(i, scale):
        row = np.zeros(nv + 1)
        row[i * L:(i + 1) * L] = scale
        return row

    def constraints(t_coeff: bool, floor: np.ndarray, active: np.ndarray):
        rows = [np.append(r, 0.0) for r in base_rows]
        rhs = list(base_rhs)
        for i in range(n):
            # u_i >= level (frozen) or >= w_i t (active):  -c_i Σ_l x_il + w_i t <= 0
            row = -user_row(i, per_task[i])
            if active[i] and t_coeff:
                row[-1] = w[i]
                rows.append(row)
                rhs.append(0.0)
            else:
                rows.append(row)
                rhs.append(-floor[i])
            if np.isfinite(problem.max_tasks[i]):
                rows.append(user_row(i, 1.0))
                rhs.append(problem.max_tasks[i])
        return np.array(rows), np.array(rhs)

    x = np.zeros(nv)
    for _ in range(n + 1):
        active = ~frozen
        if not active.any():
            break
        rows, rhs = constraints(True, level, active)
        c = np.zeros(nv + 1)
        c[-1] = -1.0
        res = _solve(c, rows, rhs, bounds + [(0, None)])
        t = res.x[-1]
        x = res.x[:nv]
        newly = []
        for i in np.flatnonzero(active):
            floor = np.where(active, w * t, level)
            floor[i] = 0.0
            r2, h2 = constraints(False, floor * (1 - 1e-10), np.zeros(n, dtype=bool))
            c2 = np.zeros(nv + 1)
            c2[i * L:(i + 1) * L] = -per_task[i]
            best = -_solve(c2, r2, h2, bounds + [(0, 0)]).fun
            if best <= w[i] * t * (1 + 1e-7) + 1e-12:
                newly.append(i)
        if not newly:  # numerical safety: everyone is at the limit
            newly = list(np.flatnonzero(active))
        for i in newly:
            frozen[i] = True
            level[i] = w[i] * t
    # final allocation: exactly the levels; of the splits over servers that give them, the
    # one of least generic cost (c_il: fixed pseudo-random numbers in [1, 2)), so a
    # degenerate problem gets the same split in any units, not whatever vertex rounding
    # leads HiGHS to (1 in 20 random DRFH/TSF problems split differently at 1e-30)
    rows = [np.append(r, 0.0) for r in base_rows]
    rhs = list(base_rhs)
    eq_rows, eq_rhs = [], []
    for i in range(n):
        eq_rows.append(user_row(i, per_task[i]))
        eq_rhs.append(level[i])
    generic = np.append(np.random.default_rng(0).uniform(1.0, 2.0, nv), 0.0)
    res = linprog(generic, A_ub=np.array(rows), b_ub=np.array(rhs),
                  A_eq=np.array(eq_rows), b_eq=np.array(eq_rhs),
                  bounds=bounds + [(0, 0)], method="highs")
    if res.status == 0:
        x = res.x[:nv]
    return x.reshape(n, L), level


# ---------------------------------------------------------------------------------------
# policies


def _pooled_per_task(problem: Problem, kind: str) -> np.ndarray:
    share = problem.demand / problem.total
    return share.max(axis=1) if kind == "dominant" else share.sum(axis=1)


def drf(problem: Problem) -> Allocation:
    """Continuous DRF on the pooled resources (progressive filling of dominant shares)."""
    pooled = problem.pooled()
    tasks, level = max_min(pooled, _pooled_per_task(pooled, "dominant"))
    return Allocation(pooled, tasks, NAME.DRF, {"dominant_share_levels": level})


def asset(problem: Problem) -> Allocation:
    """Asset fairness: equal sums of resource shares Σ_r tasks_i d_ir / C_r (pooled)."""
    pooled = problem.pooled()
    tasks, level = max_min(pooled, _pooled_per_task(pooled, "sum"))
    return Allocation(pooled, tasks, NAME.ASSET, {"asset_levels": level})


def _capped_fluid(problem: Problem, policy: str) -> np.ndarray:
    """Fluid PF/BMF on the pool; capped users are fixed at their cap and the rest is
    re-solved on the remaining capacity (iterated until no cap is exceeded)."""
    pooled = problem.pooled()
    n = pooled.n_users
    share = pooled.demand / pooled.total  # per task, in shares of the pool (unit-free)
    fixed = np.full(n, np.nan)
    for _ in range(n + 1):
        free = np.isnan(fixed)
        if not free.any():  # every user at its cap (the fluid solvers need one user)
            break
        remaining = 1.0 - np.nan_to_num(fixed) @ share  # share of the pool left
        a = share[free] / np.maximum(remaining, 1e-300)
        phi = fluid_allocate(policy, a, np.ones(free.sum()), pooled.weights[free])
        over = phi > pooled.max_tasks[free] * (1 + 1e-12)
        if not over.any():
            out = np.nan_to_num(fixed)
            out[free] = phi
            return out
        idx = np.flatnonzero(free)[over]
        fixed[idx] = pooled.max_tasks[idx]
    return np.nan_to_num(fixed)


def ceei(problem: Problem) -> Allocation:
    """CEEI for Leontief users = max Σ w_i log tasks_i (Eisenberg–Gale), pooled."""
    pooled = problem.pooled()
    return Allocation(pooled, _capped_fluid(problem, FLUID_NAME.PF)[:, None], NAME.CEEI)


def pf(problem: Problem) -> Allocation:
    """Proportional fairness (BR §2.3) via the fluid allocator, pooled."""
    pooled = problem.pooled()
    return Allocation(pooled, _capped_fluid(problem, FLUID_NAME.PF)[:, None], NAME.PF)


def bmf(problem: Problem) -> Allocation:
    """Bottleneck max fairness (BR §2.4) via the fluid allocator, pooled."""
    pooled = problem.pooled()
    return Allocation(pooled, _capped_fluid(problem, FLUID_NAME.BMF)[:, None], NAME.BMF)


def drfh(problem: Problem) -> Allocation:
    """DRFH: max-min of global dominant shares over heterogeneous servers."""
    tasks, level = max_min(problem, _pooled_per_task(problem, "dominant"))
    return Allocation(problem, tasks, NAME.DRFH, {"global_dominant_share_levels": level})


def per_server_drf(problem: Problem) -> Allocation:
    """DRF applied separately on every server (shares relative to that server)."""
    n, L = problem.allowed.shape
    tasks = np.zeros((n, L))
    for l in range(L):
        has = problem.capacity[l] > 0  # a user needing a resource the server lacks: none
        users = np.flatnonzero(problem.allowed[:, l]
                               & ~np.any(problem.demand[:, ~has] > 0, axis=1))
        if users.size == 0:
            continue
        sub = replace(problem, capacity=problem.capacity[l:l + 1, has],
                      demand=problem.demand[users][:, has], weights=problem.weights[users],
                      # (≥ 0: a user's earlier servers can give it its cap plus a rounding)
                      max_tasks=np.maximum(problem.max_tasks[users]
                                           - tasks[users].sum(axis=1), 0.0),
                      allowed=None, users=(), servers=(), resources=())
        per_task = (sub.demand / sub.total).max(axis=1)
        got, _ = max_min(sub, per_task)
        tasks[users, l] = got[:, 0]
    return Allocation(problem, tasks, NAME.PER_SERVER_DRF)


def tsf(problem: Problem) -> Allocation:
    """Task share fairness: weighted max-min of task shares tasks_i / T_i with placement
    constraints. Its sharing incentive needs weights from the dedicated pools
    (:func:`mrfq.allocation.properties.dedicated_weights`). A user with T_i = 0 (no
    server has every resource its task needs) runs nothing under any placement, so its
    task share is moot: it gets 0 tasks and the others share as without it."""
    alone = problem.tasks_alone()
    # (any positive per-task level will do for such a user: its LP columns are forced to
    # 0 by the servers' zero capacities, so max_min freezes it at 0 first)
    per_task = 1.0 / np.where(alone > 0, alone, 1.0)
    tasks, level = max_min(problem, per_task)
    return Allocation(problem, tasks, NAME.TSF, {"task_share_levels": level,
                                              "tasks_alone": alone})


def drf_online(problem: Problem) -> Allocation:
    """The slides' online DRF: repeatedly give one whole task to the user with the smallest
    dominant share whose task still fits (ties: lowest index), on the first server with
    room. Stops when no task fits anywhere."""
    return _progressive_tasks(problem, "first", NAME.DRF_ONLINE)


def drfh_first_fit(problem: Problem) -> Allocation:
    """First-Fit DRFH: lowest global dominant share first, first server that fits."""
    return _progressive_tasks(problem, "first", NAME.DRFH_FIRST_FIT)


def drfh_best_fit(problem: Problem) -> Allocation:
    """Best-Fit DRFH: lowest global dominant share first, on the server l minimising
    DRFH eq. (9), H(i, l) = ‖D_i/D_i1 − c̄_l/c̄_l1‖₁, with D_i the task's demand and c̄_l
    the server's free capacity, both as shares of the pool, each normalised by its first
    resource (:func:`best_fit_score`; ties: the lowest server index)."""
    return _progressive_tasks(problem, "best", NAME.DRFH_BEST_FIT)


def best_fit_score(demand_share: np.ndarray, free_share: np.ndarray) -> float:
    """DRFH eq. (9): H = ‖D/D_1 − c̄/c̄_1‖₁ for a task's demand D and a server's free
    capacity c̄ (both as shares of the pool). The first resource is the paper's
    normaliser; when the task needs none of it, the first resource it needs takes its
    place (the paper assumes positive demands). A server with nothing free of that
    resource scores +inf (it cannot host the task)."""
    first = int(np.flatnonzero(demand_share > 0)[0])
    if free_share[first] <= 0:
        return float("inf")
    return float(np.abs(demand_share / demand_share[first]
                        - free_share / free_share[first]).sum())


def _progressive_tasks(problem: Problem, placement: str, name: str) -> Allocation:
    """Whole tasks one at a time (online DRF, First-/Best-Fit DRFH). Demands and free
    capacities are in shares of the pool (dimensionless), compared with the relative
    tolerance ``_EPS``, so the same problem in other units places the same tasks."""
    n, L = problem.allowed.shape
    share_demand = problem.demand / problem.total
    free = problem.capacity / problem.total  # free[l, r]: share of the pool free on l
    tasks = np.zeros((n, L))
    per_task = share_demand.max(axis=1) / problem.weights
    blocked = np.zeros(n, dtype=bool)
    for _ in range(2 * (MAX_PLACEMENTS + n) + 1):  # (placements, one block per user)
        candidates = np.flatnonzero(~blocked)
        if candidates.size == 0:
            break
        shares = tasks[candidates].sum(axis=1) * per_task[candidates]
        i = candidates[np.flatnonzero(shares <= shares.min() * (1 + _EPS))[0]]
        if tasks[i].sum() + 1 > problem.max_tasks[i] + _EPS:  # (in tasks)
            blocked[i] = True
            continue
        fits = [l for l in range(L) if problem.allowed[i, l]
                and np.all(share_demand[i] <= free[l] + _EPS)]
        if not fits:
            blocked[i] = True
            continue
        if placement == "first":
            l = fits[0]
        else:
            scores = np.array([best_fit_score(share_demand[i], free[l]) for l in fits])
            l = fits[int(np.flatnonzero(scores <= scores.min() + _EPS)[0])]
        tasks[i, l] += 1
        free[l] -= share_demand[i]
    else:  # (not_applicable refuses problems that could place more)
        raise RuntimeError(f"{name}: more than {MAX_PLACEMENTS} placements")
    return Allocation(problem, tasks, name, whole_tasks=True)


#: the most whole tasks the progressive policies (online DRF, First-/Best-Fit DRFH) may
#: have to place, one Python step each (:func:`placements_bound`): beyond, refused. Online
#: DRF placed 6·10^5 tasks in 11 s, and the property probes re-run it: 9.5 min
MAX_PLACEMENTS = 10**5


def placements_bound(problem: Problem) -> float:
    """An upper bound on the whole tasks a progressive policy places (C_r the pool's
    total): the smaller of Σ_i min(max_tasks_i, ⌊min_r C_r / d_ir⌋), each user's tasks
    alone in the pool, and Σ_r C_r / min_{i: d_ir > 0} d_ir, since every task holds at
    least the smallest positive demand of some resource it needs."""
    demand = problem.demand
    ratio = problem.total / np.where(demand > 0, demand, 1.0)
    alone = np.min(np.where(demand > 0, ratio, np.inf), axis=1)
    per_user = float(np.minimum(problem.max_tasks, np.floor(alone)).sum())
    used = (demand > 0).any(axis=0)
    per_resource = float(np.max(np.where(demand > 0, ratio, 0.0), axis=0)[used].sum())
    return min(per_user, per_resource)


def ibaa(problem: Problem) -> Allocation:
    """IBAA (Liu & Liu), BAA with weights and task caps; two pooled resources.

    A client's *bottleneck* is argmax_r d_ir / C_r (set D: resource 1, S: resource 2);
    fair share f_i = min_r (C_r / n) / d_ir. Allocations A_i = p_D f_i w_i (i ∈ D),
    A_j = p_S f_j w_j (j ∈ S) maximise Σ A subject to capacity and
    α ≤ p_D / p_S ≤ β with β = min h_j f_j w_j / (h_i f_i w_i), α = max m_j f_j w_j /
    (m_i f_i w_i) over i ∈ D, j ∈ S (m, h: usage of resources 1, 2). Clients above their
    cap are fixed at it and the LP re-solved on the remaining capacity.
    """
    pooled = problem.pooled()
    reason = not_applicable(NAME.IBAA, pooled)
    if reason:
        raise InputError(reason, "resources")
    # in the pool's resource units (C_r / unit_r in [1, 2)), so the LP does not depend on
    # the problem's units: HiGHS failed on the problem in bytes, unbounded in 1e-9 units
    unit = pooled.resource_units()
    C = pooled.total / unit
    d = pooled.demand / unit
    n = pooled.n_users
    w = pooled.weights
    fair = np.min(np.where(d > 0, (C / n) / np.where(d > 0, d, 1.0), np.inf), axis=1)
    bottleneck = np.argmax(d / C, axis=1)
    fixed = np.full(n, np.nan)
    for _ in range(n + 1):
        free = np.isnan(fixed)
        cap_left = C - np.nan_to_num(fixed) @ d
        D = free & (bottleneck == 0)
        S = free & (bottleneck == 1)
        # variables p_D, p_S
        objective = -np.array([np.sum(fair[D] * w[D]), np.sum(fair[S] * w[S])])
        A_ub = [[np.sum(fair[D] * w[D] * d[D, r]), np.sum(fair[S] * w[S] * d[S, r])]
                for r in range(2)]
        b_ub = list(cap_left)
        alpha = beta = None
        if D.any() and S.any():
            fw = fair * w
            i, j = np.flatnonzero(D)[:, None], np.flatnonzero(S)[None, :]
            with np.errstate(divide="ignore"):  # (h_i = 0: h_j / h_i ≥ … holds, no bound)
                beta = float(np.min(d[j, 1] * fw[j] / (d[i, 1] * fw[i])))
            alpha = float(np.max(d[j, 0] * fw[j] / (d[i, 0] * fw[i])))  # (m_i > 0 in D)
            A_ub.append([-1.0, alpha])
            b_ub.append(0.0)
            if np.isfinite(beta):
                A_ub.append([1.0, -beta])
                b_ub.append(0.0)
        bounds = [(0, None) if D.any() else (0, 0), (0, None) if S.any() else (0, 0)]
        res = linprog(objective, A_ub=np.array(A_ub), b_ub=np.array(b_ub), bounds=bounds,
                      method="highs")
        if res.status != 0:
            raise RuntimeError(f"IBAA LP failed: {res.message}")
        p_d, p_s = res.x
        A = np.nan_to_num(fixed).copy()
        A[D] = p_d * fair[D] * w[D]
        A[S] = p_s * fair[S] * w[S]
        over = free & (A > pooled.max_tasks * (1 + 1e-12))
        if not over.any():
            info = {"p_d": p_d, "p_s": p_s, "alpha": alpha, "beta": beta,
                    "fair_share": fair, "bottleneck": bottleneck}
            return Allocation(pooled, A[:, None], NAME.IBAA, info)
        fixed[over] = pooled.max_tasks[over]
    raise RuntimeError("IBAA did not converge")


#: the rule of every allocation-lab entry of the registry (:mod:`mrfq.policies`), found
#: by name (``drfh-best-fit`` → :func:`drfh_best_fit`): a registry entry without its
#: function fails here, at import
POLICIES = {p.name: globals()[p.name.replace("-", "_")]
            for p in registry.entries(registry.ALLOCATION)}


def not_applicable(policy: str, problem: Problem) -> str | None:
    """Why ``policy`` cannot allocate ``problem`` (None: it can): IBAA needs exactly two
    resources; the progressive policies at most :data:`MAX_PLACEMENTS` whole tasks to
    place (:func:`placements_bound`); every other rule takes any problem."""
    name = registry.get(registry.ALLOCATION, policy).name
    if name == NAME.IBAA and problem.demand.shape[1] != 2:
        return "BAA/IBAA is defined for exactly two resources"
    if name in (NAME.DRF_ONLINE, NAME.DRFH_FIRST_FIT, NAME.DRFH_BEST_FIT):
        bound = placements_bound(problem)
        if bound > MAX_PLACEMENTS:
            return (f"{name} places whole tasks one at a time, up to {bound:,.0f} here (more "
                    f"than {MAX_PLACEMENTS:,}): coarser task demands, or caps (max_tasks)")
    return None


def allocate(problem: Problem, policy: str) -> Allocation:
    """Allocation of ``problem`` under ``policy`` (a key of :data:`POLICIES`)."""
    return POLICIES[registry.get(registry.ALLOCATION, policy).name](problem)
