"""The flow-level simulator after an eighteenth-session review (each red on the code
before): a trace given to ``simulate_flows`` was not checked (a class index of 7 of 3 read
past the loop's arrays and ended in "arrival trace exhausted"; NaN works likewise;
negative works ran); balanced fairness with eight loaded classes allocated its first box
of 16^8 states (34 GB: a MemoryError, "internal error", exit 3), now a located one-line
error, as is the box of three classes at load 0.99 (it named no file)."""

import numpy as np
import pytest

from mrfq.errors import InputError
from mrfq.fluid import simulate_flows
from mrfq.fluid.method import flow_point
from mrfq.scenario import scenario_from_dict

A = [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]
RHO = [0.2, 0.1, 0.1]


@pytest.mark.parametrize("case, message", [
    ("class 7", "classes must be integers 0 … 2"),
    ("float classes", "classes must be integers 0 … 2"),
    ("negative work", "works must be finite and > 0"),
    ("NaN work", "works must be finite and > 0"),
    ("NaN time", "must be sorted by time (finite)"),
    ("short", "must be (times, classes, works) of equal lengths"),
])
def test_a_trace_is_checked_before_the_loop(case, message):
    times, classes, works = np.arange(1.0, 1001.0), np.zeros(1000, dtype=int), np.ones(1000)
    if case == "class 7":
        classes[10] = 7
    elif case == "float classes":
        classes = classes + 0.5
    elif case == "negative work":
        works[10] = -5.0
    elif case == "NaN work":
        works[10] = np.nan
    elif case == "NaN time":
        times[500:] = np.nan
    else:
        works = works[:-1]
    with pytest.raises(InputError, match=f"^arrivals: {message}".replace("(", r"\(")
                       .replace(")", r"\)")):
        simulate_flows(A, RHO, "drf", arrivals=(times, classes, works), flows=1000)


def test_balanced_fairness_over_its_first_box_is_a_located_error():
    eight = [[1.0 if j == k else 0.0 for j in range(8)] for k in range(8)]
    raw = {"name": "bf8", "resources": [f"r{j}" for j in range(8)],
           "classes": [{"name": f"c{k}", "requirements": a, "load_share": 1}
                       for k, a in enumerate(eight)],
           "load": {"axis": "max", "values": [0.9]},
           "fluid": {"policies": ["bf"], "method": "simulation", "flows": 1000}}
    scenario = scenario_from_dict(raw, "bf8.toml")
    with pytest.raises(InputError) as info:
        flow_point(scenario, "bf", 0.9)
    assert info.value.message.startswith(  # (the CLI's line; str() is the first one)
        "bf8.toml: fluid.policies: balanced fairness needs Φ on a box of 16 states per "
        "loaded class, 4.29e+09")
