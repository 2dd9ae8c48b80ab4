"""Problem files (TOML): ``resources``, ``[[servers]]`` (name, capacity), ``[[users]]``
(name, demand, weight, max_tasks, servers = the servers the user may run on), optional
``policies``, ``name``, ``description``.

Fields are checked with the scenario's checks (:mod:`mrfq.fields`), so every problem is one
:class:`InputError` naming the field — the CLI prints ``error: <file>: <field>: <problem>``
and exits with code 2.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from mrfq import fields
from mrfq.allocation.policies import NAME, POLICIES, not_applicable
from mrfq.allocation.problem import Problem
from mrfq.errors import InputError
from mrfq.io import is_path, read_toml

_TOP_KEYS = {"name", "description", "resources", "servers", "users", "policies"}
_SERVER_KEYS = {"name", "capacity"}
_USER_KEYS = {"name", "demand", "weight", "max_tasks", "servers"}
#: the smallest dominant share of the pool a user's task may have (and 1/it the largest):
#: at 1e-10 HiGHS's tolerances gave a DRF user no task at all, at 1e14 it failed
MIN_SHARE = 1e-8
#: the range of a positive capacity or demand entry (the solvers work in shares of the
#: pool, so any units do within it): a subnormal value has lost its digits (at 1e-320 the
#: allocations changed) and a larger one overflows in sums over servers and misreports
MIN_AMOUNT, MAX_AMOUNT = 1e-300, 1e300


#: the example problems shipped with the package (``mrfq allocate drf_slides``)
PACKAGED_PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


def packaged_problems() -> list[str]:
    """Names of the allocation problems shipped with mrfq."""
    return sorted(p.stem for p in PACKAGED_PROBLEMS.glob("*.toml"))


def load_problem(path: str | Path) -> Problem:
    """Read and check a problem file (or a packaged example by name: ``drf_slides``,
    ``drfh_two_servers``); returns the :class:`Problem`, with the policies the file lists
    in ``policies`` (empty when it lists none; a listed policy that does not apply to it is
    an error). Any problem raises InputError naming the file and the field."""
    if not isinstance(path, str | PathLike):
        raise InputError(f"must be a problem file or a packaged name, got "
                         f"{type(path).__name__}", "problem")
    if not str(path).strip():  # (Path("") is ".", the current directory)
        raise InputError("an empty path", "problem")
    path = Path(path)
    if is_path(path, "problem", None, directory=True):  # (a name too long: one line)
        raise InputError("is a directory, not a problem file", None, str(path))
    packaged = PACKAGED_PROBLEMS / path.with_suffix(".toml").name
    if not path.exists() and path.parent == Path(".") and packaged.is_file():
        path = packaged
    return problem_from_dict(read_toml(path), str(path))


def problem_from_dict(raw: Any, source: str | None = None) -> Problem:
    """:func:`load_problem` of an already parsed file (a dict)."""
    try:
        return _parse(raw, source)
    except InputError as exc:
        raise exc.located(source) if source else exc from None


def _distinct(names: list[str], field: str, source: str | None, what: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"{what} names must be distinct ('{name}' twice)", field, source)
        seen.add(name)


def _amounts(values: np.ndarray, field: str, source: str | None) -> np.ndarray:
    """``values`` (capacities or a demand, one per resource), each 0 or in [MIN_AMOUNT,
    MAX_AMOUNT], else an InputError naming the entry."""
    for r, value in enumerate(values):
        if value > MAX_AMOUNT or 0 < value < MIN_AMOUNT:
            raise InputError(f"must be 0 or between {MIN_AMOUNT:g} and {MAX_AMOUNT:g} "
                             f"(allocations depend only on ratios: use other units), got "
                             f"{value:g}", f"{field}[{r}]", source)
    return values


def _parse(raw: Any, source: str | None) -> Problem:
    raw = fields.check_keys(raw, _TOP_KEYS, "", source)
    for key in ("name", "description"):
        if key in raw:
            fields.text(raw[key], key, source)

    if "resources" not in raw:
        raise InputError("missing (the list of resource names)", "resources", source)
    resources = fields.name_list(raw["resources"], "resources", source, what="resource")
    m = len(resources)

    servers = raw.get("servers", [{"name": "pool", "capacity": [1.0] * m}])
    if not isinstance(servers, list) or not servers:
        raise InputError("must list at least one [[servers]] table", "servers", source)
    server_names, capacity = [], []
    for l, server in enumerate(servers):
        where = f"servers[{l}]"
        server = fields.check_keys(server, _SERVER_KEYS, where, source)
        server_names.append(fields.text(server.get("name", f"s{l + 1}"), f"{where}.name",
                                        source, name=True))
        if "capacity" not in server:
            raise InputError(f"missing ({m} numbers, one per resource)", f"{where}.capacity",
                             source)
        capacity.append(_amounts(fields.vector(server["capacity"], m, f"{where}.capacity",
                                               source), f"{where}.capacity", source))
    _distinct(server_names, "servers", source, "server")
    missing = np.flatnonzero(np.sum(capacity, axis=0) <= 0)
    if missing.size:
        raise InputError(f"resource '{resources[missing[0]]}' has no capacity on any server",
                         "servers", source)

    users = raw.get("users")
    if not isinstance(users, list) or not users:
        raise InputError("must list at least one [[users]] table", "users", source)
    names, demand, weights, max_tasks, allowed = [], [], [], [], []
    for i, user in enumerate(users):
        where = f"users[{i}]"
        user = fields.check_keys(user, _USER_KEYS, where, source)
        names.append(fields.text(user.get("name", f"u{i + 1}"), f"{where}.name", source,
                                 name=True))
        if "demand" not in user:
            raise InputError(f"missing ({m} numbers per task, one per resource)",
                             f"{where}.demand", source)
        demand.append(_amounts(fields.vector(user["demand"], m, f"{where}.demand", source),
                               f"{where}.demand", source))
        weights.append(fields.number(user.get("weight", 1.0), f"{where}.weight", source,
                                     positive=True))
        fields.check_weights(weights[-1], f"{where}.weight", source)
        max_tasks.append(fields.number(user.get("max_tasks", np.inf), f"{where}.max_tasks",
                                       source, nonnegative=True, allow_inf=True))
        if "servers" in user:
            where_ok = fields.name_list(user["servers"], f"{where}.servers", source,
                                        allowed=tuple(server_names), what="server")
            allowed.append([name in where_ok for name in server_names])
        else:
            allowed.append([True] * len(server_names))
    _distinct(names, "users", source, "user")
    total = np.sum(capacity, axis=0)
    for i, row in enumerate(demand):  # (the LPs' tolerances: beyond, 0 tasks or a failure)
        share = float(np.max(row / total))
        if not MIN_SHARE <= share <= 1 / MIN_SHARE:
            raise InputError(f"a task's dominant share of the servers' total is {share:.3g}, "
                             f"outside [{MIN_SHARE:g}, {1 / MIN_SHARE:g}], where the "
                             "allocations' linear programs are exact", f"users[{i}].demand",
                             source)

    chosen = []
    if "policies" in raw:
        chosen = list(fields.name_list(raw["policies"], "policies", source,
                                       allowed=tuple(POLICIES), what="policy", lower=True))
    problem = Problem(capacity=np.array(capacity), demand=np.array(demand),
                      weights=np.array(weights), max_tasks=np.array(max_tasks),
                      allowed=np.array(allowed), users=tuple(names),
                      servers=tuple(server_names), resources=resources,
                      policies=tuple(chosen))
    if "policies" in raw:  # a policy the file asks for by name must apply to it
        for name in chosen:
            reason = not_applicable(name, problem)
            if reason and name == NAME.IBAA:
                raise InputError(f"{reason} (the problem has {m}; policies lists '{name}')",
                                 "resources", source)
            if reason:
                raise InputError(reason, "policies", source)
    return problem
