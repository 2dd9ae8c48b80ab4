"""Intervals for every reported statistic (issue 25): the exact M/D/1 percentiles they are
checked against, sectioning for quantiles, Jain's index by the delta method, the rounding
to histogram bins, and the per-batch sums the kernel's output is reduced to."""

import math

import numpy as np
import pandas as pd
import pytest
from conftest import make_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq import plots
from mrfq.intervals import RatioInterval, histogram_quantile
from mrfq.packet.engine import sojourn_bin_edges
from mrfq.queueing import md1_sojourn_quantile, md1_waiting_cdf, md1_waiting_quantile
from mrfq.simulation import simulate
from mrfq.stats import (
    QUANTILES,
    batch_quantile_levels,
    batch_unit_interval,
    flow_metric_sums,
    jain_interval,
    packet_delay_sums,
    round_outward,
    sectioning_interval,
    utilisation,
    utilisation_batches,
)

# ------------------------------------------------------------------- exact M/D/1


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.9])
def test_md1_waiting_time_has_its_atom_and_first_interval(rho):
    """P(W = 0) = 1 − ρ; on [0, 1) only arrivals in the residual service wait:
    P(W ≤ x) = (1 − ρ) e^{ρx}; the CDF is continuous at the integers and reaches 1."""
    assert md1_waiting_cdf(0.0, rho) == pytest.approx(1 - rho, rel=1e-14)
    assert md1_waiting_cdf(-0.1, rho) == 0.0
    for x in (0.25, 0.5, 0.99):
        assert md1_waiting_cdf(x, rho) == pytest.approx((1 - rho) * math.exp(rho * x),
                                                        rel=1e-13)
    for k in (1, 2, 5, 20):
        assert md1_waiting_cdf(k - 1e-9, rho) == pytest.approx(md1_waiting_cdf(k, rho),
                                                               abs=1e-8)
    assert md1_waiting_cdf(400.0, rho) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_md1_mean_wait_from_the_cdf_is_pollaczek_khinchine(rho):
    """E[W] = ∫ (1 − F(x)) dx = ρ / (2(1 − ρ)) (service 1), integrated by 8-point
    Gauss–Legendre on each unit interval (F is smooth between integers)."""
    nodes, weights = np.polynomial.legendre.leggauss(8)
    total, n = 0.0, 0
    while True:
        tail = np.array([1.0 - md1_waiting_cdf(n + (g + 1) / 2, rho) for g in nodes])
        total += 0.5 * float(weights @ tail)
        n += 1
        if tail[-1] < 1e-14:
            break
    assert total == pytest.approx(rho / (2 * (1 - rho)), rel=1e-10)


@pytest.mark.parametrize("rho", [0.5, 0.9])
@pytest.mark.parametrize("p", [0.5, 0.95, 0.99])
def test_md1_quantile_inverts_the_cdf(rho, p):
    x = md1_waiting_quantile(p, rho)
    if p <= 1 - rho:
        assert x == 0.0
    else:
        assert md1_waiting_cdf(x, rho) == pytest.approx(p, abs=1e-10)
        assert md1_waiting_cdf(x * (1 - 1e-6), rho) < p
    assert md1_sojourn_quantile(p, rho) == 1.0 + x


def test_md1_cdf_matches_a_plain_float_evaluation_where_that_is_stable():
    """For small x Erlang's sum has few terms and float64 is accurate: the exact
    implementation agrees with a direct evaluation; and the percentiles VALIDATION.md
    uses (p95 at ρ = 0.5 lies in [2, 3), p50 at 0.9 in [3, 4)) are where it says."""
    for rho in (0.5, 0.9):
        for x in np.linspace(0.0, 4.9, 50):
            direct = (1 - rho) * sum((rho * (k - x)) ** k * math.exp(-rho * (k - x))
                                     / math.factorial(k) for k in range(int(x) + 1))
            assert md1_waiting_cdf(float(x), rho) == pytest.approx(direct, rel=1e-11)
    assert md1_sojourn_quantile(0.95, 0.5) == pytest.approx(3.05064, abs=1e-4)
    assert md1_sojourn_quantile(0.50, 0.9) == pytest.approx(4.01305, abs=1e-4)
    assert md1_sojourn_quantile(0.50, 0.5) == 1.0  # the atom P(W = 0) = 1/2


# ------------------------------------------------------------------- sectioning


def _section_quantile(data: np.ndarray, q: float, sections: int):
    parts = np.array_split(data, sections)
    return sectioning_interval(float(np.quantile(data, q)),
                               np.array([np.quantile(p, q) for p in parts]))


@pytest.mark.parametrize("q", [0.5, 0.99])
def test_sectioning_covers_the_exact_quantile_of_iid_samples(q):
    """Exponential(1) samples, exact quantile −ln(1 − q): 300 data sets of 4 000 values
    in 20 sections; the 95% interval covers in 90–99%, and its mean half-width is within
    25% of t₁₉ times the asymptotic standard error √(q(1−q)/n) / f(ξ)."""
    rng = np.random.default_rng(7)
    exact = -math.log(1 - q)
    n, sections, sets = 4000, 20, 300
    inside, halves = 0, []
    for _ in range(sets):
        ci = _section_quantile(rng.exponential(size=n), q, sections)
        assert ci.ok and ci.low <= ci.estimate <= ci.high
        inside += ci.low <= exact <= ci.high
        halves.append((ci.high - ci.low) / 2)
    assert 0.90 * sets <= inside <= 0.99 * sets
    se = math.sqrt(q * (1 - q) / n) / math.exp(-exact)
    assert np.mean(halves) == pytest.approx(2.093 * se, rel=0.25)


def test_sectioning_flags_what_it_cannot_do():
    assert "fewer than 2" in sectioning_interval(1.0, np.array([1.0])).problem
    assert sectioning_interval(1.0, np.array([1.0, np.nan])).problem
    assert sectioning_interval(np.nan, np.array([1.0, 2.0])).problem


def test_batch_sectioning_merges_correlated_batches_and_flags_when_it_cannot():
    """Batch values that drift (strongly positively correlated) are merged level by level
    and flagged at the floor; independent ones are used at level 0."""
    rng = np.random.default_rng(3)
    independent = rng.normal(10.0, 1.0, 32)
    levels = [[independent, independent[:16] + independent[16:]]]
    ci = batch_unit_interval(10.0, levels)
    assert ci.ok and ci.batches == 32
    drift = np.linspace(8.0, 12.0, 32)
    lv = [drift]
    while lv[-1].size > 1:
        a = lv[-1]
        lv.append(a[: a.size // 2 * 2].reshape(-1, 2).mean(axis=1))
    flagged = batch_unit_interval(10.0, [lv])
    assert "correlated" in flagged.problem and np.isnan(flagged.low)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.05, 500.0), st.floats(0.0, 0.5))
def test_rounding_out_reaches_bin_edges_and_keeps_the_interval(centre, spread):
    edges = sojourn_bin_edges()
    ci = RatioInterval(centre, centre * (1 - spread), centre * (1 + spread), 5, 0, np.nan,
                       "sectioning")
    wide = round_outward(ci, edges)
    assert wide.low <= ci.low and wide.high >= ci.high
    assert wide.low in edges and wide.high in edges
    # by at most one bin (≤ 1/32 of the value) on each side
    assert wide.low >= ci.low * (1 - 1 / 16) and wide.high <= ci.high * (1 + 1 / 16)


# -------------------------------------------------------------------------- Jain


def test_jain_interval_covers_the_exact_index_of_exponential_rates():
    """Rates x ~ Exp(1): Jain's index (E x)² / E x² = 1/2. 300 data sets of 2 000 flows
    as 20 independent units: coverage 90–99%, bounds bracket the estimate, and the half-width is
    within 25% of the delta method's asymptotic one (J √(Var z / n), z the influence
    function 2x − x²/2 − 1 of J at Exp(1): Var z = 2·... computed numerically)."""
    rng = np.random.default_rng(5)
    sets, n, batches = 300, 2000, 20
    inside, halves = 0, []
    zs = rng.exponential(size=1_000_000)
    var_z = np.var(0.5 * (2 * zs - zs * zs / 2 - 1))
    for _ in range(sets):
        x = rng.exponential(size=n)
        parts = np.array_split(x, batches)
        ci = jain_interval([[p.sum() for p in parts]], [[p @ p for p in parts]],
                           [[p.size for p in parts]])
        assert ci.ok and ci.low <= ci.estimate <= ci.high
        inside += ci.low <= 0.5 <= ci.high
        halves.append((ci.high - ci.low) / 2)
    assert 0.90 * sets <= inside <= 0.99 * sets
    assert np.mean(halves) == pytest.approx(2.093 * math.sqrt(var_z / n), rel=0.25)


def test_jain_interval_over_replications_flags_too_few():
    ci = jain_interval([[3.0]], [[5.0]], [[2.0]])
    assert "fewer than 2" in ci.problem
    assert ci.estimate == pytest.approx(9 / 10)


# ------------------------------------------------------------- per-batch reductions


def test_batch_quantile_levels_are_the_quantiles_of_merged_buckets():
    edges = sojourn_bin_edges()
    rng = np.random.default_rng(1)
    hist = np.zeros((7, edges.size - 1), dtype=np.int64)
    hist[:, 700:760] = rng.integers(0, 5, (7, 60))  # a run's few non-empty bins
    hist[3, 900] = 2
    levels = batch_quantile_levels(hist, edges)
    assert [len(level) for level in levels] == [7, 3, 1]
    merged3 = [hist[0] + hist[1], hist[2] + hist[3], hist[4] + hist[5] + hist[6]]
    for i, (q, _) in enumerate(QUANTILES):
        assert levels[0][4][i] == histogram_quantile(hist[4], edges, q)
        assert levels[1][2][i] == histogram_quantile(merged3[2], edges, q)
        assert levels[2][0][i] == histogram_quantile(hist.sum(axis=0), edges, q)
    rows = packet_delay_sums(hist[:, None, :], np.ones((7, 1)), 2, edges)
    assert len(rows[0]["batch_packet_quantiles"][0]) == 5


def test_flow_batches_add_up_to_the_totals():
    rng = np.random.default_rng(2)
    T = rng.exponential(5.0, 503)
    N = rng.integers(1, 40, 503).astype(float)
    T[7] = np.nan  # dropped from every sum alike
    sums = flow_metric_sums(T, N, 2.0, batches=20)
    assert len(sums["batch_rate_sums"]) == 20
    assert sum(sums["batch_flow_counts"]) == sum(sums["size_bin_flows"]) == 502
    for total, parts in (("slowdown_sum", "batch_slowdown_sums"), ("rate_sum",
                                                                   "batch_rate_sums"),
                         ("rate_sq_sum", "batch_rate_sq_sums")):
        assert sum(sums[parts]) == pytest.approx(sums[total], rel=1e-12)
    assert flow_metric_sums(T[:5], N[:5], batches=20)["batch_rate_sums"] == []


def test_utilisation_batches_add_up_to_the_utilisation():
    work = np.array([30.0, 12.0])
    bucket_work = np.array([[0.0, 0.0], [np.nan, np.nan], [4.0, 1.0], [9.0, 5.0]])
    bucket_time = np.array([0.0, np.nan, 10.0, 20.0])
    busy, spans = utilisation_batches(work, bucket_work, bucket_time, 50.0, 2)
    assert spans == [10.0, 30.0]
    assert busy == [[5.0, 4.0], [21.0, 7.0]]
    whole = utilisation(work, bucket_work, bucket_time, 50.0, 2)
    assert np.array(busy).sum(axis=0) / sum(spans) == pytest.approx(whole)


# ------------------------------------------------------------------ end to end


@pytest.mark.parametrize("replications, flows", [(10, 20_000), (1, 100_000),
                                                 (3, 40_000)])
def test_md1_percentile_intervals_contain_the_exact_percentiles(replications, flows):
    """M/D/1 at ρ = 0.9, one seed, both modes (over replications; over batches of one
    run, and of three runs pooled): the 99% intervals of p50, p95, p99 contain Erlang's
    exact percentiles and are at most ±30% wide (95% coverage over 100 seeds:
    benchmarks/md1_coverage.py, VALIDATION.md); every other reported statistic has an
    interval that brackets its estimate."""
    scenario = make_scenario(classes=[{"name": "a", "requirements": [1.0],
                                       "load_share": 1}], resources=("link",),
                             axis="link", mean_size=1, window=1, flows=flows,
                             replications=replications, warmup=0.05)
    row = simulate(scenario, "fifo", 0.9, seed=3, confidence=0.99).classes.iloc[0]
    for q, stem in QUANTILES:
        exact = md1_sojourn_quantile(q, 0.9)
        assert row[f"{stem}_problem"] == ""
        assert row[f"{stem}_low"] <= exact <= row[f"{stem}_high"]
        assert row[f"{stem}_high"] - row[f"{stem}_low"] <= 0.6 * exact
    for stem in ("mean_fct", "mean_slowdown", "jain_index", "utilisation_link",
                 "jain_overall"):
        assert row[f"{stem}_problem"] == ""
        assert row[f"{stem}_low"] < row[stem] < row[f"{stem}_high"]
    assert row["utilisation_link_low"] < 0.9 < row["utilisation_link_high"]
    # widths (95% half-widths over 4·10^5 flows 0.3–0.4% and 1.4%, VALIDATION.md; here
    # 99%, fewer flows, and with few merged batches a large t)
    assert row["utilisation_link_high"] - row["utilisation_link_low"] <= 0.02
    assert row["jain_index_high"] - row["jain_index_low"] <= 0.1
    assert row["mean_fct_high"] - row["mean_fct_low"] <= 0.5 * row["mean_fct"]


def test_delay_plot_draws_the_intervals(tmp_path):
    """Error bars from the bounds, none where an interval is flagged (NaN: no bar and no
    caps drawn, where a bar of length 0 drew its caps through the point)."""
    frame = pd.DataFrame({"policy": ["fifo"] * 2, "class": ["a"] * 2, "load": [0.5, 0.9],
                          "p99_sojourn": [4.0, 20.0], "p99_sojourn_low": [3.0, np.nan],
                          "p99_sojourn_high": [6.0, np.nan],
                          "mean_packet_sojourn": [1.5, 5.5],
                          "packet_sojourn_low": [1.4, 5.0],
                          "packet_sojourn_high": [1.6, 6.0]})
    bars = plots._interval_bars(frame, "p99_sojourn", "p99_sojourn")
    assert bars[:, 0].tolist() == [1.0, 2.0] and np.isnan(bars[:, 1]).all()
    assert plots._interval_bars(frame.drop(columns="p99_sojourn_low"), "p99_sojourn",
                                "p99_sojourn") is None
    written = plots.packet_delays(frame, tmp_path / "delays.png")
    assert all(path.stat().st_size > 0 for path in written)
