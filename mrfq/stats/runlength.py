"""Run-length arithmetic: how many flows a ratio estimate needs for a relative precision.

Pure functions (numpy/scipy) behind the run-length advisor (:mod:`mrfq.advisor`):

* :func:`relative_variance` — the relative asymptotic variance per observation,
  σ²_rel = n · Var(R̂) / R̂², of a ratio estimator R̂ = Σy/Σx (γ_k = ΣN/ΣT, SPEC §3
  Measurement) from a pilot's batch sums, with the batches merged until they look
  uncorrelated (:func:`mrfq.stats.estimators.merge_batches`, as the run's own interval
  does), and the 95% range of the factor by which the true σ²_rel may differ from the
  estimate (χ² with batches − 1 degrees of freedom, fewer for batch means with excess
  kurtosis).
* :func:`flows_for_precision` — n = (q · σ_rel / h)², the observations for a relative
  half-width h: q = z for the normal-theory interval, or the median factor of a t
  interval with few degrees of freedom (:func:`interval_factor`: what one run's lugsail
  interval reports); :func:`half_width` its inverse.

For a stationary series with lag-k autocorrelations ρ_k the asymptotic variance of the
mean is Var(X)(1 + 2 Σ ρ_k) per observation; for an AR(1) series with coefficient φ that is
Var(X)(1 + φ)/(1 − φ) — the closed form the tests check against.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused
from scipy import integrate, optimize, special

from mrfq.stats.estimators import MAX_LAG1, MIN_BATCHES, merge_batches


@dataclass(frozen=True)
class RelativeVariance:
    """σ²_rel = n · Var(R̂)/R̂² per observation (dimensionless) of a ratio estimate R̂.

    ``estimate``: R̂ = Σy/Σx; ``batches``: independent batches it rests on after
    merging; ``lag1``: their residuals' lag-1 autocorrelation; ``dof``: the degrees of
    freedom of the variance estimate, b − 1 for normal batches and fewer when their
    residuals have excess kurtosis g₂ (Var(s²)/σ⁴ = 2/(b − 1) + g₂/b, matched to a χ²);
    ``factor_low``, ``factor_high``: at ``confidence``, the true σ²_rel lies in
    [factor_low, factor_high] × ``variance`` (:func:`variance_factor` of ``dof``);
    ``problem``: why the estimate is only a lower bound or missing (empty when fine)."""

    estimate: float
    variance: float
    batches: int
    lag1: float
    dof: float
    factor_low: float
    factor_high: float
    problem: str = ""


def variance_factor(dof: float, confidence: float = 0.95) -> tuple[float, float]:
    """The range [low, high] of σ²/σ̂² at ``confidence`` for a variance estimate with
    ``dof`` degrees of freedom (b − 1 for b independent normal batch means):
    dof/χ²_dof quantiles. (NaN, NaN) below one degree of freedom."""
    if not dof >= 1:
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0
    return (float(dof / scipy.stats.chi2.ppf(1.0 - tail, dof)),
            float(dof / scipy.stats.chi2.ppf(tail, dof)))


def relative_variance(y: np.ndarray | Sequence[float], x: np.ndarray | Sequence[float],
                      observations: float, confidence: float = 0.95, *,
                      max_lag1: float = MAX_LAG1,
                      min_batches: int = MIN_BATCHES) -> RelativeVariance:
    """σ²_rel per observation of R̂ = Σy/Σx from consecutive batch sums ``y``, ``x`` of one
    run of ``observations`` observations (for γ_k: y = Σ N, x = Σ T of a class's measured
    flows in each batch, ``observations`` the measured flow arrivals of all classes, so
    that σ²_rel is per flow of the run).

    Delta method over b batches with residuals e_i = y_i − R̂ x_i:
    Var(R̂) ≈ b · s_e² / (Σx)², so σ²_rel = observations · b · s_e² / (Σy)². Adjacent
    batches are first merged while their residuals' lag-1 autocorrelation exceeds
    ``max_lag1`` (down to ``min_batches``); if they are still correlated there, the
    variance is returned with ``problem`` saying it underestimates (the pilot is shorter
    than the correlation of the series)."""
    ys = np.asarray(y, dtype=np.float64).ravel()
    xs = np.asarray(x, dtype=np.float64).ravel()
    if ys.shape != xs.shape or ys.size < 2 or not observations > 0:
        return RelativeVariance(math.nan, math.nan, 0, math.nan, math.nan, math.nan,
                                math.nan, "fewer than two batches")
    total_y, total_x = float(ys.sum()), float(xs.sum())
    if not (total_x > 0 and total_y > 0):
        return RelativeVariance(math.nan, math.nan, 0, math.nan, math.nan, math.nan,
                                math.nan, "no positive sums")
    estimate = total_y / total_x
    merged_y, merged_x, lag1, independent = merge_batches([ys], [xs], estimate, max_lag1,
                                                          min_batches)
    e = merged_y[0] - estimate * merged_x[0]
    b = e.size
    variance = float(observations * b * e.var(ddof=1) / total_y ** 2)
    # skewed batch means (sojourns at high load) make s² vary more than χ²_{b−1} says
    excess = float(scipy.stats.kurtosis(e, fisher=True, bias=False)) if b >= 4 else 0.0
    dof = 2.0 / (2.0 / (b - 1) + max(excess, 0.0) / b)
    low, high = variance_factor(dof, confidence)
    problem = "" if independent else (
        f"batch means correlated (lag-1 {lag1:.2f} > {max_lag1:g} with {b} batches): "
        "pilot too short, σ² underestimated")
    return RelativeVariance(estimate, variance, b, float(lag1), dof, low, high, problem)


@functools.lru_cache(maxsize=256)  # (an integral: the advisor asks twice per row)
def interval_factor(confidence: float = 0.95, units: int | None = None,
                    lugsail: bool = False) -> float:
    """q of a relative half-width q · σ_rel / √n at ``confidence``: z for a known variance
    (``units`` None); for a t interval over ``units`` independent units, the median of
    t_{units−1} · σ̂ / σ, the half-width such an interval reports in half of its runs.

    With normal units σ̂²/σ² = A/(B − 1), A ~ χ²_{B−1} (B = ``units``). ``lugsail``: one
    run's γ interval (:func:`mrfq.stats.estimators.cut_batch_interval`), B batches from
    2B halves and the variance max(2 V_B − V_2B, V_B): with halves b_i ± d_i/2 it is
    max(2A/(B − 1) − (A + D)/(2B − 1), A/(B − 1)) σ², D ~ χ²_B independent of A, whose
    law is integrated here (B = 5: q = 2.65; plain batch means 2.54; z = 1.96)."""
    tail = 0.5 + confidence / 2.0
    if units is None:
        return float(scipy.stats.norm.ppf(tail))
    median = optimize.brentq(lambda c: variance_ratio_cdf(c * c, units, lugsail) - 0.5,
                             1e-3, 10.0, xtol=1e-12)
    return float(scipy.stats.t.ppf(tail, units - 1) * median)


def variance_ratio_cdf(x: float, units: int, lugsail: bool = False) -> float:
    """P(σ̂²/σ² ≤ x) for the variance estimate of an interval over ``units`` = B normal
    units (:func:`interval_factor`'s law): A/(B − 1), A ~ χ²_{B−1}; ``lugsail``: max(2A/(B
    − 1) − (A + D)/(2B − 1), A/(B − 1)), D ~ χ²_B independent of A."""
    dof = units - 1
    if not lugsail:
        return float(scipy.stats.chi2.cdf(dof * x, dof))
    if x <= 0:  # (scipy.stats's density was 0 off its support; the one below is not)
        return 0.0

    # the χ² density and tail written with scipy.special as scipy.stats.chi2 computes them
    # (bit for bit; checked in the tests): the quadrature calls them thousands of times,
    # and scipy.stats's per-call checks made every sweep's summary spend seconds here
    log_gamma, log_two = special.gammaln(dof / 2.), (np.log(2) * dof) / 2.

    def density(a: float) -> float:  # A = a, and the lugsail term ≤ x
        d_least = (2 * units - 1) * (2 * a / dof - x) - a
        pdf = np.exp(special.xlogy(dof / 2. - 1, a) - a / 2. - log_gamma - log_two)
        return float(pdf * (1.0 if d_least <= 0 else special.chdtrc(units, d_least)))
    return float(integrate.quad(density, 0.0, dof * x, limit=200)[0])


def flows_for_precision(variance: float, precision: float, confidence: float = 0.95,
                        units: int | None = None, lugsail: bool = False) -> float:
    """Observations n for a relative half-width ``precision`` at ``confidence``,
    n = (q · σ_rel / h)² with σ²_rel = ``variance`` per observation and q
    :func:`interval_factor` (``units``, ``lugsail``: the interval's; None: normal);
    NaN when the variance is."""
    if not 0.0 < precision < 1.0:
        raise ValueError(f"precision must be in (0, 1), got {precision!r}")
    q = interval_factor(confidence, units, lugsail)
    return float(q ** 2 * variance / precision ** 2)


def half_width(variance: float, observations: float, confidence: float = 0.95,
               units: int | None = None, lugsail: bool = False) -> float:
    """Relative half-width q · σ_rel / √n after ``observations`` observations (the
    inverse of :func:`flows_for_precision`, the same ``units`` and ``lugsail``)."""
    q = interval_factor(confidence, units, lugsail)
    return float(q * math.sqrt(variance / observations))
