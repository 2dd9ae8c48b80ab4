"""Scenario.class_loads / resource_loads: fluid and packet points both take their loads
from here, so a wrong value would pass every fluid-vs-packet validation. Expected values
are worked out by hand (in the comments), not recomputed with the same code."""

import numpy as np
import pytest

from mrfq.scenario import scenario_from_dict

FIG3 = [  # a = (0.1, 1), (1, 0.1), (1, 1); load shares 4, 1, 1
    {"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
    {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
    {"name": "3", "requirements": [1.0, 1.0], "load_share": 1},
]


def scenario(classes, axis, values=(0.5,)):
    return scenario_from_dict({"resources": ["cpu", "link"], "classes": classes,
                               "load": {"axis": axis, "values": list(values)}})


def test_fig3_link_axis():
    # Σ share·a: cpu 0.4 + 1 + 1 = 2.4, link 4 + 0.1 + 1 = 5.1.
    # link at 1/2: ρ = (4, 1, 1) / (2 · 5.1) = (20, 5, 5) / 51; cpu = 2.4 / 10.2 = 4/17
    sc = scenario(FIG3, "link")
    assert sc.class_loads(0.5) == pytest.approx([20 / 51, 5 / 51, 5 / 51], rel=1e-14)
    assert sc.resource_loads(0.5) == pytest.approx([4 / 17, 0.5], rel=1e-14)


def test_fig3_cpu_axis():
    # cpu at 0.4: ρ = (4, 1, 1) · 0.4 / 2.4 = (2/3, 1/6, 1/6); link = 5.1 / 6 = 0.85
    sc = scenario(FIG3, "cpu", values=(0.4,))
    assert sc.class_loads(0.4) == pytest.approx([2 / 3, 1 / 6, 1 / 6], rel=1e-14)
    assert sc.resource_loads(0.4) == pytest.approx([0.4, 0.85], rel=1e-14)


@pytest.mark.parametrize("axis,index", [("cpu", 0), ("link", 1)])
@pytest.mark.parametrize("load", [0.05, 0.37, 0.9, 2.0])
def test_axis_resource_load_is_the_requested_value(axis, index, load):
    # any value, stable or not (class_loads does not judge stability; check_load does)
    sc = scenario(FIG3, axis, values=(0.1,))
    assert sc.resource_loads(load)[index] == pytest.approx(load, rel=1e-14)
    # and the loads keep the shares' ratios 4 : 1 : 1
    rho = sc.class_loads(load)
    assert rho / rho[1] == pytest.approx([4, 1, 1], rel=1e-14)


def test_max_axis_follows_the_most_loaded_resource():
    # Figure 3: link is the most loaded (5.1 > 2.4), so "max" = "link"
    assert scenario(FIG3, "max").class_loads(0.5) == pytest.approx(
        [20 / 51, 5 / 51, 5 / 51], rel=1e-14)
    # here cpu is: a = (1, 0.5), (1, 0.2), shares 1, 2 -> cpu 3, link 0.5 + 0.4 = 0.9;
    # max at 0.6: ρ = (1, 2) · 0.6 / 3 = (0.2, 0.4); link = 0.1 + 0.08 = 0.18
    classes = [{"requirements": [1, 0.5], "load_share": 1},
               {"requirements": [1, 0.2], "load_share": 2}]
    sc = scenario(classes, "max")
    assert sc.class_loads(0.6) == pytest.approx([0.2, 0.4], rel=1e-14)
    assert sc.resource_loads(0.6) == pytest.approx([0.6, 0.18], rel=1e-14)
    assert sc.resource_loads(0.6).max() == pytest.approx(0.6, rel=1e-14)


def test_packet_mix_uses_the_normalised_mean_vector():
    # mix: (1, 0.5) and (0.2, 1) with probability 1/2 each: mean (0.6, 0.75), normalised
    # (0.8, 1); the other class (2, 0.5) normalises to (1, 0.25).
    # Σ share·a with shares 2, 1: cpu 1.6 + 1 = 2.6, link 2 + 0.25 = 2.25.
    # link at 0.45: ρ = (2, 1) · 0.2 = (0.4, 0.2); cpu = 2.6 · 0.2 = 0.52
    classes = [{"name": "mix", "load_share": 2,
                "packets": [{"requirements": [1, 0.5], "probability": 0.5},
                            {"requirements": [0.2, 1], "probability": 0.5}]},
               {"name": "plain", "load_share": 1, "requirements": [2, 0.5]}]
    sc = scenario(classes, "link", values=(0.45,))
    assert sc.requirements == pytest.approx(np.array([[0.8, 1], [1, 0.25]]), rel=1e-14)
    assert sc.class_loads(0.45) == pytest.approx([0.4, 0.2], rel=1e-14)
    assert sc.resource_loads(0.45) == pytest.approx([0.52, 0.45], rel=1e-14)


def test_unequal_and_cycled_mixes():
    # (1, 0) w.p. 1/4 and (0, 1) w.p. 3/4: mean (1/4, 3/4) -> (1/3, 1).
    # cycle over (1, 0), (0, 1), (0, 1): 1/3 each, mean (1/3, 2/3) -> (1/2, 1) (other
    # probabilities are refused: tests/test_review20.py).
    # shares 1, 1: cpu 1/3 + 1/2 = 5/6, link 2; link at 0.5: ρ = (1/4, 1/4), cpu = 5/24
    classes = [{"load_share": 1, "packets": [{"requirements": [1, 0], "probability": 0.25},
                                             {"requirements": [0, 1], "probability": 0.75}]},
               {"load_share": 1, "packet_order": "cycle",
                "packets": [{"requirements": [1, 0]}, {"requirements": [0, 1]},
                            {"requirements": [0, 1], "probability": 1 / 3}]}]
    sc = scenario(classes, "link")
    assert sc.requirements == pytest.approx(np.array([[1 / 3, 1], [0.5, 1]]), rel=1e-14)
    assert sc.class_loads(0.5) == pytest.approx([0.25, 0.25], rel=1e-14)
    assert sc.resource_loads(0.5) == pytest.approx([5 / 24, 0.5], rel=1e-14)


def test_zero_share_class_has_no_load_and_weights_do_not_matter():
    classes = [{"requirements": [1, 0.5], "load_share": 3, "weight": 5},
               {"requirements": [0.5, 1], "load_share": 0}]
    # cpu 3, link 1.5; cpu at 0.9: ρ = (0.9, 0); link 0.45
    sc = scenario(classes, "cpu", values=(0.9,))
    assert sc.class_loads(0.9) == pytest.approx([0.9, 0.0], abs=1e-15)
    assert sc.resource_loads(0.9) == pytest.approx([0.9, 0.45], rel=1e-14)
