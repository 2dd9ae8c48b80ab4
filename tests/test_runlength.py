"""The run-length arithmetic (mrfq.stats.runlength) against closed forms: iid and AR(1)
series whose asymptotic variance is known, the χ² factor, n = (z σ / h)²."""

import math

import numpy as np
import pytest
from scipy import integrate, signal
from scipy import stats as sps

from mrfq.stats.runlength import (
    flows_for_precision,
    half_width,
    interval_factor,
    relative_variance,
    variance_factor,
    variance_ratio_cdf,
)


def _ar1(rng, n, phi, mean, sd):
    """AR(1) with marginal standard deviation ``sd``: X_t − μ = φ(X_{t−1} − μ) + ε_t."""
    eps = rng.normal(0.0, sd * math.sqrt(1 - phi * phi), n)
    start = rng.normal(0.0, sd)  # stationary start
    x, _ = signal.lfilter([1.0], [1.0, -phi], eps, zi=[phi * start])
    return mean + x


def _batch(series, batches):
    parts = np.array_split(series, batches)
    return (np.array([p.sum() for p in parts]), np.array([p.size for p in parts], float))


def _estimates(phi, runs=200, n=100_000, batches=40, mean=10.0, sd=3.0, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(runs):
        y, x = _batch(_ar1(rng, n, phi, mean, sd), batches)
        out.append(relative_variance(y, x, n))
    # σ²_rel of the mean per observation: Var(X)(1 + φ)/(1 − φ)/μ²
    return out, sd * sd * (1 + phi) / (1 - phi) / mean ** 2


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.8])
def test_ar1_asymptotic_variance_is_estimated_without_bias(phi):
    estimates, truth = _estimates(phi)
    values = np.array([e.variance for e in estimates])
    assert all(not e.problem for e in estimates)
    # 200 estimates on 39 degrees of freedom each: the mean is within ±1.6% (1 sd) of truth
    assert abs(values.mean() / truth - 1) < 0.06
    # and each is a variance estimate from 20-40 batches (40, merged to 20 when r₁ > 0.2
    # by chance): its spread is that of χ² on 19-39 degrees of freedom, not less or more
    assert 0.15 < values.std() / values.mean() < 0.40


def test_factor_range_covers_the_truth_at_its_level():
    estimates, truth = _estimates(0.5, runs=300, seed=2)
    inside = [e.factor_low * e.variance <= truth <= e.factor_high * e.variance
              for e in estimates]
    assert 0.90 <= np.mean(inside) <= 0.99


def test_variance_factor_is_the_chi2_range():
    low, high = variance_factor(39)
    assert low == pytest.approx(39 / sps.chi2.ppf(0.975, 39))
    assert high == pytest.approx(39 / sps.chi2.ppf(0.025, 39))
    assert 0.6 < low < 0.7 and 1.6 < high < 1.7  # known width at 40 batches
    assert variance_factor(4)[1] > 8  # few batches: a wide range
    assert all(math.isnan(v) for v in variance_factor(0.5))


def test_skewed_batch_means_widen_the_factor_to_its_level():
    # iid lognormal(σ = 1.5) observations, 40 batches of 200: batch means with a large
    # excess kurtosis, so s² varies far more than χ²_39 says; σ²_rel = e^{σ²} − 1
    rng = np.random.default_rng(5)
    truth = math.exp(1.5 ** 2) - 1
    plain = adjusted = 0
    runs = 400
    for _ in range(runs):
        y, x = _batch(rng.lognormal(0.0, 1.5, 8000), 40)
        est = relative_variance(y, x, 8000)
        ratio = truth / est.variance
        low, high = variance_factor(est.batches - 1)
        plain += low <= ratio <= high
        adjusted += est.factor_low <= ratio <= est.factor_high
        assert est.dof <= est.batches - 1
    assert plain / runs < 0.87  # the normal-theory range is too narrow here (82%)
    assert 0.88 <= adjusted / runs <= 0.99 and adjusted - plain >= 0.05 * runs


def test_pilot_in_its_transient_is_flagged_as_underestimate():
    # a pilot still drifting (a slow start-up transient): batch means on a ramp stay
    # correlated however they are merged
    rng = np.random.default_rng(3)
    n = 20_000
    series = 10.0 + np.linspace(0.0, 3.0, n) + rng.normal(0.0, 1.0, n)
    y, x = _batch(series, 40)
    est = relative_variance(y, x, n)
    assert "pilot too short" in est.problem and est.batches == 5


def test_slow_correlation_is_underestimated_silently():
    # the known limit of any pilot: correlation longer than a batch of a short pilot is
    # not seen (lag-1 of 5 batch means is biased low), and σ² comes out below the truth
    rng = np.random.default_rng(3)
    n = 20_000
    y, x = _batch(_ar1(rng, n, 0.9995, 10.0, 3.0), 40)
    truth = 3.0 ** 2 * (1 + 0.9995) / (1 - 0.9995) / 100
    assert relative_variance(y, x, n).variance < 0.5 * truth


def test_ratio_of_sums_uses_the_delta_method():
    # y = γ x exactly: no variance at all; y with noise around γ x: Var(e)/(Σy)² scaling
    x = np.full(40, 100.0)
    assert relative_variance(2.0 * x, x, 4000).variance == 0.0
    rng = np.random.default_rng(4)
    e = rng.normal(0.0, 5.0, 40)
    est = relative_variance(2.0 * x + e, x, 4000)
    r = (2.0 * x + e).sum() / x.sum()
    resid = 2.0 * x + e - r * x
    assert est.estimate == pytest.approx(r)
    assert est.variance == pytest.approx(4000 * 40 * resid.var(ddof=1) / (2.0 * x + e).sum() ** 2)


def test_flows_for_precision_is_z_sigma_over_h_squared():
    z = sps.norm.ppf(0.975)
    assert flows_for_precision(1.0, 0.0196) == pytest.approx((z / 0.0196) ** 2)
    assert flows_for_precision(4.0, 0.02) == pytest.approx(4 * flows_for_precision(1.0, 0.02))
    n = flows_for_precision(7.3, 0.05)
    assert half_width(7.3, n) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        flows_for_precision(1.0, 1.5)


def test_missing_data_is_nan_with_a_reason():
    est = relative_variance([1.0], [1.0], 10)
    assert math.isnan(est.variance) and est.problem


def test_interval_factor_is_the_median_half_width():
    """z for a known variance; t_{B−1} √(median χ²_{B−1} / (B − 1)) for B normal units;
    with lugsail batches the median of t_4 σ̂_L / σ by simulation of 10 normal halves
    paired into 5 batches (2·10^5 runs: within 1%), above the plain factor."""
    assert interval_factor() == pytest.approx(sps.norm.ppf(0.975), rel=1e-12)
    plain = sps.t.ppf(0.975, 4) * math.sqrt(sps.chi2.median(4) / 4)
    assert interval_factor(0.95, 5) == pytest.approx(plain, rel=1e-9)
    rng = np.random.default_rng(6)
    halves = rng.normal(size=(200_000, 10))
    batches = (halves[:, 0::2] + halves[:, 1::2]) / 2
    v_batches = batches.var(axis=1, ddof=1) / 5  # estimates of Var(mean)
    v_halves = halves.var(axis=1, ddof=1) / 10
    lugsail = np.maximum(2 * v_batches - v_halves, v_batches)
    simulated = sps.t.ppf(0.975, 4) * np.median(np.sqrt(lugsail / (halves.var() / 10)))
    assert interval_factor(0.95, 5, lugsail=True) == pytest.approx(simulated, rel=0.01)
    assert interval_factor(0.95, 5, lugsail=True) > plain * 1.03
    assert half_width(4.0, 100.0, 0.95, 5) == pytest.approx(plain * 0.2, rel=1e-12)


@pytest.mark.parametrize("units", [2, 5, 20])
def test_lugsail_variance_cdf_is_its_integral_over_scipy_stats_chi2_bit_for_bit(units):
    """P(max(2A/(B−1) − (A + D)/(2B − 1), A/(B−1)) ≤ x), A ~ χ²_{B−1}, D ~ χ²_B: the same
    quadrature over scipy.stats.chi2's density and tail gives the same float (the kernel
    writes them with scipy.special for speed; the band the model's variance is tested
    against, and every decision taken on it, must not move), and it is a cdf."""
    dof = units - 1

    def reference(x):
        def density(a):
            d_least = (2 * units - 1) * (2 * a / dof - x) - a
            return float(sps.chi2.pdf(a, dof) * sps.chi2.sf(d_least, units))
        return float(integrate.quad(density, 0.0, dof * x, limit=200)[0])

    values = [variance_ratio_cdf(x, units, lugsail=True) for x in (0.01, 0.3, 1.0, 2.5, 40.0)]
    assert values == [reference(x) for x in (0.01, 0.3, 1.0, 2.5, 40.0)]
    assert [variance_ratio_cdf(x, units, lugsail=True) for x in (-1.0, 0.0)] == [0.0, 0.0]
    assert values == sorted(values) and 0.0 < values[0] and values[-1] == pytest.approx(1.0)
    # below its plain-batch counterpart (the lugsail estimate is never the smaller)
    assert all(v <= variance_ratio_cdf(x, units) + 1e-12
               for v, x in zip(values, (0.01, 0.3, 1.0, 2.5, 40.0), strict=True))
