"""The sections of a scenario as frozen records: a traffic class (``[[classes]]``), the
fluid settings (``[fluid]``) and the packet settings (``[packet]``).

Plain data with their defaults, nothing else: :mod:`mrfq.scenario.checks` builds them from
a file's tables and validates them; :class:`mrfq.scenario.model.Scenario` holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from mrfq import policies
from mrfq.sizes import SizeLaw, parse_size

#: how a fluid point is computed (:mod:`mrfq.fluid.method`)
FLUID_METHODS = ("auto", "markov", "simulation")
#: how a packet replication starts (``[packet] init``): empty, or with flows in progress
#: drawn from the fluid model's stationary law (:mod:`mrfq.packet.initial`)
PACKET_INITS = ("empty", "fluid")
#: DRFQ's virtual-time rules (``[packet] virtual_time``, :class:`PacketConfig`)
VIRTUAL_TIMES = ("in-service", "started")


class ByValue:
    """``==`` and ``hash`` of a frozen dataclass by its compared fields, arrays by their
    elements (:func:`comparable`): the generated ones ask numpy for one truth value of a
    whole array. Decorate the subclass with ``eq=False``, so these are kept."""

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return comparable(self) == comparable(other)

    def __hash__(self) -> int:
        return hash(comparable(self))


def comparable(value: object) -> object:
    """``value`` as nested tuples that ``==`` and ``hash`` take: a numpy array as (shape,
    its elements), a dict as its sorted items, a dataclass (a size law, a section) as its
    compared fields."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, tuple(value.ravel().tolist()))
    if isinstance(value, (tuple, list)):
        return tuple(comparable(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, comparable(v)) for k, v in value.items()))
    if hasattr(value, "__dataclass_fields__"):
        return (type(value).__name__,) + tuple(
            comparable(getattr(value, f.name)) for f in fields(value) if f.compare)
    return value


@dataclass(frozen=True, eq=False)
class TrafficClass(ByValue):
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
    #: the resources its packets visit, in order (SPEC §3.2); None: the default, the
    #: resources with a nonzero requirement in the scenario's order
    route: tuple[int, ...] | None = None


@dataclass(frozen=True)
class FluidConfig:
    """``[fluid]``: policies (default: the registry's fluid defaults,
    :func:`mrfq.policies.defaults`); ``tolerance`` (relative truncation error of the Markov
    solver); ``method`` (auto, markov or simulation, :mod:`mrfq.fluid.method`); for the
    flow-level simulator ``flows`` per replication, ``replications`` and ``seed``."""

    policies: tuple[str, ...] = policies.defaults(policies.FLUID)
    tolerance: float = 1e-5
    method: str = "auto"
    flows: int = 1_000_000
    replications: int = 10
    seed: int = 1


@dataclass(frozen=True)
class PacketConfig:
    """``[packet]`` (README "Scenario files"): policies (default: the registry's packet
    defaults), m = ``mean_size`` (mean packets per flow), the window W (packets),
    ``flows`` (arrivals per replication), the warm-up (a fraction of the arrivals not
    measured, or "auto"), replications and seed, dovetailing DRFQ's Δ (``delta``), DRFQ's
    virtual-time rule (``virtual_time``: :data:`VIRTUAL_TIMES`),
    ``batches`` per replication, the precision target, bottleneck FQ's resource and how
    a replication starts (``init``)."""

    policies: tuple[str, ...] = policies.defaults(policies.PACKET)
    mean_size: float = 20000.0
    window: int = 30
    flows: int = 100000
    warmup: float | str = "auto"
    replications: int = 1
    seed: int = 1
    #: dovetailing DRFQ's Δ, in time units (a packet's dominant service is 1); None (the
    #: default): one window's worth, W time units (:attr:`dovetail_delta`). On Figure 3
    #: (m = 200, W = 30) every Δ from 0.5 to 50 keeps full dovetailing on SPEC §3's
    #: alternating check and validates against DRF, ∞ fails 20 of 27 points; weights
    #: behind a lightly loaded resource need Δ ≥ 20 at W = 30, and a Δ that grows with W
    #: (60–100 at W = 100; reproduction/dovetail_delta/)
    delta: float | None = None
    #: DRFQ's virtual time V (SPEC §3): "in-service", the largest start tag among the
    #: packets in service (the DRFQ paper's rule), or "started", the largest start tag of
    #: any packet that has begun service (BR's reading, with which BR's Figure 3 was run)
    virtual_time: str = "in-service"
    batches: int = 20
    #: target relative 95% half-width of every class's γ (None: a fixed number of
    #: replications); replications are added until it is reached or ``max_replications``
    precision: float | None = None
    max_replications: int = 1000
    # bottleneck FQ's resource, or resources (None: the last one, the link; in a network
    # the last of every router)
    fq_resource: str | tuple[str, ...] | None = None
    #: "empty" (no flow at t = 0) or "fluid" (flows in progress at t = 0 drawn from the
    #: Markov model's stationary law π of the policy's fluid counterpart; not measured)
    init: str = "empty"

    @property
    def dovetail_delta(self) -> float:
        """Dovetailing DRFQ's Δ in force (time units): ``delta``, or one window's worth
        (W) when it is not given."""
        return float(self.window) if self.delta is None else self.delta


#: laws of a cluster job's number of tasks and of a task's duration (``[cluster]``)
CLUSTER_TASK_LAWS = ("geometric", "fixed")
CLUSTER_DURATION_LAWS = ("exponential", "fixed")


@dataclass(frozen=True)
class ClusterConfig:
    """``[cluster]`` (SPEC §6): the scenario's classes as jobs of tasks on a pooled
    cluster of ``tasks_per_resource`` units of every resource, a class-k task needing a_k
    (so a dominant task holds 1/C of the pool). ``policies`` (default, when the section is
    present: the registry's cluster defaults; no section: none), ``mean_tasks`` E[N]
    (``tasks``: geometric or fixed), ``duration`` d (``duration_law``) — each a number
    for every class or (class name, value) pairs for the classes named, the others
    keeping the default; the laws ``tasks`` (geometric, fixed) and ``duration_law``
    (exponential, fixed) may also be flow-size laws (:class:`~mrfq.sizes.SizeLaw`), one
    for every class or (class name, law) pairs —, ``jobs`` arrivals
    per run, the ``warmup`` fraction not measured, ``batches`` for the intervals,
    ``seed``, and the slot scheduler's ``slots_per_server``. ``servers`` (optional,
    instead of the pool): entries (capacity vector, count, type name) in the resources'
    units, a class-k task then needing a_k · (Σ_l c_l) / C; ``placement``: (class name,
    (server index or type name, ...)) pairs, the servers a class may use (TSF).
    ``max_parallel``: the most tasks one job runs at once — an int for every class, or
    (class name, int) pairs for the classes named; () no cap.
    ``trace`` (a trace scenario: no classes, no load axis): the path of a Google 2011
    ``task_events`` file (resolved against the scenario file's folder), its jobs run on
    ``servers`` (capacities normalised as its requests) once per policy."""

    policies: tuple[str, ...] = ()
    tasks_per_resource: float = 100.0
    mean_tasks: float | tuple = 1000.0
    tasks: str | SizeLaw | tuple = "geometric"
    duration: float | tuple = 1.0
    duration_law: str | SizeLaw | tuple = "exponential"
    jobs: int = 20000
    warmup: float = 0.1
    batches: int = 10
    seed: int = 1
    slots_per_server: int = 14
    servers: tuple = ()
    placement: tuple = ()
    trace: str = ""
    max_parallel: int | tuple = ()
