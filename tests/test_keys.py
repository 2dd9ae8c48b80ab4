"""Finished points stay found: a point's file name (its key) depends only on what
determines its numbers, so a refactor must not change it (issue 21).

The committed results directory ``reproduction/fig3_all_policies`` (every packet policy,
with Δ and ``fq_resource``, and the fluid curves) was written by an earlier version of
mrfq: every one of its point files must still be the name the sweep computes. The
explicit-law (balanced fairness) and flow-level kinds are pinned by names recorded from
the same earlier version (2ed91da) for packaged scenarios.
"""

from dataclasses import replace
from pathlib import Path

import pytest

from mrfq.kinds import Point, point_filename
from mrfq.scenario import load_scenario
from mrfq.sweeps import POINTS_DIR, stored_scenario, sweep_points

ROOT = Path(__file__).resolve().parent.parent


def test_every_committed_point_of_fig3_all_policies_is_found():
    results = ROOT / "reproduction" / "fig3_all_policies"
    scenario = stored_scenario(results)
    stored = {p.name for p in (results / POINTS_DIR).glob("*.json")}
    expected = {point_filename(scenario, point) for point in sweep_points(scenario)}
    assert len(stored) == 90
    assert expected == stored


@pytest.mark.parametrize("scenario_name, method, point, name", [
    # balanced fairness: the explicit-law kind
    ("fig1_balanced", None, ("fluid", "bf", 0.5), "fluid-bf-0.5-ed39ce9232bf58e0.json"),
    ("fig1_balanced", None, ("fluid", "bf", 0.9), "fluid-bf-0.9-1c75287bfc4fcb64.json"),
    # the flow-level kind (fig2_unbalanced with [fluid] method = "simulation"); its
    # FLOWSIM_VERSION 3 (2026-11-28: the start-up cut, Tin's factor and lugsail batches)
    # renamed its points; version 2 named these 8efc61e4680da0fe and 85a0db200e257861
    ("fig2_unbalanced", "simulation", ("fluid", "drf", 0.6),
     "fluid-drf-0.6-28e3fe26374e9d1c.json"),
    ("fig2_unbalanced", "simulation", ("fluid", "bf", 0.6),
     "fluid-bf-0.6-dfca6c91d0e79c23.json"),
    # the Markov and packet kinds of the main job; DRFQ with BR's clock (``virtual_time =
    # "started"``), which every DRFQ point before the option used (issue 22)
    # (the Markov solver's SOLVER_VERSION 5, 2026-11-28: at least two changes before a
    # stop, so its points were renamed; version 4 named this one 662f683161a09e33; 6,
    # 2026-11-29: the flow variance settled, version 5 named it 1b5e8c9ac6abfc6e)
    ("fig3_quick", None, ("fluid", "drf", 0.5), "fluid-drf-0.5-f9c025190964a013.json"),
    ("fig3_quick", "started", ("packet", "drfq", 0.9, 0),
     "packet-drfq-0.9-r0-d3351d1ee4b8d040.json"),
    ("fig3_quick", None, ("packet", "pf", 0.1, 0), "packet-pf-0.1-r0-9cf1e8471eb0a9ec.json"),
])
def test_point_names_recorded_by_an_earlier_version_still_hold(scenario_name, method,
                                                                point, name):
    scenario = load_scenario(scenario_name)
    if method == "started":
        scenario = scenario.with_overrides(virtual_time=method)
    elif method is not None:
        scenario = replace(scenario, fluid=replace(scenario.fluid, method=method))
    assert point_filename(scenario, Point(*point)) == name


def test_the_in_service_clock_is_a_new_point():
    """The default clock changed DRFQ's numbers, so its points have other names."""
    scenario = load_scenario("fig3_quick")
    point = Point("packet", "drfq", 0.9, 0)
    assert (point_filename(scenario, point)
            != point_filename(scenario.with_overrides(virtual_time="started"), point))
