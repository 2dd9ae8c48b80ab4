"""Fluid allocators: the papers' worked examples and hypothesis properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq.errors import InputError
from mrfq.fluid.allocators import (
    allocate,
    bmf_conditions,
    is_pareto_efficient,
    resource_usage,
)

# --- BR §2 examples -------------------------------------------------------------------


def test_br_pf_example_and_misreports():
    assert allocate("pf", [[0.5, 1], [1, 0.5]]) == pytest.approx([2 / 3, 2 / 3], abs=1e-12)
    assert allocate("pf", [[2 / 3, 1], [1, 0.5]]) == pytest.approx([3 / 4, 1 / 2], abs=1e-12)
    assert allocate("pf", [[1, 1], [1, 0.5]]) == pytest.approx([1 / 2, 1 / 2], abs=1e-12)


def test_br_bmf_three_resource_family():
    a = [[1, 1, 1], [1, 0.5, 0.75], [0.5, 1, 0.75]]
    for x in np.linspace(0, 1, 11):
        phi = [2 / 5 - x / 15, 2 / 5 + 2 * x / 45, 2 / 5 + 2 * x / 45]
        assert bmf_conditions(a, [1, 1, 1], phi)["holds"], x
    # outside the family the conditions fail
    assert not bmf_conditions(a, [1, 1, 1], [0.3, 0.3, 0.3])["holds"]
    chosen = allocate("bmf", a)
    assert bmf_conditions(a, [1, 1, 1], chosen)["holds"]
    # documented rule: the feasible mapping allocation with the largest PF objective
    assert chosen == pytest.approx([1 / 3, 4 / 9, 4 / 9], abs=1e-12)


# --- SimGrid's BMF test vectors --------------------------------------------------------


def test_simgrid_bmf_two_flows():
    assert allocate("bmf", [[1, 10], [10, 1]]) == pytest.approx([1 / 11, 1 / 11], abs=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 0.05, 0.2])
def test_simgrid_bmf_epsilon_flows_equal_pf(eps):
    a = [[1, eps], [1, eps], [eps, 1]]
    expected = [1 / (2 + 2 * eps), 1 / (2 + 2 * eps), 1 / (1 + eps)]
    assert allocate("bmf", a) == pytest.approx(expected, abs=1e-12)
    assert allocate("pf", a) == pytest.approx(expected, abs=1e-10)


def test_simgrid_bmf_three_resources_accepts_both():
    a = [[1, 1, 1], [1, 0.5, 0.75], [0.5, 1, 0.75]]
    assert bmf_conditions(a, [1, 1, 1], [1 / 3, 4 / 9, 4 / 9])["holds"]
    assert bmf_conditions(a, [1, 1, 1], [2 / 5, 2 / 5, 2 / 5])["holds"]


# --- DRF slides -----------------------------------------------------------------------


def test_drf_slides_example():
    # <9 CPU, 18 GB>; user 1 <1 CPU, 4 GB>, user 2 <3 CPU, 1 GB>: 3 and 2 tasks
    a = [[1 / 9, 4 / 18], [3 / 9, 1 / 18]]
    tasks = allocate("drf", a)
    assert tasks == pytest.approx([3, 2], abs=1e-12)
    dominant = tasks * np.max(a, axis=1)
    assert dominant == pytest.approx([2 / 3, 2 / 3], abs=1e-12)


def test_drf_zero_requirements():
    # node (10, 10); task types (1,1), (1,0), (0,1): dominant share 1/2 each
    a = np.array([[1, 1], [1, 0], [0, 1]]) / 10
    tasks = allocate("drf", a)
    assert tasks * a.max(axis=1) == pytest.approx([0.5, 0.5, 0.5], abs=1e-12)


def test_bad_inputs():
    with pytest.raises(InputError, match="unknown policy"):
        allocate("xyz", [[1, 1]])
    with pytest.raises(InputError, match="non-negative"):
        allocate("pf", [[-1, 1]])
    with pytest.raises(InputError, match="all zero"):
        allocate("drf", [[0, 0], [1, 1]])


# --- properties -------------------------------------------------------------------------


@st.composite
def instances(draw, max_classes=4, max_resources=3):
    K = draw(st.integers(1, max_classes))
    J = draw(st.integers(1, max_resources))
    entries = st.one_of(st.just(0.0), st.floats(0.05, 1.0))
    rows = []
    for _ in range(K):
        row = [draw(entries) for _ in range(J)]
        if max(row) == 0:
            row[draw(st.integers(0, J - 1))] = 1.0
        m = max(row)
        rows.append([v / m for v in row])
    counts = [draw(st.integers(0, 5)) for _ in range(K)]
    if sum(counts) == 0:
        counts[0] = 1
    return np.array(rows), np.array(counts, dtype=float)


def _feasible(a, n, phi):
    return np.all(resource_usage(a, n, phi) <= 1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(instances())
def test_all_policies_feasible_and_pareto(instance):
    a, n = instance
    for policy in ("drf", "pf"):
        phi = allocate(policy, a, n)
        assert _feasible(a, n, phi)
        assert is_pareto_efficient(a, n, phi, tol=1e-7)
    if a.shape[1] <= 2:
        phi = allocate("bmf", a, n)
        assert _feasible(a, n, phi)
        assert is_pareto_efficient(a, n, phi, tol=1e-7)


@settings(max_examples=300, deadline=None)
@given(instances())
def test_drf_max_min_dominant_shares(instance):
    """Every class has a saturated resource it uses on which no class has a larger
    dominant share (the max-min characterisation of progressive filling); and the
    classes frozen first hold the smallest dominant share, at the level where the first
    resource saturates with every class at one dominant share s:
    s* = 1 / max_j Σ_k n_k a_kj / max_r a_kr (computed here, not by the allocator)."""
    a, n = instance
    phi = allocate("drf", a, n)
    dominant = phi * a.max(axis=1)
    active = n > 0
    usage = resource_usage(a, n, phi)
    for k in np.flatnonzero(active):
        ok = False
        for j in np.flatnonzero((usage >= 1 - 1e-9) & (a[k] > 0)):
            users = active & (a[:, j] > 0)
            if dominant[k] >= dominant[users].max() - 1e-9:
                ok = True
        assert ok
    per_unit_share = (n[:, None] * a / a.max(axis=1, keepdims=True)).sum(axis=0)
    first_level = 1 / per_unit_share.max()
    assert dominant[active].min() == pytest.approx(first_level, rel=1e-9)
    # every class using a resource that saturates at that first level is frozen there
    first = np.isclose(per_unit_share, per_unit_share.max(), rtol=1e-12)
    for k in np.flatnonzero(active & np.any(a[:, first] > 0, axis=1)):
        assert dominant[k] == pytest.approx(first_level, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(instances())
def test_pf_kkt_optimality(instance):
    """PF: Σ_k n_k (φ'_k − φ_k)/φ_k ≤ 0 for every feasible φ' (BR §2.3); checked on the
    vertices of the feasible region along each class and on random feasible points."""
    a, n = instance
    phi = allocate("pf", a, n)
    rng = np.random.default_rng(0)
    active = n > 0
    for _ in range(50):
        direction = rng.random(len(n)) * active
        usage = resource_usage(a, n, direction)
        scale = 1 / usage.max() if usage.max() > 0 else 0
        other = direction * scale
        assert np.sum(n[active] * (other[active] - phi[active]) / phi[active]) <= 1e-7


@settings(max_examples=200, deadline=None)
@given(instances(max_resources=2))
def test_bmf_conditions_hold(instance):
    a, n = instance
    phi = allocate("bmf", a, n)
    assert bmf_conditions(a, n, phi, tol=1e-7)["holds"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.1, 1.0), min_size=1, max_size=5),
       st.lists(st.integers(0, 6), min_size=5, max_size=5))
def test_single_resource_all_equal(reqs, counts):
    a = np.array(reqs)[:, None]
    n = np.array(counts[: len(reqs)], dtype=float)
    if n.sum() == 0:
        n[0] = 1
    results = [allocate(p, a, n) for p in ("drf", "pf", "bmf")]
    for r in results[1:]:
        assert r == pytest.approx(results[0], abs=1e-9)
    # single-resource fairness: equal shares φ_k a_k = 1 / Σ n
    shares = results[0] * a[:, 0]
    assert shares[n > 0] == pytest.approx(1 / n.sum(), abs=1e-9)
