"""Exact closed forms of a single queue, used as references by tests and benchmarks.

M/D/1 (Poisson arrivals at rate λ = ρ, deterministic service time 1, FIFO): the
waiting-time distribution by Erlang's formula (Erlang 1909; e.g. Kleinrock, *Queueing
Systems* vol. 1, or Tijms, *A First Course in Stochastic Models*, §9.5)

    P(W ≤ x) = (1 − ρ) Σ_{k=0}^{⌊x⌋} [λ(k − x)]^k e^{−λ(k − x)} / k!,   x ≥ 0,

and its quantiles; the sojourn time is T = W + 1. The sum alternates in sign and its
terms grow like e^{2λx}, so it is evaluated in :mod:`decimal` arithmetic with enough
digits for the cancellation (the answer is exact to about 1e-25).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext


def _digits(rho: float, x: float) -> int:
    # the largest term is about e^{2λx}; 30 digits survive the cancellation
    return 40 + int(2.0 * rho * x / math.log(10.0))


def md1_waiting_cdf(x: float, rho: float) -> float:
    """P(W ≤ x) of the M/D/1 queue's stationary waiting time W (service time 1, arrival
    rate λ = ρ, 0 < ρ < 1), x in service times. 0 for x < 0, 1 − ρ at x = 0 (the atom of
    arrivals that find the queue empty)."""
    if not 0.0 < rho < 1.0:
        raise ValueError(f"rho must be in (0, 1), got {rho!r}")
    if x < 0:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = _digits(rho, x)
        lam = Decimal(rho)
        xd = Decimal(x)
        step = (-lam).exp()          # e^{−λ}: the k-th term carries e^{λx} e^{−λk}
        scale = (lam * xd).exp()
        total = Decimal(0)
        factor = Decimal(1)
        for k in range(int(math.floor(x)) + 1):
            a = lam * (Decimal(k) - xd)   # ≤ 0
            term = (a ** k if k else Decimal(1)) / math.factorial(k)
            total += term * scale * factor
            factor *= step
        value = (1 - lam) * total
    return min(max(float(value), 0.0), 1.0)


def md1_waiting_quantile(p: float, rho: float, tol: float = 1e-12) -> float:
    """The p-quantile inf{x : P(W ≤ x) ≥ p} of the M/D/1 waiting time (service 1,
    λ = ρ): 0 when p ≤ 1 − ρ (the atom at 0), otherwise the root of the continuous,
    increasing CDF on (0, ∞), by bisection to ``tol`` service times."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if p <= 1.0 - rho:
        return 0.0
    low, high = 0.0, 1.0
    while md1_waiting_cdf(high, rho) < p:
        low, high = high, 2.0 * high
    while high - low > tol * max(1.0, high):
        mid = 0.5 * (low + high)
        if md1_waiting_cdf(mid, rho) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def md1_sojourn_quantile(p: float, rho: float) -> float:
    """The p-quantile of the M/D/1 sojourn time T = W + 1 (service time 1, λ = ρ), in
    service times."""
    return 1.0 + md1_waiting_quantile(p, rho)
