"""What one packet replication keeps of the kernel's output (SPEC §3 Measurement).

Reductions of a replication's arrays to sums that pool over replications by adding up:
:func:`flow_metric_sums` (flow completion time, slowdown and the rate sums of Jain's
index, per flow-size decade), :func:`first_full_bucket` (where measurement starts among
the kernel's flow buckets), :func:`packet_delay_sums` (per-packet sojourn histogram and
its per-bucket batches) and :func:`utilisation` (per-resource busy fraction). The
per-class tables built from them are in :mod:`mrfq.stats.tables`.
"""

from __future__ import annotations

import numpy as np

from mrfq.intervals import histogram_quantile
from mrfq.stats.metric_intervals import QUANTILES, merge_pairs

#: flow-size bins for completion time and slowdown: [10^i, 10^(i+1)) packets, i < this
SIZE_DECADES = 13


def flow_metric_sums(sojourn: np.ndarray, size: np.ndarray, weight: float = 1.0,
                     batches: int = 0) -> dict:
    """Sums over a class's measured flows (flow completion time T = sojourn, size N in
    packets) from which the per-class flow metrics are pooled over replications:

    * ``slowdown_sum`` Σ T/N (slowdown: time per packet, in dominant packet services, so
      1 for a flow alone with W large enough to pipeline);
    * ``rate_sum`` Σ x, ``rate_sq_sum`` Σ x² with x = N/(T·w), the flow's mean service rate
      in dominant packet services per time unit (its average dominant share: requirements
      are normalised so max_j a_kj = 1) divided by its class weight w, so that a weighted
      fair allocation scores 1, for Jain's index (Σx)² / (n Σx²);
    * ``size_bin_flows``, ``size_bin_sojourn_sums``, ``size_bin_slowdown_sums``: count,
      Σ T and Σ T/N per size bin [10^i, 10^(i+1)) packets, i < :data:`SIZE_DECADES`;
    * with ``batches`` > 0 and at least that many flows: per batch of consecutive flows
      (``numpy.array_split`` of the flows given, as the batches of γ)
      ``batch_flow_counts``, ``batch_slowdown_sums``, ``batch_rate_sums``,
      ``batch_rate_sq_sums`` (for the intervals of slowdown and Jain's index); empty
      lists otherwise.
    """
    T = np.asarray(sojourn, dtype=np.float64)
    N = np.asarray(size, dtype=np.float64)
    ok = np.isfinite(T) & np.isfinite(N) & (T > 0) & (N > 0)
    parts = np.array_split(np.arange(T.size), batches) if 0 < batches <= T.size else []
    batch = {"batch_flow_counts": [], "batch_slowdown_sums": [], "batch_rate_sums": [],
             "batch_rate_sq_sums": []}
    for part in parts:
        good = part[ok[part]]
        x = N[good] / (T[good] * weight)
        batch["batch_flow_counts"].append(float(good.size))
        batch["batch_slowdown_sums"].append(float((T[good] / N[good]).sum()))
        batch["batch_rate_sums"].append(float(x.sum()))
        batch["batch_rate_sq_sums"].append(float(x @ x))
    T, N = T[ok], N[ok]
    rate = N / (T * weight)
    slowdown = T / N
    decade = np.clip(np.floor(np.log10(N)).astype(np.int64), 0, SIZE_DECADES - 1)
    return {
        "slowdown_sum": float(slowdown.sum()),
        "rate_sum": float(rate.sum()),
        "rate_sq_sum": float(rate @ rate),
        "size_bin_flows": np.bincount(decade, minlength=SIZE_DECADES).tolist(),
        "size_bin_sojourn_sums": np.bincount(decade, T, minlength=SIZE_DECADES).tolist(),
        "size_bin_slowdown_sums": np.bincount(decade, slowdown,
                                              minlength=SIZE_DECADES).tolist(),
        **batch,
    }


def first_full_bucket(cut: int, flows: int, buckets: int) -> int:
    """The first sojourn-histogram bucket that holds flows, all of them measured: bucket b
    holds the flows with index · buckets // flows = b, i.e. indices ⌈b · flows / buckets⌉
    up to ⌈(b + 1) · flows / buckets⌉ − 1, so the answer is the smallest b with
    ⌈b · flows / buckets⌉ ≥ ``cut`` and a flow at all (``buckets`` if none). Empty buckets
    (fewer flows than buckets) are skipped: no flow arrival marks where their time and
    utilisation window would start."""
    for b in range(buckets):
        first = -(-b * flows // buckets)
        if first >= cut and first < -(-(b + 1) * flows // buckets):
            return b
    return buckets


def packet_delay_sums(sojourn_hist: np.ndarray, sojourn_sum: np.ndarray,
                      first_bucket: int, edges: np.ndarray | None = None) -> list[dict]:
    """Per class, what a replication keeps of its per-packet sojourn histogram
    (``sojourn_hist[bucket, k, bin]``, ``sojourn_sum[bucket, k]`` from the kernel) over the
    buckets from ``first_bucket`` on: ``packets_measured``, ``packet_sojourn_sum``, the
    merged histogram as ``packet_hist_offset`` + ``packet_hist`` (counts from the first to
    the last non-empty bin), and per bucket ``batch_packet_counts`` and
    ``batch_packet_sojourn_sums`` (batches for the mean's interval). Buckets that hold no
    flow (fewer measured flows than buckets) are left out: as (0, 0) batches they would
    count as data and narrow the interval.

    With ``edges`` (the histogram's bin edges, time units) also
    ``batch_packet_quantiles``: the quantiles of :data:`QUANTILES` of every batch, at each
    merge level — ``[level][batch][quantile]``, level 0 the buckets, level l + 1 their
    histograms merged in pairs as :func:`merge_pairs` (for the sectioning intervals of
    :func:`batch_unit_interval`)."""
    hist = np.asarray(sojourn_hist)[first_bucket:]
    sums = np.asarray(sojourn_sum, dtype=np.float64)[first_bucket:]
    holds_flows = hist.sum(axis=(1, 2)) > 0
    hist, sums = hist[holds_flows], sums[holds_flows]
    out = []
    for k in range(hist.shape[1]):
        per_bucket = hist[:, k, :]
        merged = per_bucket.sum(axis=0)
        nonzero = np.flatnonzero(merged)
        offset = int(nonzero[0]) if nonzero.size else 0
        stop = int(nonzero[-1]) + 1 if nonzero.size else 0
        out.append({
            "packets_measured": int(merged.sum()),
            "packet_sojourn_sum": float(sums[:, k].sum()),
            "packet_hist_offset": offset,
            "packet_hist": merged[offset:stop].astype(np.int64).tolist(),
            "batch_packet_counts": per_bucket.sum(axis=1).astype(np.float64).tolist(),
            "batch_packet_sojourn_sums": sums[:, k].tolist(),
            **({} if edges is None else
               {"batch_packet_quantiles": batch_quantile_levels(per_bucket, edges)}),
        })
    return out


def batch_quantile_levels(per_batch: np.ndarray, edges: np.ndarray) -> list:
    """The quantiles of :data:`QUANTILES` (time units) of each row of ``per_batch``
    (batches × bins histograms), then of its pair-merged rows, … down to one batch:
    ``[level][batch][quantile]``; NaN for an empty batch."""
    levels = []
    hist = np.asarray(per_batch, dtype=np.int64)
    used = np.flatnonzero(hist.sum(axis=0))
    if used.size:  # the quantiles lie in the non-empty bins: the same numbers, faster
        hist = hist[:, used[0]: used[-1] + 1]
        edges = np.asarray(edges)[used[0]: used[-1] + 2]
    while hist.shape[0] >= 1:
        levels.append([[histogram_quantile(row, edges, q) for q, _ in QUANTILES]
                       for row in hist])
        if hist.shape[0] == 1:
            break
        hist = merge_pairs(hist)
    return levels


def utilisation_batches(work: np.ndarray, bucket_work: np.ndarray,
                        bucket_time: np.ndarray, end_time: float,
                        first_bucket: int) -> tuple[list[list[float]], list[float]]:
    """Batches of :func:`utilisation`: per bucket from ``first_bucket`` on that started
    (the last until the end of the run), the busy time of every resource
    (``[bucket][resource]``) and the bucket's duration, time units; their sums give
    :func:`utilisation`'s numerator and denominator exactly. Empty without a started
    bucket."""
    times = np.asarray(bucket_time, dtype=np.float64)
    if first_bucket >= times.size or not np.isfinite(times[first_bucket]):
        return [], []
    J = len(work)
    marks = np.asarray(bucket_work, dtype=np.float64).reshape(-1, J)
    started = [b for b in range(first_bucket, times.size) if np.isfinite(times[b])]
    starts = [float(times[b]) for b in started] + [float(end_time)]
    busy_marks = [marks[b] for b in started] + [np.asarray(work, dtype=np.float64)]
    busy = [(busy_marks[i + 1] - busy_marks[i]).tolist() for i in range(len(started))]
    return busy, [starts[i + 1] - starts[i] for i in range(len(started))]


def utilisation(work: np.ndarray, bucket_work: np.ndarray, bucket_time: np.ndarray,
                end_time: float, first_bucket: int) -> list[float]:
    """Per resource, the fraction of time busy from the arrival of bucket ``first_bucket``'s
    first flow to the end of the run: (busy time since) / (time since), from the kernel's
    busy times (``work``: by the end, ``bucket_work``: by each bucket's start); NaN when
    that bucket never started."""
    if first_bucket >= len(bucket_time) or not np.isfinite(bucket_time[first_bucket]):
        return [np.nan] * len(work)
    span = end_time - float(bucket_time[first_bucket])
    if not span > 0:
        return [np.nan] * len(work)
    return ((np.asarray(work) - np.asarray(bucket_work)[first_bucket]) / span).tolist()
