"""Static allocation problems (cluster scheduling): servers × resources, users' per-task
demands, weights, task caps and placement constraints — and their allocations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from mrfq import fields
from mrfq.errors import InputError


@dataclass(frozen=True)
class Problem:
    """``capacity[l, r]``: resource r of server l; ``demand[i, r]``: per task of user i.

    ``weights[i]`` > 0; ``max_tasks[i]`` (inf = uncapped); ``allowed[i, l]``: user i may
    run on server l (placement constraints, TSF). ``policies``: the allocation policies
    its file lists (:func:`mrfq.allocation.load_problem`); empty, every policy that
    applies to it.
    """

    capacity: np.ndarray
    demand: np.ndarray
    weights: np.ndarray = field(default=None)  # type: ignore[assignment]
    max_tasks: np.ndarray = field(default=None)  # type: ignore[assignment]
    allowed: np.ndarray = field(default=None)  # type: ignore[assignment]
    users: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()

    def __post_init__(self):
        cap = np.atleast_2d(np.asarray(self.capacity, dtype=float))
        dem = np.atleast_2d(np.asarray(self.demand, dtype=float))
        n, m = dem.shape
        L = cap.shape[0]
        set_ = object.__setattr__
        set_(self, "capacity", cap)
        set_(self, "demand", dem)
        if n == 0:
            raise InputError("no users: give at least one demand row", "demand")
        if cap.shape[1] != m:
            raise InputError(f"servers have {cap.shape[1]} resources, demands {m}",
                             "capacity")
        if not np.all(np.isfinite(cap)) or np.any(cap < 0) or np.any(cap.sum(axis=0) <= 0):
            raise InputError("capacities must be finite, non-negative, and every resource "
                             "must exist somewhere", "capacity")
        for i in range(n):
            if not np.all(np.isfinite(dem[i])) or np.any(dem[i] < 0) or not np.any(dem[i] > 0):
                raise InputError("must be non-negative with a positive entry",
                                 f"users[{i}].demand")
        w = np.ones(n) if self.weights is None else np.asarray(self.weights, dtype=float)
        caps = (np.full(n, np.inf) if self.max_tasks is None
                else np.asarray(self.max_tasks, dtype=float))
        ok = (np.ones((n, L), dtype=bool) if self.allowed is None
              else np.asarray(self.allowed, dtype=bool))
        if w.shape != (n,) or np.any(~(w > 0)):
            raise InputError("weights must be positive", "weights")
        fields.check_weights(w, "weights", subject="weights ")
        if caps.shape != (n,) or np.any(caps < 0):
            raise InputError("max_tasks must be non-negative", "max_tasks")
        if ok.shape != (n, L):
            raise InputError(f"must be {n}×{L}", "allowed")
        set_(self, "weights", w)
        set_(self, "max_tasks", caps)
        set_(self, "allowed", ok)
        set_(self, "users", tuple(self.users) or tuple(f"u{i + 1}" for i in range(n)))
        set_(self, "servers", tuple(self.servers) or tuple(f"s{l + 1}" for l in range(L)))
        set_(self, "resources", tuple(self.resources) or tuple(f"r{r + 1}" for r in range(m)))

    @property
    def n_users(self) -> int:
        """n: the number of users (rows of ``demand``)."""
        return self.demand.shape[0]

    @property
    def total(self) -> np.ndarray:
        """Pooled capacity of every resource (Σ over servers)."""
        return self.capacity.sum(axis=0)

    def resource_units(self) -> np.ndarray:
        """unit[r]: the power of two just below resource r's pooled capacity (C_r / unit[r]
        in [1, 2)), the unit the solvers measure resource r in, so their linear programmes
        do not depend on the problem's units. A power of two divides without rounding (the
        LP's coefficients are the problem's own, rescaled exactly), and the same problem in
        units 1e15 or 1e-30 times as large gives the same LP up to rounding."""
        _, exponent = np.frexp(self.total)
        return np.ldexp(1.0, exponent - 1)

    def pooled(self) -> Problem:
        """The same users on one server holding the whole pool (placement ignored)."""
        return replace(self, capacity=self.total[None, :], allowed=None,
                       servers=("pool",))

    def with_demand(self, user: int, demand: np.ndarray) -> Problem:
        """The same problem with user ``user``'s per-task demand vector replaced (a
        misreport, for the strategy-proofness probe)."""
        new = self.demand.copy()
        new[user] = demand
        return replace(self, demand=new)

    def tasks_fitting(self, user: int, bundle: np.ndarray, whole: bool = False) -> float:
        """Tasks user i can run with ``bundle[l, r]`` of resources (respecting placement):
        Σ_l min_r bundle_lr / d_ir, or with ``whole`` (a whole-task allocation, whose
        tasks cannot be split) Σ_l ⌊min_r bundle_lr / d_ir⌋, the whole tasks that fit
        on each server.

        ``bundle`` has one row per server of *this* problem: a pooled allocation's bundle
        (one row) must be measured on the pooled problem, never broadcast over the servers
        of the original one (that counted the pool once per server)."""
        bundle = np.asarray(bundle, dtype=float)
        if bundle.shape != self.capacity.shape:
            raise ValueError(f"bundle of shape {bundle.shape} for a problem of "
                             f"{self.capacity.shape[0]} servers × {self.capacity.shape[1]} "
                             "resources")
        d = self.demand[user]
        used = d > 0
        per_server = np.min(bundle[:, used] / d[used], axis=1)
        if whole:  # the slack absorbs rounding in bundles summed task by task
            per_server = np.floor(per_server + 1e-9)
        return float(np.sum(per_server * self.allowed[user]))

    def tasks_alone(self) -> np.ndarray:
        """T_i: tasks user i could run alone on the whole cluster, ignoring placement
        constraints and caps (TSF's normaliser)."""
        out = np.empty(self.n_users)
        for i, d in enumerate(self.demand):
            used = d > 0
            out[i] = np.sum(np.min(self.capacity[:, used] / d[used], axis=1))
        return out

    def dedicated_tasks(self, user: int, pools: np.ndarray | None = None) -> float:
        """Tasks user i could run alone in its dedicated pool: the fraction ``pools[i]`` of
        every server (default w_i / Σw, i.e. equal partitioning for equal weights),
        respecting its placement constraints and its cap."""
        share = (self.weights[user] / self.weights.sum() if pools is None
                 else float(np.asarray(pools)[user]))
        return min(self.tasks_fitting(user, self.capacity * share),
                   float(self.max_tasks[user]))

    def dedicated_cloud_tasks(self, user: int, fraction: float | None = None,
                              whole: bool = False) -> float:
        """Tasks user i runs alone on its dedicated cloud (DRFH §IV-D), the sharing-incentive
        benchmark for several servers: a proportional subset of the servers — ``fraction``
        (default w_i / Σw) of the servers of every configuration — where each whole server
        runs whole tasks. For a subset drawn from the cluster's own configurations the
        expected count is ``fraction · Σ_l allowed_il · ⌊min_r c_lr / d_ir⌋`` (placement
        respected), capped by the user's max_tasks. On one server DRFH §IV-D's benchmark is
        the even division of that server, so there it is ``fraction`` of the server's
        resources (DRF's share guarantee). With ``whole`` (the benchmark of a whole-task
        rule, which can run no fraction of a task either) the count is rounded down: on
        one server ⌊fraction · min_r c_r / d_ir⌋, on several ⌊fraction · Σ_l …⌋."""
        share = self.weights[user] / self.weights.sum() if fraction is None else fraction
        d = self.demand[user]
        used = d > 0
        if self.capacity.shape[0] == 1:
            tasks = share * float(np.min(self.capacity[0, used] / d[used]))
        else:
            per_server = np.floor(np.min(self.capacity[:, used] / d[used], axis=1) + 1e-9)
            tasks = share * float(np.sum(per_server * self.allowed[user]))
        tasks = float(np.floor(tasks * (1 + 1e-9))) if whole else tasks
        return float(min(tasks, float(self.max_tasks[user])))

    def capacity_rows(self) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float | None]]]:
        """The capacity constraints of an LP over x[i, l] (tasks of user i on server l,
        flattened row-major): ``rows @ x <= rhs``, one row per (server, resource) that some
        user needs; and the variables' bounds (0 where placement forbids a server).

        Each resource r is measured in :meth:`resource_units` (row and right-hand side
        divided by unit[r] ≈ C_r), so the LP does not depend on the problem's units: HiGHS
        reads a coefficient below 1e-9 as 0 and one above 1e15 as a model error, which made
        the same problem unbounded in units of 1e-9 and an error in bytes."""
        n, L = self.allowed.shape
        m = self.demand.shape[1]
        unit = self.resource_units()
        rows, rhs = [], []
        for l in range(L):
            for r in range(m):
                row = np.zeros((n, L))
                row[:, l] = self.demand[:, r] / unit[r]
                if np.any(row):
                    rows.append(row.ravel())
                    rhs.append(self.capacity[l, r] / unit[r])
        bounds = [(0.0, None) if self.allowed[i, l] else (0.0, 0.0)
                  for i in range(n) for l in range(L)]
        return np.array(rows).reshape(len(rows), n * L), np.array(rhs), bounds


@dataclass
class Allocation:
    """``tasks[i, l]``: (fractional) tasks of user i on server l; ``whole_tasks``: the
    rule places whole tasks one at a time (online DRF, First-/Best-Fit DRFH), so what a
    bundle of it is worth is counted in whole tasks per server
    (:meth:`Problem.tasks_fitting`)."""

    problem: Problem
    tasks: np.ndarray
    policy: str = ""
    info: dict = field(default_factory=dict)
    whole_tasks: bool = False

    @property
    def user_tasks(self) -> np.ndarray:
        """tasks[i]: user i's tasks summed over the servers."""
        return self.tasks.sum(axis=1)

    def bundles(self) -> np.ndarray:
        """resources[i, l, r] held by user i on server l."""
        return self.tasks[:, :, None] * self.problem.demand[:, None, :]

    @property
    def shares(self) -> np.ndarray:
        """shares[i, r]: fraction of the pooled resource r held by user i."""
        return self.bundles().sum(axis=1) / self.problem.total

    @property
    def dominant_shares(self) -> np.ndarray:
        """s_i = max_r shares[i, r]: user i's (unweighted) dominant share of the pool (DRF,
        Ghodsi et al. NSDI'11)."""
        return self.shares.max(axis=1)

    @property
    def utilisation(self) -> np.ndarray:
        """utilisation[r]: fraction of the pooled resource r in use, over all users."""
        return self.bundles().sum(axis=(0, 1)) / self.problem.total

    def feasible(self, tol: float = 1e-7) -> bool:
        """No server over capacity, no negative task count, no task where placement
        forbids it and no user above its cap, each within relative ``tol`` and an absolute
        ``tol`` of tasks or, for a resource, of its pooled capacity (never of its units:
        1e-7 was all of a cluster measured in units of 1e-30)."""
        p = self.problem
        used = self.bundles().sum(axis=0)
        return bool(np.all(used <= p.capacity * (1 + tol) + tol * p.total)
                    and np.all(self.tasks >= -tol)
                    and np.all(self.tasks[~p.allowed] <= tol)
                    and np.all(self.user_tasks <= p.max_tasks * (1 + tol) + tol))

