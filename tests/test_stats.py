"""Output analysis (mrfq.stats): t interval, MSER-5, correlation-checked batch means, the
ratio estimator and its interval, flagged intervals, and coverage on known answers.

Every statistical test is seeded (deterministic) and its band is wide enough for the
sampling noise of its repetitions but narrow enough to catch a wrong formula.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import make_scenario
from scipy import stats as sps
from scipy.signal import lfilter

from mrfq import stats as S

REPO = Path(__file__).resolve().parent.parent


def binomial_band(p: float, n: int, sigmas: float = 3.0) -> tuple[float, float]:
    """Fractions within `sigmas` binomial standard deviations of p over n trials."""
    sd = np.sqrt(p * (1 - p) / n)
    return p - sigmas * sd, min(p + sigmas * sd, 1.0)


def ar1(rng, n, phi, mu=10.0):
    """Stationary AR(1) (started from its stationary law), unit innovations, mean mu."""
    e = rng.standard_normal(n)
    x0 = e[0] / np.sqrt(1 - phi**2)
    rest = lfilter([1.0], [1.0, -phi], e[1:], zi=[phi * x0])[0]
    return mu + np.concatenate([[x0], rest])


def mm1_fcfs(rng, n, rho):
    """M/M/1 FCFS from empty (Lindley): service times and sojourn times, mean service 1."""
    s = rng.exponential(1.0, n)
    a = rng.exponential(1 / rho, n)
    u = np.concatenate([[0.0], np.cumsum(s[:-1] - a[1:])])
    wait = u - np.minimum.accumulate(np.minimum(u, 0.0))
    return np.cumsum(a), s, wait + s


# ------------------------------------------------------------------------- t interval


@pytest.mark.parametrize("n, confidence", [(2, 0.95), (5, 0.9), (30, 0.95), (200, 0.99)])
def test_t_interval_matches_scipy(n, confidence):
    values = np.random.default_rng(n).gamma(2.0, 3.0, n)
    mean, low, high = S.t_interval(values, confidence)
    ref_low, ref_high = sps.t.interval(confidence, n - 1, loc=values.mean(),
                                       scale=sps.sem(values))
    assert mean == pytest.approx(values.mean(), rel=1e-12)
    assert (low, high) == pytest.approx((ref_low, ref_high), rel=1e-12)


def test_t_interval_degenerate_inputs():
    assert all(np.isnan(S.t_interval(np.array([]))))
    mean, low, high = S.t_interval(np.array([3.0]))
    assert mean == 3.0 and np.isnan(low) and np.isnan(high)
    # a NaN is not dropped silently: the whole result is NaN
    assert all(np.isnan(S.t_interval(np.array([1.0, 2.0, np.nan, 4.0]))))
    with pytest.raises(ValueError):
        S.t_interval(np.array([1.0, 2.0]), confidence=1.5)


# ---------------------------------------------------------------------------- MSER-5


def test_mser_statistic_matches_definition():
    x = np.random.default_rng(3).normal(size=63)  # 12 batches of 5, 3 left over
    z = x[:60].reshape(12, 5).mean(axis=1)
    expected = [((z[d:] - z[d:].mean()) ** 2).sum() / (12 - d) ** 2 for d in range(12)]
    np.testing.assert_allclose(S.mser_statistic(x), expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("sign, direction", [(+1, "both"), (-1, "both"), (-1, "low")])
def test_mser5_cuts_near_the_end_of_a_known_transient(sign, direction):
    """Offset ±10·exp(−t/τ) on unit noise: it falls below the noise (1σ) at t = τ·ln 10 ≈
    2.3τ and below 0.1σ at 4.6τ. MSER-5 must discard at least 2τ (most of the transient)
    and at most 5τ (not much stationary data), in every one of 100 seeds; and the
    truncated mean must be closer to the stationary mean (0) than the untruncated one."""
    tau, n = 100, 5000
    t = np.arange(n)
    cuts, err_cut, err_all = [], [], []
    for seed in range(100):
        x = sign * 10 * np.exp(-t / tau) + np.random.default_rng(seed).standard_normal(n)
        cut = S.mser_truncation(x, direction=direction)
        assert cut.discard % 5 == 0 and cut.discard == 5 * cut.batches_discarded
        assert not cut.at_limit
        cuts.append(cut.discard)
        err_cut.append(abs(x[cut.discard:].mean()))
        err_all.append(abs(x.mean()))
    cuts = np.array(cuts)
    assert cuts.min() >= 2 * tau, np.quantile(cuts, [0, 0.5, 1])
    assert cuts.max() <= 5 * tau, np.quantile(cuts, [0, 0.5, 1])
    assert np.mean(err_cut) < 0.3 * np.mean(err_all)


def test_mser5_leaves_stationary_data_alone():
    cuts = np.array([S.mser5(np.random.default_rng(seed).standard_normal(5000))
                     for seed in range(100)])
    assert np.quantile(cuts, 0.9) <= 25  # ≤ 0.5% of the series in 90% of seeds
    assert cuts.max() <= 250


def test_mser5_low_direction_ignores_a_high_start():
    """An early high stretch is not the transient of an empty start: "low" keeps it."""
    t = np.arange(5000)
    for seed in range(20):
        x = 10 * np.exp(-t / 100) + np.random.default_rng(seed).standard_normal(5000)
        assert S.mser_truncation(x, direction="low").discard == 0
        assert S.mser_truncation(x, direction="both").discard >= 200


def test_mser5_flags_a_trend_it_cannot_cut():
    x = np.linspace(0.0, 10.0, 1000) + np.random.default_rng(1).normal(0, 0.1, 1000)
    cut = S.mser_truncation(x)
    assert cut.at_limit and cut.batches_discarded == (1000 // 5) // 2
    assert S.mser_truncation(np.arange(12.0)).discard == 0  # < 4 batches: not truncated
    with pytest.raises(ValueError):
        S.mser5(np.array([1.0, np.nan] * 20))


# --------------------------------------------------------------- batch means, merging


def test_lag1_autocorrelation_by_hand_and_of_ar1():
    v = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    e = v - v.mean()
    assert S.lag1_autocorrelation(v) == pytest.approx((e[:-1] @ e[1:]) / (e @ e))
    # pooled over two series: products within a series only (−2/4, not −1/4 as the
    # concatenation [1, 3, 3, 1] would give)
    a, b = np.array([1.0, 3.0]), np.array([3.0, 1.0])
    assert S.lag1_autocorrelation([a, b], center=2.0) == pytest.approx(-0.5)
    x = ar1(np.random.default_rng(0), 200_000, 0.6)
    assert S.lag1_autocorrelation(x) == pytest.approx(0.6, abs=0.01)


def test_merge_batches_sums_adjacent_pairs_and_stops_at_the_minimum():
    """A linear trend's batch means stay correlated after any merging: merged down to the
    minimum (20 → 10 → 5), sums preserved, and flagged as not independent."""
    y = np.arange(20.0)
    x = np.ones(20)
    ys, xs, lag1, independent = S.merge_batches([y], [x], y.sum() / x.sum())
    assert ys[0].size == 5 and not independent and lag1 > 0.2
    np.testing.assert_allclose(ys[0], y.reshape(5, 4).sum(axis=1))
    np.testing.assert_allclose(xs[0], np.full(5, 4.0))
    # odd counts: the last batch joins the last pair (7 → 3)
    ys, _, _, _ = S.merge_batches([np.arange(7.0)], [np.ones(7)], 3.0, min_batches=3)
    np.testing.assert_allclose(ys[0], [1.0, 5.0, 15.0])
    ci = S.batch_means_interval(np.repeat(np.arange(20.0), 10))
    assert ci.problem.startswith("batch means correlated") and ci.batches == 5
    assert np.isnan(ci.low) and np.isnan(ci.high) and ci.estimate == pytest.approx(9.5)


def test_batch_merging_on_correlated_ar1():
    """AR(1), φ = 0.9, 200 points (20 batches of 10: the batch means have lag-1
    correlation ≈ 0.5): merging must happen in most series, and the interval covers the
    known mean clearly more often than the unmerged 20-batch interval does (measured:
    merged 86% of the unflagged, unmerged 74%)."""
    merged_batches, covered, flagged, covered_raw = [], 0, 0, 0
    for seed in range(200):
        x = ar1(np.random.default_rng(seed), 200, 0.9)
        ci = S.batch_means_interval(x)
        raw = S.batch_means_interval(x, max_lag1=np.inf)
        assert raw.batches == 20
        merged_batches.append(ci.batches)
        if ci.problem:
            flagged += 1
            assert np.isnan(ci.low) and "correlated" in ci.problem
        else:
            assert ci.lag1 <= 0.2 or np.isnan(ci.lag1)
            covered += ci.low <= 10.0 <= ci.high
        covered_raw += raw.low <= 10.0 <= raw.high
    merged_batches = np.array(merged_batches)
    assert np.mean(merged_batches == 20) <= 0.25
    assert np.mean(merged_batches) <= 12
    assert flagged <= 20
    unflagged = 200 - flagged
    assert covered / unflagged >= 0.80
    assert covered / unflagged >= covered_raw / 200 + 0.07


def test_batch_means_coverage_on_ar1_long_enough():
    """φ = 0.9 with 1000 points (batches of 50): few merges, nominal coverage."""
    covered = unflagged = 0
    for seed in range(200):
        ci = S.batch_means_interval(ar1(np.random.default_rng(seed), 1000, 0.9))
        if not ci.problem:
            unflagged += 1
            covered += ci.low <= 10.0 <= ci.high
    assert unflagged >= 190
    low, high = binomial_band(0.95, unflagged)
    assert low <= covered / unflagged <= high


def test_independent_data_is_rarely_merged():
    """IID data: r₁ of 20 batch means has mean ≈ −1/20 and sd ≈ 0.22, so it exceeds 0.2
    in ≈ 13% of series; no merging in at least 80%, and nominal coverage."""
    merged = covered = unflagged = 0
    for seed in range(200):
        x = np.random.default_rng(seed).normal(10.0, 1.0, 1000)
        ci = S.batch_means_interval(x)
        merged += ci.batches < 20
        if not ci.problem:
            unflagged += 1
            covered += ci.low <= 10.0 <= ci.high
    assert merged <= 40
    low, high = binomial_band(0.95, unflagged)
    assert low <= covered / unflagged <= high


# ------------------------------------------------------------------- ratio estimator


def test_ratio_interval_delta_method_by_hand():
    y = np.array([10.0, 12.0, 9.0, 14.0, 11.0])
    x = np.array([20.0, 25.0, 19.0, 26.0, 24.0])
    ci = S.ratio_interval(y, x, 0.9)
    r = y.sum() / x.sum()
    se = np.sqrt(((y - r * x) ** 2).sum() / (5 * 4)) / x.mean()
    half = sps.t.ppf(0.95, 4) * se
    assert ci.estimate == pytest.approx(r, rel=1e-14)
    assert (ci.low, ci.high) == pytest.approx((r - half, r + half), rel=1e-12)
    assert ci.units == 5 and not ci.problem


def _synthetic_flows(seed, n, m, gamma, sigma):
    """Geometric sizes (mean m), sojourn T = N/γ · ε with ε ~ Gamma(mean 1, sd σ)
    independent of N: Σ N / Σ T → γ."""
    rng = np.random.default_rng(seed)
    size = rng.geometric(1 / m, n).astype(np.float64)
    return size, size / gamma * rng.gamma(1 / sigma**2, sigma**2, n)


def test_ratio_estimator_coverage_and_width_on_known_answer():
    """Coverage within a binomial band over 200 seeded data sets, and the half-width
    equal to the known one: e = N − γT = N(1 − ε), so se(γ̂) = σ·√(E[N²]/n) / E[T]
    with E[N²] = 2m² − m, E[T] = m/γ; half-width t_{B−1}·se."""
    m, gamma, n, sigma, batches = 50.0, 0.4, 4000, 0.5, 20
    se = sigma * np.sqrt((2 * m * m - m) / n) / (m / gamma)
    covered, widths, merged_widths = 0, [], []
    for seed in range(200):
        size, sojourn = _synthetic_flows(seed, n, m, gamma, sigma)
        parts = np.array_split(np.arange(n), batches)
        y = np.array([size[p].sum() for p in parts])
        x = np.array([sojourn[p].sum() for p in parts])
        raw = S.batch_ratio_interval(y, x, max_lag1=np.inf)
        assert raw.estimate == pytest.approx(size.sum() / sojourn.sum(), rel=1e-12)
        assert raw.low <= raw.estimate <= raw.high
        covered += raw.low <= gamma <= raw.high
        widths.append((raw.high - raw.low) / 2 / (sps.t.ppf(0.975, batches - 1) * se))
        ci = S.batch_ratio_interval(y, x)
        if not ci.problem:
            merged_widths.append((ci.high - ci.low) / 2
                                 / (sps.t.ppf(0.975, ci.units - 1) * se))
    low, high = binomial_band(0.95, 200)
    assert low <= covered / 200 <= high
    # E[s]/σ ≈ 0.987 for 20 batches; ±6% catches z for t (−6.4%) and other slips
    assert 0.94 <= np.mean(widths) <= 1.06, np.mean(widths)
    assert 0.90 <= np.mean(merged_widths) <= 1.12, np.mean(merged_widths)


def test_ratio_estimator_removes_size_noise():
    """Same target, lower variance: Σ N/Σ T against m / mean(T) (the issue's claim)."""
    m, gamma = 50.0, 0.4
    ratio, plain = [], []
    for seed in range(200):
        size, sojourn = _synthetic_flows(seed, 4000, m, gamma, 0.5)
        ratio.append(size.sum() / sojourn.sum())
        plain.append(m / sojourn.mean())
    assert np.mean(ratio) == pytest.approx(gamma, rel=0.002)
    assert np.std(ratio) < 0.75 * np.std(plain)


# ------------------------------------------------------------------ flagged intervals


@pytest.mark.parametrize("y, x, require_positive, reason", [
    ([1.0, np.nan, 2.0], [1.0, 1.0, 1.0], False, "non-finite"),
    ([1.0, 2.0], [1.0, np.inf], False, "non-finite"),
    ([1.0], [2.0], False, "fewer than 2"),
    ([], [], False, "no data"),
    ([1.0, 2.0], [-1.0, 0.5], False, "non-positive denominator"),
    ([1.0, 2.0], [0.0, 0.0], False, "non-positive denominator"),
    ([1.0, 2.0], [1.0, 2.0, 3.0], False, "differ"),
    ([0.1, 9.0, 0.2], [1.0, 1.0, 1.0], True, "reaches 0"),
])
def test_ratio_interval_flags_instead_of_guessing(y, x, require_positive, reason):
    ci = S.ratio_interval(np.array(y), np.array(x), require_positive=require_positive)
    assert reason in ci.problem and not ci.ok
    assert np.isnan(ci.low) and np.isnan(ci.high)


def _flows(seed=0, flows=400, classes=2, load=0.5):
    """Synthetic flow records: Poisson arrivals, geometric sizes, T = N/γ · noise."""
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1.0, flows))
    flow_class = rng.integers(0, classes, flows)
    size = rng.geometric(1 / 20, flows)
    completion = arrival + size / load * rng.gamma(4.0, 0.25, flows)
    return arrival, completion, flow_class, size


def _table(records, warmup=0.05, batches=20, classes=("a", "b"), m=20.0):
    return S.replication_table(*records, list(classes), [0.25] * len(classes), m, warmup,
                               batches)


OLD_COLUMNS = {"gamma", "ci_low", "ci_high", "ci_method", "flows_measured", "ratio_estimate",
               "mean_in_progress", "little_gamma", "mean_sojourn"}
NEW_COLUMNS = {"ci_problem", "batches_used", "batch_lag1", "ci_units", "sojourn_gamma",
               "warmup_flows", "warmup_cut"}


def test_too_few_flows_give_a_flagged_point_never_zero_to_infinity():
    table = _table(_flows(flows=30))  # ≈ 14 measured flows per class < 20 batches
    out = S.combine_replications([table], 20.0)
    assert OLD_COLUMNS | NEW_COLUMNS <= set(out.columns)
    for _, row in out.iterrows():
        assert "fewer measured flows" in row["ci_problem"]
        assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
        assert np.isfinite(row["gamma"])  # the estimate is still reported
    # the old code returned (0, ∞) for wide intervals: nothing of the sort any more
    noisy = S.combine_replications([_table(_flows(flows=60), batches=3)], 20.0)
    assert not np.isinf(noisy[["ci_low", "ci_high"]].to_numpy()).any()
    assert not (noisy["ci_low"] == 0).any()


def test_nan_records_give_a_flagged_point():
    arrival, completion, flow_class, size = _flows()
    completion = completion.copy()
    completion[100] = np.nan
    bad_class = flow_class[100]
    table = _table((arrival, completion, flow_class, size))
    assert "non-finite" in table.loc[bad_class, "ci_problem"]
    assert table.loc[1 - bad_class, "ci_problem"] == ""
    for tables in ([table], [table] * 10):  # batch mode and replications mode
        out = S.combine_replications(tables, 20.0).set_index("class")
        name = "ab"[bad_class]
        assert "non-finite" in out.loc[name, "ci_problem"]
        assert np.isnan(out.loc[name, "ci_low"]) and np.isnan(out.loc[name, "ci_high"])
        other = "ab"[1 - bad_class]
        assert out.loc[other, "ci_problem"] == ""
        assert out.loc[other, "ci_low"] <= out.loc[other, "gamma"] <= out.loc[other, "ci_high"]
    # warm-up detection cannot run on a NaN sojourn either: said, not hidden
    auto = _table((arrival, completion, flow_class, size), warmup="auto")
    assert auto["ci_problem"].str.contains("warm-up").all()


def test_class_without_measured_flows_is_flagged():
    arrival, completion, flow_class, size = _flows(classes=2)
    table = S.replication_table(arrival, completion, flow_class, size, ["a", "b", "c"],
                                [0.2, 0.2, 0.2], 20.0, 0.05, 20)
    assert table.loc[2, "ci_problem"] == "no measured flows"
    out = S.combine_replications([table] * 10, 20.0)
    assert "no measured flows" in out.loc[2, "ci_problem"] and np.isnan(out.loc[2, "ci_low"])
    assert np.isnan(out.loc[2, "gamma"])


def test_a_replication_problem_fails_the_point_even_when_the_interval_computes():
    """Ten replications, one without measured flows of class b: the ratio interval over
    replications can be computed (that replication contributes (0, 0)), but the point
    says so and gets no interval."""
    tables = [_table(_flows(seed=s, flows=600)) for s in range(9)]
    arrival, completion, flow_class, size = _flows(seed=9, flows=600)
    tables.append(_table((arrival, completion, np.zeros_like(flow_class), size)))
    assert tables[-1].loc[1, "ci_problem"] == "no measured flows"
    out = S.combine_replications(tables, 20.0).set_index("class")
    assert out.loc["b", "ci_problem"] == "replication 9: no measured flows"
    assert np.isnan(out.loc["b", "ci_low"]) and np.isnan(out.loc["b", "ci_high"])
    assert np.isfinite(out.loc["b", "gamma"])
    assert out.loc["a", "ci_problem"] == "" and out.loc["a", "ci_low"] < out.loc["a", "gamma"]


def test_auto_warmup_flags_a_run_that_never_settles():
    """Sojourns growing steadily through the run (a trend far above the noise): MSER-5's
    minimum sits at its limit (half the run), which replication_table reports and
    combine_replications turns into a failing point."""
    arrival, completion, flow_class, size = _flows(seed=2, flows=4000)
    sojourn = completion - arrival
    sojourn += np.linspace(0.0, 100.0, 4000) * sojourn.mean()
    table = _table((arrival, arrival + sojourn, flow_class, size), warmup="auto")
    assert table["warmup_cut"].iloc[0] == 2000
    assert table["ci_problem"].str.contains("MSER-5 minimum at its limit").all()
    out = S.combine_replications([table], 20.0)
    assert out["ci_problem"].str.contains("warm-up").all()
    assert out["ci_low"].isna().all() and out["ci_high"].isna().all()


def test_auto_warmup_weighs_classes_alike():
    """Class a (10% of the flows) has sojourns 100× class b's; a start transient in class b
    alone (its flows among the first 300 arrivals 10× faster) is still found, because each
    class's sojourns are divided by their mean before the classes are pooled (unscaled,
    class a's noise hides it: no cut in any of these seeds)."""
    cuts = []
    for seed in range(10):
        arrival, completion, _, size = _flows(seed=seed, flows=4000)
        flow_class = (np.random.default_rng(seed + 100).random(4000) < 0.9).astype(int)
        sojourn = completion - arrival
        sojourn[flow_class == 0] *= 100
        sojourn[(np.arange(4000) < 300) & (flow_class == 1)] *= 0.1
        table = _table((arrival, arrival + sojourn, flow_class, size), warmup="auto")
        cuts.append(int(table["warmup_cut"].iloc[0]))
    assert min(cuts) >= 200 and 250 <= np.median(cuts) <= 350, cuts


def test_warmup_argument_is_checked():
    for bad in ("automatic", 1.0, -0.1):
        with pytest.raises(ValueError):
            _table(_flows(), warmup=bad)


# ----------------------------------------------------- replication_table and combining


def test_replication_table_columns_and_estimates():
    records = _flows(flows=1000)
    arrival, completion, flow_class, size = records
    table = _table(records, warmup=0.1)
    first = 100
    for k, row in table.iterrows():
        mine = (flow_class == k) & (np.arange(1000) >= first)
        T = (completion - arrival)[mine]
        assert row["warmup_cut"] == first
        assert row["warmup_flows"] == np.count_nonzero(flow_class[:first] == k)
        assert row["flows_measured"] == mine.sum()
        assert row["gamma"] == row["ratio_estimate"] == pytest.approx(size[mine].sum() / T.sum())
        assert row["sojourn_gamma"] == pytest.approx(20.0 / T.mean())
        assert sum(row["batch_size_sums"]) == pytest.approx(size[mine].sum())
        assert sum(row["batch_sojourn_sums"]) == pytest.approx(T.sum())
        assert len(row["batch_sojourns"]) == 20 and row["ci_problem"] == ""
    json.dumps(table.to_dict("records"))  # sweep point records are JSON


def _tin_by_hand(y: np.ndarray, x: np.ndarray) -> float:
    """Tin's corrected ratio, written out from Cochran (6.9): r (1 + (s_xy/(x̄ȳ) − s_x²/x̄²)/n)."""
    n = y.size
    r = y.sum() / x.sum()
    c_xy = np.cov(np.vstack([y, x]))  # ddof 1
    return r * (1 + (c_xy[0, 1] / (y.mean() * x.mean()) - c_xy[1, 1] / x.mean() ** 2) / n)


def test_combine_gamma_is_the_bias_corrected_ratio_and_the_interval_brackets_it():
    tables = [_table(_flows(seed=s, flows=2000)) for s in range(3)]
    out = S.combine_replications(tables, 20.0)
    for k, row in out.iterrows():
        per = [t.iloc[k] for t in tables]
        pooled = sum(p["size_sum"] for p in per) / sum(p["sojourn_sum"] for p in per)
        assert row["ratio_estimate"] == pytest.approx(pooled, rel=1e-12)
        # γ: Tin's correction over the interval's units, the 5 lugsail batches of every
        # replication (the 20 stored batches added up 4 by 4)
        y = np.concatenate([np.add.reduceat(np.asarray(p["batch_size_sums"]), [0, 4, 8, 12, 16])
                            for p in per])
        x = np.concatenate([np.add.reduceat(np.asarray(p["batch_sojourn_sums"]),
                                            [0, 4, 8, 12, 16]) for p in per])
        assert row["gamma"] == pytest.approx(_tin_by_hand(y, x), rel=1e-12)
        assert abs(row["gamma"] / pooled - 1) < 0.01
        assert row["ci_method"] == "batch-ratio" and row["ci_problem"] == ""
        assert row["ci_low"] < row["gamma"] < row["ci_high"]
        assert row["gamma"] - row["ci_low"] == pytest.approx(row["ci_high"] - row["gamma"])
        assert row["batches_used"] == S.LUGSAIL_BATCHES
        assert row["ci_units"] == 3 * row["batches_used"]
        assert row["flows_measured"] == sum(p["flows_measured"] for p in per)
    many = S.combine_replications(tables * 4, 20.0)  # 12 ≥ 10 replications
    assert (many["ci_method"] == "replications").all() and (many["batches_used"] == 0).all()
    assert (many["ci_units"] == 12).all()
    assert ((many["ci_low"] < many["gamma"]) & (many["gamma"] < many["ci_high"])).all()
    for k, row in many.iterrows():
        y = np.array([t.iloc[k]["size_sum"] for t in tables * 4])
        x = np.array([t.iloc[k]["sojourn_sum"] for t in tables * 4])
        assert row["gamma"] == pytest.approx(_tin_by_hand(y, x), rel=1e-12)


def test_auto_warmup_in_replication_table_cuts_a_low_start():
    """The first 300 arrivals have sojourns 10× shorter than the rest (a caricature of an
    empty start): "auto" discards them — never fewer, rarely many more — and reports how
    many flows it discarded, per class. (A milder transient, sojourns ×0.1 → ×1 over those
    300, is mostly not detected: the sojourn series of geometric sizes is noisy.)"""
    cuts = []
    for seed in range(20):
        arrival, completion, flow_class, size = _flows(seed=seed, flows=4000)
        sojourn = completion - arrival
        sojourn[:300] *= 0.1
        table = _table((arrival, arrival + sojourn, flow_class, size), warmup="auto")
        cut = int(table["warmup_cut"].iloc[0])
        assert (table["warmup_cut"] == cut).all()
        assert table["warmup_flows"].sum() == cut
        assert (table["ci_problem"] == "").all()
        cuts.append(cut)
    assert min(cuts) >= 300 and np.median(cuts) <= 350, cuts


def test_old_point_records_still_combine():
    """Point records written before this module stored Σ N per batch still give a
    summary: the batch interval is then the one of m / mean(T) and gamma is that
    estimate, so the interval brackets it. The record is the paper-scale BMF point at
    load 0.9 as stored before the re-run with the new statistics (commit 94e3095)."""
    path = Path(__file__).resolve().parent / "data" / "fig3_v1_packet-bmf-0.9.json"
    record = json.loads(path.read_text())
    out = S.combine_replications([pd.DataFrame(record["classes"])], 20000.0)
    for _, row in out.iterrows():
        assert row["ci_method"] == "batch-means (m/T)"
        assert row["gamma"] == pytest.approx(row["sojourn_gamma"])
        if not row["ci_problem"]:
            assert row["ci_low"] < row["gamma"] < row["ci_high"]
        assert np.isnan(row["warmup_cut"]) and np.isnan(row["warmup_flows"])


# --------------------------------------------------------------------------- coverage


def test_coverage_mm1_from_empty_with_auto_warmup():
    """M/M/1 FCFS started empty, ρ = 0.8, 20 000 customers, the whole pipeline
    (replication_table with warmup="auto", 20 batches with merging, ratio interval):
    Σ S / Σ T → 1/E[T] = 1 − ρ. Coverage in a binomial band over 300 seeds, mean
    estimate within 1% (two-sided MSER-5 here: +1.9%, measured)."""
    rho, n, seeds = 0.8, 20_000, 300
    covered = unflagged = 0
    estimates = []
    for seed in range(seeds):
        arrival, service, sojourn = mm1_fcfs(np.random.default_rng(seed), n, rho)
        table = S.replication_table(arrival, arrival + sojourn, np.zeros(n, int), service,
                                    ["q"], [rho], 1.0, "auto", 20)
        row = S.combine_replications([table], 1.0).iloc[0]
        estimates.append(row["gamma"])
        if not row["ci_problem"]:
            unflagged += 1
            covered += row["ci_low"] <= 1 - rho <= row["ci_high"]
    assert unflagged >= 0.95 * seeds
    low, high = binomial_band(0.95, unflagged)
    assert low <= covered / unflagged <= high
    assert np.mean(estimates) / (1 - rho) - 1 == pytest.approx(0.0, abs=0.01)


def test_coverage_packet_single_resource_exact_answer():
    """J = 1, one class, no propagation delay: the resource is busy whenever a flow is in
    progress and a flow ends at each packet completion with probability 1/m whichever flow
    is served, so the number of flows in progress is that of M/G/1 with geometric work
    (Pollaczek–Khinchine): E[n] = ρ + ρ²(1 − 1/(2m))/(1 − ρ), γ = ρ/E[n] =
    (1 − ρ)/(1 − ρ/(2m)) exactly, for every work-conserving policy and window (checked:
    10 runs of 300 000 flows, m = 3, W = 1, ρ = 0.6: 0.4448 ± 0.0009 against 0.4444).
    200 seeded runs of 4000 flows: coverage within the binomial band, and bias < 2%."""
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel
    from mrfq.seeds import run_seed as replication_seed

    rho, m, window = 0.6, 20, 4
    exact = (1 - rho) / (1 - rho / (2 * m))
    scenario = make_scenario(classes=[{"name": "a", "requirements": [1.0], "load_share": 1}],
                             resources=("cpu",))
    model = PacketModel.from_scenario(scenario)
    covered = unflagged = 0
    estimates = []
    for seed in range(200):
        run = run_replication(model, "bmf", [rho], replication_seed(seed, 0), flows=4000,
                              mean_size=m, window=window)
        table = S.replication_table(run.arrival, run.completion, run.flow_class, run.size,
                                    ["a"], [rho], m, "auto", 20)
        row = S.combine_replications([table], m).iloc[0]
        estimates.append(row["gamma"])
        if not row["ci_problem"]:
            unflagged += 1
            covered += row["ci_low"] <= exact <= row["ci_high"]
    assert unflagged >= 190
    low, high = binomial_band(0.95, unflagged)
    assert low <= covered / unflagged <= high
    assert np.mean(estimates) / exact - 1 == pytest.approx(0.0, abs=0.02)
