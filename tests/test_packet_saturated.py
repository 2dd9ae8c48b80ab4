"""Saturated flows reach the static fluid allocation of their policy (the packet twin of
the DRFQ 1/2 v 3/7 dovetailing test in tests/test_packet_stats.py).

A flow of every class arrives at t = 0; all but the measured one are too large to finish
(10^8 packets), so the measured flow (20 000 packets) is served against the whole set
from start to end, and its rate size / completion time is its fluid φ_k (a packet's
dominant service is 1). Tolerance: 0.5% of φ_k. Filling the window costs each flow at
most ~W packets of 20 000 (0.15%); the largest deviation measured is 0.14% (PF,
(½, 1), (1, ½)). PF and BMF differ on the Figure 3 classes (0.606, 0.606, 0.333 against
0.476 each), so a PF run without its 1/Q factor, which is BMF's rule, fails; BMF and DRF
differ on the uneven pair (5/9, 8/9 against 2/3, 2/3), so BMF charging every packet 1
instead of s_j (per-packet fairness at each resource) fails.
"""

import pytest
from conftest import FIG3_CLASSES
from naive import backlogged_rate

from mrfq.fluid import allocate

HALF = [{"name": "a", "requirements": [0.5, 1.0], "load_share": 1},
        {"name": "b", "requirements": [1.0, 0.5], "load_share": 1}]
# DRF gives both 2/3; PF and BMF give (5/9, 8/9): B's bottleneck is the link, A's the CPU
UNEVEN = [{"name": "a", "requirements": [1.0, 0.2], "load_share": 1},
          {"name": "b", "requirements": [0.5, 1.0], "load_share": 1}]
WEIGHTED_FIG3 = [{**c, "weight": w} for c, w in zip(FIG3_CLASSES, (1, 2, 1), strict=True)]
CASES = {"half": HALF, "fig3": FIG3_CLASSES, "uneven": UNEVEN,
         "fig3-weights-1-2-1": WEIGHTED_FIG3}
FLUID = {"drfq": "drf", "pf": "pf", "bmf": "bmf"}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("policy", ["pf", "bmf", "drfq"])
def test_backlogged_flows_reach_the_static_fluid_allocation(policy, case):
    classes = CASES[case]
    fluid = allocate(FLUID[policy], [c["requirements"] for c in classes],
                     weights=[c.get("weight", 1) for c in classes])
    for k in range(len(classes)):
        assert backlogged_rate(classes, k, policy) == pytest.approx(fluid[k], rel=0.005), k


def test_the_fluid_targets_tell_the_policies_apart():
    """What the test above checks: PF's targets on the Figure 3 classes are not BMF's."""
    a = [c["requirements"] for c in FIG3_CLASSES]
    assert allocate("pf", a) == pytest.approx([20 / 33, 20 / 33, 1 / 3])
    assert allocate("bmf", a) == pytest.approx([10 / 21] * 3)
    assert allocate("pf", [c["requirements"] for c in HALF]) == pytest.approx([2 / 3, 2 / 3])
    uneven = [c["requirements"] for c in UNEVEN]
    assert allocate("bmf", uneven) == pytest.approx([5 / 9, 8 / 9])
    assert allocate("drf", uneven) == pytest.approx([2 / 3, 2 / 3])
