"""The start-up cut of ``warmup = "auto"`` with replications shorter than their batch
count (an eighteenth-session review, issue 25's intervals): with no batch to leave out,
the cut was skipped silently, and 40 replications of 15 one-packet flows through M/D/1 at
load 0.9 gave γ 0.434 [0.380, 0.487] against the exact 1 / (1 + ρ / (2 (1 − ρ))) =
0.1818, unflagged (25-flow replications were flagged). Red on the code before the fix."""

import numpy as np

from mrfq.scenario import scenario_from_dict
from mrfq.simulation import simulate
from mrfq.stats.startup import relaxation_batches


def _md1(flows: int, replications: int):
    raw = {"name": "md1", "resources": ["link"],
           "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
           "load": {"axis": "link", "values": [0.9]},
           "packet": {"flows": flows, "mean_size": 1, "window": 1, "warmup": "auto",
                      "replications": replications, "seed": 1}}
    return simulate(scenario_from_dict(raw), "fifo", 0.9, seed=7).classes.iloc[0]


def test_replications_too_short_for_a_batch_each_are_flagged_not_cut_silently():
    row = _md1(15, 40)
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert row["ci_problem"].startswith("warm-up: this load relaxes over about 684 flows")


def test_the_rule_itself():
    """(batches, measured flows, record's cut): no batches and a cut due is a problem; no
    batches and none due, or no flows, is not."""
    assert relaxation_batches((0, 15, 0), 684)[1].startswith("warm-up: this load relaxes")
    assert relaxation_batches((0, 15, 5), 5) == (0, "")
    assert "half a replication (1 flow);" in relaxation_batches((0, 1, 0), 3)[1]
    assert relaxation_batches((0, 0, 0), 684) == (0, "")
    assert relaxation_batches((20, 2000, 0), 200) == (2, "")
    # long enough, but no batches: said as such, not as "more than half a replication"
    assert relaxation_batches((0, 1500, 0), 3)[1] == (
        "warm-up: this load's relaxation (the first 3 measured flows) cannot be left out: "
        "the replication has no batches")
    # 2 · 460 < 1000 flows, but the cut rounds to 5 batches, 6 to be even, of 10
    assert relaxation_batches((10, 1000, 0), 460, even=True)[1] == (
        "warm-up: leaving this load's relaxation (the first 460 measured flows) out would "
        "take more than half of the 10 batches")
