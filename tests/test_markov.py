"""Markov demand model: exact anchors (SPEC §2) and error estimates."""

import numpy as np
import pytest

from mrfq.errors import InputError
from mrfq.fluid.markov import fluid_curves, service_rates
from mrfq.scenario import scenario_from_dict


@pytest.mark.parametrize("policy", ["drf", "pf", "bmf"])
@pytest.mark.parametrize("loads", [[0.3], [0.2, 0.5], [0.1, 0.3, 0.4]])
def test_single_resource_is_processor_sharing(policy, loads):
    a = np.ones((len(loads), 1))
    exact = 1 - sum(loads)
    # the default tolerance: the error estimate must be honest about the true error
    result = service_rates(policy, a, loads)
    assert np.all(result.error_estimate <= 1e-5)
    assert np.all(np.abs(result.gamma - exact) / exact <= 3 * result.error_estimate + 1e-9)
    # a tighter tolerance reaches the exact value to 1e-6 absolute
    tight = service_rates(policy, a, loads, tolerance=1e-7)
    assert tight.gamma == pytest.approx(exact, abs=1e-6)


@pytest.mark.parametrize("policy", ["drf", "pf", "bmf"])
def test_orthogonal_classes_are_independent_ps_queues(policy):
    rho = np.array([0.6, 0.3])
    result = service_rates(policy, [[1, 0], [0, 1]], rho, tolerance=1e-7)
    assert result.gamma == pytest.approx(1 - rho, abs=1e-6)


def test_unstable_load_is_rejected():
    with pytest.raises(InputError, match="unstable"):
        service_rates("pf", [[1, 0.5], [0.5, 1]], [0.8, 0.5])


def test_fluid_curves_table_and_paper_ordering():
    scenario = scenario_from_dict({
        "resources": ["cpu", "link"],
        "classes": [
            {"name": "1", "requirements": [0.1, 1], "load_share": 4},
            {"name": "2", "requirements": [1, 0.1], "load_share": 1},
            {"name": "3", "requirements": [1, 1], "load_share": 1},
        ],
        "load": {"axis": "link", "values": [0.3, 0.6]},
    })
    table = fluid_curves(scenario)
    assert set(table.columns) >= {"policy", "load", "class", "gamma", "mean_in_progress",
                                  "error_estimate"}
    assert len(table) == 3 * 2 * 3
    assert (table["error_estimate"] <= 1e-5).all()
    for (_, _), part in table.groupby(["policy", "load"]):
        g = dict(zip(part["class"], part["gamma"], strict=True))
        assert g["2"] > g["1"] > g["3"]  # BR Figure 2 claim
