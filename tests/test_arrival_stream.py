"""ArrivalStream: Poisson flow arrivals of the superposed classes, geometric sizes.

n = 25 blocks of arrivals (102 400 flows) from one seed. Every bound is four standard
deviations of the statistic under the distribution the stream should have (so a correct
stream fails one check with probability about 6·10^-5; the seed is fixed anyway), and a
wrong parameter of the size of the ones tried on purpose (rates not divided by m, the
class choice off by one, mean m + 1) is many deviations away.
"""

import math

import numpy as np
import pytest

from mrfq.packet.model import ARRIVAL_BLOCK, ArrivalStream

LOADS = np.array([0.4, 0.1, 0.2])  # ρ_k
MEAN_SIZE = 20.0                   # m
BLOCKS = 25
SIGMAS = 4.0


def _draw(loads=LOADS, mean_size=MEAN_SIZE, seed=7, blocks=BLOCKS):
    stream = ArrivalStream(np.random.SeedSequence(seed), loads, mean_size)
    parts = [stream.next_block() for _ in range(blocks)]
    return stream, tuple(np.concatenate(p) for p in zip(*parts, strict=True))


def test_total_rate_and_exponential_gaps():
    """Flows arrive at Λ = Σ_k ρ_k / m. The n-th arrival time is a sum of n Exp(Λ) gaps:
    mean n/Λ, sd √n/Λ. The gaps' squared coefficient of variation is 1 (Poisson); its
    estimate s²Λ² has sd ≈ √(8/n) (fourth central moment of Exp(1) is 9)."""
    stream, (times, _, _) = _draw()
    n = times.shape[0]
    rate = LOADS.sum() / MEAN_SIZE
    assert stream.total_rate == pytest.approx(rate, rel=1e-12)
    assert np.all(np.diff(times) >= 0) and times[0] > 0
    assert abs(times[-1] * rate / n - 1) <= SIGMAS / math.sqrt(n)
    gaps = np.diff(np.concatenate([[0.0], times]))
    assert abs(gaps.var() * rate**2 - 1) <= SIGMAS * math.sqrt(8 / n)


def test_class_mix_and_per_class_rates():
    """Each arrival is of class k with probability p_k = ρ_k / Σρ, independently: the
    count is Binomial(n, p_k). Class k alone is then Poisson with rate ρ_k / m: its count
    up to the last arrival time T matches λ_k T within the binomial sd plus that of λ_k T
    (ΛT has sd √n, so λ_k T = p_k ΛT has sd p_k √n)."""
    _, (times, classes, _) = _draw()
    n = times.shape[0]
    p = LOADS / LOADS.sum()
    counts = np.bincount(classes, minlength=len(LOADS))
    assert counts.sum() == n and set(np.unique(classes)) == {0, 1, 2}
    for k in range(len(LOADS)):
        assert abs(counts[k] - n * p[k]) <= SIGMAS * math.sqrt(n * p[k] * (1 - p[k])), k
        spread = math.sqrt(n * p[k] * (1 - p[k])) + p[k] * math.sqrt(n)
        assert abs(counts[k] - LOADS[k] / MEAN_SIZE * times[-1]) <= SIGMAS * spread, k


def test_geometric_sizes_of_mean_m():
    """Sizes N ≥ 1 geometric with p = 1/m: mean m, variance (1 − p)/p² = m(m − 1), so the
    sample mean has sd √(m(m − 1)/n); P(N = 1) = p, a Binomial(n, p) count of ones."""
    _, (_, _, sizes) = _draw()
    n = sizes.shape[0]
    p = 1 / MEAN_SIZE
    assert sizes.dtype == np.int64 and sizes.min() == 1
    assert abs(sizes.mean() - MEAN_SIZE) <= SIGMAS * math.sqrt(MEAN_SIZE * (MEAN_SIZE - 1) / n)
    ones = int((sizes == 1).sum())
    assert abs(ones - n * p) <= SIGMAS * math.sqrt(n * p * (1 - p))


def test_single_packet_flows():
    """m = 1: every flow has exactly one packet."""
    _, (_, _, sizes) = _draw(mean_size=1.0, blocks=1)
    assert np.all(sizes == 1)


def test_stream_depends_only_on_the_seed_and_loads_share_the_draws():
    """Blocks are a function of the seed (the seed sequence is not consumed), and scaling
    every load by 2 halves every arrival time exactly with the same classes and sizes
    (common random numbers across loads)."""
    seed = np.random.SeedSequence(3)
    one = ArrivalStream(seed, LOADS, MEAN_SIZE)
    two = ArrivalStream(seed, LOADS, MEAN_SIZE)
    double = ArrivalStream(seed, 2 * LOADS, MEAN_SIZE)
    for _ in range(2):
        a, b, c = one.next_block(), two.next_block(), double.next_block()
        assert a[0].shape == (ARRIVAL_BLOCK,)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(c[0], a[0] / 2)
        np.testing.assert_array_equal(c[1], a[1])
        np.testing.assert_array_equal(c[2], a[2])
    other = ArrivalStream(np.random.SeedSequence(4), LOADS, MEAN_SIZE).next_block()
    assert not np.array_equal(other[0], ArrivalStream(seed, LOADS, MEAN_SIZE).next_block()[0])
