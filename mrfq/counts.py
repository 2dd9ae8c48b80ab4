"""Whole packets (or tasks) from a flow-size law, and their exact mean.

A flow of work x (fluid units, mean E[X] = 1 except for an un-rescaled table) is sent as

    N = 1 + ⌊x / θ⌋ packets,  θ = −ln(1 − 1/m)  (m > 1; N = 1 when m = 1),

:func:`packet_counts` (a cluster's job gets N tasks by the same rule). For x ~ Exp(1) this
is exactly geometric on {1, 2, …} with mean m (P(N > n) = P(x ≥ nθ) = (1 − 1/m)^n); for
x ≡ 1 it gives N = m exactly for integer m (m − 1 < 1/θ < m); N ≥ 1 always. Rounding,
max(1, round(m x)), would be neither geometric nor mean-preserving.

For other laws E[N] is not m E[X]: the floor removes about ½ and the 1 adds one, so
E[N] = m E[X] + O(1) and the relative difference is O(1/m). It is small for large m and
not small for small m (datamining at m = 2.5: E[N] = 1.163 m E[X]; deterministic sizes at
m = 2.5: N = 2, 0.8 m; ``benchmarks/packet_counts_bias.py``). A packet run that set its
flow rate from m E[X] would offer that factor times its nominal load, so the engines set
λ_k = ρ_k / E[N_k] with E[N_k] from :func:`mean_count`, exact:

    E[N] = 1 + Σ_{n ≥ 1} P(X ≥ nθ)      (N − 1 ≥ n  ⇔  x ≥ nθ)

summed in closed form where the law allows (exponential, hyperexponential, a CDF table's
linear segments as arithmetic series, an empirical law's rows, deterministic sizes), and
for the Pareto and lognormal laws term by term over 2^20 terms, the rest by the
Euler–Maclaurin formula (for the lognormal law the terms taken one by one are those where
P(X ≥ nθ) moves, when they are few: a narrow law at large m is a step that the formula
would smooth). Checked against term-by-term sums and Monte Carlo (tests/test_counts.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtr

from mrfq.errors import InputError
from mrfq.sizes import SizeLaw

#: terms of the lognormal law's sum taken one by one before the Euler–Maclaurin tail
DIRECT_TERMS = 1 << 20


def packet_counts(work: np.ndarray, mean_size: float) -> np.ndarray:
    """Packets per flow for works ``work`` (fluid units) and mean size m (module doc).

    N = 1 + ⌊x / θ⌋ with θ = −ln(1 − 1/m): exactly geometric with mean m for exponential
    x, N = m for x = 1 (integer m), N ≥ 1 always (capped at 2^62).
    """
    if not mean_size >= 1:
        raise InputError(f"must be >= 1 packet, got {mean_size!r}", "mean_size")
    work = np.asarray(work, dtype=np.float64)
    if mean_size == 1:
        return np.ones(work.shape, dtype=np.int64)
    theta = -math.log1p(-1.0 / mean_size)
    return 1 + np.minimum(np.floor(work / theta), 2.0 ** 62).astype(np.int64)


@functools.lru_cache(maxsize=1024)  # (a cluster model reads it per class at every use)
def mean_count(law: SizeLaw, mean_size: float) -> float:
    """E[N] of N = 1 + ⌊X/θ⌋ for X of law ``law`` and mean size m (packets per flow or
    tasks per job; module doc): exactly m for the exponential law, 1 for m = 1."""
    if not mean_size >= 1:
        raise InputError(f"must be >= 1 packet, got {mean_size!r}", "mean_size")
    if mean_size == 1:
        return 1.0
    if law.distribution == "exponential":
        return float(mean_size)
    if law.distribution == "empirical":  # the mean over the rows, drawn uniformly
        return float(np.mean(packet_counts(law.values, mean_size)))
    return 1.0 + _tail_sum(law, -math.log1p(-1.0 / mean_size))


def more_than(law: SizeLaw, mean_size: float, packets: int) -> float:
    """A lower bound on P(N > ``packets``) for N = 1 + ⌊X/θ⌋ (module doc): P(X > packets ·
    θ) (equal to it where X has no atom there); 0 for m = 1 (every N is 1)."""
    if not mean_size > 1:
        return 0.0
    theta = -math.log1p(-1.0 / mean_size)
    return float(1.0 - law.cdf(np.array([packets * theta]))[0])


def _tail_sum(law: SizeLaw, theta: float) -> float:
    """Σ_{n ≥ 1} P(X ≥ nθ) for a law other than the exponential and empirical ones."""
    d, p = law.distribution, law.params
    if d == "deterministic" or (d == "lognormal" and p["sigma"] == 0):
        return math.floor(1.0 / theta)  # X ≡ 1 (as SizeLaw.sample draws it)
    if d == "hyperexponential":
        p1, rate1, rate2 = law.hyperexponential_phases()
        # Σ_n e^{−μ nθ} = 1 / (e^{μθ} − 1), per phase
        return p1 / math.expm1(rate1 * theta) + (1.0 - p1) / math.expm1(rate2 * theta)
    if d == "pareto":
        return _pareto_sum(law, theta)
    if d == "cdf":
        return _table_sum(law.values[0], law.values[1], theta)
    if d == "lognormal":
        return _lognormal_sum(p["sigma"], theta)
    raise ValueError(f"no size law {d!r}")


def _power_sum(r: float, alpha: float, first: float, last: float = math.inf) -> float:
    """Σ_{n = first}^{last} (r/n)^α for whole numbers first ≤ n ≤ last (last may be ∞),
    r < first (every term below 1, so none overflows): the first :data:`DIRECT_TERMS`
    terms one by one (in logarithms), the rest by the Euler–Maclaurin formula with
    f(x) = (r/x)^α, f' = −α f / x and ∫_a^L f = a f(a) (1 − (L/a)^{1−α}) / (α − 1),
    written with ``expm1`` so that α → 1 keeps its digits. (ζ(α, ·) differences lost
    every digit at α = 1 + 1e-15, and r^α overflowed from α ≈ 72 at m = 20 000.)"""
    if last < first:
        return 0.0
    stop = min(last, first + DIRECT_TERMS - 1)
    n = np.arange(first, stop + 1, dtype=np.float64)
    total = float(np.exp(alpha * np.log(r / n)).sum())
    if stop >= last:
        return total
    a = stop + 1.0
    f_a = math.exp(alpha * math.log(r / a))
    if math.isinf(last):
        integral = a * f_a / (alpha - 1.0)
        end = 0.0
    else:
        integral = a * f_a * -math.expm1((1.0 - alpha) * math.log(last / a)) / (alpha - 1.0)
        f_last = math.exp(alpha * math.log(r / last))
        end = f_last / 2 - alpha * f_last / (12 * last)
    return total + integral + f_a / 2 + alpha * f_a / (12 * a) + end


def _pareto_sum(law: SizeLaw, theta: float) -> float:
    """P(X ≥ t) = 1 for t ≤ L, (L/t)^α − (L/H)^α over 1 − (L/H)^α up to H, 0 above (X is
    the law's Y / E: Y Pareto on [L, H], rescaled to mean 1): with r = L / (θ E) the
    terms past r are (r/n)^α, summed by :func:`_power_sum`."""
    alpha, low, high, scale = law.pareto_parameters()
    step = theta * scale  # n θ in the units of Y
    r = low / step
    below = math.floor(r)  # the terms n θ ≤ L, each 1
    if math.isinf(high):
        return below + _power_sum(r, alpha, below + 1)
    top = math.floor(high / step)  # the last term with n θ ≤ H
    if top <= below:
        return float(below)
    q = (low / high) ** alpha
    inside = _power_sum(r, alpha, below + 1, top) - q * (top - below)
    return below + inside / (1.0 - q)


def _table_sum(x: np.ndarray, f: np.ndarray, theta: float) -> float:
    """A table law (an atom F_0 at x_0, then F linear between points): P(X ≥ t) = 1 for
    t ≤ x_0 and 1 − F(t) on each segment (x_i, x_{i+1}], a linear function of n there, so
    each segment's terms add up as an arithmetic series."""
    total = float(math.floor(x[0] / theta))
    first = np.floor(x[:-1] / theta) + 1  # the segment's first n (n θ > x_i)
    last = np.floor(x[1:] / theta)  # and its last (n θ ≤ x_{i+1})
    count = np.maximum(last - first + 1, 0.0)
    slope = np.diff(f) / np.diff(x)
    # the terms 1 − F_i − slope (n θ − x_i) for n = first + j, j = 0 … count − 1
    start = 1.0 - f[:-1] - slope * (first * theta - x[:-1])
    return total + float(np.sum(count * start - slope * theta * count * (count - 1) / 2))


def _lognormal_sum(sigma: float, theta: float) -> float:
    """ln X ~ N(−σ²/2, σ²) (mean 1). Terms one by one, then Σ_{n ≥ K} g(n) = ∫_K^∞ g +
    g(K)/2 − g'(K)/12 for g(n) = P(X ≥ nθ), with ∫_{a}^∞ P(X ≥ t) dt = E[(X − a)⁺] =
    Φ((σ²/2 − ln a)/σ) − a Φ((−σ²/2 − ln a)/σ) and g'(K) = −θ f(Kθ). The terms one by one:
    where the bulk of ln X (μ ± 9.5σ; P below, 1 − P above it are under 1e-20) spans at
    most 2^22 terms, those (the ones before it counted as 1, the formula after it); else
    the first 2^20."""
    mu = -sigma * sigma / 2
    first = math.floor(math.exp(mu - 9.5 * sigma) / theta)  # the terms before: 1 each
    last = math.ceil(math.exp(mu + 9.5 * sigma) / theta)
    covered = last - first <= 4 * DIRECT_TERMS  # the bulk one by one, else the start
    if not covered:
        first, last = 1, DIRECT_TERMS - 1
    n = np.arange(max(first, 1), last + 1, dtype=np.float64)
    direct = max(first - 1, 0) + float(ndtr((mu - np.log(n * theta)) / sigma).sum())
    a = (last + 1) * theta
    z = (math.log(a) - mu) / sigma
    if covered and not z > 9.0:  # (θ at the bulk's resolution, m ~ 2^53: a rounds into
        return direct              # it, where the formula does not hold; the rest < 1e-20)
    survival = float(ndtr(-z))
    excess = float(ndtr(sigma - z)) - a * survival  # E[(X − a)⁺]
    density = math.exp(-z * z / 2) / (math.sqrt(2 * math.pi) * a * sigma)
    return direct + excess / theta + survival / 2 + theta * density / 12
