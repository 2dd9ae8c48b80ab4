"""Per-class tables of packet runs (SPEC §3 Measurement): service rates and their CIs.

:func:`replication_table` reduces one replication's flow records (after the warm-up cut,
:func:`warmup_cut`) to one row per class; :func:`combine_replications` pools those rows
over replications with the estimators of :mod:`mrfq.stats.estimators`:
γ_k = Σ N / Σ T (packets per time unit, i.e. work units per time unit with the SPEC §4
time unit) is the primary estimate, with m / E[T_k] and Little's ρ_k / E[n_k] as columns,
and the flow and per-packet delay metrics from the sums of :mod:`mrfq.stats.sums`.

An interval that cannot be trusted is never returned as if it were one: its bounds are
NaN and a ``problem`` / ``ci_problem`` string (empty when fine) says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mrfq.intervals import _check_confidence, _flagged, ratio_interval
from mrfq.stats.estimators import (
    MAX_LAG1,
    MIN_BATCHES,
    MIN_REPLICATIONS_FOR_T,
    cut_batch_interval,
    jain_index,
)
from mrfq.stats.metric_columns import flow_interval_columns, quantile_columns
from mrfq.stats.metric_intervals import QUANTILES
from mrfq.stats.startup import relaxation_drops, warmup_cut
from mrfq.stats.sums import flow_metric_sums

# ------------------------------------------------------------------------ flow records


def in_progress_average(arrival: np.ndarray, completion: np.ndarray, start: float,
                        end: float) -> float:
    """Time-average number of the given flows in progress over [start, end]."""
    overlap = np.clip(np.minimum(completion, end) - np.maximum(arrival, start), 0.0, None)
    return float(overlap.sum() / (end - start)) if end > start else np.nan


def replication_table(arrival: ArrayLike, completion: ArrayLike, flow_class: ArrayLike,
                      size: ArrayLike, class_names: Sequence[str],
                      class_loads: Sequence[float] | np.ndarray,
                      mean_size: float, warmup: float | str, batches: int,
                      initial: tuple[np.ndarray, np.ndarray] | None = None,
                      class_weights: Sequence[float] | np.ndarray | None = None
                      ) -> pd.DataFrame:
    """Per-class estimates from one replication's flow records (SPEC §3 Measurement).

    Measured flows: arrival index ≥ ``warmup_cut`` (:func:`warmup_cut`: ⌊warmup · flows⌋
    or, with ``warmup="auto"``, MSER-5). Times in service-time units, sizes in packets.
    Columns per class:

    * ``gamma`` = ``ratio_estimate`` = Σ N / Σ T over the measured flows (packets per time
      unit; SPEC §4: same target as m / E[T_k], without the size-sampling noise);
      ``sojourn_gamma`` = m / mean(T); ``mean_sojourn``; ``flows_measured``;
    * ``mean_in_progress``: time-average number in progress over [first, last measured
      arrival] (all flows of the class count), ``little_gamma`` = ρ_k / E[n_k];
    * ``size_sum`` Σ N, ``sojourn_sum`` Σ T (for ratio intervals over replications);
    * ``batch_size_sums``, ``batch_sojourn_sums``: Σ N and Σ T over ``batches`` consecutive
      batches of measured flows (arrival order, ``numpy.array_split``), and
      ``batch_sojourns`` their mean sojourns — empty lists when there are fewer measured
      flows than batches;
    * ``warmup_cut`` (arrival index of the first measured flow, all classes; the same in
      every row), ``warmup_flows`` (this class's flows below it);
    * ``ci_problem``: what makes this replication's data unusable for an interval, "" when
      nothing: non-finite records, no measured flows, Σ T ≤ 0, MSER-5 at its limit;
    * the sums of :func:`flow_metric_sums` (slowdown, rates for Jain's index — divided by
      ``class_weights[k]`` when given —, size bins).

    ``initial`` = (class indices, completion times) of flows in progress at t = 0 (a
    steady-state start, ``init = "fluid"``): never measured, they count only in
    ``mean_in_progress`` while they last, and each row gets ``initial_flows``, the number
    of its class. Without it the table is as before the option existed.
    """
    arrival = np.asarray(arrival, dtype=np.float64)
    completion = np.asarray(completion, dtype=np.float64)
    flow_class = np.asarray(flow_class)
    size = np.asarray(size, dtype=np.float64)
    flows = arrival.shape[0]
    first, warm_problem = warmup_cut(arrival, completion, flow_class, warmup)
    first = min(first, flows - 1)
    start, end = float(arrival[first]), float(arrival[-1])
    sojourn = completion - arrival
    rows = []
    for k, name in enumerate(class_names):
        mine = flow_class == k
        measured = mine.copy()
        measured[:first] = False
        T = sojourn[measured]
        N = size[measured]
        count = int(T.size)
        sum_T = float(T.sum())
        sum_N = float(N.sum())
        mean_T = sum_T / count if count else np.nan
        n_avg = in_progress_average(arrival[mine], completion[mine], start, end)
        if initial is not None:
            early = np.asarray(initial[1], dtype=np.float64)[np.asarray(initial[0]) == k]
            n_avg += in_progress_average(np.zeros(early.shape[0]), early, start, end)
        problems = []
        if not (np.isfinite(T).all() and np.isfinite(N).all()):
            problems.append("non-finite flow records")
        elif count == 0:
            problems.append("no measured flows")
        elif not sum_T > 0:
            problems.append(f"non-positive total sojourn ({sum_T:g})")
        if warm_problem:
            problems.append(warm_problem)
        parts = np.array_split(np.flatnonzero(measured), batches) if count >= batches else []
        batch_T = [float(sojourn[part].sum()) for part in parts]
        batch_N = [float(size[part].sum()) for part in parts]
        ratio = sum_N / sum_T if count and sum_T > 0 else np.nan
        flow_sums = flow_metric_sums(T, N, 1.0 if class_weights is None
                                     else float(class_weights[k]), batches=batches)
        rows.append({
            "class": name,
            "flows_measured": count,
            "mean_sojourn": mean_T,
            "gamma": ratio,
            "ratio_estimate": ratio,
            "sojourn_gamma": mean_size / mean_T if count and mean_T > 0 else np.nan,
            "mean_in_progress": n_avg,
            "little_gamma": class_loads[k] / n_avg if n_avg > 0 else np.nan,
            "size_sum": sum_N,
            "sojourn_sum": sum_T,
            "batch_sojourns": [t / part.size for t, part in zip(batch_T, parts, strict=True)],
            "batch_size_sums": batch_N,
            "batch_sojourn_sums": batch_T,
            "warmup_cut": int(first),
            "warmup_flows": int(np.count_nonzero(mine[:first])),
            "ci_problem": "; ".join(problems),
            **flow_sums,
            **({"initial_flows": int(np.count_nonzero(np.asarray(initial[0]) == k))}
               if initial is not None else {}),
        })
    return pd.DataFrame(rows)


def _replication_sums(row: pd.Series, mean_size: float) -> tuple[float, float]:
    """Σ N, Σ T of a replication's class row (derived for records from before these
    columns: Σ T = count · mean sojourn, Σ N = ratio estimate · Σ T)."""
    count = float(row["flows_measured"])
    if "sojourn_sum" in row and pd.notna(row["sojourn_sum"]):
        return float(row["size_sum"]), float(row["sojourn_sum"])
    sum_T = count * float(row["mean_sojourn"]) if count else 0.0
    return float(row["ratio_estimate"]) * sum_T if count else 0.0, sum_T


def _replication_batches(row: pd.Series, mean_size: float) -> tuple[np.ndarray, np.ndarray,
                                                                      bool]:
    """Batch sums (Σ N, Σ T) of a class row; third value True when Σ N is exact, False for
    records without ``batch_size_sums`` (then Σ N = m · batch count: the interval is for
    m / mean(T))."""
    sums = row.get("batch_sojourn_sums")
    if isinstance(sums, (list, np.ndarray)):
        return (np.asarray(row["batch_size_sums"], dtype=np.float64),
                np.asarray(sums, dtype=np.float64), True)
    means = np.asarray(row["batch_sojourns"], dtype=np.float64)
    counts = np.array([len(p) for p in np.array_split(np.empty(int(row["flows_measured"])),
                                                      means.size)], dtype=np.float64) \
        if means.size else np.empty(0)
    return mean_size * counts, means * counts, False


def batch_counts(row: pd.Series | dict) -> np.ndarray:
    """Flows in each batch of a class row (Σ T of the batch over its mean sojourn)."""
    sums = np.asarray(row["batch_sojourn_sums"], dtype=np.float64)
    means = np.asarray(row["batch_sojourns"], dtype=np.float64)
    return np.rint(np.divide(sums, means, out=np.zeros_like(sums), where=means > 0))


def _known(values: list) -> bool:
    return all(v is not None and pd.notna(v) for v in values)


def _sum_or_nan(values: list) -> float:
    """Sum (float), NaN when any value is missing (records from before the column)."""
    return float(sum(values)) if _known(values) else np.nan


def combine_replications(tables: list[pd.DataFrame], mean_size: float,
                         confidence: float = 0.95, *, max_lag1: float = MAX_LAG1,
                         min_batches: int = MIN_BATCHES,
                         sojourn_edges: np.ndarray | None = None,
                         warmup_flows: int = 0) -> pd.DataFrame:
    """Per-class summary over replications (tables from :func:`replication_table`).

    ``gamma`` is the ratio estimator Σ N / Σ T pooled over the measured flows of all
    replications (``ratio_estimate``) with its first-order bias removed (Tin's factor
    over the interval's units, :func:`mrfq.intervals.tin_factor`), in work units per time
    unit; the interval is built around it and always brackets it (delta method,
    Student-t):

    * ≥ :data:`MIN_REPLICATIONS_FOR_T` replications: over the replications' (Σ N, Σ T)
      (``ci_method`` "replications"; ``batches_used`` 0, ``batch_lag1`` NaN);
    * otherwise over the consecutive batches of every replication pooled: the stored
      batches (20, after the relaxation cut) are added up into 2 · :data:`LUGSAIL_BATCHES`
      half-batches, paired into :data:`LUGSAIL_BATCHES` batches, and the variance is the
      lugsail one (:func:`lugsail_scale`), which corrects the batch means' first-order
      under-estimate of a correlated run's variance (``ci_method`` "batch-ratio";
      ``batches_used`` per replication, ``batch_lag1`` reported, not a gate). Records
      without batch size sums keep the older rule: 20 batches merged 20 → 10 → 5 until
      their lag-1 autocorrelation is ≤ ``max_lag1``.

    ``warmup_flows``: flows from each replication's start left out of γ beyond its
    record's own cut (the relaxation cut, :func:`~mrfq.stats.startup.relaxation_drops`:
    each replication its own number with the interval over replications, the most any
    needs with pooled batches): its leading batches are dropped from γ,
    ``ratio_estimate`` and ``flows_measured``
    (``relaxation_batches`` says how many, the most of any replication), and from
    ``mean_sojourn``, ``sojourn_gamma``, ``mean_slowdown`` and ``mean_packet_sojourn``
    (its packets: the same share of the run's flow buckets) with their intervals, which
    follow γ's rules (lugsail batches, :func:`mrfq.stats.estimators.cut_batch_interval`);
    Jain's index and the sojourn percentiles keep the record's cut. A run too short for
    its relaxation cut has every interval of its row withheld with γ's problem.
      Records written before batch size sums were stored give the interval of
      m / mean(T) instead; then ``gamma`` is that estimate (``ci_method``
      "batch-means (m/T)") so that the interval still brackets it.

    ``ci_problem`` ("" when fine) says why an interval is missing: its bounds are then
    NaN, so a flagged point never passes a containment check — a replication's own
    problem (prefixed "replication r:"), fewer measured flows than batches, batch means
    still correlated at ``min_batches``, fewer than two units, a non-positive denominator,
    or an interval reaching 0. ``ci_units`` is the number of independent units (t with
    ``ci_units`` − 1 degrees of freedom).

    Other columns: ``ratio_estimate`` (= gamma with current records), ``sojourn_gamma``
    m / mean(T) (γ's target when E[N] = m: exponential sizes; :mod:`mrfq.counts`),
    ``mean_sojourn`` (pooled), ``mean_in_progress`` and ``little_gamma``
    (means over replications), ``flows_measured`` and ``warmup_flows`` (sums),
    ``warmup_cut`` (largest over replications; NaN for old records).

    Flow and packet metrics (NaN for records from before them): ``mean_slowdown``
    (Σ T/N / flows), ``jain_index`` (Jain's index of the flows' dominant shares N/T,
    :func:`flow_metric_sums`); and with ``sojourn_edges`` (the kernel's histogram bin
    edges): ``packets_measured``, ``mean_packet_sojourn`` (router entry to last departure,
    time units) with ``packet_sojourn_low``/``_high`` (the same interval rules as γ: over
    replications, or lugsail batches of the histogram's flow buckets),
    and ``p50_sojourn``, ``p95_sojourn``, ``p99_sojourn`` from the merged histogram
    (:func:`histogram_quantile`: within one bin, ≤ 1/32 of the value, of the exact
    percentile of the same packets).

    Every reported statistic other than γ has ``<name>_low``/``_high``/``_problem`` too
    (:mod:`mrfq.stats.metric_columns`): ``mean_sojourn`` (mean flow completion time),
    ``mean_slowdown``, ``jain_index`` and the three sojourn percentiles (sectioning over
    replications or batches, bounds rounded out to histogram bin edges).
    """
    _check_confidence(confidence)
    rows = []
    many = len(tables) >= MIN_REPLICATIONS_FOR_T
    drops, relax_problem = relaxation_drops(tables, warmup_flows, even=not many)
    if relax_problem or not drops:
        drops = [0] * len(tables)
    if not many:  # pooled batches: every replication keeps the same number
        drops = [max(drops)] * len(tables)
    drop = max(drops)
    for name in tables[0]["class"]:
        per = [t[t["class"] == name].iloc[0] for t in tables]
        counts = np.array([p["flows_measured"] for p in per], dtype=np.float64)
        sums = np.array([_replication_sums(p, mean_size) for p in per])
        # mean sojourn on the record's own cut (replaced below by the one after the
        # relaxation cut, where there is one, as γ and flows_measured)
        pooled = float(sums[:, 1].sum() / counts.sum()) if counts.sum() > 0 else np.nan
        dropped = 0.0
        if drop:  # the relaxation cut: the leading batches of every replication
            head = [_replication_batches(p, mean_size) for p in per]
            sums = sums - np.array([[b[0][:d].sum(), b[1][:d].sum()]
                                    for b, d in zip(head, drops, strict=True)])
            left_out = np.array([batch_counts(p)[:d].sum()
                                 for p, d in zip(per, drops, strict=True)])
            counts = counts - left_out
            dropped = float(left_out.sum())
        total_N, total_T = float(sums[:, 0].sum()), float(sums[:, 1].sum())
        total = float(counts.sum())
        ratio = total_N / total_T if total > 0 and total_T > 0 else np.nan
        problems = [relax_problem] if relax_problem else []
        for r, p in enumerate(per):
            mine = p.get("ci_problem")
            mine = mine if isinstance(mine, str) else ""  # absent / NaN: older records
            if mine:
                problems.append(f"replication {r}: {mine}" if len(per) > 1 else mine)
        if many:
            ci = ratio_interval(sums[:, 0], sums[:, 1], confidence, require_positive=True,
                                correct_bias=True, method="replications")
            gamma = ci.estimate if np.isfinite(ci.estimate) else ratio
        else:
            batches = [_replication_batches(p, mean_size) for p in per]
            batches = [(b[0][drop:], b[1][drop:], b[2]) for b in batches]
            exact = all(b[2] for b in batches)
            method = "batch-ratio" if exact else "batch-means (m/T)"
            short = [r for r, b in enumerate(batches) if b[0].size == 0]
            if short:
                r = short[0]
                ci = _flagged(np.nan, 0, 0, np.nan, method,
                              f"fewer measured flows ({int(counts[r])}) than batches"
                              + (f" in replication {r}" if len(per) > 1 else ""))
                gamma = ratio
            else:
                ci = cut_batch_interval([b[0] for b in batches], [b[1] for b in batches],
                                        confidence, exact=exact, max_lag1=max_lag1,
                                        min_batches=min_batches, correct_bias=exact,
                                        method=method)
                gamma = ci.estimate
        if ci.problem:
            problems.append(ci.problem)
        bad = bool(problems)
        # mean sojourn and slowdown over the flows γ rests on (relaxation cut included)
        flow_columns = flow_interval_columns(per, confidence, many, max_lag1, min_batches,
                                             drops)
        pooled = flow_columns.get("mean_sojourn", pooled)
        cuts = [p.get("warmup_cut") for p in per]
        rows.append({
            "class": name,
            "gamma": gamma,
            "ci_low": np.nan if bad else ci.low,
            "ci_high": np.nan if bad else ci.high,
            "ci_method": ci.method,
            "ci_problem": "; ".join(problems),
            "ci_units": ci.units,
            "batches_used": ci.batches,
            "batch_lag1": ci.lag1,
            "flows_measured": int(total),
            "ratio_estimate": ratio,
            "sojourn_gamma": mean_size / pooled if pooled > 0 else np.nan,
            "mean_in_progress": float(np.mean([p["mean_in_progress"] for p in per])),
            "little_gamma": float(np.mean([p["little_gamma"] for p in per])),
            "mean_sojourn": pooled,
            "warmup_flows": _sum_or_nan([p.get("warmup_flows") for p in per]) + dropped,
            "warmup_cut": float(max(cuts)) if _known(cuts) else np.nan,
            "relaxation_batches": drop,
            **_flow_metric_columns(per),
            **flow_columns,
            **_packet_delay_columns(per, confidence, many, sojourn_edges, max_lag1,
                                    min_batches, drops),
        })
        if relax_problem:  # too short for its warm-up: no interval of the row holds
            withhold(rows[-1], relax_problem)
    table = pd.DataFrame(rows)
    table.attrs["relaxation_problem"] = relax_problem  # (for the point-level intervals)
    return table


def withhold(row: dict, problem: str) -> dict:
    """NaN bounds and ``problem`` first for every interval of ``row`` (a class row, or
    point-level columns) but γ's, when ``problem`` (a run too short for its warm-up)."""
    if not problem:
        return row
    for key in [k for k in row if k.endswith("_problem") and k != "ci_problem"]:
        stem = "packet_sojourn" if key == "packet_ci_problem" else key[:-len("_problem")]
        if f"{stem}_low" in row:
            row[f"{stem}_low"] = row[f"{stem}_high"] = np.nan
            stated = row[key] if isinstance(row[key], str) else ""
            row[key] = "; ".join(filter(None, [problem, stated]))
    return row


def _flow_metric_columns(per: list) -> dict:
    """Mean slowdown and Jain's index of one class pooled over replications."""
    if not all("rate_sum" in p and isinstance(p.get("size_bin_flows"), list) for p in per):
        return {"mean_slowdown": np.nan, "jain_index": np.nan}
    count = float(sum(sum(p["size_bin_flows"]) for p in per))
    return {
        "mean_slowdown": float(sum(p["slowdown_sum"] for p in per)) / count if count
        else np.nan,
        "jain_index": jain_index(sum(p["rate_sum"] for p in per),
                                 sum(p["rate_sq_sum"] for p in per), count),
    }


def merged_histogram(per: list, bins: int) -> np.ndarray:
    """The per-packet sojourn histograms of a class's replication rows, added up."""
    total = np.zeros(bins, dtype=np.int64)
    for p in per:
        counts = np.asarray(p["packet_hist"], dtype=np.int64)
        offset = int(p["packet_hist_offset"])
        total[offset: offset + counts.size] += counts
    return total


def _bucket_drop(row: pd.Series, drop: int) -> int:
    """Leading flow buckets of a replication's packet batches standing for its first
    ``drop`` flow batches (γ's relaxation cut): round(drop / B · buckets)."""
    batches, buckets = row.get("batch_sojourn_sums"), row.get("batch_packet_counts")
    if not drop or not isinstance(batches, list) or not batches:
        return 0
    return int(round(drop / len(batches) * len(buckets)))


def _packet_delay_columns(per: list, confidence: float, many: bool,
                          edges: np.ndarray | None, max_lag1: float,
                          min_batches: int, drops: Sequence[int] = ()) -> dict:
    """Per-packet sojourn columns of one class (see :func:`combine_replications`): the
    mean and its interval over the packets of the flows γ rests on (``drops``: γ's
    relaxation cut, :func:`_bucket_drop`) with γ's interval rules (lugsail batches,
    :func:`cut_batch_interval`); the percentiles over the record's packets."""
    names = ("packets_measured", "mean_packet_sojourn", "packet_sojourn_low",
             "packet_sojourn_high", "packet_ci_problem") + tuple(
                 f"{stem}{end}" for _, stem in QUANTILES for end in ("", "_low", "_high",
                                                                      "_problem"))
    if edges is None or not all(isinstance(p.get("packet_hist"), list) for p in per):
        return dict.fromkeys(names, np.nan)
    counts = np.array([p["packets_measured"] for p in per], dtype=np.float64)
    sums = np.array([p["packet_sojourn_sum"] for p in per], dtype=np.float64)
    # γ's relaxation cut of d of a replication's B flow batches, as its leading flow
    # buckets: the same share d / B of the measured arrivals (to the nearest bucket)
    cut = [_bucket_drop(p, d) for p, d in zip(per, drops or [0] * len(per), strict=True)]
    if many:
        for r, (p, d) in enumerate(zip(per, cut, strict=True)):
            if d:
                counts[r] = float(np.sum(p["batch_packet_counts"][d:]))
                sums[r] = float(np.sum(p["batch_packet_sojourn_sums"][d:]))
        ci = ratio_interval(sums, counts, confidence, require_positive=True,
                            method="replications")
    else:
        # replications whose warm-ups ended in different buckets have different numbers
        # of batches: all keep their last (common number of) batches, and the mean is
        # that of those batches, so that the interval brackets it
        common = min(len(p["batch_packet_counts"]) for p in per)
        drop = min(max(cut), common)
        ys = [np.asarray(p["batch_packet_sojourn_sums"], dtype=np.float64)[-common:]
              if common else np.empty(0) for p in per]
        xs = [np.asarray(p["batch_packet_counts"], dtype=np.float64)[-common:]
              if common else np.empty(0) for p in per]
        counts = np.array([x[drop:].sum() for x in xs])
        sums = np.array([y[drop:].sum() for y in ys])
        ci = cut_batch_interval(ys, xs, confidence, drop=drop, max_lag1=max_lag1,
                                min_batches=min_batches)
    hist = merged_histogram(per, len(edges) - 1)
    total = float(counts.sum())
    return {
        "packets_measured": int(total),
        "mean_packet_sojourn": float(sums.sum() / total) if total > 0 else np.nan,
        "packet_sojourn_low": ci.low,
        "packet_sojourn_high": ci.high,
        "packet_ci_problem": ci.problem,
        **quantile_columns(per, hist, edges, confidence, many, max_lag1, min_batches),
    }
