"""The cluster kernel's event heap: one entry per running task, keyed by (end time, launch
number), in four parallel arrays (time, sequence, job, server); ``size`` entries in use.
Binary heap, smallest key on top; both functions return the new size. Numba caches
:func:`mrfq.cluster.kernel.simulate` keyed on kernel.py alone: after a change here, run
with a fresh ``NUMBA_CACHE_DIR`` (or touch kernel.py) so that it is recompiled."""

from numba import njit


@njit(cache=True)
def heap_push(h_time, h_seq, h_job, h_srv, size, t, seq, job, srv):
    i = size
    h_time[i], h_seq[i], h_job[i], h_srv[i] = t, seq, job, srv
    while i > 0:
        p = (i - 1) // 2
        if h_time[p] < h_time[i] or (h_time[p] == h_time[i] and h_seq[p] < h_seq[i]):
            break
        h_time[p], h_time[i] = h_time[i], h_time[p]
        h_seq[p], h_seq[i] = h_seq[i], h_seq[p]
        h_job[p], h_job[i] = h_job[i], h_job[p]
        h_srv[p], h_srv[i] = h_srv[i], h_srv[p]
        i = p
    return size + 1


@njit(cache=True)
def heap_pop(h_time, h_seq, h_job, h_srv, size):
    size -= 1
    h_time[0], h_seq[0], h_job[0], h_srv[0] = h_time[size], h_seq[size], h_job[size], h_srv[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and (h_time[c + 1] < h_time[c] or (
                h_time[c + 1] == h_time[c] and h_seq[c + 1] < h_seq[c])):
            c += 1
        if h_time[i] < h_time[c] or (h_time[i] == h_time[c] and h_seq[i] < h_seq[c]):
            break
        h_time[c], h_time[i] = h_time[i], h_time[c]
        h_seq[c], h_seq[i] = h_seq[i], h_seq[c]
        h_job[c], h_job[i] = h_job[i], h_job[c]
        h_srv[c], h_srv[i] = h_srv[i], h_srv[c]
        i = c
    return size
