"""A scenario compares by value and survives its stored dict exactly.

``Scenario == Scenario`` used to raise (numpy fields asked for one truth value), and a
packet mix drifted in its last bits at every ``to_dict`` / ``scenario_from_dict`` round
trip (the normalised vectors were divided again by a scale one rounding away from 1), so
a results directory's ``scenario.json`` read back was not the scenario that ran.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq.scenario import load_scenario, scenario_from_dict

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = sorted((ROOT / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", PACKAGED, ids=lambda p: p.stem)
def test_packaged_scenarios_equal_themselves_and_their_stored_dict(path):
    first, second = load_scenario(path), load_scenario(path)
    assert first == second and hash(first) == hash(second)
    stored = scenario_from_dict(first.to_dict())  # another source, the same scenario
    assert stored == first and hash(stored) == hash(first)
    assert len({first, second, stored}) == 1


def test_a_changed_field_makes_scenarios_unequal():
    scenario = load_scenario(ROOT / "scenarios" / "fig3_quick.toml")
    assert scenario != scenario.with_overrides(window=scenario.packet.window + 1)
    assert scenario.classes[0] == scenario.classes[0]
    assert scenario.classes[0] != scenario.classes[1]  # differ in their arrays
    assert scenario != "fig3_quick"


requirement = st.floats(min_value=0.01, max_value=5.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(requirement, requirement, st.floats(0.05, 1.0)),
                min_size=2, max_size=4))
def test_a_packet_mix_survives_round_trips_bit_for_bit(entries):
    weights = np.array([w for _, _, w in entries])
    probabilities = weights / weights.sum()
    scenario = scenario_from_dict({
        "name": "mix", "resources": ["cpu", "link"],
        "load": {"axis": "max", "values": [0.5]},
        "classes": [{"name": "a", "load_share": 1, "packets": [
            {"requirements": [a, b], "probability": float(p)}
            for (a, b, _), p in zip(entries, probabilities, strict=True)]}],
    })
    once = scenario_from_dict(scenario.to_dict())
    twice = scenario_from_dict(once.to_dict())
    for copy in (once, twice):
        np.testing.assert_array_equal(copy.classes[0].packet_requirements,
                                      scenario.classes[0].packet_requirements)
        np.testing.assert_array_equal(copy.requirements, scenario.requirements)
        assert copy == scenario
    # normalised as documented: the mean packet's largest requirement is 1, exactly
    assert scenario.requirements.max() == 1.0
    mean = probabilities @ np.array([[a, b] for a, b, _ in entries])
    np.testing.assert_allclose(scenario.classes[0].packet_requirements,
                               np.array([[a, b] for a, b, _ in entries]) / mean.max(),
                               rtol=1e-12)


def test_a_size_law_hashes_as_it_compares():
    """``hash(class.size)`` raised (a dict among its fields)."""
    from mrfq.sizes import parse_size

    for name in ("quickstart", "websearch_mix", "random_network"):
        first, again = load_scenario(name), load_scenario(name)
        for a, b in zip(first.classes, again.classes, strict=True):
            assert a.size == b.size and hash(a.size) == hash(b.size)
    assert parse_size({"distribution": "pareto", "shape": 2.5}) != parse_size(
        {"distribution": "pareto", "shape": 3.0})
