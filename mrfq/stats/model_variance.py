"""γ intervals whose variance comes from the fluid model (issue 25).

At high load a run's own batch means (or replications) estimate the variance of γ̂_k
from the busy periods the run happened to have: a run without a long busy period of the
bottleneck has both a high γ̂_k and a small spread, and its interval misses from above
(VALIDATION.md, "Intervals at load 0.9": 89–93.5% coverage, the misses lopsided, the
batch half-width correlated −0.2 to −0.65 with γ̂_k). The Markov demand model knows the
spread a run of this length has on average: Var(γ̂_k) ≈ γ_k² v_k / n_k with n_k the
measured class-k flows and v_k from the Poisson equation of its generator
(:mod:`mrfq.fluid.markov_variance`). With that variance the interval's width no longer
depends on the run's luck, and it is a normal interval (the variance is known, not
estimated):

    γ̂_k ± z_{(1+confidence)/2} · γ_k^fluid · √(v_k / n_k).

The scale is the fluid γ_k, not γ̂_k: scaling by the estimate would bring back the
correlation that made the misses lopsided (measured: 90.0% for DRFQ's class 2 at 0.9
with γ̂_k, 94.0% with γ_k^fluid). The run's own interval is kept beside it
(``ci_low_data``, ``ci_high_data``), and ``variance_ratio`` is its variance over the
model's: a ratio well above 1 says the packet system varies more than the fluid model
(a packet effect the model does not have).

The model's variance is used only where the run does not contradict it: a run's own
variance estimate s² over u units is σ² χ²_{u−1}/(u − 1) when σ² is the model's (over
lugsail batches, the heavier-tailed law of :func:`mrfq.stats.runlength.
variance_ratio_cdf`), so a ``variance_ratio`` above the upper :data:`HIGH_TAIL` of that
law, or below its lower :data:`LOW_TAIL` (with one run's 5 lugsail batches above 7.3 or
below 0.00071; with 10 replications above 3.3 or below 0.026), says the model does not
describe this packet system — a round-trip time far above a flow's packet times makes a
window-limited class's γ̂ vary 4 000 times less than the fluid model's, and the model's
interval was then 60 times too wide — and the run's own interval is kept (``ci_method``
that of the run's). The two tails differ because the two mistakes do: a false rejection
on the high side gives a wider interval (the run's own), on the low side a narrower one
that then misses; and the precision rule tests every prefix of its replications, so a
low tail of 0.05% (the high side's) switched 8 of 30 points at load 0.9 to a lucky
prefix's narrow interval (a review, 2026-11-28), where 10⁻⁶ per look keeps the chance
over a budget of 1 000 looks below 10⁻³. No committed study nor ``fig3_quick`` (its
ratios 0.056–3.4 with 5 batches) has a point outside.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused
from scipy import optimize

from mrfq.intervals import LUGSAIL_BATCHES
from mrfq.stats.estimators import MIN_REPLICATIONS_FOR_T
from mrfq.stats.runlength import interval_factor, variance_ratio_cdf

#: ``ci_method`` of an interval whose variance is the fluid model's
FLUID_VARIANCE = "fluid-variance"
#: the start of the data interval's problem that the model's interval does not share
#: (a half-width larger than the estimate says the data's spread is large, which the
#: model's variance replaces); every other problem (a run too short for the start-up cut,
#: too few flows) withholds the interval as before
_DATA_ONLY_PROBLEM = "interval reaches 0"
#: the probability, when the model's variance is right, that a run's own variance over
#: the model's lies above the band (module doc): the model rejected for a wider interval
HIGH_TAIL = 0.0005
#: … and below it, for a narrower interval: a false rejection costs coverage, and the
#: precision rule looks after every replication (module doc)
LOW_TAIL = 1e-6
#: the largest variance ratio :func:`ratio_band` searches (its law's cdf is 1 there)
_BAND_SEARCH_TOP = 1e3


def consistent_ratio(ratio: float, units: int, lugsail: bool = False) -> bool:
    """Whether a run's own variance over the model's (``variance_ratio``), estimated over
    ``units`` independent units, lies inside :func:`ratio_band` of its law when the
    model's variance is right: χ²_{u−1}/(u − 1), or with ``lugsail`` batches (the
    batch-ratio intervals) the lugsail estimate's law, whose upper tail is heavier
    (:func:`mrfq.stats.runlength.variance_ratio_cdf`)."""
    low, high = ratio_band(units, lugsail)
    return bool(low <= ratio <= high)


@functools.lru_cache(maxsize=64)
def ratio_band(units: int, lugsail: bool) -> tuple[float, float]:
    """The :data:`LOW_TAIL` and 1 − :data:`HIGH_TAIL` quantiles of a run's variance over
    the model's when the model's is right (module doc)."""
    if not lugsail:  # χ²_{u−1}/(u − 1): its quantiles directly (the advisor asks often)
        dof = units - 1
        return tuple(float(scipy.stats.chi2.ppf(p, dof) / dof) for p in (LOW_TAIL, 1 - HIGH_TAIL))
    return tuple(float(optimize.brentq(lambda x, p=p: variance_ratio_cdf(
        x, units, lugsail) - p, 1e-30, _BAND_SEARCH_TOP, xtol=1e-15, rtol=1e-12))
        for p in (LOW_TAIL, 1 - HIGH_TAIL))


def with_fluid_variance(combined: pd.DataFrame, fluid_gamma: np.ndarray,
                        flow_variance: np.ndarray, confidence: float = 0.95
                        ) -> pd.DataFrame:
    """The per-class table of :func:`mrfq.stats.combine_replications` with the γ interval
    rebuilt on the fluid model's variance (module doc): ``ci_low``/``ci_high`` = γ̂_k ±
    z · γ_k^fluid √(v_k / n_k) (n_k = ``flows_measured``), ``ci_method``
    :data:`FLUID_VARIANCE`, the run's own interval in ``ci_low_data``/``ci_high_data``
    and ``variance_ratio`` (its variance over the model's: (half-width / t)² against
    (γ_k^fluid)² v_k / n_k). A class keeps the run's own interval where v_k or
    γ_k^fluid is not a positive finite number (``variance_ratio`` NaN) or where its own
    variance contradicts the model's (:func:`consistent_ratio`), and is withheld where
    the run's interval was withheld for any reason but :data:`_DATA_ONLY_PROBLEM` or
    where the model's interval would reach 0 (the run is too short for any interval,
    its own narrower one included).
    ``fluid_gamma`` and ``flow_variance``: one per row of ``combined``, in its order."""
    out = combined.copy()
    out["ci_low_data"] = out["ci_low"]
    out["ci_high_data"] = out["ci_high"]
    out["variance_ratio"] = np.nan
    out["ci_problem"] = out["ci_problem"].astype(object)  # "" where a table read back has NaN
    z = float(scipy.stats.norm.ppf(0.5 + confidence / 2))
    for i in range(len(out)):
        gamma, v = float(fluid_gamma[i]), float(flow_variance[i])
        flows = float(out["flows_measured"].iloc[i])
        if not (np.isfinite(gamma) and gamma > 0 and np.isfinite(v) and v > 0 and flows > 0):
            continue
        problem = out["ci_problem"].iloc[i]
        problem = problem if isinstance(problem, str) else ""
        if problem and not problem.startswith(_DATA_ONLY_PROBLEM):
            continue
        sd = gamma * np.sqrt(v / flows)
        estimate = float(out["gamma"].iloc[i])
        units = int(out["ci_units"].iloc[i])
        if not problem and units >= 2:
            t = float(scipy.stats.t.ppf(0.5 + confidence / 2, units - 1))
            data_sd = (float(out["ci_high"].iloc[i]) - estimate) / t
            ratio = (data_sd / sd) ** 2
            out.iloc[i, out.columns.get_loc("variance_ratio")] = ratio
            lugsail = out["ci_method"].iloc[i] == "batch-ratio"
            if not consistent_ratio(ratio, units, lugsail):
                continue  # the model is not this system's: the run's own interval stands
        if not estimate - z * sd > 0:  # the model's interval says nothing either
            # and the run's own, narrower one would claim what the model says it cannot
            # know (a review: 60 flows failed validation on a run's interval 11 times
            # narrower than the model's): withheld, run too short
            out.iloc[i, out.columns.get_loc("ci_low")] = np.nan
            out.iloc[i, out.columns.get_loc("ci_high")] = np.nan
            out.iloc[i, out.columns.get_loc("ci_problem")] = problem or (
                f"{_DATA_ONLY_PROBLEM} under the fluid model's variance (half-width "
                f"{z * sd:.3g} ≥ estimate {estimate:.3g}): run too short")
            continue
        out.iloc[i, out.columns.get_loc("ci_low")] = estimate - z * sd
        out.iloc[i, out.columns.get_loc("ci_high")] = estimate + z * sd
        out.iloc[i, out.columns.get_loc("ci_method")] = FLUID_VARIANCE
        out.iloc[i, out.columns.get_loc("ci_problem")] = ""
    return out


def model_kept_probability(ratio: float, units: int, lugsail: bool = False) -> float:
    """The probability that a run keeps the model's interval (:func:`consistent_ratio`)
    when its own variance over the model's is ``ratio`` in truth: its estimate is
    ``ratio`` · X, X of :func:`mrfq.stats.runlength.variance_ratio_cdf`'s law over
    ``units`` (``lugsail``: one run's batches), kept inside :func:`ratio_band`. 1 for a
    ratio that is not a number (nothing contradicts the model), 0 for a ratio of 0 or
    infinity."""
    if np.isnan(ratio):
        return 1.0
    if ratio <= 0 or np.isinf(ratio):  # (no own variance; or infinitely above the model's)
        return 0.0
    low, high = ratio_band(units, lugsail)

    def cdf(x: float) -> float:  # (1 beyond the range ratio_band searches: the lugsail
        # law's quadrature over [0, dof x] loses its narrow peak for x far beyond it)
        return 1.0 if x >= _BAND_SEARCH_TOP else variance_ratio_cdf(x, units, lugsail)
    return float(cdf(high / ratio) - cdf(low / ratio))


#: the most replications :func:`rule_replications` looks at (a need beyond is "more")
RULE_HORIZON = 10**9


def replication_units(n: int) -> tuple[int, bool]:
    """The units of the γ interval over n replications: t over them from
    :data:`MIN_REPLICATIONS_FOR_T` on, else over their pooled lugsail batches
    (:func:`mrfq.stats.combine_replications`; ``lugsail`` True)."""
    return (n, False) if n >= MIN_REPLICATIONS_FOR_T else (LUGSAIL_BATCHES * n, True)


def _least(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The least n in [low, high] at which ``holds``, false and then true as n grows, is
    true (bisection); high + 1 when it is not true at high."""
    if holds(low):
        return low
    if not holds(high):
        return high + 1
    while high - low > 1:  # false at low, true at high
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


class RuleClass:
    """One class under the precision rule over replications with the fluid model's
    variance (:func:`mrfq.kinds.replications.fast_reported_half_widths`, and
    :func:`mrfq.kinds.replications.reported_half_widths` below 10): with m measured flows
    per replication and true relative variances per measured flow ``model`` (of the
    model's interval, (γ^fluid/γ)² v_k / p_k; NaN: none) and ``own`` (the runs' own,
    σ²_rel), after n replications the point reports the model's half-width z √(model /
    (n m)) while the runs' own variance over the model's, ``own`` / ``model``, lies in
    :func:`ratio_band` of the interval's units (:func:`replication_units`), else the
    runs' own, q √(own / (n m)) with q the median factor of its t interval
    (:func:`mrfq.stats.runlength.interval_factor`). From 10 replications on the band
    narrows as n grows, so the model holds up to a switch and never after; below 10 each
    n is tested. The ratio is taken as the truth: the rule tests a noisy estimate of it,
    and :func:`model_kept_probability` says how sure the choice is."""

    def __init__(self, model: float, own: float, per_replication: float,
                 confidence: float = 0.95) -> None:
        self.model, self.own, self.m = model, own, per_replication
        self.confidence = confidence
        self.z = float(scipy.stats.norm.ppf(0.5 + confidence / 2))
        self.ratio = own / model if np.isfinite(model) and model > 0 else np.nan
        self.switch = (0 if not np.isfinite(model) else RULE_HORIZON + 1
                       if np.isnan(self.ratio) else self._switch())

    def holds(self, n: int) -> bool:
        """Whether the model's interval is the one reported after n replications."""
        if not np.isfinite(self.model) or np.isinf(self.ratio):
            return False
        return np.isnan(self.ratio) or consistent_ratio(self.ratio, *replication_units(n))

    def _switch(self) -> int:
        """The first n ≥ 10 at which the ratio leaves the band."""
        return _least(lambda n: not self.holds(n), MIN_REPLICATIONS_FOR_T, RULE_HORIZON)

    def basis(self, n: int) -> str:
        """"model" where the point reports the model's interval after n, else "pilot"."""
        kept = self.holds(n) if n < MIN_REPLICATIONS_FOR_T else n < self.switch
        return "model" if kept else "pilot"

    def width(self, n: int) -> float:
        """The relative half-width reported after n replications (n ≥ 1)."""
        if self.basis(n) == "model":
            return self.z * math.sqrt(self.model / (n * self.m))
        return self._own_width(n)

    def _own_width(self, n: int) -> float:
        return interval_factor(self.confidence, *replication_units(n)) * math.sqrt(
            self.own / (n * self.m))

    def model_reaches(self, precision: float, first: int) -> int:
        """The least n ≥ ``first`` at which the model's width is at most ``precision``."""
        return max(first, 1, math.ceil(self.z ** 2 * self.model / (precision ** 2 * self.m)))

    def candidates(self, precision: float, first: int) -> list[int]:
        """The n ≥ ``first`` at which the class can start to meet ``precision``: every n
        below 10, and from 10 on where the model's width reaches it (if before the
        switch), the switch, and where the runs' own width reaches it from the switch on."""
        first = max(first, 1)
        out = set(range(first, MIN_REPLICATIONS_FOR_T))
        later = max(first, MIN_REPLICATIONS_FOR_T)
        if np.isfinite(self.model):
            out.add(max(later, self.model_reaches(precision, first)))
            out.add(max(later, self.switch))
        if np.isfinite(self.own):
            out.add(self.own_reaches(precision, max(later, self.switch)))
        return sorted(v for v in out if v <= RULE_HORIZON)

    def edge(self, precision: float, first: int, budget: int
             ) -> tuple[int, float, int] | None:
        """Near the band's edge: where the model's width reaches ``precision`` (at most
        ``budget``), ``at``, the rule tests a noisy estimate of the ratio; when it keeps
        the model's interval there with a chance ``kept`` between 5% and 95%, (at, kept,
        other): ``other`` is where the runs that leave it stop, on their own interval.
        They leave because their estimate left the band: above it, their own variance is
        at least the band's top times the model's and they stop later; below it, they
        stop about when half of them have left, before ``at``. None otherwise, and where
        both points are the same (e.g. the budget)."""
        if not (np.isfinite(self.model) and np.isfinite(self.ratio)):
            return None
        at = min(self.model_reaches(precision, first), budget)
        units = replication_units(at)
        kept = model_kept_probability(self.ratio, *units)
        if not 0.05 < kept < 0.95:
            return None
        bottom, top = ratio_band(*units)
        if self.ratio >= 1:  # they leave above the top, and stop later on a wider interval
            left = RuleClass(self.model, max(self.ratio, top) * self.model, self.m,
                             self.confidence)
            other = left.own_reaches(precision, max(first, MIN_REPLICATIONS_FOR_T))
        else:  # below the bottom, which rises with n: on a narrower interval, before at
            # (a review's Monte Carlo: the median of those that leave, by when half of
            # them have left)
            other = self._half_left(first, at, 1.0 - kept)
            left = RuleClass(self.model, bottom * self.model, self.m, self.confidence)
            if left._own_width(other) > precision:
                other = left.own_reaches(precision, max(other, MIN_REPLICATIONS_FOR_T))
        other = min(other, budget)
        return None if other == at else (at, kept, other)

    def _half_left(self, first: int, at: int, leaving: float) -> int:
        """The least n in [first, at] at which the chance of having left the band (below
        it) is at least half ``leaving``, its chance at ``at`` (it rises with n from 10
        on: bisection; each n below 10 tested)."""
        def enough(n: int) -> bool:
            return 1.0 - model_kept_probability(self.ratio, *replication_units(n)) \
                >= leaving / 2
        for n in range(max(first, 1), min(at, MIN_REPLICATIONS_FOR_T - 1) + 1):
            if enough(n):
                return n
        return _least(enough, max(first, MIN_REPLICATIONS_FOR_T), at)  # (enough at at)

    def own_reaches(self, precision: float, start: int) -> int:
        """The least n ≥ ``start`` (≥ 10) at which the runs' own width is at most
        ``precision`` (it falls with n: bisection), RULE_HORIZON + 1 if none."""
        return _least(lambda n: self._own_width(n) <= precision, start, RULE_HORIZON)


def rule_replications(classes: list[RuleClass], precision: float, first: int) -> int:
    """The replications at which the precision rule stops (every class's reported
    half-width at most ``precision`` after n, n ≥ ``first``), for true variances
    (:class:`RuleClass`); ``RULE_HORIZON`` + 1 when none does within it."""
    if not classes:
        return first
    for n in sorted({v for c in classes for v in c.candidates(precision, first)}):
        if all(c.width(n) <= precision for c in classes):
            return n
    return RULE_HORIZON + 1
