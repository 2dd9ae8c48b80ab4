"""Which BMF allocation does the packet system pick when BMF is not unique (issue 23)?

BR §2.4's example: three resources, three classes with requirements (1, 1, 1),
(1, 1/2, 3/4), (1/2, 1, 3/4), one flow each; every φ(x) = (2/5 − x/15, 2/5 + 2x/45,
2/5 + 2x/45), 0 ≤ x ≤ 1, is BMF. A flow of every class is backlogged and the measured one
sends 20 000 packets (tests/naive.py: backlogged_rate); its rate is its φ_k. Run once as a
tandem (one router) and once as a network of three one-resource routers, with packet
`bmf` (per-resource fair queueing). Printed: the packet φ, the x it corresponds to, and
mrfq's fluid BMF (the enumeration's choice and the local-FQ fixed point).

    PYTHONPATH=. python reproduction/networks/bmf_nonunique.py

``--linear``: on `linear_network`'s classes instead, whether mrfq's two BMF computations
(the enumeration and the local-FQ fixed point) differ in any state with up to 5 flows
per class (they do not: 0 of 1 295).
"""

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import naive  # noqa: E402
from naive import backlogged_rate  # noqa: E402

from mrfq.fluid import allocate, kernels  # noqa: E402
from mrfq.fluid.bmf_levels import bmf_levels, bottleneck_mapping  # noqa: E402

A = np.array([[1.0, 1.0, 1.0], [1.0, 0.5, 0.75], [0.5, 1.0, 0.75]])
RESOURCES = ("r1", "r2", "r3")


def packet_phi(routers: bool, window: int) -> np.ndarray:
    """Packet φ_k of every class, one router (tandem) or one router per resource."""
    classes = [{"name": f"c{k + 1}", "requirements": list(A[k]), "load_share": 1}
               for k in range(3)]
    original = naive.make_scenario
    if routers:  # backlogged_rate builds its scenario with naive.make_scenario
        naive.make_scenario = lambda **kw: original(
            **kw, routers={f"R{j}": [r] for j, r in enumerate(RESOURCES)})
    try:
        return np.array([backlogged_rate(classes, k, "bmf", window=window,
                                         resources=RESOURCES) for k in range(3)])
    finally:
        naive.make_scenario = original


def main() -> None:
    n, w = np.ones(3), np.ones(3)
    levels, mapping, fixed = np.zeros(3), np.zeros(3, np.int64), np.zeros(3)
    bmf_levels(A, n, w, levels)
    bottleneck_mapping(A, n, w, levels, mapping)
    kernels.bmf_mapping_allocation(A, n, w, mapping, fixed)
    print("fluid BMF, enumeration (largest PF objective):", allocate("bmf", A, n).round(4))
    print("fluid BMF, local-FQ fixed point:              ", fixed.round(4))
    print("x = 0 end (2/5, 2/5, 2/5); x = 1 end (1/3, 4/9, 4/9)")
    for routers in (False, True):
        for window in (30, 5):
            phi = packet_phi(routers, window)
            x = 15 * (0.4 - phi[0])
            print(f"packet bmf, {'3 routers' if routers else 'one router'}, W={window}: "
                  f"phi = {phi.round(4)}, x = {x:.3f}, capacity used "
                  f"{(phi @ A).round(4)}")


def linear_states() -> None:
    """Count the states of linear_network where the two fluid BMF computations differ."""
    a = np.array([[1.0, 0.5, 0.8], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    w = np.ones(4)
    differ = total = 0
    for n in itertools.product(range(6), repeat=4):
        n = np.array(n, float)
        if n.sum() == 0:
            continue
        levels, mapping, fixed = np.zeros(4), np.zeros(4, np.int64), np.zeros(4)
        bmf_levels(a, n, w, levels)
        bottleneck_mapping(a, n, w, levels, mapping)
        kernels.bmf_mapping_allocation(a, n, w, mapping, fixed)
        total += 1
        differ += bool(np.max(np.abs(allocate("bmf", a, n) - fixed)) > 1e-9)
    print(f"linear_network: the enumeration and the local-FQ fixed point differ in {differ} "
          f"of {total} states (up to 5 flows per class)")


if __name__ == "__main__":
    linear_states() if "--linear" in sys.argv[1:] else main()
