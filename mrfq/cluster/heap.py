"""The cluster kernel's event heap: one entry per running task, keyed by (end time, launch
number), in four parallel arrays (time, sequence, job, server); ``size`` entries in use.
Binary heap, smallest key on top; both functions return the new size. Numba caches
:func:`mrfq.cluster.kernel.simulate` keyed on kernel.py alone: after a change here, run
with a fresh ``NUMBA_CACHE_DIR`` (or touch kernel.py) so that it is recompiled.

Both sifts move a hole, not the entry (one write per level instead of a swap), and compare
inline: a comparison helper inlined by Numba ran ~15% slower (BENCHMARKS.md, cluster)."""

from numba import njit


@njit(cache=True)
def heap_push(h_time, h_seq, h_job, h_srv, size, t, seq, job, srv):
    i = size
    while i > 0:  # parents that come out after the new entry move down into the hole
        p = (i - 1) // 2
        if h_time[p] < t or (h_time[p] == t and h_seq[p] < seq):
            break
        h_time[i], h_seq[i], h_job[i], h_srv[i] = h_time[p], h_seq[p], h_job[p], h_srv[p]
        i = p
    h_time[i], h_seq[i], h_job[i], h_srv[i] = t, seq, job, srv
    return size + 1


@njit(cache=True)
def heap_pop(h_time, h_seq, h_job, h_srv, size):
    size -= 1
    t, seq, job, srv = h_time[size], h_seq[size], h_job[size], h_srv[size]  # the last entry
    i = 0
    while True:  # the smaller child moves up into the hole while it comes out first
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and (h_time[c + 1] < h_time[c] or (
                h_time[c + 1] == h_time[c] and h_seq[c + 1] < h_seq[c])):
            c += 1
        if t < h_time[c] or (t == h_time[c] and seq < h_seq[c]):
            break
        h_time[i], h_seq[i], h_job[i], h_srv[i] = h_time[c], h_seq[c], h_job[c], h_srv[c]
        i = c
    h_time[i], h_seq[i], h_job[i], h_srv[i] = t, seq, job, srv
    return size
