"""The exact mean of a flow's packet count (mrfq.counts.mean_count) and what rests on it:
a packet run and a cluster run offer their nominal load whatever the size law and m.

Before mrfq.counts the flow rate was ρ_k / (m E[X]), and a packet run of datamining sizes at
m = 2.5 offered 1.163 times its load (benchmarks/packet_counts_bias.py)."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from mrfq.cluster import pooled_model, workload
from mrfq.counts import mean_count, packet_counts
from mrfq.packet.model import ArrivalStream
from mrfq.sizes import parse_size

CHOSEN = [[0.2, 0.0], [0.5, 0.3], [1.0, 0.3], [3.0, 1.0]]  # a flat segment inside
LAWS = {
    "deterministic": {"distribution": "deterministic"},
    "hyperexponential": {"distribution": "hyperexponential", "scv": 6.0},
    "lognormal": {"distribution": "lognormal", "sigma": 1.5},
    "pareto": {"distribution": "pareto", "shape": 4.0},
    "bounded pareto": {"distribution": "pareto", "shape": 1.5, "max": 40.0},
    "websearch": {"distribution": "cdf", "workload": "websearch"},
    "datamining": {"distribution": "cdf", "workload": "datamining"},
    "table with an atom": {"distribution": "cdf", "points": [[0.5, 0.4], [1.0, 0.7],
                                                             [2.0, 0.7], [4.0, 1.0]]},
    "unscaled table": {"distribution": "cdf", "points": CHOSEN, "rescale": False},
}


def _survival_at_or_above(law, t: np.ndarray) -> np.ndarray:
    """P(X ≥ t), from the law's CDF alone: 1 − F(t) where F is continuous, and the atoms
    (deterministic X ≡ 1, a table's first size x_0) counted as sizes ≥ t."""
    if law.distribution == "deterministic":
        return (t <= 1.0).astype(np.float64)
    if law.distribution == "lognormal":  # 1 − Φ without cancellation in the far tail
        s = law.params["sigma"]
        return ndtr(-(np.log(t) + s * s / 2) / s)
    survival = 1.0 - law.cdf(t)
    if law.distribution == "cdf":
        survival = np.where(t <= law.values[0][0], 1.0, survival)
    return survival


def slow_mean_count(law, m: float) -> float:
    """E[N] = Σ_{n ≥ 0} P(N > n) = 1 + Σ_{n ≥ 1} P(X ≥ nθ), term by term until the terms
    are negligible (N − 1 ≥ n exactly when x ≥ nθ)."""
    theta = -math.log(1 - 1 / m)
    total, start, chunk = 1.0, 1, 1 << 18
    while True:
        n = np.arange(start, start + chunk, dtype=np.float64)
        terms = _survival_at_or_above(law, n * theta)
        total += float(terms.sum())
        if terms[-1] < 1e-17 or start > 1 << 26:
            return total
        start += chunk


@pytest.mark.parametrize("name", sorted(LAWS))
@pytest.mark.parametrize("m", [1.5, 2.5, 7.0, 40.0])
def test_the_mean_count_is_the_sum_of_its_tail(name, m):
    law = parse_size(LAWS[name])
    assert mean_count(law, m) == pytest.approx(slow_mean_count(law, m), rel=1e-9, abs=1e-9)


def test_worked_values():
    # deterministic sizes: N = 1 + ⌊1/θ⌋, θ = −ln(1 − 1/m); at m = 2.5, 1/θ = 1.957: N = 2
    deterministic = parse_size(LAWS["deterministic"])
    assert mean_count(deterministic, 2.5) == 2.0
    assert mean_count(deterministic, 20.0) == 20.0
    exponential = parse_size(None)
    assert mean_count(exponential, 2.5) == 2.5 and mean_count(exponential, 1e6) == 1e6
    for law in LAWS.values():
        assert mean_count(parse_size(law), 1.0) == 1.0
    # a table with one segment, uniform on [1, 3]: P(X ≥ nθ) = 1 up to 1, then 1 − (nθ − 1)/2
    uniform = parse_size({"distribution": "cdf", "points": [[1.0, 0.0], [3.0, 1.0]],
                          "rescale": False})
    theta = -math.log(1 - 1 / 3.0)
    expected = 1 + sum(1.0 if n * theta <= 1 else 1 - (n * theta - 1) / 2
                       for n in range(1, math.floor(3 / theta) + 1))
    assert mean_count(uniform, 3.0) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("name", ["datamining", "lognormal", "bounded pareto", "hyperexponential"])
def test_the_mean_count_is_what_the_draws_average(name):
    """Independent draws (Monte Carlo, 10^6) against the closed forms, within 4 SE."""
    law = parse_size(LAWS[name])
    counts = packet_counts(law.sample(np.random.default_rng(11), 1_000_000), 2.5)
    assert abs(counts.mean() - mean_count(law, 2.5)) <= 4 * counts.std() / 1000


def test_an_empirical_law_averages_its_rows(tmp_path):
    (tmp_path / "s.csv").write_text("0.1\n0.7\n2.2\n")
    law = parse_size({"distribution": "empirical", "file": "s.csv", "rescale": False},
                     base_dir=tmp_path)
    assert mean_count(law, 4.0) == pytest.approx(packet_counts([0.1, 0.7, 2.2], 4.0).mean())


@pytest.mark.parametrize("name", ["datamining", "deterministic"])
def test_a_packet_run_offers_its_nominal_load(name):
    """Packets per time unit of 2^20 flows (≈ 2·10^6 dominant packet services at m = 2.5)
    against the class load 0.8, within 4 SE (the old rate ρ/(m E[X]) gave 0.930 and 0.640)."""
    law = parse_size(LAWS[name])
    stream = ArrivalStream(np.random.SeedSequence(3), np.array([0.8]), 2.5, [law])
    times, sizes = [], []
    while sum(t.size for t in times) < 1 << 20:
        t, _, n = stream.next_block()
        times.append(t), sizes.append(n)
    t, n = np.concatenate(times), np.concatenate(sizes)
    offered = n.sum() / t[-1]
    # a compound Poisson process: Var(Σ N) over time T = λ T E[N²]
    se = math.sqrt(n.size * np.mean(n.astype(np.float64) ** 2)) / t[-1]
    assert abs(offered - 0.8) <= 4 * se and se < 0.01


def test_a_cluster_with_a_task_law_offers_its_nominal_load():
    """Pooled cluster, jobs of datamining-many tasks with m = 2.5: the model's loads are
    the requested ones, and 10^6 jobs' tasks × d / C per time unit match them."""
    law = parse_size(LAWS["datamining"])
    model = pooled_model([[1.0, 0.5]], [0.6], "drf", tasks_per_resource=10, mean_tasks=2.5,
                         tasks=law)
    np.testing.assert_allclose(model.loads, [0.6], rtol=1e-14)
    arrival, _, tasks = workload(model, 1_000_000, 5)
    offered = tasks.sum() * 1.0 / 10 / arrival[-1]
    se = math.sqrt(tasks.size * np.mean(tasks.astype(np.float64) ** 2)) / 10 / arrival[-1]
    assert abs(offered - 0.6) <= 4 * se and se < 0.006


EXTREMES = [({"distribution": "pareto", "shape": 100.0}, 20000.0),
            ({"distribution": "pareto", "shape": 120.0, "max": 2.0}, 1000.0),
            ({"distribution": "pareto", "shape": 1e6}, 1e9),
            ({"distribution": "pareto", "shape": 1 + 1e-15, "max": 10.0}, 20000.0),
            ({"distribution": "pareto", "shape": 1 + 1e-12, "max": 1e100}, 1e9),
            ({"distribution": "pareto", "shape": 1.0001}, 2.0 ** 53),
            ({"distribution": "lognormal", "sigma": 8.0}, 1e6),
            ({"distribution": "lognormal", "sigma": 1e-8}, 2.0 ** 20 + 11),
            ({"distribution": "hyperexponential", "scv": 1e6}, 3.0)]


@pytest.mark.parametrize("spec, m", EXTREMES)
def test_extreme_laws_keep_the_bounds_every_law_obeys(spec, m):
    """x/θ ≤ N < 1 + x/θ for every flow, so E[X]/θ ≤ E[N] ≤ 1 + E[X]/θ whatever the law
    (a review found an OverflowError at Pareto shape 100, m = 20 000, and E[N] 0.6% off
    its bounds at shape 1 + 1e-15)."""
    law = parse_size(spec)
    theta = -math.log1p(-1 / m)
    assert law.mean == pytest.approx(1.0, rel=1e-9)
    assert law.mean / theta <= mean_count(law, m) <= 1 + law.mean / theta


def test_a_narrow_lognormal_at_large_m_is_summed_where_it_steps():
    """σ = 1e-8: X is within 1e-7 of 1, so N = 1 + ⌊1/θ⌋ for all but the flows near a
    step; term by term over the 2^20 + 100 terms around 1/θ (the Euler–Maclaurin tail
    from 2^20 gave 3.8e-7 too much)."""
    law = parse_size({"distribution": "lognormal", "sigma": 1e-8})
    m = 2.0 ** 20 + 11
    assert mean_count(law, m) == pytest.approx(slow_mean_count(law, m), rel=1e-13)


def test_the_packet_budget_counts_the_packets_a_law_makes():
    """An un-rescaled table of sizes 10^6–2·10^6 work units at m = 20 000 makes E[N] ≈
    3·10^10 packets per flow: 1 000 flows reach 3·10^13 > 2^43 packet arrivals, refused
    before any work (the budget of flows × m passed it: 2·10^7)."""
    from mrfq.errors import InputError
    from mrfq.scenario import scenario_from_dict
    raw = {"name": "unscaled", "resources": ["link"],
           "classes": [{"name": "a", "requirements": [1.0], "load_share": 1,
                        "size": {"distribution": "cdf", "rescale": False,
                                 "points": [[1e6, 0.0], [2e6, 1.0]]}}],
           "load": {"axis": "link", "values": [0.5]},
           "packet": {"policies": ["fifo"], "mean_size": 20000, "flows": 1000}}
    with pytest.raises(InputError, match="2.99992e\\+10 packets") as info:
        scenario_from_dict(raw)
    assert info.value.field == "packet.mean_size"
    raw["packet"]["flows"] = 100  # 3·10^12: within the budget
    scenario_from_dict(raw)


def test_the_warm_up_counts_flows_at_their_own_rates():
    """Λ / Λ* of the relaxation time in flows (the share of the flows that cross the
    busiest resource) from the flow rates ρ_k / E[N_k]: a class that never crosses it
    with flows five times as long arrives five times less often than its load says."""
    from mrfq.kinds.packet import start_up_flows
    from mrfq.scenario import scenario_from_dict
    from mrfq.stats import RELAXATIONS
    long = {"distribution": "cdf", "rescale": False, "points": [[4.0, 0.0], [6.0, 1.0]]}
    scenario = scenario_from_dict({
        "name": "two", "resources": ["a", "b"],
        "classes": [{"name": "x", "requirements": [1.0, 0.0], "load_share": 2},
                    {"name": "y", "requirements": [0.0, 1.0], "load_share": 1,
                     "size": long}],
        "load": {"axis": "a", "values": [0.8]},
        "packet": {"mean_size": 20, "warmup": "auto", "flows": 100000}})
    rho = scenario.class_loads(0.8)
    rates = rho / np.array([20.0, mean_count(parse_size(long), 20)])
    assert rates[1] < rates[0] / 9  # (5 m packets per flow at half the load)
    busiest = 0.8 / (1 - math.sqrt(0.8)) ** 2
    expected = RELAXATIONS * rates.sum() / rates[0] * busiest
    assert start_up_flows(scenario, 0.8) == math.ceil(expected)


@pytest.mark.parametrize("alpha", [1.0009, 1.0011, 1.0017, 2.5])
@pytest.mark.parametrize("ratio", [1 + 1e-9, 2.0, 1e6])
def test_the_bounded_pareto_moments_against_quadrature(alpha, ratio):
    """E[Y] of the Pareto law on [L, H] against ∫ y·y^(−α−1) / ∫ y^(−α−1) by quadrature
    (no cancellation); a review found 1.2e-4 off at H = L(1 + 1e-9), where 1 − (L/H)^α
    and H^(1−α) − L^(1−α) cancel, on either side of a |1 − α| < 1e-3 switch."""
    from scipy import integrate

    from mrfq.sizes import _bounded_pareto_moment
    low = (alpha - 1) / alpha
    high = low * ratio
    points = np.geomspace(low, high, 50) if ratio > 10 else None
    top = integrate.quad(lambda y: y ** -alpha, low, high, points=points, epsrel=1e-13)[0]
    bottom = integrate.quad(lambda y: y ** (-alpha - 1), low, high, points=points,
                            epsrel=1e-13)[0]
    assert _bounded_pareto_moment(alpha, low, high, 1) == pytest.approx(top / bottom,
                                                                          rel=1e-10)


def test_an_absurd_mean_size_is_one_line_not_an_overflow():
    """m = 1e308: E[N] overflows; refused by the budget, as before E[N] (a review found an
    IndexError for websearch and an OverflowError for lognormal sizes)."""
    from mrfq.errors import InputError
    from mrfq.scenario import load_scenario
    base = load_scenario("quickstart")
    for spec in ({"distribution": "cdf", "workload": "websearch"},
                 {"distribution": "lognormal", "sigma": 1.0},
                 {"distribution": "pareto", "shape": 1.5, "max": 1e6}):
        with pytest.raises(InputError, match="1e\\+308 packets") as info:
            base.with_sizes(spec).with_overrides(mean_size=1e308, flows=100)
        assert info.value.field == "mean_size"
    with pytest.raises(InputError, match="packet arrivals per replication") as info:
        base.with_sizes({"distribution": "cdf", "rescale": False,
                         "points": [[1e9, 0.0], [2e9, 1.0]]})
    assert info.value.field == "size"
