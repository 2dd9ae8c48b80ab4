"""The flow-level simulator's event loop (Numba, ``cache=True``; plain arrays in and out).

The model (:mod:`mrfq.fluid.flowsim`): between events the state n = (n_1 … n_K) is
constant and every class-k flow is served at the exact fluid rate φ_k(n) of the policy
(DRF, PF, BMF through :func:`mrfq.fluid.kernels.allocate_into`, the kernels of the Markov
solver; BF from log Φ, :mod:`mrfq.fluid.balanced`). A flow completes when its work is
drained.

**Event loop.** All flows of a class have the same rate, so each
class keeps its *virtual time* V_k (service received so far by any class-k flow present
throughout, dV_k/dt = φ_k(n)) and a min-heap of virtual finish times V_k(arrival) + S. The
next departure of class k is at (min F − V_k)/φ_k; an event costs O(K) plus one heap
operation, O(log n_k), plus one allocation. V_k restarts at 0 when class k empties (it
stays small, so F − V_k loses no precision). Allocations of DRF, PF and BMF are cached in
an open-addressing hash table keyed by the state (cleared when half full); BF reads
log Φ from a box that grows by doubling. Cached and fresh allocations are the same
numbers, so the cache never changes a result.

**Event order** (a seed fully determines a run): the earliest event first; a departure
before an arrival at the same time; among departures at the same time the lowest class,
and within a class the smallest (virtual finish, arrival index). The departing class's
V_k is set to the departing flow's finish tag exactly.

The loop runs a bounded number of events and returns a status; the driver
(:func:`mrfq.fluid.flowsim.simulate_flows`) supplies arrivals, grows the heaps and the Φ
box, and calls it again.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mrfq.fluid import balanced, kernels

#: statuses of :func:`flow_level_loop`
DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY, NEED_BOX, NO_ALLOCATION = 0, 1, 2, 3, 4, 5
#: the entries of its integer state ``istate``
I_NEXT, I_OUTSTANDING, I_EVENTS, I_CACHED, I_HITS, I_MISSES = range(6)


@njit(cache=True)
def _heap_push(keys, ids, row, size, key, ident):
    """Insert (key, ident) into heap ``row`` holding ``size`` entries."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        pk = keys[row, parent]
        if pk < key or (pk == key and ids[row, parent] < ident):
            break
        keys[row, i] = pk
        ids[row, i] = ids[row, parent]
        i = parent
    keys[row, i] = key
    ids[row, i] = ident


@njit(cache=True)
def _heap_pop(keys, ids, row, size):
    """Remove the root of heap ``row`` (``size`` ≥ 1 entries before the call)."""
    size -= 1
    key = keys[row, size]
    ident = ids[row, size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size:
            ck, rk = keys[row, child], keys[row, child + 1]
            if rk < ck or (rk == ck and ids[row, child + 1] < ids[row, child]):
                child += 1
        ck = keys[row, child]
        if key < ck or (key == ck and ident < ids[row, child]):
            break
        keys[row, i] = ck
        ids[row, i] = ids[row, child]
        i = child
    if size > 0:
        keys[row, i] = key
        ids[row, i] = ident


@njit(cache=True)
def _allocate(code, requirements, weights, n, counts, phi, istate, cache_keys, cache_phi,
              bf_log, bf_dims):
    """φ(n) into ``phi``: BF from the Φ box, the others from the cache or the kernels."""
    K = n.shape[0]
    if code == balanced.BF:
        index = 0
        stride = 1
        for k in range(K - 1, -1, -1):
            index += n[k] * stride
            stride *= bf_dims[k]
        stride = 1
        here = bf_log[index]
        for k in range(K - 1, -1, -1):
            phi[k] = 0.0
            if n[k] > 0:
                phi[k] = math.exp(bf_log[index - stride] - here) / n[k]
            stride *= bf_dims[k]
        return
    for k in range(K):
        counts[k] = n[k]
    slots = cache_keys.shape[0]
    if slots == 0:
        kernels.allocate_into(code, requirements, counts, weights, phi)
        return
    h = np.uint64(0x9E3779B97F4A7C15)
    for k in range(K):
        h = (h ^ np.uint64(n[k])) * np.uint64(0xBF58476D1CE4E5B9)
    slot = np.int64((h ^ (h >> np.uint64(31))) & np.uint64(slots - 1))
    while cache_keys[slot, 0] >= 0:
        same = True
        for k in range(K):
            if cache_keys[slot, k] != n[k]:
                same = False
                break
        if same:
            for k in range(K):
                phi[k] = cache_phi[slot, k]
            istate[I_HITS] += 1
            return
        slot = (slot + 1) & (slots - 1)
    istate[I_MISSES] += 1
    kernels.allocate_into(code, requirements, counts, weights, phi)
    if 2 * (istate[I_CACHED] + 1) > slots:  # half full: start again (the slot is free)
        for s in range(slots):
            cache_keys[s, 0] = -1
        istate[I_CACHED] = 0
        slot = np.int64((h ^ (h >> np.uint64(31))) & np.uint64(slots - 1))
    for k in range(K):
        cache_keys[slot, k] = n[k]
        cache_phi[slot, k] = phi[k]
    istate[I_CACHED] += 1


@njit(cache=True)
def flow_level_loop(code, requirements, weights, arr_time, arr_class, arr_size, n_arrivals,
                    flows, completion, istate, time_now, vtime, n, phi, heap_key, heap_id,
                    heap_len, cache_keys, cache_phi, bf_log, bf_dims, budget):
    """Run at most ``budget`` events; returns (status, time). State lives in the arrays.

    ``code``: the policy's registry code (:data:`mrfq.fluid.kernels.DRF`, ``PF``, ``BMF``
    or :data:`mrfq.fluid.balanced.BF`). ``arr_*``: the first ``n_arrivals``
    arrivals (times non-decreasing, class, work). ``completion``: output for flows with
    index < ``flows``. Status: DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY (a heap is full)
    or NEED_BOX (BF's Φ box is too small): nothing of the pending event has been done;
    NO_ALLOCATION: the state ``n`` reached has an active class without a positive rate.
    """
    K = n.shape[0]
    counts = np.zeros(K)
    capacity = heap_key.shape[1]
    t = time_now
    done = 0
    while True:
        if istate[I_OUTSTANDING] == 0:
            return DONE, t
        if done >= budget:
            return BUDGET, t
        nxt = istate[I_NEXT]
        if nxt >= n_arrivals:
            return NEED_ARRIVALS, t
        best = -1
        best_dt = np.inf
        for k in range(K):
            if heap_len[k] > 0:
                dt = (heap_key[k, 0] - vtime[k]) / phi[k]
                if dt < best_dt:
                    best_dt = dt
                    best = k
        if best >= 0 and t + max(best_dt, 0.0) <= arr_time[nxt]:
            dt = max(best_dt, 0.0)
            for k in range(K):
                if heap_len[k] > 0:
                    vtime[k] += phi[k] * dt
            vtime[best] = heap_key[best, 0]
            ident = heap_id[best, 0]
            _heap_pop(heap_key, heap_id, best, heap_len[best])
            heap_len[best] -= 1
            n[best] -= 1
            if n[best] == 0:
                vtime[best] = 0.0
            t = t + dt
            if ident < flows:
                completion[ident] = t
                istate[I_OUTSTANDING] -= 1
        else:
            c = arr_class[nxt]
            if heap_len[c] == capacity:
                return NEED_CAPACITY, t
            if code == balanced.BF and n[c] + 1 >= bf_dims[c]:
                return NEED_BOX, t
            dt = arr_time[nxt] - t
            for k in range(K):
                if heap_len[k] > 0:
                    vtime[k] += phi[k] * dt
            t = arr_time[nxt]
            _heap_push(heap_key, heap_id, c, heap_len[c], vtime[c] + arr_size[nxt], nxt)
            heap_len[c] += 1
            n[c] += 1
            istate[I_NEXT] = nxt + 1
        done += 1
        istate[I_EVENTS] += 1
        _allocate(code, requirements, weights, n, counts, phi, istate, cache_keys, cache_phi,
                  bf_log, bf_dims)
        for k in range(K):
            if n[k] > 0 and not phi[k] > 0.0:  # e.g. NaN: no BMF mapping was feasible
                return NO_ALLOCATION, t

