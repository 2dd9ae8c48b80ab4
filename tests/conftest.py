from functools import cache

import numpy as np
import pytest

from mrfq.scenario import scenario_from_dict

FIG3_CLASSES = [
    {"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
    {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
    {"name": "3", "requirements": [1.0, 1.0], "load_share": 1},
]


def make_scenario(classes=None, resources=("cpu", "link"), axis="max", **packet):
    raw = {
        "name": "test",
        "resources": list(resources),
        "classes": classes or FIG3_CLASSES,
        "load": {"axis": axis, "values": [0.5]},
        "packet": {"flows": 200, "mean_size": 20, "window": 5, "warmup": 0.05, **packet},
    }
    return scenario_from_dict(raw)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def brute_force_phi(requirements):
    """The balance function of balanced fairness, Φ(0) = 1,
    Φ(n) = max_j Σ_{k: n_k>0} a_kj Φ(n − e_k): plain memoised recursion, the tests'
    naive twin (Bonald & Proutière)."""
    a = [list(map(float, row)) for row in requirements]

    @cache
    def phi(n):
        if sum(n) == 0:
            return 1.0
        best = 0.0
        for j in range(len(a[0])):
            total = 0.0
            for k in range(len(n)):
                if n[k] > 0:
                    below = n[:k] + (n[k] - 1,) + n[k + 1:]
                    total += a[k][j] * phi(below)
            best = max(best, total)
        return best

    return phi
