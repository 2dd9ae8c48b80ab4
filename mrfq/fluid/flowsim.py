"""Flow-level (fluid) simulator of the demand model with general flow sizes (issue 14).

Class-k flows arrive as a Poisson process of rate λ_k = ρ_k / E[S_k] (ρ_k is the load in
work per unit time; E[S_k] = 1 for every law of :mod:`mrfq.sizes` except an un-rescaled
empirical one) and bring work S_k from the class's size law. Between events the state
n = (n_1 … n_K) is constant and every class-k flow is served at the exact fluid rate
φ_k(n) of the policy (DRF, PF, BMF through :func:`mrfq.fluid.kernels.allocate_into`, the
kernels of the Markov solver; BF through :mod:`mrfq.fluid.balanced`). A flow completes
when its work is drained. The model is that of BR §4.1 / SPEC §2 with the exponential law
replaced by any law.

**Event loop** (Numba, ``cache=True``). All flows of a class have the same rate, so each
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

**Measurement** (as SPEC §3 for packet runs): arrivals continue until every flow with
arrival index < ``flows`` has completed; flows with index < ⌊warm-up · flows⌋ are not
measured. The independent units are the replications when there are ≥ 10, else 20
consecutive batches (arrival order) of every replication, pooled. Per class: the ratio
estimator R = Σ S / Σ T over all measured flows (the fluid γ the pipeline reports) with
the delta-method interval of :func:`mrfq.intervals.ratio_interval` over the units' totals
(S_u, T_u): R ± t_{n−1} · √(Σ (S_u − R T_u)² / (n (n−1))) / T̄, centred on R, so it
always brackets it; and γ_k = E[S_k] / mean T with the same interval for the mean sojourn
Σ T / Σ count (centred on the pooled mean) mapped through E[S_k] / T.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from mrfq import policies
from mrfq.arrivals import PoissonArrivals
from mrfq.errors import InputError
from mrfq.fluid import balanced, kernels
from mrfq.fluid.allocators import as_problem, stable_loads
from mrfq.intervals import ratio_interval
from mrfq.sizes import SizeLaw, parse_size

#: bump when a seeded run's results change; for the keys of stored flow-level points
FLOWSIM_VERSION = "2"
DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY, NEED_BOX, NO_ALLOCATION = 0, 1, 2, 3, 4, 5
I_NEXT, I_OUTSTANDING, I_EVENTS, I_CACHED, I_HITS, I_MISSES = range(6)
ARRIVAL_BLOCK = 1 << 16
CHUNK_EVENTS = 1 << 21
INITIAL_HEAP = 256
CACHE_SLOTS = 1 << 17
INITIAL_BOX = 16


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
def run_flows(code, requirements, weights, arr_time, arr_class, arr_size, n_arrivals, flows,
              completion, istate, time_now, vtime, n, phi, heap_key, heap_id, heap_len,
              cache_keys, cache_phi, bf_log, bf_dims, budget):
    """Run at most ``budget`` events; returns (status, time). State lives in the arrays.

    ``code``: policy (0 DRF, 1 PF, 2 BMF, 3 BF). ``arr_*``: the first ``n_arrivals``
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


class FlowArrivals:
    """Poisson arrivals per class with sizes from each class's law, in fixed blocks.

    Streams derived (not ``spawn()``ed) from ``seed_seq``: inter-arrival gaps (standard
    exponentials divided by Λ = Σ_k λ_k), classes (uniforms against the cumulative λ_k/Λ)
    and one size stream per class, so a class's sizes do not depend on the other classes'
    laws and the whole sequence depends only on the seed (common random numbers across
    policies; across loads the same draws are rescaled).
    """

    def __init__(self, seed_seq: np.random.SeedSequence, class_loads: np.ndarray,
                 laws: Sequence[SizeLaw]):
        def derived(i):
            return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
                seed_seq.entropy, spawn_key=(*seed_seq.spawn_key, 2000 + i))))

        self._sizes = [derived(10 + k) for k in range(len(laws))]
        self._laws = list(laws)
        rates = np.asarray(class_loads, dtype=np.float64) / np.array([w.mean for w in laws])
        self._poisson = PoissonArrivals(derived(0), derived(1), rates, ARRIVAL_BLOCK)
        self.total_rate = self._poisson.total_rate

    def next_block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        times, classes = self._poisson.times_and_classes()
        sizes = np.empty(ARRIVAL_BLOCK)
        for k, law in enumerate(self._laws):
            mine = classes == k
            sizes[mine] = law.sample(self._sizes[k], int(mine.sum()))
        return times, classes, sizes


class _ArrivalBuffer:
    """Arrival arrays (time, class, work) with spare capacity, grown by doubling."""

    def __init__(self, capacity: int):
        self.time = np.empty(capacity)
        self.cls = np.empty(capacity, dtype=np.int64)
        self.work = np.empty(capacity)
        self.count = 0

    def append(self, times, classes, works) -> None:
        end = self.count + len(times)
        if end > self.time.size:
            size = max(2 * self.time.size, end)
            for name in ("time", "cls", "work"):
                old = getattr(self, name)
                new = np.empty(size, dtype=old.dtype)
                new[: self.count] = old[: self.count]
                setattr(self, name, new)
        self.time[self.count:end] = times
        self.cls[self.count:end] = classes
        self.work[self.count:end] = works
        self.count = end


@dataclass(frozen=True)
class FlowRun:
    """Per-flow records of one run, flows in arrival order (index < ``flows``).

    ``arrival``, ``completion``: times; ``flow_class``: class index; ``size``: work (fluid
    units, mean 1 = the class's mean size). ``events``: arrivals + departures processed
    (including those of flows after the last recorded one); ``end_time``: time of the
    last event; ``cache_hits``/``cache_misses``: allocation cache use (DRF/PF/BMF).
    """

    arrival: np.ndarray
    completion: np.ndarray
    flow_class: np.ndarray
    size: np.ndarray
    events: int
    end_time: float
    wall_s: float
    cache_hits: int
    cache_misses: int


def _laws(sizes, K: int) -> list[SizeLaw]:
    if sizes is None or isinstance(sizes, dict | SizeLaw):
        return [parse_size(sizes)] * K
    sizes = list(sizes)
    if len(sizes) != K:
        raise InputError(f"has {len(sizes)} entries, expected {K} (one per class)", "sizes")
    return [parse_size(s, f"sizes[{k}]") for k, s in enumerate(sizes)]


def _seed_sequence(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(seed)


def simulate_flows(requirements, class_loads, policy: str, sizes=None, seed_seq=1,
                   flows: int = 100_000, weights=None, *, arrivals=None, cache: bool = True,
                   progress: Callable[[int, int], None] | None = None) -> FlowRun:
    """One flow-level run until every flow with index < ``flows`` has completed.

    ``requirements`` K×J (normalised rows, SPEC §1); ``class_loads`` ρ_k (work per unit
    time; must be stable); ``policy``: a fluid policy name (drf, pf, bmf, bf); ``sizes``:
    one size spec or :class:`~mrfq.sizes.SizeLaw` for every class, a list of K of them,
    or ``None`` (exponential); ``seed_seq``: a ``numpy.random.SeedSequence`` or an int
    (same seed → bit-identical run). ``weights`` as in :func:`mrfq.fluid.allocate` (BF
    ignores them). ``arrivals`` = (times, classes, works) replaces the Poisson stream by a
    trace (sorted by time, at least ``flows`` arrivals; none after its end). ``cache=False``
    recomputes every allocation (same results; for tests and benchmarks).
    ``progress(completed, flows)`` is called between chunks of events.
    """
    entry = policies.get(policies.FLUID, policy)
    code = entry.code
    a, _, w = as_problem(requirements, None, weights)
    K = a.shape[0]
    rho = stable_loads(a, class_loads, "class_loads", nonzero=True)
    if isinstance(flows, bool) or not isinstance(flows, int | np.integer) or flows < 1:
        raise InputError(f"must be a positive integer, got {flows!r}", "flows")
    laws = _laws(sizes, K)
    buffer = _ArrivalBuffer(flows + ARRIVAL_BLOCK)
    if arrivals is None:
        stream = FlowArrivals(_seed_sequence(seed_seq), rho, laws)

        def extend():
            buffer.append(*stream.next_block())
    else:
        trace = [np.asarray(x) for x in arrivals]
        if len(trace[0]) < flows or np.any(np.diff(trace[0]) < 0):
            raise InputError("must be sorted by time and hold at least `flows` arrivals",
                             "arrivals")
        # a sentinel arrival at +∞: after the trace, the flows in progress drain
        buffer.append(np.append(trace[0], np.inf), np.append(trace[1], 0),
                      np.append(trace[2], 1.0))

        def extend():
            raise RuntimeError("arrival trace exhausted")  # the sentinel is never reached
    while buffer.count < flows + 1:
        extend()
    completion = np.full(flows, np.nan)
    istate = np.zeros(6, dtype=np.int64)
    istate[I_OUTSTANDING] = flows
    vtime, phi = np.zeros(K), np.zeros(K)
    n = np.zeros(K, dtype=np.int64)
    heap_key = np.zeros((K, INITIAL_HEAP))
    heap_id = np.zeros((K, INITIAL_HEAP), dtype=np.int64)
    heap_len = np.zeros(K, dtype=np.int64)
    slots = CACHE_SLOTS if cache and code != balanced.BF else 0
    cache_keys = np.full((slots, K), -1, dtype=np.int64)
    cache_phi = np.zeros((slots, K))
    bf_dims = np.ones(K, dtype=np.int64)
    bf_log = np.zeros(1)
    if code == balanced.BF:
        bf_dims = np.where(rho > 0, INITIAL_BOX, 1).astype(np.int64)
        bf_log = balanced.log_balance_box_kernel(a, bf_dims)
    t = 0.0
    started = time.perf_counter()
    while True:
        status, t = run_flows(code, a, w, buffer.time, buffer.cls, buffer.work, buffer.count,
                              flows, completion, istate, t, vtime, n, phi, heap_key, heap_id,
                              heap_len, cache_keys, cache_phi, bf_log, bf_dims, CHUNK_EVENTS)
        if status == DONE:
            break
        if status == NO_ALLOCATION:
            raise InputError(f"no {entry.label} allocation with positive rates in state "
                             f"{n.tolist()} (time {t:.6g})", "requirements")
        if status == NEED_ARRIVALS:
            extend()
        elif status == NEED_CAPACITY:
            heap_key = np.concatenate([heap_key, np.zeros_like(heap_key)], axis=1)
            heap_id = np.concatenate([heap_id, np.zeros_like(heap_id)], axis=1)
        elif status == NEED_BOX:
            c = int(buffer.cls[istate[I_NEXT]])
            bf_dims = bf_dims.copy()
            bf_dims[c] = max(2 * bf_dims[c], n[c] + 2)
            if np.prod(bf_dims.astype(float)) > balanced.MAX_BOX:
                raise InputError(f"balanced fairness needs Φ on a box of "
                                 f"{np.prod(bf_dims.astype(float)):.3g} states (more than "
                                 f"{balanced.MAX_BOX}): lower the load or the flows", "flows")
            bf_log = balanced.log_balance_box_kernel(a, bf_dims)
        if progress is not None:
            progress(flows - int(istate[I_OUTSTANDING]), flows)
    # views of the private buffer (no copies: a long run's records are GBs)
    return FlowRun(arrival=buffer.time[:flows], completion=completion,
                   flow_class=buffer.cls[:flows], size=buffer.work[:flows],
                   events=int(istate[I_EVENTS]), end_time=float(t),
                   wall_s=time.perf_counter() - started, cache_hits=int(istate[I_HITS]),
                   cache_misses=int(istate[I_MISSES]))


# --- statistics (intervals from mrfq.intervals.ratio_interval) --------------------------

@dataclass(frozen=True)
class FlowRates:
    """Per-class estimates (arrays of K) from one or more runs of the same point.

    ``gamma`` = E[S_k] / mean sojourn (the packet side's m / E[T_k]); ``ci_low``/``ci_high``
    its interval (``ci_method``: "replications" or "batch means"); ``ratio``, ``ratio_low``,
    ``ratio_high``: Σ S / Σ T over measured flows and its delta-method interval (centred
    on ``ratio``; module doc); ``mean_in_progress``
    (time average over the measured arrival window) and ``little_gamma`` = ρ_k / it;
    ``flows_measured``; ``events`` and ``wall_s`` summed over runs.
    """

    gamma: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    ratio: np.ndarray
    ratio_low: np.ndarray
    ratio_high: np.ndarray
    mean_in_progress: np.ndarray
    little_gamma: np.ndarray
    flows_measured: np.ndarray
    ci_method: str
    replications: int
    events: int
    wall_s: float


def _run_summary(run: FlowRun, K: int, warmup: float, parts: int) -> list[dict]:
    """Per class: sums over measured flows, the counts and sums of sojourn and size of
    ``parts`` consecutive batches (arrival order), and the time-average number in progress
    over the measured window."""
    flows = run.arrival.size
    first = int(warmup * flows)
    sojourn = run.completion - run.arrival
    start, end = float(run.arrival[first]), float(run.arrival[-1])
    overlap = np.clip(np.minimum(run.completion, end) - np.maximum(run.arrival, start),
                      0.0, None)
    summary = []
    for k in range(K):
        idx = np.flatnonzero(run.flow_class[first:] == k) + first
        T, S = sojourn[idx], run.size[idx]
        batch_n, batch_T, batch_S = [], [], []
        for part in np.array_split(np.arange(idx.size), parts) if idx.size else []:
            if part.size:
                batch_n.append(part.size)
                batch_T.append(T[part].sum())
                batch_S.append(S[part].sum())
        summary.append({"count": idx.size, "sum_T": T.sum(), "sum_S": S.sum(),
                        "batch_n": batch_n, "batch_T": batch_T, "batch_S": batch_S,
                        "in_progress": (overlap[run.flow_class == k].sum() / (end - start)
                                        if end > start else np.nan)})
    return summary


def _combine(summaries: list[list[dict]], class_loads, mean_work, confidence: float,
             by_replication: bool, events: int, wall_s: float) -> FlowRates:
    rho = np.asarray(class_loads, dtype=np.float64)
    mean_work = np.broadcast_to(np.asarray(mean_work, dtype=np.float64), rho.shape)
    K = rho.size
    out = {key: np.full(K, np.nan) for key in ("gamma", "ci_low", "ci_high", "ratio",
                                               "ratio_low", "ratio_high",
                                               "mean_in_progress", "little_gamma")}
    measured = np.zeros(K, dtype=np.int64)
    for k in range(K):
        rows = [run[k] for run in summaries if run[k]["count"]]
        if not rows:
            continue
        measured[k] = sum(r["count"] for r in rows)
        sum_T = sum(r["sum_T"] for r in rows)
        units_n, units_T, units_S = (np.concatenate([r[key] for r in rows]).astype(np.float64)
                                     for key in ("batch_n", "batch_T", "batch_S"))
        # mean sojourn ΣT / Σn: ratio estimator over the units (centred on the pooled mean)
        mean_T = ratio_interval(units_T, units_n, confidence)
        out["gamma"][k] = mean_work[k] * measured[k] / sum_T
        out["ci_low"][k] = mean_work[k] / mean_T.high if mean_T.high > 0 else np.nan
        out["ci_high"][k] = mean_work[k] / mean_T.low if mean_T.low > 0 else (
            np.inf if mean_T.ok else np.nan)
        # Σ S / Σ T with the delta-method interval centred on it (the packet side's)
        ratio = ratio_interval(units_S, units_T, confidence)
        out["ratio"][k] = sum(r["sum_S"] for r in rows) / sum_T
        out["ratio_low"][k], out["ratio_high"][k] = ratio.low, ratio.high
        out["mean_in_progress"][k] = float(np.mean([run[k]["in_progress"]
                                                    for run in summaries]))
        if out["mean_in_progress"][k] > 0:
            out["little_gamma"][k] = rho[k] / out["mean_in_progress"][k]
    return FlowRates(**out, flows_measured=measured,
                     ci_method="replications" if by_replication else "batch means",
                     replications=len(summaries), events=events, wall_s=wall_s)


def flow_rates(runs: Sequence[FlowRun], class_loads, mean_work, warmup: float = 0.05,
               batches: int = 20, confidence: float = 0.95) -> FlowRates:
    """Per-class γ and intervals from runs of one point (see :class:`FlowRates`).

    ``mean_work``: E[S_k] per class (the laws' means, 1 for rescaled laws). With ≥ 10
    runs the intervals are Student-t over runs; otherwise over ``batches`` consecutive
    batches (arrival order) of every run, pooled.
    """
    K = np.asarray(class_loads).size
    by_replication = len(runs) >= 10
    parts = 1 if by_replication else batches
    summaries = [_run_summary(run, K, warmup, parts) for run in runs]
    return _combine(summaries, class_loads, mean_work, confidence, by_replication,
                    sum(r.events for r in runs), sum(r.wall_s for r in runs))


def flow_service_rates(requirements, class_loads, policy: str, sizes=None, *, flows: int,
                       warmup: float = 0.05, replications: int = 1, seed: int = 1,
                       weights=None, batches: int = 20, confidence: float = 0.95,
                       progress: Callable[[int, int], None] | None = None) -> FlowRates:
    """γ_k of one point by flow-level simulation: ``replications`` runs of ``flows`` flows.

    Run r uses ``SeedSequence(seed, spawn_key=(r,))`` (as packet runs, so the same seed
    gives common random numbers across policies and loads). ``progress(done, total)``
    counts completed flows over all runs.
    """
    a, _, _ = as_problem(requirements, None, weights)
    laws = _laws(sizes, a.shape[0])
    if not 0 <= warmup < 1:
        raise InputError(f"must be in [0, 1), got {warmup!r}", "warmup")
    by_replication = replications >= 10
    summaries, events, wall = [], 0, 0.0
    for r in range(replications):
        def report(done, total, r=r):
            if progress is not None:
                progress(r * total + done, replications * total)
        run = simulate_flows(a, class_loads, policy, laws,
                             np.random.SeedSequence(seed, spawn_key=(r,)), flows, weights,
                             progress=report)
        # keep a summary, not the records: memory stays one run's
        summaries.append(_run_summary(run, a.shape[0], warmup, 1 if by_replication
                                      else batches))
        events, wall = events + run.events, wall + run.wall_s
        del run
    return _combine(summaries, class_loads, [law.mean for law in laws], confidence,
                    by_replication, events, wall)
