"""Confidence intervals from independent units (pure numpy/scipy, no mrfq imports).

The bottom of the statistics: :func:`t_interval` (Student-t interval of a mean) and
:func:`ratio_interval` (the ratio estimator Σy/Σx with its delta-method interval), used by
the flow-level simulator (:mod:`mrfq.fluid.flowsim`) and by the packet output analysis
(:mod:`mrfq.stats`, which builds batches, warm-up and per-class tables on top of them);
and :func:`histogram_quantile`, the quantile of the packet engine's delay histograms
(used by the statistics and by the explicit-flow runs of :mod:`mrfq.packet.flows`); and
:func:`relaxation_flows`, how many flows a run must span before its intervals hold.
An interval that cannot be trusted is returned flagged (NaN bounds, ``problem`` set).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent, identically distributed values.

    Returns ``(mean, low, high)`` with ``mean ± t_{n-1, (1+confidence)/2} · s / √n`` (s the
    sample standard deviation), in the units of ``values``. Non-finite values are not
    dropped silently: any of them makes all three NaN. With one value the bounds are NaN;
    with none, everything is NaN.
    """
    _check_confidence(confidence)
    values = np.asarray(values, dtype=np.float64).ravel()
    n = values.size
    if n == 0 or not np.isfinite(values).all():
        return np.nan, np.nan, np.nan
    mean = float(values.mean())
    if n < 2:
        return mean, np.nan, np.nan
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class RatioInterval:
    """A point estimate and its confidence interval.

    ``estimate`` Σy/Σx, or its bias-corrected value (``ratio`` then keeps Σy/Σx);
    ``low``/``high`` the interval (NaN when ``problem`` is not empty —
    a flagged interval never contains anything); ``units`` the independent units the
    interval rests on (t with units − 1 degrees of freedom); ``batches`` batches per
    replication after merging (0 when the units are replications); ``lag1`` the lag-1
    autocorrelation of the units' residuals (NaN for replications); ``method`` and
    ``problem`` are descriptive strings.
    """

    estimate: float
    low: float
    high: float
    units: int
    batches: int
    lag1: float
    method: str
    problem: str = ""
    #: Σy/Σx itself (NaN when not given); ``estimate`` differs from it when the ratio's
    #: bias was corrected (:func:`tin_factor`)
    ratio: float = np.nan

    @property
    def ok(self) -> bool:
        """The interval can be used: no ``problem`` flagged (a flagged one has NaN bounds)."""
        return not self.problem


def _flagged(estimate: float, units: int, batches: int, lag1: float, method: str,
             problem: str) -> RatioInterval:
    return RatioInterval(estimate, np.nan, np.nan, units, batches, lag1, method, problem)


def tin_factor(y: np.ndarray, x: np.ndarray) -> float:
    """Tin's first-order bias correction of the ratio estimator R = Σy/Σx over n
    independent units (Tin 1965; Cochran, *Sampling Techniques*, 3rd ed., §6.9): the
    factor 1 + (s_yx / (ȳ x̄) − s_x² / x̄²) / n that R is multiplied by.

    Why: R is biased by E[R]/ρ − 1 ≈ (Var x̄ / x̄² − Cov(ȳ, x̄) / (ȳ x̄)) (Jensen, 1/x̄
    convex). For γ = Σ N / Σ T at load 0.9 one run's relative spread of Σ T is 13–17%, so
    the bias is +2% to +3% (measured, VALIDATION.md): as large as the start-up transient,
    and no warm-up removes it. The correction leaves a bias of order 1/n². 1.0 (no
    correction) with fewer than 2 units or a degenerate mean."""
    y = np.asarray(y, dtype=np.float64).ravel()
    x = np.asarray(x, dtype=np.float64).ravel()
    n = y.size
    if n < 2 or not (x.mean() > 0 and y.mean() != 0):
        return 1.0
    ybar, xbar = y.mean(), x.mean()
    s_yx = float((y - ybar) @ (x - xbar)) / (n - 1)
    s_xx = float((x - xbar) @ (x - xbar)) / (n - 1)
    return 1.0 + (s_yx / (ybar * xbar) - s_xx / (xbar * xbar)) / n


def ratio_interval(y: np.ndarray, x: np.ndarray, confidence: float = 0.95, *,
                   require_positive: bool = False, correct_bias: bool = False,
                   variance_scale: float = 1.0,
                   method: str = "ratio") -> RatioInterval:
    """Ratio estimator R = Σy / Σx over independent units with a delta-method interval.

    With residuals e_i = y_i − R x_i (which sum to 0), the standard error is
    se = √(Σe² / (n(n−1))) / x̄, and the interval R ± t_{n−1,(1+confidence)/2} · se is
    symmetric about R, so it always brackets the estimate it is reported with (standard
    ratio / "batch ratio" method, e.g. Cochran, *Sampling Techniques*, §6.4; Law,
    *Simulation Modeling and Analysis*). Units: those of y/x. Fieller's interval (also
    bracketing, asymmetric) covered less on right-skewed output — M/M/1 FCFS from empty,
    20 batches, 400 seeds: ρ = 0.9 and 20 000 customers 88.7% against 90.5% here; 5 000
    customers 76.5% against 82.9% — because a run without a long busy period has both a
    low mean sojourn and a small spread, and the symmetric interval reaches further down.

    ``correct_bias``: the estimate is R times :func:`tin_factor` (the ratio's own
    first-order bias removed) and the interval is centred on it (``ratio`` keeps R).
    ``variance_scale`` multiplies the squared standard error (a variance estimate from
    units known to under-estimate it, e.g. lugsail batch means, passes its factor).

    Flagged (NaN bounds, ``problem`` set): non-finite or mismatched input, fewer than two
    units, Σx ≤ 0 (then the estimate is NaN too) and, with ``require_positive``, an
    interval reaching 0 or below (half-width ≥ estimate: it says nothing).
    """
    _check_confidence(confidence)
    y = np.asarray(y, dtype=np.float64).ravel()
    x = np.asarray(x, dtype=np.float64).ravel()
    n = int(y.size)
    if y.shape != x.shape:
        return _flagged(np.nan, n, 0, np.nan, method, "numerator and denominator differ in "
                        "length")
    if not (np.isfinite(y).all() and np.isfinite(x).all()):
        return _flagged(np.nan, n, 0, np.nan, method, "non-finite values in the data")
    if n == 0:
        return _flagged(np.nan, 0, 0, np.nan, method, "no data")
    total_x = float(x.sum())
    if not total_x > 0:
        return _flagged(np.nan, n, 0, np.nan, method, f"non-positive denominator "
                        f"(sum {total_x:g})")
    estimate = float(y.sum() / total_x)
    if n < 2:
        return _flagged(estimate, n, 0, np.nan, method, "fewer than 2 independent units")
    e = y - estimate * x
    se = float(np.sqrt(variance_scale * (e @ e) / (n * (n - 1))) / (total_x / n))
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
    ratio = estimate
    if correct_bias:
        estimate = ratio * tin_factor(y, x)
    low, high = estimate - half, estimate + half
    if require_positive and not low > 0:
        return RatioInterval(estimate, np.nan, np.nan, n, 0, np.nan, method,
                             f"interval reaches 0 (half-width {half:.3g} ≥ estimate "
                             f"{estimate:.3g})", ratio)
    return RatioInterval(estimate, low, high, n, 0, np.nan, method, "", ratio)


def histogram_quantile(counts: np.ndarray, edges: np.ndarray, q: float) -> float:
    """The q-quantile of a histogram (bin i is [edges[i], edges[i+1])), interpolated
    linearly inside its bin: off from the data's own quantile by at most that bin's width.
    NaN for an empty histogram."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if not total > 0:
        return np.nan
    cum = np.cumsum(counts)
    target = q * total
    i = min(int(np.searchsorted(cum, target, side="left")), counts.size - 1)
    while counts[i] == 0:  # the target sits on a boundary: the next non-empty bin
        i += 1
    below = cum[i] - counts[i]
    fraction = (target - below) / counts[i] if counts[i] > 0 else 0.0
    return float(edges[i] + min(max(fraction, 0.0), 1.0) * (edges[i + 1] - edges[i]))


#: batches of the γ interval of a run (lugsail batch means from twice as many halves):
#: measured at load 0.9 (VALIDATION.md, "Intervals at load 0.9"), 10 batches of one
#: 20 000-flow run still covered 88–93%, 5 covered 91–96%
LUGSAIL_BATCHES = 5


def regroup(sums: np.ndarray, groups: int) -> np.ndarray:
    """Consecutive batch sums added up into ``groups`` near-equal groups (in order)."""
    return np.array([part.sum() for part in np.array_split(sums, groups)])


def lugsail_scale(y: np.ndarray, x: np.ndarray, halves_y: np.ndarray,
                  halves_x: np.ndarray) -> float:
    """Factor by which the lugsail batch-means variance exceeds the plain one (≥ 1).

    Lugsail batch means (Vats & Flegal, "Lugsail lag windows for estimating time-average
    covariance matrices", Biometrika 2022; r = 2, c = 1/2): σ²_L = 2 σ²_BM(b) − σ²_BM(b/2),
    from the same run cut into B batches of b flows and 2B half-batches. Batch means of
    a positively correlated series under-estimate the variance by about 2Γ/b (Γ = Σ k γ_k);
    the half-batches under-estimate it twice as much, so the combination cancels that
    first-order bias — what plain batch means miss at load 0.9, where batches of 1 000
    flows are a few relaxation times long. Here on the ratio's residuals e = y − R x at
    both levels; floored at 1 (never narrower than plain batch means)."""
    def spread(a: np.ndarray, b: np.ndarray) -> float:
        r = a.sum() / b.sum()
        e = a - r * b
        return float(e @ e) * a.size / (a.size - 1)  # Var(Σ e) from a.size units
    plain = spread(y, x)
    if not plain > 0 or halves_y.size < 2 * y.size:
        return 1.0
    return max(2.0 - spread(halves_y, halves_x) / plain, 1.0)


def lugsail_ratio_interval(y: np.ndarray, x: np.ndarray, confidence: float = 0.95
                           ) -> RatioInterval:
    """Σy / Σx times Tin's factor with its delta-method interval over consecutive batch
    sums ``y``, ``x`` of one run: with at least 2 · :data:`LUGSAIL_BATCHES` batches, added
    up into that many halves and those into LUGSAIL_BATCHES batches, the variance the
    lugsail one (:func:`lugsail_scale`); otherwise over the batches as they are. The
    packet and flow-level runs' γ interval, for a run of jobs (the cluster kind): with
    10 plain batches and no bias factor, cluster runs of 20 000 jobs at load 0.9 covered
    89.3% (seeds 1–300; γ +1.7% over 1 000 seeds, a review, 2026-11-28), this 94.0%
    (VALIDATION.md)."""
    y, x = np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64)
    if y.size < 2 * LUGSAIL_BATCHES:
        return ratio_interval(y, x, confidence, correct_bias=True)
    y, x, scale = lugsail_units([y], [x])
    return ratio_interval(y, x, confidence, correct_bias=True, variance_scale=scale)


def lugsail_units(ys: Sequence[np.ndarray], xs: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """Lugsail batch means over runs' consecutive batch sums (one array per run, each of
    at least 2 · :data:`LUGSAIL_BATCHES`): every run's batches added up into that many
    halves and those into LUGSAIL_BATCHES batches; returns the batches of all runs
    (pooled) and their variance factor (:func:`lugsail_scale`)."""
    halves = [[regroup(np.asarray(a, dtype=np.float64), 2 * LUGSAIL_BATCHES) for a in arrays]
              for arrays in (ys, xs)]
    y, x = (np.concatenate([regroup(a, LUGSAIL_BATCHES) for a in arrays]) for arrays in halves)
    return y, x, lugsail_scale(y, x, np.concatenate(halves[0]), np.concatenate(halves[1]))


#: relaxation times left out from a replication's start with ``warmup = "auto"`` (and by
#: the flow-level simulator): measured on Figure 3 at load 0.9 (VALIDATION.md,
#: "Intervals at load 0.9"), leaving out 0.6 of a relaxation time (200 flows) still left
#: +1% of start-up bias in 2 000-flow replications, 1.5 (500 flows) none measurable
RELAXATIONS = 2.0


def relaxation_flows(class_loads: np.ndarray, requirements: np.ndarray,
                     flow_rates: np.ndarray | None = None) -> float:
    """Flow arrivals (all classes) in one relaxation time of the most loaded resource.

    With ρ* the load of the most loaded resource j*, the relaxation time of a queue at
    load ρ* is E[S*] / (1 − √ρ*)² (M/M/1: Morse 1955; the heavy-traffic scale of every
    work-conserving single-server queue, Abate & Whitt 1987), E[S*] the mean work a flow
    through j* brings to it. In flows of all classes that is (Λ / Λ*) · ρ* / (1 − √ρ*)²,
    Λ the flow arrival rate and Λ* that of the classes using j* — 342 at load 0.9 on the
    Figure 3 scenario, 6 at load 0.5. ``class_loads`` ρ_k (packets per time unit = flow
    rate × mean size, so the mean size cancels), ``requirements`` a_kj (K × J),
    ``flow_rates`` λ_k for Λ / Λ* when the classes' mean sizes differ (default ∝ ρ_k). A run
    started empty is still biased after a relaxation time or two: the start-up cut of
    ``warmup = "auto"`` is :data:`RELAXATIONS` of them."""
    rho = np.asarray(class_loads, dtype=np.float64)
    a = np.asarray(requirements, dtype=np.float64)
    per_resource = rho @ a
    j = int(np.argmax(per_resource))
    busiest = float(per_resource[j])
    if not 0.0 < busiest < 1.0:
        return 0.0 if busiest <= 0.0 else np.inf
    through = a[:, j] > 0
    rates = rho if flow_rates is None else np.asarray(flow_rates, dtype=np.float64)
    share = rates.sum() / rates[through].sum()  # Λ / Λ*
    return float(share * busiest / (1.0 - np.sqrt(busiest)) ** 2)
