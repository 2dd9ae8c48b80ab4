"""Defects found by an eighteenth-session review of the cluster kind (issue 24), each red on
the code before its fix:

* the kernel's fit test had an absolute slack of 1e-9: on servers of 1e-9 (valid input)
  a thousand tasks of 1e-12 fitted twice over (utilisation 2), and with one resource the
  surplus tasks wrote past the event heap (a segfault);
* a Google-trace run scheduled at timestamp 0 ("before the trace window") got that 0 as
  its start, so its duration was made up, and a job submitted at 0 arrived hundreds of
  seconds before the window opened."""

import numpy as np
import pytest

from mrfq import policies
from mrfq.cluster.model import ClusterModel, run_jobs
from mrfq.cluster.trace import load_task_events
from mrfq.errors import InputError

NAME = policies.named(policies.CLUSTER)


@pytest.mark.parametrize("scale", [1e-9, 1.0, 2.0**40])
def test_the_units_of_capacities_and_demands_do_not_change_the_run(scale):
    """2000 tasks of 1/1000 of a server, all at 0, duration 1: 1000 run at once, in two
    waves, whatever the unit (the absolute slack ran them all at once at 1e-9)."""
    model = ClusterModel(capacity=[[scale, scale]], demand=[[scale * 1e-3, scale * 1e-3]],
                         policy=NAME.FIFO)
    run = run_jobs(model, [0.0], [0], [2000], task_time=np.ones(2000), window=(0.0, 0.5))
    np.testing.assert_array_equal(run.finish, [2.0])
    np.testing.assert_allclose(run.busy / 0.5 / scale, [1.0, 1.0], rtol=1e-12)


def test_a_small_server_beside_a_large_one_is_not_over_packed():
    """The slack is 1e-9 of each server: a first fix made it 1e-9 of the largest server
    (a power-of-two change of units), which let 14 tasks of 1e-7 memory onto a server of
    1e-6 beside one of 1e3 (a review: finish 7 instead of 10, memory busy 150%)."""
    model = ClusterModel(capacity=[[1e3, 1e3], [1.0, 1e-6]], demand=[[0.01, 1e-7]],
                         policy=NAME.FIFO, allowed=[[False, True]])
    run = run_jobs(model, [0.0], [0], [100], task_time=np.ones(100), window=(0.0, 0.5))
    np.testing.assert_array_equal(run.finish, [10.0])
    assert run.busy[1] / 0.5 == pytest.approx(1e-6, rel=1e-9)


def test_a_task_exceeding_a_server_by_more_than_a_rounding_error_is_refused():
    """The slack is relative: 1e-9 of the server, not 1e-9 in its units."""
    with pytest.raises(InputError, match="larger than every server"):
        ClusterModel(capacity=[[1e-6]], demand=[[1.001e-6]], policy=NAME.DRF)
    ClusterModel(capacity=[[1e-6]], demand=[[1e-6 * (1 + 1e-12)]], policy=NAME.DRF)


ROWS = """0,,1,0,,0,u1,1,2,0.1,0.2,0.001,0
0,,1,0,3,1,u1,1,2,0.1,0.2,0.001,0
605000000,,1,0,3,4,u1,1,2,0.1,0.2,0.001,0
0,,2,0,,0,u2,1,2,0.2,0.1,0.001,0
650000000,,2,0,3,1,u2,1,2,0.2,0.1,0.001,0
690000000,,2,0,3,4,u2,1,2,0.2,0.1,0.001,0
700000000,,3,0,,0,u3,1,2,0.2,0.1,0.001,0
700000000,,3,0,3,1,u3,1,2,0.2,0.1,0.001,0
710000000,,3,0,3,4,u3,1,2,0.2,0.1,0.001,0
"""


def test_runs_begun_before_the_trace_window_are_dropped_and_pending_jobs_arrive_at_it(
        tmp_path):
    """Job 1's task runs from before the window (SCHEDULE at 0) to 605 s: its duration is
    not known (it was taken as 605 s), so it is dropped and counted apart. Job 2 was
    submitted before the window and runs 40 s from 650 s: it arrives when the window
    opens, at 600 s (the schema's), 100 s before job 3 (it was 700 s)."""
    path = tmp_path / "t.csv"
    path.write_text(ROWS)
    trace = load_task_events(path)
    np.testing.assert_array_equal(trace.job_id, [2, 3])
    np.testing.assert_array_equal(trace.arrival, [0.0, 100.0])
    np.testing.assert_allclose(trace.task_time, [40.0, 10.0], rtol=0, atol=1e-12)
    assert (trace.dropped, trace.before_window, trace.unrequested) == (1, 1, 0)
    path.write_text(ROWS.split("0,,2,0,,0")[0])  # only job 1: nothing is kept
    with pytest.raises(InputError, match=r"\(1 tasks: 0 never finishing, 1 begun before "
                       r"the trace window \(scheduled at 0\), 0 finishing without"):
        load_task_events(path)
