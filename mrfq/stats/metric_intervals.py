"""Intervals for the reported statistics other than γ (issue 25): quantiles of the
per-packet sojourn, Jain's index, and the merging of per-batch values they share.

* :func:`sectioning_interval` — a statistic that is not a mean (a quantile) from
  independent units: the point estimate θ̂ from *all* data, the spread from the units'
  own estimates θ̂_i around it, θ̂ ± t_{n−1} · √(Σ(θ̂_i − θ̂)² / (n(n−1))) ("sectioning",
  Asmussen & Glynn, *Stochastic Simulation*, §III.5a; for quantiles Nakayama, "Confidence
  intervals for quantiles using sectioning when applying variance-reduction techniques",
  ACM TOMACS 24(4), 2014). Centred on θ̂ rather than
  on the units' mean, whose bias is that of a quantile of one small batch.
* :func:`batch_unit_interval` — the same over batches of one or more runs, given the
  batch estimates at successive pair-merged levels (32 → 16 → 8 … batches): the first
  level whose deviations θ̂_i − θ̂ have lag-1 autocorrelation ≤ ``max_lag1`` is used, as
  the batch means of γ are merged (:func:`mrfq.stats.estimators.merge_batches`).
* :func:`lugsail_unit_interval` — the percentiles' interval over batches (one run, or
  fewer than 10 replications pooled): sectioning at the
  deepest level with at least :data:`~mrfq.stats.estimators.LUGSAIL_BATCHES` batches,
  with γ's lugsail variance against the level below and no correlation gate (on M/D/1 at
  load 0.9 the gated rule gave p99 in 58% of 20 000-flow runs, covering 69% of those;
  this one gives it in all, covering 82%; VALIDATION.md).
* :func:`jain_interval` — Jain's index J = (Σx)² / (n Σx²) from per-unit sums (Σx, Σx²,
  n) with a delta-method interval: J is a smooth function of the three means, its
  linearised residual per unit z_i = J (2 a_i/ā − b_i/b̄ − c_i/c̄), se = √(Σz²/(n(n−1)));
  over a run's batches with γ's lugsail variance (plain merged batches covered 83–87% at
  load 0.9; VALIDATION.md, "Utilisation and Jain's index intervals at load 0.9").
* :func:`round_outward` — widen bounds to the edges of the histogram bins that hold them:
  a histogram quantile is only known to within its bin (the packet histograms have bins
  ≤ 1/32 of their value wide), so an interval narrower than that would claim what the
  data cannot say.

An interval that cannot be trusted is flagged (NaN bounds, ``problem`` set).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused

from mrfq.intervals import RatioInterval, _flagged
from mrfq.stats.estimators import (
    LUGSAIL_BATCHES,
    MAX_LAG1,
    MIN_BATCHES,
    lag1_autocorrelation,
    regroup,
)

#: the quantiles of the per-packet sojourn that are reported, and their column stems
QUANTILES = ((0.50, "p50_sojourn"), (0.95, "p95_sojourn"), (0.99, "p99_sojourn"))


def merge_pairs(a: np.ndarray) -> np.ndarray:
    """Sums of adjacent rows (axis 0); with an odd count the last row joins the last pair
    (as :func:`mrfq.stats.estimators.merge_batches` merges batch sums)."""
    a = np.asarray(a)
    k = a.shape[0] // 2
    merged = a[: 2 * k].reshape((k, 2) + a.shape[1:]).sum(axis=1)
    if a.shape[0] % 2:
        merged[-1] += a[-1]
    return merged


def sectioning_interval(estimate: float, units: np.ndarray, confidence: float = 0.95, *,
                        method: str = "sectioning") -> RatioInterval:
    """θ̂ ± t_{n−1} · √(Σ(θ̂_i − θ̂)² / (n(n−1))) (module doc), units of the statistic.
    Flagged: non-finite estimate or units, fewer than two units."""
    theta = np.asarray(units, dtype=np.float64).ravel()
    n = int(theta.size)
    if not np.isfinite(estimate):
        return _flagged(np.nan, n, 0, np.nan, method, "no estimate (no data)")
    if not np.isfinite(theta).all():
        return _flagged(estimate, n, 0, np.nan, method, "a unit has no estimate (no data)")
    if n < 2:
        return _flagged(estimate, n, 0, np.nan, method, "fewer than 2 independent units")
    e = theta - estimate
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * np.sqrt((e @ e) / (n * (n - 1))))
    return RatioInterval(estimate, estimate - half, estimate + half, n, 0, np.nan, method)


def batch_unit_interval(estimate: float, levels: Sequence[Sequence[np.ndarray]],
                        confidence: float = 0.95, *, max_lag1: float = MAX_LAG1,
                        min_batches: int = MIN_BATCHES,
                        method: str = "batch-sectioning") -> RatioInterval:
    """Sectioning over batches (module doc). ``levels[r][l]``: replication r's batch
    estimates at merge level l (level 0 the finest; level l + 1 pairs level l's batches).
    Levels are tried from 0 while the lag-1 autocorrelation of θ̂_i − θ̂ (within each
    replication, pooled) exceeds ``max_lag1`` and every replication keeps at least
    min(``min_batches``, its level-0 count) batches; still correlated there → flagged."""
    if not levels or any(len(rep) == 0 or len(rep[0]) == 0 for rep in levels):
        return _flagged(estimate, 0, 0, np.nan, method, "no batches")
    floor = min(min_batches, min(len(rep[0]) for rep in levels))
    level = 0
    while True:
        units = [np.asarray(rep[level], dtype=np.float64) for rep in levels]
        lag1 = (lag1_autocorrelation([u - estimate for u in units], center=0.0)
                if all(np.isfinite(u).all() for u in units) else np.nan)
        batches = min(u.size for u in units)
        deeper = all(len(rep) > level + 1 for rep in levels)
        if not lag1 > max_lag1:
            break
        if batches // 2 < floor or not deeper:
            ci = sectioning_interval(estimate, np.concatenate(units), confidence,
                                     method=method)
            return _flagged(estimate, ci.units, batches, lag1, method,
                            ci.problem or f"batch estimates correlated (lag-1 {lag1:.2f} > "
                            f"{max_lag1:g} with {batches} batches): run too short")
        level += 1
    ci = sectioning_interval(estimate, np.concatenate(units), confidence, method=method)
    if ci.problem:
        return _flagged(estimate, ci.units, batches, lag1, method, ci.problem)
    return RatioInterval(estimate, ci.low, ci.high, ci.units, batches, lag1, method)


def lugsail_unit_interval(estimate: float, levels: Sequence[Sequence[np.ndarray]],
                          confidence: float = 0.95, *, batches: int = LUGSAIL_BATCHES,
                          max_lag1: float = MAX_LAG1, min_batches: int = MIN_BATCHES,
                          method: str = "batch-lugsail") -> RatioInterval:
    """Sectioning over batches with γ's lugsail variance (:func:`mrfq.stats.estimators.
    lugsail_scale`): at the deepest merge level l ≥ 1 where every replication keeps at
    least ``batches`` batch estimates, V_l = Σ(θ̂_i − θ̂)² / (n(n−1)) from them and V_{l−1}
    from their halves (level l − 1); the variance is max(2 V_l − V_{l−1}, V_l), which
    cancels batch means' first-order under-estimate of a correlated run's variance, and
    θ̂ ± t_{n−1} √ of it, with no correlation gate (as γ). Runs with no such level keep
    :func:`batch_unit_interval`."""
    deepest = [max((lv for lv in range(1, len(rep)) if len(rep[lv]) >= batches),
                   default=0) for rep in levels] if levels else [0]
    level = min(deepest)
    if level < 1:
        return batch_unit_interval(estimate, levels, confidence, max_lag1=max_lag1,
                                   min_batches=min_batches)
    units = np.concatenate([np.asarray(rep[level], dtype=np.float64) for rep in levels])
    halves = np.concatenate([np.asarray(rep[level - 1], dtype=np.float64)
                             for rep in levels])
    ci = sectioning_interval(estimate, units, confidence, method=method)
    if ci.problem or not np.isfinite(halves).all():
        return _flagged(estimate, ci.units, units.size, np.nan, method,
                        ci.problem or "a batch has no estimate (no data)")
    n, h = units.size, halves.size
    plain = float(np.sum((units - estimate) ** 2)) / (n * (n - 1))
    finer = float(np.sum((halves - estimate) ** 2)) / (h * (h - 1))
    scale = max(2.0 - finer / plain, 1.0) if plain > 0 else 1.0
    half = (ci.high - ci.estimate) * np.sqrt(scale)
    return RatioInterval(estimate, estimate - half, estimate + half, n, n, np.nan, method)


def round_outward(ci: RatioInterval, edges: np.ndarray) -> RatioInterval:
    """``ci`` with its bounds moved out to the edges of the histogram bins that hold them
    (module doc); flagged intervals unchanged."""
    if ci.problem or not (np.isfinite(ci.low) and np.isfinite(ci.high)):
        return ci
    low_bin = max(int(np.searchsorted(edges, ci.low, side="right")) - 1, 0)
    high_edge = min(int(np.searchsorted(edges, ci.high, side="right")), edges.size - 1)
    return RatioInterval(ci.estimate, float(min(edges[low_bin], ci.low)),
                         float(max(edges[high_edge], ci.high)), ci.units, ci.batches,
                         ci.lag1, ci.method)


def _jain_residuals(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[float, np.ndarray]:
    sa, sb, sc = a.sum(), b.sum(), c.sum()
    if not (sc > 0 and sb > 0 and sa > 0):
        return np.nan, np.empty(0)
    jain = float(sa * sa / (sc * sb))
    n = a.size
    return jain, jain * (2.0 * a * n / sa - b * n / sb - c * n / sc)


def _jain_lugsail(jain: float, a: list, b: list, c: list, confidence: float,
                  method: str) -> RatioInterval:
    """:func:`jain_interval` with ``lugsail`` (its doc)."""
    def variance(parts: list) -> tuple[float, int]:  # the delta method's Var(J), units
        _, z = _jain_residuals(*(np.concatenate(x) for x in parts))
        return (float(z @ z) / (z.size * (z.size - 1)) if z.size > 1 else np.nan), z.size

    halves = [[regroup(x, 2 * LUGSAIL_BATCHES) for x in sums] for sums in (a, b, c)]
    plain, n = variance([[merge_pairs(x) for x in sums] for sums in halves])
    finer, _ = variance(halves)
    if not np.isfinite(plain):
        return _flagged(jain, n, LUGSAIL_BATCHES, np.nan, method, "a batch has no flows")
    scale = max(2.0 - finer / plain, 1.0) if plain > 0 else 1.0
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * np.sqrt(scale * plain))
    return RatioInterval(jain, jain - half, min(jain + half, 1.0), n, LUGSAIL_BATCHES,
                         np.nan, method)


def jain_interval(rate_sums: Sequence[np.ndarray], rate_sq_sums: Sequence[np.ndarray],
                  counts: Sequence[np.ndarray], confidence: float = 0.95, *,
                  merge: bool = False, lugsail: bool = False, max_lag1: float = MAX_LAG1,
                  min_batches: int = MIN_BATCHES,
                  method: str = "delta") -> RatioInterval:
    """Jain's index over the units (module doc). Arguments: per replication, arrays of the
    units' Σx, Σx² and flow counts — the replications themselves as one unit each, or,
    with ``merge``, their consecutive batches, merged in pairs (every replication alike)
    while the residuals' lag-1 autocorrelation exceeds ``max_lag1``. ``lugsail`` (with at
    least 2 · :data:`LUGSAIL_BATCHES` batches in every replication): γ's interval instead
    — the batches added up into 2 · LUGSAIL_BATCHES halves and LUGSAIL_BATCHES batches,
    the variance max(2 V_batches − V_halves, V_batches) of the delta-method variances
    (:func:`mrfq.stats.estimators.lugsail_scale`), no correlation gate. The upper bound
    is capped at 1 (the index's maximum)."""
    a = [np.asarray(x, dtype=np.float64).ravel() for x in rate_sums]
    b = [np.asarray(x, dtype=np.float64).ravel() for x in rate_sq_sums]
    c = [np.asarray(x, dtype=np.float64).ravel() for x in counts]
    if not a or any(x.size == 0 for x in a):
        return _flagged(np.nan, 0, 0, np.nan, method, "no units")
    if not all(np.isfinite(x).all() for x in a + b + c):
        return _flagged(np.nan, 0, 0, np.nan, method, "non-finite values in the data")
    jain, _ = _jain_residuals(np.concatenate(a), np.concatenate(b), np.concatenate(c))
    if lugsail and np.isfinite(jain) and min(x.size for x in a) >= 2 * LUGSAIL_BATCHES:
        return _jain_lugsail(jain, a, b, c, confidence, method)
    floor = min(min_batches, min(x.size for x in a))
    lag1 = np.nan
    while merge:
        _, z = _jain_residuals(np.concatenate(a), np.concatenate(b), np.concatenate(c))
        cuts = np.cumsum([x.size for x in a])[:-1]
        lag1 = lag1_autocorrelation(np.split(z, cuts), center=0.0) if z.size else np.nan
        if not lag1 > max_lag1:
            break
        if min(x.size for x in a) // 2 < floor:
            return _flagged(jain, sum(x.size for x in a), min(x.size for x in a), lag1,
                            method, f"batch values correlated (lag-1 {lag1:.2f} > "
                            f"{max_lag1:g}): run too short")
        a, b, c = ([merge_pairs(x) for x in a], [merge_pairs(x) for x in b],
                   [merge_pairs(x) for x in c])
    _, z = _jain_residuals(np.concatenate(a), np.concatenate(b), np.concatenate(c))
    n = int(z.size)
    batches = min(x.size for x in a) if merge else 0
    if not np.isfinite(jain):
        return _flagged(np.nan, n, batches, lag1, method, "no flows with a rate")
    if n < 2:
        return _flagged(jain, n, batches, lag1, method, "fewer than 2 independent units")
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * np.sqrt((z @ z) / (n * (n - 1))))
    return RatioInterval(jain, jain - half, min(jain + half, 1.0), n, batches, lag1, method)
