"""Balanced fairness's final truncation level against ln(tol)/ln(r): the calibration of
:func:`mrfq.fluid.method.predicted_bf_states` (BF_LEVEL_FACTOR, BF_MIN_LEVEL).

Usage: python benchmarks/bf_level_calibration.py [TOLERANCE]   (default 1e-5)

Figures 1-2's classes, a three-resource triangle and a four-class two-resource point,
loads 0.1-0.98; one line per point (a point over the law's state budget prints its error).
"""
import math
import sys
import time

import numpy as np

from mrfq.errors import InputError
from mrfq.fluid.balanced import bf_service_rates
from mrfq.scenario import load_scenario

cases = []
for name in ("fig1_balanced", "fig2_unbalanced"):
    s = load_scenario(name)
    cases.append((name, s.requirements, lambda L, s=s: s.class_loads(L)))
tri = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1.0]])
cases.append(("triangle", tri, lambda L: np.full(3, L / 2)))
four = np.array([[1, 0.2], [0.2, 1], [1, 1], [0.5, 0.5]])
cases.append(("four", four, lambda L: np.ones(4) * L / four.sum(axis=0).max()))
tol = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-5
for name, a, loads in cases:
    for L in (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98):
        rho = loads(L)
        r = float((rho @ a).max())
        t = time.process_time()
        try:
            res = bf_service_rates(a, rho, tolerance=tol)
        except InputError as exc:
            print(f"{name:16s} K={a.shape[0]} load {L:.2f} r {r:.3f} error: {exc}", flush=True)
            continue
        base = math.log(tol) / math.log(max(r, 0.05))
        print(f"{name:16s} K={a.shape[0]} load {L:.2f} r {r:.3f} level {res.level:5d} "
              f"states {res.states:>11,d} level/base {res.level / base:.2f} "
              f"cpu {time.process_time() - t:.1f}s", flush=True)
