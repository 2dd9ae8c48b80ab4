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
    assert "  bottleneck_fair      unknown (not applicable: no dominant resource shared " \
           "by every user)" in slides.stdout.splitlines()


# --- fixes of the twenty-sixth session's review of the lab (2026-11-28) ----------------

# two servers, CPU every user's dominant resource of the pool; the first server's 0.5 GB
# leaves 5 of its 10 CPU usable (tasks of 0.1 GB), so at most 15 CPU can be used: the
# feasible max-min is 7.5 CPU each, not the pooled water-filling's 10
TWO_SERVERS = Problem(capacity=[[10.0, 0.5], [10.0, 10.0]],
                      demand=[[1.0, 0.1], [1.0, 0.2]])


def test_bottleneck_fairness_benchmark_is_the_feasible_max_min_on_several_servers():
    """DRFH equalises global dominant shares, here CPU amounts, over what the servers
    allow: 7.5 and 7.5 tasks, bottleneck fair (DRFH Proposition 6). The pooled benchmark
    said 10 and called DRFH unfair; per-server DRF (7.5 and 6.25) is not."""
    drfh = allocate(TWO_SERVERS, "drfh")
    np.testing.assert_allclose(drfh.user_tasks, [7.5, 7.5], atol=1e-6)
    assert bottleneck_fairness(drfh).holds is True
    verdict = bottleneck_fairness(allocate(TWO_SERVERS, "per-server-drf"))
    assert verdict.holds is False
    assert verdict.detail["max_min_amount"] == pytest.approx(7.5)
    # weighted, random capacities (the review's case): DRFH holds
    weighted = Problem(capacity=[[9.11, 2.95], [1.3, 2.81]],
                       demand=[[0.76, 0.99], [1.82, 1.42]], weights=[2.0, 1.0])
    assert bottleneck_fairness(allocate(weighted, "drfh")).holds is True


def test_bottleneck_fairness_takes_a_tied_dominant_resource():
    """The DRF slides' asset-fairness example (70 CPU, 70 GB; <2, 2> and <1, 2>): user 1's
    two resources tie, memory is user 2's, so memory is everyone's dominant resource. DRF
    gives 17.5 tasks each, 35 GB each: fair; asset fairness 15 and 20 tasks, 30 and 40 GB:
    not (it said "unknown" before)."""
    slides = Problem(capacity=[[70.0, 70.0]], demand=[[2.0, 2.0], [1.0, 2.0]])
    assert bottleneck_fairness(allocate(slides, "drf")).holds is True
    verdict = bottleneck_fairness(allocate(slides, "asset"))
    assert verdict.holds is False
    assert (verdict.detail["resource"], verdict.detail["max_min_amount"]) == ("r2",
                                                                             pytest.approx(35))


def test_a_whole_task_rule_missing_the_divisible_max_min_is_unknown_not_unfair():
    """One resource of 1, two users of 0.4: 0.5 each is no whole-task allocation, and
    online DRF's 0.4 each is the best there is. Divisible DRF still holds."""
    one = Problem(capacity=[[1.0]], demand=[[0.4], [0.4]])
    verdict = single_resource_fairness(allocate(one, "drf-online"))
    assert verdict.holds is None and "whole tasks" in verdict.detail["reason"]
    assert single_resource_fairness(allocate(one, "drf")).holds is True
    # a whole-task rule far from fair is still unknown, never "yes"
    assert bottleneck_fairness(allocate(TWO_SERVERS, "drfh-best-fit")).holds is None


def test_tsf_gives_a_user_no_server_can_host_nothing_instead_of_crashing():
    """Servers (4 CPU, 0 GB) and (0 CPU, 4 GB): a task of (1, 1) fits nowhere, T = 0. TSF
    divided by T (a traceback, exit 3); now that user gets 0 tasks and the other all 4,
    as under DRFH."""
    split = Problem(capacity=[[4.0, 0.0], [0.0, 4.0]], demand=[[1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(split.tasks_alone(), [0.0, 4.0])
    tsf = allocate(split, "tsf")
    np.testing.assert_allclose(tsf.user_tasks, [0.0, 4.0], atol=1e-9)
    np.testing.assert_allclose(allocate(split, "drfh").user_tasks, [0.0, 4.0], atol=1e-9)
    from mrfq.allocation import dedicated_weights
    assert np.all(np.isfinite(dedicated_weights(split)))


def test_allocate_cli_runs_every_policy_on_a_problem_with_an_unhostable_user(tmp_path):
    from click.testing import CliRunner

    from mrfq.cli import main

    path = tmp_path / "split.toml"
    path.write_text('resources = ["cpu", "mem"]\n'
                    '[[servers]]\nname = "a"\ncapacity = [4, 0]\n'
                    '[[servers]]\nname = "b"\ncapacity = [0, 4]\n'
                    '[[users]]\nname = "both"\ndemand = [1, 1]\n'
                    '[[users]]\nname = "cpu"\ndemand = [1, 0]\n')
    result = CliRunner().invoke(main, ["allocate", str(path)])
    assert result.exit_code == 0, result.output
    assert "== tsf" in result.stdout


def test_a_problem_without_users_is_an_input_error():
    from mrfq.errors import InputError

    with pytest.raises(InputError, match="no users"):
        Problem(capacity=[[1.0, 1.0]], demand=np.zeros((0, 2)))


@pytest.mark.parametrize("seed", range(20))
def test_single_server_drf(seed):
    """DRFH §III's fourth property: on one server DRFH is DRF; so are TSF (T_i = the tasks
    that fit alone: task shares are dominant shares) and per-server DRF. Random weighted
    one-server problems of 2–4 users and 2–3 resources."""
    rng = np.random.default_rng(seed)
    n, m = rng.integers(2, 5), rng.integers(2, 4)
    problem = Problem(capacity=[rng.uniform(5, 50, m)], demand=rng.uniform(0.1, 3, (n, m)),
                      weights=rng.uniform(0.5, 3, n))
    drf = allocate(problem, "drf").user_tasks
    for policy in ("drfh", "tsf", "per-server-drf"):
        np.testing.assert_allclose(allocate(problem, policy).user_tasks, drf, rtol=1e-6,
                                   err_msg=policy)
