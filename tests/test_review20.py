"""Review findings of the twentieth session (packet side), each with the code it guards."""

import time

import mrfq
from mrfq import simulation


def test_simulate_times_the_replications_not_the_fluid_variance_solve(monkeypatch):
    """``wall_s`` (and the services-per-second line) counted the Markov solve of the
    interval's variance as simulation time: bmf 15 M services/s where fifo, with no such
    solve, gave 72 on the same run (a review). A solve made to take 2 s must not show."""
    solve = simulation.fluid_reference

    def slow(*args, **kwargs):
        time.sleep(2.0)
        return solve(*args, **kwargs)

    monkeypatch.setattr(simulation, "fluid_reference", slow)
    result = mrfq.simulate("quickstart", "bmf", 0.3, flows=300)
    assert result.classes["ci_method"].iloc[0] == "fluid-variance"  # the solve ran
    assert float(result.classes["wall_s"].iloc[0]) < 1.5


def test_a_cycle_of_packet_types_refuses_probabilities_it_would_drop():
    """``packet_order = "cycle"`` sends the types in turn; probabilities 0.5 / 0.3 were
    accepted and stored as 0.5 / 0.5 (a review). 1/n each, as a stored scenario writes
    them, or none, are the cycle."""
    import pytest

    from mrfq.errors import InputError
    from mrfq.scenario import scenario_from_dict

    def scenario(probabilities):
        mix = [{"requirements": [1, 0.5]}, {"requirements": [0.2, 1]}]
        for entry, p in zip(mix, probabilities, strict=False):
            entry["probability"] = p
        return scenario_from_dict({"resources": ["cpu", "link"], "classes": [
            {"name": "x", "packets": mix, "packet_order": "cycle", "load_share": 1}]})

    with pytest.raises(InputError, match=r"packets\[1\].probability: packet_order"):
        scenario([0.5, 0.3])
    plain = scenario([])
    assert list(plain.classes[0].packet_probabilities) == [0.5, 0.5]
    stored = scenario_from_dict(plain.to_dict())
    assert list(stored.classes[0].packet_probabilities) == [0.5, 0.5]
    assert list(scenario([0.5, 0.5]).classes[0].packet_probabilities) == [0.5, 0.5]


def test_the_count_line_counts_joint_intervals_apart():
    """``fluid_in_ci`` holds the joint-interval test for a simulated fluid value; the
    console line called all of them "the fluid value in the 95% CI" (a review)."""
    import pandas as pd

    from mrfq.validation import count_line

    table = pd.DataFrame({"passed": [True, True, True, False],
                          "fluid_in_ci": [True, True, False, False],
                          "verdict": ["fluid in CI", "within joint CI", "within tolerance",
                                      "outside CI and tolerance"]})
    assert count_line(table, 0.05) == (
        "3/4 points pass (1 with the fluid value in the 95% CI, 1 within the joint CI of "
        "a simulated fluid value, 1 within 5%)")
    markov = table.assign(verdict=["fluid in CI"] * 2 + list(table["verdict"][2:]))
    assert count_line(markov, 0.05) == (
        "3/4 points pass (2 with the fluid value in the 95% CI, 1 within 5%)")


def test_the_dominant_share_lines_reach_the_end_of_the_last_interval(monkeypatch):
    """Each interval's value holds until the next interval; the step lines stopped at the
    last interval's start, one interval short of the duration (a review)."""
    import numpy as np
    import pandas as pd

    from mrfq import plot_flows

    rows = pd.DataFrame({"policy": "drfq", "flow": np.repeat(["A", "B"], 3),
                         "resource": "dominant", "time": [0.0, 10.0, 20.0] * 2,
                         "share": [0.5, 0.4, 0.3, 0.5, 0.6, 0.7],
                         "fair_share": [0.5] * 6})
    drawn = {}
    monkeypatch.setattr(plot_flows, "_save",
                        lambda fig, path, formats: drawn.setdefault("f", fig))
    plot_flows.dominant_share_over_time(rows, "unused")
    lines = [line for ax in drawn["f"].axes for line in ax.get_lines()]
    assert len(lines) == 4
    for line in lines:
        assert max(line.get_xdata()) == 30.0


def test_a_timeline_interval_must_divide_its_duration():
    """250 / 100: the last interval [200, 300) ran past the duration, its shares over
    100 time units of which 50 were run."""
    import pytest

    from mrfq.errors import InputError
    from mrfq.scenario import load_scenario, scenario_from_dict

    raw = load_scenario("isolation_rogue").to_dict()
    with pytest.raises(InputError, match=r"timeline.interval: must divide the duration "
                                         r"\(400 / 30 = 13.3333 intervals\)"):
        scenario_from_dict({**raw, "timeline": {"duration": 400, "interval": 30}})
    assert scenario_from_dict({**raw, "timeline": {"duration": 0.3, "interval": 0.1}})


def test_a_duration_of_whole_intervals_up_to_rounding_has_no_bin_past_its_end():
    """12.3 / 0.3 is 41.000000000000006 in floating point: accepted as 41 intervals, and
    the timeline had a 42nd, starting at 12.3, with a link share of 3.33 (a review)."""
    from mrfq.packet.flows import run_flows
    from mrfq.scenario import load_scenario, scenario_from_dict

    raw = load_scenario("isolation_rogue").to_dict()
    raw["flows"] = [{**f, "stop": min(f.get("stop", 12.3), 12.3)} for f in raw["flows"]]
    scenario = scenario_from_dict({**raw, "timeline": {"duration": 12.3, "interval": 0.3}})
    times = run_flows(scenario, "drfq").timeline["time"].unique()
    assert len(times) == 41 and max(times) < 12.3 - 0.29
