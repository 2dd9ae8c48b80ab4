"""Flow-level (fluid) simulator of the demand model with general flow sizes (issue 14).

Class-k flows arrive as a Poisson process of rate λ_k = ρ_k / E[S_k] (ρ_k is the load in
work per unit time; E[S_k] = 1 for every law of :mod:`mrfq.sizes` except an un-rescaled
empirical one) and bring work S_k from the class's size law. Between events the state
n = (n_1 … n_K) is constant and every class-k flow is served at the exact fluid rate
φ_k(n) of the policy (DRF, PF, BMF through :func:`mrfq.fluid.kernels.allocate_into`, the
kernels of the Markov solver; BF through :mod:`mrfq.fluid.balanced`). A flow completes
when its work is drained. The model is that of BR §4.1 / SPEC §2 with the exponential law
replaced by any law.

Three modules, as the packet side's kernel and engine:

* :mod:`mrfq.fluid.flowsim_kernel` — the event loop (Numba; virtual times, heaps, the
  allocation cache, the event order);
* this module — the driver: arrivals (streams of :mod:`mrfq.seeds`), the loop's buffers,
  one run (:func:`simulate_flows`) and the runs of a point (:func:`flow_service_rates`);
* :mod:`mrfq.fluid.flowsim_stats` — the run record and the estimator (γ, intervals).
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from mrfq import policies, seeds
from mrfq.arrivals import PoissonArrivals
from mrfq.errors import InputError
from mrfq.fluid import balanced
from mrfq.fluid.flowsim_kernel import (
    DONE,
    I_EVENTS,
    I_HITS,
    I_MISSES,
    I_NEXT,
    I_OUTSTANDING,
    NEED_ARRIVALS,
    NEED_BOX,
    NEED_CAPACITY,
    NO_ALLOCATION,
    flow_level_loop,
)
from mrfq.fluid.flowsim_stats import (  # noqa: F401 - FlowRates, flow_rates: public here
    FlowLevelRun,
    FlowRates,
    combine,
    flow_rates,
    relaxation,
    run_summary,
    start_up_flows,
    too_short,
)
from mrfq.fluid.problem import as_problem, stable_loads
from mrfq.sizes import SizeLaw, parse_size

#: bump when a seeded run's results change; for the keys of stored flow-level points
FLOWSIM_VERSION = "3"
#: arrivals drawn per block
ARRIVAL_BLOCK = 1 << 16
#: events per call of the event loop (between progress reports)
CHUNK_EVENTS = 1 << 21
#: initial capacity of each class's heap (doubled when full)
INITIAL_HEAP = 256
#: slots of the allocation cache (DRF, PF, BMF)
CACHE_SLOTS = 1 << 17
#: initial extent of BF's Φ box per class with load (doubled when reached)
INITIAL_BOX = 16


class FlowArrivals:
    """Poisson arrivals per class with sizes from each class's law, in fixed blocks.

    Streams derived (not ``spawn()``ed) from ``seed_seq`` by :func:`mrfq.seeds.stream`
    with the tags :data:`mrfq.seeds.FLOW_ARRIVALS` + i: inter-arrival gaps (i = 0;
    standard exponentials divided by Λ = Σ_k λ_k), classes (i = 1; uniforms against the
    cumulative λ_k/Λ) and one size stream per class (i = 10 + k), so a class's sizes do
    not depend on the other classes' laws and the whole sequence depends only on the seed
    (common random numbers across policies; across loads the same draws are rescaled).
    """

    def __init__(self, seed_seq: np.random.SeedSequence, class_loads: np.ndarray,
                 laws: Sequence[SizeLaw]):
        def derived(i):
            return seeds.stream(seed_seq, seeds.FLOW_ARRIVALS + i)

        self._sizes = [derived(10 + k) for k in range(len(laws))]
        self._laws = list(laws)
        rates = np.asarray(class_loads, dtype=np.float64) / np.array([w.mean for w in laws])
        self._poisson = PoissonArrivals(derived(0), derived(1), rates, ARRIVAL_BLOCK)
        self.total_rate = self._poisson.total_rate

    def next_block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next :data:`ARRIVAL_BLOCK` flows: arrival times (increasing, after the last
        block's), classes and works S (fluid units: the class's law, mean E[S_k])."""
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


def _laws(sizes, K: int) -> list[SizeLaw]:
    # one law for every class (parse_size says what a string may be)
    if sizes is None or isinstance(sizes, dict | SizeLaw | str):
        return [parse_size(sizes)] * K
    if not isinstance(sizes, Sequence):
        raise InputError(f"must be a size law or a list of one per class, got {sizes!r}",
                         "sizes")
    sizes = list(sizes)
    if len(sizes) != K:
        raise InputError(f"has {len(sizes)} entries, expected {K} (one per class)", "sizes")
    return [parse_size(s, f"sizes[{k}]") for k, s in enumerate(sizes)]


def simulate_flows(requirements: ArrayLike, class_loads: ArrayLike, policy: str,
                   sizes: SizeLaw | dict | Sequence[SizeLaw | dict | None] | None = None,
                   seed_seq: int | np.random.SeedSequence = 1,
                   flows: int = 100_000, weights: ArrayLike | None = None, *,
                   arrivals: Sequence[ArrayLike] | None = None, cache: bool = True,
                   progress: Callable[[int, int], None] | None = None) -> FlowLevelRun:
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
    explicit = entry.law == policies.EXPLICIT_LAW  # φ from Φ (a box of it), not cached
    a, _, w = as_problem(requirements, None, weights)
    K = a.shape[0]
    rho = stable_loads(a, class_loads, "class_loads", nonzero=True)
    _check_count(flows, "flows")
    laws = _laws(sizes, K)
    buffer = _ArrivalBuffer(flows + ARRIVAL_BLOCK)
    if arrivals is None:
        stream = FlowArrivals(seeds.run_seed(seed_seq), rho, laws)

        def extend():
            buffer.append(*stream.next_block())
    else:
        trace = [np.asarray(x) for x in arrivals]
        if len(trace) != 3 or len({len(x) for x in trace}) != 1:
            raise InputError("must be (times, classes, works) of equal lengths", "arrivals")
        times, classes, works = trace
        if len(times) < flows or not np.all(np.isfinite(times)) or np.any(np.diff(times) < 0):
            raise InputError("must be sorted by time (finite) and hold at least `flows` "
                             "arrivals", "arrivals")
        # the loop indexes its per-class arrays with these: one outside 0 … K − 1 read
        # past them (a review: class 7 of 3 ended in "arrival trace exhausted")
        if not (np.issubdtype(classes.dtype, np.integer) and np.all((classes >= 0)
                                                                    & (classes < K))):
            raise InputError(f"classes must be integers 0 … {K - 1}", "arrivals")
        if not np.all(np.isfinite(works) & (works > 0)):
            raise InputError("works must be finite and > 0", "arrivals")
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
    slots = CACHE_SLOTS if cache and not explicit else 0
    cache_keys = np.full((slots, K), -1, dtype=np.int64)
    cache_phi = np.zeros((slots, K))
    bf_dims = np.ones(K, dtype=np.int64)
    bf_log = np.zeros(1)
    if explicit:
        bf_dims = np.where(rho > 0, INITIAL_BOX, 1).astype(np.int64)
        if np.prod(bf_dims.astype(float)) > balanced.MAX_BOX:  # (8 classes: 34 GB)
            raise InputError(f"balanced fairness needs Φ on a box of {INITIAL_BOX} states "
                             f"per loaded class, {np.prod(bf_dims.astype(float)):.3g} "
                             f"states for these {int(np.sum(rho > 0))} (more than "
                             f"{balanced.MAX_BOX}): the flow-level simulator cannot run bf "
                             "with so many loaded classes", "policy")
        bf_log = balanced.log_balance_box_kernel(a, bf_dims)
    t = 0.0
    started = time.perf_counter()
    while True:
        status, t = flow_level_loop(code, a, w, buffer.time, buffer.cls, buffer.work,
                                    buffer.count, flows, completion, istate, t, vtime, n, phi,
                                    heap_key, heap_id, heap_len, cache_keys, cache_phi, bf_log,
                                    bf_dims, CHUNK_EVENTS)
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
    return FlowLevelRun(arrival=buffer.time[:flows], completion=completion,
                        flow_class=buffer.cls[:flows], size=buffer.work[:flows],
                        events=int(istate[I_EVENTS]), end_time=float(t),
                        wall_s=time.perf_counter() - started,
                        cache_hits=int(istate[I_HITS]), cache_misses=int(istate[I_MISSES]))


def _check_count(value, field: str, least: int = 1) -> None:
    """InputError unless ``value`` is an integer ≥ ``least`` (a bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise InputError(f"must be an integer >= {least}, got {value!r}", field)


def flow_service_rates(requirements: ArrayLike, class_loads: ArrayLike, policy: str,
                       sizes: SizeLaw | dict | Sequence[SizeLaw | dict | None] | None = None,
                       *, flows: int, warmup: float = 0.05, replications: int = 1,
                       seed: int = 1, weights: ArrayLike | None = None, batches: int = 20,
                       confidence: float = 0.95,
                       progress: Callable[[int, int], None] | None = None,
                       warn: bool = True) -> FlowRates:
    """γ_k of one point by flow-level simulation: ``replications`` runs of ``flows`` flows.

    Run r uses :func:`mrfq.seeds.run_seed` ``(seed, r)`` (as packet runs, so the same seed
    gives common random numbers across policies and loads). ``progress(done, total)``
    counts completed flows over all runs. ``warn``: a RuntimeWarning when the runs are
    too short for the interval (:func:`mrfq.fluid.flowsim_stats.too_short`; a sweep says
    it in the point's ``ci_warning`` instead).
    """
    a, _, _ = as_problem(requirements, None, weights)
    laws = _laws(sizes, a.shape[0])
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Real) or not 0 <= warmup < 1:
        raise InputError(f"must be a fraction in [0, 1), got {warmup!r}", "warmup")
    _check_count(replications, "replications")
    _check_count(seed, "seed", least=0)
    _check_count(batches, "batches", least=2)
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) \
            or not 0 < confidence < 1:
        raise InputError(f"must be in (0, 1), got {confidence!r}", "confidence")
    by_replication = replications >= 10
    summaries, events, wall = [], 0, 0.0
    for r in range(replications):
        def report(done, total, r=r):
            if progress is not None:
                progress(r * total + done, replications * total)
        run = simulate_flows(a, class_loads, policy, laws, seeds.run_seed(seed, r), flows,
                             weights, progress=report)
        if r == 0:  # (the loads and flows checked by the run: no warning before an error)
            relaxation_time = relaxation(a, class_loads, [law.mean for law in laws])
            start_up = start_up_flows(relaxation_time)
            why = too_short(flows, replications, relaxation_time, warmup)
            if why and warn:
                warnings.warn(f"unreliable interval: {why}: gamma comes out high",
                              RuntimeWarning, stacklevel=2)
        # keep a summary, not the records: memory stays one run's
        summaries.append(run_summary(run, a.shape[0], warmup, 1 if by_replication
                                     else batches, start_up))
        events, wall = events + run.events, wall + run.wall_s
        del run
    return combine(summaries, class_loads, [law.mean for law in laws], confidence,
                   by_replication, events, wall, relaxation_time)
