"""Numba event loop for J router resources in tandem, one start-time fair queue each.

Plain arrays in, plain arrays out (STUMPY-style kernel; the wrapper is
:mod:`mrfq.packet.engine`). All state lives in arrays so the loop can stop after a budget
of events and resume exactly where it was.

Model (SPEC §3). Event order at equal times: completions by resource index, then
round-trip injections by class index, then the flow arrival (SimPy-style (time, priority)).
One event is processed in two phases:

1. packet movements: a completed packet arrives at its next resource with s > 0, or
   leaves the router (then the flow's next packet is injected, after ``rtt`` if > 0); a
   flow arrival injects min(W, N) packets in order. Each arriving packet gets the next
   global arrival number ``seq`` and its tag (computed with the virtual times as they are
   before phase 2) and joins its flow's FIFO at the resource.
2. every idle resource with waiting packets, in index order, starts the smallest
   (key, seq) — equal keys go to the earliest arrival. Starting sets the virtual time:
   V_j = tag (PF, BMF; memoryless DRFQ records it too); dovetailing DRFQ V_j = S_ij of the
   packet started (in-service clock) or max(V_j, S_ij) (started clock); memoryless DRFQ's
   started clock V = max(V, tag) over all resources. A completion of a memoryless DRFQ
   packet sets the in-service clock's idle value (below).

Each resource keeps one FIFO per flow and serves the flow heads in (key, seq) order.
A packet that arrives at an idle resource with nothing waiting starts at once, without
passing through the FIFO and the heap: phase 2 would start exactly that packet (at most one
packet arrives at a resource per event, except a flow's first window, whose tags increase),
and starting it in phase 1 changes no tag, because the packets that arrive after it in the
same event are the same flow's, whose tags are at least its key anyway.

While one flow is alone in the router and its packets all take the same two resources,
:func:`_lone_flow` runs its events with the flow's state in local variables until the
next flow arrives: the same operations in the same order, without the heaps (each holds
at most this flow), the event-kind dispatch and the scan of every resource. It writes
the state back in this layout when it hands over, so the kernel's state is the same
whether it ran or not (``tests/test_packet_reference.py``). A lone flow does most of the
work at low load: 89% of the services at load 0.1, 45% at 0.5, 7% at 0.9 (Figure 3's
scenario, BMF, m = 2000).

Tags. As in start-time fair queueing (Goyal et al.), a flow is charged for the packet it
has sent: S^k = max(V, F^{k-1}), F^{k-1} = S^{k-1} + the cost of its previous packet
k−1 (at a resource: the flow's previous packet that visited that resource). A flow's
first packet gets S = V. w is the flow's class weight, which divides every increment
(weighted SFQ; weighted DRFQ as in Ghodsi et al. SIGCOMM'12):
  BMF  S = max(V_j, S^{k-1}_j + s^{k-1}_j / w)             (BR eq. 7)
  PF   S = max(V_j, S^{k-1}_j + (s^{k-1}_j / w) / Q_ij)    (BR eq. 5; Q_ij counts the
       arriving packet and is taken at its arrival)
  DRFQ S = max(V, S^{k-1} + max_j s^{k-1}_j / w) at injection   (BR eq. 2, memoryless)
  DRFQ-dovetail S_j = max(V_j, F_j), F_j = S_j + s_j / w, key = max over used j of S_j;
       then F_j ← max(F_j, max_r F_r − Δ)                   (Ghodsi et al. SIGCOMM'12)
DRFQ's virtual time (SPEC §3, ``Model.in_service``). In-service clock (the DRFQ paper's,
the default): memoryless V = the largest tag among the packets in service at the
injection (:func:`_virtual_time`), and with none in service the tag of the packet whose
departure emptied the router (its value just before); dovetailing V_j = S_ij of the packet
in service at j, and with j idle that of the last one served there. Started clock (BR's
reading, ``virtual_time = "started"``): V = the largest tag ever started anywhere, V_j the
largest S_ij ever started at j.
With one packet type per class the previous packet's cost is the current one's. Every
s / w is one floating-point division (the reference simulator does the same).
Weighted DRFQ does not always realise weighted DRF (tests/test_packet_weights.py): with
the started clock, V keeps up with the newest tag of any flow whenever a lightly loaded
resource starts packets at once (two flows of weights 1 and 2 behind an idle CPU get 1/2
each; the in-service clock gives 1/3, 2/3); under either clock one global V follows a
flow whose tags advance alone on another resource, and flows that lag it are reset to V
at every packet and lose their weights (DRFQ itself; validation names it).

Baselines (SPEC §3.1). FIFO keys every packet 0, so (key, seq) is the arrival order at
the resource. Bottleneck FQ gives the BMF tag at ``model.fq_resource`` and 0 elsewhere.
MR3 holds a flow's window at the ingress (``FI_HELD`` packets, a type drawn only at
release, from the same counter hash) and :func:`_release_next` lets packets into the
tandem by elastic round robin on dominant processing time while fewer than
``model.inflight`` are inside; inside, FIFO. An MR3 packet's sojourn starts when it joins
the ingress (:func:`_hold`), so its delay includes the wait there. None of them uses the
lone-flow loop.

MR3 on several routers (SPEC §3.2): every router r has its own ingress, run by the same
rule on its own state (round-robin list, rounds, MaxSC, allowance, each flow's SC_r) and
its own bound L_r (``inflight``, default 2 J_r for its J_r resources). A packet waits at
the ingress of every router it enters: its first router's when it is injected (it is
drawn and numbered then, and its sojourn starts), another router's when it completes at
a resource and its next resource is in that router (it leaves its router: one fewer
inside); a route that comes back to a router enters its ingress again. A flow's packets
held at r are released in the order they arrived there, each to its next resource,
charged its largest time over r's resources / w (``router_charge``, DRFQ's charge in r);
r releases while fewer than L_r packets are inside it (released by its ingress, not yet
left r). After an event's packet movements and injections the routers release in index
order (the order is not observable: a router's releases go to its own resources, and
arrival numbers are compared only at one resource). Inside a router, FIFO. With one
router this is the tandem's ingress exactly (``tests/test_network_packet.py`` runs it
through the network loop against the tandem loop).

Memory layout (why it looks like this: every separate array is a base pointer and a
stride the loop must keep in a register or reload from the stack; with ~50 arrays the
loop spent most of its instructions on spills). State is a handful of flat arrays:

* a flow slot's integers are one record of ``ni`` int64 in ``flow_i`` (offset slot·ni) and
  its floats one record of ``nf`` float64 in ``flow_f``; :func:`record_layout` gives the
  offsets of the per-resource and per-packet parts. The flow's tag state is the first J
  floats: what the next packet's tag needs of the previous one, F_j = S_j + s_j / w for
  BMF and dovetailing DRFQ (memoryless DRFQ: one F, at 0), S_j for PF, whose increment
  (s_j / w) / Q_ij waits for the next packet's Q (the s_j / w is kept at ``o_charge``);
* resource j's heap of flow heads is entries i·J + j of ``heap_key`` (the head's tag) and
  ``heap_id`` (its arrival number and slot packed as seq·2^SLOT_BITS + slot, so comparing
  ids compares arrival numbers);
* ``res_f`` = [completion time (∞ when idle), V_j, idle time before the current busy
  period, service time of the packet in service at its next resource, time of the
  resource's last completion], ``res_i`` = [slot, packet number and next resource (−1: it
  leaves) of the packet in service, heap size], each J long. Utilisation is counted per
  busy period, not per service: a resource becomes busy only when a packet arrives to it
  idle with nothing waiting (:func:`_arrive`), and its idle time grows then by the time
  since its last completion, so a service costs one store (:func:`busy_time`).

The kernel's arguments are named tuples (:class:`Model`, :class:`Arrivals`,
:class:`State`, and the :class:`Layout` of the records): Numba compiles a field access to
the same code as a constant index, and the hot loop still sees only plain arrays.

Why one file: every compiled function here has ``cache=True``, and Numba's disk cache
is invalidated per file: a cached function is re-compiled when *its own* source file
changes. The helpers are compiled into the loops (``inline="always"``, or linked into the
same machine code), and a helper in another file is not a dependency the cache tracks:
edit it, and the loops keep running the old code from the cache. With the loops and
everything they use in this one file, any edit invalidates them all.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.extending import intrinsic

from mrfq import policies

# the policies' dispatch codes, from the registry (the one place they are written); as
# module-level ints they are compile-time constants of every loop
_CODES = policies.codes(policies.PACKET)
DRFQ, DRFQ_DOVETAIL, PF, BMF = _CODES.DRFQ, _CODES.DRFQ_DOVETAIL, _CODES.PF, _CODES.BMF
FIFO, BOTTLENECK_FQ, MR3 = _CODES.FIFO, _CODES.BOTTLENECK_FQ, _CODES.MR3
#: bump when the model or the kernel changes results; part of every stored point's key
ENGINE_VERSION = "3"

# return codes of run_kernel
DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY = 0, 1, 2, 3
# debug invariant violations (code >= 10)
BAD_CONSERVATION, BAD_WINDOW, BAD_IDLE, BAD_TAG_ORDER, BAD_UTILISATION = 10, 11, 12, 13, 14

# indices into the int64 scalar state
I_NEXT_ARRIVAL, I_OUTSTANDING, I_SEQ, I_SERVICES, I_EVENTS, I_ACTIVE, I_FREE_TOP, I_VIOLATION = (
    range(8))
# MR3's ingress (int): packets released and not yet departed, the round-robin list of
# flows with held packets (head, tail: slots, −1 = empty), the last flow of the current
# round, and whether the head flow's turn has begun (1) or not (0)
I_INSIDE, I_RR_HEAD, I_RR_TAIL, I_RR_END, I_RR_OPEN = range(8, 13)
# (13: unused; the number of busy resources while the network's completions were a heap)
N_ISTATE = 14
# indices into the float64 scalar state; MR3: MaxSC of the previous and of the current
# round, and what is left of the head flow's allowance (all in dominant time / weight)
F_TIME, F_VGLOBAL, F_MAXSC_PREV, F_MAXSC_CUR, F_ALLOWANCE = range(5)
N_FSTATE = 5

#: per-packet sojourn histogram (router entry to last departure): the measured flows are
#: split by arrival index into SOJOURN_BUCKETS buckets (flow index · buckets // flows, so
#: a warm-up cut or batches can be applied afterwards at bucket granularity); per bucket and
#: class, SOJOURN_BINS log-spaced bins: octave e (x = mant · 2^e, mant in [0.5, 1), e from
#: SOJOURN_EMIN) split into SOJOURN_SUB equal parts, so a bin is at most 1/SOJOURN_SUB
#: (3.1%) of its lower edge wide; values outside [2^(EMIN−1), 2^(EMIN+OCTAVES−1)) fall
#: in the first or last bin.
SOJOURN_BUCKETS = 32
SOJOURN_SUB = 32
SOJOURN_EMIN = -15
SOJOURN_OCTAVES = 48
SOJOURN_BINS = SOJOURN_SUB * SOJOURN_OCTAVES

#: heap ids pack (arrival number, slot); at most 2^SLOT_BITS flows in progress at once and
#: 2^(63 - SLOT_BITS) ≈ 8.8e12 packet arrivals at resources per replication
SLOT_BITS = 20
MAX_SLOTS = 1 << SLOT_BITS
MAX_SEQ = 1 << (63 - SLOT_BITS)
_SLOT_MASK = np.int64(MAX_SLOTS - 1)

# fields at the start of a flow's int record; per-resource triples follow at FI_RES
# (FI_HELD: MR3, packets of the window waiting at the ingress; FI_NEXT: MR3, the next
# slot in the round-robin list; FI_SOJOURN: the flow's cell of the sojourn histogram,
# bucket · K + class, or the scratch cell K · SOJOURN_BUCKETS when it is not measured, so
# that recording a packet takes no branch)
(FI_CLASS, FI_INDEX, FI_TO_INJECT, FI_IN_SYSTEM, FI_SENT, FI_PENDING, FI_FREE_N, FI_TYPE0,
 FI_NTYPES, FI_HELD, FI_NEXT, FI_SOJOURN, FI_FREE_HEAD) = range(13)
FI_RES = 13  # resource j: FI_RES + 3j = packets of the flow at j, +1 FIFO head, +2 FIFO length
# MR3 on several routers: a flow's record at one router's ingress (record_layout), and
# router r's ingress state at istate[N_ISTATE + IN_SIZE·r + IN_*] (packets released and
# not yet left r, the bound L_r, the round-robin list's head, tail and last flow of the
# round, whether the head's turn has begun) and fstate[N_FSTATE + 3r + FN_*] (MaxSC of
# the previous and current round, the head's allowance); the tandem's MR3 uses the
# I_RR_* and F_MAXSC_* fields above
IG_HELD, IG_HEAD, IG_NEXT, IG_RING = range(4)
IN_INSIDE, IN_LIMIT, IN_HEAD, IN_TAIL, IN_END, IN_OPEN, IN_SIZE = range(7)
FN_MAXSC_PREV, FN_MAXSC_CUR, FN_ALLOWANCE, FN_SIZE = range(4)



class Model(NamedTuple):
    """The model constants (built by :mod:`mrfq.packet.engine` from a
    :class:`~mrfq.packet.model.PacketModel`). Types are numbered over all classes."""

    service: np.ndarray         # [p·J + j]: processing time of type p at j (0 = skip)
    next_resource: np.ndarray   # [p·J + j]: next resource after j with s > 0 (−1 = leave)
    first_resource: np.ndarray  # [p]
    type_charge: np.ndarray     # [p]: max_j service / w (memoryless DRFQ's charge, BR eq. 2)
    type_cdf: np.ndarray        # [p]: cumulative probability within its class
    class_type0: np.ndarray     # [k]: first type of class k
    class_ntypes: np.ndarray    # [k]: its number of types
    class_cycle: np.ndarray     # [k]: types cycled in order (else drawn)
    class_rtt: np.ndarray       # [k]: round-trip time
    class_weight: np.ndarray    # [k]: weight w, dividing every tag increment
    window: int                 # W
    delta: float                # dovetailing DRFQ's Δ
    in_service: bool            # DRFQ's virtual time: the largest tag in service (the DRFQ
                                # paper's V), else the largest tag ever started (BR's reading)
    hash_key: np.uint64         # key of the packet-type hash
    fq_resource: int            # bottleneck FQ: the one resource with SFQ tags
    inflight: int               # MR3: the ingress releases while < inflight packets inside
    class_window: np.ndarray    # [k]: window of class k's flows (≤ window)
    class_period: np.ndarray    # [k]: > 0: open loop, one packet offered every period
    class_stop: np.ndarray      # [k]: no injection at a departure at or after this time
    interval: float             # > 0: service per class, resource and interval recorded
    router: np.ndarray          # [j]: router of resource j (all 0: one router, the tandem)
    router_charge: np.ndarray   # [p·R + r]: max over r's resources of service / w (DRFQ's
                                # charge in router r, SPEC §3.2)
    fq_mask: np.ndarray         # [j]: bottleneck FQ schedules j (networks; the tandem
                                # loops read fq_resource)


class Arrivals(NamedTuple):
    """Pre-generated flow arrivals; completion times of flows with index < ``flows`` are
    written to ``completion``, and the run is DONE when all of them have completed. The
    sojourn histogram's buckets split the indices ``first_measured`` … ``flows`` − 1."""

    time: np.ndarray
    flow_class: np.ndarray
    size: np.ndarray
    n_arrivals: int
    flows: int
    completion: np.ndarray
    timeline: np.ndarray        # [(k·J + j)·bins + b]: service given in interval b
    dropped: np.ndarray         # [k]: open-loop packets dropped (window full)
    sojourn_hist: np.ndarray    # [(bucket·K + k)·SOJOURN_BINS + bin]: packets (int64); one
    #                             more cell after them: the unmeasured flows' (scratch)
    sojourn_sum: np.ndarray     # [bucket·K + k]: their total sojourn time (+ scratch)
    bucket_time: np.ndarray     # [bucket]: arrival time of the bucket's first flow
    bucket_work: np.ndarray     # [bucket·J + j]: time j was busy before that time
    first_measured: int         # flows with a smaller index (a steady start's) have no bucket


class State(NamedTuple):
    """All mutable state (layout in the module docstring); the round-trip rings are
    k·cap + position; ``in_use`` is scratch space for the debug checks."""

    istate: np.ndarray
    fstate: np.ndarray
    free_slots: np.ndarray
    flow_i: np.ndarray
    flow_f: np.ndarray
    res_i: np.ndarray
    res_f: np.ndarray
    heap_key: np.ndarray
    heap_id: np.ndarray
    pend_time: np.ndarray
    pend_slot: np.ndarray
    pend_head: np.ndarray
    pend_len: np.ndarray
    in_use: np.ndarray
    ev_key: np.ndarray          # networks: tournament of the resources' completion times
    ev_id: np.ndarray           # (∞ idle) and their indices (:func:`_tree_set`)


class Layout(NamedTuple):
    """Sizes of a flow slot's int and float records and offsets of their parts
    (:func:`record_layout`)."""

    ni: int
    nf: int
    o_free: int
    o_type: int
    o_fifo_pk: int
    o_fifo_id: int
    o_key: int
    o_vtags: int
    o_fifo_key: int
    o_fifo_s: int
    o_charge: int
    o_weight: int
    o_sc: int
    o_entry: int
    o_ingress: int
    o_ingress_sc: int


_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
#: indices are cast to unsigned where used: Numba then skips its negative-index
#: wraparound code, which was a large share of the loop's instructions
_U = np.uint64


@njit(cache=True)
def record_layout(J, W, ingresses=0):
    """Sizes and offsets of a flow slot's records for J resources and window W (and,
    for MR3 on several routers, ``ingresses`` routers' ingress records; 0 otherwise).

    Each resource's FIFO of the flow is four parallel rings of W entries at j·W: packet
    number and heap id (int), tag and service time at j (float), so starting a packet and
    promoting the next one need no lookup through the packet number.
    Int record: FI_* fields, per-resource triples, free packet numbers [W], packet type
    [W], FIFO packet numbers [J·W], FIFO heap ids [J·W].
    Float record: tag state F_j or S_j [J] (module docstring), last served order per
    resource (debug) [J], s_j / w of the previous packet at j (PF) [J], the class weight
    w [1], MR3's surplus count SC / w [1], packet key set at injection (DRFQ; unused by
    the in-service tandem, whose key travels with the packet: :func:`_arrive`) [W],
    dovetail virtual starts per packet and resource [W·J], FIFO tags [J·W], FIFO service
    times [J·W]; and last, the time every packet number entered the router [W], its
    injection or, for MR3, when it joined the ingress (its per-packet sojourn starts
    there).
    MR3 on several routers, per router r: at o_ingress + r·(IG_RING + 2W) the flow's
    packets held at r's ingress (IG_HELD), the ring's head (IG_HEAD), the next flow in
    r's round-robin list (IG_NEXT), and the ring of (packet number, next resource) pairs
    [2W]; its surplus count SC_r / w at float o_ingress_sc + r.
    Returns a :class:`Layout`.
    """
    o_free = FI_RES + 3 * J
    o_type = o_free + W
    o_fifo_pk = o_type + W
    o_fifo_id = o_fifo_pk + J * W
    o_ingress = o_fifo_id + J * W
    ni = o_ingress + ingresses * (IG_RING + 2 * W)
    o_charge = 2 * J
    o_weight = 3 * J
    o_sc = o_weight + 1
    o_key = o_sc + 1
    o_vtags = o_key + W
    o_fifo_key = o_vtags + W * J
    o_fifo_s = o_fifo_key + J * W
    o_entry = o_fifo_s + J * W
    o_ingress_sc = o_entry + W
    nf = o_ingress_sc + ingresses
    return Layout(ni, nf, o_free, o_type, o_fifo_pk, o_fifo_id, o_key, o_vtags, o_fifo_key,
                  o_fifo_s, o_charge, o_weight, o_sc, o_entry, o_ingress, o_ingress_sc)


@intrinsic
def _float_bits(typingctx, x):
    """The IEEE-754 bits of a float64 as an int64 (an LLVM bitcast, no instructions)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.IntType(64))
    return types.int64(types.float64), codegen


#: IEEE-754 double: 52 mantissa bits; the top log2(SOJOURN_SUB) of them pick the part
_SUB_SHIFT = 52 - (SOJOURN_SUB.bit_length() - 1)
#: a positive double's bits >> _SUB_SHIFT are (biased exponent E + 1023) · SOJOURN_SUB +
#: part, so its bin (E + 1 − SOJOURN_EMIN) · SOJOURN_SUB + part is that minus this
_BIN_OFFSET = (1022 + SOJOURN_EMIN) * SOJOURN_SUB


@njit(cache=True, inline="always")
def sojourn_bin(x):
    """Histogram bin of a sojourn time x (see SOJOURN_BINS). For x = 1.f · 2^E the octave
    [2^E, 2^(E+1)) is split into SOJOURN_SUB equal parts by the top bits of the mantissa
    f: bin (E + 1 − SOJOURN_EMIN) · SOJOURN_SUB + part, a shift and a subtraction of the
    float's bits (a libm frexp call cost more than the rest of the recording, and every
    instruction here runs once per packet), clamped to the bins: values below the range,
    zero and negative ones (the sign bit makes the bits negative) fall in the first bin,
    values above it and ∞ in the last."""
    i = (_float_bits(x) >> _SUB_SHIFT) - _BIN_OFFSET
    if _U(i) >= _U(SOJOURN_BINS):  # out of range (rare): one unsigned test for both ends
        i = 0 if i < 0 else SOJOURN_BINS - 1
    return i


@njit(cache=True, _nrt=False)
def _record_timeline(timeline, base, bins, interval, t, service_time):
    """Add a service [t − service_time, t] of one packet at one resource to the flow's
    intervals ``timeline[base + b]``, b < ``bins``, each [b·interval, (b+1)·interval): the
    whole of it to the interval it lies in, or its overlap with each interval it spans (so
    a share never exceeds 1, however short the interval). Called, not inlined: explicit
    flows only."""
    start = t - service_time
    # compared as floats: long after the timeline, t / interval can exceed an int64,
    # whose conversion wrapped the index outside the array
    first, last = start / interval, t / interval
    if not first < bins:
        return
    b0 = int(first) if first > 0.0 else 0
    b1 = int(last) if last < bins else bins - 1
    if b0 == b1 and last < bins:  # within one interval: the service time itself
        timeline[_U(base + b0)] += service_time
        return
    for bb in range(b0, b1 + 1):
        overlap = min(t, (bb + 1) * interval) - max(start, bb * interval)
        if overlap > 0.0:
            timeline[_U(base + bb)] += overlap


@njit(cache=True, inline="always", _nrt=False)
def _record_sojourn(sojourn_hist, sojourn_sum, cell, x):
    """Count one departing packet, sojourn x, in its flow's (bucket, class) cell (its
    FI_SOJOURN: bucket · K + class, or the scratch cell after them when not measured)."""
    sojourn_hist[_U(cell * SOJOURN_BINS + sojourn_bin(x))] += 1
    sojourn_sum[_U(cell)] += x


@njit(cache=True, inline="always", _nrt=False)
def busy_time(res_f, J, j, t):
    """Time resource j has been busy in [0, t] (t at or after its last event): t minus its
    idle time, which is the idle time before its current busy period plus, when idle
    now, the time since its last completion."""
    idle = res_f[_U(2 * J + j)]
    if res_f[_U(j)] == np.inf:
        idle += t - res_f[_U(4 * J + j)]
    return t - idle


# Called, not inlined: once per flow arrival, and it keeps the bucket arithmetic (an
# integer division) and its arrays out of the event loop's registers.
@njit(cache=True, _nrt=False, error_model="numpy")
def _sojourn_cell(arrivals, res_f, J, K, k, index, t):
    """The sojourn-histogram cell of the flow with arrival ``index`` and class k arriving
    at time t: bucket · K + k for a measured flow, its bucket (index − first_measured) ·
    SOJOURN_BUCKETS // (flows − first_measured); the scratch cell SOJOURN_BUCKETS · K for
    the others. The first flow of a bucket records when the bucket starts and how long
    every resource was busy before (utilisation)."""
    first, flows = arrivals.first_measured, arrivals.flows
    if not first <= index < flows:
        return SOJOURN_BUCKETS * K
    span = flows - first
    rank = index - first
    bucket = rank * SOJOURN_BUCKETS // span
    if rank == 0 or (rank - 1) * SOJOURN_BUCKETS // span != bucket:
        arrivals.bucket_time[bucket] = t
        for j in range(J):
            arrivals.bucket_work[bucket * J + j] = busy_time(res_f, J, j, t)
    return bucket * K + k


@njit(cache=True, inline="always")
def splitmix64(x):
    """SplitMix64 finaliser: a counter-based hash giving 64 random bits of a key."""
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & _MASK
    x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
    x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def packet_uniform(key, flow_index, packet_number):
    """Uniform [0, 1) draw for packet ``packet_number`` of flow ``flow_index``."""
    x = splitmix64(key ^ splitmix64(np.uint64(flow_index) * np.uint64(0x100000001B3)
                                    + np.uint64(packet_number)))
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always", _nrt=False)
def _heap_push(heap_key, heap_id, n, J, j, key, hid):
    """Insert (key, hid) into heap j of size n (entries i·J + j)."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        at = _U(parent * J + j)
        pkey = heap_key[at]
        if key < pkey or (key == pkey and hid < heap_id[at]):
            heap_key[_U(i * J + j)] = pkey
            heap_id[_U(i * J + j)] = heap_id[at]
            i = parent
        else:
            break
    heap_key[_U(i * J + j)] = key
    heap_id[_U(i * J + j)] = hid


@njit(cache=True, inline="always", _nrt=False)
def _sift_down(heap_key, heap_id, n, J, j, key, hid):
    """Place (key, hid) at the root of heap j (size n) and restore the order."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        at = _U(child * J + j)
        ckey = heap_key[at]
        cid = heap_id[at]
        if child + 1 < n:
            at2 = _U(at + _U(J))
            key2 = heap_key[at2]
            id2 = heap_id[at2]
            if key2 < ckey or (key2 == ckey and id2 < cid):
                child += 1
                ckey = key2
                cid = id2
        if ckey < key or (ckey == key and cid < hid):
            heap_key[_U(i * J + j)] = ckey
            heap_id[_U(i * J + j)] = cid
            i = child
        else:
            break
    heap_key[_U(i * J + j)] = key
    heap_id[_U(i * J + j)] = hid


#: networks of at most this many resources keep only the leaves of the event tree and
#: find the next completion by a tournament computed in registers (:func:`_first_completion`)
FLAT_EVENTS = 16


@njit(cache=True, inline="always", _nrt=False)
def _tree_set(ev_key, ev_id, j, key):
    """Networks' next completion: a tournament over the resources (P = a power of two,
    at least J and at least FLAT_EVENTS, leaf j at P + j holding res_f[j], node i the
    smaller of nodes 2i and 2i + 1 by (time, index), the root at 1; ev_key / ev_id hold
    each node's time and resource). Set leaf j to ``key``; when P > FLAT_EVENTS, replay
    its path to the root: log2 P comparisons with no data-dependent branch (a heap's
    sift-down mispredicts about every other comparison, a fifth of the loop's time at
    J = 12). Equal times: the left child, the smaller index, as the tandem loops' scan in
    index order. With P = FLAT_EVENTS the leaves are all there is: the inner nodes are
    computed afresh at every event, in registers (:func:`_first_completion`), which
    costs less than two path replays per service (BENCHMARKS.md, "Networks")."""
    P = ev_key.shape[0] >> 1
    i = P + j
    ev_key[_U(i)] = key
    if P == FLAT_EVENTS:
        return
    ev_id[_U(i)] = j
    # the winner so far is carried in registers, and each level loads only the sibling
    # (its address is known in advance): no chain through memory
    win = j
    while i > 1:
        other = _U(i ^ 1)
        k_other = ev_key[other]
        id_other = ev_id[other]
        # the sibling wins if smaller, or equal and on the left (a smaller index)
        takes = k_other < key if (i & 1) == 0 else k_other <= key
        key = k_other if takes else key
        win = id_other if takes else win
        i >>= 1
        ev_key[_U(i)] = key
        ev_id[_U(i)] = win


@njit(cache=True, inline="always", _nrt=False)
def _pick(k_left, i_left, k_right, i_right):
    """The smaller of two (time, resource) pairs; equal times: the left one (whose
    resources all have smaller indices)."""
    takes = k_right < k_left
    return (k_right if takes else k_left), (i_right if takes else i_left)


@njit(cache=True, inline="always", _nrt=False)
def _first_completion(ev_key, ev_id):
    """(time, resource) of the next completion (∞ when every resource is idle): the root
    of the tree (:func:`_tree_set`), or with P = FLAT_EVENTS a tournament over the 16
    leaves computed in registers (15 comparisons in four independent levels rather than
    a chain of dependent minima)."""
    if ev_key.shape[0] != 2 * FLAT_EVENTS:
        return ev_key[1], ev_id[1]
    o = FLAT_EVENTS
    k0, i0 = _pick(ev_key[_U(o + 0)], 0, ev_key[_U(o + 1)], 1)
    k1, i1 = _pick(ev_key[_U(o + 2)], 2, ev_key[_U(o + 3)], 3)
    k2, i2 = _pick(ev_key[_U(o + 4)], 4, ev_key[_U(o + 5)], 5)
    k3, i3 = _pick(ev_key[_U(o + 6)], 6, ev_key[_U(o + 7)], 7)
    k4, i4 = _pick(ev_key[_U(o + 8)], 8, ev_key[_U(o + 9)], 9)
    k5, i5 = _pick(ev_key[_U(o + 10)], 10, ev_key[_U(o + 11)], 11)
    k6, i6 = _pick(ev_key[_U(o + 12)], 12, ev_key[_U(o + 13)], 13)
    k7, i7 = _pick(ev_key[_U(o + 14)], 14, ev_key[_U(o + 15)], 15)
    k0, i0 = _pick(k0, i0, k1, i1)
    k2, i2 = _pick(k2, i2, k3, i3)
    k4, i4 = _pick(k4, i4, k5, i5)
    k6, i6 = _pick(k6, i6, k7, i7)
    k0, i0 = _pick(k0, i0, k2, i2)
    k4, i4 = _pick(k4, i4, k6, i6)
    return _pick(k0, i0, k4, i4)


@njit(cache=True, inline="always", _nrt=False)
def _virtual_time(res_f, J, vglobal, in_service, finish):
    """Memoryless DRFQ's virtual time V at an injection by a flow whose previous packet
    finishes at tag ``finish`` (SPEC §3); only max(V, finish) matters.

    Started clock (BR's reading): ``vglobal``, the largest tag ever started. In-service
    clock (the DRFQ paper's): the largest tag among the packets in service now (res_f
    holds each resource's completion time, ∞ when idle, and the tag of the packet it
    started last), and with none in service the tag of the packet whose departure emptied
    the router: the one served at the resource that completed last (completions at equal
    times are processed by resource index, so the highest index among them).

    With the in-service clock ``vglobal`` is an upper bound of V: the largest tag started
    since V was last computed exactly, and the caller replaces it by the V returned (a
    completion only lowers V, a start raises it at most to its tag). A flow whose
    ``finish`` is at least the bound gets ``finish`` without the scan."""
    if not in_service or finish >= vglobal:
        return vglobal
    v = -np.inf  # tags are finite: v stays −∞ only when nothing is in service
    for j in range(J):
        if res_f[_U(j)] < np.inf and res_f[_U(J + j)] > v:
            v = res_f[_U(J + j)]
    if v == -np.inf:
        last = 0
        for j in range(1, J):
            if res_f[_U(4 * J + j)] >= res_f[_U(4 * J + last)]:
                last = j
        v = res_f[_U(J + last)]
    return v


@njit(cache=True, inline="always", _nrt=False)
def _router_tag(policy, flow_f, res_f, J, layout, model, bf, pk, ptype, r, in_service):
    """Networks (SPEC §3.2): packet ``pk`` (type ``ptype``) of the flow with float record
    bf enters router r, whose DRFQ gives it its tag there (the packet keeps it until it
    enters another router).

    Memoryless DRFQ: S = max(V_r, F_r), F_r = S + max_{j in r} s_j / w (the flow's state
    per router at float r). V_r, in-service clock: the largest tag among the packets in
    service at r's resources, and with none the tag of the packet whose departure
    emptied r (the one served at r's resource that completed last; equal times: the
    highest index, processed last); started clock: the largest tag ever started at r's
    resources (res_f[J + j] holds each resource's, :func:`_begin_service`).
    Dovetailing DRFQ: S_j = max(V_j, F_j), F_j = S_j + s_j / w for r's resources with
    s_j > 0, key = max of those S_j, then F_j ← max(F_j, max_{i in r} F_i − Δ) over r."""
    router = model.router
    if policy == DRFQ:
        v = -np.inf
        for j in range(J):
            if router[_U(j)] == r and (not in_service or res_f[_U(j)] < np.inf):
                v = max(v, res_f[_U(J + j)])
        if v == -np.inf:  # in-service clock, r empty: the last packet that left it
            last = -1
            for j in range(J):
                if router[_U(j)] == r and (last < 0
                                           or res_f[_U(4 * J + j)] >= res_f[_U(4 * J + last)]):
                    last = j
            v = res_f[_U(J + last)]
        R = model.router_charge.shape[0] // model.type_charge.shape[0]
        key = max(v, flow_f[bf + _U(r)])
        flow_f[bf + _U(r)] = key + model.router_charge[_U(ptype * R + r)]
    else:
        key = -np.inf
        top_finish = -np.inf
        w = flow_f[bf + _U(layout.o_weight)]
        for j in range(J):
            if router[_U(j)] == r:
                s = model.service[_U(ptype * J + j)]
                if s > 0.0:
                    begin = max(res_f[_U(J + j)], flow_f[bf + _U(j)])
                    flow_f[bf + _U(layout.o_vtags + pk * J + j)] = begin
                    flow_f[bf + _U(j)] = begin + s / w
                    key = max(key, begin)
                top_finish = max(top_finish, flow_f[bf + _U(j)])
        if model.delta < np.inf:
            for j in range(J):
                if router[_U(j)] == r:
                    flow_f[bf + _U(j)] = max(flow_f[bf + _U(j)], top_finish - model.delta)
    flow_f[bf + _U(layout.o_key + pk)] = key


@njit(cache=True, inline="always", _nrt=False)
def _inject(policy, flow_i, flow_f, res_f, J, layout, model, b, bf, vglobal, in_service,
            network):
    """Inject the next packet of the flow whose records start at b / bf: draw its type,
    take a free packet number, give the DRFQ tags (the previous packet's charge; the flow
    state keeps F = S + charge). Returns (packet, first resource, its
    service time there, the global virtual time, memoryless DRFQ's key)."""
    service, type_charge, type_cdf = model.service, model.type_charge, model.type_cdf
    o_free, o_type, o_key, o_vtags = layout.o_free, layout.o_type, layout.o_key, layout.o_vtags
    number = flow_i[b + _U(FI_SENT)]
    flow_i[b + _U(FI_SENT)] = number + 1
    flow_i[b + _U(FI_TO_INJECT)] -= 1
    flow_i[b + _U(FI_IN_SYSTEM)] += 1
    ptype = flow_i[b + _U(FI_TYPE0)]
    count = flow_i[b + _U(FI_NTYPES)]
    if count > 1:
        if model.class_cycle[_U(flow_i[b + _U(FI_CLASS)])]:
            ptype += number % count
        else:
            u = packet_uniform(model.hash_key, flow_i[b + _U(FI_INDEX)], number)
            c = 0
            while c < count - 1 and type_cdf[_U(ptype + c)] <= u:
                c += 1
            ptype += c
    n_free = flow_i[b + _U(FI_FREE_N)] - 1
    flow_i[b + _U(FI_FREE_N)] = n_free
    if policy == MR3:  # the free numbers are a ring: the held packets' are at its head
        head = flow_i[b + _U(FI_FREE_HEAD)]
        pk = flow_i[b + _U(o_free + head)]
        head += 1
        flow_i[b + _U(FI_FREE_HEAD)] = 0 if head == model.window else head
    else:  # a stack
        pk = flow_i[b + _U(o_free + n_free)]
    flow_i[b + _U(o_type + pk)] = ptype
    dest = model.first_resource[_U(ptype)]
    key = 0.0  # (a tag only for DRFQ)
    if network and (policy == DRFQ or policy == DRFQ_DOVETAIL):  # its first router's tag
        _router_tag(policy, flow_f, res_f, J, layout, model, bf, pk, ptype,
                    model.router[_U(dest)], in_service)
    elif policy == DRFQ:
        v = _virtual_time(res_f, J, vglobal, in_service, flow_f[bf])
        if in_service:  # the bound tightened to V (see _virtual_time)
            vglobal = v
        key = max(v, flow_f[bf])
        flow_f[bf] = key + type_charge[_U(ptype)]
        if not in_service:  # (in-service: the key travels with the packet, _arrive)
            flow_f[bf + _U(o_key + pk)] = key
    elif policy == DRFQ_DOVETAIL:
        key = -np.inf
        top_finish = -np.inf
        w = flow_f[bf + _U(layout.o_weight)]
        for j in range(J):
            s = service[_U(ptype * J + j)]
            if s > 0.0:
                begin = max(res_f[_U(J + j)], flow_f[bf + _U(j)])
                flow_f[bf + _U(o_vtags + pk * J + j)] = begin
                flow_f[bf + _U(j)] = begin + s / w
                key = max(key, begin)
            top_finish = max(top_finish, flow_f[bf + _U(j)])
        if model.delta < np.inf:
            for j in range(J):
                flow_f[bf + _U(j)] = max(flow_f[bf + _U(j)], top_finish - model.delta)
        flow_f[bf + _U(o_key + pk)] = key
    return pk, dest, service[_U(ptype * J + dest)], vglobal, key


@njit(cache=True, inline="always", _nrt=False)
def _begin_service(policy, debug, flow_i, flow_f, res_i, res_f, istate, service,
                   next_resource, J, layout, j, t, slot, sb, sbf, pk, s, key, hid, vglobal,
                   in_service, network, ev_key, ev_id):
    """Resource j (idle) starts packet ``pk`` of the flow in ``slot`` (records at sb / sbf)
    with tag ``key`` and heap id ``hid``: completion at t + s, the virtual time, and the
    packet's next resource with its service time there. Returns the global virtual time.

    Virtual time: V_j = key for PF/BMF (and for memoryless DRFQ with the in-service clock,
    which reads it, :func:`_virtual_time`; its started clock: V = max(V, key), and in a
    network V_j = max(V_j, key), which :func:`_router_tag` reads per router);
    dovetailing DRFQ: V_j = S_ij in service (in-service clock), V_j = max(V_j, S_ij)
    (started clock)."""
    res_f[_U(j)] = t + s
    if network:  # the completion joins the event tree
        _tree_set(ev_key, ev_id, j, t + s)
    res_i[_U(j)] = slot
    res_i[_U(J + j)] = pk
    if policy == DRFQ:
        if in_service or (network and key > res_f[_U(J + j)]):
            res_f[_U(J + j)] = key
        if key > vglobal:
            vglobal = key
    elif policy == DRFQ_DOVETAIL:
        vtag = flow_f[sbf + _U(layout.o_vtags + pk * J + j)]
        if in_service or vtag > res_f[_U(J + j)]:
            res_f[_U(J + j)] = vtag
    else:
        res_f[_U(J + j)] = key
    ptype = flow_i[sb + _U(layout.o_type) + _U(pk)]
    nxt_res = next_resource[_U(ptype * J + j)]
    res_i[_U(2 * J + j)] = nxt_res
    if nxt_res >= 0:
        res_f[_U(3 * J + j)] = service[_U(ptype * J + nxt_res)]
    if debug:
        # per flow and resource: PF/BMF tags never decrease; every policy serves a flow's
        # packets in arrival order (DRFQ tags, given at injection, may arrive out of order
        # when packet types skip resources)
        order = key if (policy == PF or policy == BMF) else float(hid >> SLOT_BITS)
        if order < flow_f[sbf + _U(J + j)]:
            istate[I_VIOLATION] = BAD_TAG_ORDER
        flow_f[sbf + _U(J + j)] = order
    return vglobal


@njit(cache=True, inline="always", _nrt=False)
def _arrive(policy, debug, flow_i, flow_f, res_i, res_f, heap_key, heap_id, istate, service,
            next_resource, J, W, layout, slot, b, bf, pk, dest, s, seq, t, vglobal, model_fq,
            in_service, network, fq_mask, ev_key, ev_id, carried):
    """Packet ``pk`` (service time s there) of the flow in ``slot`` arrives at resource
    ``dest`` as arrival number ``seq``: PF/BMF tag (BR eqs. 5, 7; the flow is charged for
    its previous packet at dest), then either start it (dest idle, nothing waiting) or
    enqueue it and push the flow into dest's heap if it was not backlogged there. Returns
    the global virtual time."""
    o_key, o_fifo_pk, o_fifo_id, o_fifo_key, o_fifo_s = (
        layout.o_key, layout.o_fifo_pk, layout.o_fifo_id, layout.o_fifo_key, layout.o_fifo_s)
    at = b + _U(FI_RES + 3 * dest)
    queued = flow_i[at] + 1
    flow_i[at] = queued
    if policy == BMF:
        key = max(res_f[_U(J + dest)], flow_f[bf + _U(dest)])
        flow_f[bf + _U(dest)] = key + s / flow_f[bf + _U(layout.o_weight)]
    elif policy == PF:
        charge_at = bf + _U(layout.o_charge + dest)
        key = max(res_f[_U(J + dest)], flow_f[bf + _U(dest)] + flow_f[charge_at] / queued)
        flow_f[bf + _U(dest)] = key
        flow_f[charge_at] = s / flow_f[bf + _U(layout.o_weight)]
    elif policy == BOTTLENECK_FQ:
        # the BMF tag at the scheduled resource(s), FIFO elsewhere
        if (fq_mask[_U(dest)] if network else dest == model_fq):
            key = max(res_f[_U(J + dest)], flow_f[bf + _U(dest)])
            flow_f[bf + _U(dest)] = key + s / flow_f[bf + _U(layout.o_weight)]
        else:
            key = 0.0
    elif policy == FIFO or policy == MR3:
        key = 0.0  # equal keys: served by arrival number, first come first served
    elif policy == DRFQ and in_service and not network:
        key = carried  # the packet's tag, carried from its injection or its last resource
    else:
        key = flow_f[bf + _U(o_key + pk)]
    hid = (seq << SLOT_BITS) | slot
    if res_f[_U(dest)] == np.inf and res_i[_U(3 * J + dest)] == 0:
        # a busy period begins: idle since the last completion (0 when that was now)
        res_f[_U(2 * J + dest)] += t - res_f[_U(4 * J + dest)]
        return _begin_service(policy, debug, flow_i, flow_f, res_i, res_f, istate, service,
                              next_resource, J, layout, dest, t, slot, b, bf, pk, s, key,
                              hid, vglobal, in_service, network, ev_key, ev_id)
    n = flow_i[at + _U(2)]
    pos = flow_i[at + _U(1)] + n
    if pos >= W:
        pos -= W
    entry = _U(dest * W + pos)
    flow_i[b + _U(o_fifo_pk) + entry] = pk
    flow_i[b + _U(o_fifo_id) + entry] = hid
    flow_f[bf + _U(o_fifo_key) + entry] = key
    flow_f[bf + _U(o_fifo_s) + entry] = s
    flow_i[at + _U(2)] = n + 1
    if n == 0:
        size_at = res_i[_U(3 * J + dest)]
        _heap_push(heap_key, heap_id, size_at, J, dest, key, hid)
        res_i[_U(3 * J + dest)] = size_at + 1
    return vglobal


# _hold and _released are called, not inlined: Numba types an inlined function at every
# call site of every policy's loop, dead MR3 branches included, and inlined they added
# ~7 s to a drfq/pf/bmf first compilation; called, they are compiled once (MR3 pays a
# call per packet).
@njit(cache=True, _nrt=False, error_model="numpy")
def _hold(flow_i, flow_f, istate, layout, W, slot, b, bf, count, t):
    """MR3: ``count`` packets of the window of the flow in ``slot`` (records at b, bf)
    enter the router at time t and wait at its ingress; a flow that had none joins the
    tail of the round-robin list. The flow's held packets are released in order and take
    the free packet numbers in ring order (:func:`_inject`), so the numbers they will
    get are known now: the next ``count`` after the held ones, from the ring's head; their
    entry time (the start of their sojourn) is set here."""
    held = flow_i[b + _U(FI_HELD)]
    flow_i[b + _U(FI_HELD)] = held + count
    position = flow_i[b + _U(FI_FREE_HEAD)] + held
    for _ in range(count):
        if position >= W:
            position -= W
        flow_f[bf + _U(layout.o_entry) + _U(flow_i[b + _U(layout.o_free) + _U(position)])] = t
        position += 1
    if held == 0:
        flow_i[b + _U(FI_NEXT)] = -1
        tail = istate[I_RR_TAIL]
        if tail < 0:
            istate[I_RR_HEAD] = slot
            if istate[I_RR_END] < 0:
                istate[I_RR_END] = slot
        else:
            flow_i[_U(tail * layout.ni + FI_NEXT)] = slot
        istate[I_RR_TAIL] = slot


# MR3's ingress is two small steps around the event loop's one _inject/_arrive call site
# (_release_next inlined, _released called once per packet). It was one called function
# with its own copies of _inject and _arrive, and one more line in _arrive (utilisation)
# made MR3 3.2x slower (26.7 against 84 M services/s) — most likely LLVM no longer
# inlined it, so every event paid a call passing the model and layout tuples by value
# (BENCHMARKS.md). Timing MR3's packets from the ingress had looked 3.3x slower before
# for the same reason.
@njit(cache=True, inline="always", _nrt=False)
def _release_next(flow_i, flow_f, istate, fstate, layout, inflight):
    """MR3's ingress (Elastic Round Robin on dominant processing times, SPEC §3.1): while
    fewer than ``inflight`` packets are inside the tandem, the flow at the head of the
    round-robin list releases its next held packet to its first resource (FIFO there).
    Returns that flow's slot (the packet is counted inside and no longer held; the caller
    injects it and then calls :func:`_released`), or −1 when nothing is released.

    All in units of dominant time / weight: at the start of its turn flow i gets the
    allowance 1 + MaxSC(r−1) − SC_i; each packet it releases costs d / w (d = max_j s_j,
    ``type_charge``); its turn ends when the allowance is used up (≤ 0) or it holds no
    packet. Then SC_i = what it overshot, MaxSC(r) = max(MaxSC(r), SC_i); a flow with
    packets left goes to the tail, an empty one leaves the list with SC_i = 0. A round
    ends with the turn of the flow that was last in the list when the round began."""
    if istate[I_INSIDE] >= inflight or istate[I_RR_HEAD] < 0:
        return -1
    slot = istate[I_RR_HEAD]
    if istate[I_RR_OPEN] == 0:
        istate[I_RR_OPEN] = 1
        fstate[F_ALLOWANCE] = (1.0 + fstate[F_MAXSC_PREV]
                               - flow_f[_U(slot * layout.nf + layout.o_sc)])
    flow_i[_U(slot * layout.ni + FI_HELD)] -= 1
    istate[I_INSIDE] += 1
    return slot


@njit(cache=True, _nrt=False, error_model="numpy")
def _released(flow_i, flow_f, istate, fstate, layout, slot, b, bf, charge):
    """MR3: the flow in ``slot`` (records at b, bf) has released a packet of dominant cost
    ``charge`` (d / w): charge its allowance, and end its turn and the round when due
    (:func:`_release_next`)."""
    allowance = fstate[F_ALLOWANCE] - charge
    fstate[F_ALLOWANCE] = allowance
    held = flow_i[b + _U(FI_HELD)]
    if allowance <= 0.0 or held == 0:  # the turn ends
        surplus = -allowance
        if surplus > fstate[F_MAXSC_CUR]:
            fstate[F_MAXSC_CUR] = surplus
        istate[I_RR_OPEN] = 0
        nxt = flow_i[b + _U(FI_NEXT)]
        istate[I_RR_HEAD] = nxt
        if nxt < 0:
            istate[I_RR_TAIL] = -1
        if held > 0:
            flow_f[bf + _U(layout.o_sc)] = surplus
            flow_i[b + _U(FI_NEXT)] = -1
            tail = istate[I_RR_TAIL]
            if tail < 0:
                istate[I_RR_HEAD] = slot
            else:
                flow_i[_U(tail * layout.ni + FI_NEXT)] = slot
            istate[I_RR_TAIL] = slot
        else:
            flow_f[bf + _U(layout.o_sc)] = 0.0
        if istate[I_RR_END] == slot:  # the round ends
            fstate[F_MAXSC_PREV] = fstate[F_MAXSC_CUR]
            fstate[F_MAXSC_CUR] = 0.0
            istate[I_RR_END] = istate[I_RR_TAIL]


# MR3 on several routers (SPEC §3.2): every router runs the tandem's ingress on its own.
# Called, not inlined, for the reasons given at _hold.
@njit(cache=True, _nrt=False, error_model="numpy")
def _ingress_reset(flow_i, flow_f, layout, W, R, b, bf):
    """MR3 on several routers: a new flow holds nothing at any ingress, SC_r = 0."""
    for r in range(R):
        base = b + _U(layout.o_ingress + r * (IG_RING + 2 * W))
        flow_i[base + _U(IG_HELD)] = 0
        flow_i[base + _U(IG_HEAD)] = 0
        flow_i[base + _U(IG_NEXT)] = -1
        flow_f[bf + _U(layout.o_ingress_sc + r)] = 0.0


@njit(cache=True, _nrt=False, error_model="numpy")
def _ingress_join(flow_i, istate, layout, W, r, slot, b, pk, dest):
    """MR3 on several routers: packet ``pk`` of the flow in ``slot`` (int record at b),
    whose next resource is ``dest``, enters router r and waits at r's ingress, behind the
    flow's other packets held there; a flow that held none there joins the tail of r's
    round-robin list (a packet injected enters its first router so; a packet that
    completes at a resource of another router enters this one so)."""
    base = b + _U(layout.o_ingress + r * (IG_RING + 2 * W))
    held = flow_i[base + _U(IG_HELD)]
    position = flow_i[base + _U(IG_HEAD)] + held
    if position >= W:
        position -= W
    flow_i[base + _U(IG_RING + 2 * position)] = pk
    flow_i[base + _U(IG_RING + 2 * position + 1)] = dest
    flow_i[base + _U(IG_HELD)] = held + 1
    flow_i[b + _U(FI_HELD)] += 1
    if held == 0:
        flow_i[base + _U(IG_NEXT)] = -1
        g = N_ISTATE + IN_SIZE * r
        tail = istate[g + IN_TAIL]
        if tail < 0:
            istate[g + IN_HEAD] = slot
            if istate[g + IN_END] < 0:
                istate[g + IN_END] = slot
        else:
            flow_i[_U(tail * layout.ni + layout.o_ingress + r * (IG_RING + 2 * W)
                      + IG_NEXT)] = slot
        istate[g + IN_TAIL] = slot


@njit(cache=True, _nrt=False, error_model="numpy")
def _ingress_release(flow_i, flow_f, istate, fstate, layout, W, R, first):
    """MR3 on several routers: the next release of the routers' ingresses, in router
    order from router ``first`` (the routers before it release nothing more in this
    event: a release changes only its own router's state). Router r releases while
    fewer than L_r packets are inside it (released by its ingress and not yet left it)
    and its list holds a flow: the head flow's oldest packet held at r, with the rule of
    :func:`_release_next` on r's own list, MaxSC and allowance. Returns (r, slot,
    packet, next resource), r = −1 when no router releases."""
    for r in range(first, R):
        g = N_ISTATE + IN_SIZE * r
        slot = istate[g + IN_HEAD]
        if istate[g + IN_INSIDE] >= istate[g + IN_LIMIT] or slot < 0:
            continue
        base = _U(slot * layout.ni + layout.o_ingress + r * (IG_RING + 2 * W))
        if istate[g + IN_OPEN] == 0:
            istate[g + IN_OPEN] = 1
            fstate[N_FSTATE + FN_SIZE * r + FN_ALLOWANCE] = (
                1.0 + fstate[N_FSTATE + FN_SIZE * r + FN_MAXSC_PREV]
                - flow_f[_U(slot * layout.nf + layout.o_ingress_sc + r)])
        head = flow_i[base + _U(IG_HEAD)]
        pk = flow_i[base + _U(IG_RING + 2 * head)]
        dest = flow_i[base + _U(IG_RING + 2 * head + 1)]
        head += 1
        flow_i[base + _U(IG_HEAD)] = 0 if head == W else head
        flow_i[base + _U(IG_HELD)] -= 1
        flow_i[_U(slot * layout.ni + FI_HELD)] -= 1
        istate[g + IN_INSIDE] += 1
        return r, slot, pk, dest
    return -1, 0, 0, 0


@njit(cache=True, _nrt=False, error_model="numpy")
def _ingress_released(flow_i, flow_f, istate, fstate, layout, W, r, slot, b, bf, charge):
    """MR3 on several routers: router r's ingress has released a packet of the flow in
    ``slot`` (records at b, bf) of cost ``charge`` (its dominant time over r's resources
    / w): :func:`_released` on router r's list, MaxSC and allowance, and the flow's
    packets held and SC_r at r."""
    f = N_FSTATE + FN_SIZE * r
    g = N_ISTATE + IN_SIZE * r
    base = b + _U(layout.o_ingress + r * (IG_RING + 2 * W))
    allowance = fstate[f + FN_ALLOWANCE] - charge
    fstate[f + FN_ALLOWANCE] = allowance
    held = flow_i[base + _U(IG_HELD)]
    if allowance <= 0.0 or held == 0:  # the turn ends
        surplus = -allowance
        if surplus > fstate[f + FN_MAXSC_CUR]:
            fstate[f + FN_MAXSC_CUR] = surplus
        istate[g + IN_OPEN] = 0
        nxt = flow_i[base + _U(IG_NEXT)]
        istate[g + IN_HEAD] = nxt
        if nxt < 0:
            istate[g + IN_TAIL] = -1
        if held > 0:
            flow_f[bf + _U(layout.o_ingress_sc + r)] = surplus
            flow_i[base + _U(IG_NEXT)] = -1
            tail = istate[g + IN_TAIL]
            if tail < 0:
                istate[g + IN_HEAD] = slot
            else:
                flow_i[_U(tail * layout.ni + layout.o_ingress + r * (IG_RING + 2 * W)
                          + IG_NEXT)] = slot
            istate[g + IN_TAIL] = slot
        else:
            flow_f[bf + _U(layout.o_ingress_sc + r)] = 0.0
        if istate[g + IN_END] == slot:  # the round ends
            fstate[f + FN_MAXSC_PREV] = fstate[f + FN_MAXSC_CUR]
            fstate[f + FN_MAXSC_CUR] = 0.0
            istate[g + IN_END] = istate[g + IN_TAIL]


@njit(cache=True, inline="always", _nrt=False)
def _lone_flow(policy, budget, model, flow_i, flow_f, res_i, res_f, heap_key, heap_id,
               free_slots, completion, sojourn_hist, sojourn_sum, flows, J, W, layout,
               slot, t_arrival, t, vglobal, seq, services, events, outstanding, free_top,
               active):
    """Run the events of the only flow in progress until the next flow arrival (or the
    flow's end, or the budget), with the flow's state in local variables.

    Only for a flow whose packets all take the same two resources A → B (one packet type,
    no round-trip time) under PF, BMF or memoryless DRFQ. The events, tags, arrival numbers
    and times are exactly those of the general loop (same operations in the same order);
    what it leaves out is bookkeeping that a single flow makes trivial: the heaps (each
    holds at most this flow, keyed by its FIFO head, restored on exit), the event-kind
    dispatch and the scan of every resource. Returns the loop's scalars (t, vglobal, seq,
    services, events, outstanding, free_top, active).
    """
    service, next_resource = model.service, model.next_resource
    ni, nf = layout.ni, layout.nf
    o_free, o_type, o_fifo_pk, o_fifo_id, o_key = (
        layout.o_free, layout.o_type, layout.o_fifo_pk, layout.o_fifo_id, layout.o_key)
    o_fifo_key, o_fifo_s = layout.o_fifo_key, layout.o_fifo_s
    b = _U(slot * ni)
    bf = _U(slot * nf)
    ptype = flow_i[b + _U(FI_TYPE0)]
    A = model.first_resource[_U(ptype)]
    B = next_resource[_U(ptype * J + A)]
    sA = service[_U(ptype * J + A)]
    sB = service[_U(ptype * J + B)]
    charge = model.type_charge[_U(ptype)]
    w = flow_f[bf + _U(layout.o_weight)]
    costA = sA / w  # what a packet charges at A and at B (BMF, PF)
    costB = sB / w
    a_first = A < B
    ringA = _U(A * W)
    ringB = _U(B * W)
    cA = res_f[_U(A)]
    cB = res_f[_U(B)]
    VA = res_f[_U(J + A)]
    VB = res_f[_U(J + B)]
    pkA = res_i[_U(J + A)]
    pkB = res_i[_U(J + B)]
    atA = b + _U(FI_RES + 3 * A)
    atB = b + _U(FI_RES + 3 * B)
    qA = flow_i[atA]
    hA = flow_i[atA + _U(1)]
    nA = flow_i[atA + _U(2)]
    qB = flow_i[atB]
    hB = flow_i[atB + _U(1)]
    nB = flow_i[atB + _U(2)]
    # the tag state: F (BMF, DRFQ), or PF's S and the previous packet's charge
    if policy == DRFQ:
        prevA = prevB = flow_f[bf]
    else:
        prevA = flow_f[bf + _U(A)]
        prevB = flow_f[bf + _U(B)]
    charge_prevA = flow_f[bf + _U(layout.o_charge + A)]
    charge_prevB = flow_f[bf + _U(layout.o_charge + B)]
    in_system = flow_i[b + _U(FI_IN_SYSTEM)]
    to_inject = flow_i[b + _U(FI_TO_INJECT)]
    sent = flow_i[b + _U(FI_SENT)]
    n_free = flow_i[b + _U(FI_FREE_N)]
    cell = flow_i[b + _U(FI_SOJOURN)]
    o_entry = layout.o_entry
    # idle time before the busy period and last completion of A and B (utilisation),
    # updated in the general loop's order (busy_time)
    idleA = res_f[_U(2 * J + A)]
    idleB = res_f[_U(2 * J + B)]
    lastA = res_f[_U(4 * J + A)]
    lastB = res_f[_U(4 * J + B)]
    first_event = events
    started_A = started_B = False
    in_service = model.in_service
    while events < budget:
        # lowest resource index first at equal times; a completion at the arrival's time
        # comes before the arrival
        if cA < cB or (cA == cB and a_first):
            d = cA
            at_A = True
        else:
            d = cB
            at_A = False
        if d > t_arrival or d == np.inf:
            break
        t = d
        events += 1
        if at_A:  # the packet moves on to B
            lastA = t
            qA -= 1
            pk = pkA
            qB += 1
            if policy == BMF:
                key = max(VB, prevB)
                prevB = key + costB
            elif policy == PF:
                key = max(VB, prevB + charge_prevB / qB)
                prevB = key
                charge_prevB = costB
            elif in_service:  # A's tag in service is this packet's
                key = VA
            else:
                key = flow_f[bf + _U(o_key + pk)]
            hid = (seq << SLOT_BITS) | slot
            seq += 1
            if cB == np.inf and nB == 0:
                idleB += t - lastB
                cB = t + sB
                pkB = pk
                started_B = True
                if policy == DRFQ and key > vglobal:
                    vglobal = key
                if policy != DRFQ or in_service:
                    VB = key
            else:
                pos = hB + nB
                if pos >= W:
                    pos -= W
                entry = ringB + _U(pos)
                flow_i[b + _U(o_fifo_pk) + entry] = pk
                flow_i[b + _U(o_fifo_id) + entry] = hid
                flow_f[bf + _U(o_fifo_key) + entry] = key
                flow_f[bf + _U(o_fifo_s) + entry] = sB
                nB += 1
            if nA > 0:  # A starts its next packet
                entry = ringA + _U(hA)
                pkA = flow_i[b + _U(o_fifo_pk) + entry]
                key = flow_f[bf + _U(o_fifo_key) + entry]
                cA = t + flow_f[bf + _U(o_fifo_s) + entry]
                started_A = True
                if policy == DRFQ and key > vglobal:
                    vglobal = key
                if policy != DRFQ or in_service:
                    VA = key
                hA += 1
                if hA == W:
                    hA = 0
                nA -= 1
            else:
                cA = np.inf
        else:  # the packet leaves the router
            lastB = t
            _record_sojourn(sojourn_hist, sojourn_sum, cell,
                            t - flow_f[bf + _U(o_entry) + _U(pkB)])
            qB -= 1
            in_system -= 1
            flow_i[b + _U(o_free + n_free)] = pkB
            n_free += 1
            finished = False
            if to_inject > 0:  # inject the next packet; it arrives at A
                sent += 1
                to_inject -= 1
                in_system += 1
                n_free -= 1
                pk = flow_i[b + _U(o_free + n_free)]
                flow_i[b + _U(o_type + pk)] = ptype
                flow_f[bf + _U(o_entry) + _U(pk)] = t
                qA += 1
                if policy == BMF:
                    key = max(VA, prevA)
                    prevA = key + costA
                elif policy == PF:
                    key = max(VA, prevA + charge_prevA / qA)
                    prevA = key
                    charge_prevA = costA
                else:  # memoryless DRFQ: V is A's tag in service, else the last one out
                    # in-service clock: V is one of this flow's own tags (in service, or
                    # the departing packet's), all at most its finish prevA, so the key is
                    # prevA; the started clock's V may be another flow's larger tag
                    key = prevA if in_service else max(vglobal, prevA)
                    prevA = key + charge
                    if not in_service:
                        flow_f[bf + _U(o_key + pk)] = key
                hid = (seq << SLOT_BITS) | slot
                seq += 1
                if cA == np.inf and nA == 0:
                    idleA += t - lastA
                    cA = t + sA
                    pkA = pk
                    started_A = True
                    if policy == DRFQ and key > vglobal:
                        vglobal = key
                    if policy != DRFQ or in_service:
                        VA = key
                else:
                    pos = hA + nA
                    if pos >= W:
                        pos -= W
                    entry = ringA + _U(pos)
                    flow_i[b + _U(o_fifo_pk) + entry] = pk
                    flow_i[b + _U(o_fifo_id) + entry] = hid
                    flow_f[bf + _U(o_fifo_key) + entry] = key
                    flow_f[bf + _U(o_fifo_s) + entry] = sA
                    nA += 1
            elif in_system == 0:
                index = flow_i[b + _U(FI_INDEX)]
                if index < flows:
                    completion[_U(index)] = t
                    outstanding -= 1
                free_slots[_U(free_top)] = slot
                free_top += 1
                active -= 1
                finished = True
            if nB > 0:  # B starts its next packet
                entry = ringB + _U(hB)
                pkB = flow_i[b + _U(o_fifo_pk) + entry]
                key = flow_f[bf + _U(o_fifo_key) + entry]
                cB = t + flow_f[bf + _U(o_fifo_s) + entry]
                started_B = True
                if policy == DRFQ and key > vglobal:
                    vglobal = key
                if policy != DRFQ or in_service:
                    VB = key
                hB += 1
                if hB == W:
                    hB = 0
                nB -= 1
            else:
                cB = np.inf
            if finished:
                break
    services += events - first_event
    # write the state back in the general loop's layout
    res_f[_U(A)] = cA
    res_f[_U(B)] = cB
    res_f[_U(2 * J + A)] = idleA
    res_f[_U(2 * J + B)] = idleB
    res_f[_U(4 * J + A)] = lastA
    res_f[_U(4 * J + B)] = lastB
    res_f[_U(J + A)] = VA
    res_f[_U(J + B)] = VB
    if policy == DRFQ:
        flow_f[bf] = prevA
    else:
        flow_f[bf + _U(A)] = prevA
        flow_f[bf + _U(B)] = prevB
        if policy == PF:
            flow_f[bf + _U(layout.o_charge + A)] = charge_prevA
            flow_f[bf + _U(layout.o_charge + B)] = charge_prevB
    if started_A:  # the packet in service (or, idle, the last one started), as at a start
        res_i[_U(A)] = slot
        res_i[_U(J + A)] = pkA
        res_i[_U(2 * J + A)] = B
        res_f[_U(3 * J + A)] = sB
    if started_B:
        res_i[_U(B)] = slot
        res_i[_U(J + B)] = pkB
        res_i[_U(2 * J + B)] = -1
    res_i[_U(3 * J + A)] = 1 if nA > 0 else 0
    if nA > 0:
        heap_key[_U(A)] = flow_f[bf + _U(o_fifo_key) + ringA + _U(hA)]
        heap_id[_U(A)] = flow_i[b + _U(o_fifo_id) + ringA + _U(hA)]
    res_i[_U(3 * J + B)] = 1 if nB > 0 else 0
    if nB > 0:
        heap_key[_U(B)] = flow_f[bf + _U(o_fifo_key) + ringB + _U(hB)]
        heap_id[_U(B)] = flow_i[b + _U(o_fifo_id) + ringB + _U(hB)]
    flow_i[atA] = qA
    flow_i[atA + _U(1)] = hA
    flow_i[atA + _U(2)] = nA
    flow_i[atB] = qB
    flow_i[atB + _U(1)] = hB
    flow_i[atB + _U(2)] = nB
    flow_i[b + _U(FI_IN_SYSTEM)] = in_system
    flow_i[b + _U(FI_TO_INJECT)] = to_inject
    flow_i[b + _U(FI_SENT)] = sent
    flow_i[b + _U(FI_FREE_N)] = n_free
    return t, vglobal, seq, services, events, outstanding, free_top, active



# The lone-flow loop is called, not inlined: inlined into the event loop it cost the
# general path 9% at load 0.9 (register allocation of the larger loop), and it is entered
# once per lone-flow period, not once per event. One written-out function per policy (the
# policy a compile-time constant, as in the loops of _make_event_loop below). A single
# function with the policy as a run-time argument compiles 10 s faster and ran within
# noise of these (BENCHMARKS.md); these are what was timed.
@njit(cache=True, _nrt=False, error_model="numpy")
def _lone_flow_drfq(budget, model, flow_i, flow_f, res_i, res_f, heap_key, heap_id,
                    free_slots, completion, sojourn_hist, sojourn_sum, flows, J, W,
                    layout, slot, t_arrival, t, vglobal, seq, services, events, outstanding,
                    free_top, active):
    return _lone_flow(DRFQ, budget, model, flow_i, flow_f, res_i, res_f, heap_key,
                      heap_id, free_slots, completion, sojourn_hist, sojourn_sum,
                      flows, J, W, layout, slot, t_arrival, t, vglobal, seq, services,
                      events, outstanding, free_top, active)


@njit(cache=True, _nrt=False, error_model="numpy")
def _lone_flow_pf(budget, model, flow_i, flow_f, res_i, res_f, heap_key, heap_id,
                  free_slots, completion, sojourn_hist, sojourn_sum, flows, J, W,
                  layout, slot, t_arrival, t, vglobal, seq, services, events, outstanding,
                  free_top, active):
    return _lone_flow(PF, budget, model, flow_i, flow_f, res_i, res_f, heap_key,
                      heap_id, free_slots, completion, sojourn_hist, sojourn_sum,
                      flows, J, W, layout, slot, t_arrival, t, vglobal, seq, services,
                      events, outstanding, free_top, active)


@njit(cache=True, _nrt=False, error_model="numpy")
def _lone_flow_bmf(budget, model, flow_i, flow_f, res_i, res_f, heap_key, heap_id,
                   free_slots, completion, sojourn_hist, sojourn_sum, flows, J, W,
                   layout, slot, t_arrival, t, vglobal, seq, services, events, outstanding,
                   free_top, active):
    return _lone_flow(BMF, budget, model, flow_i, flow_f, res_i, res_f, heap_key,
                      heap_id, free_slots, completion, sojourn_hist, sojourn_sum,
                      flows, J, W, layout, slot, t_arrival, t, vglobal, seq, services,
                      events, outstanding, free_top, active)


# No array is allocated inside the loop, so it runs without Numba's reference counting
# (NRT): the atomic incref/decref pairs around array temporaries cost ~40% of the time.
#
# Why one loop body, its phases as delimited sections (issue 21, measured): each phase as
# its own inline="always" function (one call site each, the same code after inlining)
# kept the speed (once a merge of every loop scalar at the lone-flow turn, which had
# cost drfq and bmf 7-10%, was avoided) but made the first compilation of drfq,pf,bmf
# ~30% longer (70 against 53 s CPU, idle machine, benchmarks/bench_compile.py; only the
# small phases split, the three that inline helpers kept here: +3%). The time is Numba
# copying IR when it inlines: an inlined function's IR is deep-copied block by block,
# each block with its whole variable scope (the loop body was then itself an inlined
# function, copied into each per-policy loop); a phase function adds a level of copies
# and its parameters and results to the scope (copied variables +30%; +7% for the small
# phases alone).

#: a loop constant left to run time (the general loops: :func:`_make_event_loop`)
ANY = -1
_LOOP_NAMES: set[str] = set()  # the loops made so far (each its own cache index)


def _make_event_loop(fixed_policy: int, checked: bool, explicit: bool, fixed_clock: int,
                     fixed_network: int):
    """Build one compiled event loop: ``loop(policy, debug, lone_flow, budget, model,
    arrivals, state)``, a status code (the loop is described below).

    ``fixed_policy`` (a policy code), ``fixed_clock`` (1: DRFQ's in-service clock, 0:
    the started one) and ``fixed_network`` (1: several routers, :func:`_tree_set`,
    :func:`_router_tag`; 0: the tandem) are the loop's constants, or ANY to read the
    ``policy`` argument, ``model.in_service`` and the model's routers at run time;
    ``checked``: the ``debug`` argument is read (else debug is off); ``explicit``: the
    loop handles open-loop flows, stop times and timelines.

    Why a factory (issue 26, measured: BENCHMARKS.md "The main job"): Numba types and
    compiles every branch it cannot prove dead, and it proves a branch dead only when
    the condition is a constant of the function being compiled (a closure variable or a
    global), not an argument bound by inlining. The policy tests in the loop's body that
    guard calls or larger blocks are therefore written ``MR3_LOOP or ANY_POLICY and
    policy == MR3``: in the loop of another policy both closure constants are False and
    the MR3 code is never typed, in the MR3 loop the first is True, and only the general
    loops test at run time; likewise ``ROUTERS and network``, ``ROUTED_MR3 and
    routed_mr3`` and ``LONE_FLOW and lone_flow`` (tandem loops without explicit flows
    only: the lone-flow loop keeps neither the network's event tree nor open-loop flows,
    stop times or timelines). Tests that guard a store or two stay plain run-time tests
    (``policy == MR3``), and so do the inlined helpers' (:func:`_inject`,
    :func:`_arrive`, ...), which take the policy as an argument: LLVM folds them. Each
    loop gets its own name, so that Numba's disk cache (one index per function name and
    line, keyed by the closure's values) keeps the loops apart and parallel first
    compilations never share an index file; a name made twice is refused."""
    ANY_POLICY = fixed_policy == ANY
    DRFQ_LOOP = fixed_policy == DRFQ
    DRFQ_DOVETAIL_LOOP = fixed_policy == DRFQ_DOVETAIL
    PF_LOOP = fixed_policy == PF
    BMF_LOOP = fixed_policy == BMF
    MR3_LOOP = fixed_policy == MR3
    ROUTERS = fixed_network != 0  # the loop may run a network
    # the loop may run MR3 with one ingress per router
    ROUTED_MR3 = (MR3_LOOP or ANY_POLICY) and ROUTERS
    LONE_FLOW = fixed_network == 0 and not explicit  # see above

    def loop(policy, debug, lone_flow, budget, model, arrivals, state):
        """Advance the simulation by at most ``budget`` events; return a status code.

        One event, in sections marked ``# ==== phase``: 0, a lone flow runs its events in
        :func:`_lone_flow` until the next arrival (``lone_flow``; not in debug runs, which
        check the invariants after every event, nor for dovetailing DRFQ); the next event by
        (time, priority); 1, its bookkeeping and packet movements (a completion, a
        round-trip injection or a flow arrival, then an open-loop flow's next offer, then
        the injections, or MR3's ingress releases, each packet arriving at its first
        resource); 2, every idle resource with waiting packets starts one; the debug checks.

        ``model``, ``arrivals``, ``state``: a :class:`Model`, :class:`Arrivals` and
        :class:`State` (named tuples of plain arrays and scalars). ``network`` (the
        loop's constant, or from the model in the general loops): routers with their own
        DRFQ (:func:`_router_tag` when a packet enters one) and bottleneck FQ
        on ``model.fq_mask`` (SPEC §3.2); False, the tandem code exactly as before.
        """
        if not ANY_POLICY:
            policy = fixed_policy
        if not checked:
            debug = False
        in_service = model.in_service if fixed_clock == ANY else fixed_clock == 1
        network = ((model.router_charge.shape[0] > model.type_charge.shape[0]
                    or model.fq_mask.sum() > 1) if fixed_network == ANY
                   else fixed_network == 1)
        # the rest of the model is used by _inject, which takes the whole tuple
        service, next_resource, class_type0, class_ntypes, class_rtt, class_weight, window = (
            model.service, model.next_resource, model.class_type0, model.class_ntypes,
            model.class_rtt, model.class_weight, model.window)
        (arr_time, arr_class, arr_size, n_arrivals, flows, completion, timeline, dropped,
         sojourn_hist, sojourn_sum, _, _, _) = arrivals
        class_window, class_period, class_stop = (model.class_window, model.class_period,
                                                  model.class_stop)
        (istate, fstate, free_slots, flow_i, flow_f, res_i, res_f, heap_key, heap_id, pend_time,
         pend_slot, pend_head, pend_len, in_use, ev_key, ev_id) = state
        J = res_i.shape[0] // 4
        K = class_rtt.shape[0]
        W = window
        pend_cap = pend_time.shape[0] // K
        # routers (1: the tandem); MR3 on several routers keeps an ingress record per router
        R = model.router_charge.shape[0] // model.type_charge.shape[0]
        routed_mr3 = policy == MR3 and network  # (the uses add ROUTED_MR3 to prune)
        layout = record_layout(J, W, R if routed_mr3 else 0)
        ni, nf, o_free = layout.ni, layout.nf, layout.o_free
        o_fifo_pk, o_fifo_id = layout.o_fifo_pk, layout.o_fifo_id
        o_fifo_key, o_fifo_s = layout.o_fifo_key, layout.o_fifo_s
        o_charge, o_weight = layout.o_charge, layout.o_weight
        fq = model.fq_resource
        has_rtt = False  # round-trip or open-loop injections use the timed rings
        special = False  # open-loop flows or stop times (explicit flows)
        for k in range(K):
            if class_rtt[k] > 0.0 or (explicit and class_period[k] > 0.0):
                has_rtt = True
            if explicit and (class_period[k] > 0.0 or class_stop[k] < np.inf):
                special = True
        has_timeline = explicit and model.interval > 0.0
        bins = timeline.shape[0] // (K * J) if has_timeline else 0
        t = fstate[F_TIME]
        vglobal = fstate[F_VGLOBAL]
        nxt = istate[I_NEXT_ARRIVAL]
        outstanding = istate[I_OUTSTANDING]
        seq = istate[I_SEQ]
        services = istate[I_SERVICES]
        active = istate[I_ACTIVE]
        free_top = istate[I_FREE_TOP]
        t_arrival = arr_time[_U(nxt)] if nxt < n_arrivals else np.inf
        events = istate[I_EVENTS] * 0  # int64 from the start: a literal 0 makes Numba
        # compile the lone-flow loops twice (once for Literal[int](0), once for int64)
        status = BUDGET
        while events < budget:
            if outstanding == 0:
                status = DONE
                break
            if nxt >= n_arrivals:
                status = NEED_ARRIVALS
                break
            # ==== phase 0: a lone flow's events, until the next arrival
            if (LONE_FLOW and lone_flow and active == 1 and not debug
                    and (DRFQ_LOOP or PF_LOOP or BMF_LOOP
                         or ANY_POLICY and (policy == DRFQ or policy == PF or policy == BMF))):
                lone = -1
                for j in range(J):
                    if res_f[j] < np.inf:
                        lone = res_i[j]
                        break
                if lone >= 0:
                    b = _U(lone * ni)
                    ptype = flow_i[b + _U(FI_TYPE0)]
                    first = model.first_resource[_U(ptype)]
                    second = next_resource[_U(ptype * J + first)]
                    if (flow_i[b + _U(FI_NTYPES)] == 1 and flow_i[b + _U(FI_PENDING)] == 0
                            and not (has_rtt and class_rtt[_U(flow_i[b + _U(FI_CLASS)])] > 0.0)
                            and second >= 0 and next_resource[_U(ptype * J + second)] < 0):
                        if BMF_LOOP or ANY_POLICY and policy == BMF:
                            scalars = _lone_flow_bmf(budget, model, flow_i, flow_f, res_i,
                                                     res_f, heap_key, heap_id, free_slots,
                                                     completion, sojourn_hist, sojourn_sum,
                                                     flows, J, W, layout, lone, t_arrival, t,
                                                     vglobal, seq, services, events,
                                                     outstanding, free_top, active)
                        elif PF_LOOP or ANY_POLICY and policy == PF:
                            scalars = _lone_flow_pf(budget, model, flow_i, flow_f, res_i, res_f,
                                                    heap_key, heap_id, free_slots, completion,
                                                    sojourn_hist, sojourn_sum, flows, J, W,
                                                    layout, lone, t_arrival, t,
                                                    vglobal, seq, services, events, outstanding,
                                                    free_top, active)
                        else:
                            scalars = _lone_flow_drfq(budget, model, flow_i, flow_f, res_i,
                                                      res_f, heap_key, heap_id, free_slots,
                                                      completion, sojourn_hist, sojourn_sum,
                                                      flows, J, W, layout, lone, t_arrival, t,
                                                      vglobal, seq, services, events,
                                                      outstanding, free_top, active)
                        t, vglobal, seq, services, events, outstanding, free_top, active = scalars
                        if events >= budget or outstanding == 0:
                            continue
            # ==== the next event: (time, priority) lexicographic; strict < keeps the lower
            # priority
            best_t = t_arrival
            kind = 2  # 0 completion, 1 round-trip injection, 2 flow arrival
            which = 0
            if ROUTERS and network:  # the earliest completion (_first_completion)
                first_t, first_j = _first_completion(ev_key, ev_id)
                if first_t < np.inf and first_t <= best_t:
                    best_t = first_t
                    kind = 0
                    which = first_j
            else:
                for j in range(J):
                    d = res_f[j]  # ∞ when idle
                    if d < best_t or (d == best_t and kind == 2):
                        best_t = d
                        kind = 0
                        which = j
            if has_rtt:
                for k in range(K):
                    if pend_len[k] > 0:
                        when = pend_time[_U(k * pend_cap + pend_head[k])]
                        if when < best_t or (when == best_t and kind == 2):
                            best_t = when
                            kind = 1
                            which = k
            if best_t == np.inf:  # nothing left to happen: an explicit trace ran out
                status = NEED_ARRIVALS
                break
            if kind == 2 and free_top == 0:
                status = NEED_CAPACITY
                break
            t = best_t
            events += 1
            # ==== phase 1: event bookkeeping and packet movements (inject and/or arrive)
            # packets injected by this event, all from one flow (slot, records b and bf, class
            # k): one call site for _inject and _arrive keeps the loop's first compilation short
            # (Numba inlines every call site of an inline="always" function separately)
            n_inject = 0
            offer_next = False  # an open-loop flow's next offer is scheduled after injecting
            slot = 0
            b = _U(0)
            bf = _U(0)
            k = 0
            if kind == 0:  # ---- a completion at resource `which`
                done = which
                slot = res_i[_U(done)]
                pk = res_i[_U(J + done)]
                target = res_i[_U(2 * J + done)]
                s = res_f[_U(3 * J + done)]
                res_f[_U(done)] = np.inf
                res_f[_U(4 * J + done)] = t  # idle from now unless it starts another packet
                # (networks: its leaf in the event tree is set at the end of phase 2, once,
                # whether it starts another packet or stays idle)
                services += 1
                b = _U(slot * ni)
                bf = _U(slot * nf)
                if explicit and has_timeline:
                    ptype = flow_i[b + _U(layout.o_type) + _U(pk)]
                    _record_timeline(timeline, (flow_i[b + _U(FI_CLASS)] * J + done) * bins,
                                     bins, model.interval, t, service[_U(ptype * J + done)])
                flow_i[b + _U(FI_RES + 3 * done)] -= 1
                if (target >= 0 and ROUTED_MR3 and routed_mr3
                        and model.router[_U(target)] != model.router[_U(done)]):
                    # MR3: it leaves its router and waits at the next one's ingress
                    istate[N_ISTATE + IN_SIZE * model.router[_U(done)] + IN_INSIDE] -= 1
                    _ingress_join(flow_i, istate, layout, W, model.router[_U(target)], slot, b,
                                  pk, target)
                elif target >= 0:  # on to the next resource
                    if (ROUTERS and (DRFQ_LOOP or DRFQ_DOVETAIL_LOOP
                         or ANY_POLICY and (policy == DRFQ or policy == DRFQ_DOVETAIL))
                            and network
                            and model.router[_U(target)] != model.router[_U(done)]):
                        _router_tag(policy, flow_f, res_f, J, layout, model, bf, pk,
                                    flow_i[b + _U(layout.o_type) + _U(pk)],
                                    model.router[_U(target)], in_service)
                    vglobal = _arrive(policy, debug, flow_i, flow_f, res_i, res_f, heap_key,
                                      heap_id, istate, service, next_resource, J, W, layout,
                                      slot, b, bf, pk, target, s, seq, t, vglobal, fq,
                                      in_service, network, model.fq_mask, ev_key, ev_id,
                                      res_f[_U(J + done)])
                    seq += 1
                else:  # the packet leaves the router
                    k = flow_i[b + _U(FI_CLASS)]
                    _record_sojourn(sojourn_hist, sojourn_sum, flow_i[b + _U(FI_SOJOURN)],
                                    t - flow_f[bf + _U(layout.o_entry) + _U(pk)])
                    flow_i[b + _U(FI_IN_SYSTEM)] -= 1
                    n_free = flow_i[b + _U(FI_FREE_N)]
                    if policy == MR3:  # the ring's tail
                        position = flow_i[b + _U(FI_FREE_HEAD)] + n_free
                        position -= W if position >= W else 0
                        flow_i[b + _U(o_free) + _U(position)] = pk
                    else:
                        flow_i[b + _U(o_free + n_free)] = pk
                    flow_i[b + _U(FI_FREE_N)] = n_free + 1
                    reserved = flow_i[b + _U(FI_PENDING)]
                    if ROUTED_MR3 and routed_mr3:  # (its held packets are injected: counted
                        # in FI_IN_SYSTEM)
                        istate[N_ISTATE + IN_SIZE * model.router[_U(done)] + IN_INSIDE] -= 1
                    elif policy == MR3:  # packets held at the ingress are reserved too
                        istate[I_INSIDE] -= 1
                        reserved += flow_i[b + _U(FI_HELD)]
                    open_loop = False
                    if explicit and special:
                        if t >= class_stop[_U(k)]:  # the flow stops: cancel what is not sent
                            flow_i[b + _U(FI_TO_INJECT)] = reserved
                        open_loop = class_period[_U(k)] > 0.0  # departures inject nothing
                    if flow_i[b + _U(FI_TO_INJECT)] > reserved and not open_loop:
                        # pending injections are already reserved
                        if has_rtt and class_rtt[_U(k)] > 0.0:
                            pos = (pend_head[k] + pend_len[k]) % pend_cap
                            pend_time[_U(k * pend_cap + pos)] = t + class_rtt[_U(k)]
                            pend_slot[_U(k * pend_cap + pos)] = slot
                            pend_len[k] += 1
                            flow_i[b + _U(FI_PENDING)] += 1
                        elif (MR3_LOOP or ANY_POLICY and policy == MR3) and not network:
                            _hold(flow_i, flow_f, istate, layout, W, slot, b, bf, 1, t)
                        else:
                            n_inject = 1
                    elif flow_i[b + _U(FI_IN_SYSTEM)] == 0 and reserved == 0:
                        index = flow_i[b + _U(FI_INDEX)]
                        if index < flows:
                            completion[_U(index)] = t
                            outstanding -= 1
                        free_slots[_U(free_top)] = slot
                        free_top += 1
                        active -= 1
            elif kind == 1:  # ---- a round-trip (or open-loop) injection of class `which`
                k = which
                slot = pend_slot[_U(k * pend_cap + pend_head[k])]
                pend_head[k] = (pend_head[k] + 1) % pend_cap
                pend_len[k] -= 1
                b = _U(slot * ni)
                bf = _U(slot * nf)
                flow_i[b + _U(FI_PENDING)] -= 1
                open_loop = False
                if explicit and special:
                    open_loop = class_period[_U(k)] > 0.0
                held = flow_i[b + _U(FI_HELD)] if policy == MR3 and not network else 0
                if open_loop and flow_i[b + _U(FI_IN_SYSTEM)] + held >= class_window[_U(k)]:
                    flow_i[b + _U(FI_TO_INJECT)] -= 1  # the window is full: dropped
                    dropped[_U(k)] += 1
                elif (MR3_LOOP or ANY_POLICY and policy == MR3) and not network:
                    _hold(flow_i, flow_f, istate, layout, W, slot, b, bf, 1, t)
                else:
                    n_inject = 1
                offer_next = open_loop
            else:  # ---- a flow arrival: a free slot, its records, its first window
                free_top -= 1
                slot = free_slots[_U(free_top)]
                active += 1
                k = arr_class[_U(nxt)]
                size = arr_size[_U(nxt)]
                b = _U(slot * ni)
                bf = _U(slot * nf)
                flow_i[b + _U(FI_CLASS)] = k
                flow_i[b + _U(FI_INDEX)] = nxt
                flow_i[b + _U(FI_SOJOURN)] = _sojourn_cell(arrivals, res_f, J, K, k, nxt, t)
                flow_i[b + _U(FI_TO_INJECT)] = size
                flow_i[b + _U(FI_IN_SYSTEM)] = 0
                flow_i[b + _U(FI_SENT)] = 0
                flow_i[b + _U(FI_PENDING)] = 0
                flow_i[b + _U(FI_FREE_N)] = W
                flow_i[b + _U(FI_TYPE0)] = class_type0[_U(k)]
                flow_i[b + _U(FI_NTYPES)] = class_ntypes[_U(k)]
                for p in range(W):
                    flow_i[b + _U(o_free + p)] = W - 1 - p
                for j in range(J):
                    flow_i[b + _U(FI_RES + 3 * j)] = 0
                    flow_i[b + _U(FI_RES + 3 * j + 1)] = 0
                    flow_i[b + _U(FI_RES + 3 * j + 2)] = 0
                    flow_f[bf + _U(j)] = -np.inf
                    flow_f[bf + _U(J + j)] = -np.inf
                    flow_f[bf + _U(o_charge + j)] = 0.0
                flow_f[bf + _U(o_weight)] = class_weight[_U(k)]
                # an open-loop flow offers its first packet on arrival, then one every period
                open_loop = False
                if explicit and special:
                    open_loop = class_period[_U(k)] > 0.0
                first = 1 if open_loop else min(class_window[_U(k)], size)
                if policy == MR3:
                    flow_i[b + _U(FI_HELD)] = 0
                    flow_i[b + _U(FI_FREE_HEAD)] = 0
                    flow_f[bf + _U(layout.o_sc)] = 0.0
                if ROUTED_MR3 and routed_mr3:  # injected now, held at their first routers'
                    # ingresses
                    _ingress_reset(flow_i, flow_f, layout, W, R, b, bf)
                    n_inject = first
                elif MR3_LOOP or ANY_POLICY and policy == MR3:
                    _hold(flow_i, flow_f, istate, layout, W, slot, b, bf, first, t)
                else:
                    n_inject = first
                offer_next = open_loop
                nxt += 1
                t_arrival = arr_time[_U(nxt)] if nxt < n_arrivals else np.inf
            if explicit and offer_next:  # offer the open-loop flow's next packet one period later
                # (its packets not yet injected, less those about to be: the one injected
                # now, or for MR3 all it holds at the ingress)
                now = flow_i[b + _U(FI_HELD)] if policy == MR3 and not network else n_inject
                if flow_i[b + _U(FI_TO_INJECT)] - now > 0:
                    pos = (pend_head[k] + pend_len[k]) % pend_cap
                    pend_time[_U(k * pend_cap + pos)] = t + class_period[_U(k)]
                    pend_slot[_U(k * pend_cap + pos)] = slot
                    pend_len[k] += 1
                    flow_i[b + _U(FI_PENDING)] += 1
            # ---- the packets injected now: the event's flow's, or those MR3's ingress
            # releases (one call site of _inject and _arrive). MR3 on several routers: the
            # injected packets join their first routers' ingresses, then the routers release
            # in index order (from router `releasing`)
            releasing = -1
            while True:
                if (MR3_LOOP or ANY_POLICY and policy == MR3) and not network:
                    slot = _release_next(flow_i, flow_f, istate, fstate, layout, model.inflight)
                    if slot < 0:
                        break
                    b = _U(slot * ni)
                    bf = _U(slot * nf)
                elif n_inject > 0:
                    n_inject -= 1
                elif ROUTED_MR3 and routed_mr3:
                    releasing, slot, pk, dest = _ingress_release(
                        flow_i, flow_f, istate, fstate, layout, W, R, max(releasing, 0))
                    if releasing < 0:
                        break
                    b = _U(slot * ni)
                    bf = _U(slot * nf)
                else:
                    break
                carried = 0.0  # (memoryless DRFQ's key, from _inject)
                if releasing >= 0:  # (routed MR3) a released packet moves on to `dest`
                    s = service[_U(flow_i[b + _U(layout.o_type) + _U(pk)] * J + dest)]
                else:
                    pk, dest, s, vglobal, carried = _inject(policy, flow_i, flow_f, res_f, J,
                                                            layout, model, b, bf, vglobal,
                                                            in_service, network)
                    if policy != MR3 or network:  # (tandem MR3: when it joined the ingress)
                        flow_f[bf + _U(layout.o_entry) + _U(pk)] = t
                    if ROUTED_MR3 and routed_mr3:
                        _ingress_join(flow_i, istate, layout, W, model.router[_U(dest)], slot,
                                      b, pk, dest)
                        continue
                vglobal = _arrive(policy, debug, flow_i, flow_f, res_i, res_f, heap_key,
                                  heap_id, istate, service, next_resource, J, W, layout,
                                  slot, b, bf, pk, dest, s, seq, t, vglobal, fq, in_service,
                                  network, model.fq_mask, ev_key, ev_id, carried)
                seq += 1
                if ROUTED_MR3 and routed_mr3:
                    ptype = flow_i[b + _U(layout.o_type) + _U(pk)]
                    _ingress_released(flow_i, flow_f, istate, fstate, layout, W, releasing,
                                      slot, b, bf, model.router_charge[_U(ptype * R + releasing)])
                elif MR3_LOOP or ANY_POLICY and policy == MR3:
                    charge = model.type_charge[_U(flow_i[b + _U(layout.o_type) + _U(pk)])]
                    _released(flow_i, flow_f, istate, fstate, layout, slot, b, bf, charge)
            # ==== phase 2: every idle resource with waiting packets starts the smallest
            # (key, seq). Only a resource that has just completed can be idle with packets
            # waiting (a packet arriving at an idle, empty resource starts at once), so a
            # network's loop looks at that one only; the tandem loops scan all J as before.
            lo, hi = 0, J
            if network:
                lo, hi = (which, which + 1) if kind == 0 else (0, 0)
            for j in range(lo, hi):
                n_heap = res_i[_U(3 * J + j)]
                if res_f[_U(j)] < np.inf or n_heap == 0:
                    continue
                key = heap_key[_U(j)]
                top_id = heap_id[_U(j)]
                if debug and res_f[_U(4 * J + j)] != t:
                    # only a resource that has just completed can be idle with packets
                    # waiting, so its busy period goes on with no idle gap
                    istate[I_VIOLATION] = BAD_UTILISATION
                sl = top_id & _SLOT_MASK
                sb = _U(sl * ni)
                sbf = _U(sl * nf)
                at = sb + _U(FI_RES + 3 * j)
                head = flow_i[at + _U(1)]
                entry = _U(j * W + head)
                p = flow_i[sb + _U(o_fifo_pk) + entry]
                s = flow_f[sbf + _U(o_fifo_s) + entry]
                vglobal = _begin_service(policy, debug, flow_i, flow_f, res_i, res_f, istate,
                                         service, next_resource, J, layout, j, t, sl, sb, sbf, p,
                                         s, key, top_id, vglobal, in_service, network,
                                         ev_key, ev_id)
                head += 1
                if head == W:
                    head = 0
                flow_i[at + _U(1)] = head
                remaining = flow_i[at + _U(2)] - 1
                flow_i[at + _U(2)] = remaining
                if remaining > 0:  # the flow's next packet replaces it at the top
                    entry = _U(j * W + head)
                    _sift_down(heap_key, heap_id, n_heap, J, j,
                               flow_f[sbf + _U(o_fifo_key) + entry],
                               flow_i[sb + _U(o_fifo_id) + entry])
                else:
                    n_heap -= 1
                    res_i[_U(3 * J + j)] = n_heap
                    if n_heap > 0:
                        last = _U(n_heap * J + j)
                        _sift_down(heap_key, heap_id, n_heap, J, j, heap_key[last], heap_id[last])
            if ROUTERS and network and kind == 0 and res_f[_U(which)] == np.inf:
                # the completed resource stays idle: its leaf leaves the event tree (had it
                # started a packet, _begin_service set it). Until now the tree's nodes above
                # it were stale, which only the nodes on its path could be: an update of
                # another leaf meanwhile left wrong only nodes on that path, replayed here
                # (up to FLAT_EVENTS resources there are only leaves).
                _tree_set(ev_key, ev_id, which, np.inf)
            # ==== debug: the invariants after every event
            if debug:
                code = _check_invariants(t, W, ni, free_top, flow_i, res_i, res_f, free_slots,
                                         istate, in_use, routed_mr3)
                if code != 0:
                    status = code
                    break
        fstate[F_TIME] = t
        fstate[F_VGLOBAL] = vglobal
        istate[I_NEXT_ARRIVAL] = nxt
        istate[I_OUTSTANDING] = outstanding
        istate[I_SEQ] = seq
        istate[I_SERVICES] = services
        istate[I_EVENTS] += events
        istate[I_ACTIVE] = active
        istate[I_FREE_TOP] = free_top
        return status

    # e.g. _loop_bmf_tandem, _loop_drfq_started_tandem, _loop_any_checked_explicit_any
    names = {code: name.lower() for name, code in vars(_CODES).items()}
    parts = [names.get(fixed_policy, "any"), "checked" if checked else "",
             "explicit" if explicit else "", {0: "started", 1: "", ANY: "any"}[fixed_clock]
             if fixed_policy in (DRFQ, DRFQ_DOVETAIL, ANY) else "",
             {0: "tandem", 1: "network", ANY: "any"}[fixed_network]]
    name = "_loop_" + "_".join(part for part in parts if part)
    if name in _LOOP_NAMES:
        raise RuntimeError(f"two event loops named {name}: they would share a cache index")
    _LOOP_NAMES.add(name)
    loop.__name__ = loop.__qualname__ = name  # before njit, which names the cache index
    return njit(cache=True, _nrt=False, error_model="numpy")(loop)


# One compiled loop per policy: with the policy a constant (and debug off), the code of
# the other policies and of the checks is removed and the loop keeps more of its state in
# registers (46 against 41 M services/CPU-s). DRFQ's clock is a constant as well (a
# run-time clock made memoryless DRFQ ~10% slower). Arguments: policy, checked,
# explicit, clock (1 in service, 0 started), network (1 several routers, 0 the tandem).
_loop_drfq = _make_event_loop(DRFQ, False, False, 1, 0)
_loop_drfq_started = _make_event_loop(DRFQ, False, False, 0, 0)
_loop_drfq_dovetail = _make_event_loop(DRFQ_DOVETAIL, False, False, 1, 0)
_loop_drfq_dovetail_started = _make_event_loop(DRFQ_DOVETAIL, False, False, 0, 0)
_loop_pf = _make_event_loop(PF, False, False, 0, 0)
_loop_bmf = _make_event_loop(BMF, False, False, 0, 0)
_loop_fifo = _make_event_loop(FIFO, False, False, 0, 0)
_loop_bottleneck_fq = _make_event_loop(BOTTLENECK_FQ, False, False, 0, 0)
_loop_mr3 = _make_event_loop(MR3, False, False, 0, 0)
# Debug runs and explicit flows (open loop, stop times, timelines) use one loop for every
# policy, clock and number of routers, all read at run time: the per-policy loops leave
# the explicit-flow code out, which keeps their first compilation short.
_loop_general = _make_event_loop(ANY, True, True, ANY, ANY)
# Networks (several routers: DRFQ and dovetailing DRFQ per router, bottleneck FQ on
# several resources; the next completion from a tournament (_tree_set, _first_completion:
# up to 16 resources computed in registers at every event, beyond that a tree) and phase 2
# at the resource that completed, instead of scans over every resource, which with J = 12
# cost a third of the time): a loop with the policy and clock at run time, and loops of
# their own for the per-resource policies and DRFQ's in-service clock (the default),
# measured on the random network (BENCHMARKS.md). A tandem with routes runs the tandem
# loops: a route is a next-resource table, which they already follow.
_loop_network = _make_event_loop(ANY, False, False, ANY, 1)
_loop_network_bmf = _make_event_loop(BMF, False, False, 0, 1)
_loop_network_pf = _make_event_loop(PF, False, False, 0, 1)
_loop_network_drfq = _make_event_loop(DRFQ, False, False, 1, 1)
_loop_network_drfq_dovetail = _make_event_loop(DRFQ_DOVETAIL, False, False, 1, 1)

_NETWORK_LOOPS = {BMF: _loop_network_bmf, PF: _loop_network_pf}
_NETWORK_IN_SERVICE_LOOPS = {DRFQ: _loop_network_drfq,
                             DRFQ_DOVETAIL: _loop_network_drfq_dovetail}
_LOOPS = {DRFQ: _loop_drfq, DRFQ_DOVETAIL: _loop_drfq_dovetail, PF: _loop_pf, BMF: _loop_bmf,
          FIFO: _loop_fifo, BOTTLENECK_FQ: _loop_bottleneck_fq, MR3: _loop_mr3}
#: DRFQ's loops with the started clock (BR's reading)
_STARTED_LOOPS = {DRFQ: _loop_drfq_started, DRFQ_DOVETAIL: _loop_drfq_dovetail_started}


def run_kernel(policy: int, debug: bool, budget: int, model: tuple, arrivals: tuple,
               state: tuple, lone_flow: bool = True, explicit: bool = False,
               network: bool = False) -> int:
    """Advance the simulation by at most ``budget`` events with the loop of ``policy``
    (arguments as the loops of :func:`_make_event_loop`); return a status code.
    ``lone_flow=False`` turns off the lone-flow loop (:func:`_lone_flow`; results are the
    same either way).
    ``explicit``: the run has open-loop flows, stop times or a timeline (only the general
    loop handles them). ``network``: the run needs :func:`_loop_network` (several
    routers with DRFQ, dovetailing DRFQ or bottleneck FQ:
    :func:`mrfq.packet.engine.needs_network_loop`)."""
    if debug or explicit:
        return _loop_general(policy, debug, False, budget, model, arrivals, state)
    if network:
        if policy in _NETWORK_LOOPS:
            return _NETWORK_LOOPS[policy](policy, False, False, budget, model, arrivals, state)
        if model.in_service and policy in _NETWORK_IN_SERVICE_LOOPS:
            return _NETWORK_IN_SERVICE_LOOPS[policy](policy, False, False, budget, model,
                                                     arrivals, state)
        return _loop_network(policy, False, False, budget, model, arrivals, state)
    if not model.in_service and policy in _STARTED_LOOPS:
        return _STARTED_LOOPS[policy](policy, False, lone_flow, budget, model, arrivals, state)
    return _LOOPS[policy](policy, False, lone_flow, budget, model, arrivals, state)


@njit(cache=True, _nrt=False)
def _check_invariants(t, window, ni, free_top, flow_i, res_i, res_f, free_slots, istate,
                      in_use, held_injected):
    """Debug mode: conservation, window, work conservation and utilisation after an event.
    ``held_injected``: MR3 on several routers, whose packets held at the ingresses are
    injected (in FI_IN_SYSTEM) and not at a resource."""
    J = res_i.shape[0] // 4
    if istate[I_VIOLATION] != 0:
        return istate[I_VIOLATION]
    capacity = in_use.shape[0]
    in_use[:] = True
    for p in range(free_top):
        in_use[free_slots[p]] = False
    for slot in range(capacity):
        if not in_use[slot]:
            continue
        b = slot * ni
        total = 0
        for j in range(J):
            queued = flow_i[b + FI_RES + 3 * j]
            if queued < 0 or flow_i[b + FI_RES + 3 * j + 2] > queued:
                return BAD_CONSERVATION
            total += queued
        held = flow_i[b + FI_HELD]
        if total + (held if held_injected else 0) != flow_i[b + FI_IN_SYSTEM]:
            return BAD_CONSERVATION
        if (flow_i[b + FI_IN_SYSTEM] + flow_i[b + FI_PENDING]
                + (0 if held_injected else held) > window
                or flow_i[b + FI_TO_INJECT] < 0 or held < 0):
            return BAD_WINDOW
    for j in range(J):
        busy = res_f[j] < np.inf
        if not busy and res_i[3 * J + j] > 0:
            return BAD_IDLE
        # idle time and busy time are both in [0, t]; the last completion is not ahead
        if res_f[4 * J + j] > t or not 0.0 <= busy_time(res_f, J, j, t) <= t * (1.0 + 1e-12):
            return BAD_UTILISATION
    return 0
