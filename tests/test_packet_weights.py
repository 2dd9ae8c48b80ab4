"""Class weights in the packet policies (weighted SFQ, SPEC §3): every tag increment is
divided by the class weight, and the packet system then follows the weighted fluid
model."""

import numpy as np
import pytest
from conftest import FIG3_CLASSES, make_scenario
from naive import backlogged_rate

import mrfq
from mrfq.fluid import allocate, service_rates

POLICIES = ["drfq", "drfq-dovetail", "pf", "bmf"]
FLUID = {"drfq": "drf", "drfq-dovetail": "drf", "pf": "pf", "bmf": "bmf"}


_LINK_BEHIND_CPU = pytest.mark.xfail(strict=True, reason=(
    "memoryless DRFQ tags at injection and V is the largest tag started anywhere: the "
    "CPU, not a bottleneck here, starts every packet soon after its injection, so V keeps "
    "up with the weight-1 flow's newest tag and the weight-2 flow is reset to it at every "
    "packet: 0.4998 / 0.5003 instead of 1/3, 2/3"))


@pytest.mark.parametrize("policy, requirements", [
    pytest.param(policy, requirements, id=f"{policy}-{requirements[0]:g},{requirements[1]:g}",
                 marks=_LINK_BEHIND_CPU if (policy, requirements) == ("drfq", [0.5, 1.0])
                 else ())
    for policy in POLICIES for requirements in ([1.0, 0.5], [0.5, 1.0], [1.0, 1.0])])
def test_weights_one_and_two_share_a_bottleneck_one_to_two(policy, requirements):
    """Two backlogged flows with the same requirements (so the same bottleneck), weights 1
    and 2: each should get 1/3 and 2/3 of it. Tolerance: 2% of each share (so the ratio is
    2 within 4%). Measured: DRFQ, dovetailing and BMF within 0.01%; PF within 0.2%, and
    1.0% when both resources are bottlenecks (1, 1), a packet effect of its Q-dependent
    tags; 20 000 packets make the start-up (one window) 0.15%. Unweighted it would be ½
    each."""
    classes = [{"name": "w1", "requirements": requirements, "load_share": 1, "weight": 1},
               {"name": "w2", "requirements": requirements, "load_share": 1, "weight": 2}]
    light = backlogged_rate(classes, 0, policy)
    heavy = backlogged_rate(classes, 1, policy)
    assert light == pytest.approx(1 / 3, rel=0.02)
    assert heavy == pytest.approx(2 / 3, rel=0.02)
    assert heavy / light == pytest.approx(2.0, rel=0.04)


def _weighted_point(policy, weights, load=0.5, seed=1):
    """γ_k of ``policy`` at one Figure 3 load with class weights, m = 200, 10^5 flows
    (20 batches, 10% warm-up), against the weighted and the unweighted fluid γ."""
    classes = [{**c, "weight": w} for c, w in zip(FIG3_CLASSES, weights, strict=True)]
    scenario = make_scenario(classes=classes, axis="link")
    rho = scenario.class_loads(load)
    packet = mrfq.simulate(scenario, policy, load, seed=seed, flows=100_000, mean_size=200,
                           window=30, warmup=0.1).classes
    weighted = service_rates(FLUID[policy], scenario.requirements, rho, scenario.weights,
                             tolerance=1e-5).gamma
    unweighted = service_rates(FLUID[policy], scenario.requirements, rho,
                               tolerance=1e-5).gamma
    return packet, weighted, unweighted


def _passes(row, target, tolerance=0.05):
    """``mrfq validate``'s rule: fluid inside the 95% CI, or within 5%."""
    return (row["ci_low"] <= target <= row["ci_high"]
            or abs(row["gamma"] / target - 1) <= tolerance)


# Weight 3 on class 3 (the (1, 1) class) moves its fluid γ by +32% (PF, BMF) at load 0.5,
# far more than the CI (±2.5%) and the tolerance, so a packet engine that ignored the
# weights would fail. m = 200 keeps the run at about half a second; at this m PF's class 3
# comes out up to 6% low even unweighted (a small-m packet effect, gone at m = 1000).
@pytest.mark.parametrize("policy", [
    "pf", "bmf",
    pytest.param("drfq", marks=pytest.mark.xfail(strict=True, reason=(
        "memoryless DRFQ's global V runs ahead with the flows that are fastest in tag "
        "terms; lagging flows are reset to V at every packet and lose their weight: "
        "class 3 is 20-23% below the weighted fluid gamma"))),
    pytest.param("drfq-dovetail", marks=pytest.mark.xfail(strict=True, reason=(
        "dovetailing DRFQ misses the DRF gamma on this point even unweighted (class 2 "
        "+41%), and with weights")))])
def test_weighted_figure3_point_matches_the_weighted_fluid_model(policy):
    packet, weighted, unweighted = _weighted_point(policy, (1, 1, 3))
    rows = [row for _, row in packet.iterrows()]
    for k, row in enumerate(rows):
        assert _passes(row, weighted[k]), (k, row.to_dict(), weighted[k])
    # the check discriminates: the unweighted fluid values fail it
    assert not all(_passes(row, unweighted[k]) for k, row in enumerate(rows))


@pytest.mark.parametrize("policy", [
    "pf", "bmf",
    pytest.param("drfq", marks=pytest.mark.xfail(strict=True, reason=(
        "memoryless DRFQ: C's tags run ahead and set V; A and B are reset to V at every "
        "packet and split the CPU equally, 0.5 / 0.5"))),
    pytest.param("drfq-dovetail", marks=pytest.mark.xfail(strict=True, reason=(
        "dovetailing DRFQ: C sets V_link; A's and B's link tags (their keys) are reset to "
        "it and they split the CPU equally, 0.5 / 0.5")))])
def test_weighted_saturated_flows_with_a_flow_on_another_bottleneck(policy):
    """A (1, 0.1) weight 2 and B (1, 0.1) weight 1 share the CPU; C (0, 1) has the link.
    Weighted DRF, PF and BMF all give A 2/3, B 1/3, C 0.9 (A and B saturate the CPU, C
    takes what is left of the link). Tolerance 0.5% (see tests/test_packet_saturated.py)."""
    classes = [{"name": "A", "requirements": [1, 0.1], "load_share": 1, "weight": 2},
               {"name": "B", "requirements": [1, 0.1], "load_share": 1, "weight": 1},
               {"name": "C", "requirements": [0, 1], "load_share": 1, "weight": 1}]
    fluid = allocate(FLUID[policy], [c["requirements"] for c in classes], weights=[2, 1, 1])
    np.testing.assert_allclose(fluid, [2 / 3, 1 / 3, 0.9], rtol=1e-9)
    for k in range(3):
        assert backlogged_rate(classes, k, policy) == pytest.approx(fluid[k], rel=0.005), k
