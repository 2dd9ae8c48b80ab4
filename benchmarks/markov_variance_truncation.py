"""How close the Markov flow variance v_k (:mod:`mrfq.fluid.markov_variance`) is to its
limit. v weighs the tail by n², so the truncation that settles γ leaves it low;
:func:`~mrfq.fluid.markov_variance.settled_flow_variances` grows the truncation until
its own estimate is at most 4%. Prints, for Figure 3's classes (``fig3_quick``) at link
loads 0.9 (DRF, PF, BMF), 0.7 and 0.5 (PF): v on the γ solve's truncation, the settled v
with its estimate and level, and v on a larger truncation (the solve at tolerance 1e-7,
settled too) as the reference; the square roots' ratios are what an interval's width
moves by. For one class on one resource (processor sharing) the reference is the closed
form 2ρ(1 + ρ)/(1 − ρ)² (the Poisson equation of the M/M/1 birth–death chain, f =
1{n > 0}, h = f − (1 − ρ)n).

Usage: python benchmarks/markov_variance_truncation.py   (two to three minutes)
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from mrfq import policies
from mrfq.fluid import markov_solver, markov_variance
from mrfq.scenario import load_scenario


def _variances(policy: str, a, rho, tolerance: float):
    """(v on the γ solve's final truncation, settled v, its estimate, the two levels,
    seconds)."""
    started = time.perf_counter()
    code = policies.get(policies.FLUID, policy).code
    _, truncations = markov_solver.solve(code, a, rho, None, tolerance)
    final = truncations[-1]
    plain = markov_variance.flow_variances(final.pi, final.states, final.phi, final.rho)
    settled, error, level = markov_variance.settled_flow_variances(truncations)
    return plain, settled, error, final.level, level, time.perf_counter() - started


def main() -> None:
    scenario = load_scenario("fig3_quick")
    a = np.array([c.requirements for c in scenario.classes])
    cases = [(0.9, p) for p in ("drf", "pf", "bmf")] + [(0.7, "pf"), (0.5, "pf")]
    with threadpool_limits(limits=1):  # as mrfq.fluid.markov runs it
        for load, policy in cases:
            rho = scenario.class_loads(load)
            plain, settled, error, level, grown, seconds = _variances(policy, a, rho, 1e-5)
            _, reference, _, _, reference_level, _ = _variances(policy, a, rho, 1e-7)
            print(f"Figure 3, load {load}, {policy}: sqrt(v / reference) on the γ "
                  f"truncation (level {level}) {np.round(np.sqrt(plain / reference), 4)}, "
                  f"settled (level {grown}, {seconds:.0f} s) "
                  f"{np.round(np.sqrt(settled / reference), 4)}, estimate "
                  f"{np.round(error, 4)}; reference level {reference_level}", flush=True)
        for rho in (0.8, 0.9, 0.95, 0.98):
            plain, settled, error, level, grown, _ = _variances("pf", [[1.0]], [rho], 1e-5)
            exact = 2 * rho * (1 + rho) / (1 - rho) ** 2
            print(f"one class, one resource, load {rho}: v / exact on the γ truncation "
                  f"(level {level}) {plain[0] / exact:.4f}, settled (level {grown}) "
                  f"{settled[0] / exact:.4f}, estimate {error[0]:.4f}", flush=True)


if __name__ == "__main__":
    main()
