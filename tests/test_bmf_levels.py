"""The fast BMF (fixed point of local fair queueing, mrfq/fluid/bmf_levels.py) against the
BMF definition (BR §2.4), the enumerating allocator and closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq.fluid import allocate, bmf_conditions, kernels
from mrfq.fluid.bmf_levels import bmf_levels, bottleneck_mapping
from mrfq.scenario import load_scenario


def fast_bmf(a, n, w=None):
    """The fast path of kernels.bmf, forced (whatever the number of mappings)."""
    a = np.asarray(a, float)
    n = np.asarray(n, float)
    w = np.ones(len(n)) if w is None else np.asarray(w, float)
    K, J = a.shape
    levels = np.zeros(J)
    mapping = np.zeros(K, np.int64)
    phi = np.zeros(K)
    assert bmf_levels(a, n, w, levels) > 0
    assert bottleneck_mapping(a, n, w, levels, mapping)
    assert kernels.bmf_mapping_allocation(a, n, w, mapping, phi)
    return phi


@st.composite
def problems(draw, max_k=5, max_j=4):
    K = draw(st.integers(1, max_k))
    J = draw(st.integers(1, max_j))
    a = np.array([[draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 1.0])) for _ in range(J)]
                  for _ in range(K)])
    for k in range(K):
        if a[k].max() == 0.0:
            a[k, draw(st.integers(0, J - 1))] = 1.0
    n = np.array([draw(st.integers(0, 3)) for _ in range(K)], float)
    if n.sum() == 0:
        n[0] = 1.0
    w = np.array([draw(st.sampled_from([1.0, 2.0, 0.5])) for _ in range(K)])
    return a, n, w


@settings(max_examples=300, deadline=None)
@given(problems())
def test_fast_bmf_satisfies_the_definition(problem):
    """Capacity, and every active class maximal on a saturated resource (BR §2.4)."""
    a, n, w = problem
    phi = fast_bmf(a, n, w)
    assert bmf_conditions(a, n, phi, w, tol=1e-8)["holds"]
    assert np.all(phi[n == 0] == 0.0)


@settings(max_examples=200, deadline=None)
@given(problems(max_j=2))
def test_two_resources_match_the_enumeration(problem):
    """For J ≤ 2 the BMF allocation is unique (BR §2.4): both allocators find it."""
    a, n, w = problem
    reference = allocate("bmf", a, n, w)
    np.testing.assert_allclose(fast_bmf(a, n, w), reference, rtol=1e-9, atol=1e-12)


def test_one_resource_is_weighted_fair_sharing():
    """One resource: equal weighted shares, φ_k a_k / w_k = 1 / Σ n_i w_i."""
    a = np.array([[0.5], [1.0], [0.2]])
    n = np.array([1.0, 2.0, 3.0])
    w = np.array([1.0, 2.0, 1.0])
    level = 1.0 / (n @ w)
    np.testing.assert_allclose(fast_bmf(a, n, w), w * level / a[:, 0], rtol=1e-12)


def test_linear_network_is_max_min():
    """Unit requirements on routes: BMF is network max-min fairness. A line of 3 links,
    one flow over all and one per link (the long flow on a link it shares with two
    one-link flows): the long flow gets 1/3 there, the short flows the rest."""
    a = np.array([[1.0, 1.0, 1.0], [1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    n = np.array([1.0, 1.0, 2.0, 1.0])
    np.testing.assert_allclose(fast_bmf(a, n), [1 / 3, 2 / 3, 1 / 3, 2 / 3], rtol=1e-12)


def test_br_example_with_a_continuum_of_bmf_allocations():
    """BR §2.4: a1 = (1,1,1), a2 = (1,1/2,3/4), a3 = (1/2,1,3/4): φ(x) = (2/5 − x/15,
    2/5 + 2x/45, 2/5 + 2x/45), 0 ≤ x ≤ 1, are all BMF; local fair queueing's fixed point
    is the end x = 1, (1/3, 4/9, 4/9), as the enumeration's choice."""
    a = np.array([[1, 1, 1], [1, 0.5, 0.75], [0.5, 1, 0.75]])
    n = np.ones(3)
    np.testing.assert_allclose(fast_bmf(a, n), [1 / 3, 4 / 9, 4 / 9], rtol=1e-12)
    np.testing.assert_allclose(allocate("bmf", a, n), [1 / 3, 4 / 9, 4 / 9], rtol=1e-12)


def test_large_networks_take_the_fast_path():
    """The random network (15 classes, 12 resources: 5.4e9 mappings) is allocated by the
    fixed point, which satisfies the definition in every state tried."""
    a = np.asarray(load_scenario("random_network").requirements, float)
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = rng.integers(0, 4, a.shape[0]).astype(float)
        n[rng.integers(a.shape[0])] += 1
        phi = allocate("bmf", a, n)
        assert bmf_conditions(a, n, phi, tol=1e-8)["holds"]
        np.testing.assert_allclose(phi, fast_bmf(a, n), rtol=0, atol=0)


def test_a_resource_leaving_saturation_is_a_change():
    """Regression: a level going from finite to ∞ (the resource's demands now fit) is a
    change, not convergence; stopping there gave an infeasible allocation (a resource
    at 1.036) in this state of the random network."""
    a = np.asarray(load_scenario("random_network").requirements, float)
    n = np.array([0, 1, 0, 0, 1, 4, 1, 0, 0, 1, 0, 0, 1, 0, 0], float)
    phi = allocate("bmf", a, n)
    assert bmf_conditions(a, n, phi, tol=1e-9)["holds"]


def test_cycling_sweeps_are_damped():
    """Regression: in this random-network state the undamped sweeps cycle (no fixed
    point reached in 2000 sweeps); damped by 1/2 they converge to a BMF allocation."""
    a = np.asarray(load_scenario("random_network").requirements, float)
    n = np.array([0, 3, 0, 3, 0, 3, 2, 2, 0, 0, 0, 0, 0, 0, 0], float)
    levels = np.zeros(a.shape[1])
    assert bmf_levels(a, n, np.ones(15), levels, 1.0) == -1
    assert 0 < bmf_levels(a, n, np.ones(15), levels, 0.5) < 1000
    phi = allocate("bmf", a, n)
    assert bmf_conditions(a, n, phi, tol=1e-9)["holds"]


def test_small_problems_keep_the_enumeration():
    """At most ENUMERATION_LIMIT mappings: the enumeration, whose choice (largest PF
    objective) existing results were computed with."""
    a = np.array([[1, 1, 1], [1, 0.5, 0.75], [0.5, 1, 0.75]])
    phi = np.zeros(3)
    kernels.bmf(a, np.ones(3), np.ones(3), phi)
    reference = np.zeros(3)
    kernels.bmf_enumerate(a, np.ones(3), np.ones(3), reference)
    assert np.array_equal(phi, reference)


@pytest.mark.parametrize("caps, mass, expected", [
    ([1.0], [2.0], 0.5),                      # 2 min(1, L) = 1
    ([0.1, 0.5, np.inf], [2.0, 1.0, 1.0], 0.4),  # 0.2 + L + L = 1 (L ≤ 0.5)
    ([0.1, 0.5], [2.0, 1.0], np.inf),         # the demands fit: unsaturated
])
def test_water_level_is_exact(caps, mass, expected):
    """The level solves Σ mass min(cap, L) = 1 (∞ when Σ mass cap ≤ 1)."""
    from mrfq.fluid.bmf_levels import _water_level
    caps, mass = np.array(caps), np.array(mass)
    assert _water_level(caps, mass, len(caps)) == pytest.approx(expected, rel=1e-12)
