"""A validated scenario (SPEC §5) and what follows from it: the requirement matrix, the
per-class and per-resource loads of a point on the load axis (BR eq. 8), the resource
bottleneck FQ schedules, and the plain dict a results directory stores.

Build one with :func:`mrfq.scenario.load_scenario` or
:func:`mrfq.scenario.scenario_from_dict`; copies with other sizes or packet settings
(:meth:`Scenario.with_sizes`, :meth:`Scenario.with_overrides`) are validated by the same
section checks (:mod:`mrfq.scenario.checks`) as the file.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from mrfq.errors import InputError
from mrfq.explicit import ExplicitFlow, Timeline
from mrfq.scenario.checks import (
    STABLE_BELOW,
    UNUSED_BUDGET,
    check_fq_names,
    check_init,
    check_packet_budget,
    parse_packet,
)
from mrfq.scenario.cluster import cluster_dict
from mrfq.scenario.config import (
    ByValue,
    ClusterConfig,
    FluidConfig,
    PacketConfig,
    TrafficClass,
)
from mrfq.scenario.limits import check_window
from mrfq.scenario.network import default_route, router_of
from mrfq.sizes import SizeLaw, parse_size

#: the smallest load on the load axis: below it no run sees a flow, and at ~1e-170 the
#: Markov solver failed (a traceback); γ is 1 to six digits from 1e-6 down (measured)
MIN_LOAD = 1e-9


@dataclass(frozen=True, eq=False)
class Scenario(ByValue):
    """A validated scenario. Use :func:`load_scenario` or :func:`scenario_from_dict`."""

    name: str
    description: str
    resources: tuple[str, ...]
    classes: tuple[TrafficClass, ...]
    load_axis: str
    load_values: tuple[float, ...]
    fluid: FluidConfig
    packet: PacketConfig
    cluster: ClusterConfig = ClusterConfig()  # no [cluster] section: no cluster points
    #: where it was read from (messages name it); not part of what the scenario means, so
    #: not compared: a scenario read back from its stored dict equals the one stored
    source: str = field(default="<scenario>", compare=False)
    flows: tuple[ExplicitFlow, ...] = ()  # explicit flows ([[flows]], mrfq.explicit)
    timeline: Timeline | None = None
    #: [routers] (SPEC §3.2): (name, resource indices) per router; () = one router
    #: holding every resource (the tandem of SPEC §3)
    routers: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: the name of a [routers] table's only router: drawn, stored, nothing else reads it
    router_name: str = ""

    @property
    def drawn_routers(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The routers as the file named them: :attr:`routers`, or a lone router's name
        with every resource (() without a [routers] table)."""
        if self.routers or not self.router_name:
            return self.routers
        return ((self.router_name, tuple(range(len(self.resources)))),)

    @property
    def requirements(self) -> np.ndarray:
        """K×J matrix of normalised fluid requirement vectors."""
        return np.array([c.requirements for c in self.classes], dtype=np.float64)

    @property
    def routes(self) -> list[tuple[int, ...]]:
        """Every class's route (resource indices in visiting order, SPEC §3.2): its
        ``route``, or the resources with a nonzero requirement in the scenario's order."""
        return [c.route if c.route is not None else default_route(c.requirements)
                for c in self.classes]

    @property
    def router_index(self) -> np.ndarray:
        """Router index of every resource (all 0 without ``[routers]``)."""
        return router_of(self.routers, len(self.resources))

    @property
    def network(self) -> bool:
        """Whether the scenario departs from the tandem of SPEC §3: several routers or
        a class route other than the default (SPEC §3.2)."""
        return bool(self.routers) or any(c.route is not None for c in self.classes)

    @property
    def weights(self) -> np.ndarray:
        """The classes' weights w_k (scenario order)."""
        return np.array([c.weight for c in self.classes], dtype=np.float64)

    @property
    def class_names(self) -> list[str]:
        """The classes' names (scenario order)."""
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
        if shares.size == 0:  # a trace scenario: no classes, so no class loads
            return shares
        per_resource = shares @ self.requirements
        if self.load_axis == "max":
            reference = per_resource.max()
        else:
            reference = per_resource[self.resources.index(self.load_axis)]
        return shares * (load / reference)

    @property
    def fq_resource_index(self) -> int:
        """Index of the resource the ``bottleneck-fq`` policy schedules (SPEC §3.1):
        ``[packet] fq_resource``, by default the last resource (the output link); with
        a list, the first of them."""
        name = self.packet.fq_resource
        if isinstance(name, tuple):
            name = name[0]
        return len(self.resources) - 1 if name is None else self.resources.index(name)

    @property
    def fq_resources(self) -> tuple[int, ...]:
        """The resources bottleneck FQ schedules: ``[packet] fq_resource`` (a name or a
        list of names), else the last resource of every router (its output link; SPEC
        §3.1, §3.2)."""
        if isinstance(self.packet.fq_resource, tuple):
            return tuple(self.resources.index(name) for name in self.packet.fq_resource)
        if self.packet.fq_resource is not None or not self.routers:
            return (self.fq_resource_index,)
        return tuple(max(members) for _, members in self.routers)

    def resource_loads(self, load: float) -> np.ndarray:
        """Load Σ_k ρ_k a_kj of every resource j at a value on the load axis."""
        return self.class_loads(load) @ self.requirements

    def check_load(self, load: float, field_name: str = "load", *,
                   in_file: bool = True) -> None:
        """Raise InputError unless the system is stable (every resource load < 1, eq. 8).
        ``in_file``: the load is the scenario file's (the error names the file), else an
        argument's (``field_name`` its keyword; no file)."""
        source = self.source if in_file else None
        if (isinstance(load, bool | np.bool_) or not isinstance(load, numbers.Real)
                or not (math.isfinite(load) and load > 0)):
            raise InputError(f"load must be a positive number, got {load!r}", field_name,
                             source)
        if load < MIN_LOAD:  # (1e-200: the Markov solver's Poisson equation failed)
            raise InputError(f"load must be >= {MIN_LOAD:g} (no flow would arrive in any "
                             f"run), got {load:g}", field_name, source)
        per_resource = self.resource_loads(load)
        for name, value in zip(self.resources, per_resource, strict=True):
            if value >= STABLE_BELOW:
                raise InputError(
                    f"load {load:g} puts resource '{name}' at {value:.4g} >= 1 (unstable)",
                    field_name, source)

    def to_dict(self) -> dict:
        """The scenario as the plain dict :func:`scenario_from_dict` reads (defaults filled
        in but for a few left out when default: ``[packet] batches`` and ``init``, an
        empty ``[cluster] servers``; packet mixes written out), so
        ``scenario_from_dict(s.to_dict())`` rebuilds ``s``. Results directories store it."""
        if self.cluster.trace:  # a trace scenario: its jobs are the trace's
            return {"name": self.name, "description": self.description,
                    "resources": list(self.resources), "cluster": cluster_dict(self.cluster)}
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
            if c.route is not None:  # absent = the default route
                entry["route"] = [self.resources[j] for j in c.route]
            classes.append(entry)
        return {
            "name": self.name, "description": self.description,
            "resources": list(self.resources), "classes": classes,
            "load": {"axis": self.load_axis, "values": list(self.load_values)},
            "fluid": {**self.fluid.__dict__, "policies": list(self.fluid.policies)},
            "packet": _packet_dict(self.packet),
            # only with a [cluster] section, so older stored scenarios read the same
            **({"cluster": cluster_dict(self.cluster)} if self.cluster.policies else {}),
            **({"routers": {name: [self.resources[j] for j in members]
                            for name, members in self.drawn_routers}}
               if self.drawn_routers else {}),
            **({"flows": [{"name": f.name, "class": f.class_name, "start": f.start,
                           "stop": f.stop, "window": f.window, "rate": f.rate}
                          for f in self.flows],
                "timeline": dict(self.timeline.__dict__)} if self.timeline else {}),
        }

    def with_sizes(self, spec: Any) -> Scenario:
        """A copy with every class's flow-size law replaced by ``spec`` (a ``size`` table
        or a :class:`~mrfq.sizes.SizeLaw`; validated like the file's)."""
        law = parse_size(spec, "size", self.source)
        classes = tuple(replace(c, size=law) for c in self.classes)
        check_packet_budget(self.packet, len(self.resources), "size", None, classes)
        return replace(self, classes=classes)

    def with_overrides(self, **changes: Any) -> Scenario:
        """A copy with packet-section fields replaced (validated like the file's; errors
        name the keyword, ``flows``, which the CLI shows as its option, ``--flows``).
        ``None`` values are ignored."""
        raw = {k: v for k, v in changes.items() if v is not None}
        if not raw:
            return self
        merged = {**self.packet.__dict__, **raw}
        policies = merged["policies"]  # a list, or a string "drfq,pf" / "drfq pf" as the verbs
        merged["policies"] = (policies.replace(",", " ").split() or [""]  # take ("": refused)
                              if isinstance(policies, str) else list(policies))
        try:
            packet = parse_packet(merged, self.source, "keyword")
        except InputError as exc:  # the scenario's batches, against the flows given now
            given = next((key for key in ("flows", "warmup") if key in raw), None)
            if exc.field != "batches" or "batches" in raw or given is None:
                raise
            raise InputError(f"leaves too few flows for the scenario's [packet] batches = "
                             f"{self.packet.batches} ({exc.problem})", given) from None
        check_fq_names(packet, self.resources, "fq_resource", None)
        check_packet_budget(packet, len(self.resources), "mean_size", None, self.classes)
        if "max_replications" in raw and packet.precision is None:
            raise InputError(UNUSED_BUDGET, "max_replications")
        check_window(packet.window, len(self.resources), len(self.classes), "window", None)
        if "init" in raw:  # the policy is checked where it runs (mrfq.kinds.packet.check)
            check_init(packet, self.classes, "init", None, check_policies=False)
        return replace(self, packet=packet)


def size_spec(law: SizeLaw) -> dict:
    """The ``size`` table that :func:`mrfq.sizes.parse_size` reads back into ``law`` (an
    empirical law keeps its file, as an absolute path)."""
    return law.spec()


def _packet_dict(packet: PacketConfig) -> dict:
    """``[packet]`` as a plain dict; ``init`` only when not "empty", so the stored scenario
    of a run without it is what it was before the option existed, and ``batches`` only
    when not the default (a file's ``batches`` must fit its measured flows; the default
    need not, so a run of few flows reads back)."""
    out = {**packet.__dict__, "policies": list(packet.policies)}
    if isinstance(out["fq_resource"], tuple):
        out["fq_resource"] = list(out["fq_resource"])
    if out["init"] == "empty":
        del out["init"]
    if out["batches"] == PacketConfig.batches:
        del out["batches"]
    return out
