"""Flow-size laws in scenario files (``size = {...}`` per class) and in the packet engine's
arrival stream: parsing, round trip, the exponential law's bit-identical geometric
stream, and the packet counts of other laws against the law itself."""

import json
import math

import numpy as np
import pytest
from conftest import FIG3_CLASSES, make_scenario

from mrfq.errors import InputError
from mrfq.kinds.packet import packet_point
from mrfq.packet.model import ARRIVAL_BLOCK, ArrivalStream
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.sizes import parse_size
from mrfq.sweeps import Point, point_key

PARETO = {"distribution": "pareto", "shape": 1.5}


def _with_sizes(*sizes, **packet):
    classes = [dict(c) for c in FIG3_CLASSES]
    for c, size in zip(classes, sizes, strict=False):
        if size is not None:
            c["size"] = size
    return make_scenario(classes=classes, axis="link", **packet)


def test_size_table_is_parsed_and_round_trips(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sizes.csv").write_text("size\n1\n3\n")
    path = tmp_path / "s.toml"
    path.write_text(
        'resources = ["cpu", "link"]\n'
        '[[classes]]\nrequirements = [0.1, 1]\nload_share = 4\n'
        'size = {distribution = "pareto", shape = 1.5, max = 100}\n'
        '[[classes]]\nrequirements = [1, 0.1]\nload_share = 1\n'
        'size = {distribution = "empirical", file = "data/sizes.csv", rescale = false}\n'
        '[[classes]]\nrequirements = [1, 1]\nload_share = 1\n')
    scenario = load_scenario(path)
    pareto, empirical, default = scenario.size_laws
    assert pareto.distribution == "pareto" and pareto.params == {"shape": 1.5, "max": 100.0}
    # relative to the scenario's folder, not the working directory; used as is
    assert empirical.values.tolist() == [1.0, 3.0] and empirical.mean == 2.0
    assert default.distribution == "exponential" and not scenario.exponential_sizes
    stored = json.loads(json.dumps(scenario.to_dict()))  # as scenario.json holds it
    assert "size" not in stored["classes"][2]  # absent = exponential
    again = scenario_from_dict(stored)
    assert [law.key() for law in again.size_laws] == [law.key() for law in scenario.size_laws]
    assert np.array_equal(again.size_laws[1].values, empirical.values)


@pytest.mark.parametrize("size, field, problem", [
    ({"distribution": "pareto", "shape": 1}, "classes[0].size.shape", "must be > 1"),
    ({"distribution": "pareto", "shape": 0.5}, "classes[0].size.shape", "must be > 1"),
    ({"distribution": "lognormal", "sigma": -1}, "classes[0].size.sigma", "non-negative"),
    ({"distribution": "hyperexponential", "scv": 0.5}, "classes[0].size.scv", ">= 1"),
    ({"distribution": "weibull"}, "classes[0].size.distribution", "unknown distribution"),
    ({"distribution": "pareto", "shape": 2, "alpha": 2}, "classes[0].size.alpha",
     "unknown key"),
    ({"shape": 2}, "classes[0].size.distribution", "missing"),
    ("pareto", "classes[0].size", "must be a table"),
    ({"distribution": "empirical", "file": "nowhere.csv"}, "classes[0].size.file",
     "cannot read"),
])
def test_bad_size_tables_name_their_field(size, field, problem):
    with pytest.raises(InputError) as err:
        _with_sizes(size)
    assert err.value.field == field and problem in err.value.problem


def _blocks(stream, count=3):
    return [np.concatenate(p) for p in zip(*(stream.next_block() for _ in range(count)),
                                           strict=True)]


def test_exponential_law_keeps_todays_geometric_stream_bit_for_bit():
    loads, seed = np.array([0.4, 0.1, 0.2]), np.random.SeedSequence(5, spawn_key=(2,))
    today = _blocks(ArrivalStream(seed, loads, 20.0))
    explicit = _blocks(ArrivalStream(seed, loads, 20.0, [parse_size(None)] * 3))
    for a, b in zip(today, explicit, strict=True):
        assert np.array_equal(a, b)
    # and a whole packet point, with the key of a scenario without size tables
    plain = make_scenario(axis="link")
    spelled = _with_sizes(*[{"distribution": "exponential"}] * 3)
    one, two = (packet_point(s, "bmf", 0.7, 0) for s in (plain, spelled))
    one.pop("wall_s"), two.pop("wall_s")
    assert one == two
    assert point_key(plain, Point("packet", "bmf", 0.7)) == point_key(
        spelled, Point("packet", "bmf", 0.7))


def test_other_laws_change_only_their_own_class():
    """A law whose flows keep E[N] = m (deterministic sizes at integer m: N = m) leaves the
    arrivals and the other classes' sizes as they were; a law with E[N] ≠ m (Pareto at
    m = 20) changes its own class's flow rate to ρ_k / E[N] (mrfq.counts), so the
    superposed arrivals change with it."""
    loads, seed = np.array([0.4, 0.1, 0.2]), np.random.SeedSequence(8)
    base = _blocks(ArrivalStream(seed, loads, 20.0))
    deterministic = parse_size({"distribution": "deterministic"})
    laws = [deterministic, parse_size(None), deterministic]
    times, classes, sizes = _blocks(ArrivalStream(seed, loads, 20.0, laws))
    assert np.array_equal(times, base[0]) and np.array_equal(classes, base[1])
    assert np.array_equal(sizes[classes == 1], base[2][classes == 1])  # exponential class
    assert np.all(sizes[classes != 1] == 20)  # deterministic: N = m exactly
    pareto = parse_size(PARETO)
    stream = ArrivalStream(seed, loads, 20.0, [pareto, parse_size(None), deterministic])
    expected = _expected_packets(pareto, 20.0)
    assert abs(expected - 20.0) > 0.01  # (so that the rate below differs from ρ / m)
    assert stream.total_rate == pytest.approx(0.4 / expected + 0.3 / 20.0, rel=1e-9)
    # the key changes with the law (and only when a law is not exponential)
    assert len({point_key(s, Point("packet", "pf", 0.5)) for s in (
        make_scenario(axis="link"), _with_sizes(PARETO),
        _with_sizes({"distribution": "pareto", "shape": 2.5}))}) == 3


def _expected_packets(law, m):
    """E[N] for N = 1 + ⌊X/θ⌋: 1 + Σ_{n≥1} P(X ≥ nθ), from the law's CDF (summed to
    n = 10^6, the rest of a Pareto tail integrated: Σ_{n>M} c n^-α ≈ c M^(1-α)/(α-1))."""
    theta = -math.log1p(-1.0 / m)
    n = np.arange(1, 1_000_001)
    tail = 1.0 - law.cdf(n * theta)
    alpha = law.params.get("shape")
    rest = tail[-1] * n[-1] / (alpha - 1) if alpha else 0.0
    return 1.0 + tail.sum() + rest


@pytest.mark.parametrize("size", [{"distribution": "pareto", "shape": 2.5},
                                  {"distribution": "lognormal", "sigma": 1.0},
                                  {"distribution": "hyperexponential", "scv": 10}])
def test_packet_counts_of_the_stream_follow_the_law(size):
    """Class-0 sizes: mean within 4 standard errors of E[N] computed from the law's CDF
    (≈ m), the minimum as the law's support says, and the class rate λ = ρ / E[N]."""
    m, loads = 20.0, np.array([0.4, 0.1, 0.2])
    law = parse_size(size)
    stream = ArrivalStream(np.random.SeedSequence(3), loads, m,
                           [law, parse_size(None), parse_size(None)])
    times, classes, sizes = _blocks(stream, 30)
    mine = sizes[classes == 0]
    expected = _expected_packets(law, m)
    assert expected == pytest.approx(m, rel=0.03)
    assert abs(mine.mean() - expected) <= 4 * mine.std() / math.sqrt(mine.size)
    theta = -math.log1p(-1.0 / m)
    low = {"pareto": 1 + math.floor((1.5 / 2.5) / theta)}.get(law.distribution, 1)
    assert mine.min() == low
    # λ_0 = ρ_0 / E[N]: the class offers exactly its load ρ_0 (mrfq.counts)
    assert stream.total_rate == pytest.approx(loads[0] / expected + loads[1:].sum() / m,
                                              rel=1e-9)
    assert mine.size / times[-1] == pytest.approx(loads[0] / expected,
                                                  rel=4 / math.sqrt(mine.size))
    assert times.size == 30 * ARRIVAL_BLOCK


def test_unrescaled_empirical_law_lowers_the_flow_rate(tmp_path):
    (tmp_path / "s.csv").write_text("2\n4\n")  # mean 3 work units = 3 m packets
    law = parse_size({"distribution": "empirical", "file": str(tmp_path / "s.csv"),
                      "rescale": False})
    loads = np.array([0.3, 0.1])
    stream = ArrivalStream(np.random.SeedSequence(1), loads, 10.0, [law, parse_size(None)])
    theta = -math.log1p(-0.1)
    # E[N] = the mean of its rows' counts, 19 and 38 packets (≈ 3 m): λ_0 = ρ_0 / E[N]
    mean_packets = (1 + math.floor(2 / theta) + 1 + math.floor(4 / theta)) / 2
    assert mean_packets == 28.5
    assert stream.total_rate == pytest.approx(0.3 / mean_packets + 0.1 / 10, rel=1e-12)
    _, classes, sizes = _blocks(stream, 2)
    assert set(np.unique(sizes[classes == 0])) == {1 + math.floor(2 / theta),
                                                   1 + math.floor(4 / theta)}
