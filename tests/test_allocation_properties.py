"""Hypothesis: the theorems the seed papers prove, on random instances."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq.allocation import (
    POLICIES,
    Problem,
    allocate,
    envy_free,
    pareto_optimal,
    sharing_incentive,
    strategy_proofness_probe,
)


@st.composite
def problems(draw, servers=1, constrained=False):
    n = draw(st.integers(2, 4))
    m = draw(st.integers(1, 3))
    cap = [[draw(st.integers(1, 20)) for _ in range(m)] for _ in range(servers)]
    demand = []
    for _ in range(n):
        row = [draw(st.integers(0, 5)) for _ in range(m)]
        if max(row) == 0:
            row[0] = 1
        demand.append(row)
    allowed = None
    if constrained:
        allowed = np.array([[draw(st.booleans()) for _ in range(servers)] for _ in range(n)])
        allowed[:, 0] |= ~allowed.any(axis=1)
    return Problem(capacity=cap, demand=demand, allowed=allowed)


@settings(max_examples=20, deadline=None)
@given(problems())
def test_drf_has_all_four_properties(problem):
    result = allocate(problem, "drf")
    assert result.feasible()
    assert sharing_incentive(result)[0]
    assert envy_free(result)[0]
    assert pareto_optimal(result)[0]
    assert strategy_proofness_probe(problem, POLICIES["drf"], trials=5)[0]


@settings(max_examples=15, deadline=None)
@given(problems(servers=2))
def test_drfh_pareto_and_envy_free(problem):
    result = allocate(problem, "drfh")
    assert result.feasible()
    assert pareto_optimal(result)[0]
    assert envy_free(result)[0]


@settings(max_examples=15, deadline=None)
@given(problems(servers=2, constrained=True))
def test_tsf_pareto_and_envy_free_with_constraints(problem):
    result = allocate(problem, "tsf")
    assert result.feasible()
    assert pareto_optimal(result)[0]
    assert envy_free(result)[0]


@settings(max_examples=15, deadline=None)
@given(problems())
def test_ceei_and_pf_pareto_and_envy_free(problem):
    for policy in ("ceei", "asset"):
        result = allocate(problem, policy)
        assert result.feasible()
        assert pareto_optimal(result)[0], policy
        assert envy_free(result)[0], policy
