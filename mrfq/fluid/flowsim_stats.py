"""The flow-level simulator's records and estimator: a run's per-flow record
(:class:`FlowLevelRun`) and the per-class γ with intervals over runs (:func:`flow_rates`).

**Measurement** (as SPEC §3 for packet runs): arrivals continue until every flow with
arrival index < ``flows`` has completed; flows with index < max(⌊warm-up · flows⌋, two
relaxation times: :func:`start_up_flows`) are not measured. The independent units are
the replications when there are ≥ 10, else 20 consecutive batches (arrival order) of
every replication, pooled — as lugsail batch means over 5 batches where a batch spans
fewer than :data:`PLAIN_BATCH_RELAXATIONS` relaxation times (:func:`_units`). Per class:
the ratio estimator R = Σ S / Σ T over all measured flows times Tin's factor (the fluid γ
the pipeline reports, ``ratio``) with the delta-method interval of
:func:`mrfq.intervals.ratio_interval` over the units' totals (S_u, T_u): ± t_{n−1} ·
√(Σ (S_u − R T_u)² / (n (n−1))) / T̄, centred on the estimate, so it always brackets it;
and γ_k = E[S_k] / mean T with the same interval for the mean sojourn Σ T / Σ count
(centred on the pooled mean) mapped through E[S_k] / T.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mrfq.intervals import (
    LUGSAIL_BATCHES,
    RELAXATIONS,
    lugsail_units,
    ratio_interval,
    relaxation_flows,
)


@dataclass(frozen=True)
class FlowLevelRun:
    """Per-flow records of one run, flows in arrival order (index < ``flows``).

    ``arrival``, ``completion``: times; ``flow_class``: class index; ``size``: work (fluid
    units, mean 1 = the class's mean size). ``events``: arrivals + departures processed
    (including those of flows after the last recorded one); ``end_time``: time of the
    last event; ``wall_s``: seconds in the event loop; ``cache_hits``/``cache_misses``:
    allocation cache use (DRF/PF/BMF).
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


def run_summary(run: FlowLevelRun, K: int, warmup: float, parts: int,
                start_up: int = 0) -> list[dict]:
    """Per class: sums over measured flows, the counts and sums of sojourn and size of
    ``parts`` consecutive batches (arrival order), and the time-average number in progress
    over the measured window; ``batch_span``: the arrivals (every class) each batch spans.
    The flows before max(⌊``warmup`` · flows⌋, ``start_up``)
    are not measured (``start_up``: :func:`start_up_flows`)."""
    flows = run.arrival.size
    first = min(max(int(warmup * flows), int(start_up)), flows - 1)
    sojourn = run.completion - run.arrival
    start, end = float(run.arrival[first]), float(run.arrival[-1])
    overlap = np.clip(np.minimum(run.completion, end) - np.maximum(run.arrival, start),
                      0.0, None)
    summary = []
    for k in range(K):
        idx = np.flatnonzero(run.flow_class[first:] == k) + first
        T, S = sojourn[idx], run.size[idx]
        batch_n, batch_T, batch_S, span = [], [], [], []
        for part in np.array_split(np.arange(idx.size), parts) if idx.size else []:
            if part.size:
                span.append(int(idx[part[-1]] - idx[part[0]] + 1))  # arrivals, all classes
                batch_n.append(part.size)
                batch_T.append(T[part].sum())
                batch_S.append(S[part].sum())
        summary.append({"count": idx.size, "sum_T": T.sum(), "sum_S": S.sum(),
                        "batch_n": batch_n, "batch_T": batch_T, "batch_S": batch_S,
                        "batch_span": span,
                        "in_progress": (overlap[run.flow_class == k].sum() / (end - start)
                                        if end > start else np.nan)})
    return summary


#: relaxation times a batch must span for plain batch means (below: lugsail batches):
#: the run-length advisor's 20 per degree of freedom (:data:`mrfq.advisor.
#: RELAXATIONS_PER_DOF`), with a margin; 20 plain batches of a 200 000-flow run at load
#: 0.9 (28 relaxation times each) covered 91–93% (150 seeds, a review, 2026-11-28)
PLAIN_BATCH_RELAXATIONS = 50


def _units(rows: list[dict], numerator: str, denominator: str, relaxation: float = 0.0
           ) -> tuple[np.ndarray, np.ndarray, float]:
    """The units of an interval over the runs' batch sums ``rows[r][numerator]`` /
    ``[denominator]`` (one per run with replications), and the factor of its variance.
    Batches shorter than :data:`PLAIN_BATCH_RELAXATIONS` relaxation times (``relaxation``
    flows each), at least 2 · :data:`mrfq.intervals.LUGSAIL_BATCHES` of them in every run:
    added up into that many halves and those into LUGSAIL_BATCHES batches per run, whose
    variance is the lugsail one (:func:`mrfq.intervals.lugsail_scale`), as a packet run's:
    20 plain batches of one 20 000-flow run at load 0.9 are about three relaxation times
    long, correlated, and their interval covered 88% (a review, 2026-11-28; 91–93% now).
    Otherwise the batches as they are, factor 1."""
    ys = [np.asarray(r[numerator], dtype=np.float64) for r in rows]
    xs = [np.asarray(r[denominator], dtype=np.float64) for r in rows]
    shortest = min(min(r["batch_span"]) for r in rows)  # (relaxation: in all flows)
    if (min(a.size for a in ys) < 2 * LUGSAIL_BATCHES
            or shortest >= PLAIN_BATCH_RELAXATIONS * relaxation):
        return np.concatenate(ys), np.concatenate(xs), 1.0
    return lugsail_units(ys, xs)


def combine(summaries: list[list[dict]], class_loads: ArrayLike, mean_work: ArrayLike,
            confidence: float, by_replication: bool, events: int, wall_s: float,
            relaxation: float = 0.0) -> FlowRates:
    """:class:`FlowRates` from the :func:`run_summary` of every run of one point (module
    doc); ``by_replication``: the units are the runs (else their batches, pooled);
    ``events``, ``wall_s``: the runs' totals; ``relaxation``: flows in one relaxation time
    (:func:`relaxation`), which decides between plain and lugsail batches."""
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
        # mean sojourn ΣT / Σn: ratio estimator over the units (centred on the pooled mean)
        units_T, units_n, scale = _units(rows, "batch_T", "batch_n", relaxation)
        mean_T = ratio_interval(units_T, units_n, confidence, variance_scale=scale)
        out["gamma"][k] = mean_work[k] * measured[k] / sum_T
        out["ci_low"][k] = mean_work[k] / mean_T.high if mean_T.high > 0 else np.nan
        out["ci_high"][k] = mean_work[k] / mean_T.low if mean_T.low > 0 else (
            np.inf if mean_T.ok else np.nan)
        # Σ S / Σ T times Tin's factor, the delta-method interval centred on it (the
        # packet side's): without the factor γ sat +1.8% high at load 0.9 (a review)
        units_S, units_T, scale = _units(rows, "batch_S", "batch_T", relaxation)
        ratio = ratio_interval(units_S, units_T, confidence, correct_bias=True,
                               variance_scale=scale)
        out["ratio"][k] = ratio.estimate
        out["ratio_low"][k], out["ratio_high"][k] = ratio.low, ratio.high
        out["mean_in_progress"][k] = float(np.mean([run[k]["in_progress"]
                                                    for run in summaries]))
        if out["mean_in_progress"][k] > 0:
            out["little_gamma"][k] = rho[k] / out["mean_in_progress"][k]
    return FlowRates(**out, flows_measured=measured,
                     ci_method="replications" if by_replication else "batch means",
                     replications=len(summaries), events=events, wall_s=wall_s)


def relaxation(requirements: ArrayLike, class_loads: ArrayLike,
               mean_work: ArrayLike) -> float:
    """Flows in one relaxation time of the most loaded resource
    (:func:`mrfq.intervals.relaxation_flows`, flow rates ρ_k / E[S_k]); 0 at or above
    saturation (nothing to relax to)."""
    rho = np.asarray(class_loads, dtype=np.float64)
    rates = rho / np.broadcast_to(np.asarray(mean_work, dtype=np.float64), rho.shape)
    flows = relaxation_flows(rho, np.asarray(requirements, dtype=np.float64), rates)
    return float(flows) if np.isfinite(flows) else 0.0


def start_up_flows(relaxation_time: float) -> int:
    """Flows from each run's start left out of γ at least: :data:`mrfq.intervals.
    RELAXATIONS` relaxation times of ``relaxation_time`` flows each (:func:`relaxation`),
    as the packet side's ``warmup = "auto"``: 684 flows on one resource at load 0.9. A
    run starts empty, and at load 0.9 the fixed 5% of a 2 000-flow run (100 flows) left
    γ +4.5% high (a review, 2026-11-28; now within 1%)."""
    return int(np.ceil(RELAXATIONS * relaxation_time))


#: relaxation times the measured part of a run must span when the interval comes from its
#: batches (fewer than 10 replications): one run of 20 000 flows at load 0.97 (2.6 of
#: them after the cut) covered 85% and sat +10% high; at 0.9 (55) it covers 91–94%
MIN_MEASURED_RELAXATIONS = 20


def too_short(flows: int, replications: int, relaxation_time: float,
              warmup: float = 0.05) -> str:
    """Why runs of ``flows`` flows are too short for γ's interval at this load (one
    relaxation time ``relaxation_time`` flows, :func:`relaxation`), "" when they are not:
    the start-up cut takes more than half of each run, or, with fewer than 10
    replications (batches of each run), the measured part spans fewer than
    :data:`MIN_MEASURED_RELAXATIONS` relaxation times. Then each run is measured in or
    just after its start-up transient, where sojourns are short: γ comes out high and
    the interval does not hold."""
    cut = max(int(warmup * flows), start_up_flows(relaxation_time))
    if cut > 0.5 * flows:
        return (f"the start-up cut ({RELAXATIONS:g} relaxation times of {relaxation_time:.3g} "
                f"flows) takes more than half of the {flows:,} flows per replication")
    if replications < 10 and flows - cut < MIN_MEASURED_RELAXATIONS * relaxation_time:
        return (f"each run's measured part ({flows - cut:,} flows) spans fewer than "
                f"{MIN_MEASURED_RELAXATIONS} relaxation times of {relaxation_time:.3g} flows, "
                "which its batches need")
    return ""


def flow_rates(runs: Sequence[FlowLevelRun], class_loads: ArrayLike, mean_work: ArrayLike,
               warmup: float = 0.05, batches: int = 20, confidence: float = 0.95,
               relaxation_time: float = 0.0) -> FlowRates:
    """Per-class γ and intervals from runs of one point (see :class:`FlowRates`).

    ``mean_work``: E[S_k] per class (the laws' means, 1 for rescaled laws). With ≥ 10
    runs the intervals are Student-t over runs; otherwise over ``batches`` consecutive
    batches (arrival order) of every run, pooled. ``relaxation_time``: flows in one
    relaxation time (:func:`relaxation`; 0: no start-up cut, plain batches).
    """
    K = np.asarray(class_loads).size
    by_replication = len(runs) >= 10
    parts = 1 if by_replication else batches
    start_up = start_up_flows(relaxation_time)
    summaries = [run_summary(run, K, warmup, parts, start_up) for run in runs]
    return combine(summaries, class_loads, mean_work, confidence, by_replication,
                   sum(r.events for r in runs), sum(r.wall_s for r in runs), relaxation_time)

