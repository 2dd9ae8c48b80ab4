"""The dense twin of the Markov solver for coupled policies (``naive.dense_stationary``).

For the Figure 3 classes (a = (0.1, 1), (1, 0.1), (1, 1); load shares 4 : 1 : 1) under
DRF, PF and BMF, the truncated chain on {n : Σ n_k ≤ L} (arrivals blocked at L) is built
from scratch by the twin — states by itertools, rates from the public
``mrfq.fluid.allocate`` one state at a time, a dense generator — and π Q = 0, Σ π = 1
solved by dense least squares. The production truncation solve (Numba state enumeration
and CSR generator, batched allocations, BiCGSTAB with a Gauss–Seidel preconditioner) must
agree with it.
"""

import itertools

import numpy as np
import pytest
from naive import dense_stationary

from mrfq import policies
from mrfq.fluid import allocate
from mrfq.fluid.markov_solver import _solve_truncation, tail_corrected_mean

A = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
SHARES = np.array([4.0, 1.0, 1.0])
LEVEL = 12


def fig3_loads(link_load):
    # link carries Σ_k share_k a_k,link = 4 + 0.1 + 1 = 5.1 per unit of share
    return SHARES * link_load / 5.1


@pytest.mark.parametrize("link_load", [0.3, 0.8])
@pytest.mark.parametrize("policy", ["drf", "pf", "bmf"])
def test_truncation_solve_matches_dense_generator(policy, link_load):
    rho = fig3_loads(link_load)
    states, pi, Q = dense_stationary(policy, A, rho, LEVEL)
    assert np.abs(pi @ Q).max() < 1e-12 and pi.min() > 0  # the dense solve itself

    prod_pi, prod_states, prod_mean, prod_phi = _solve_truncation(
        policies.get(policies.FLUID, policy).code, A, np.ones(3), rho, LEVEL)
    assert prod_states.shape == (len(states), 3)
    # the production states are the same set (in level order): compare state by state
    order = {n: i for i, n in enumerate(states)}
    perm = np.array([order[tuple(int(v) for v in row)] for row in prod_states])
    assert sorted(perm.tolist()) == list(range(len(states)))
    dense_pi = pi[perm]
    assert prod_pi == pytest.approx(dense_pi, rel=1e-8, abs=1e-14)
    # the batched allocations equal the one-state public allocator
    for s in range(0, len(states), 7):
        counts = prod_states[s].astype(float)
        if counts.sum():
            expected = allocate(policy, A, counts)
            used = counts > 0
            assert prod_phi[s, used] == pytest.approx(expected[used], rel=1e-10)

    # the truncated mean numbers in progress and gamma_truncated = ρ / E_L[n]
    dense_mean = pi @ np.array(states, dtype=float)
    assert prod_mean == pytest.approx(dense_mean, rel=1e-8)
    assert rho / prod_mean == pytest.approx(rho / dense_mean, rel=1e-8)
    # and the tail-corrected mean built on either distribution
    states_arr = np.array(states)[perm]
    corrected_dense, _ = tail_corrected_mean(dense_pi, states_arr, LEVEL)
    corrected_prod, _ = tail_corrected_mean(prod_pi, prod_states, LEVEL)
    assert corrected_prod == pytest.approx(corrected_dense, rel=1e-8)


def test_dense_twin_sees_the_policies_differ():
    """The comparison is not vacuous: the three policies give different truncated
    means for these classes (BR Figure 2), by far more than the 1e-8 tolerance."""
    rho = fig3_loads(0.8)
    means = {}
    for policy in ("drf", "pf", "bmf"):
        states, pi, _ = dense_stationary(policy, A, rho, LEVEL)
        means[policy] = pi @ np.array(states, dtype=float)
    for p, q in itertools.combinations(means, 2):
        assert np.max(np.abs(means[p] - means[q]) / means[q]) > 1e-3, (p, q)
