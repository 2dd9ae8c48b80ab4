"""Whole-task rules judged on whole tasks (an eighteenth-session review of the allocation
lab, issue 24): Pareto optimality and the one-server sharing incentive compared the online
rules' whole tasks with benchmarks in fractions of a task, which no whole-task rule can
reach. Both red on the code before the fix."""

import numpy as np
import pytest

from mrfq import policies as registry
from mrfq.allocation import Problem, allocate, sharing_incentive
from mrfq.allocation.properties import pareto_optimal

NAME = registry.named(registry.ALLOCATION)
WHOLE = (NAME.DRF_ONLINE, NAME.DRFH_FIRST_FIT, NAME.DRFH_BEST_FIT)


@pytest.mark.parametrize("name", WHOLE)
def test_no_whole_task_allocation_beats_two_and_one_tasks_of_three_cpu_in_ten(name):
    """Two users with tasks of 3 CPU on 10 CPU: the rule gives (2, 1), 9 CPU; a fourth
    task needs 12. The LP's "could have 2.33 tasks" is no allocation of whole tasks."""
    allocation = allocate(Problem(capacity=[[10.0]], demand=[[3.0], [3.0]]), name)
    assert sorted(allocation.user_tasks.tolist()) == [1.0, 2.0]
    assert pareto_optimal(allocation).holds


@pytest.mark.parametrize("name", WHOLE)
def test_a_whole_task_rule_that_leaves_a_whole_task_unrun_is_not_pareto_optimal(name):
    """The integer program still finds a real improvement: the rule's allocation with
    one task of user 2 taken away leaves room for it (a task of 3 CPU in the 4 left)."""
    allocation = allocate(Problem(capacity=[[10.0]], demand=[[3.0], [3.0]]), name)
    tasks = allocation.tasks.copy()
    tasks[int(np.argmin(allocation.user_tasks)), 0] -= 1
    verdict = pareto_optimal(type(allocation)(allocation.problem, tasks, name,
                                              whole_tasks=True))
    assert verdict.holds is False
    assert verdict.detail["could_have"] == verdict.detail["tasks"] + 1


@pytest.mark.parametrize("name", WHOLE)
def test_the_one_server_sharing_incentive_of_a_whole_task_rule_counts_whole_tasks(name):
    """Alone on its half of 5 CPU, a user with tasks of 3 CPU runs 1 whole task (not
    1.667); one of 1 and one of 2 CPU on 10 CPU run 5 and 2 (not 2.5) alone."""
    for demand in ([[3.0], [3.0]], [[1.0], [2.0]]):
        problem = Problem(capacity=[[10.0]], demand=demand)
        allocation = allocate(problem, name)
        assert sharing_incentive(allocation).holds, allocation.user_tasks
    problem = Problem(capacity=[[10.0]], demand=[[1.0], [2.0]])
    assert problem.dedicated_cloud_tasks(1, whole=True) == 2.0
    assert problem.dedicated_cloud_tasks(1) == pytest.approx(2.5)  # divisible rules


def test_a_whole_task_rule_below_its_whole_task_share_still_fails():
    """The floor is no free pass: a user given no task, where its half holds one."""
    problem = Problem(capacity=[[10.0]], demand=[[3.0], [3.0]])
    allocation = allocate(problem, NAME.DRF_ONLINE)
    tasks = allocation.tasks.copy()
    tasks[int(np.argmin(allocation.user_tasks)), 0] = 0
    verdict = sharing_incentive(type(allocation)(problem, tasks, "x", whole_tasks=True))
    assert verdict.holds is False and verdict.detail["dedicated_tasks"] == 1.0


@pytest.mark.parametrize("name", WHOLE)
def test_the_several_server_sharing_incentive_of_a_whole_task_rule_counts_whole_tasks(name):
    """Three servers of 1 CPU, two users of 1-CPU tasks: (2, 1) whole tasks; the dedicated
    cloud's 1.5 tasks each is no whole-task allocation, 1 is (a review of the one-server
    fix)."""
    problem = Problem(capacity=[[1.0], [1.0], [1.0]], demand=[[1.0], [1.0]])
    allocation = allocate(problem, name)
    assert sorted(allocation.user_tasks.tolist()) == [1.0, 2.0]
    assert sharing_incentive(allocation).holds
    assert problem.dedicated_cloud_tasks(0, whole=True) == 1.0
    assert problem.dedicated_cloud_tasks(0) == pytest.approx(1.5)
