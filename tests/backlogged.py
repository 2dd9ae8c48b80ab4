"""Rates of backlogged packet flows from an explicit trace (tests of saturated flows)."""

import numpy as np
from conftest import make_scenario

from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel


def backlogged_rate(classes, measured, policy, size=20000, window=30, resources=("cpu", "link")):
    """Packets per unit time of one flow of class ``measured`` (``size`` packets) while
    one flow of every other class stays backlogged throughout (10^8 packets, never
    finished). All arrive at t = 0; the run stops when the measured flow completes.
    A packet's dominant service is 1, so this is also the flow's dominant share."""
    scenario = make_scenario(classes=classes, resources=resources)
    model = PacketModel.from_scenario(scenario)
    others = [k for k in range(len(classes)) if k != measured]
    trace = ([0.0] * len(classes), [measured, *others], [size] + [10**8] * len(others))
    run = run_replication(model, policy, scenario.class_loads(0.5), np.random.SeedSequence(0),
                          flows=1, mean_size=10, window=window, arrivals=trace)
    return size / run.completion[0]
