"""The one registry of policies: every name a scenario, the CLI, a plot or a sweep may use.

A policy is either **fluid** (an allocation rule φ(n) of BR §2, solved exactly by the
allocators and the Markov model) or **packet** (a scheduler in the tandem packet engine of
SPEC §3). A packet policy names the fluid policy whose allocation it is meant to realise
(``realises``), or ``None`` when it has no fluid counterpart (a baseline such as FIFO);
validation compares a packet point only with that counterpart.

Adding a policy is one :class:`Policy` entry here plus its rule (a kernel branch for a
packet policy, an allocator for a fluid one). This module imports nothing from the rest of
mrfq except :mod:`mrfq.errors`, so every layer can use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mrfq.errors import InputError

FLUID, PACKET = "fluid", "packet"


@dataclass(frozen=True)
class Policy:
    """One registry entry.

    ``code``: the integer the kernel of its kind dispatches on (fluid kernels for fluid
    policies, the packet event loop for packet policies). ``realises``: for a packet
    policy, the fluid policy it approximates (``None``: no fluid counterpart). ``label``:
    the name in plots and tables. ``style``: matplotlib line style of a fluid policy.
    """

    name: str
    kind: str
    code: int
    label: str
    summary: str
    realises: str | None = None
    style: str = "-"


_ENTRIES = (
    Policy("drf", FLUID, 0, "DRF", "dominant resource fairness: progressive filling of "
           "dominant shares (BR §2.2)", style="--"),
    Policy("pf", FLUID, 1, "PF", "proportional fairness: max Σ w_k n_k log φ_k (BR §2.3)",
           style=":"),
    Policy("bmf", FLUID, 2, "BMF", "bottleneck max fairness (BR §2.4)", style="-"),
    Policy("bf", FLUID, 3, "BF", "balanced fairness: φ_k = Φ(n − e_k)/(n_k Φ(n)) "
           "(Bonald & Proutière); insensitive; no packet scheduler", style="-."),
    Policy("drfq", PACKET, 0, "DRFQ", "memoryless DRFQ: one start tag per packet charged "
           "its dominant time (Ghodsi et al. 2012; BR eq. 2)", realises="drf"),
    Policy("drfq-dovetail", PACKET, 1, "DRFQ (dovetail)", "dovetailing DRFQ: per-resource "
           "tags, one key, Δ-bounded (Ghodsi et al. 2012)", realises="drf"),
    Policy("pf", PACKET, 2, "PF", "SFQ at every resource with tags divided by the flow's "
           "queue length (BR eq. 5)", realises="pf"),
    Policy("bmf", PACKET, 3, "BMF", "time-fair SFQ at every resource, i.e. per-resource "
           "fair queueing (BR eq. 7)", realises="bmf"),
    Policy("fifo", PACKET, 4, "FIFO", "first come first served at every resource: no "
           "isolation, the no-scheduler baseline (SPEC §3.1)"),
    Policy("bottleneck-fq", PACKET, 5, "bottleneck FQ", "time-fair SFQ on one resource "
           "(fq_resource, default the link), FIFO elsewhere (SPEC §3.1)"),
    Policy("mr3", PACKET, 6, "MR3", "multi-resource round robin: elastic round robin on "
           "dominant processing times at the ingress, FIFO inside (Wang, Li, Liang 2013)",
           realises="drf"),
)

REGISTRY: dict[tuple[str, str], Policy] = {(p.kind, p.name): p for p in _ENTRIES}


def names(kind: str) -> tuple[str, ...]:
    """Policy names of one kind, in registry order."""
    return tuple(p.name for p in REGISTRY.values() if p.kind == kind)


def get(kind: str, name: str, field: str | None = "policy", source: str | None = None
        ) -> Policy:
    """The entry of a policy name (case-insensitive); InputError naming the choices."""
    key = (kind, str(name).lower())
    if key not in REGISTRY:
        raise InputError(f"unknown policy '{name}' (the {kind} policies are "
                         f"{', '.join(names(kind))})", field, source)
    return REGISTRY[key]


def fluid_counterpart(packet_policy: str) -> str | None:
    """The fluid policy a packet policy realises (``None``: it has none)."""
    return get(PACKET, packet_policy).realises


def label(name: str) -> str:
    """Display label of a policy name of either kind (the name itself if unknown)."""
    for kind in (PACKET, FLUID):
        if (kind, name) in REGISTRY:
            return REGISTRY[(kind, name)].label
    return name
