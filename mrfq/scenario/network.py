"""Networks (SPEC §3.2): resources grouped into routers, and the route of every class.

``[routers]`` maps a router's name to its resources; absent, one router holds every
resource (the tandem of SPEC §3). A class's ``route`` lists the resources its packets
visit, in order, each at most once; absent, the resources where its requirement is
nonzero, in the scenario's ``resources`` order. The requirement vector stays indexed by
``resources``, so a route and the nonzero requirements must name the same resources.

Both are normalised so that a scenario that does not use them, or spells out the defaults,
is the same model as before they existed (same stored dict, same point keys): a route
equal to the default becomes ``None``, and routers that put every resource in one router
become ``()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrfq import fields
from mrfq.scenario.checks import fail


def default_route(requirements: np.ndarray) -> tuple[int, ...]:
    """The resources with a nonzero requirement, in the scenario's order (SPEC §3.2)."""
    return tuple(int(j) for j in np.flatnonzero(np.asarray(requirements) > 0))


def parse_route(raw: Any, index: int, resources: tuple[str, ...],
                requirements: np.ndarray, source: str) -> tuple[int, ...] | None:
    """Class ``index``'s ``route`` as resource indices (``None``: absent or equal to the
    default). Errors name ``classes[i].route``: an unknown resource, one listed twice, a
    resource where the class's requirement is zero, a nonzero requirement it skips."""
    if raw is None:
        return None
    where = f"classes[{index}].route"
    if not isinstance(raw, list) or not raw:
        raise fail("must be a non-empty list of resource names", where, source)
    route: list[int] = []
    for i, name in enumerate(raw):
        if not isinstance(name, str) or name not in resources:
            raise fail(f"unknown resource {fields.shown(name)} (choose from "
                       f"{', '.join(resources)})", f"{where}[{i}]", source)
        j = resources.index(name)
        if j in route:
            raise fail(f"resource '{name}' appears twice (a route visits a resource at "
                       "most once)", where, source)
        route.append(j)
    for j in route:
        if requirements[j] <= 0:
            raise fail(f"passes through '{resources[j]}', where the class's requirement "
                       "is 0", where, source)
    for j in default_route(requirements):
        if j not in route:
            raise fail(f"skips '{resources[j]}', where the class's requirement is "
                       f"{requirements[j]:g}", where, source)
    out = tuple(route)
    return None if out == default_route(requirements) else out


def parse_routers(raw: Any, resources: tuple[str, ...],
                  source: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``[routers]`` as (name, resource indices) pairs in the file's order; ``()`` when
    absent or when one router holds every resource (the default). Every resource must be
    in exactly one router."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise fail("must be a table of router = [resource names]", "routers", source)
    if not raw:
        raise fail("is empty: name at least one router (router = [resource names]), or "
                   "leave [routers] out for one router holding every resource", "routers",
                   source)
    owner: dict[int, str] = {}
    routers = []
    for name, members in raw.items():
        where = f"routers.{name}"
        if not isinstance(name, str) or not name.strip():  # (TOML keys are strings; a
            # dict from Python need not be)
            raise fail(f"a router needs a name (a non-empty string), got {name!r}",
                       "routers", source)
        if not isinstance(members, list) or not members:
            raise fail("must be a non-empty list of resource names", where, source)
        indices = []
        for i, member in enumerate(members):
            if not isinstance(member, str) or member not in resources:
                raise fail(f"unknown resource {fields.shown(member)} (choose from "
                           f"{', '.join(resources)})", f"{where}[{i}]", source)
            j = resources.index(member)
            if j in owner:
                raise fail(f"resource '{member}' is listed twice in it" if owner[j] == name
                           else f"resource '{member}' is already in router '{owner[j]}' (a "
                           "resource belongs to one router)", where, source)
            owner[j] = name
            indices.append(j)
        routers.append((name, tuple(sorted(indices))))
    missing = [resources[j] for j in range(len(resources)) if j not in owner]
    if missing:
        raise fail(f"resource '{missing[0]}' is in no router (with [routers], every "
                   "resource belongs to one)", "routers", source)
    return () if len(routers) == 1 else tuple(routers)


def lone_router_name(raw: Any) -> str:
    """The name of a ``[routers]`` table's only router ("" otherwise): the scenario keeps
    it for drawings, while its model is the tandem (:func:`parse_routers` gives ``()``)."""
    return next(iter(raw)) if isinstance(raw, dict) and len(raw) == 1 else ""


def router_of(routers: tuple[tuple[str, tuple[int, ...]], ...], J: int) -> np.ndarray:
    """Router index of every resource (all 0 for the default single router)."""
    out = np.zeros(J, dtype=np.int64)
    for r, (_, members) in enumerate(routers):
        out[list(members)] = r
    return out
