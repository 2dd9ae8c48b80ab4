"""Python driver of the packet kernel: allocate state, feed arrivals, run in chunks.

``run_replication`` is one independent run; :func:`mrfq.packet.simulate` (in
:mod:`mrfq.packet.simulate`) adds replications, statistics and overrides.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mrfq.packet import kernel
from mrfq.packet.model import ArrivalStream, PacketModel

#: events per kernel call between returns to Python (progress, Ctrl-C)
CHUNK_EVENTS = 20_000_000
INITIAL_CAPACITY = 128

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


class _State:
    """All arrays of the kernel state; flow-indexed arrays grow by doubling."""

    def __init__(self, model: PacketModel, window: int, capacity: int, policy: int):
        J = model.service.shape[1]
        K = model.type_start.shape[0]
        self.window = window
        self.J, self.K = J, K
        self.istate = np.zeros(8, dtype=np.int64)
        self.fstate = np.zeros(2)
        self.fstate[kernel.F_VGLOBAL] = 0.0
        self.busy = np.zeros(J, dtype=np.bool_)
        self.done_time = np.zeros(J)
        self.serv_slot = np.zeros(J, dtype=np.int64)
        self.serv_pk = np.zeros(J, dtype=np.int64)
        self.vtime = np.zeros(J)
        self.busy_time = np.zeros(J)
        self.pend_head = np.zeros(K, dtype=np.int64)
        self.pend_len = np.zeros(K, dtype=np.int64)
        self.dovetail = policy == kernel.DRFQ_DOVETAIL
        self.capacity = 0
        self._allocate(capacity)

    def _flow_arrays(self, C: int) -> dict[str, np.ndarray]:
        J, W = self.J, self.window
        i64 = np.int64
        return {
            "fl_class": np.zeros(C, i64), "fl_index": np.zeros(C, i64),
            "fl_to_inject": np.zeros(C, i64), "fl_in_system": np.zeros(C, i64),
            "fl_sent": np.zeros(C, i64), "fl_pending": np.zeros(C, i64),
            "fl_tag": np.zeros((C, J)), "fl_queue": np.zeros((C, J), i64),
            "fl_pfree": np.zeros((C, W), i64), "fl_pfree_n": np.zeros(C, i64),
            "fifo": np.zeros((C, J, W), i64), "fifo_head": np.zeros((C, J), i64),
            "fifo_len": np.zeros((C, J), i64),
            "pk_type": np.zeros((C, W), i64), "pk_key": np.zeros((C, W)),
            "pk_vtag": np.zeros((C, W)), "pk_seq": np.zeros((C, W), i64),
            "pk_vtags": np.zeros((C if self.dovetail else 1, W, J)),
            "last_key": np.zeros((C, J)), "in_use": np.zeros(C, np.bool_),
        }

    def _allocate(self, C: int) -> None:
        old = self.capacity
        arrays = self._flow_arrays(C)
        for name, fresh in arrays.items():
            if old:
                current = getattr(self, name)
                fresh[: current.shape[0]] = current
            setattr(self, name, fresh)
        hkey, hseq, hslot = np.zeros((self.J, C)), np.zeros((self.J, C), np.int64), \
            np.zeros((self.J, C), np.int64)
        if old:
            hkey[:, :old], hseq[:, :old], hslot[:, :old] = self.hkey, self.hseq, self.hslot
        else:
            self.hsize = np.zeros(self.J, np.int64)
        self.hkey, self.hseq, self.hslot = hkey, hseq, hslot
        # free slot stack: previously free ones stay, new slots are pushed below them
        free = np.zeros(C, np.int64)
        top = self.istate[kernel.I_FREE_TOP]
        new_slots = np.arange(C - 1, old - 1, -1, dtype=np.int64)
        free[: len(new_slots)] = new_slots
        if old:
            free[len(new_slots): len(new_slots) + top] = self.free_slots[:top]
        self.free_slots = free
        self.istate[kernel.I_FREE_TOP] = top + len(new_slots)
        # round-trip queues hold at most C * W packets; unroll the rings when growing
        cap = C * self.window
        pend_time = np.zeros((self.K, cap))
        pend_slot = np.zeros((self.K, cap), np.int64)
        for k in range(self.K if old else 0):
            n = self.pend_len[k]
            idx = (self.pend_head[k] + np.arange(n)) % self.pend_time.shape[1]
            pend_time[k, :n] = self.pend_time[k, idx]
            pend_slot[k, :n] = self.pend_slot[k, idx]
            self.pend_head[k] = 0
        self.pend_time, self.pend_slot = pend_time, pend_slot
        self.capacity = C

    def grow(self) -> None:
        self._allocate(2 * self.capacity)


def run_replication(model: PacketModel, policy: str, class_loads: np.ndarray,
                    seed_seq: np.random.SeedSequence, *, flows: int, mean_size: float,
                    window: int, delta: float = np.inf, debug: bool | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    arrivals: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                    ) -> Replication:
    """Simulate until every flow with arrival index < ``flows`` has completed (SPEC §3).

    ``arrivals`` = (times, class indices, sizes in packets) replaces the Poisson stream by
    an explicit trace (no arrivals after it). ``progress(completed, flows)`` is called
    between kernel chunks.
    """
    code = kernel.POLICY_CODES[policy]
    debug = debug_enabled() if debug is None else debug
    stream = ArrivalStream(seed_seq, class_loads, mean_size)
    hash_key = np.uint64(seed_seq.generate_state(1, np.uint64)[0])
    times, classes, sizes = [], [], []
    n_arrivals = 0

    def extend():
        nonlocal arr_time, arr_class, arr_size, n_arrivals
        block = stream.next_block()
        for store, part in zip((times, classes, sizes), block, strict=True):
            store.append(part)
        arr_time = np.concatenate(times)
        arr_class = np.concatenate(classes)
        arr_size = np.concatenate(sizes)
        n_arrivals = arr_time.shape[0]

    arr_time = arr_class = arr_size = None
    if arrivals is not None:
        trace_t, trace_c, trace_s = (np.asarray(x) for x in arrivals)
        order = np.argsort(trace_t, kind="stable")
        times.append(np.append(trace_t[order].astype(np.float64), np.inf))
        classes.append(np.append(trace_c[order].astype(np.int64), 0))
        sizes.append(np.append(trace_s[order].astype(np.int64), 1))

        def extend():  # noqa: F811 - a trace has nothing after its sentinel
            raise RuntimeError("explicit arrival trace exhausted")

        arr_time, arr_class, arr_size = times[0], classes[0], sizes[0]
        n_arrivals = arr_time.shape[0]
        if flows > n_arrivals - 1:
            raise ValueError("flows exceeds the number of arrivals in the trace")
    else:
        extend()
    while n_arrivals < flows + 1:
        extend()
    state = _State(model, window, INITIAL_CAPACITY, code)
    state.istate[kernel.I_OUTSTANDING] = flows
    completion = np.full(flows, np.nan)
    started = time.perf_counter()
    s = state
    while True:
        status = kernel.run_kernel(
            code, debug, CHUNK_EVENTS,
            model.service, model.next_resource, model.first_resource, model.type_start,
            model.type_count, model.type_cdf, model.class_cycle, model.class_rtt, window,
            float(delta), hash_key,
            arr_time, arr_class, arr_size, n_arrivals, flows, completion,
            s.istate, s.fstate,
            s.free_slots, s.fl_class, s.fl_index, s.fl_to_inject, s.fl_in_system, s.fl_sent,
            s.fl_pending, s.fl_tag, s.fl_queue, s.fl_pfree, s.fl_pfree_n,
            s.fifo, s.fifo_head, s.fifo_len,
            s.pk_type, s.pk_key, s.pk_vtag, s.pk_seq, s.pk_vtags,
            s.busy, s.done_time, s.serv_slot, s.serv_pk, s.vtime, s.busy_time, s.last_key,
            s.hkey, s.hseq, s.hslot, s.hsize,
            s.pend_time, s.pend_slot, s.pend_head, s.pend_len, s.in_use)
        if status == kernel.DONE:
            break
        if status == kernel.NEED_ARRIVALS:
            extend()
        elif status == kernel.NEED_CAPACITY:
            s.grow()
        elif status != kernel.BUDGET:
            raise InvariantError(f"engine invariant broken at t={s.fstate[kernel.F_TIME]:.6g}: "
                                 f"{_VIOLATIONS.get(status, status)}")
        if progress is not None:
            progress(flows - int(s.istate[kernel.I_OUTSTANDING]), flows)
    return Replication(
        arrival=arr_time[:flows].copy(),
        completion=completion,
        flow_class=arr_class[:flows].copy(),
        size=arr_size[:flows].copy(),
        services=int(s.istate[kernel.I_SERVICES]),
        events=int(s.istate[kernel.I_EVENTS]),
        end_time=float(s.fstate[kernel.F_TIME]),
        wall_s=time.perf_counter() - started,
    )
