"""Intervals that hold at high load (issue 25): Tin's bias correction of the ratio
estimator, lugsail batch means, the relaxation-time start-up cut, and coverage at load
0.9 against closed forms (M/M/1)."""

import numpy as np
import pandas as pd
import pytest
from test_stats import ar1, binomial_band, mm1_fcfs

from mrfq import stats as S
from mrfq.intervals import lugsail_units, ratio_interval, tin_factor


def test_tin_factor_removes_the_ratio_bias_of_a_closed_form():
    """y = 1, x ~ Gamma(k, 1), n units: R = 1/x̄, E[R] = n/(nk − 1) against 1/E[x] = 1/k,
    a relative bias of nk/(nk − 1) − 1 (5.26% for nk = 20). x̄ is independent of x/Σx
    (Lukacs), and E[s²/x̄²] = n/(nk + 1) (Dirichlet), so Tin's estimator has
    E[R_T]·k = (nk)² / ((nk)² − 1): a bias of 0.25%. 40 000 samples, 3 standard errors."""
    rng = np.random.default_rng(1)
    n, k, reps = 10, 2.0, 40_000
    x = rng.gamma(k, 1.0, (reps, n))
    y = np.ones(n)
    raw = np.array([ratio_interval(y, xi).estimate for xi in x]) * k
    tin = np.array([ratio_interval(y, xi, correct_bias=True).estimate for xi in x]) * k
    assert all(tin_factor(y, xi) < 1 for xi in x[:100])  # y constant: always downward
    se = raw.std() / np.sqrt(reps)
    assert raw.mean() - 1 == pytest.approx(n * k / (n * k - 1) - 1, abs=3 * se)
    assert tin.mean() - 1 == pytest.approx((n * k) ** 2 / ((n * k) ** 2 - 1) - 1, abs=3 * se)


def test_tin_factor_by_hand_and_degenerate_inputs():
    y, x = np.array([2.0, 3.0, 7.0]), np.array([1.0, 2.0, 2.0])
    s_yx, s_xx = np.cov(y, x)[0, 1], np.var(x, ddof=1)
    assert tin_factor(y, x) == pytest.approx(
        1 + (s_yx / (y.mean() * x.mean()) - s_xx / x.mean() ** 2) / 3)
    assert tin_factor(y[:1], x[:1]) == 1.0
    assert tin_factor(np.zeros(3), x) == 1.0


def test_lugsail_restores_the_variance_batch_means_miss():
    """AR(1) with φ = 0.99 (integrated autocorrelation time (1 + φ)/(1 − φ) ≈ 200), 2 000
    values, 5 batches of 400: plain batch means estimate Var(mean) about a quarter low;
    the lugsail estimate (2 σ²_BM(b) − σ²_BM(b/2)) is within 10% of the exact variance of
    the mean of a stationary AR(1) (unit innovations), averaged over 600 series."""
    phi, n, series = 0.99, 2000, 600
    lags = np.arange(1, n)
    exact = (1 + 2 * np.sum((1 - lags / n) * phi ** lags)) / (1 - phi ** 2) / n
    rng = np.random.default_rng(3)
    plain, lug = [], []
    for _ in range(series):
        x = ar1(rng, n, phi)
        halves = np.array([p.sum() for p in np.array_split(x, 10)])
        counts = np.full(10, n / 10)
        y5, c5 = halves.reshape(5, 2).sum(1), counts.reshape(5, 2).sum(1)
        e = y5 - (y5.sum() / n) * c5
        v_plain = (e @ e) / (5 * 4) / (n / 5) ** 2
        plain.append(v_plain)
        lug.append(v_plain * S.lugsail_scale(y5, c5, halves, counts))
    assert np.mean(plain) / exact < 0.85
    assert np.mean(lug) / exact == pytest.approx(1.0, abs=0.10)


@pytest.mark.parametrize("sums", [18, 16, 14])
def test_lugsail_over_a_number_of_batch_sums_that_ten_does_not_divide(sums):
    """The relaxation cut leaves out an even number of a run's 20 stored batches, so
    :func:`mrfq.intervals.lugsail_units` often regroups 18, 16 or 14 equal batch sums
    into 10 halves of 1 or 2 batches. AR(1), φ = 0.99 (autocorrelation time ≈ 200),
    batches of 100 values, 1 000 series: its variance is within 8% of the one from 10
    halves of equal length cut from the raw series (not possible from stored sums), and
    within 25% of the exact variance of the mean, which batches shorter than the
    autocorrelation time miss in part even when even (VALIDATION.md, "Lugsail over an
    uneven number of batches")."""
    phi, series, b = 0.99, 1000, 100
    n = sums * b
    lags = np.arange(1, n)
    exact = (1 + 2 * np.sum((1 - lags / n) * phi ** lags)) / (1 - phi ** 2) / n

    def five_batch_variance(y5, c5):
        e = y5 - (y5.sum() / n) * c5
        return (e @ e) * 5 / 4 / n ** 2

    rng = np.random.default_rng(sums)
    regrouped, even = [], []
    for _ in range(series):
        x = ar1(rng, n, phi)
        y5, c5, scale = lugsail_units([x.reshape(sums, b).sum(1)], [np.full(sums, float(b))])
        assert y5.sum() == pytest.approx(x.sum()) and c5.sum() == n  # every batch, once
        regrouped.append(five_batch_variance(y5, c5) * scale)
        parts = np.array_split(x, 10)
        hy = np.array([p.sum() for p in parts])
        hc = np.array([p.size for p in parts], dtype=float)
        y5e, c5e = hy.reshape(5, 2).sum(1), hc.reshape(5, 2).sum(1)
        even.append(five_batch_variance(y5e, c5e) * S.lugsail_scale(y5e, c5e, hy, hc))
    assert np.mean(regrouped) / np.mean(even) == pytest.approx(1.0, abs=0.08)
    assert np.mean(regrouped) / exact == pytest.approx(1.0, abs=0.25)


@pytest.mark.parametrize("rho", [0.5, 0.8, 0.9, 0.95])
def test_relaxation_flows_closed_form(rho):
    """One class on one resource: ρ / (1 − √ρ)² flows (M/M/1's relaxation time times the
    arrival rate); another class that does not use the busiest resource adds its flows."""
    assert S.relaxation_flows([rho], [[1.0]]) == pytest.approx(rho / (1 - np.sqrt(rho)) ** 2)
    two = S.relaxation_flows([rho, rho], [[1.0, 0.0], [0.0, 0.5]])
    assert two == pytest.approx(2 * rho / (1 - np.sqrt(rho)) ** 2)
    assert S.relaxation_flows([0.0], [[1.0]]) == 0.0
    assert S.relaxation_flows([1.0], [[1.0]]) == np.inf


def _tables(flows: int, rho: float, seeds, batches: int = 20):
    out = []
    for seed in seeds:
        arrival, service, sojourn = mm1_fcfs(np.random.default_rng(seed), flows, rho)
        out.append(S.replication_table(arrival, arrival + sojourn, np.zeros(flows, int),
                                       service, ["q"], [rho], 1.0, 0.0, batches))
    return out


def test_relaxation_cut_drops_the_leading_batches_and_says_when_runs_are_too_short():
    tables = _tables(2000, 0.9, range(3))
    # 700 flows of 2 000 in 20 batches: 7 batches (the nearest whole number)
    assert S.relaxation_cut(tables, 700) == (7, "")
    assert S.relaxation_cut(tables, 700, even=True) == (8, "")
    out = S.combine_replications(tables, 1.0, warmup_flows=700).iloc[0]
    kept_N = sum(np.sum(t["batch_size_sums"].iloc[0][8:]) for t in tables)
    kept_T = sum(np.sum(t["batch_sojourn_sums"].iloc[0][8:]) for t in tables)
    assert out["ratio_estimate"] == pytest.approx(kept_N / kept_T, rel=1e-12)
    assert out["relaxation_batches"] == 8  # batch mode: an even number (lugsail pairs)
    assert out["flows_measured"] == 3 * 2000 - 3 * 800 and out["warmup_flows"] == 3 * 800
    drop, problem = S.relaxation_cut(tables, 1100)
    assert drop == 0 and "runs of at least 2200 flows are needed" in problem
    short = S.combine_replications(tables, 1.0, warmup_flows=1100).iloc[0]
    assert np.isnan(short["ci_low"]) and "2200 flows" in short["ci_problem"]
    assert S.relaxation_cut(tables, 0) == (0, "")


def test_old_records_and_classes_without_batches_take_no_cut_or_the_right_one():
    """Records from before batch sums (no column) combine with the cut asked for and
    without a crash; a class with no batches does not hide the others' count."""
    tables = _tables(2000, 0.9, range(3))
    old = [t.drop(columns=["batch_sojourn_sums", "batch_size_sums"]) for t in tables]
    assert S.relaxation_cut(old, 700) == (0, "")
    empty_first = []
    for t in tables:
        t = pd.concat([t, t], ignore_index=True)
        t.at[0, "batch_sojourn_sums"] = []
        t.at[0, "flows_measured"] = 0
        empty_first.append(t)
    assert S.relaxation_cut(empty_first, 700) == (7, "")


def test_a_few_correlated_batches_are_still_checked():
    """Lugsail needs 10 half-batches: with 8 batches the plain correlation check holds
    (a lag-1 far above 0.2 at the minimum number of batches withholds the interval)."""
    rng = np.random.default_rng(0)
    y = ar1(rng, 8, 0.95, mu=10.0)
    assert S.lag1_autocorrelation(y - y.mean()) > 0.2
    ci = S.batch_ratio_interval(y, np.ones(8), lugsail=True, min_batches=8)
    assert np.isnan(ci.low) and "correlated" in ci.problem


def test_relaxation_cut_applies_to_replications_too():
    tables = _tables(2000, 0.9, range(10))
    out = S.combine_replications(tables, 1.0, warmup_flows=700).iloc[0]
    assert out["ci_method"] == "replications" and out["relaxation_batches"] == 7
    N = np.array([np.sum(t["batch_size_sums"].iloc[0][7:]) for t in tables])
    T = np.array([np.sum(t["batch_sojourn_sums"].iloc[0][7:]) for t in tables])
    assert out["ratio_estimate"] == pytest.approx(N.sum() / T.sum(), rel=1e-12)
    assert out["gamma"] == pytest.approx(N.sum() / T.sum() * tin_factor(N, T), rel=1e-12)


@pytest.mark.parametrize("mode", ["one run", "replications"])
def test_coverage_and_bias_mm1_at_load_0_9(mode):
    """M/M/1 FCFS from empty at ρ = 0.9 (Σ S / Σ T → 1 − ρ): one run of 20 000 customers,
    or 10 replications of 2 000, through replication_table and combine_replications with
    the relaxation cut, 200 seeds: a mean bias within the runs' noise (±2%) and at least
    1% below the uncorrected ratio's on the same runs (+1.5% to +2.3% high: Jensen's
    bias; 300 seeds, one run: +0.29% against +1.76%). One run: coverage in the binomial band of
    95% (measured 94.7% over 300 seeds). Ten replications of 2 000: a known shortfall, pinned — 10
    units of 1 300 flows (four relaxation times) each are right-skewed and their spread
    grows with their mean, so the t interval over them covers 90.7% (300 seeds: 20
    intervals above 1 − ρ, 8 below); the test holds it at ≥ 85% and below 95% so that a
    change either way is seen (VALIDATION.md, "Intervals at load 0.9")."""
    rho, seeds = 0.9, 200
    cut = int(np.ceil(S.RELAXATIONS * S.relaxation_flows([rho], [[1.0]])))
    covered, estimates, raw = 0, [], []
    for seed in range(seeds):
        tables = (_tables(20_000, rho, [seed]) if mode == "one run"
                  else _tables(2_000, rho, range(10 * seed, 10 * seed + 10)))
        for t in tables:  # what a packet point does with warmup = "auto"
            t["warmup_cut"] = 0
        row = S.combine_replications(tables, 1.0, warmup_flows=cut).iloc[0]
        estimates.append(row["gamma"])
        raw.append(row["ratio_estimate"])
        covered += bool(row["ci_low"] <= 1 - rho <= row["ci_high"])
    low, high = binomial_band(0.95, seeds) if mode == "one run" else (0.85, 0.95)
    assert low <= covered / seeds <= high
    bias, raw_bias = np.mean(estimates) / (1 - rho) - 1, np.mean(raw) / (1 - rho) - 1
    # the runs' own spread: 13–14% per run, so the mean of 200 is known to ±2% (95%);
    # the correction, paired on the same runs, is known far better than that
    assert abs(bias) < 0.02 and raw_bias - bias > 0.01
