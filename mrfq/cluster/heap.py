"""The cluster kernel's event heap: one entry per running task, keyed by (end time, launch
number), in four parallel arrays (time, sequence, job, server); ``size`` entries in use.
Binary heap, smallest key on top; both functions return the new size. Numba caches
:func:`mrfq.cluster.kernel.simulate` keyed on kernel.py alone: after a change here, run
with a fresh ``NUMBA_CACHE_DIR`` (or touch kernel.py) so that it is recompiled."""

from numba import njit


@njit(cache=True, inline="always")
def _before(h_time, h_seq, a, b):
    """Entry a comes out before entry b: earlier end, or the same end and launched first."""
    return h_time[a] < h_time[b] or (h_time[a] == h_time[b] and h_seq[a] < h_seq[b])


@njit(cache=True, inline="always")
def _swap(h_time, h_seq, h_job, h_srv, a, b):
    h_time[a], h_time[b] = h_time[b], h_time[a]
    h_seq[a], h_seq[b] = h_seq[b], h_seq[a]
    h_job[a], h_job[b] = h_job[b], h_job[a]
    h_srv[a], h_srv[b] = h_srv[b], h_srv[a]


@njit(cache=True)
def heap_push(h_time, h_seq, h_job, h_srv, size, t, seq, job, srv):
    i = size
    h_time[i], h_seq[i], h_job[i], h_srv[i] = t, seq, job, srv
    while i > 0:
        p = (i - 1) // 2
        if _before(h_time, h_seq, p, i):
            break
        _swap(h_time, h_seq, h_job, h_srv, p, i)
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
        if c + 1 < size and _before(h_time, h_seq, c + 1, c):
            c += 1
        if _before(h_time, h_seq, i, c):
            break
        _swap(h_time, h_seq, h_job, h_srv, c, i)
        i = c
    return size
