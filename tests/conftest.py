import numpy as np
import pytest

from mrfq.scenario import scenario_from_dict

FIG3_CLASSES = [
    {"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
    {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
    {"name": "3", "requirements": [1.0, 1.0], "load_share": 1},
]


def make_scenario(classes=None, resources=("cpu", "link"), axis="max", routers=None,
                  **packet):
    raw = {
        "name": "test",
        "resources": list(resources),
        "classes": classes or FIG3_CLASSES,
        "load": {"axis": axis, "values": [0.5]},
        "packet": {"flows": 200, "mean_size": 20, "window": 5, "warmup": 0.05, **packet},
    }
    if routers is not None:
        raw["routers"] = routers
    return scenario_from_dict(raw)


@pytest.fixture
def rng():
    return np.random.default_rng(0)

