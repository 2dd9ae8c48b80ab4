"""Packet delays, flow completion times, slowdown, Jain's index and utilisation (issue 15)
against theory: FIFO with one resource and single-packet flows is M/D/1."""

import numpy as np
import pytest
from conftest import make_scenario
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mrfq import stats
from mrfq.packet import kernel
from mrfq.packet.engine import run_replication, sojourn_bin_edges
from mrfq.packet.model import PacketModel
from mrfq.simulation import simulate
from mrfq.stats import (
    first_full_bucket,
    flow_metric_sums,
    histogram_quantile,
    jain_index,
    merged_histogram,
    packet_delay_sums,
)
from mrfq.stats import tables as stats_tables

MD1 = [{"name": "a", "requirements": [1.0], "load_share": 1}]


def md1_scenario(**packet):
    """One resource, one class, one packet per flow (m = 1: every flow has exactly one
    packet), service time 1: the router is an M/D/1 queue under FIFO."""
    return make_scenario(classes=MD1, resources=("link",), axis="link", mean_size=1,
                         window=1, **packet)


def md1_mean_sojourn(rho: float) -> float:
    """Pollaczek–Khinchine for deterministic service 1: E[T] = 1 + ρ / (2(1 − ρ))."""
    return 1.0 + rho / (2.0 * (1.0 - rho))


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_fifo_single_packet_flows_is_md1(rho):
    """Mean per-packet sojourn: the M/D/1 value inside the 99% interval (10 replications;
    the 95% interval covered it for 18 of 20 seeds at both loads), the interval at most
    ±4% wide; utilisation ρ within 1.5%."""
    scenario = md1_scenario(flows=100_000, replications=10, warmup=0.05)
    result = simulate(scenario, "fifo", rho, seed=11, confidence=0.99)
    row = result.classes.iloc[0]
    exact = md1_mean_sojourn(rho)
    assert row["packet_sojourn_low"] <= exact <= row["packet_sojourn_high"]
    assert row["packet_sojourn_high"] - row["packet_sojourn_low"] <= 0.08 * exact
    # single-packet flows: the packet's sojourn is the flow's (up to the bucket cut)
    assert row["mean_packet_sojourn"] == pytest.approx(row["mean_fct"], rel=0.01)
    assert row["mean_slowdown"] == pytest.approx(row["mean_fct"], rel=1e-12)
    assert row["utilisation_link"] == pytest.approx(rho, rel=0.015)
    assert row["p50_sojourn"] < row["mean_packet_sojourn"] < row["p99_sojourn"]


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_histogram_percentiles_match_the_exact_percentiles_of_the_same_packets(rho):
    """p50/p95/p99 from the kernel's histogram against numpy's percentiles of the same
    run's per-packet sojourns (one packet per flow, no warm-up: every packet counted),
    within the width of the bin that holds the exact value (≤ 1/32 of it)."""
    scenario = md1_scenario(flows=100_000)
    model = PacketModel.from_scenario(scenario)
    run = run_replication(model, "fifo", scenario.class_loads(rho),
                          np.random.SeedSequence(5), flows=100_000, mean_size=1, window=1)
    sojourn = run.completion - run.arrival
    assert run.sojourn_hist.sum() == sojourn.size
    assert run.sojourn_sum.sum() == pytest.approx(sojourn.sum(), rel=1e-12)
    edges = sojourn_bin_edges()
    counts = run.sojourn_hist.sum(axis=(0, 1))
    ranked = np.sort(sojourn)
    for q in (0.5, 0.95, 0.99):
        exact = float(np.quantile(sojourn, q))
        i = int(np.searchsorted(edges, exact, side="right")) - 1
        width = edges[i + 1] - edges[i]
        assert width <= exact / kernel.SOJOURN_SUB * (1 + 1e-12)
        got = histogram_quantile(counts, edges, q)
        assert abs(got - exact) <= width
        # and in the very bin of the order statistic ⌈q n⌉ (a histogram shifted by one
        # bin either way fails this)
        k = int(np.ceil(q * sojourn.size)) - 1
        b = int(np.searchsorted(edges, ranked[k], side="right")) - 1
        assert edges[b] <= got <= edges[b + 1]


def test_bin_edges_have_the_stated_resolution():
    edges = sojourn_bin_edges()
    assert edges.size == kernel.SOJOURN_BINS + 1
    assert np.all(np.diff(edges) > 0)
    relative = np.diff(edges) / edges[:-1]
    assert relative.max() == pytest.approx(1 / kernel.SOJOURN_SUB)
    assert relative.min() > 1 / (2 * kernel.SOJOURN_SUB)
    # the kernel's bin of a value is the bin whose edges bracket it
    rng = np.random.default_rng(1)
    for x in np.exp(rng.uniform(np.log(edges[0]), np.log(edges[-1]), 2000)):
        i = kernel.sojourn_bin(x)
        assert edges[i] <= x < edges[i + 1]


def test_values_outside_the_bins_fall_in_the_first_or_last_bin():
    edges = sojourn_bin_edges()
    last = kernel.SOJOURN_BINS - 1
    for x in (0.0, -0.0, -1.0, -np.inf, 5e-324, edges[0] / 2, np.nextafter(edges[0], 0)):
        assert kernel.sojourn_bin(x) == 0
    assert kernel.sojourn_bin(edges[0]) == 0
    assert kernel.sojourn_bin(np.nextafter(edges[0], 1)) == 0
    assert kernel.sojourn_bin(edges[1]) == 1
    assert kernel.sojourn_bin(np.nextafter(edges[-1], 0)) == last
    for x in (edges[-1], 2 * edges[-1], 1e300, np.inf):
        assert kernel.sojourn_bin(x) == last


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 1e4), min_size=1, max_size=300),
       st.floats(0.0, 1.0))
def test_histogram_quantile_is_within_one_bin_of_the_data(values, q):
    edges = sojourn_bin_edges()
    x = np.array(values)
    counts = np.bincount([kernel.sojourn_bin(v) for v in x], minlength=edges.size - 1)
    got = histogram_quantile(counts, edges, q)
    # the order statistic the histogram's quantile interpolates towards
    ranked = np.sort(x)
    k = min(max(int(np.ceil(q * x.size)) - 1, 0), x.size - 1)
    i = kernel.sojourn_bin(ranked[k])
    assert edges[i] <= got <= edges[i + 1]


def test_histogram_quantile_of_nothing_is_nan():
    edges = sojourn_bin_edges()
    assert np.isnan(histogram_quantile(np.zeros(edges.size - 1), edges, 0.5))


def test_jain_index_closed_forms():
    x = np.array([2.0, 2.0, 2.0, 2.0])
    assert jain_index(x.sum(), x @ x, x.size) == pytest.approx(1.0)
    y = np.array([5.0, 0.0, 0.0, 0.0, 0.0])
    assert jain_index(y.sum(), y @ y, y.size) == pytest.approx(1 / 5)
    z = np.array([1.0, 3.0])  # (4)² / (2 · 10)
    assert jain_index(z.sum(), z @ z, z.size) == pytest.approx(0.8)
    assert np.isnan(jain_index(0.0, 0.0, 0))


def test_jain_index_divides_by_the_class_weight():
    """Two flows of weights 1 and 2 getting rates 1 and 2 (weighted fair): index 1."""
    a = flow_metric_sums(np.array([10.0]), np.array([10]), weight=1.0)
    b = flow_metric_sums(np.array([5.0]), np.array([10]), weight=2.0)
    assert jain_index(a["rate_sum"] + b["rate_sum"], a["rate_sq_sum"] + b["rate_sq_sum"],
                      2) == pytest.approx(1.0)


def test_delay_interval_survives_replications_with_different_warmups():
    """Pooled batch interval over replications whose first measured bucket differs: the
    common last batches are used, and the interval brackets its mean."""
    edges = sojourn_bin_edges()
    rng = np.random.default_rng(4)
    per = []
    for first in (3, 5):
        n = kernel.SOJOURN_BUCKETS - first
        counts = rng.integers(50, 60, n).astype(float)
        sums = counts * rng.normal(10.0, 0.3, n)
        per.append({"packets_measured": int(counts.sum()), "packet_sojourn_sum": sums.sum(),
                    "packet_hist": [int(counts.sum())], "packet_hist_offset": 600,
                    "batch_packet_counts": counts.tolist(),
                    "batch_packet_sojourn_sums": sums.tolist()})
    row = stats_tables._packet_delay_columns(per, 0.95, False, edges, stats.MAX_LAG1,
                                             stats.MIN_BATCHES)
    assert row["packet_ci_problem"] == ""
    assert row["packet_sojourn_low"] < row["mean_packet_sojourn"] < row["packet_sojourn_high"]
    assert row["packet_sojourn_high"] - row["packet_sojourn_low"] < 1.0


def test_flow_metric_sums_bins_by_decade():
    T = np.array([2.0, 4.0, 30.0, 500.0])
    N = np.array([1, 9, 10, 250])
    sums = flow_metric_sums(T, N)
    assert sums["size_bin_flows"][:4] == [2, 1, 1, 0]
    assert sums["size_bin_sojourn_sums"][:3] == [6.0, 30.0, 500.0]
    assert sums["slowdown_sum"] == pytest.approx(2 + 4 / 9 + 3 + 2)
    assert sums["rate_sum"] == pytest.approx(0.5 + 9 / 4 + 1 / 3 + 0.5)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(1, 5000), st.integers(1, 64))
@example(1, 10, 32)  # fewer flows than buckets: bucket 1 is empty, 3 is the answer
@example(2, 20, 32)
@example(0, 3, 32)
def test_first_full_bucket_is_the_first_bucket_without_warmup_flows(cut, flows, buckets):
    b = first_full_bucket(cut, flows, buckets)
    bucket_of = np.arange(flows) * buckets // flows
    # the buckets that hold flows, none of them below the cut (empty buckets do not count)
    full = sorted(set(bucket_of[bucket_of >= 0].tolist()) - set(bucket_of[:cut].tolist()))
    assert b == (full[0] if full else buckets)


def test_merged_histogram_aligns_offsets():
    per = [{"packet_hist": [1, 2], "packet_hist_offset": 3},
           {"packet_hist": [5], "packet_hist_offset": 4}]
    assert merged_histogram(per, 6).tolist() == [0, 0, 0, 1, 7, 0]


def test_slowdown_shows_small_flows_against_large():
    """Heavy-tailed sizes under BMF: the size-bin table has small and large flows, its
    counts add up to the measured flows, and its mean FCT grows with size."""
    classes = [{"name": "a", "requirements": [1.0, 0.5], "load_share": 1,
                "size": {"distribution": "pareto", "shape": 1.5}}]
    scenario = make_scenario(classes=classes, mean_size=20, window=5, flows=4000,
                             warmup=0.05)
    result = simulate(scenario, "bmf", 0.7, seed=3)
    table = result.size_bins
    assert table["flows"].sum() == result.classes["flows_measured"].iloc[0]
    assert len(table) >= 3
    assert table["mean_fct"].is_monotonic_increasing
    assert np.all(table["mean_slowdown"] > 0.99)


def test_records_from_before_the_metrics_give_nan_columns():
    table = stats.combine_replications(
        [stats.replication_table(np.arange(50.0), np.arange(50.0) + 2, np.zeros(50, int),
                                 np.full(50, 10.0), ["a"], [0.5], 10.0, 0.1, 20)
         .drop(columns=["rate_sum"])], 10.0, sojourn_edges=sojourn_bin_edges())
    assert np.isnan(table["jain_index"].iloc[0])
    assert np.isnan(table["p99_sojourn"].iloc[0])


@pytest.mark.parametrize("initial", [None, ([0, 1, 2, 0, 1], [40, 3, 25, 7, 60])])
def test_histogram_counts_every_packet_of_the_measured_flows_only(initial):
    """Every packet of the measured flows is counted once, in its flow's bucket (rank ·
    buckets // flows); flows of a steady-state start (``initial``) are not counted."""
    scenario = make_scenario(mean_size=20, window=5, flows=640)
    model = PacketModel.from_scenario(scenario)
    run = run_replication(model, "bmf", scenario.class_loads(0.7), np.random.SeedSequence(2),
                          flows=640, mean_size=20, window=5, initial=initial)
    buckets = kernel.SOJOURN_BUCKETS
    per_bucket = np.zeros((buckets, 3), np.int64)
    np.add.at(per_bucket, (np.arange(640) * buckets // 640, run.flow_class), run.size)
    np.testing.assert_array_equal(run.sojourn_hist.sum(axis=2), per_bucket)


def test_a_run_with_fewer_flows_than_buckets_reports_delays_and_utilisation():
    """20 measured flows fill 20 of the 32 buckets (flow i in bucket ⌊32i/20⌋), and a
    warm-up cut of 2 flows ends in bucket 1: the delay window starts at the next bucket
    that holds a flow, 3, which starts with flow 2 (it used to be the empty bucket 2,
    whose utilisation was NaN), so the packets of the 18 flows from flow 2 on count."""
    scenario = md1_scenario(flows=20, replications=1, warmup=0.1)
    row = simulate(scenario, "fifo", 0.5, seed=3).classes.iloc[0]
    assert row["warmup_cut"] == 2
    assert 0.0 < row["utilisation_link"] <= 1.0
    assert row["packets_measured"] == 18
    assert row["mean_packet_sojourn"] >= 1.0


def test_empty_buckets_are_not_batches():
    """Buckets without flows (fewer flows than buckets) give no (0, 0) batch, which would
    count as data in the mean's interval."""
    hist = np.zeros((4, 1, 8), np.int64)
    sums = np.zeros((4, 1))
    hist[0, 0, 2], sums[0, 0] = 3, 6.0
    hist[2, 0, 5], sums[2, 0] = 2, 9.0  # buckets 1 and 3 hold no flow
    (row,) = packet_delay_sums(hist, sums, first_bucket=0)
    assert row["batch_packet_counts"] == [3.0, 2.0]
    assert row["batch_packet_sojourn_sums"] == [6.0, 9.0]
    assert row["packets_measured"] == 5
