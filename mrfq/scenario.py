"""Scenario files (TOML, SPEC §5): parse, fill defaults, validate at the door.

A scenario names the resources, the traffic classes (requirement vectors, relative loads,
optional weights, round-trip times and packet mixes) and the load axis. Everything is
validated before any model object exists; every problem raises :class:`InputError` naming
the field, e.g. ``classes[2].requirements: negative entry -0.5``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mrfq import fields, policies
from mrfq.errors import InputError
from mrfq.explicit import ExplicitFlow, Timeline, parse_flows
from mrfq.sizes import SizeLaw, parse_size

_TOP_KEYS = {"name", "description", "resources", "classes", "load", "fluid", "packet",
             "flows", "timeline"}
_CLASS_KEYS = {"name", "requirements", "load_share", "weight", "rtt", "packets", "packet_order",
               "size"}
_MIX_KEYS = {"requirements", "probability"}
_LOAD_KEYS = {"axis", "values"}
_FLUID_KEYS = {"policies", "tolerance", "method", "flows", "replications", "seed"}
#: how a fluid point is computed (:mod:`mrfq.fluid.method`)
FLUID_METHODS = ("auto", "markov", "simulation")
_PACKET_KEYS = {
    "policies", "mean_size", "window", "flows", "warmup", "replications", "seed", "delta",
    "batches", "precision", "max_replications", "fq_resource", "init",
}
#: how a packet replication starts (``[packet] init``): empty, or with flows in progress
#: drawn from the fluid model's stationary law (:mod:`mrfq.packet.initial`)
PACKET_INITS = ("empty", "fluid")


@dataclass(frozen=True)
class TrafficClass:
    """One class of transactions (flows).

    ``requirements`` is the fluid requirement vector a_k, normalised so max_j a_kj = 1
    (BR §2.1). ``packet_requirements`` (P×J) are per-packet processing times in the same
    unit (one dominant packet service of the mean vector = 1), drawn with
    ``packet_probabilities`` or cycled in order when ``packet_order == "cycle"``.
    """

    name: str
    requirements: np.ndarray
    load_share: float
    weight: float = 1.0
    rtt: float = 0.0
    packet_requirements: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    packet_probabilities: np.ndarray = field(default_factory=lambda: np.zeros(0))
    packet_order: str = "random"
    size: SizeLaw = field(default_factory=parse_size)


@dataclass(frozen=True)
class FluidConfig:
    """``[fluid]``: policies; ``tolerance`` (relative truncation error of the Markov
    solver); ``method`` (auto, markov or simulation, :mod:`mrfq.fluid.method`); for the
    flow-level simulator ``flows`` per replication, ``replications`` and ``seed``."""

    policies: tuple[str, ...] = ("drf", "pf", "bmf")
    tolerance: float = 1e-5
    method: str = "auto"
    flows: int = 1_000_000
    replications: int = 10
    seed: int = 1


@dataclass(frozen=True)
class PacketConfig:
    policies: tuple[str, ...] = ("drfq", "pf", "bmf")
    mean_size: float = 20000.0
    window: int = 30
    flows: int = 100000
    warmup: float | str = "auto"
    replications: int = 1
    seed: int = 1
    delta: float = math.inf
    batches: int = 20
    #: target relative 95% half-width of every class's γ (None: a fixed number of
    #: replications); replications are added until it is reached or ``max_replications``
    precision: float | None = None
    max_replications: int = 1000
    fq_resource: str | None = None  # bottleneck FQ's resource (None: the last, the link)
    #: "empty" (no flow at t = 0) or "fluid" (flows in progress at t = 0 drawn from the
    #: Markov model's stationary law π of the policy's fluid counterpart; not measured)
    init: str = "empty"


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. Use :func:`load_scenario` or :func:`scenario_from_dict`."""

    name: str
    description: str
    resources: tuple[str, ...]
    classes: tuple[TrafficClass, ...]
    load_axis: str
    load_values: tuple[float, ...]
    fluid: FluidConfig
    packet: PacketConfig
    source: str = "<scenario>"
    flows: tuple[ExplicitFlow, ...] = ()  # explicit flows ([[flows]], mrfq.explicit)
    timeline: Timeline | None = None

    @property
    def requirements(self) -> np.ndarray:
        """K×J matrix of normalised fluid requirement vectors."""
        return np.array([c.requirements for c in self.classes], dtype=np.float64)

    @property
    def weights(self) -> np.ndarray:
        return np.array([c.weight for c in self.classes], dtype=np.float64)

    @property
    def class_names(self) -> list[str]:
        return [c.name for c in self.classes]

    @property
    def size_laws(self) -> list[SizeLaw]:
        """The flow-size law of every class (scenario order)."""
        return [c.size for c in self.classes]

    @property
    def exponential_sizes(self) -> bool:
        """Every class has exponential sizes (geometric in packets): the Markov model's
        assumption (BR §4.1)."""
        return all(c.size.distribution == "exponential" for c in self.classes)

    def class_loads(self, load: float) -> np.ndarray:
        """Per-class loads ρ_k (work per unit time) for a value on the load axis.

        ρ_k ∝ load_share_k, scaled so that the axis resource (or the most loaded one for
        axis "max") has load ``load`` = Σ_k ρ_k a_kj (BR eq. 8).
        """
        shares = np.array([c.load_share for c in self.classes], dtype=np.float64)
        per_resource = shares @ self.requirements
        if self.load_axis == "max":
            reference = per_resource.max()
        else:
            reference = per_resource[self.resources.index(self.load_axis)]
        return shares * (load / reference)

    @property
    def fq_resource_index(self) -> int:
        """Index of the resource the ``bottleneck-fq`` policy schedules (SPEC §3.1):
        ``[packet] fq_resource``, by default the last resource (the output link)."""
        name = self.packet.fq_resource
        return len(self.resources) - 1 if name is None else self.resources.index(name)

    def resource_loads(self, load: float) -> np.ndarray:
        """Load Σ_k ρ_k a_kj of every resource j at a value on the load axis."""
        return self.class_loads(load) @ self.requirements

    def check_load(self, load: float, field_name: str = "load") -> None:
        """Raise InputError unless the system is stable (every resource load < 1, eq. 8)."""
        if not (isinstance(load, int | float) and math.isfinite(load) and load > 0):
            raise InputError(f"load must be a positive number, got {load!r}", field_name,
                             self.source)
        per_resource = self.resource_loads(load)
        for name, value in zip(self.resources, per_resource, strict=True):
            if value >= 1.0:
                raise InputError(
                    f"load {load:g} puts resource '{name}' at {value:.4g} >= 1 (unstable)",
                    field_name, self.source)

    def to_dict(self) -> dict:
        """The scenario as the plain dict :func:`scenario_from_dict` reads (every default
        filled in, packet mixes written out), so ``scenario_from_dict(s.to_dict())``
        rebuilds ``s``. Results directories store it."""
        classes = []
        for c in self.classes:
            entry = {"name": c.name, "load_share": c.load_share, "weight": c.weight,
                     "rtt": c.rtt, "packet_order": c.packet_order}
            if len(c.packet_requirements) == 1:
                entry["requirements"] = c.packet_requirements[0].tolist()
            else:
                entry["packets"] = [{"requirements": r.tolist(), "probability": float(p)}
                                    for r, p in zip(c.packet_requirements,
                                                    c.packet_probabilities, strict=True)]
            if c.size.distribution != "exponential":  # absent = exponential
                entry["size"] = size_spec(c.size)
            classes.append(entry)
        return {
            "name": self.name, "description": self.description,
            "resources": list(self.resources), "classes": classes,
            "load": {"axis": self.load_axis, "values": list(self.load_values)},
            "fluid": {**self.fluid.__dict__, "policies": list(self.fluid.policies)},
            "packet": _packet_dict(self.packet),
            **({"flows": [{"name": f.name, "class": f.class_name, "start": f.start,
                           "stop": f.stop, "window": f.window, "rate": f.rate}
                          for f in self.flows],
                "timeline": dict(self.timeline.__dict__)} if self.timeline else {}),
        }

    def with_sizes(self, spec: Any) -> Scenario:
        """A copy with every class's flow-size law replaced by ``spec`` (a ``size`` table
        or a :class:`~mrfq.sizes.SizeLaw`; validated like the file's)."""
        law = parse_size(spec, "size", self.source)
        return replace(self, classes=tuple(replace(c, size=law) for c in self.classes))

    def with_overrides(self, **changes: Any) -> Scenario:
        """A copy with packet-section fields replaced (validated like the file's)."""
        raw = {k: v for k, v in changes.items() if v is not None}
        if not raw:
            return self
        merged = {**self.packet.__dict__, **raw}
        merged["policies"] = list(merged["policies"])
        packet = _parse_packet(merged, self.source, "option")
        if "init" in raw:  # the policy is checked where it runs (mrfq.points)
            check_init(packet, self.classes, "--init", None, check_policies=False)
        return replace(self, packet=packet)


def _packet_dict(packet: PacketConfig) -> dict:
    """``[packet]`` as a plain dict; ``init`` only when not "empty", so the stored scenario
    of a run without it is what it was before the option existed."""
    out = {**packet.__dict__, "policies": list(packet.policies)}
    if out["init"] == "empty":
        del out["init"]
    return out


def check_init(packet: PacketConfig, classes: tuple[TrafficClass, ...], field_name: str,
               source: str | None, check_policies: bool = True) -> None:
    """InputError unless ``init = "fluid"`` can be honoured as far as the scenario alone
    tells: every class has exponential sizes (the Markov model's assumption, BR §4.1) and
    every packet policy has a fluid counterpart (:mod:`mrfq.policies`). The state budget,
    which depends on the load, is checked per point (:func:`mrfq.points.check_init`)."""
    if packet.init != "fluid":
        return
    other = [c for c in classes if c.size.distribution != "exponential"]
    if other:
        raise _fail(f"'fluid' needs the Markov model, which assumes exponential sizes, but "
                    f"class '{other[0].name}' has {other[0].size.distribution} sizes",
                    field_name, source)
    if check_policies:
        for name in packet.policies:
            if policies.fluid_counterpart(name) is None:
                raise _fail(f"'fluid' needs a fluid counterpart of every packet policy, and "
                            f"{name} has none", field_name, source)


# ---------------------------------------------------------------------------------------
# parsing helpers (the field checks are shared with problem files: mrfq.fields)


def _fail(problem: str, field_name: str, source: str) -> InputError:
    return InputError(problem, field_name, source)


def _policies(value: Any, kind: str, field_name: str, source: str | None) -> tuple:
    return fields.name_list(value, field_name, source, allowed=policies.names(kind),
                            what="policy", lower=True)


def _warmup(value: Any, field_name: str, source: str | None) -> float | str:
    """A warm-up fraction in [0, 1), or "auto" (MSER-5 on the run's own data,
    :func:`mrfq.stats.warmup_cut`)."""
    if isinstance(value, str):
        if value.strip().lower() == "auto":
            return "auto"
        try:
            value = float(value)  # from the command line
        except ValueError:
            raise _fail(f"must be 'auto' or a fraction in [0, 1), got {value!r}",
                        field_name, source) from None
    fraction = fields.number(value, field_name, source, nonnegative=True)
    if fraction >= 1:
        raise _fail(f"must be 'auto' or a fraction in [0, 1), got {fraction:g}", field_name,
                    source)
    return fraction


def _precision(value: Any, field_name: str, source: str | None) -> float | None:
    """A relative half-width target in (0, 1), or None (no target: JSON null in a stored
    scenario; TOML has no null, so a file simply leaves the key out)."""
    if value is None:
        return None
    target = fields.number(value, field_name, source, positive=True)
    if target >= 1:
        raise _fail(f"must be a fraction in (0, 1) of gamma, got {target:g}", field_name,
                    source)
    return target


def _init(value: Any, field_name: str, source: str | None) -> str:
    """One of :data:`PACKET_INITS` (case-insensitive)."""
    if not isinstance(value, str) or value.strip().lower() not in PACKET_INITS:
        raise _fail(f"must be one of {', '.join(PACKET_INITS)}, got {value!r}", field_name,
                    source)
    return value.strip().lower()


def size_spec(law: SizeLaw) -> dict:
    """The ``size`` table that :func:`mrfq.sizes.parse_size` reads back into ``law`` (an
    empirical law keeps its file, as an absolute path)."""
    spec = {"distribution": law.distribution}
    spec.update({k: v for k, v in law.params.items() if v is not None})
    return spec


def _parse_class(raw: Any, index: int, num_resources: int, source: str) -> TrafficClass:
    where = f"classes[{index}]"
    raw = fields.check_keys(raw, _CLASS_KEYS, where, source)
    name = fields.text(raw.get("name", str(index + 1)), f"{where}.name", source)
    if "load_share" not in raw:
        raise _fail("missing (relative load of the class)", f"{where}.load_share", source)
    load_share = fields.number(raw["load_share"], f"{where}.load_share", source, nonnegative=True)
    weight = fields.number(raw.get("weight", 1.0), f"{where}.weight", source, positive=True)
    rtt = fields.number(raw.get("rtt", 0.0), f"{where}.rtt", source, nonnegative=True)
    order = raw.get("packet_order", "random")
    if order not in ("random", "cycle"):
        raise _fail(f"must be 'random' or 'cycle', got {order!r}", f"{where}.packet_order",
                    source)
    has_req, has_mix = "requirements" in raw, "packets" in raw
    if has_req == has_mix:
        raise _fail("give exactly one of 'requirements' or 'packets'", where, source)
    if has_req:
        vectors = fields.vector(raw["requirements"], num_resources, f"{where}.requirements",
                          source)[None, :]
        probabilities = np.ones(1)
    else:
        mix = raw["packets"]
        if not isinstance(mix, list) or not mix:
            raise _fail("must be a non-empty list of {requirements, probability} tables",
                        f"{where}.packets", source)
        rows, probs = [], []
        for p, entry in enumerate(mix):
            entry_where = f"{where}.packets[{p}]"
            entry = fields.check_keys(entry, _MIX_KEYS, entry_where, source)
            if "requirements" not in entry:
                raise _fail("missing", f"{entry_where}.requirements", source)
            rows.append(fields.vector(entry["requirements"], num_resources,
                                f"{entry_where}.requirements", source))
            default_p = 1.0 / len(mix)
            probs.append(fields.number(entry.get("probability", default_p),
                                 f"{entry_where}.probability", source, positive=True))
        vectors = np.array(rows)
        probabilities = np.array(probs)
        if order == "random" and abs(probabilities.sum() - 1.0) > 1e-9:
            raise _fail(f"probabilities sum to {probabilities.sum():g}, expected 1",
                        f"{where}.packets", source)
        if order == "cycle":
            probabilities = np.full(len(rows), 1.0 / len(rows))
    mean = probabilities @ vectors
    scale = mean.max()
    # an empirical file is found relative to the scenario's folder
    base = Path(source).parent if not source.startswith("<") else None
    size = parse_size(raw.get("size"), f"{where}.size", source, base_dir=base)
    return TrafficClass(
        name=name,
        requirements=mean / scale,
        load_share=load_share,
        weight=weight,
        rtt=rtt,
        packet_requirements=vectors / scale,
        packet_probabilities=probabilities,
        packet_order=order,
        size=size,
    )


def _field(where: str, key: str) -> str:
    return f"--{key.replace('_', '-')}" if where == "option" else f"{where}.{key}"


def _parse_packet(raw: dict, source: str, where: str = "packet") -> PacketConfig:
    raw = fields.check_keys(raw, _PACKET_KEYS, where, source)
    defaults = PacketConfig()
    get = raw.get
    if where == "option":  # overrides from the command line: name the option itself
        source = None
    def value(key):
        return get(key, getattr(defaults, key))

    def integer(key, minimum):
        return fields.integer(value(key), _field(where, key), source, minimum)

    packet = PacketConfig(
        policies=_policies(list(value("policies")), policies.PACKET, _field(where, "policies"),
                           source),
        mean_size=fields.number(value("mean_size"), _field(where, "mean_size"), source),
        window=integer("window", 1),
        flows=integer("flows", 1),
        warmup=_warmup(value("warmup"), _field(where, "warmup"), source),
        replications=integer("replications", 1),
        seed=integer("seed", 0),
        delta=fields.number(value("delta"), _field(where, "delta"), source, nonnegative=True,
                            allow_inf=True),
        batches=integer("batches", 2),
        precision=_precision(value("precision"), _field(where, "precision"), source),
        max_replications=integer("max_replications", 1),
        fq_resource=(None if value("fq_resource") is None else
                     fields.text(value("fq_resource"), _field(where, "fq_resource"), source)),
        init=_init(value("init"), _field(where, "init"), source),
    )
    if packet.precision is not None and packet.max_replications < packet.replications:
        raise _fail(f"must be >= replications ({packet.replications}), got "
                    f"{packet.max_replications}", _field(where, "max_replications"), source)
    if packet.mean_size < 1:
        raise _fail(f"must be >= 1 packet, got {packet.mean_size:g}", _field(where, "mean_size"),
                    source)
    fixed = packet.warmup if packet.warmup != "auto" else 0.0
    measured = packet.flows - int(fixed * packet.flows)
    if measured < 1:
        raise _fail("no flow left to measure after the warm-up", _field(where, "flows"), source)
    return packet


def _parse_fluid(raw: dict, source: str, classes: tuple[TrafficClass, ...]) -> FluidConfig:
    defaults = FluidConfig()
    method = raw.get("method", defaults.method)
    if not isinstance(method, str) or method.lower() not in FLUID_METHODS:
        raise _fail(f"must be one of {', '.join(FLUID_METHODS)}, got {method!r}",
                    "fluid.method", source)
    fluid = FluidConfig(
        policies=_policies(raw.get("policies", list(defaults.policies)), policies.FLUID,
                           "fluid.policies", source),
        tolerance=fields.number(raw.get("tolerance", defaults.tolerance), "fluid.tolerance",
                                source, positive=True),
        method=method.lower(),
        flows=fields.integer(raw.get("flows", defaults.flows), "fluid.flows", source, 1),
        replications=fields.integer(raw.get("replications", defaults.replications),
                                    "fluid.replications", source, 1),
        seed=fields.integer(raw.get("seed", defaults.seed), "fluid.seed", source, 0),
    )
    other = [c for c in classes if c.size.distribution != "exponential"]
    if fluid.method == "markov" and other and set(fluid.policies) - {"bf"}:
        raise _fail(f"the Markov solver assumes exponential sizes, but class '{other[0].name}'"
                    f" has {other[0].size.distribution} sizes (use 'simulation' or 'auto'; "
                    "only bf is exact for every law)", "fluid.method", source)
    return fluid


def scenario_from_dict(raw: dict, source: str = "<scenario>") -> Scenario:
    """Validate a scenario given as a plain dict (the parsed TOML) and fill defaults."""
    raw = fields.check_keys(raw, _TOP_KEYS, "", source)
    resources = raw.get("resources")
    if not isinstance(resources, list) or not resources:
        raise _fail("must be a non-empty list of resource names", "resources", source)
    resources = tuple(fields.text(r, f"resources[{i}]", source) for i, r in enumerate(resources))
    if len(set(resources)) != len(resources):
        raise _fail("resource names must be distinct", "resources", source)
    if "max" in resources:
        raise _fail("'max' is reserved for the load axis", "resources", source)
    classes_raw = raw.get("classes")
    if not isinstance(classes_raw, list) or not classes_raw:
        raise _fail("must list at least one [[classes]] table", "classes", source)
    classes = tuple(_parse_class(c, i, len(resources), source)
                    for i, c in enumerate(classes_raw))
    names = [c.name for c in classes]
    if len(set(names)) != len(names):
        raise _fail("class names must be distinct", "classes", source)
    if not any(c.load_share > 0 for c in classes):
        raise _fail("at least one class needs a positive load_share", "classes", source)

    load = fields.check_keys(raw.get("load", {}), _LOAD_KEYS, "load", source)
    axis = str(load.get("axis", "max"))
    if axis != "max" and axis not in resources:
        raise _fail(f"unknown resource '{axis}' (choose from max, {', '.join(resources)})",
                    "load.axis", source)
    values = load.get("values", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    if not isinstance(values, list) or not values:
        raise _fail("must be a non-empty list of numbers", "load.values", source)
    values = tuple(fields.number(v, f"load.values[{i}]", source, positive=True)
                   for i, v in enumerate(values))
    if len(set(values)) != len(values):
        raise _fail("values must be distinct (a repeated load would count its points "
                    "twice)", "load.values", source)

    fluid_raw = fields.check_keys(raw.get("fluid", {}), _FLUID_KEYS, "fluid", source)
    fluid = _parse_fluid(fluid_raw, source, classes)
    packet = _parse_packet(raw.get("packet", {}), source)
    if packet.fq_resource is not None and packet.fq_resource not in resources:
        raise _fail(f"unknown resource '{packet.fq_resource}' (choose from "
                    f"{', '.join(resources)})", "packet.fq_resource", source)

    check_init(packet, classes, "packet.init", source)

    flows, timeline = parse_flows(raw.get("flows"), raw.get("timeline"), names,
                                  packet.window, source)

    scenario = Scenario(
        name=fields.text(raw.get("name", Path(source).stem), "name", source),
        description=fields.text(raw.get("description", ""), "description", source),
        resources=resources,
        classes=classes,
        load_axis=axis,
        load_values=values,
        fluid=fluid,
        packet=packet,
        source=source,
        flows=flows,
        timeline=timeline,
    )
    for i, value in enumerate(values):
        scenario.check_load(value, f"load.values[{i}]")
    return scenario


#: the scenarios shipped with the package (``mrfq run fig3_quick`` finds them by name)
PACKAGED_SCENARIOS = Path(__file__).resolve().parent / "scenarios"


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
    from mrfq.io import read_toml

    path = scenario_path(path)
    return scenario_from_dict(read_toml(path), str(path))
