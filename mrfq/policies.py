"""The one registry of policies: every name a scenario, the CLI, a plot, a sweep or the
allocation lab may use, and what each one does.

A policy is one of three kinds:

* **fluid** — an allocation rule φ(n) of BR §2, whose fluid γ_k comes from its stationary
  law: ``law = MARKOV_LAW`` (the Markov demand model of BR §4.1, solved numerically; exact
  for exponential sizes) or ``law = EXPLICIT_LAW`` (a product-form law written down, as
  balanced fairness's; then ``insensitive``: γ_k depends on the size law only through its
  mean, so the "exact" method holds for every size law). Any fluid policy can also be
  simulated at flow level (:mod:`mrfq.fluid.flowsim`).
* **packet** — a scheduler of the tandem packet engine (SPEC §3) that names the fluid
  policy whose allocation it is meant to realise (``realises``; ``None`` for a baseline
  such as FIFO) and the scenario parameters its rule reads (``parameters``).
* **allocation** — a rule of the static allocation lab (:mod:`mrfq.allocation`), with the
  fluid allocator it uses where it is one (``realises``).
* **cluster** — a task scheduler of the cluster simulator (:mod:`mrfq.cluster`, SPEC §6):
  jobs of tasks on servers, the fluid policy it realises (``realises``; ``None`` for a
  baseline) and the scenario parameters its rule reads.

``code`` is the integer that the kernels of the kind dispatch on (the fluid allocators,
the packet event loop): the kernels read it from here (:func:`codes`), never copy it.
Codes are fixed per entry, not derived from the entries' order, because Numba's on-disk
cache keeps compiled constants and would not see a renumbering.

Adding a policy is one :class:`Policy` entry here plus its rule (a kernel branch for a
packet policy, an allocator for a fluid one, a function for the allocation lab). This
module imports nothing from the rest of mrfq except :mod:`mrfq.errors`, so every layer can
use it, and no other module of mrfq spells a policy name (``tests/test_registry.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import SimpleNamespace

from mrfq.errors import InputError

FLUID, PACKET, ALLOCATION, CLUSTER = "fluid", "packet", "allocation", "cluster"
KINDS = (FLUID, PACKET, ALLOCATION, CLUSTER)

#: how a fluid policy's stationary law is obtained
MARKOV_LAW, EXPLICIT_LAW = "markov", "explicit"

#: known departures of a packet policy from the fluid policy it realises, by the condition
#: on the scenario under which they show (validation names them in its verdict, README)
UNEQUAL_WEIGHTS, UNEQUAL_DOMINANT_SHARES = "unequal-weights", "unequal-dominant-shares"
#: DRFQ and MR3 routers (SPEC §3.2) on a network where some class's route crosses several
#: routers
ROUTES_ACROSS_ROUTERS = "routes-across-routers"
#: a loaded class's packet mix with types of different profiles; with types that skip a
#: resource another of its types uses (a zero requirement there)
MIXED_PROFILES, SKIPPING_TYPES = "mixed-packet-profiles", "packet-types-skipping-resources"
#: a cluster scenario's per-job parallelism caps, which the fluid model does not have; a
#: law of the tasks per job other than its class's flow-size law; task durations drawn
#: from a size law (stragglers)
PARALLELISM_CAPS, JOB_SIZE_LAW, TASK_DURATION_LAW = (
    "parallelism-caps", "job-size-law", "task-duration-law")
#: a cluster scenario's listed servers or placement constraints (the fluid model pools)
SEPARATE_SERVERS = "separate-servers"
LIMITATIONS = {
    UNEQUAL_WEIGHTS: "with unequal class weights, DRFQ's virtual time (one for the "
                     "router, one per resource when dovetailing) resets the flows whose "
                     "tags lag it and they lose their weights (DRFQ itself; docs/models.md, "
                     "DRFQ as its authors defined it)",
    UNEQUAL_DOMINANT_SHARES: "round robin gives every backlogged flow the same weighted "
                             "dominant time, and the DRF shares of some set of these "
                             "classes differ: a flow whose bottleneck the others do not "
                             "saturate is capped (docs/models.md, MR3's reach)",
    ROUTES_ACROSS_ROUTERS: "each router schedules on its own (DRFQ's virtual time, MR3's "
                           "ingress round robin) and charges a packet its dominant time "
                           "over that router's resources only, again at each entry of a "
                           "route that comes back to it, so a class whose route crosses "
                           "several routers does not get network-wide DRF (with one "
                           "resource per router DRFQ is per-resource fair queueing, i.e. "
                           "bmf; which allocation such routers realise is open: "
                           "docs/guide/networks.md)",
    MIXED_PROFILES: "a class's packet mix has types of different profiles, and each "
                    "packet is charged its own dominant time, not its share of the mix's "
                    "mean vector, which the fluid model serves (backlogged, a mix of (1, 0) "
                    "and (0, 1) packets gets 0.31 of each resource under memoryless DRFQ "
                    "and 0.24 under MR3, DRF 0.48; MR3's ingress bound can also leave a "
                    "resource idle: docs/models.md, packet mixes)",
    SKIPPING_TYPES: "a class's packet mix has types with a zero requirement on a resource "
                    "its other types use, so they skip it; with dynamic flows DRFQ then "
                    "serves the class above its DRF rate (measured +6% to +49%; dovetailing "
                    "validates the same mix with 0.01 for 0; docs/models.md, packet mixes)",
    PARALLELISM_CAPS: "the scenario caps the tasks a job runs at once ([cluster] "
                      "max_parallel), which the fluid model does not (docs/guide/clusters.md)",
    SEPARATE_SERVERS: "the scenario lists servers ([cluster] servers) or constrains "
                      "placement ([cluster] placement), while the fluid model pools every "
                      "resource: tasks that must fit on one server, or on some servers "
                      "only, can leave capacity unused (docs/guide/clusters.md)",
    JOB_SIZE_LAW: "a job's number of tasks ([cluster] tasks) does not follow its class's "
                  "flow-size law (geometric tasks for exponential sizes, fixed ones "
                  "for deterministic sizes, a size law for the same size law), so the "
                  "cluster's jobs are not the fluid model's (docs/guide/clusters.md, "
                  "task laws)",
    TASK_DURATION_LAW: "task durations follow a size law ([cluster] duration_law): a job "
                       "waits for its last, longest tasks, which the fluid model, serving "
                       "its work as a fluid, does not (docs/guide/clusters.md, task laws)",
}

#: per-policy parameters a packet policy may read from the scenario's ``[packet]`` table
DELTA, FQ_RESOURCE, VIRTUAL_TIME = "delta", "fq_resource", "virtual_time"
#: the parameter of the cluster's slot scheduler: slots per largest server
SLOTS_PER_SERVER = "slots_per_server"


@dataclass(frozen=True)
class Policy:
    """One registry entry (module doc).

    ``code``: the integer its kind's kernel dispatches on. ``label``: the name in plots
    and tables; ``style``: matplotlib line style of a fluid policy's curves. ``default``:
    in the scenario defaults of its kind (``[fluid] policies``, ``[packet] policies``).
    ``realises``: the fluid policy a packet or allocation policy realises (``None``:
    none). ``law``, ``insensitive``: how a fluid policy's γ is obtained (module doc).
    ``parameters``: the scenario parameters a packet rule reads (:data:`DELTA`,
    :data:`FQ_RESOURCE`, :data:`VIRTUAL_TIME`); they enter its points' keys and nothing
    else's. ``limitations``: the conditions (keys of :data:`LIMITATIONS`) under which a
    packet policy is known to depart from the fluid policy it realises. ``compare``:
    for a fluid policy, the policies it is drawn against in the "X v Y" panels of
    BR Figures 1–2.
    """

    name: str
    kind: str
    code: int
    label: str
    summary: str
    default: bool = False
    realises: str | None = None
    law: str | None = None
    insensitive: bool = False
    parameters: tuple[str, ...] = ()
    style: str = "-"
    compare: tuple[str, ...] = ()
    limitations: tuple[str, ...] = ()

    @property
    def constant(self) -> str:
        """The name as a Python constant (``drfq-dovetail`` → ``DRFQ_DOVETAIL``)."""
        return self.name.upper().replace("-", "_")


_ENTRIES = (
    # fluid allocations (BR §2), the kernels of mrfq.fluid
    Policy("drf", FLUID, 0, "DRF", "dominant resource fairness: progressive filling of "
           "dominant shares (BR §2.2)", default=True, law=MARKOV_LAW, style="--"),
    Policy("pf", FLUID, 1, "PF", "proportional fairness: max Σ w_k n_k log φ_k (BR §2.3)",
           default=True, law=MARKOV_LAW, style=":"),
    Policy("bmf", FLUID, 2, "BMF", "bottleneck max fairness (BR §2.4)", default=True,
           law=MARKOV_LAW, style="-", compare=("drf", "pf")),
    Policy("bf", FLUID, 3, "BF", "balanced fairness: φ_k = Φ(n − e_k)/(n_k Φ(n)) "
           "(Bonald & Proutière); insensitive; no packet scheduler", law=EXPLICIT_LAW,
           insensitive=True, style="-."),
    # packet schedulers (SPEC §3), the event loop of mrfq.packet.kernel
    Policy("drfq", PACKET, 0, "DRFQ", "memoryless DRFQ: one start tag per packet charged "
           "its dominant time (Ghodsi et al. 2012; BR eq. 2)", default=True,
           realises="drf", parameters=(VIRTUAL_TIME,),
           limitations=(UNEQUAL_WEIGHTS, ROUTES_ACROSS_ROUTERS, MIXED_PROFILES,
                        SKIPPING_TYPES)),
    Policy("drfq-dovetail", PACKET, 1, "DRFQ (dovetail)", "dovetailing DRFQ: per-resource "
           "tags, one key, Δ-bounded (Ghodsi et al. 2012)", realises="drf",
           parameters=(DELTA, VIRTUAL_TIME),
           limitations=(UNEQUAL_WEIGHTS, ROUTES_ACROSS_ROUTERS, SKIPPING_TYPES)),
    Policy("pf", PACKET, 2, "PF", "SFQ at every resource with tags divided by the flow's "
           "queue length (BR eq. 5)", default=True, realises="pf"),
    Policy("bmf", PACKET, 3, "BMF", "time-fair SFQ at every resource, i.e. per-resource "
           "fair queueing (BR eq. 7)", default=True, realises="bmf"),
    Policy("fifo", PACKET, 4, "FIFO", "first come first served at every resource: no "
           "isolation, the no-scheduler baseline"),
    Policy("bottleneck-fq", PACKET, 5, "bottleneck FQ", "time-fair SFQ on one resource "
           "(fq_resource, default the last resource; in a network the last of every "
           "router), FIFO elsewhere",
           parameters=(FQ_RESOURCE,)),
    Policy("mr3", PACKET, 6, "MR3", "multi-resource round robin: elastic round robin on "
           "dominant processing times at the ingress, FIFO inside (Wang, Li, Liang 2013)",
           realises="drf",
           limitations=(UNEQUAL_DOMINANT_SHARES, ROUTES_ACROSS_ROUTERS, MIXED_PROFILES)),
    # the static allocation lab (mrfq.allocation.policies.POLICIES holds their functions)
    Policy("drf", ALLOCATION, 0, "DRF", "pooled DRF: max-min of dominant shares "
           "(Ghodsi et al. NSDI'11)", default=True),
    Policy("drf-online", ALLOCATION, 1, "online DRF", "a task at a time to the user with "
           "the smallest dominant share (DRF slides, Mesos)", default=True),
    Policy("asset", ALLOCATION, 2, "asset fairness", "max-min of Σ_r d_ir / C_r per task",
           default=True),
    Policy("ceei", ALLOCATION, 3, "CEEI", "competitive equilibrium from equal incomes: "
           "max Σ w_i log tasks_i (Eisenberg–Gale)", default=True, realises="pf"),
    Policy("pf", ALLOCATION, 4, "PF", "the fluid PF allocation, capped by the tasks a user "
           "has", default=True, realises="pf"),
    Policy("bmf", ALLOCATION, 5, "BMF", "the fluid BMF allocation, capped by the tasks a "
           "user has", default=True, realises="bmf"),
    Policy("drfh", ALLOCATION, 6, "DRFH", "max-min of global dominant shares over "
           "heterogeneous servers (Wang et al.)", default=True),
    Policy("drfh-first-fit", ALLOCATION, 7, "DRFH First-Fit", "DRFH's First-Fit "
           "heuristic: the first server a task fits", default=True),
    Policy("drfh-best-fit", ALLOCATION, 8, "DRFH Best-Fit", "DRFH's Best-Fit heuristic: "
           "the server whose free capacity is most like the demand (eq. 9)", default=True),
    Policy("per-server-drf", ALLOCATION, 9, "per-server DRF", "DRF on every server "
           "separately (DRFH's naive baseline)", default=True),
    Policy("tsf", ALLOCATION, 10, "TSF", "task share fairness with placement constraints "
           "(Wang et al.)", default=True),
    Policy("ibaa", ALLOCATION, 11, "IBAA", "the IBAA paper's bottleneck-aware LP "
           "(two resources)", default=True),
    # cluster task schedulers (SPEC §6), the event loop of mrfq.cluster.kernel
    Policy("drf", CLUSTER, 0, "DRF", "most deprived job: largest gap between the fluid DRF "
           "dominant share and the job's (BR §3.1)", default=True, realises="drf"),
    Policy("pf", CLUSTER, 1, "PF", "most deprived job with respect to the fluid PF "
           "allocation (BR §3.2)", default=True, realises="pf"),
    Policy("bmf", CLUSTER, 2, "BMF", "largest minimum rank on a bottleneck resource "
           "(BR §3.3)", default=True, realises="bmf"),
    Policy("fifo", CLUSTER, 3, "FIFO", "first job first (backfilling jobs whose task "
           "fits)"),
    Policy("drf-online", CLUSTER, 4, "online DRF", "the job with the smallest dominant "
           "share (DRF slides; on servers the same launches as drfh-first-fit)",
           realises="drf"),
    Policy("drfh-first-fit", CLUSTER, 5, "DRFH First-Fit", "lowest global dominant share, "
           "first server that fits (DRFH §V-B)"),
    Policy("drfh-best-fit", CLUSTER, 6, "DRFH Best-Fit", "lowest global dominant share, "
           "server minimising DRFH eq. (9)"),
    Policy("slots", CLUSTER, 7, "slots", "Hadoop-style slots (largest server / k), fair "
           "in slots held", parameters=(SLOTS_PER_SERVER,)),
    Policy("tsf", CLUSTER, 8, "TSF", "lowest task share: tasks running over the tasks "
           "the job could run alone on the whole cluster (Wang et al. SC'16); honours "
           "placement constraints, as every cluster scheduler does"),
)

REGISTRY: dict[tuple[str, str], Policy] = {(p.kind, p.name): p for p in _ENTRIES}


def entries(kind: str) -> tuple[Policy, ...]:
    """The entries of one kind, in registry order."""
    return tuple(p for p in _ENTRIES if p.kind == kind)


def names(kind: str) -> tuple[str, ...]:
    """Policy names of one kind, in registry order."""
    return tuple(p.name for p in entries(kind))


def defaults(kind: str) -> tuple[str, ...]:
    """The default policy list of a kind (``default=True`` entries, registry order)."""
    return tuple(p.name for p in entries(kind) if p.default)


def readers(parameter: str) -> tuple[str, ...]:
    """The packet policies whose rule reads a ``[packet]`` parameter (e.g. :data:`DELTA`)."""
    return tuple(p.name for p in entries(PACKET) if parameter in p.parameters)


def get(kind: str, name: str, field: str | None = "policy", source: str | None = None
        ) -> Policy:
    """The entry of a policy name (case-insensitive); InputError naming the choices (and
    the closest one, for a misspelling)."""
    key = (kind, str(name).lower())
    if key not in REGISTRY:
        import difflib  # only on the error path

        close = difflib.get_close_matches(key[1], names(kind), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise InputError(f"unknown policy '{name}' (the {kind} policies are "
                         f"{', '.join(names(kind))}{hint})", field, source)
    return REGISTRY[key]


def codes(kind: str) -> SimpleNamespace:
    """The dispatch codes of a kind as constants, e.g. ``codes(PACKET).DRFQ_DOVETAIL``:
    what a kernel module binds at import (the registry is the only place they are
    written)."""
    return SimpleNamespace(**{p.constant: p.code for p in entries(kind)})


def named(kind: str) -> SimpleNamespace:
    """The names of a kind as constants, e.g. ``named(FLUID).PF == "pf"``: how the rest
    of mrfq refers to one particular policy without spelling its name."""
    return SimpleNamespace(**{p.constant: p.name for p in entries(kind)})


def fluid_counterpart(packet_policy: str) -> str | None:
    """The fluid policy a packet policy realises (``None``: it has none)."""
    return get(PACKET, packet_policy).realises


def label(name: str) -> str:
    """Display label of a policy name of either kind (the name itself if unknown)."""
    for kind in (PACKET, FLUID):
        if (kind, name) in REGISTRY:
            return REGISTRY[(kind, name)].label
    return name


def comparison_panels(available: Iterable[str]) -> list[tuple[str, str]]:
    """The "X v Y" panels of BR Figures 1–2 (fluid ``compare`` entries) whose two
    policies are both in ``available``."""
    have = set(available)
    return [(p.name, other) for p in entries(FLUID) if p.name in have
            for other in p.compare if other in have]
