"""Start-time fair queueing charges a flow for its *previous* packet (SPEC §3).

S^k = max(V, F^{k-1}), F^{k-1} = S^{k-1} + cost of packet k−1 (at a resource: the flow's
previous packet that visited that resource); a flow's first packet gets S = V. With one
packet type per class this is the same as charging the current packet; with a mix it is
not. Two explicit traces, worked out by hand below from the rule, where the readings give
different completion times. The kernel (with and without its checks and its lone-flow
loop) and the reference simulator must give the hand-derived times exactly.
"""

import numpy as np
import pytest
from conftest import make_scenario
from naive import simulate_reference

from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel

ALL = ["drfq", "drfq-dovetail", "pf", "bmf"]


def _completions(classes, resources, trace, window, policy):
    """Completion times of the trace's flows from the kernel's three loops (debug, general,
    with the lone-flow loop) and from the reference; all four must agree exactly."""
    scenario = make_scenario(classes=classes, resources=resources)
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.5)
    runs = [run_replication(model, policy, rho, np.random.SeedSequence(0), flows=len(trace[0]),
                            mean_size=10, window=window, arrivals=trace, debug=debug,
                            lone_flow=lone).completion
            for debug, lone in ((True, False), (False, False), (False, True))]
    runs.append(simulate_reference(scenario, policy, rho, np.random.SeedSequence(0),
                                   flows=len(trace[0]), mean_size=10, window=window,
                                   arrivals=trace))
    for other in runs[1:]:
        np.testing.assert_array_equal(other, runs[0])
    return runs[0].tolist()


# One resource. Flow A (index 0) cycles packets of 1.5 and 0.5 (mean 1); flow B sends
# packets of 1. Both arrive at t = 0, A first; A has 2 packets, B 3, window 3.
ONE_RESOURCE = dict(
    classes=[{"name": "A", "load_share": 1, "packet_order": "cycle",
              "packets": [{"requirements": [1.5]}, {"requirements": [0.5]}]},
             {"name": "B", "requirements": [1.0], "load_share": 1}],
    resources=("cpu",), trace=([0.0, 0.0], [0, 1], [2, 3]), window=3)


@pytest.mark.parametrize("policy", ALL)
def test_a_flow_is_charged_for_its_previous_packet(policy):
    """t = 0, A arrives: A1 (1.5) gets S = V = 0 and starts at once (done at 1.5).
    A2 (0.5) is charged for A1:
      BMF, both DRFQs: S(A2) = 0 + 1.5 = 1.5;  PF (Q = 2, A1 still there): 0 + 1.5/2 = 0.75.
    B arrives: B1, B2, B3 (cost 1 each, charged for the one before):
      BMF, DRFQ: 0, 1, 2;  PF (Q = 1, 2, 3): 0, 0 + 1/2 = 0.5, 0.5 + 1/3 = 0.833.
    Service in tag order (ties: earliest arrival):
      [0, 1.5] A1;  [1.5, 2.5] B1 (0 < A2);  [2.5, 3.5] B2 (1 < 1.5, 0.5 < 0.75);
      [3.5, 4.0] A2 (1.5 < 2, 0.75 < 0.833) -> A done at 4.0;  [4.0, 5.0] B3 -> B at 5.0.
    Charging the *current* packet instead, A2's tag would be 0 + 0.5 = 0.5 (PF: 0.5/2 =
    0.25), below B2's 1 (PF 0.5): A2 would run in [2.5, 3.0] and A finish at 3.0
    (B still at 5.0) — what the kernel of ENGINE_VERSION 1 gave."""
    previous_packet, current_packet = [4.0, 5.0], [3.0, 5.0]
    assert previous_packet != current_packet
    assert _completions(**ONE_RESOURCE, policy=policy) == previous_packet


# Two resources in tandem. Flow A cycles (1, 2) and (1, 0): its second packet skips the
# link. Flow B uses only the link, packets of 1. Both at t = 0, A first; A has 3
# packets, B 4, window 4.
SKIPPING = dict(
    classes=[{"name": "A", "load_share": 1, "packet_order": "cycle",
              "packets": [{"requirements": [1, 2]}, {"requirements": [1, 0]}]},
             {"name": "B", "requirements": [0, 1], "load_share": 1}],
    resources=("cpu", "link"), trace=([0.0, 0.0], [0, 1], [3, 4]), window=4)


# (Memoryless DRFQ tags once, at injection, with the previous packet's max_j s: the
# first trace covers it; here both readings would give it the same times.)
@pytest.mark.parametrize("policy", ["drfq-dovetail", "pf", "bmf"])
def test_at_a_resource_the_previous_packet_is_the_previous_one_there(policy):
    """The CPU serves A1, A2, A3 in [0,1], [1,2], [2,3] (only A uses it).
    Link tags of B (arrives at t = 0, B1 starts at once): BMF/dovetailing 0, 1, 2, 3;
    PF 0, 1/2, 1/2 + 1/3 = 0.833, 0.833 + 1/4 = 1.083.
    t = 1: A1 reaches the link (CPU completion first, by resource index, then the link's
    B1): S = V_link = 0, ahead of B2: [1, 3] A1.
    t = 3: A3 reaches the link. Its previous packet *at the link* is A1 (tag 0, cost 2):
    BMF/dovetailing S = 0 + 2 = 2; PF (Q = 2: A1 is still in service) 0 + 2/2 = 1.
    [3, 4] B2, [4, 5] B3 (tag 2 = A3's, earlier arrival; PF 0.833 < 1), [5, 7] A3
    (2 < 3; PF 1 < 1.083) -> A done at 7;  [7, 8] B4 -> B at 8.
    Charging A's previous packet overall (A2, link cost 0) would give A3 the tag 0, ahead
    of B2: A3 in [3, 5], A done at 5 (B still at 8)."""
    at_the_resource, previous_overall = [7.0, 8.0], [5.0, 8.0]
    assert at_the_resource != previous_overall
    assert _completions(**SKIPPING, policy=policy) == at_the_resource

