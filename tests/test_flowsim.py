"""Flow-level simulator: a naive pure-Python twin, determinism, and agreement with the
Markov solver, processor sharing and balanced fairness's insensitivity."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_flows
from scipy import stats as sps

from mrfq.errors import InputError
from mrfq.fluid import flowsim, service_rates
from mrfq.fluid.balanced import bf_service_rates
from mrfq.fluid.flowsim import flow_rates, flow_service_rates, simulate_flows

FIG3 = [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]
TRIANGLE = [[1, 1, 0], [0, 1, 1], [1, 0, 1]]


def fig3_loads(link_load):
    return np.array([4.0, 1.0, 1.0]) * link_load / 5.1  # resource 2 (link) at link_load


# --- the naive twin (tests/naive.py) ---------------------------------------------------

def poisson_trace(class_loads, sampler, count, seed):
    """An arrival trace drawn here, independently of the simulator's own stream."""
    rng = np.random.default_rng(seed)
    rho = np.asarray(class_loads, float)
    times = np.cumsum(rng.exponential(1 / rho.sum(), count))
    classes = rng.choice(rho.size, count, p=rho / rho.sum())
    return times, classes, sampler(rng, count)


@pytest.mark.parametrize("policy", ["drf", "pf", "bmf", "bf"])
@pytest.mark.parametrize("law", ["exponential", "pareto"])
def test_kernel_matches_naive_twin(policy, law):
    def sampler(rng, count):
        if law == "exponential":
            return rng.exponential(1.0, count)
        return (1 / 3) * (1 - rng.random(count)) ** (-1 / 1.5)  # Pareto 1.5, mean 1

    trace = poisson_trace(fig3_loads(0.8), sampler, 1500, seed=11)
    flows = 300
    run = simulate_flows(FIG3, fig3_loads(0.8), policy, arrivals=trace, flows=flows)
    twin = naive_flows(FIG3, policy, trace, flows)
    # not bit-identical: the kernel drains class virtual times, the twin every flow's
    # remaining work, so the roundings differ (observed: ~1e-15 relative)
    np.testing.assert_allclose(run.completion, twin, rtol=1e-9, atol=0)
    assert np.all(run.completion > run.arrival)


@pytest.mark.parametrize("policy", ["drf", "pf", "bf"])
def test_kernel_matches_naive_twin_three_resources_with_weights(policy):
    weights = [1.0, 2.0, 0.5]
    loads = [0.3, 0.2, 0.25]
    trace = poisson_trace(loads, lambda rng, c: rng.exponential(1.0, c), 1000, seed=5)
    run = simulate_flows(TRIANGLE, loads, policy, arrivals=trace, flows=200, weights=weights)
    twin = naive_flows(TRIANGLE, policy, trace, 200, weights=weights)
    np.testing.assert_allclose(run.completion, twin, rtol=1e-9, atol=0)


# --- determinism and the kernel's bookkeeping -------------------------------------------

PARETO = {"distribution": "pareto", "shape": 1.5}


@pytest.mark.parametrize("policy", ["drf", "bmf", "bf"])
def test_same_seed_same_run_whatever_the_chunking(policy, monkeypatch):
    loads = fig3_loads(0.9)
    base = simulate_flows(FIG3, loads, policy, PARETO, seed_seq=3, flows=3000)
    again = simulate_flows(FIG3, loads, policy, PARETO, seed_seq=3, flows=3000)
    assert np.array_equal(base.completion, again.completion)
    assert base.events == again.events
    uncached = simulate_flows(FIG3, loads, policy, PARETO, seed_seq=3, flows=3000,
                              cache=False)
    assert np.array_equal(base.completion, uncached.completion)
    # tiny chunks, heaps, cache, Φ box and arrival blocks: every resume and growth path
    # (the arrival buffer grows by doubling), same numbers
    monkeypatch.setattr(flowsim, "CHUNK_EVENTS", 7)
    monkeypatch.setattr(flowsim, "INITIAL_HEAP", 1)
    monkeypatch.setattr(flowsim, "CACHE_SLOTS", 4)
    monkeypatch.setattr(flowsim, "INITIAL_BOX", 2)
    monkeypatch.setattr(flowsim, "ARRIVAL_BLOCK", 100)
    small = simulate_flows(FIG3, loads, policy, PARETO, seed_seq=3, flows=3000)
    assert np.array_equal(base.completion, small.completion)
    other = simulate_flows(FIG3, loads, policy, PARETO, seed_seq=4, flows=3000)
    assert not np.array_equal(base.completion, other.completion)


def test_common_random_numbers_and_cache_use():
    drf = simulate_flows(FIG3, fig3_loads(0.5), "drf", seed_seq=2, flows=5000)
    pf = simulate_flows(FIG3, fig3_loads(0.5), "pf", seed_seq=2, flows=5000)
    assert np.array_equal(drf.arrival, pf.arrival) and np.array_equal(drf.size, pf.size)
    assert drf.cache_hits + drf.cache_misses == drf.events
    assert drf.cache_misses < drf.events / 10  # few distinct states at load 0.5
    # every recorded flow arrives and departs; arrivals after them also count
    assert drf.events >= 2 * 5000
    assert np.all(np.isfinite(drf.completion))


def test_sizes_per_class_and_empirical_mean(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("2\n4\n")
    laws = [None, {"distribution": "deterministic"},
            {"distribution": "empirical", "file": str(path), "rescale": False}]
    run = simulate_flows(FIG3, [0.2, 0.2, 0.3], "pf", laws, seed_seq=1, flows=4000)
    sizes_of = [run.size[run.flow_class == k] for k in range(3)]
    assert np.all(sizes_of[1] == 1.0)
    assert set(np.unique(sizes_of[2])) == {2.0, 4.0}
    # λ_k = ρ_k / E[S_k]: class 3 (mean 3) arrives at rate 0.1, class 2 at 0.2
    rate = np.array([s.size for s in sizes_of]) / run.arrival[-1]
    assert rate[2] == pytest.approx(0.1, rel=0.12) and rate[1] == pytest.approx(0.2, rel=0.1)


def test_bad_inputs():
    with pytest.raises(InputError, match="unstable"):
        simulate_flows(FIG3, [0.5, 0.1, 0.5], "pf", flows=10)
    with pytest.raises(InputError, match="unknown policy"):
        simulate_flows(FIG3, fig3_loads(0.5), "wfq", flows=10)
    with pytest.raises(InputError) as err:
        simulate_flows(FIG3, fig3_loads(0.5), "pf", flows=0)
    assert err.value.field == "flows"
    with pytest.raises(InputError) as err:
        simulate_flows(FIG3, fig3_loads(0.5), "pf", [None, None], flows=10)
    assert err.value.field == "sizes"
    with pytest.raises(InputError) as err:
        simulate_flows(FIG3, fig3_loads(0.5), "pf", {"distribution": "pareto", "shape": 1},
                       flows=10)
    assert err.value.field == "size.shape"


@pytest.mark.parametrize("field, value", [("replications", 0), ("replications", 1.5),
                                          ("seed", -1), ("seed", True), ("batches", 0),
                                          ("batches", 1), ("confidence", 1.5),
                                          ("confidence", 0.0), ("flows", 0)])
def test_bad_point_arguments_are_input_errors(field, value):
    """Each used to be accepted (replications = 0: γ NaN) or to fail deep inside with a
    bare ValueError (numpy's seed, scipy's sections, the interval's confidence)."""
    arguments = {"flows": 50, field: value}
    with pytest.raises(InputError) as err:
        flow_service_rates(FIG3, fig3_loads(0.5), "pf", **arguments)
    assert err.value.field == field


def test_flow_rates_interval_methods():
    runs = [simulate_flows([[1.0]], [0.5], "pf", seed_seq=np.random.SeedSequence(1, spawn_key=(r,)),
                           flows=2000) for r in range(10)]
    by_run = flow_rates(runs, [0.5], 1.0)
    pooled = flow_rates(runs[:3], [0.5], 1.0)
    assert by_run.ci_method == "replications" and pooled.ci_method == "batch means"
    assert by_run.ci_low[0] < by_run.gamma[0] < by_run.ci_high[0]
    assert by_run.flows_measured[0] == 10 * (2000 - 100)
    # γ = E[S]/mean sojourn from the records, independently
    T = np.concatenate([(r.completion - r.arrival)[100:] for r in runs])
    assert by_run.gamma[0] == pytest.approx(1 / T.mean(), rel=1e-12)
    # the driver keeps per-run summaries only; same runs, same numbers
    driven = flow_service_rates([[1.0]], [0.5], "pf", flows=2000, replications=10, seed=1)
    for field in ("gamma", "ci_low", "ci_high", "ratio", "ratio_low", "mean_in_progress"):
        assert getattr(driven, field) == pytest.approx(getattr(by_run, field), rel=1e-12)


def synthetic_run(sojourn, size) -> flowsim.FlowLevelRun:
    """A one-class run whose flows arrive at 0, 1, 2, … with the given sojourns and sizes."""
    arrival = np.arange(len(sojourn), dtype=np.float64)
    return flowsim.FlowLevelRun(arrival=arrival,
                                completion=arrival + np.asarray(sojourn, float),
                                flow_class=np.zeros(len(sojourn), dtype=np.int64),
                                size=np.asarray(size, float), events=2 * len(sojourn),
                                end_time=float(arrival[-1] + max(sojourn)), wall_s=0.0,
                                cache_hits=0, cache_misses=0)


def test_ratio_interval_is_the_delta_method_around_the_pooled_ratio():
    """Ten replications of two flows: nine with (Σ S, Σ T) = (2, 1), one with (2, 19).
    Pooled R = 20/28 = 5/7; residuals d = S − R T: 9/7 (nine times) and −81/7, so
    var(R) = Σd² / ((n−1) n T̄²) = (7290/49) / (90 · (14/5)²). The mean of the
    per-replication ratios (1.81) lies far above R; the interval must be centred on the
    estimate, R times Tin's factor 1 + (s_ST / (S̄ T̄) − s_T² / T̄²) / n (Cochran §6.9):
    S is 2 in every run (s_ST = 0), T̄ = 2.8, s_T² = (9 · 1.8² + 16.2²) / 9 = 32.4."""
    runs = [synthetic_run([0.5, 0.5], [1.0, 1.0]) for _ in range(9)]
    runs.append(synthetic_run([9.5, 9.5], [1.0, 1.0]))
    result = flow_rates(runs, [0.5], 1.0, warmup=0.0, confidence=0.99)
    assert result.ci_method == "replications"
    estimate = 5 / 7 * (1 - 32.4 / 2.8**2 / 10)
    assert result.ratio[0] == pytest.approx(estimate, rel=1e-12)
    se = np.sqrt((7290 / 49) / (90 * (14 / 5) ** 2))
    half = sps.t.ppf(0.995, 9) * se
    assert result.ratio_low[0] == pytest.approx(estimate - half, rel=1e-12)
    assert result.ratio_high[0] == pytest.approx(estimate + half, rel=1e-12)
    # γ = E[S] / mean T = 1 / 1.4, its interval that of ΣT/Σn = 1.4 (residuals T − 1.4 n:
    # −1.8 nine times, 16.2 once) mapped through 1/T; it reaches below 0, so γ's upper
    # bound is +∞
    assert result.gamma[0] == pytest.approx(1 / 1.4, rel=1e-12)
    t_half = sps.t.ppf(0.995, 9) * np.sqrt((9 * 1.8**2 + 16.2**2) / 90) / 2
    assert t_half > 1.4
    assert result.ci_low[0] == pytest.approx(1 / (1.4 + t_half), rel=1e-12)
    assert result.ci_high[0] == np.inf


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 12), st.sampled_from([0.5, 1.5, 3.0]))
def test_intervals_always_bracket_their_point(seed, replications, sigma):
    """Heavy-tailed (lognormal) sizes and sojourns, unequal counts per replication, both
    interval methods: every point inside its own interval."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(replications):
        n = int(rng.integers(40, 200))
        runs.append(synthetic_run(rng.lognormal(0.0, sigma, n), rng.lognormal(0.0, sigma, n)))
    result = flow_rates(runs, [0.5], 1.0, warmup=0.0, confidence=0.99)
    assert result.ratio_low[0] <= result.ratio[0] <= result.ratio_high[0]
    assert result.ci_low[0] <= result.gamma[0] <= result.ci_high[0]


# --- statistics against exact values (slow: ~1-2 s each) --------------------------------

def assert_inside(result, exact, width):
    """exact inside every class's 99% CI, and the CI not wider than ``width`` (relative)."""
    half = (result.ci_high - result.ci_low) / 2 / exact
    assert np.all(half <= width), half
    assert np.all((result.ci_low <= exact) & (exact <= result.ci_high)), (
        result.gamma, result.ci_low, result.ci_high, exact)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["drf", "pf", "bmf"])
def test_exponential_sizes_agree_with_markov_solver(policy):
    loads = fig3_loads(0.7)
    exact = service_rates(policy, FIG3, loads, tolerance=1e-6).gamma
    result = flow_service_rates(FIG3, loads, policy, flows=1_500_000, confidence=0.99,
                                seed=21)
    assert_inside(result, exact, 0.03)  # observed ≤ 0.0243 over seeds 30-39


@pytest.mark.slow
@pytest.mark.parametrize("size, width", [({"distribution": "pareto", "shape": 2.5}, 0.03),
                                         ({"distribution": "pareto", "shape": 1.5,
                                           "max": 1000}, 0.07)])
def test_single_resource_pareto_is_processor_sharing(size, width):
    # M/G/1-PS: γ = 1 − ρ whatever the law (shape 1.5 unbounded has infinite variance and
    # batch-means intervals do not cover reliably, see the report; bounded it has all moments)
    result = flow_service_rates([[1.0], [1.0]], [0.5, 0.2], "drf", size, flows=1_500_000,
                                confidence=0.99, seed=8)
    assert_inside(result, np.array([0.3, 0.3]), width)  # observed ≤ 0.024 and ≤ 0.057


@pytest.mark.slow
@pytest.mark.parametrize("size, width", [({"distribution": "deterministic"}, 0.02),
                                         ({"distribution": "hyperexponential", "scv": 10},
                                          0.05)])
def test_balanced_fairness_is_insensitive(size, width):
    loads = fig3_loads(0.7)
    exact = bf_service_rates(FIG3, loads, tolerance=1e-6).gamma
    result = flow_service_rates(FIG3, loads, "bf", size, flows=2_000_000, confidence=0.99,
                                seed=4)
    assert_inside(result, exact, width)  # observed ≤ 0.011 and ≤ 0.037


@pytest.mark.slow
@pytest.mark.parametrize("requirements, loads", [
    (FIG3, fig3_loads(0.5)),                          # Figure 2's classes (unbalanced)
    (FIG3, np.full(3, 0.8 / 2.1))])                   # Figure 1's (balanced), max load 0.8
def test_balanced_fairness_is_insensitive_to_pareto_sizes(requirements, loads):
    """The small version of benchmarks/flowsim_bars.py's BF part (two scenarios × three
    loads × four laws there, recorded in BENCHMARKS.md)."""
    exact = bf_service_rates(requirements, loads, tolerance=1e-6).gamma
    result = flow_service_rates(requirements, loads, "bf",
                                {"distribution": "pareto", "shape": 2.5}, flows=200_000,
                                replications=10, confidence=0.99, seed=3)
    assert_inside(result, exact, 0.03)  # observed ≤ 0.0073 and ≤ 0.0283


def test_arrival_buffer_grows_without_losing_arrivals():
    buffer = flowsim._ArrivalBuffer(3)
    for start in range(0, 20, 4):
        block = np.arange(start, start + 4)
        buffer.append(block * 1.0, block, block * 2.0)
    assert buffer.count == 20 and buffer.time.size >= 20
    assert np.array_equal(buffer.time[:20], np.arange(20.0))
    assert np.array_equal(buffer.cls[:20], np.arange(20))
    assert np.array_equal(buffer.work[:20], 2.0 * np.arange(20))


@pytest.mark.parametrize("policy", ["pf", "bf"])
def test_idle_classes_get_no_flows(policy):
    loads = [0.4, 0.0, 0.1, 0.0]
    a = FIG3 + [[1.0, 0.5]]
    run = simulate_flows(a, loads, policy, seed_seq=6, flows=3000)
    assert set(np.unique(run.flow_class)) == {0, 2}
    rates = flow_rates([run], loads, 1.0)
    assert np.isnan(rates.gamma[1]) and rates.flows_measured[3] == 0


def test_exact_ties_follow_the_documented_order():
    # J = 1, unit works: flow 0 leaves at t = 1 exactly when flow 1 arrives (departure
    # first); flows 2 and 3 arrive together at t = 5 with equal finish tags and leave
    # together at t = 7 (lower arrival index first; the second at a zero-length step)
    trace = (np.array([0.0, 1.0, 5.0, 5.0, 100.0]), np.zeros(5, int), np.ones(5))
    run = simulate_flows([[1.0]], [0.5], "pf", arrivals=trace, flows=4)
    assert run.completion.tolist() == [1.0, 2.0, 7.0, 7.0]
    assert run.events == 8


def _seeds_at_load(load: float, flows: int, replications: int, seeds: range) -> np.ndarray:
    """(seeds × 2 classes × (ratio, low, high)) of one resource shared by PF (processor
    sharing for any policy), exact γ = 1 − ρ for every class."""
    out = []
    for seed in seeds:
        r = flow_service_rates([[1.0], [1.0]], [0.75 * load, 0.25 * load], "pf",
                               flows=flows, replications=replications, seed=seed)
        out.append(np.c_[r.ratio, r.ratio_low, r.ratio_high])
    return np.array(out)


@pytest.mark.slow
def test_short_runs_at_load_0_9_are_not_biased_high_and_their_intervals_cover():
    """At load 0.9 a review found the flow-level γ +4.5% high over 10 replications of
    2 000 flows (a run starts empty and the fixed 5% warm-up is 100 flows, a third of a
    relaxation time) and one 20 000-flow run's intervals covering 88% (20 plain batches
    of three relaxation times each, correlated; and the ratio's own +1.8%). With the
    packet side's start-up cut (2 relaxation times, 684 flows), Tin's factor and lugsail
    batches: bias within 1%, coverage 90–94% (300 to 1 000 seeds, measured). Here 400
    and 300 seeds: the mean over seeds within 2.5% of 1 − ρ (the old +4.5% is 3 standard errors
    out), the 20 000-flow intervals covering at least 90% of 600 (the old 88.5%), no
    more than 1.3 times as wide as the seeds' own spread says."""
    exact = 0.1
    short = _seeds_at_load(0.9, 2000, 10, range(1000, 1400))
    assert abs(short[:, :, 0].mean() / exact - 1) < 0.025
    one = _seeds_at_load(0.9, 20_000, 1, range(2000, 2300))
    covered = (one[:, :, 1] <= exact) & (exact <= one[:, :, 2])
    assert covered.mean() >= 0.90
    half = np.median((one[:, :, 2] - one[:, :, 1]) / 2, axis=0)
    assert np.all(half <= 1.3 * 1.96 * one[:, :, 0].std(axis=0, ddof=1))


def test_runs_too_short_for_their_interval_warn_and_bad_arguments_do_not():
    """At load 0.99 a relaxation time is ~39 600 flows: 500 flows are all start-up, and
    the API says so (a sweep says it in ci_warning, so its call passes warn=False); an
    argument refused raises without a warning first."""
    import warnings

    with pytest.warns(RuntimeWarning, match="start-up cut .* takes more than half"):
        flow_service_rates([[1.0]], [0.99], "pf", flows=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flow_service_rates([[1.0]], [0.99], "pf", flows=500, warn=False)
        flow_service_rates([[1.0]], [0.5], "pf", flows=20_000)
        with pytest.raises(InputError):
            flow_service_rates([[1.0]], [0.5], "pf", flows=0)
