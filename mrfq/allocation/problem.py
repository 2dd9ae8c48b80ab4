"""Static allocation problems (cluster scheduling): servers × resources, users' per-task
demands, weights, task caps and placement constraints — and their allocations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mrfq.errors import InputError


@dataclass(frozen=True)
class Problem:
    """``capacity[l, r]``: resource r of server l; ``demand[i, r]``: per task of user i.

    ``weights[i]`` > 0; ``max_tasks[i]`` (inf = uncapped); ``allowed[i, l]``: user i may
    run on server l (placement constraints, TSF).
    """

    capacity: np.ndarray
    demand: np.ndarray
    weights: np.ndarray = field(default=None)  # type: ignore[assignment]
    max_tasks: np.ndarray = field(default=None)  # type: ignore[assignment]
    allowed: np.ndarray = field(default=None)  # type: ignore[assignment]
    users: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()

    def __post_init__(self):
        cap = np.atleast_2d(np.asarray(self.capacity, dtype=float))
        dem = np.atleast_2d(np.asarray(self.demand, dtype=float))
        n, m = dem.shape
        L = cap.shape[0]
        set_ = object.__setattr__
        set_(self, "capacity", cap)
        set_(self, "demand", dem)
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
        return self.demand.shape[0]

    @property
    def total(self) -> np.ndarray:
        """Pooled capacity of every resource (Σ over servers)."""
        return self.capacity.sum(axis=0)

    def pooled(self) -> Problem:
        """The same users on one server holding the whole pool (placement ignored)."""
        return replace(self, capacity=self.total[None, :], allowed=None,
                       servers=("pool",))

    def with_demand(self, user: int, demand: np.ndarray) -> Problem:
        new = self.demand.copy()
        new[user] = demand
        return replace(self, demand=new)

    def tasks_fitting(self, user: int, bundle: np.ndarray) -> float:
        """Tasks user i can run with ``bundle[l, r]`` of resources (respecting placement)."""
        d = self.demand[user]
        used = d > 0
        per_server = np.min(bundle[:, used] / d[used], axis=1)
        return float(np.sum(per_server * self.allowed[user]))


@dataclass
class Allocation:
    """``tasks[i, l]``: (fractional) tasks of user i on server l."""

    problem: Problem
    tasks: np.ndarray
    policy: str = ""
    info: dict = field(default_factory=dict)

    @property
    def user_tasks(self) -> np.ndarray:
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
        return self.shares.max(axis=1)

    @property
    def utilisation(self) -> np.ndarray:
        return self.bundles().sum(axis=(0, 1)) / self.problem.total

    def feasible(self, tol: float = 1e-7) -> bool:
        p = self.problem
        used = self.bundles().sum(axis=0)
        return bool(np.all(used <= p.capacity * (1 + tol) + tol)
                    and np.all(self.tasks >= -tol)
                    and np.all(self.tasks[~p.allowed] <= tol)
                    and np.all(self.user_tasks <= p.max_tasks * (1 + tol) + tol))


def load_problem(path: str | Path) -> tuple[Problem, list[str]]:
    """Read a problem file (TOML): ``resources``, ``[[servers]]`` (name, capacity),
    ``[[users]]`` (name, demand, weight, max_tasks, servers = allowed server names),
    optional ``policies``. Errors name the field, as for scenarios."""
    from mrfq.allocation.policies import POLICIES
    from mrfq.io import read_toml

    raw = read_toml(path)
    try:
        return _problem_from_dict(raw, POLICIES)
    except InputError as exc:
        raise exc.located(str(path)) from None


def _problem_from_dict(raw: dict, policies: dict) -> tuple[Problem, list[str]]:
    allowed_top = {"name", "description", "resources", "servers", "users", "policies"}
    unknown = sorted(set(raw) - allowed_top)
    if unknown:
        raise InputError(f"unknown key (known keys: {', '.join(sorted(allowed_top))})",
                         unknown[0])
    resources = raw.get("resources")
    if not isinstance(resources, list) or not resources:
        raise InputError("must be a non-empty list of resource names", "resources")
    m = len(resources)

    def vector(value, where):
        if not isinstance(value, list) or len(value) != m:
            raise InputError(f"must be a list of {m} numbers (one per resource)", where)
        try:
            out = np.array([float(v) for v in value])
        except (TypeError, ValueError):
            raise InputError("entries must be numbers", where) from None
        if np.any(~np.isfinite(out)) or np.any(out < 0):
            raise InputError("entries must be finite and non-negative", where)
        return out

    servers = raw.get("servers") or [{"name": "pool", "capacity": [1.0] * m}]
    names, caps = [], []
    for l, s in enumerate(servers):
        extra = sorted(set(s) - {"name", "capacity"})
        if extra:
            raise InputError("unknown key (known keys: capacity, name)",
                             f"servers[{l}].{extra[0]}")
        names.append(str(s.get("name", f"s{l + 1}")))
        caps.append(vector(s.get("capacity"), f"servers[{l}].capacity"))
    users = raw.get("users")
    if not isinstance(users, list) or not users:
        raise InputError("must list at least one [[users]] table", "users")
    unames, demand, weights, max_tasks, allowed = [], [], [], [], []
    for i, u in enumerate(users):
        extra = sorted(set(u) - {"name", "demand", "weight", "max_tasks", "servers"})
        if extra:
            raise InputError("unknown key (known keys: demand, max_tasks, name, servers, "
                             "weight)", f"users[{i}].{extra[0]}")
        unames.append(str(u.get("name", f"u{i + 1}")))
        d = vector(u.get("demand"), f"users[{i}].demand")
        if not np.any(d > 0):
            raise InputError("all entries are zero", f"users[{i}].demand")
        demand.append(d)
        weights.append(float(u.get("weight", 1.0)))
        if not weights[-1] > 0:
            raise InputError("must be positive", f"users[{i}].weight")
        max_tasks.append(float(u.get("max_tasks", np.inf)))
        where = u.get("servers")
        if where is None:
            allowed.append([True] * len(names))
        else:
            bad = [s for s in where if s not in names]
            if bad:
                raise InputError(f"unknown server '{bad[0]}'", f"users[{i}].servers")
            allowed.append([n in where for n in names])
    chosen = raw.get("policies", list(policies))
    for p in chosen:
        if p not in policies:
            raise InputError(f"unknown policy '{p}' (choose from {', '.join(policies)})",
                             "policies")
    problem = Problem(capacity=np.array(caps), demand=np.array(demand),
                      weights=np.array(weights), max_tasks=np.array(max_tasks),
                      allowed=np.array(allowed), users=tuple(unames), servers=tuple(names),
                      resources=tuple(str(r) for r in resources))
    return problem, list(chosen)
