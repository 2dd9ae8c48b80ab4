"""How much the Markov flow variance v_k (:mod:`mrfq.fluid.markov_variance`) depends on
the truncation it is computed on. The variance is computed on the final truncation of
the γ solve, whose level the γ tolerance sets; v weighs the tail more (n²), so it needs
more levels than γ. Prints, for Figure 3's classes (``fig3_quick``) at link loads 0.9
(DRF, PF, BMF), 0.7 and 0.5 (PF), v at the default tolerance 1e-5 and at 1e-7 (a larger
truncation), the ratio of their square roots (what an interval's width moves by), and,
for one class on one resource (processor sharing), v against its closed form
2ρ(1 + ρ)/(1 − ρ)² (the Poisson equation of the M/M/1 birth–death chain, f = 1{n > 0},
h = f − (1 − ρ)n).

Usage: python benchmarks/markov_variance_truncation.py   (about a minute)
"""

import time

import numpy as np

from mrfq.fluid.markov import service_rates_and_variances
from mrfq.scenario import load_scenario


def main() -> None:
    scenario = load_scenario("fig3_quick")
    a = np.array([c.requirements for c in scenario.classes])
    cases = [(0.9, p) for p in ("drf", "pf", "bmf")] + [(0.7, "pf"), (0.5, "pf")]
    for load, policy in cases:
        rho = scenario.class_loads(load)
        rows = {}
        for tolerance in (1e-5, 1e-7):
            started = time.perf_counter()
            result, v = service_rates_and_variances(policy, a, rho, tolerance=tolerance)
            rows[tolerance] = (v, result.level, time.perf_counter() - started)
        (v5, level5, s5), (v7, level7, s7) = rows[1e-5], rows[1e-7]
        print(f"Figure 3, load {load}, {policy}: v at 1e-5 {np.round(v5, 2)} (level "
              f"{level5}, {s5:.0f} s), at 1e-7 {np.round(v7, 2)} (level {level7}, "
              f"{s7:.0f} s); sqrt ratio {np.round(np.sqrt(v5 / v7), 4)}", flush=True)
    for rho in (0.8, 0.9, 0.95):
        result, v = service_rates_and_variances("pf", [[1.0]], [rho])
        exact = 2 * rho * (1 + rho) / (1 - rho) ** 2
        print(f"one class, one resource, load {rho}: v {v[0]:.2f} against {exact:.2f} "
              f"(ratio {v[0] / exact:.4f}, sqrt {np.sqrt(v[0] / exact):.4f}; level "
              f"{result.level})", flush=True)


if __name__ == "__main__":
    main()
