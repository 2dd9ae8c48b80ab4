"""The debug-mode invariant checks fire on broken states (so passing them means something)."""

import numpy as np
import pytest
from conftest import make_scenario

from mrfq.packet import engine, kernel
from mrfq.packet.model import PacketModel

WINDOW = 3


def _consistent_state():
    """Slot 0 in use with one packet, in service at resource 0; resource 1 idle."""
    model = PacketModel.from_scenario(make_scenario())
    state = engine._State(model, WINDOW, capacity=4)
    J = state.J
    state.istate[kernel.I_FREE_TOP] = 3  # the stack top is slot 0: take it
    assert list(state.free_slots[:3]) == [3, 2, 1]
    state.flow_i[kernel.FI_IN_SYSTEM] = 1
    state.flow_i[kernel.FI_RES + 0] = 1  # packets of the flow at resource 0
    state.res_f[0] = 2.0  # busy until t = 2
    state.res_f[2 * J + 0] = 1.0  # resource 0 was idle for 1 before its busy period
    return state


def _check(state, t=1.0, held_injected=False):
    return kernel._check_invariants(t, WINDOW, state.ni, state.istate[kernel.I_FREE_TOP],
                                    state.flow_i, state.res_i, state.res_f,
                                    state.free_slots, state.istate, state.in_use,
                                    held_injected)


def test_consistent_state_passes():
    assert _check(_consistent_state()) == 0


def test_held_packets_count_in_the_system_only_for_mr3_on_several_routers():
    """MR3 on several routers: a packet waiting at a router's ingress is injected (in
    FI_IN_SYSTEM) but at no resource; the tandem's held packets are not injected yet."""
    state = _consistent_state()
    state.flow_i[kernel.FI_IN_SYSTEM] = 2
    state.flow_i[kernel.FI_HELD] = 1
    assert _check(state, held_injected=True) == 0
    assert _check(state) == kernel.BAD_CONSERVATION


def _lost_packet(s):
    s.flow_i[kernel.FI_RES + 0] = 0


def _fifo_longer_than_queue(s):
    s.flow_i[kernel.FI_RES + 2] = 2


def _window_exceeded(s):
    s.flow_i[kernel.FI_IN_SYSTEM] = WINDOW + 1
    s.flow_i[kernel.FI_RES + 0] = WINDOW + 1


def _idle_with_backlog(s):
    s.res_i[3 * s.J + 1] = 1  # resource 1 idle (∞) with a flow in its heap


def _over_utilised(s):
    s.res_f[2 * s.J + 0] = 5.0  # idle for 5 by t = 1: busy time negative


def _completion_ahead(s):
    # resource 0 (busy, so its busy time 1 − 1 = 0 looks fine) last completed at 3 > t = 1
    s.res_f[4 * s.J + 0] = 3.0


def _tag_order_flagged(s):
    s.istate[kernel.I_VIOLATION] = kernel.BAD_TAG_ORDER


@pytest.mark.parametrize("corrupt, code", [
    (_lost_packet, kernel.BAD_CONSERVATION),
    (_fifo_longer_than_queue, kernel.BAD_CONSERVATION),
    (_window_exceeded, kernel.BAD_WINDOW),
    (_idle_with_backlog, kernel.BAD_IDLE),
    (_over_utilised, kernel.BAD_UTILISATION),
    (_completion_ahead, kernel.BAD_UTILISATION),
    (_tag_order_flagged, kernel.BAD_TAG_ORDER),
])
def test_broken_state_is_reported(corrupt, code):
    state = _consistent_state()
    corrupt(state)
    assert _check(state) == code


def test_violation_stops_the_run_with_a_named_invariant(monkeypatch):
    monkeypatch.setattr(kernel, "run_kernel", lambda *args: kernel.BAD_IDLE)
    scenario = make_scenario()
    with pytest.raises(engine.InvariantError, match="idle while it has queued packets"):
        engine.run_replication(PacketModel.from_scenario(scenario), "bmf",
                               scenario.class_loads(0.5), np.random.SeedSequence(0),
                               flows=5, mean_size=3, window=WINDOW, debug=True)


def test_too_many_flows_in_progress_is_an_input_error(monkeypatch):
    from mrfq.errors import InputError

    monkeypatch.setattr(engine, "INITIAL_CAPACITY", 4)
    monkeypatch.setattr(kernel, "MAX_SLOTS", 4)
    scenario = make_scenario()
    with pytest.raises(InputError, match="flows in progress at once"):
        engine.run_replication(PacketModel.from_scenario(scenario), "bmf",
                               scenario.class_loads(0.9), np.random.SeedSequence(0),
                               flows=300, mean_size=50, window=WINDOW)
