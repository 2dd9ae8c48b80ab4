"""Plain-array description of a scenario's packet model, and its arrival streams."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mrfq import intervals, seeds
from mrfq.arrivals import PoissonArrivals
from mrfq.counts import mean_count, packet_counts
from mrfq.scenario import Scenario
from mrfq.sizes import SizeLaw

#: flows generated per block; fixed so the stream does not depend on how it is consumed
ARRIVAL_BLOCK = 4096


@dataclass(frozen=True)
class PacketModel:
    """Packet types of all classes as arrays (the kernel's model constants).

    ``service[p, j]``: processing time of packet type p at resource j (time unit: one
    dominant packet service of the class's mean vector, SPEC §4). Types are numbered over
    all classes, class k's from ``type_start[k]``. ``class_weight[k]`` divides every tag
    increment of class k's flows (weighted SFQ, SPEC §3).
    """

    service: np.ndarray
    next_resource: np.ndarray
    first_resource: np.ndarray
    type_start: np.ndarray
    type_count: np.ndarray
    type_cdf: np.ndarray
    class_cycle: np.ndarray
    class_rtt: np.ndarray
    class_weight: np.ndarray
    #: [j]: router of resource j (SPEC §3.2; all 0 for the tandem)
    router: np.ndarray | None = None

    @property
    def n_routers(self) -> int:
        """Number of routers (1: the tandem)."""
        return 1 if self.router is None else int(self.router.max()) + 1

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> PacketModel:
        """The packet model of a scenario: every class's packet types (service time per
        resource, the mix's cumulative probabilities), each type's route as first and next
        resources (SPEC §3.2; a resource where the type takes no time is skipped), per
        class whether its mix cycles, its RTT and weight, and each resource's router."""
        rows, cdf, start, count = [], [], [], []
        for c in scenario.classes:
            start.append(len(rows))
            count.append(len(c.packet_requirements))
            rows.extend(c.packet_requirements)
            cdf.extend(np.cumsum(c.packet_probabilities))
        service = np.array(rows, dtype=np.float64)
        P, J = service.shape
        next_resource = np.full((P, J), -1, dtype=np.int64)
        first_resource = np.full(P, -1, dtype=np.int64)
        # a packet visits its class's route (SPEC §3.2), skipping resources where its own
        # processing time is 0 (a packet mix's type); the default route is the resources
        # in index order, today's tandem
        routes = scenario.routes
        owner = np.repeat(np.arange(len(start)), count)
        for p in range(P):
            used = [j for j in routes[owner[p]] if service[p, j] > 0]
            first_resource[p] = used[0]
            for a, b in zip(used[:-1], used[1:], strict=True):
                next_resource[p, a] = b
        return cls(
            service=service,
            next_resource=next_resource,
            first_resource=first_resource,
            type_start=np.array(start, dtype=np.int64),
            type_count=np.array(count, dtype=np.int64),
            type_cdf=np.array(cdf, dtype=np.float64),
            class_cycle=np.array([c.packet_order == "cycle" for c in scenario.classes]),
            class_rtt=np.array([c.rtt for c in scenario.classes], dtype=np.float64),
            class_weight=np.array([c.weight for c in scenario.classes], dtype=np.float64),
            router=scenario.router_index,
        )


def flow_rates(class_loads: np.ndarray, mean_size: float,
               laws: list[SizeLaw] | None = None) -> np.ndarray:
    """Flow arrival rates λ_k = ρ_k / E[N_k] per time unit: E[N_k] = m for exponential
    sizes (``laws`` None: every class), else the exact mean of the packets its law gives
    (:func:`mrfq.counts.mean_count`; not m E[X] for small m), so that every class offers
    exactly its load ρ_k."""
    rates = np.asarray(class_loads, dtype=np.float64) / mean_size
    for k, law in enumerate(laws or ()):
        if law.distribution != "exponential":
            rates[k] = class_loads[k] / mean_count(law, mean_size)
    return rates


def relaxation_flows(scenario: Scenario, load: float) -> float:
    """Flow arrivals (all classes) in one relaxation time of the busiest resource at
    ``load``: (Λ / Λ*) ρ*/(1 − √ρ*)², :func:`mrfq.intervals.relaxation_flows` with Λ / Λ*
    from the flow rates (:func:`flow_rates`: classes' mean sizes may differ). 342 at load
    0.9 of Figure 3, 6 at 0.5. The warm-up of ``warmup = "auto"`` and the advisor's pilot
    length both count in these."""
    rho = scenario.class_loads(load)
    return intervals.relaxation_flows(rho, scenario.requirements, flow_rates(
        rho, scenario.packet.mean_size, scenario.size_laws))


class ArrivalStream:
    """Poisson flow arrivals (superposed classes), sizes in packets of mean ``mean_size``.

    Three independent PCG64 streams (inter-arrival, class, size) spawned from ``seed_seq``,
    consumed in fixed blocks, so the sequence depends only on the seed. Inter-arrival
    times are standard exponentials divided by the total flow rate Λ = Σ_k λ_k, λ_k =
    ρ_k / E[N_k] (E[N_k] = m for exponential sizes; for another law the exact mean of its
    packet counts, :func:`mrfq.counts.mean_count`, which differs from m E[X_k] by O(1)),
    so every class offers exactly its load ρ_k and all loads share the same underlying
    draws (common random numbers).

    Sizes: a geometric draw of mean m for every flow of the block (exactly the stream of
    an all-exponential scenario, ``laws=None``); a class with another law (``laws[k]``, a
    :class:`~mrfq.sizes.SizeLaw`) then replaces its flows' sizes by N = 1 + ⌊x / θ⌋
    packets of works x drawn from its own stream (:func:`mrfq.counts.packet_counts`), so
    exponential classes keep their sizes whatever the other classes' laws.
    """

    def __init__(self, seed_seq: np.random.SeedSequence, class_loads: np.ndarray,
                 mean_size: float, laws: list[SizeLaw] | None = None):
        # derived, not spawn()ed (seeds.stream): spawn() mutates seed_seq, so a second user
        # would differ; tags PACKET_ARRIVALS + 0, 1, 2 and + 10 + k
        tag = seeds.PACKET_ARRIVALS
        gaps, classes, self._sizes = (seeds.stream(seed_seq, tag + i) for i in range(3))
        rates = flow_rates(class_loads, mean_size, laws)
        # classes whose law is not exponential: (class, law, its own size stream)
        self._other = [(k, law, seeds.stream(seed_seq, tag + 10 + k))
                       for k, law in enumerate(laws or ()) if law.distribution != "exponential"]
        self._poisson = PoissonArrivals(gaps, classes, rates, ARRIVAL_BLOCK)
        self.total_rate = self._poisson.total_rate
        self._p = 1.0 / mean_size
        self._mean_size = mean_size

    def next_block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next :data:`ARRIVAL_BLOCK` flows: arrival times (increasing, after the last
        block's; dominant packet services, SPEC §4), classes and sizes (packets, ≥ 1)."""
        times, classes = self._poisson.times_and_classes()
        sizes = self._sizes.geometric(self._p, ARRIVAL_BLOCK).astype(np.int64)
        for k, law, rng in self._other:
            mine = classes == k
            sizes[mine] = packet_counts(law.sample(rng, int(mine.sum())), self._mean_size)
        return times, classes, sizes
