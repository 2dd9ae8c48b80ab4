"""Does packet `pf` (BR eq. 5 at every resource) realise fluid PF on the packaged
networks? (issue 23: the `pf` misses of "Which misses are packet effects").

On a packaged scenario's resources, routers and classes (default `linear_network`), one
flow of each class of a state stays backlogged with a window of W packets and the rtt of
the scenario (0). Printed per state and W, the steady packets per unit time of every flow
under three rules (packet: the production kernel, tests/naive.py
backlogged_steady_rate: 10^5 packets over the time they add between a measured flow of
10^5 and one of 2·10^5, so that the start-up, about W packets, and the final drain
cancel):

* fluid PF: mrfq.fluid.allocate("pf"), the W → ∞ target of BR §3.2's derivation;
* per-packet processor sharing: every packet at a resource gets an equal share of it,
  which is what BR's derivation assumes ("serving packets at rates proportional to
  Q_ij / a_ij"). With each flow's W packets circulating without delay this is a closed
  multiclass network of PS stations (BCMP: product form, insensitive to the packet time
  law), solved exactly by mean value analysis (Reiser & Lavenberg 1980):
      R_rj(N) = a_rj (1 + Q_j(N − e_r)),  X_r(N) = N_r / Σ_j R_rj(N),
      Q_j(N) = Σ_r X_r(N) R_rj(N);
  it converges to PF as W grows (Walton 2009, "Proportional fairness and its relationship
  with multi-class queueing networks");
* packet `pf`: start-time fair queueing with the tag increment a_ij / Q_ij (BR eq. 5),
  Q_ij taken at the packet's arrival at j.

States: every class together, and the long class with each other one alone (for
`linear_network`: (long, 1, 2, 3), (long, 1), (long, 2), (long, 3)).

    PYTHONPATH=. python reproduction/networks/pf_windows.py [--scenario nfv_chain]
        [--windows 5,30,120,480]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import naive  # noqa: E402
from naive import backlogged_steady_rate  # noqa: E402

from mrfq import load_scenario  # noqa: E402
from mrfq.fluid import allocate  # noqa: E402

#: the MVA's population lattice has (W + 1)^R points of J floats: keep it under ~400 MB
MVA_POINTS = 15_000_000


@njit(cache=True)
def ps_throughputs(a: np.ndarray, window: int) -> np.ndarray:
    """Exact throughputs (packets per unit time) of R closed classes of ``window``
    packets each in a network of PS stations, class r taking a[r, j] at station j (0: not
    visited): mean value analysis over every population vector (mixed radix W + 1)."""
    R, J = a.shape
    base = window + 1
    total = base ** R
    queue = np.zeros((total, J))
    x = np.zeros(R)
    digits = np.zeros(R, np.int64)
    for index in range(1, total):
        rest = index
        for r in range(R):
            digits[r] = rest % base
            rest //= base
        q = np.zeros(J)
        for r in range(R):
            if digits[r] == 0:
                continue
            below = index - base ** r  # the population with one class-r packet fewer
            cycle = 0.0
            for j in range(J):
                cycle += a[r, j] * (1.0 + queue[below, j])
            x[r] = digits[r] / cycle
            for j in range(J):
                q[j] += x[r] * a[r, j] * (1.0 + queue[below, j])
        queue[index] = q
    return x


def packet_pf(scenario, ks: tuple[int, ...], window: int) -> np.ndarray:
    """Packet `pf` rate of every flow of a backlogged state (classes ``ks``) on the
    scenario's resources and routers."""
    classes = [{"name": scenario.classes[k].name, "load_share": 1,
                "requirements": list(scenario.requirements[k])} for k in ks]
    routers = {name: [scenario.resources[j] for j in members]
               for name, members in scenario.routers}
    original = naive.make_scenario
    naive.make_scenario = lambda **kw: original(**kw, routers=routers)
    try:
        return np.array([backlogged_steady_rate(classes, i, "pf", size=100_000, window=window,
                                                resources=scenario.resources)
                         for i in range(len(ks))])
    finally:
        naive.make_scenario = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="linear_network")
    parser.add_argument("--windows", default="5,30,120,480")
    args = parser.parse_args()
    scenario = load_scenario(args.scenario)
    K = len(scenario.classes)
    states = [tuple(range(K))] + [(0, k) for k in range(1, K)]
    for ks in states:
        a = np.asarray(scenario.requirements)[list(ks)]
        names = tuple(scenario.classes[k].name for k in ks)
        print(f"state {names}: fluid PF {allocate('pf', a, np.ones(len(ks))).round(4)}")
        for window in (int(w) for w in args.windows.split(",")):
            if (window + 1) ** len(ks) <= MVA_POINTS:
                ps = ps_throughputs(a, window).round(4)
            else:
                ps = "(lattice too large)"
            print(f"  W = {window:4d}: per-packet PS {ps}, packet pf "
                  f"{packet_pf(scenario, ks, window).round(4)}", flush=True)


if __name__ == "__main__":
    main()
