"""Python driver of the packet kernel: allocate state, feed arrivals, run in chunks.

``run_replication`` is one independent run; a packet point (:mod:`mrfq.kinds.packet`)
adds its statistics, and :func:`mrfq.simulate` replications and overrides.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fields import count_text
from mrfq.packet import kernel
from mrfq.packet.model import ARRIVAL_BLOCK, ArrivalStream, PacketModel
from mrfq.scenario import VIRTUAL_TIMES, limits
from mrfq.sizes import SizeLaw

#: events per kernel call between returns to Python (progress, Ctrl-C)
CHUNK_EVENTS = 20_000_000
INITIAL_CAPACITY = limits.PACKET_SLOTS  # (the window's bound counts them)
#: most flows of one replication: every flow's packets arrive at a resource at least once,
#: and the kernel numbers at most MAX_SEQ = 2^43 ≈ 8.8e12 such arrivals per replication
MAX_FLOWS = kernel.MAX_SEQ
#: bytes the engine holds per flow at least: arrival time, class, size and completion time
#: (8 B each), and the copies of the first three that it returns
BYTES_PER_FLOW = 56

_VIOLATIONS = {
    kernel.BAD_CONSERVATION: "packet conservation per flow",
    kernel.BAD_WINDOW: "window exceeded",
    kernel.BAD_IDLE: "a resource idle while it has queued packets",
    kernel.BAD_TAG_ORDER: "a flow's packets served out of order (or PF/BMF tags decreasing)",
    kernel.BAD_UTILISATION: "utilisation above 1",
}


def debug_enabled() -> bool:
    """Invariant checks after every event when MRFQ_DEBUG is set to a non-empty, non-0 value."""
    return os.environ.get("MRFQ_DEBUG", "") not in ("", "0")


def _flat_model(model: PacketModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model arrays in the kernel's flat layout: service and next_resource at
    [p·J + j], and type_charge[p] = max_j service / w (memoryless weighted DRFQ's charge,
    BR eq. 2; w the weight of type p's class)."""
    type_weight = np.repeat(model.class_weight, model.type_count)
    return (np.ascontiguousarray(model.service).ravel(),
            np.ascontiguousarray(model.next_resource).ravel(),
            model.service.max(axis=1) / type_weight)


def router_charges(model: PacketModel) -> np.ndarray:
    """[p·R + r]: memoryless DRFQ's charge of packet type p in router r, max over r's
    resources of service / w (SPEC §3.2; with one router, ``type_charge``)."""
    type_weight = np.repeat(model.class_weight, model.type_count)
    router = np.zeros(model.service.shape[1], np.int64) if model.router is None else (
        model.router)
    R = int(router.max()) + 1
    out = np.zeros((model.service.shape[0], R))
    for r in range(R):
        out[:, r] = model.service[:, router == r].max(axis=1) / type_weight
    return out.ravel()


def needs_network_loop(routers: int, fq_mask: np.ndarray) -> bool:
    """Whether a run uses the kernel's network loops: several routers (DRFQ per router,
    and a tournament of completions instead of scans over every resource), or
    bottleneck FQ on several resources. A tandem, with routes or not, uses the tandem
    loops (a route is a next-resource table, which they follow)."""
    return routers > 1 or int(fq_mask.sum()) > 1


def default_inflight(resources: int) -> int:
    """MR3's ingress bound L for J resources: 2J packets inside the tandem (one in service
    and one waiting at every resource; SPEC §3.1 leaves L open). On several routers,
    router r's ingress bound L_r is this for r's J_r resources (SPEC §3.2)."""
    return 2 * resources


def ingress_limits(model: PacketModel, inflight: int | None) -> np.ndarray:
    """MR3 on several routers: every router's ingress bound L_r, ``inflight`` if given,
    else :func:`default_inflight` of the router's number of resources."""
    router = (np.zeros(model.service.shape[1], np.int64) if model.router is None
              else model.router)
    return np.array([default_inflight(int(np.sum(router == r))) if inflight is None
                     else int(inflight) for r in range(model.n_routers)], np.int64)


def sojourn_bin_edges() -> np.ndarray:
    """Edges of the kernel's per-packet sojourn histogram (time units), length
    SOJOURN_BINS + 1: bin i covers [edges[i], edges[i+1]) with, for octave
    e = i // SOJOURN_SUB + SOJOURN_EMIN and part p = i % SOJOURN_SUB, the lower edge
    (1/2 + p / (2·SOJOURN_SUB)) · 2^e (:func:`mrfq.packet.kernel.sojourn_bin`), so a bin's
    width is at most 1/SOJOURN_SUB of its lower edge. (The first and last bins also hold
    what falls below or above the range.)"""
    i = np.arange(kernel.SOJOURN_BINS + 1)
    octave = i // kernel.SOJOURN_SUB + kernel.SOJOURN_EMIN
    part = i % kernel.SOJOURN_SUB
    return (0.5 + part / (2.0 * kernel.SOJOURN_SUB)) * np.exp2(octave.astype(np.float64))


def _physical_memory() -> int:
    """Bytes of physical memory of this machine (0 where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not POSIX, or the names are unknown
        return 0


def check_flows(flows: int, field: str = "flows") -> None:
    """Refuse ``flows`` flows in one replication beyond :data:`MAX_FLOWS`, or whose records
    (:data:`BYTES_PER_FLOW` each) exceed this machine's physical memory: such a run drew
    arrivals until memory ran out. The error names ``field`` (the CLI shows its option)."""
    if flows > MAX_FLOWS:
        raise InputError(f"must be <= {count_text(MAX_FLOWS)} (2^43, the engine's limit per "
                         f"replication), got {count_text(flows)}", field)
    memory = _physical_memory()
    if memory and flows * BYTES_PER_FLOW > memory:
        raise InputError(f"{count_text(flows)} flows need "
                         f"{flows * BYTES_PER_FLOW / 2**30:.3g} GiB for their records alone, "
                         f"more than this machine's {memory / 2**30:.3g} GiB: fewer flows "
                         "per replication", field)


class _ArrivalRecords:
    """The arrivals drawn so far by arrival index (time, class, size in packets) in arrays
    with spare capacity that grow by 1/4: each arrival is copied O(1) times in all (not at
    every append, which was quadratic in the flows), with less spare memory than doubling."""

    def __init__(self, capacity: int):
        self.time = np.empty(capacity)
        self.flow_class = np.empty(capacity, np.int64)
        self.size = np.empty(capacity, np.int64)
        self.n = 0

    def append(self, block: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        end = self.n + len(block[0])
        names = ("time", "flow_class", "size")
        if end > self.time.shape[0]:
            for name in names:
                old = getattr(self, name)
                new = np.empty(max(end, old.shape[0] + old.shape[0] // 4), old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)
        for name, part in zip(names, block, strict=True):
            getattr(self, name)[self.n: end] = part
        self.n = end

    def views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The arrivals drawn (views, not copies)."""
        return self.time[: self.n], self.flow_class[: self.n], self.size[: self.n]


class InvariantError(AssertionError):
    """Raised in debug mode when the engine breaks one of its invariants."""


@dataclass
class Replication:
    """Per-flow records of one replication (flows with arrival index < ``flows``).

    Times in service-time units. ``completion`` is when the flow's last packet left.
    """

    arrival: np.ndarray
    completion: np.ndarray
    flow_class: np.ndarray
    size: np.ndarray
    services: int
    events: int
    end_time: float
    wall_s: float
    #: [k, j, b]: time resource j spent serving class k in interval b (if recorded)
    timeline: np.ndarray | None = None
    #: [k]: open-loop packets dropped because the flow's window was full
    dropped: np.ndarray | None = None
    #: [bucket, k, bin]: departed packets of the measured flows (int64) by sojourn time
    #: (router entry to last departure; bins :func:`mrfq.packet.kernel.sojourn_bin`), the
    #: measured flows split by arrival order into SOJOURN_BUCKETS buckets (their rank ·
    #: buckets // flows; flows of a steady-state start are not counted)
    sojourn_hist: np.ndarray | None = None
    #: [bucket, k]: total sojourn time of those packets
    sojourn_sum: np.ndarray | None = None
    #: [bucket]: arrival time of the bucket's first flow; [bucket, j]: the time resource j
    #: was busy before it; [j]: the time it was busy by ``end_time`` (utilisation =
    #: difference of busy time / difference of time)
    bucket_time: np.ndarray | None = None
    bucket_work: np.ndarray | None = None
    work: np.ndarray | None = None
    #: completion times of the ``initial`` flows (in the order given; not measured)
    initial_completion: np.ndarray | None = None


class _State:
    """All arrays of the kernel state (layout in :mod:`mrfq.packet.kernel`); the flow-slot
    arrays grow by doubling."""

    def __init__(self, model: PacketModel, window: int, capacity: int,
                 ingress_limits: np.ndarray | None = None):
        J = model.service.shape[1]
        K = model.type_start.shape[0]
        self.window = window
        self.J, self.K = J, K
        # MR3 on several routers: one ingress per router, router r's bound L_r
        R = 0 if ingress_limits is None else len(ingress_limits)
        layout = kernel.record_layout(J, window, R)
        self.ni, self.nf = int(layout.ni), int(layout.nf)
        self.istate = np.zeros(kernel.N_ISTATE + kernel.IN_SIZE * R, dtype=np.int64)
        self.istate[[kernel.I_RR_HEAD, kernel.I_RR_TAIL, kernel.I_RR_END]] = -1
        for r in range(R):
            at = kernel.N_ISTATE + kernel.IN_SIZE * r
            self.istate[[at + kernel.IN_HEAD, at + kernel.IN_TAIL, at + kernel.IN_END]] = -1
            self.istate[at + kernel.IN_LIMIT] = ingress_limits[r]
        self.fstate = np.zeros(kernel.N_FSTATE + kernel.FN_SIZE * R)
        self.res_i = np.zeros(4 * J, dtype=np.int64)
        self.res_f = np.zeros(5 * J)
        self.res_f[:J] = np.inf  # idle
        self.pend_head = np.zeros(K, dtype=np.int64)
        self.pend_len = np.zeros(K, dtype=np.int64)
        # networks' tournament of completion times (kernel.State, kernel._tree_set):
        # 2P nodes for P ≥ J leaves, all idle (∞); P ≥ FLAT_EVENTS (leaves only)
        P = max(1 << max(J - 1, 0).bit_length(), kernel.FLAT_EVENTS)
        self.ev_key = np.full(2 * P, np.inf)
        self.ev_id = np.zeros(2 * P, dtype=np.int64)
        self.capacity = 0
        self._allocate(capacity)

    def _allocate(self, C: int) -> None:
        if C > kernel.MAX_SLOTS:
            raise InputError(f"more than {kernel.MAX_SLOTS} flows in progress at once (the "
                             "engine's limit): the load is too close to 1 for this run", "load")
        old = self.capacity

        def grown(name: str, size: int, dtype) -> np.ndarray:
            fresh = np.zeros(size, dtype)
            if old:
                current = getattr(self, name)
                fresh[: current.shape[0]] = current
            return fresh

        # slot records are contiguous and heap entry i of resource j is at i·J + j, so
        # growing keeps every index valid
        self.flow_i = grown("flow_i", C * self.ni, np.int64)
        self.flow_f = grown("flow_f", C * self.nf, np.float64)
        self.heap_key = grown("heap_key", C * self.J, np.float64)
        self.heap_id = grown("heap_id", C * self.J, np.int64)
        self.in_use = np.zeros(C, np.bool_)
        # free slot stack: previously free ones stay, new slots are pushed below them
        free = np.zeros(C, np.int64)
        top = self.istate[kernel.I_FREE_TOP]
        new_slots = np.arange(C - 1, old - 1, -1, dtype=np.int64)
        free[: len(new_slots)] = new_slots
        if old:
            free[len(new_slots): len(new_slots) + top] = self.free_slots[:top]
        self.free_slots = free
        self.istate[kernel.I_FREE_TOP] = top + len(new_slots)
        # round-trip rings (k·cap + position) hold at most C·W packets; unrolled on growth
        cap = C * self.window
        pend_time = np.zeros(self.K * cap)
        pend_slot = np.zeros(self.K * cap, np.int64)
        for k in range(self.K if old else 0):
            n = self.pend_len[k]
            old_cap = old * self.window
            idx = k * old_cap + (self.pend_head[k] + np.arange(n)) % old_cap
            pend_time[k * cap: k * cap + n] = self.pend_time[idx]
            pend_slot[k * cap: k * cap + n] = self.pend_slot[idx]
            self.pend_head[k] = 0
        self.pend_time, self.pend_slot = pend_time, pend_slot
        self.capacity = C

    def grow(self) -> None:
        self._allocate(2 * self.capacity)

    def arrays(self) -> kernel.State:
        """The state as the kernel takes it (the arrays themselves, not copies)."""
        return kernel.State(*(getattr(self, name) for name in kernel.State._fields))


def _in_service(virtual_time: str) -> bool:
    """Whether DRFQ's virtual time is the in-service rule (``VIRTUAL_TIMES[0]``)."""
    if virtual_time not in VIRTUAL_TIMES:
        raise InputError(f"must be one of {', '.join(VIRTUAL_TIMES)}, got {virtual_time!r}",
                         "virtual_time")
    return virtual_time == VIRTUAL_TIMES[0]


def run_replication(model: PacketModel, policy: str, class_loads: np.ndarray,
                    seed_seq: np.random.SeedSequence, *, flows: int, mean_size: float,
                    window: int, delta: float | None = None, virtual_time: str = "in-service",
                    fq_resource: int | tuple[int, ...] = -1,
                    inflight: int | None = None, class_window: ArrayLike | None = None,
                    class_period: ArrayLike | None = None, class_stop: ArrayLike | None = None,
                    interval: float = 0.0, bins: int = 0, debug: bool | None = None,
                    lone_flow: bool = True, progress: Callable[[int, int], None] | None = None,
                    arrivals: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                    size_laws: list[SizeLaw] | None = None,
                    initial: tuple[np.ndarray, np.ndarray] | None = None) -> Replication:
    """Simulate until every flow with arrival index < ``flows`` has completed (SPEC §3).

    ``arrivals`` = (times, class indices, sizes in packets) replaces the Poisson stream by
    an explicit trace (no arrivals after it). ``size_laws``: the flow-size law of every
    class (``None``: all exponential, i.e. geometric in packets;
    :class:`~mrfq.packet.model.ArrivalStream`). ``fq_resource``: the resource bottleneck FQ
    schedules (−1: the last one, the link), or a tuple of them (one per router, SPEC
    §3.2). Routes and routers come with ``model`` (SPEC §3.2; MR3 on several routers: one
    ingress per router, :mod:`mrfq.packet.kernel`). ``virtual_time``: DRFQ's virtual time,
    "in-service" (the largest start tag among the packets in service, the DRFQ paper's
    rule) or "started" (the largest start tag of any packet that has begun service, BR's
    reading; SPEC §3). ``inflight``: MR3 releases packets at the
    ingress while fewer than this many are inside the tandem (default
    :func:`default_inflight`); on several routers, every router's ingress while fewer
    than this many are inside that router (default :func:`ingress_limits`).

    Explicit flows (one class each, :mod:`mrfq.packet.flows`): ``class_window[k]``
    (default ``window``), ``class_period[k]`` > 0 makes class k open loop (a packet offered
    every period from the flow's arrival until its size is offered; dropped when the flow
    already has its window in the router), ``class_stop[k]``: no injection at a departure
    at or after that time. ``interval`` > 0 records in ``timeline[k, j, b]`` the time
    resource j spent serving class k in [b·interval, (b+1)·interval), b < ``bins`` (split
    over the intervals a service spans). These runs do not use the lone-flow loop.
    ``progress(completed, flows)`` is called between kernel chunks. ``lone_flow=False`` runs
    every event through the general loop (the lone-flow loop of :mod:`mrfq.packet.kernel`
    gives the same results faster; the switch is for tests and benchmarks).

    ``initial`` = (class indices, sizes in packets): flows already in progress at t = 0
    (a steady-state start): they arrive at time 0, in the given order, before the first
    arrival of the stream, which is unchanged. They are not among the ``flows`` measured
    (the returned records are the stream's flows only); their completion times are in
    ``initial_completion``, and the run also lasts until they have completed.
    """
    check_flows(flows)
    code = policies.get(policies.PACKET, policy).code
    debug = debug_enabled() if debug is None else debug
    stream = ArrivalStream(seed_seq, class_loads, mean_size, size_laws)
    hash_key = np.uint64(seed_seq.generate_state(1, np.uint64)[0])
    n_initial = 0 if initial is None else int(len(initial[0]))
    records = _ArrivalRecords(n_initial + flows + 1 + ARRIVAL_BLOCK)
    if arrivals is not None:
        if initial is not None:
            raise ValueError("initial flows are for the Poisson stream, not a trace")
        order = np.argsort(np.asarray(arrivals[0]), kind="stable")
        # in time order (cast to the records' dtypes), then a sentinel at t = ∞
        records.append(tuple(np.append(np.asarray(x)[order], end)
                             for x, end in zip(arrivals, (np.inf, 0, 1), strict=True)))
        if flows > records.n - 1:
            raise ValueError("flows exceeds the number of arrivals in the trace")
    elif initial is not None:  # arrival indices 0 … n_initial-1, before the stream's first
        records.append((np.zeros(n_initial), initial[0], initial[1]))

    def extend() -> None:  # the next block of the stream (a trace has nothing after it)
        if arrivals is not None:
            raise RuntimeError("explicit arrival trace exhausted")
        records.append(stream.next_block())

    measured, flows = flows, flows + n_initial  # the kernel runs until all have completed
    while records.n < flows + 1:
        extend()
    K = model.type_start.shape[0]
    windows = np.full(K, window, np.int64) if class_window is None else (
        np.asarray(class_window, np.int64))
    periods = np.zeros(K) if class_period is None else np.asarray(class_period, np.float64)
    stops = np.full(K, np.inf) if class_stop is None else np.asarray(class_stop, np.float64)
    special = bool(np.any(periods > 0) or np.any(stops < np.inf) or interval > 0)
    lone_flow = lone_flow and not special
    # the slot layout's window: the largest, +1 for an open-loop flow's scheduled offer
    window = int(windows.max()) + int(np.any(periods > 0))
    timeline = np.zeros(K * model.service.shape[1] * bins if interval > 0 else 0)
    dropped = np.zeros(K, np.int64)
    fq = tuple(int(j) % model.service.shape[1] for j in np.atleast_1d(fq_resource))
    fq_mask = np.zeros(model.service.shape[1], np.bool_)
    fq_mask[list(fq)] = True
    network = needs_network_loop(model.n_routers, fq_mask)
    routed_mr3 = network and code == policies.codes(policies.PACKET).MR3
    state = _State(model, window, INITIAL_CAPACITY,
                   ingress_limits(model, inflight) if routed_mr3 else None)
    buckets = kernel.SOJOURN_BUCKETS
    sojourn_hist = np.zeros((buckets * K + 1) * kernel.SOJOURN_BINS, np.int64)  # + scratch
    sojourn_sum = np.zeros(buckets * K + 1)
    bucket_time = np.full(buckets, np.nan)
    bucket_work = np.full(buckets * state.J, np.nan)
    service, next_resource, type_charge = _flat_model(model)
    router = (np.zeros(state.J, np.int64) if model.router is None
              else np.ascontiguousarray(model.router, np.int64))
    constants = kernel.Model(
        service=service, next_resource=next_resource, first_resource=model.first_resource,
        type_charge=type_charge, type_cdf=model.type_cdf, class_type0=model.type_start,
        class_ntypes=model.type_count, class_cycle=model.class_cycle,
        class_rtt=model.class_rtt, class_weight=model.class_weight, window=window,
        # Δ not given: one window's worth, as a scenario's default (PacketConfig.delta)
        delta=float(window if delta is None else delta),
        in_service=_in_service(virtual_time), hash_key=hash_key,
        fq_resource=fq[0],
        inflight=default_inflight(state.J) if inflight is None else int(inflight),
        class_window=windows, class_period=periods, class_stop=stops,
        interval=float(interval), router=router, router_charge=router_charges(model),
        fq_mask=fq_mask)
    state.istate[kernel.I_OUTSTANDING] = flows
    completion = np.full(flows, np.nan)
    started = time.perf_counter()
    s = state
    while True:
        if s.istate[kernel.I_SEQ] + CHUNK_EVENTS * (window + s.J) >= kernel.MAX_SEQ:
            raise InputError("more than 8.8e12 packet arrivals at resources in one "
                             "replication (the engine's limit): fewer flows or a smaller "
                             "mean size", "flows")
        status = kernel.run_kernel(
            code, debug, CHUNK_EVENTS, constants,
            kernel.Arrivals(*records.views(), records.n, flows, completion,
                            timeline, dropped, sojourn_hist, sojourn_sum, bucket_time,
                            bucket_work, n_initial),
            s.arrays(), lone_flow, special, network)
        if progress is not None:  # (also at the end: a run of one chunk says it is done)
            progress(max(flows - int(s.istate[kernel.I_OUTSTANDING]) - n_initial, 0),
                     measured)
        if status == kernel.DONE:
            break
        if status == kernel.NEED_ARRIVALS:
            extend()
        elif status == kernel.NEED_CAPACITY:
            s.grow()
        elif status != kernel.BUDGET:
            raise InvariantError(f"engine invariant broken at t={s.fstate[kernel.F_TIME]:.6g}: "
                                 f"{_VIOLATIONS.get(status, status)}")
    return Replication(
        arrival=records.time[n_initial:flows].copy(),
        completion=completion[n_initial:] if n_initial else completion,
        flow_class=records.flow_class[n_initial:flows].copy(),
        size=records.size[n_initial:flows].copy(),
        services=int(s.istate[kernel.I_SERVICES]),
        events=int(s.istate[kernel.I_EVENTS]),
        end_time=float(s.fstate[kernel.F_TIME]),
        wall_s=time.perf_counter() - started,
        timeline=timeline.reshape(K, state.J, bins) if interval > 0 else None,
        dropped=dropped,
        sojourn_hist=sojourn_hist[:-kernel.SOJOURN_BINS].reshape(buckets, K,
                                                                 kernel.SOJOURN_BINS),
        sojourn_sum=sojourn_sum[:-1].reshape(buckets, K),
        bucket_time=bucket_time,
        bucket_work=bucket_work.reshape(buckets, state.J),
        work=np.array([kernel.busy_time(s.res_f, s.J, j, s.fstate[kernel.F_TIME])
                       for j in range(s.J)]),
        initial_completion=completion[:n_initial].copy() if initial is not None else None,
    )
