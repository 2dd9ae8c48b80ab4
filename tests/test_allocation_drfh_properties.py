"""DRFH §III's further properties (Propositions 5–7) in the allocation lab, on worked
examples: single-resource fairness, bottleneck fairness and population monotonicity,
each checker shown to hold where the paper proves it and to fail on a counter-example
worked out by hand."""

import numpy as np
import pytest

from mrfq.allocation import (
    POLICIES,
    Allocation,
    Problem,
    allocate,
    bottleneck_fairness,
    population_monotonicity,
    single_resource_fairness,
)

# one resource, 10 units; user 1 capped at 2 tasks: max-min amounts 2, 4, 4, i.e. tasks
# 2, 2 and 4 (user 2's tasks need 2 units)
ONE = Problem(capacity=[[10.0]], demand=[[1.0], [2.0], [1.0]],
              max_tasks=[2.0, np.inf, np.inf])
# CPU is every user's dominant resource (0.1 and 0.2 of it per task against 0.01 and
# 0.05 of memory): max-min of CPU gives 5 CPU each, i.e. 5 and 2.5 tasks
NECK = Problem(capacity=[[10.0, 100.0]], demand=[[1.0, 1.0], [2.0, 5.0]])
SLIDES = Problem(capacity=[[9.0, 18.0]], demand=[[1.0, 4.0], [3.0, 1.0]])
DRFH_FIG1 = Problem(capacity=[[2.0, 12.0], [12.0, 2.0]], demand=[[0.2, 1.0], [1.0, 0.2]])


@pytest.mark.parametrize("policy", ["drf", "drfh", "asset", "ceei"])
def test_single_resource_fairness_holds_for_the_divisible_policies(policy):
    result = allocate(ONE, policy)
    np.testing.assert_allclose(result.user_tasks, [2, 2, 4], atol=1e-6)
    assert single_resource_fairness(result).holds is True


@pytest.mark.parametrize("policy", ["drf-online", "drfh-first-fit"])
def test_single_resource_fairness_holds_for_whole_task_heuristics_here(policy):
    """2, 2, 4 are whole tasks, and progressive filling reaches them."""
    assert single_resource_fairness(allocate(ONE, policy)).holds is True


def test_single_resource_fairness_fails_by_hand():
    """A hand-made allocation 2, 1, 6 (amounts 2, 2, 6) misses the max-min 2, 4, 4."""
    verdict = single_resource_fairness(Allocation(ONE, np.array([[2.0], [1.0], [6.0]])))
    assert verdict.holds is False
    assert verdict.detail["max_min_amount"] == pytest.approx(4.0)
    assert single_resource_fairness(allocate(NECK, "drf")).holds is None  # two resources


def test_bottleneck_fairness_drf_holds_and_asset_fairness_fails():
    """DRF: 0.1 x1 = 0.2 x2 and x1 + 2 x2 = 10, so x = (5, 2.5): 5 CPU each. Asset
    fairness equalises 0.11 x1 = 0.25 x2: x2 = 10 / 4.2727 = 2.340, x1 = 5.319, CPU
    amounts 5.32 and 4.68, not max-min."""
    drf = allocate(NECK, "drf")
    np.testing.assert_allclose(drf.user_tasks, [5.0, 2.5], atol=1e-6)
    assert bottleneck_fairness(drf).holds is True
    asset = allocate(NECK, "asset")
    np.testing.assert_allclose(asset.user_tasks, [10 / (1 + 2 * 0.11 / 0.25),
                                                 10 * 0.11 / 0.25 / (1 + 2 * 0.11 / 0.25)],
                               rtol=1e-6)
    verdict = bottleneck_fairness(asset)
    assert verdict.holds is False and verdict.detail["max_min_amount"] == pytest.approx(5)
    # different dominant resources (the DRF slides): not applicable
    assert bottleneck_fairness(allocate(SLIDES, "drf")).holds is None


@pytest.mark.parametrize("problem", [SLIDES, DRFH_FIG1, NECK, ONE])
@pytest.mark.parametrize("policy", ["drf", "drfh"])
def test_population_monotonicity_holds_for_drf_and_drfh(problem, policy):
    assert population_monotonicity(problem, POLICIES[policy]).holds is True


def test_population_monotonicity_fails_for_a_rule_that_shrinks_with_fewer_users():
    """A made-up rule giving every user n − 1 tasks (n users): when one leaves, the
    others drop from n − 1 to n − 2."""

    def shrinking(problem):
        n = problem.n_users
        return Allocation(problem, np.full((n, 1), n - 1.0))

    verdict = population_monotonicity(ONE, shrinking)
    assert verdict.holds is False
    assert (verdict.detail["tasks"], verdict.detail["tasks_after"]) == (2.0, 1.0)


def test_the_allocate_table_shows_the_three_properties(tmp_path):
    """`mrfq allocate`: one line per property in the report, one column in the CSV; on a
    one-resource problem file all three apply and hold for DRF."""
    from click.testing import CliRunner

    from mrfq.cli import main

    path = tmp_path / "one.toml"
    path.write_text('resources = ["cpu"]\npolicies = ["drf", "asset"]\n'
                    '[[servers]]\nname = "s"\ncapacity = [10]\n'
                    '[[users]]\nname = "a"\ndemand = [1]\nmax_tasks = 2\n'
                    '[[users]]\nname = "b"\ndemand = [2]\n'
                    '[[users]]\nname = "c"\ndemand = [1]\n')
    out = tmp_path / "one.csv"
    result = CliRunner().invoke(main, ["allocate", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for key in ("single_resource_fair", "bottleneck_fair", "population_monotonic"):
        assert f"  {key:20s} yes" in lines, (key, result.stdout)
    table = out.read_text().splitlines()
    header = table[0].split(",")
    for key in ("single_resource_fair", "bottleneck_fair", "population_monotonic"):
        assert [row.split(",")[header.index(key)] for row in table[1:]] == ["True"] * 6
    slides = CliRunner().invoke(main, ["allocate", "drf_slides", "--policies", "drf"])
    assert "  bottleneck_fair      unknown (not applicable: no single dominant resource " \
           "shared by every user)" in slides.stdout.splitlines()
