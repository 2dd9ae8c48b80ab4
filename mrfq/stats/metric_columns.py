"""Interval columns of the per-class and per-point statistics other than γ (issue 25).

Every reported statistic ``<name>`` gets ``<name>_low``, ``<name>_high`` and
``<name>_problem`` with the conventions of γ (:func:`mrfq.stats.combine_replications`):
over the replications when there are ≥ :data:`MIN_REPLICATIONS_FOR_T` of them, otherwise
over the consecutive batches of the run(s) (pooled over fewer replications); the interval
brackets its estimate, and an interval that cannot be trusted has NaN bounds and a
problem string ("" when fine). The means (FCT, slowdown, packet sojourn) rest on the
flows after γ's relaxation cut; Jain's index, the percentiles and the utilisation on the
record's own cut.

* :func:`flow_interval_columns` — ``mean_sojourn`` (mean flow completion time), and
  ``mean_slowdown``: ratio estimators (Σ T / n, Σ (T/N) / n) over the flows after γ's
  relaxation cut, with γ's delta-method interval (batches: lugsail,
  :func:`~mrfq.stats.estimators.cut_batch_interval`); ``jain_index``:
  :func:`jain_interval` (batches: lugsail, as γ; runs with fewer than 10 batches: merged
  in pairs while correlated).
* :func:`quantile_columns` — ``p50_sojourn``, ``p95_sojourn``, ``p99_sojourn`` of the
  per-packet sojourn: the quantile of the merged histogram, the interval by sectioning
  over the replications' own quantiles or the batches' (lugsail, no correlation gate:
  :func:`lugsail_unit_interval`; runs too short for 5 batches at a merged level:
  :func:`batch_unit_interval`), rounded out to histogram bin edges
  (:func:`round_outward`).
* :func:`utilisation_columns` — per resource the busy fraction, a ratio (busy time /
  time) over replications or over the kernel's flow buckets (γ's lugsail batches).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mrfq.intervals import (
    RatioInterval,
    _flagged,
    histogram_quantile,
    ratio_interval,
    t_interval,
)
from mrfq.stats.estimators import (
    MIN_REPLICATIONS_FOR_T,
    cut_batch_interval,
)
from mrfq.stats.metric_intervals import (
    QUANTILES,
    jain_interval,
    lugsail_unit_interval,
    round_outward,
    sectioning_interval,
)


def interval_columns(name: str, ci: RatioInterval) -> dict:
    """``<name>_low``, ``<name>_high``, ``<name>_problem`` of an interval."""
    bad = bool(ci.problem)
    return {f"{name}_low": np.nan if bad else ci.low,
            f"{name}_high": np.nan if bad else ci.high,
            f"{name}_problem": ci.problem}


def _missing(name: str, why: str) -> dict:
    return {f"{name}_low": np.nan, f"{name}_high": np.nan, f"{name}_problem": why}


def _batch_counts(flows: int, batches: int) -> np.ndarray:
    """Sizes of ``numpy.array_split`` of ``flows`` items into ``batches`` parts."""
    return np.array([flows // batches + (i < flows % batches) for i in range(batches)],
                    dtype=np.float64)


def _kept(values: list, drop: int) -> float:
    """The sum of a replication's batch values from batch ``drop`` on."""
    return float(np.sum(np.asarray(values, dtype=np.float64)[drop:]))


def flow_interval_columns(per: list, confidence: float, many: bool, max_lag1: float,
                          min_batches: int, drops: Sequence[int] | None = None) -> dict:
    """Intervals of mean flow completion time (``mean_sojourn``), ``mean_slowdown`` and
    ``jain_index`` of one class from its replication rows (module doc), with γ's rules:
    each replication's first ``drops[r]`` batches left out (γ's relaxation cut; then the
    estimates ``mean_sojourn`` and ``mean_slowdown`` are returned too, over the flows
    kept), and over one run's batches :func:`cut_batch_interval` (lugsail batch means).
    Jain's index keeps every flow of the record and plain batch means."""
    drops = [0] * len(per) if drops is None else list(drops)
    out = {}
    old = "records from before the interval's sums"
    short = [r for r, p in enumerate(per) if not p.get("batch_sojourn_sums")]
    if not all(isinstance(p.get("batch_sojourn_sums"), list) for p in per):
        out |= _missing("mean_sojourn", old) if not many else {}
        drops = [0] * len(per)  # (no batches to cut: as the record measured)
    if many:
        counts = np.array([float(p["flows_measured"]) for p in per])
        times = np.array([float(p["mean_sojourn"]) * c if c else 0.0
                          for p, c in zip(per, counts, strict=True)])
        for r, (p, d) in enumerate(zip(per, drops, strict=True)):
            if d and p["batch_sojourn_sums"]:  # (no batches: γ cuts nothing there either)
                times[r] = _kept(p["batch_sojourn_sums"], d)
                counts[r] = _kept(_batch_counts(int(p["flows_measured"]),
                                                len(p["batch_sojourn_sums"])), d)
        if any(drops):
            out["mean_sojourn"] = float(times.sum() / counts.sum()) if counts.sum() else np.nan
        out |= interval_columns("mean_sojourn", ratio_interval(
            times, counts, confidence, require_positive=True, method="replications"))
    elif "mean_sojourn_problem" in out:
        pass
    elif short:
        out |= _missing("mean_sojourn", "fewer measured flows than batches"
                        + (f" in replication {short[0]}" if len(per) > 1 else ""))
    else:
        ys = [np.asarray(p["batch_sojourn_sums"], dtype=np.float64) for p in per]
        xs = [_batch_counts(int(p["flows_measured"]), y.size) for p, y in zip(per, ys,
                                                                              strict=True)]
        if drops[0]:
            kept = sum(x[drops[0]:].sum() for x in xs)
            out["mean_sojourn"] = float(sum(y[drops[0]:].sum() for y in ys) / kept) \
                if kept else np.nan
        out |= interval_columns("mean_sojourn", cut_batch_interval(
            ys, xs, confidence, drop=drops[0], max_lag1=max_lag1, min_batches=min_batches))
    if not all("rate_sum" in p and isinstance(p.get("size_bin_flows"), list) for p in per):
        return out | _missing("mean_slowdown", old) | _missing("jain_index", old)
    listed = all(p.get("batch_flow_counts") for p in per)
    if many:
        n = [float(sum(p["size_bin_flows"])) for p in per]
        slowdown = [p["slowdown_sum"] for p in per]
        for r, (p, d) in enumerate(zip(per, drops, strict=True)):
            if d and p.get("batch_flow_counts"):  # as the mean sojourn above
                slowdown[r] = _kept(p["batch_slowdown_sums"], d)
                n[r] = _kept(p["batch_flow_counts"], d)
        if any(drops):
            out["mean_slowdown"] = float(sum(slowdown) / sum(n)) if sum(n) else np.nan
        out |= interval_columns("mean_slowdown", ratio_interval(
            slowdown, n, confidence, require_positive=True, method="replications"))
        all_flows = [float(sum(p["size_bin_flows"])) for p in per]
        out |= interval_columns("jain_index", jain_interval(
            [[p["rate_sum"]] for p in per], [[p["rate_sq_sum"]] for p in per],
            [[c] for c in all_flows], confidence, method="replications"))
        return out
    if not all(isinstance(p.get("batch_flow_counts"), list) for p in per):
        return out | _missing("mean_slowdown", old) | _missing("jain_index", old)
    if not listed:
        why = "fewer measured flows than batches"
        return out | _missing("mean_slowdown", why) | _missing("jain_index", why)
    counts = [p["batch_flow_counts"] for p in per]
    if drops[0]:
        kept = sum(_kept(c, drops[0]) for c in counts)
        out["mean_slowdown"] = sum(_kept(p["batch_slowdown_sums"], drops[0])
                                   for p in per) / kept if kept else np.nan
    out |= interval_columns("mean_slowdown", cut_batch_interval(
        [p["batch_slowdown_sums"] for p in per], counts, confidence, drop=drops[0],
        max_lag1=max_lag1, min_batches=min_batches))
    out |= interval_columns("jain_index", jain_interval(
        [p["batch_rate_sums"] for p in per], [p["batch_rate_sq_sums"] for p in per],
        counts, confidence, merge=True, lugsail=True, max_lag1=max_lag1,
        min_batches=min_batches, method="batch-delta"))
    return out


def quantile_columns(per: list, hist: np.ndarray, edges: np.ndarray, confidence: float,
                     many: bool, max_lag1: float, min_batches: int) -> dict:
    """``p50_sojourn`` … ``p99_sojourn`` of one class (from ``hist``, the class's merged
    histogram over replications) with their intervals (module doc)."""
    out = {}
    for i, (q, name) in enumerate(QUANTILES):
        estimate = histogram_quantile(hist, edges, q)
        out[name] = estimate
        if many:
            units = [histogram_quantile(
                np.asarray(p["packet_hist"], dtype=np.float64),
                edges[int(p["packet_hist_offset"]):
                      int(p["packet_hist_offset"]) + len(p["packet_hist"]) + 1], q)
                if len(p["packet_hist"]) else np.nan for p in per]
            ci = sectioning_interval(estimate, np.array(units), confidence,
                                     method="replications")
        elif all(isinstance(p.get("batch_packet_quantiles"), list) for p in per):
            levels = [[np.array([b[i] for b in level], dtype=np.float64)
                       for level in p["batch_packet_quantiles"]] for p in per]
            ci = lugsail_unit_interval(estimate, levels, confidence, max_lag1=max_lag1,
                                       min_batches=min_batches)
        else:
            ci = _flagged(estimate, 0, 0, np.nan, "batch-sectioning",
                          "records from before per-batch quantiles")
        out |= interval_columns(name, round_outward(ci, edges))
    return out


def jain_overall_columns(records: list[dict], confidence: float = 0.95) -> dict:
    """The interval of ``jain_overall``, Jain's index over the measured flows of every
    class of a point: units the replications (≥ :data:`MIN_REPLICATIONS_FOR_T`) or the
    batches, batch b of a replication pooling the b-th batch of every class (the classes'
    b-th batches are consecutive flows of each class, so they cover about the same
    stretch of time)."""
    name = "jain_overall"
    rows = [r["classes"] for r in records]
    if len(records) >= MIN_REPLICATIONS_FOR_T:
        if not all("rate_sum" in c and isinstance(c.get("size_bin_flows"), list)
                   for cs in rows for c in cs):
            return _missing(name, "records from before the metric")
        return interval_columns(name, jain_interval(
            [[sum(c["rate_sum"] for c in cs)] for cs in rows],
            [[sum(c["rate_sq_sum"] for c in cs)] for cs in rows],
            [[sum(sum(c["size_bin_flows"]) for c in cs)] for cs in rows], confidence,
            method="replications"))
    if not all(isinstance(c.get("batch_flow_counts"), list) for cs in rows for c in cs):
        return _missing(name, "records from before the interval's sums")
    sizes = {len(c["batch_flow_counts"]) for cs in rows for c in cs}
    if len(sizes) != 1 or 0 in sizes:
        return _missing(name, "fewer measured flows than batches in a class")

    def pooled(key: str) -> list[np.ndarray]:
        return [np.sum([c[key] for c in cs], axis=0) for cs in rows]

    return interval_columns(name, jain_interval(
        pooled("batch_rate_sums"), pooled("batch_rate_sq_sums"),
        pooled("batch_flow_counts"), confidence, merge=True, lugsail=True,
        method="batch-delta"))


def utilisation_columns(records: list[dict], resources: list[str],
                        confidence: float = 0.95) -> dict:
    """Per resource ``utilisation_<resource>`` with its interval, from a point's
    replication records (``utilisation``: per resource the busy fraction of the measured
    window; ``utilisation_busy``/``utilisation_time``: the same by flow bucket). With ≥
    :data:`MIN_REPLICATIONS_FOR_T` records: the mean over replications with its Student-t
    interval; otherwise the same mean with the half-widths of γ's batch interval
    (:func:`~mrfq.stats.estimators.cut_batch_interval`: lugsail over 5 batches) of the
    ratio Σ busy / Σ time over the flow buckets (one replication: all its buckets, whose
    ratio is its ``utilisation`` up to rounding; several: the last buckets they have in
    common, as the packet delay's batches). Plain batch means covered 89% at load 0.9
    (VALIDATION.md, "Utilisation and Jain's index intervals at load 0.9"). NaN for
    records from before the metric."""
    out = {}
    shares = [r.get("utilisation") for r in records]
    known = all(isinstance(u, list) for u in shares)
    batched = all(isinstance(r.get("utilisation_time"), list) for r in records)
    for j, resource in enumerate(resources):
        name = f"utilisation_{resource}"
        if not known:
            out |= {name: np.nan} | _missing(name, "records from before the metric")
            continue
        if len(records) >= MIN_REPLICATIONS_FOR_T:
            mean, low, high = t_interval(np.array([u[j] for u in shares]), confidence)
            ci = (RatioInterval(mean, low, high, len(records), 0, np.nan, "replications")
                  if np.isfinite(low) else _flagged(mean, len(records), 0, np.nan,
                                                    "replications", "non-finite values"))
        elif batched and all(r["utilisation_time"] for r in records):
            common = min(len(r["utilisation_time"]) for r in records)
            spread = cut_batch_interval([[b[j] for b in r["utilisation_busy"][-common:]]
                                         for r in records],
                                        [r["utilisation_time"][-common:] for r in records],
                                        confidence)
            # centred on the reported utilisation (the batches' own ratio differs from it
            # by rounding for one run, by the common-tail cut for several)
            mean = float(np.mean([u[j] for u in shares]))
            ci = RatioInterval(mean, mean - (spread.estimate - spread.low),
                               mean + (spread.high - spread.estimate), spread.units,
                               spread.batches, spread.lag1, spread.method, spread.problem)
        else:
            mean = float(np.mean([u[j] for u in shares]))
            ci = _flagged(mean, 0, 0, np.nan, "batch-ratio",
                          "no utilisation batches in these records")
        out |= {name: ci.estimate} | interval_columns(name, ci)
    return out
