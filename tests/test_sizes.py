"""Flow-size laws: moments, samples against the law (CLT and Kolmogorov–Smirnov bounds),
the packet-count rule, and the validation errors."""

import math

import numpy as np
import pytest
from scipy import integrate

from mrfq.counts import packet_counts
from mrfq.errors import InputError
from mrfq.sizes import parse_size

N = 200_000
Z = 4.4  # two-sided normal quantile for ~1e-5: a fixed seed, so a failure is a real bug
KS = 1.95  # Kolmogorov–Smirnov critical value ×√n at level 0.001

LAWS = [
    {"distribution": "exponential"},
    {"distribution": "deterministic"},
    {"distribution": "hyperexponential", "scv": 4},
    {"distribution": "hyperexponential", "scv": 10},
    {"distribution": "lognormal", "sigma": 0.8},
    {"distribution": "pareto", "shape": 4.5},
    {"distribution": "pareto", "shape": 2.5},
    {"distribution": "pareto", "shape": 1.5},
    {"distribution": "pareto", "shape": 1.5, "max": 100},
    {"distribution": "pareto", "shape": 2.0, "max": 50},  # r = α in the moment formula
]


@pytest.mark.parametrize("spec", LAWS, ids=lambda s: "-".join(map(str, s.values())))
def test_samples_follow_the_law(spec):
    law = parse_size(spec)
    assert law.mean == pytest.approx(1.0, rel=1e-12)
    x = law.sample(np.random.default_rng(7), N)
    assert np.all(x > 0)
    m1, m2, m3, m4 = (law.raw_moment(r) for r in (1, 2, 3, 4))
    if math.isfinite(m2):  # CLT for the sample mean
        assert abs(x.mean() - m1) <= Z * math.sqrt((m2 - m1 ** 2) / N)
    if math.isfinite(m4):  # CLT for the sample second moment (hence the SCV)
        assert abs((x ** 2).mean() - m2) <= Z * math.sqrt((m4 - m2 ** 2) / N)
    if spec["distribution"] != "deterministic":  # Kolmogorov–Smirnov, distribution-free
        xs = np.sort(x)
        F = law.cdf(xs)
        upper = np.arange(1, N + 1) / N - F
        lower = F - np.arange(N) / N
        assert max(upper.max(), lower.max()) <= KS / math.sqrt(N)


@pytest.mark.parametrize("spec", LAWS, ids=lambda s: "-".join(map(str, s.values())))
def test_moments_agree_with_the_cdf(spec):
    # E[X] = ∫ (1 − F), E[X²] = ∫ 2x (1 − F): the moment formulas against the CDF formulas
    law = parse_size(spec)
    if spec["distribution"] == "deterministic":
        assert law.scv == 0
        return
    upper = np.inf if spec.get("max") is None else 200.0

    def survival(x, power):
        return power * x ** (power - 1) * (1.0 - law.cdf(np.array([x]))[0])

    for power in (1, 2):
        if math.isinf(law.raw_moment(power)):
            continue
        value = sum(integrate.quad(survival, lo, hi, args=(power,), limit=400)[0]
                    for lo, hi in ((0, 1), (1, upper)))  # Pareto's kink is below 1
        assert value == pytest.approx(law.raw_moment(power), rel=1e-6)


def test_scv_formulas():
    assert parse_size({"distribution": "hyperexponential", "scv": 10}).scv == pytest.approx(10)
    assert parse_size({"distribution": "hyperexponential", "scv": 1}).scv == pytest.approx(1)
    assert parse_size({"distribution": "lognormal", "sigma": 1}).scv == pytest.approx(
        math.e - 1)
    assert parse_size({"distribution": "pareto", "shape": 3}).scv == pytest.approx(1 / 3)
    assert parse_size({"distribution": "pareto", "shape": 1.5}).scv == math.inf
    assert parse_size(None).scv == pytest.approx(1)


def test_sampling_is_deterministic_and_blockwise_consistent():
    for spec in LAWS:
        law = parse_size(spec)
        a = law.sample(np.random.default_rng(3), 1000)
        b = law.sample(np.random.default_rng(3), 1000)
        assert np.array_equal(a, b)
        rng = np.random.default_rng(3)
        pieces = np.concatenate([law.sample(rng, 7), law.sample(rng, 1), law.sample(rng, 992)])
        assert np.array_equal(a, pieces), spec


def test_empirical_law(tmp_path):
    path = tmp_path / "sizes.csv"
    path.write_text("bytes,comment\n# a comment\n2,a\n\n6,b\n4,c\n")
    law = parse_size({"distribution": "empirical", "file": "sizes.csv"}, base_dir=tmp_path)
    assert law.mean == pytest.approx(1.0)
    assert sorted(set(law.sample(np.random.default_rng(1), 100))) == pytest.approx(
        [0.5, 1.0, 1.5])
    raw = parse_size({"distribution": "empirical", "file": str(path), "rescale": False})
    assert raw.mean == pytest.approx(4.0)
    assert raw.scv == pytest.approx(np.var([2, 6, 4]) / 16)
    assert law.key()["sha256"] == raw.key()["sha256"]  # keyed by content, not path
    x = raw.sample(np.random.default_rng(2), N)
    assert abs(x.mean() - 4.0) <= Z * math.sqrt(np.var([2, 6, 4]) / N)


BAD = [
    ({"distribution": "pareto", "shape": 1.0}, "size.shape", "> 1"),
    ({"distribution": "pareto", "shape": 0.5}, "size.shape", "> 1"),
    ({"distribution": "pareto"}, "size.shape", "missing"),
    ({"distribution": "pareto", "shape": "x"}, "size.shape", "number"),
    ({"distribution": "pareto", "shape": 2, "max": 0.4}, "size.max", "minimum"),
    ({"distribution": "pareto", "shape": 2, "max": -1}, "size.max", "positive"),
    ({"distribution": "lognormal", "sigma": -0.1}, "size.sigma", "non-negative"),
    ({"distribution": "lognormal", "sigma": float("nan")}, "size.sigma", "finite"),
    ({"distribution": "hyperexponential", "scv": 0.5}, "size.scv", ">= 1"),
    ({"distribution": "hyperexponential"}, "size.scv", "missing"),
    ({"distribution": "gamma", "shape": 2}, "size.distribution", "unknown"),
    ({"shape": 2}, "size.distribution", "missing"),
    ({"distribution": "exponential", "mean": 2}, "size.mean", "unknown key"),
    ({"distribution": "deterministic", "scv": 2}, "size.scv", "unknown key"),
    ({"distribution": "empirical", "file": "sizes.csv", "rescale": "yes"}, "size.rescale",
     "true or false"),
    ({"distribution": "empirical"}, "size.file", "missing"),
    ("pareto", "size", "table"),
]


@pytest.mark.parametrize("spec, field, problem", BAD)
def test_bad_parameters_are_rejected_with_their_field(spec, field, problem):
    with pytest.raises(InputError, match=problem) as err:
        parse_size(spec, source="s.toml")
    assert err.value.field == field
    assert err.value.source == "s.toml"


@pytest.mark.parametrize("content, problem", [
    ("", "no sizes"),
    ("size\n", "no sizes"),
    ("1\n2\nthree\n", "line 3: not a number"),
    ("1\n-2\n", "positive"),
    ("1\n0\n", "positive"),
    ("1\ninf\n", "positive and finite"),
])
def test_bad_empirical_files(tmp_path, content, problem):
    (tmp_path / "f.csv").write_text(content)
    spec = {"distribution": "empirical", "file": "f.csv"}
    with pytest.raises(InputError, match=problem) as err:
        parse_size(spec, "classes[1].size", "s.toml", base_dir=tmp_path)
    assert err.value.field == "classes[1].size.file"


def test_missing_empirical_file(tmp_path):
    with pytest.raises(InputError, match="cannot read") as err:
        parse_size({"distribution": "empirical", "file": "nope.csv"}, base_dir=tmp_path)
    assert err.value.field == "size.file"


@pytest.mark.parametrize("m", [2, 7, 20000])
def test_exponential_work_gives_geometric_packets(m):
    # N = 1 + ⌊x/θ⌋: P(N > n) = P(x ≥ nθ) = (1 − 1/m)^n exactly, at every threshold
    theta = -math.log1p(-1 / m)
    for n in (0, 1, 5, 3 * m):
        edge = n * theta
        below, above = np.nextafter(edge, 0), np.nextafter(edge, np.inf)
        assert packet_counts([below], m)[0] == max(n, 1)
        assert packet_counts([above], m)[0] == n + 1
        assert math.exp(-edge) == pytest.approx((1 - 1 / m) ** n, rel=1e-9)
    x = parse_size(None).sample(np.random.default_rng(5), N)
    counts = packet_counts(x, m)
    sd = math.sqrt(m * (m - 1))  # geometric on {1, 2, …} with mean m
    assert abs(counts.mean() - m) <= Z * sd / math.sqrt(N)
    assert abs((counts == 1).mean() - 1 / m) <= Z * math.sqrt((1 / m) * (1 - 1 / m) / N)


def test_packet_counts_of_other_laws():
    assert np.all(packet_counts(np.ones(5), 20000) == 20000)
    assert np.all(packet_counts(np.ones(5), 2) == 2)
    assert np.all(packet_counts([1e-9, 0.3, 7.0], 1) == 1)
    assert packet_counts([1e-9], 1000)[0] == 1  # at least one packet
    law = parse_size({"distribution": "pareto", "shape": 2.5})
    x = law.sample(np.random.default_rng(9), N)
    m = 500
    counts = packet_counts(x, m)
    sd = m * math.sqrt(law.scv)
    assert abs(counts.mean() - m) <= Z * sd / math.sqrt(N) + 1  # mean kept to O(1/m)
    with pytest.raises(InputError):
        packet_counts([1.0], 0.5)
