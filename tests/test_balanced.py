"""Balanced fairness: the balance function against a brute-force recursion, the BF rates,
and γ against closed forms (SPEC §2 anchors and a two-class polymatroid)."""

import itertools
import math

import numpy as np
import pytest
from naive import brute_force_phi

from mrfq.errors import InputError
from mrfq.fluid import allocate, is_pareto_efficient
from mrfq.fluid.balanced import (
    allocate_bf,
    bf_service_rates,
    log_balance,
    log_balance_box,
)

FIG3 = [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]
TRIANGLE = [[1, 1, 0], [0, 1, 1], [1, 0, 1]]  # three routes on a ring of three links


@pytest.mark.parametrize("requirements", [FIG3, TRIANGLE, [[1, 0.3], [0.2, 1], [1, 0],
                                                            [0.5, 0.5]]])
def test_balance_function_matches_brute_force_recursion(requirements):
    K = len(requirements)
    top = 6 if K <= 3 else 4
    box = log_balance_box(requirements, [top] * K)
    phi = brute_force_phi(requirements)
    for n in itertools.product(range(top), repeat=K):
        assert box[n] == pytest.approx(math.log(phi(n)), rel=1e-12, abs=1e-12), n
    assert log_balance(requirements, [top - 1] * K) == pytest.approx(
        math.log(phi((top - 1,) * K)), rel=1e-12)


def test_single_resource_is_processor_sharing():
    # Φ(n) is the multinomial coefficient and each of the n flows gets 1/n
    for n in [(1,), (5,), (2, 3), (1, 2, 4)]:
        total = sum(n)
        multinomial = math.factorial(total) / math.prod(math.factorial(x) for x in n)
        assert math.exp(log_balance([[1.0]] * len(n), n)) == pytest.approx(multinomial)
        assert allocate_bf([[1.0]] * len(n), n) == pytest.approx([1 / total] * len(n))


def test_orthogonal_classes_get_their_own_resource():
    assert allocate_bf([[1, 0], [0, 1]], [3, 2]) == pytest.approx([1 / 3, 1 / 2])
    assert allocate_bf([[1, 0], [0, 1]], [0, 2]) == pytest.approx([0, 1 / 2])


def test_rates_are_feasible_and_saturate_a_resource():
    a = np.array(FIG3)
    phi_of = brute_force_phi(FIG3)
    for n in itertools.product(range(5), repeat=3):
        if sum(n) == 0:
            continue
        phi = allocate_bf(a, n)
        usage = (np.array(n) * phi) @ a
        assert np.all(usage <= 1 + 1e-12), n
        assert usage.max() == pytest.approx(1.0, abs=1e-12), n  # the max in Φ's recursion
        for k in np.flatnonzero(np.array(n) > 0):  # per-transaction rate, independently
            below = tuple(x - (i == k) for i, x in enumerate(n))
            assert phi[k] == pytest.approx(phi_of(below) / phi_of(n) / n[k], rel=1e-12)


@pytest.mark.parametrize("requirements", [FIG3, [[1, 0], [0, 1], [1, 1]],
                                          [[1, 0, 2 / 3], [0, 1, 2 / 3]]])
def test_pareto_efficient_where_expected(requirements):
    # J = 2 with every class on both resources, the line network and a polymatroid
    for n in itertools.product(range(5), repeat=len(requirements)):
        if sum(n):
            assert is_pareto_efficient(requirements, n, allocate_bf(requirements, n)), n


def test_not_pareto_efficient_on_the_triangle():
    # a known property of BF outside polymatroids: at n = (1, 2, 2) on the ring of three
    # links, route 1 (links 1, 2) has no saturated link and could go faster
    n = (1, 2, 2)
    phi = allocate_bf(TRIANGLE, n)
    usage = (np.array(n) * phi) @ np.array(TRIANGLE, float)
    assert usage == pytest.approx([13 / 14, 13 / 14, 1.0])
    assert not is_pareto_efficient(TRIANGLE, n, phi)


def test_weights_do_not_change_bf():
    assert allocate_bf(FIG3, [2, 1, 3], weights=[1, 5, 0.2]) == pytest.approx(
        allocate_bf(FIG3, [2, 1, 3]), rel=1e-14)


def test_bad_inputs():
    with pytest.raises(InputError, match="integers") as err:
        allocate_bf(FIG3, [1.5, 0, 0])
    assert err.value.field == "counts"
    with pytest.raises(InputError, match="unstable"):
        bf_service_rates(FIG3, [0.5, 0.1, 0.5])
    with pytest.raises(InputError) as err:
        bf_service_rates(FIG3, [0.1, 0.1])
    assert err.value.field == "loads"


@pytest.mark.parametrize("loads", [[0.3], [0.2, 0.5], [0.1, 0.3, 0.4], [0.45, 0.5]])
def test_gamma_single_resource(loads):
    exact = 1 - sum(loads)
    result = bf_service_rates([[1.0]] * len(loads), loads)
    error = np.abs(result.gamma - exact) / exact
    assert np.all(result.error_estimate <= 1e-5)
    assert np.all(error <= result.error_estimate)  # the estimate is not optimistic
    assert result.mean_in_progress == pytest.approx(np.array(loads) / exact, rel=1e-5)


@pytest.mark.parametrize("rho", [[0.6, 0.3], [0.9, 0.2]])
def test_gamma_orthogonal_classes(rho):
    result = bf_service_rates([[1, 0], [0, 1]], rho, tolerance=1e-7)
    error = np.abs(result.gamma - (1 - np.array(rho))) / (1 - np.array(rho))
    assert np.all(error <= result.error_estimate)
    assert np.all(result.error_estimate <= 1e-7)


@pytest.mark.parametrize("c, rho", [(1.5, (0.6, 0.7)), (1.2, (0.3, 0.8)), (1.9, (0.9, 0.1))])
def test_gamma_two_classes_sharing_one_resource(c, rho):
    # each class has its own link (capacity 1) and both share a third of capacity c:
    # x1 ≤ 1, x2 ≤ 1, x1 + x2 ≤ c, a polymatroid. Interior Φ(n) = (Φ(n−e1) + Φ(n−e2))/c,
    # Φ = 1 on the axes, so G(ρ) = Σ_n Φ(n) ρ^n = 1/(1−ρ1) + ρ2/(1−ρ2)
    # + ρ1ρ2 (1/(1−ρ1) + 1/(1−ρ2)) / (c − ρ1 − ρ2), and E[n_k] = ρ_k ∂_k log G
    def G(r1, r2):
        return (1 / (1 - r1) + r2 / (1 - r2)
                + r1 * r2 * (1 / (1 - r1) + 1 / (1 - r2)) / (c - r1 - r2))

    r1, r2 = rho
    h = 1e-30  # complex step: exact derivative to rounding
    mean = np.array([r1 * G(r1 + 1j * h, r2).imag / h, r2 * G(r1, r2 + 1j * h).imag / h])
    exact = np.array(rho) / (mean / G(r1, r2))
    result = bf_service_rates([[1, 0, 1 / c], [0, 1, 1 / c]], rho, tolerance=1e-7)
    error = np.abs(result.gamma - exact) / exact
    assert np.all(error <= result.error_estimate)
    assert np.all(result.error_estimate <= 1e-7)


def test_gamma_with_an_idle_class_and_the_fig3_ordering():
    result = bf_service_rates(FIG3, [0.4, 0.0, 0.1])
    assert np.isnan(result.gamma[1]) and result.mean_in_progress[1] == 0
    rho = np.array([4, 1, 1]) * 0.8 / 5.1  # link load 0.8
    g = bf_service_rates(FIG3, rho).gamma
    assert g[1] > g[0] > g[2]  # the Figure 2 ordering holds for BF too


def test_generic_allocate_computes_bf():
    n = [2, 1, 3]
    assert allocate("bf", FIG3, n) == pytest.approx(allocate_bf(FIG3, n))


def test_service_rates_dispatches_bf_to_its_explicit_law():
    from mrfq.fluid import service_rates

    rho = [0.4, 0.1, 0.1]
    generic = service_rates("bf", FIG3, rho)
    direct = bf_service_rates(FIG3, rho)
    assert generic.gamma.tolist() == direct.gamma.tolist()
    bmf = service_rates("bmf", FIG3, rho)
    assert not np.allclose(generic.gamma, bmf.gamma, rtol=1e-6)
