"""Numba event loop for J router resources in tandem, one start-time fair queue each.

Plain arrays in, plain arrays out (STUMPY-style kernel; the wrapper is
:mod:`mrfq.packet.engine`). All state lives in the arrays of :class:`EngineState` so the
loop can stop after a budget of events and resume exactly where it was.

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
   V_j = tag (PF, BMF), V_j = max(V_j, S_ij) (dovetailing DRFQ), V = max(V, tag) over all
   resources (memoryless DRFQ).

Each resource keeps one FIFO per flow and serves the flow heads in (key, seq) order.

Tags (S^{k-1} = same flow's previous packet; −∞ for a flow's first packet):
  BMF  S = max(V_j, S^{k-1}_j + s_j)                       (BR eq. 7)
  PF   S = max(V_j, S^{k-1}_j + s_j / Q_ij)                (BR eq. 5, Q counts the arrival)
  DRFQ S = max(V, S^{k-1} + max_j s_j) at injection       (BR eq. 2, memoryless)
  DRFQ-dovetail S_j = max(V_j, F_j), F_j = S_j + s_j, key = max over used j of S_j;
       then F_j ← max(F_j, max_r F_r − Δ)                   (Ghodsi et al. SIGCOMM'12)
"""

from __future__ import annotations

import numpy as np
from numba import njit

DRFQ, DRFQ_DOVETAIL, PF, BMF = 0, 1, 2, 3
#: bump when the model or the kernel changes results; part of every stored point's key
ENGINE_VERSION = "1"
POLICY_CODES = {"drfq": DRFQ, "drfq-dovetail": DRFQ_DOVETAIL, "pf": PF, "bmf": BMF}

# return codes of run_kernel
DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY = 0, 1, 2, 3
# debug invariant violations (code >= 10)
BAD_CONSERVATION, BAD_WINDOW, BAD_IDLE, BAD_TAG_ORDER, BAD_UTILISATION = 10, 11, 12, 13, 14

# indices into the int64 scalar state
I_NEXT_ARRIVAL, I_OUTSTANDING, I_SEQ, I_SERVICES, I_EVENTS, I_ACTIVE, I_FREE_TOP, I_VIOLATION = (
    range(8))
# indices into the float64 scalar state
F_TIME, F_VGLOBAL = range(2)

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
#: indices loaded from arrays are cast to unsigned where used: Numba then skips its
#: negative-index wraparound code, which was a large share of the loop's instructions
_U = np.uint64


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


@njit(cache=True, inline="always")
def _before(key_a, seq_a, key_b, seq_b):
    return key_a < key_b or (key_a == key_b and seq_a < seq_b)


@njit(cache=True, inline="always", _nrt=False)
def _heap_push(hkey, hseq, hslot, hsize, j, key, seq, slot):
    i = hsize[j]
    hsize[j] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if _before(key, seq, hkey[_U(j), _U(parent)], hseq[_U(j), _U(parent)]):
            hkey[_U(j), _U(i)] = hkey[_U(j), _U(parent)]
            hseq[_U(j), _U(i)] = hseq[_U(j), _U(parent)]
            hslot[_U(j), _U(i)] = hslot[_U(j), _U(parent)]
            i = parent
        else:
            break
    hkey[_U(j), _U(i)] = key
    hseq[_U(j), _U(i)] = seq
    hslot[_U(j), _U(i)] = slot


@njit(cache=True, inline="always", _nrt=False)
def _sift_down(hkey, hseq, hslot, n, j, key, seq, slot):
    """Place (key, seq, slot) at the root of heap j (size n) and restore the order."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _before(hkey[_U(j), _U(child + 1)], hseq[_U(j), _U(child + 1)],
                                     hkey[_U(j), _U(child)], hseq[_U(j), _U(child)]):
            child += 1
        if _before(hkey[_U(j), _U(child)], hseq[_U(j), _U(child)], key, seq):
            hkey[_U(j), _U(i)] = hkey[_U(j), _U(child)]
            hseq[_U(j), _U(i)] = hseq[_U(j), _U(child)]
            hslot[_U(j), _U(i)] = hslot[_U(j), _U(child)]
            i = child
        else:
            break
    hkey[_U(j), _U(i)] = key
    hseq[_U(j), _U(i)] = seq
    hslot[_U(j), _U(i)] = slot


@njit(cache=True, inline="always", _nrt=False)
def _heap_pop(hkey, hseq, hslot, hsize, j):
    """Remove and return the slot at the top of heap j."""
    top = hslot[_U(j), _U(0)]
    n = hsize[j] - 1
    hsize[j] = n
    if n > 0:
        last = _U(n)
        _sift_down(hkey, hseq, hslot, n, j, hkey[_U(j), last], hseq[_U(j), last],
                   hslot[_U(j), last])
    return top


# No array is allocated inside the loop, so it runs without Numba's reference counting
# (NRT): the atomic incref/decref pairs around array temporaries cost ~40% of the time.
@njit(cache=True, _nrt=False, error_model="numpy")
def run_kernel(policy, debug, budget,
               # model constants
               service, next_resource, first_resource, type_start, type_count, type_cdf,
               class_cycle, class_rtt, window, delta, hash_key,
               # arrivals (pre-generated) and per-flow records
               arr_time, arr_class, arr_size, n_arrivals, flows, completion,
               # scalar state
               istate, fstate,
               # flows (slot-indexed)
               free_slots, fl_class, fl_index, fl_to_inject, fl_in_system, fl_sent,
               fl_pending, fl_tag, fl_queue, fl_pfree, fl_pfree_n,
               fifo, fifo_head, fifo_len,
               pk_type, pk_key, pk_vtag, pk_seq, pk_vtags,
               # resources
               busy, done_time, serv_slot, serv_pk, vtime, busy_time, last_key,
               hkey, hseq, hslot, hsize,
               # round-trip injection queues, one FIFO per class
               pend_time, pend_slot, pend_head, pend_len,
               # scratch space for the debug checks
               in_use):
    """Advance the simulation by at most ``budget`` events; return a status code.

    ``service[p, j]``: processing time of packet type p at resource j (0 = skip);
    ``next_resource[p, j]``: the next resource after j with s > 0 (−1 = leave);
    ``first_resource[p]``. Completion times of flows with index < ``flows`` are written
    to ``completion``; the run is DONE when all of them have completed.
    """
    J = service.shape[1]
    K = type_start.shape[0]
    pend_cap = pend_time.shape[1]
    has_rtt = False
    for k in range(K):
        if class_rtt[k] > 0.0:
            has_rtt = True
    t = fstate[F_TIME]
    vglobal = fstate[F_VGLOBAL]
    seq = istate[I_SEQ]
    services = istate[I_SERVICES]
    events = 0
    status = BUDGET
    while events < budget:
        if istate[I_OUTSTANDING] == 0:
            status = DONE
            break
        nxt = istate[I_NEXT_ARRIVAL]
        if nxt >= n_arrivals:
            status = NEED_ARRIVALS
            break
        # ---- next event: (time, priority) lexicographic; strict < keeps the lower priority
        best_t = arr_time[_U(nxt)]
        kind = 2  # 0 completion, 1 round-trip injection, 2 flow arrival
        which = -1
        for j in range(J):
            if busy[j] and done_time[j] <= best_t:
                if done_time[j] < best_t or kind == 2:
                    best_t = done_time[j]
                    kind = 0
                    which = j
        if has_rtt:
            for k in range(K):
                if pend_len[k] > 0:
                    when = pend_time[k, pend_head[k]]
                    if when < best_t or (when == best_t and kind == 2):
                        best_t = when
                        kind = 1
                        which = k
        if kind == 2 and istate[I_FREE_TOP] == 0:
            status = NEED_CAPACITY
            break
        t = best_t
        events += 1
        # ---- event bookkeeping; then n_ops packet movements (inject and/or arrive)
        slot = _U(0)
        pk = _U(0)
        target = -1  # resource a moving packet arrives at
        n_inject = 0
        if kind == 0:
            done = _U(which)
            slot = _U(serv_slot[done])
            pk = _U(serv_pk[done])
            busy[done] = False
            services += 1
            fl_queue[slot, done] -= 1
            target = next_resource[_U(pk_type[slot, pk]), done]
            if target < 0:  # the packet leaves the router
                fl_in_system[slot] -= 1
                fl_pfree[slot, fl_pfree_n[slot]] = pk
                fl_pfree_n[slot] += 1
                if fl_to_inject[slot] > fl_pending[slot]:  # pending ones are reserved
                    k = fl_class[slot]
                    if class_rtt[k] > 0.0:
                        pos = (pend_head[k] + pend_len[k]) % pend_cap
                        pend_time[k, pos] = t + class_rtt[k]
                        pend_slot[k, pos] = slot
                        pend_len[k] += 1
                        fl_pending[slot] += 1
                    else:
                        n_inject = 1
                elif fl_in_system[slot] == 0 and fl_pending[slot] == 0:
                    index = fl_index[slot]
                    if index < flows:
                        completion[index] = t
                        istate[I_OUTSTANDING] -= 1
                    free_slots[istate[I_FREE_TOP]] = slot
                    istate[I_FREE_TOP] += 1
                    istate[I_ACTIVE] -= 1
        elif kind == 1:
            k = which
            slot = _U(pend_slot[k, pend_head[k]])
            pend_head[k] = (pend_head[k] + 1) % pend_cap
            pend_len[k] -= 1
            fl_pending[slot] -= 1
            n_inject = 1
        else:
            top = istate[I_FREE_TOP] - 1
            istate[I_FREE_TOP] = top
            slot = _U(free_slots[top])
            istate[I_NEXT_ARRIVAL] = nxt + 1
            istate[I_ACTIVE] += 1
            fl_class[slot] = arr_class[_U(nxt)]
            fl_index[slot] = nxt
            fl_to_inject[slot] = arr_size[_U(nxt)]
            fl_in_system[slot] = 0
            fl_sent[slot] = 0
            fl_pending[slot] = 0
            fl_pfree_n[slot] = window
            for p in range(window):
                fl_pfree[slot, p] = window - 1 - p
            for j in range(J):
                fl_tag[slot, j] = -np.inf
                fl_queue[slot, j] = 0
                fifo_head[slot, j] = 0
                fifo_len[slot, j] = 0
                last_key[slot, j] = -np.inf
            n_inject = min(window, arr_size[nxt])
        n_ops = n_inject if target < 0 else 1
        for _op in range(n_ops):
            if target < 0:
                # ---- inject the flow's next packet: draw its type, DRFQ tags
                k = fl_class[slot]
                number = fl_sent[slot]
                fl_sent[slot] = number + 1
                fl_to_inject[slot] -= 1
                fl_in_system[slot] += 1
                count = type_count[k]
                ptype = type_start[k]
                if count > 1:
                    if class_cycle[k]:
                        ptype += number % count
                    else:
                        u = packet_uniform(hash_key, fl_index[slot], number)
                        c = 0
                        while c < count - 1 and type_cdf[ptype + c] <= u:
                            c += 1
                        ptype += c
                top = fl_pfree_n[slot] - 1
                fl_pfree_n[slot] = top
                pk = _U(fl_pfree[slot, top])
                pk_type[slot, pk] = ptype
                if policy == DRFQ:
                    charge = 0.0
                    for j in range(J):
                        charge = max(charge, service[ptype, j])
                    key = max(vglobal, fl_tag[slot, 0] + charge)
                    fl_tag[slot, 0] = key
                    pk_key[slot, pk] = key
                elif policy == DRFQ_DOVETAIL:
                    key = -np.inf
                    top_finish = -np.inf
                    for j in range(J):
                        s = service[ptype, j]
                        if s > 0.0:
                            begin = max(vtime[j], fl_tag[slot, j])
                            pk_vtags[slot, pk, j] = begin
                            fl_tag[slot, j] = begin + s
                            key = max(key, begin)
                        top_finish = max(top_finish, fl_tag[slot, j])
                    if delta < np.inf:
                        for j in range(J):
                            fl_tag[slot, j] = max(fl_tag[slot, j], top_finish - delta)
                    pk_key[slot, pk] = key
                dest = _U(first_resource[ptype])
            else:
                dest = _U(target)
            # ---- the packet arrives at resource dest: PF/BMF tag, enqueue
            fl_queue[slot, dest] += 1
            if policy == BMF:
                key = max(vtime[dest], fl_tag[slot, dest] + service[_U(pk_type[slot, pk]), dest])
                fl_tag[slot, dest] = key
                pk_key[slot, pk] = key
            elif policy == PF:
                key = max(vtime[dest], fl_tag[slot, dest]
                          + service[_U(pk_type[slot, pk]), dest] / fl_queue[slot, dest])
                fl_tag[slot, dest] = key
                pk_key[slot, pk] = key
            elif policy == DRFQ_DOVETAIL:
                pk_vtag[slot, pk] = pk_vtags[slot, pk, dest]
            pk_seq[slot, pk] = seq
            n = fifo_len[slot, dest]
            pos = fifo_head[slot, dest] + n
            if pos >= window:
                pos -= window
            fifo[slot, dest, _U(pos)] = pk
            fifo_len[slot, dest] = n + 1
            if n == 0:
                _heap_push(hkey, hseq, hslot, hsize, dest, pk_key[slot, pk], seq, slot)
            seq += 1
        # ---- every idle resource with waiting packets starts the smallest (key, seq)
        for j in range(J):
            if busy[j] or hsize[j] == 0:
                continue
            sl = _U(hslot[j, 0])
            head = fifo_head[sl, j]
            p = _U(fifo[sl, j, _U(head)])
            head += 1
            if head == window:
                head = 0
            fifo_head[sl, j] = head
            remaining = fifo_len[sl, j] - 1
            fifo_len[sl, j] = remaining
            if remaining > 0:  # the flow's next packet replaces it at the top
                q = _U(fifo[sl, j, _U(head)])
                _sift_down(hkey, hseq, hslot, hsize[j], j, pk_key[sl, q], pk_seq[sl, q], sl)
            else:
                _heap_pop(hkey, hseq, hslot, hsize, j)
            key = pk_key[sl, p]
            if policy == DRFQ:
                if key > vglobal:
                    vglobal = key
            elif policy == DRFQ_DOVETAIL:
                if pk_vtag[sl, p] > vtime[j]:
                    vtime[j] = pk_vtag[sl, p]
            else:
                vtime[j] = key
            s = service[_U(pk_type[sl, p]), j]
            busy[j] = True
            done_time[j] = t + s
            serv_slot[j] = sl
            serv_pk[j] = p
            if debug:
                busy_time[j] += s
                # per flow and resource: PF/BMF tags never decrease; every policy serves a
                # flow's packets in arrival order (DRFQ tags, given at injection, may
                # arrive out of order when packet types skip resources)
                order = key if (policy == PF or policy == BMF) else float(pk_seq[sl, p])
                if order < last_key[sl, j]:
                    istate[I_VIOLATION] = BAD_TAG_ORDER
                last_key[sl, j] = order
        if debug:
            code = _check_invariants(t, window, fl_in_system, fl_pending, fl_to_inject,
                                     fl_queue, fifo_len, busy, done_time, hsize, busy_time,
                                     free_slots, istate, in_use)
            if code != 0:
                status = code
                break
    fstate[F_TIME] = t
    fstate[F_VGLOBAL] = vglobal
    istate[I_SEQ] = seq
    istate[I_SERVICES] = services
    istate[I_EVENTS] += events
    return status


@njit(cache=True, _nrt=False)
def _check_invariants(t, window, fl_in_system, fl_pending, fl_to_inject, fl_queue, fifo_len,
                      busy, done_time, hsize, busy_time, free_slots, istate, in_use):
    """Debug mode: conservation, window, work conservation and utilisation after an event."""
    J = busy.shape[0]
    if istate[I_VIOLATION] != 0:
        return istate[I_VIOLATION]
    capacity = in_use.shape[0]
    in_use[:] = True
    for p in range(istate[I_FREE_TOP]):
        in_use[free_slots[p]] = False
    for slot in range(capacity):
        if not in_use[slot]:
            continue
        total = 0
        for j in range(J):
            if fl_queue[slot, j] < 0 or fifo_len[slot, j] > fl_queue[slot, j]:
                return BAD_CONSERVATION
            total += fl_queue[slot, j]
        if total != fl_in_system[slot]:
            return BAD_CONSERVATION
        if fl_in_system[slot] + fl_pending[slot] > window or fl_to_inject[slot] < 0:
            return BAD_WINDOW
    for j in range(J):
        if not busy[j] and hsize[j] > 0:
            return BAD_IDLE
        # total work started at j never exceeds the time elapsed (+ the one in service)
        horizon = done_time[j] if busy[j] else t
        if busy_time[j] > horizon * (1.0 + 1e-12) + 1e-12:
            return BAD_UTILISATION
    return 0
