import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mrfq.scenario import scenario_from_dict

FIG3_CLASSES = [
    {"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
    {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
    {"name": "3", "requirements": [1.0, 1.0], "load_share": 1},
]


def classes_toml(count: int = 3) -> str:
    """The first ``count`` Figure 3 classes as a scenario file's ``[[classes]]`` tables."""
    return "".join(f'[[classes]]\nname = "{c["name"]}"\nrequirements = {c["requirements"]}\n'
                   f'load_share = {c["load_share"]}\n' for c in FIG3_CLASSES[:count])


ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m mrfq ARGS`` in ``cwd`` with this checkout's package."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mrfq", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def assert_one_line_error(result: subprocess.CompletedProcess, start: str) -> None:
    """Bad input's contract: exit 2, one line on stderr starting with ``start``, no
    traceback."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), result.stderr
    assert "Traceback" not in result.stderr


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


@pytest.fixture(autouse=True)
def no_progress_line_left_open():
    """Each test starts with no progress line open on stderr: one left open by an earlier
    test (a run stopped by the exception it checks) made the next error message start
    with its newline, so tests that compare whole outputs depended on the order."""
    from mrfq import progress

    progress._state["open"] = False


@pytest.fixture
def rng():
    return np.random.default_rng(0)



def pytest_addoption(parser):
    parser.addoption("--warm-numba-cache", action="store_true",
                     help="compile every Numba kernel into its cache first, one process per "
                     "specialisation on every core (make test; see tests/warm_cache.py)")


def pytest_configure(config):
    # the controller warms the cache once; xdist's workers (which have workerinput) and
    # runs without the option start at once
    if not config.getoption("--warm-numba-cache") or hasattr(config, "workerinput"):
        return
    import time

    from warm_cache import warm

    start = time.perf_counter()
    failures = warm()
    print(f"numba cache warmed in {time.perf_counter() - start:.0f} s")
    for failure in failures:
        print(f"warm-up (the tests will say more): {failure}")


@pytest.fixture
def captured(monkeypatch):
    """The figures the plot functions draw, kept instead of saved (a list, in order)."""
    from mrfq import (  # matplotlib only for the plot tests
        plot_cluster,
        plot_flows,
        plot_network,
        plots,
    )

    figures = []

    def keep(fig, path, formats=None):
        figures.append(fig)
        return [path]

    monkeypatch.setattr(plots, "_save", keep)
    monkeypatch.setattr(plot_network, "_save", keep)
    monkeypatch.setattr(plot_flows, "_save", keep)
    monkeypatch.setattr(plot_cluster, "_save", keep)
    return figures


def assert_cluster_refuses(path, line: str) -> None:
    """``mrfq cluster PATH -o OUT`` (OUT beside PATH): exit 2, exactly ``line`` on stderr,
    nothing written."""
    out = path.parent / "out"
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "cluster", str(path), "-o",
                             str(out)], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [line]
    assert not out.exists()


def assert_kernel_matches_twin(policy: str, model, seed: int, exponential, jobs: int = 40):
    """``jobs`` Poisson jobs of ``model`` (seed ``seed``) run by the kernel and by the slow
    twin (tests/naive_cluster.py, ``exponential``: its duration law argument) finish at
    the same times, bit for bit, after the same number of task events."""
    from naive_cluster import naive_cluster

    from mrfq.cluster import workload
    from mrfq.cluster.model import simulate_jobs

    arrival, classes, tasks = workload(model, jobs, seed)
    finish, _, _, _, events = simulate_jobs(model, arrival, classes, tasks, seed)
    twin, twin_events = naive_cluster(policy, model.capacity, model.demand, model.weights,
                                      arrival, classes, tasks, model.durations, exponential,
                                      seed, model.slots_per_server)
    assert events == twin_events
    np.testing.assert_array_equal(finish, np.array(twin))
