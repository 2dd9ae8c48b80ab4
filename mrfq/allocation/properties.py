"""Property checkers for any allocation: sharing incentive, envy-freeness, Pareto
optimality, a strategy-proofness probe, and DRFH §III's single-resource fairness,
bottleneck fairness and population monotonicity (all seven: :func:`check_all`). Each returns
a :class:`Verdict` ``(holds, detail)``: ``holds`` is True, False, or None when the check
could not decide (e.g. its LP failed, or the property does not apply); ``detail`` is
None when the property holds, the counter-example (who, what and by how much) when it
fails, and ``{"reason": ...}`` when it is unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from mrfq.allocation.policies import max_min
from mrfq.allocation.problem import Allocation, Problem

TOL = 1e-6

#: a policy: problem -> allocation (the values of :data:`mrfq.allocation.POLICIES`)
Rule = Callable[[Problem], Allocation]


class Verdict(NamedTuple):
    """Outcome of one property check: ``holds`` True / False / None (unknown)."""

    holds: bool | None
    detail: dict | None = None

    @property
    def text(self) -> str:
        """``yes``, ``NO  counter-example: {...}`` or ``unknown (reason)``."""
        if self.holds is None:
            return f"unknown ({(self.detail or {}).get('reason', 'no reason given')})"
        return "yes" if self.holds else f"NO  counter-example: {_plain(self.detail)}"


def _plain(value):
    """``value`` with NumPy scalars as Python numbers (so a counter-example prints 2.5,
    not np.float64(2.5)), through dicts, lists and tuples."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


HOLDS = Verdict(True, None)


def dedicated_weights(problem: Problem, pools: np.ndarray | None = None) -> np.ndarray:
    """TSF weights from dedicated pools: each job's task share in its own pool
    (dedicated tasks / tasks alone on the whole cluster). Weighted TSF with these
    weights provides sharing incentive (Wang et al., TSF, §3). A user that can run no
    task anywhere (T_i = 0) gets weight 1: it runs nothing under any weight."""
    dedicated = np.array([problem.dedicated_tasks(i, pools) for i in range(problem.n_users)])
    alone = problem.tasks_alone()
    return np.where(alone > 0, dedicated / np.where(alone > 0, alone, 1.0), 1.0)


def sharing_incentive(allocation: Allocation, reference: Problem | None = None,
                      pools: np.ndarray | None = None) -> Verdict:
    """Every user runs at least as many tasks as alone on its dedicated resources.

    Without ``pools``, the benchmark is DRFH §IV-D's dedicated cloud: a proportional
    subset of the servers (:meth:`Problem.dedicated_cloud_tasks`; on one server, DRF's
    share guarantee, in whole tasks for a whole-task rule). With ``pools[i]`` (TSF §3's
    *arbitrary* dedicated pools), user i's pool is the fraction ``pools[i]`` of every
    server (:meth:`Problem.dedicated_tasks`). ``reference``: the problem whose servers
    define the benchmark (default: the allocation's own)."""
    problem = allocation.problem
    reference = reference or problem
    for i in range(problem.n_users):
        own = float(allocation.user_tasks[i])
        alone = (reference.dedicated_cloud_tasks(i, whole=allocation.whole_tasks)
                 if pools is None
                 else reference.dedicated_tasks(i, pools))
        if own < alone * (1 - TOL) - TOL:
            return Verdict(False, {"user": problem.users[i], "tasks": own,
                                   "dedicated_tasks": alone})
    return HOLDS


def envy_free(allocation: Allocation) -> Verdict:
    """No user could run more (weighted) tasks with another user's bundle (whole tasks
    per server for a whole-task rule, :attr:`Allocation.whole_tasks`)."""
    problem = allocation.problem
    bundles = allocation.bundles()
    tasks = allocation.user_tasks
    for i in range(problem.n_users):
        if tasks[i] >= problem.max_tasks[i] * (1 - TOL):
            continue  # a user with all it asked for envies nobody
        for j in range(problem.n_users):
            if i == j:
                continue
            swapped = problem.tasks_fitting(i, bundles[j], allocation.whole_tasks)
            swapped = min(swapped, float(problem.max_tasks[i]))
            if tasks[i] < problem.weights[i] / problem.weights[j] * swapped * (1 - TOL) - TOL:
                return Verdict(False, {"user": problem.users[i], "envies": problem.users[j],
                                       "tasks": float(tasks[i]),
                                       "tasks_with_their_bundle": swapped})
    return HOLDS


#: branch-and-bound nodes HiGHS may explore for a whole-task improvement ("unknown" if it
#: stops before a proof; a node limit, unlike a time limit, gives the same verdict anywhere)
MILP_NODES = 100_000


def pareto_optimal(allocation: Allocation) -> Verdict:
    """No feasible allocation gives someone more tasks and nobody fewer (an LP over
    fractional tasks per server, with placement and caps: maximise the total subject to
    everyone keeping at least its tasks; for a whole-task rule, :attr:`Allocation.
    whole_tasks`, the same over whole tasks per server, an integer program: a fraction of
    a task is no improvement it could have made). Unknown, with the solver's reason, when
    it does not solve (it is infeasible, for one, when the allocation itself is), or when
    the integer program stops at :data:`MILP_NODES` without a proof either way."""
    problem = allocation.problem
    n, L = problem.allowed.shape
    current = allocation.user_tasks
    capacity, rhs_capacity, bounds = problem.capacity_rows()
    rows, rhs = list(capacity), list(rhs_capacity)
    for i in range(n):
        row = np.zeros((n, L))
        row[i] = -1.0
        rows.append(row.ravel())
        rhs.append(-current[i] * (1 - 1e-9))
        if np.isfinite(problem.max_tasks[i]):
            rows.append(-row.ravel())
            rhs.append(problem.max_tasks[i])
    if allocation.whole_tasks:
        res = milp(-np.ones(n * L), integrality=np.ones(n * L),
                   bounds=Bounds([lo for lo, _ in bounds],
                                 [np.inf if hi is None else hi for _, hi in bounds]),
                   constraints=LinearConstraint(np.array(rows), -np.inf, np.array(rhs)),
                   options={"node_limit": MILP_NODES, "mip_rel_gap": 0.0})
        # optimal, or stopped with a whole task more than the allocation's (a proof)
        solved = res.x is not None and (res.status == 0 or -res.fun > current.sum() + 0.5)
    else:
        res = linprog(-np.ones(n * L), A_ub=np.array(rows), b_ub=np.array(rhs),
                      bounds=bounds, method="highs")
        solved = res.status == 0 and res.x is not None
    if not solved:
        return Verdict(None, {"reason": f"{'MILP' if allocation.whole_tasks else 'LP'} "
                                        f"failed (status {res.status}): {res.message}"})
    better = res.x.reshape(n, L).sum(axis=1)
    gain = better - current
    i = int(np.argmax(gain))
    if gain[i] > TOL * max(1.0, current.sum()):
        return Verdict(False, {"user": problem.users[i], "tasks": float(current[i]),
                               "could_have": float(better[i]),
                               "allocation": better.round(6).tolist()})
    return HOLDS


def _misreports(demand: np.ndarray, rng: np.random.Generator, trials: int):
    """Candidate lies: scale single components, raise non-dominant ones to the dominant
    level, and random vectors."""
    out = []
    for r in range(demand.size):
        for factor in (0.5, 0.8, 1.25, 1.5, 2.0, 3.0):
            lie = demand.copy()
            lie[r] = demand[r] * factor if demand[r] > 0 else demand.max() * (factor - 0.5)
            out.append(lie)
    top = demand.max()
    for r in range(demand.size):
        lie = demand.copy()
        lie[r] = top
        out.append(lie)
    for _ in range(trials):
        out.append(demand * rng.uniform(0.3, 3.0, demand.size))
    # relative only: allclose's default atol (1e-8) took every lie of a demand of 1e-30
    # units for the truth, and the probe tried none
    return [v for v in out if np.any(v > 0) and not np.allclose(v, demand, atol=0.0)]


def strategy_proofness_probe(problem: Problem, rule: Callable[[Problem], Allocation],
                             trials: int = 60, seed: int = 0) -> Verdict:
    """Search for a user that runs more *true* tasks by declaring a false demand vector.

    A liar's true tasks are what its allocated bundle runs with its true demand — whole
    tasks per server for a whole-task rule (:attr:`Allocation.whole_tasks`). Returns a
    :class:`Verdict`: ``holds`` when no lie gained, else the liar and its gain in ``detail``."""
    rng = np.random.default_rng(seed)
    truthful = rule(problem).user_tasks
    for i in range(problem.n_users):
        for lie in _misreports(problem.demand[i], rng, trials):
            lied = rule(problem.with_demand(i, lie))
            # the liar's bundle runs its true tasks on the servers the rule allocated on
            # (the pool, for a pooled rule), not on the original problem's servers; a
            # whole-task rule's bundle runs whole tasks only (5 CPU: two 2-CPU tasks)
            truth = lied.problem.with_demand(i, problem.demand[i])
            true_tasks = min(truth.tasks_fitting(i, lied.bundles()[i], lied.whole_tasks),
                             float(problem.max_tasks[i]))
            if true_tasks > truthful[i] * (1 + 1e-6) + 1e-9:
                return Verdict(False, {"user": problem.users[i],
                                       "declared": lie.round(6).tolist(),
                                       "true_demand": problem.demand[i].tolist(),
                                       "truthful_tasks": float(truthful[i]),
                                       "tasks_when_lying": true_tasks})
    return HOLDS


# --- the further properties DRFH §III lists (Propositions 5–7) -------------------------


def _max_min_amounts(problem: Problem, r: int) -> np.ndarray:
    """Weighted max-min fair amounts of resource r over the feasible allocations: user i
    gets x_i d_ir with every server's capacities, the caps (max_tasks) and placement
    respected. On one server, or with one resource and no placement constraints, that is
    the water-filling of the pooled resource (user i: min(its cap, w_i t), Σ = C_r);
    otherwise the other resources of a server can leave part of r unusable (a server of 10
    CPU and 0.5 GB: 5 CPU for tasks of 1 CPU and 0.1 GB), and it is the sequential LPs of
    :func:`mrfq.allocation.policies.max_min` on r's shares."""
    if problem.allowed.all() and (problem.capacity.shape[0] == 1
                                  or problem.demand.shape[1] == 1):
        cap = problem.max_tasks * problem.demand[:, r]
        w = problem.weights
        lo, hi = 0.0, float(problem.total[r] / w.min())
        for _ in range(200):  # bisection on the water level t
            t = (lo + hi) / 2
            if np.minimum(cap, w * t).sum() < problem.total[r]:
                lo = t
            else:
                hi = t
        return np.minimum(cap, w * hi)
    _, level = max_min(problem, problem.demand[:, r] / problem.total[r])
    return level * problem.total[r]


def _max_min_verdict(allocation: Allocation, r: int, premise: str) -> Verdict:
    problem = allocation.problem
    fair = _max_min_amounts(problem, r)
    got = allocation.user_tasks * problem.demand[:, r]
    i = int(np.argmax(np.abs(got - fair)))
    if abs(got[i] - fair[i]) > 1e-6 * problem.total[r]:  # relative: any units
        detail = {"user": problem.users[i], "premise": premise,
                  "resource": problem.resources[r], "amount": float(got[i]),
                  "max_min_amount": float(fair[i])}
        if allocation.whole_tasks:
            # the max-min of divisible tasks is no benchmark for whole ones (one resource
            # of 1, two users of 0.4: 0.5 each is no allocation), and a whole-task max-min
            # need not be unique ((t, t + 1) or (t + 1, t)): no verdict either way
            return Verdict(None, {"reason": f"whole tasks: {problem.users[i]} holds "
                                            f"{got[i]:.6g} of {problem.resources[r]}, the "
                                            f"divisible max-min {fair[i]:.6g}, which whole "
                                            "tasks need not reach"})
        return Verdict(False, detail)
    return HOLDS


def single_resource_fairness(allocation: Allocation) -> Verdict:
    """With a single resource, the allocation is the (weighted) max-min fair one of that
    resource, users capped by their tasks and placement respected (DRFH §III, Proposition
    5; DRF §3). Unknown (not applicable) with several resources, and for a whole-task rule
    that misses the divisible max-min (see :func:`bottleneck_fairness`)."""
    if allocation.problem.demand.shape[1] != 1:
        return Verdict(None, {"reason": "not applicable: more than one resource"})
    return _max_min_verdict(allocation, 0, "one resource")


def bottleneck_fairness(allocation: Allocation) -> Verdict:
    """When every user has the same (global) dominant resource r, the allocation is the
    weighted max-min fair one of resource r over the feasible allocations (DRFH §III,
    Proposition 6: DRFH's global dominant shares are then r's shares). A user whose
    dominant resources tie has each of them as its dominant one, so r is any resource in
    every user's set (the first). Unknown (not applicable) when no resource is in every
    user's set, and for a whole-task rule (``drf-online``, First-/Best-Fit DRFH) that
    misses the divisible max-min, which whole tasks need not reach."""
    problem = allocation.problem
    share = problem.demand / problem.total
    tops = share.max(axis=1, keepdims=True)
    common = np.all(share >= tops * (1 - 1e-12), axis=0)
    if not common.any():
        return Verdict(None, {"reason": "not applicable: no dominant resource shared by "
                                        "every user"})
    r = int(np.flatnonzero(common)[0])
    return _max_min_verdict(allocation, r, f"every user's dominant resource is "
                                           f"{problem.resources[r]}")


def population_monotonicity(problem: Problem, rule: Rule) -> Verdict:
    """When any one user leaves (its demand, weight, cap and placement removed), no
    remaining user runs fewer tasks under the same rule (DRFH §III, Proposition 7)."""
    before = rule(problem).user_tasks
    for i in range(problem.n_users):
        keep = np.arange(problem.n_users) != i
        if keep.sum() == 0:
            continue
        rest = replace(problem, demand=problem.demand[keep], weights=problem.weights[keep],
                       max_tasks=problem.max_tasks[keep], allowed=problem.allowed[keep],
                       users=tuple(u for u, k in zip(problem.users, keep, strict=True)
                                   if k))
        after = rule(rest).user_tasks
        lost = before[keep] - after
        j = int(np.argmax(lost))
        if lost[j] > TOL * max(1.0, before[keep][j]):
            return Verdict(False, {"leaves": problem.users[i], "user": rest.users[j],
                                   "tasks": float(before[keep][j]),
                                   "tasks_after": float(after[j])})
    return HOLDS


def check_all(problem: Problem, rule: Rule, allocation: Allocation | None = None,
              probe_trials: int = 30) -> dict[str, Verdict]:
    """Every property of one policy on one problem: name -> :class:`Verdict` (the four of
    the DRF paper's comparison, then DRFH §III's three; single-resource and bottleneck
    fairness are "unknown" when their premise does not hold).

    ``rule`` is the policy itself (problem -> allocation, e.g. ``POLICIES["drf"]``); the
    strategy-proofness probe re-runs it on misreported demands. ``allocation``: the rule's
    allocation of ``problem`` if already computed."""
    if not callable(rule):
        raise TypeError(f"check_all takes the policy function (e.g. POLICIES[{rule!r}]), "
                        f"not {type(rule).__name__}")
    allocation = allocation or rule(problem)
    return {
        "sharing_incentive": sharing_incentive(allocation, problem),
        "strategy_proof": strategy_proofness_probe(problem, rule, probe_trials),
        "pareto_optimal": pareto_optimal(allocation),
        "envy_free": envy_free(allocation),
        "single_resource_fair": single_resource_fairness(allocation),
        "bottleneck_fair": bottleneck_fairness(allocation),
        "population_monotonic": population_monotonicity(problem, rule),
    }
