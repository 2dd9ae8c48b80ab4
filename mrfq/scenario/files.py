"""Scenario files (TOML, SPEC §5): find them, parse them, fill defaults, validate at the
door.

A scenario names the resources, the traffic classes (requirement vectors, relative loads,
optional weights, round-trip times and packet mixes) and the load axis. Everything is
validated before any model object exists; every problem raises :class:`InputError` naming
the field, e.g. ``classes[2].requirements[1]: must be non-negative, got -0.5``. The sections are
checked by :mod:`mrfq.scenario.checks`; this module checks the whole (resources, load
axis, names across sections, stability of every load) and locates the files, including
the scenarios shipped in ``mrfq/scenarios/``.
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike
from pathlib import Path

from mrfq import fields
from mrfq.errors import InputError
from mrfq.explicit import parse_flows
from mrfq.io import read_toml
from mrfq.scenario.checks import (
    check_fq_names,
    check_init,
    check_load_shares,
    check_packet_budget,
    fail,
    parse_class,
    parse_fluid,
    parse_packet,
)
from mrfq.scenario.cluster import parse_cluster, trace_path
from mrfq.scenario.config import FluidConfig, PacketConfig
from mrfq.scenario.limits import check_window
from mrfq.scenario.model import Scenario
from mrfq.scenario.network import lone_router_name, parse_route, parse_routers

_TOP_KEYS = {"name", "description", "resources", "classes", "load", "fluid", "packet",
             "flows", "timeline", "cluster", "routers"}
_LOAD_KEYS = {"axis", "values"}


def scenario_from_dict(raw: dict, source: str = "<scenario>") -> Scenario:
    """Validate a scenario given as a plain dict (the parsed TOML) and fill defaults."""
    raw = fields.check_keys(raw, _TOP_KEYS, "", source)
    resources = raw.get("resources")
    if not isinstance(resources, list) or not resources:
        raise fail("must be a non-empty list of resource names", "resources", source)
    resources = tuple(fields.text(r, f"resources[{i}]", source, name=True)
                      for i, r in enumerate(resources))
    if len(set(resources)) != len(resources):
        raise fail("resource names must be distinct", "resources", source)
    if "max" in resources:
        raise fail("'max' is reserved for the load axis", "resources", source)
    if isinstance(raw.get("cluster"), dict) and "trace" in raw["cluster"]:
        return _trace_scenario(raw, resources, source)
    classes_raw = raw.get("classes")
    if not isinstance(classes_raw, list) or not classes_raw:
        raise fail("must list at least one [[classes]] table", "classes", source)
    # with explicit flows a class's load matters only if the scenario is also swept
    shares = 1.0 if "flows" in raw else None  # (a malformed [[flows]] is said below)
    classes = tuple(parse_class(c, i, len(resources), source, shares)
                    for i, c in enumerate(classes_raw))
    classes = tuple(replace(c, route=parse_route(raw_c.get("route"), i, resources,
                                                 c.requirements, source))
                    for i, (c, raw_c) in enumerate(zip(classes, classes_raw, strict=True)))
    routers = parse_routers(raw.get("routers"), resources, source)
    names = [c.name for c in classes]
    if len(set(names)) != len(names):
        raise fail("class names must be distinct", "classes", source)
    if not any(c.load_share > 0 for c in classes):
        raise fail("at least one class needs a positive load_share", "classes", source)
    check_load_shares(classes, source)

    load = fields.check_keys(raw.get("load", {}), _LOAD_KEYS, "load", source)
    axis = load.get("axis", "max")
    if not isinstance(axis, str) or (axis != "max" and axis not in resources):
        raise fail(f"unknown resource {fields.shown(axis)} (choose from max, "
                   f"{', '.join(resources)})",
                   "load.axis", source)
    if axis != "max" and not any(c.load_share * c.requirements[resources.index(axis)] > 0
                                 for c in classes):  # (the loads would divide by its 0)
        raise fail(f"no class with a positive load_share uses resource '{axis}': its load "
                   "is 0 whatever the value; choose a resource some class uses, or max",
                   "load.axis", source)
    values = load.get("values", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    if not isinstance(values, list) or not values:
        raise fail("must be a non-empty list of numbers", "load.values", source)
    values = tuple(fields.number(v, f"load.values[{i}]", source, positive=True)
                   for i, v in enumerate(values))
    if len(set(values)) != len(values):
        raise fail("values must be distinct (a repeated load would count its points "
                   "twice)", "load.values", source)

    fluid = parse_fluid(raw.get("fluid", {}), source, classes)
    packet = parse_packet(raw.get("packet", {}), source)
    check_fq_names(packet, resources, "packet.fq_resource", source)
    check_packet_budget(packet, len(resources), "packet.mean_size", source, classes)
    check_init(packet, classes, "packet.init", source)

    flows, timeline = parse_flows(raw.get("flows"), raw.get("timeline"), names,
                                  packet.window, source)
    for where, window in [("packet.window", packet.window), *(
            (f"flows[{i}].window", f.window) for i, f in enumerate(flows))]:
        check_window(window, len(resources), max(len(classes), len(flows)), where, source)

    scenario = Scenario(
        name=fields.file_name(raw.get("name", Path(source).stem), "name", source),
        description=fields.text(raw.get("description", ""), "description", source),
        resources=resources,
        classes=classes,
        routers=routers,
        router_name=lone_router_name(raw.get("routers")),
        load_axis=axis,
        load_values=values,
        fluid=fluid,
        packet=packet,
        cluster=parse_cluster(raw.get("cluster"), source, classes, resources=resources),
        source=source,
        flows=flows,
        timeline=timeline,
    )
    for i, value in enumerate(values):
        scenario.check_load(value, f"load.values[{i}]")
    if scenario.cluster.policies and scenario.network:  # it would run as if there were none
        raise fail("a cluster (SPEC §6: jobs of tasks on servers) has no routes or routers: "
                   "leave out [cluster], or the routes and [routers]", "cluster", source)
    return scenario


def _trace_scenario(raw: dict, resources: tuple[str, ...], source: str) -> Scenario:
    """A trace scenario (``[cluster] trace``): the trace brings the jobs, so no classes,
    load axis or other model section; two resources, the trace's CPU and memory."""
    # the trace first: an empty one (meant as "no trace"?) is the mistake to name, not
    # the classes beside it or, without them, their absence
    trace_path(raw["cluster"]["trace"], source)
    other = sorted(set(raw) - {"name", "description", "resources", "cluster"})
    if other:
        raise fail("a trace scenario takes its jobs from cluster.trace (no classes, load "
                   "axis, fluid, packet or network sections)", other[0], source)
    if len(resources) != 2:
        raise fail("a trace scenario has two resources (the trace's CPU and memory "
                   f"requests), got {len(resources)}", "resources", source)
    # matched by position, as a server table's columns: refused rather than mislabelled
    if resources[0].lower().startswith("mem") or resources[1].lower().startswith("cpu"):
        raise fail(f"{list(resources)}: a trace's requests are CPU, then memory, and "
                   "are matched to the resources by position: list them in that order",
                   "resources", source)
    return Scenario(
        name=fields.file_name(raw.get("name", Path(source).stem), "name", source),
        description=fields.text(raw.get("description", ""), "description", source),
        resources=resources, classes=(), load_axis="max", load_values=(),
        fluid=FluidConfig(policies=()), packet=PacketConfig(policies=()),
        cluster=parse_cluster(raw["cluster"], source, n_resources=2,
                              resources=resources), source=source)


#: the scenarios shipped with the package, the data folder ``mrfq/scenarios/`` beside this
#: package (``mrfq run fig3_quick`` finds them by name; package-data in pyproject.toml)
PACKAGED_SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def scenario_path(name_or_path: str | Path) -> Path:
    """The file a scenario argument names: an existing path as given, otherwise a
    scenario shipped with mrfq (``fig3_quick`` or ``fig3_quick.toml``); the given path
    when neither exists (reading it then reports "no such file")."""
    path = Path(name_or_path)
    if path.exists():
        return path
    packaged = PACKAGED_SCENARIOS / path.with_suffix(".toml").name
    if path.parent == Path(".") and packaged.is_file():
        return packaged
    return path


def packaged_scenarios() -> list[str]:
    """Names of the scenarios shipped with mrfq."""
    return sorted(p.stem for p in PACKAGED_SCENARIOS.glob("*.toml"))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a TOML scenario file (or a packaged scenario by name, see
    :func:`scenario_path`); raise InputError on any problem."""
    if not isinstance(path, str | PathLike):
        raise InputError(f"must be a scenario file or a packaged name, got "
                         f"{type(path).__name__}", "scenario")
    if not str(path).strip():  # (Path("") is ".", the current directory)
        raise InputError("an empty path", "scenario")
    path = scenario_path(path)
    if path.is_dir():
        raise InputError("is a directory, not a scenario file", None, str(path))
    if not path.exists():
        raise InputError(f"no such file, nor a packaged scenario ({unknown_name_hint(path)})",
                         None, str(path))
    return scenario_from_dict(read_toml(path), str(path))


def unknown_name_hint(path: Path) -> str:
    """The packaged scenarios, and the closest one to a misspelt name."""
    import difflib  # only on the error path

    names = packaged_scenarios()
    close = difflib.get_close_matches(path.stem, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"packaged: {', '.join(names)}{hint}"
