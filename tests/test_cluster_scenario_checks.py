"""``[cluster]`` input that used to run and fail late, run silently wrong, or crash: each is
now one error naming the field before any work (issue 24's bad-input bar)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mrfq import policies
from mrfq.cluster.model import ClusterModel, run_jobs
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict
from mrfq.scenario.slots import slot_shortfall

NAME = policies.named(policies.CLUSTER)
TRACE = Path(__file__).resolve().parent / "data" / "task_events_small.csv"


#: a one-class cluster scenario file (tests/test_cluster_input_bounds.py varies it too)
ONE_CLASS = """resources = ["cpu", "mem"]
[[classes]]
name = "a"
requirements = [1.0, 0.4]
load_share = 1
[load]
values = [0.3]
[cluster]
tasks_per_resource = 6
jobs = 400
"""


def _raw(classes=None, **cluster):
    return {"resources": ["cpu", "mem"],
            "classes": classes or [
                {"name": "a", "requirements": [1.0, 0.4], "load_share": 1},
                {"name": "b", "requirements": [0.3, 1.0], "load_share": 1}],
            "load": {"values": [0.6]},
            "cluster": {"policies": [NAME.DRF], "tasks_per_resource": 6, "jobs": 400,
                        **cluster}}


def _refused(raw, field, starts):
    with pytest.raises(InputError) as info:
        scenario_from_dict(raw, "s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: {starts}"), str(info.value)
    assert "\n" not in str(info.value)


def test_fixed_tasks_need_a_whole_number_of_tasks():
    """Jobs of fixed tasks got np.rint(E[N]) tasks while the loads used E[N]: γ > 1."""
    _refused(_raw(tasks="fixed", mean_tasks=10.5), "cluster.mean_tasks",
             "fixed tasks need a whole number")
    _refused(_raw(tasks={"b": "fixed"}, mean_tasks={"b": 2.5}), "cluster.mean_tasks.b",
             "fixed tasks need a whole number")
    scenario_from_dict(_raw(tasks="fixed", mean_tasks=10.0), "s.toml")
    scenario_from_dict(_raw(mean_tasks=10.5), "s.toml")  # geometric: any mean ≥ 1


@pytest.mark.parametrize("cluster,field,starts", [
    ({"seed": 2**64}, "cluster.seed", "must be <= 9,223,372,036,854,775,807"),
    ({"jobs": 10**13}, "cluster.jobs", "must be <= 100,000,000"),
    ({"max_parallel": 1e30}, "cluster.max_parallel", "must be <= 9,007,199,254,740,992"),
    ({"max_parallel": {"a": 2**60}}, "cluster.max_parallel.a", "must be <= "),
    ({"mean_tasks": 1e20}, "cluster.mean_tasks", "must be <= 2^53 tasks"),
])
def test_counts_beyond_what_a_run_can_hold_are_refused(cluster, field, starts):
    """A seed the kernel cannot type, jobs beyond memory, caps and task counts beyond
    exact integers used to give a traceback, a MemoryError, NaN or negative counts."""
    _refused(_raw(**cluster), field, starts)


def test_a_resource_no_server_has_is_named_with_the_file():
    _refused(_raw(servers=[[1, 0], [1, 0]]), "cluster.servers", "no server has any mem")
    # every resource exists, but no server has both that every task needs: no task size
    # (tasks_per_resource) could make them fit, so the servers are named
    _refused(_raw(servers=[[1, 0], [0, 1]]), "cluster.servers",
             "no server class a may use has every resource")
    # a task too large for servers that have both resources: its size is the fix
    _refused(_raw(servers=[[0.5, 0.5], [0.5, 0.5]], tasks_per_resource=1),
             "cluster.tasks_per_resource", "a task of class a is larger than every server")


def test_slots_that_no_server_holds_are_refused_before_the_run():
    """Slots are the componentwise largest server / k: with servers (1, .5) and (.5, 1)
    and k = 1 a slot is (1, 1), which no server holds, so the slot scheduler would launch
    nothing (the kernel: no events, every job unfinished). k = 2 gives (.5, .5)."""
    servers = [[1.0, 0.5], [0.5, 1.0]]
    raw = _raw(policies=[NAME.DRF, NAME.SLOTS], servers=servers, slots_per_server=1,
               tasks_per_resource=20)
    _refused(raw, "cluster.slots_per_server",
             "with 1 slots per largest server a task of class a takes 1 slot(s) and no "
             "server it may use holds more than 0")
    scenario_from_dict({**raw, "cluster": {**raw["cluster"], "slots_per_server": 2}},
                       "s.toml")
    # the sizes only matter to the slot scheduler: without it, a k is refused as unread
    _refused({**raw, "cluster": {**raw["cluster"], "policies": [NAME.DRF]}},
             "cluster.slots_per_server", "only slots reads it")
    # the Python model refuses it too (it ran: no events, every job's finish NaN), and at
    # k = 2 every job ends
    demand = np.array([[0.1, 0.1]])
    capacity = np.array(servers)
    allowed = np.ones((1, 2), dtype=bool)
    assert slot_shortfall(capacity, demand, allowed, 1) == (0, 1, 0)
    with pytest.raises(InputError, match="^slots_per_server: with 1 slots per largest "
                       "server a task of class 1 takes 1 slot"):
        ClusterModel(capacity=capacity, demand=demand, policy=NAME.SLOTS,
                     slots_per_server=1, rates=[1.0])
    assert slot_shortfall(capacity, demand, allowed, 2) is None
    model = ClusterModel(capacity=capacity, demand=demand, policy=NAME.SLOTS,
                         slots_per_server=2, rates=[1.0])
    run = run_jobs(model, np.array([1.0, 2.0]), np.array([0, 0]), np.array([2, 2]))
    assert run.events > 0 and bool(np.isfinite(run.finish).all())


def _mrfq(*args, cwd):
    return subprocess.run([sys.executable, "-m", "mrfq", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _write(path, text):
    path.write_text(text)
    return path


def test_cli_refuses_before_any_work(tmp_path):
    """A cluster run with no policy that realises a fluid allocation swept every point,
    wrote them, then failed; a trace took any --tolerance. Both are now one line, exit
    2, nothing written. A trace with more batches than jobs runs (its JCT interval is
    NaN), where it used to be refused under cluster.warmup."""
    plain = _write(tmp_path / "p.toml", ONE_CLASS.replace(
        "[cluster]\n", '[cluster]\npolicies = ["tsf", "fifo"]\n'))
    out = tmp_path / "out"
    result = _mrfq("cluster", str(plain), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {plain}: cluster.policies: no cluster policy "
                                    "with a fluid counterpart to validate (tsf, fifo)")
    assert not out.exists()
    trace = f'resources = ["cpu", "memory"]\n[cluster]\ntrace = "{TRACE}"\n' \
            'servers = [[1.0, 1.0]]\npolicies = ["fifo"]\n'
    path = _write(tmp_path / "t.toml", trace)
    result = _mrfq("cluster", str(path), "-o", str(out), "--tolerance", "-1", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr == ("error: --tolerance: must be a number "
                                                      ">= 0, got -1.0\n")
    assert not out.exists()
    path = _write(tmp_path / "t2.toml", trace + "batches = 9001\n")
    result = _mrfq("cluster", str(path), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (out / "trace_summary.csv").exists()


def test_listed_servers_and_placement_are_a_named_known_limitation():
    """The fluid model pools every resource; a failing point on listed servers or with
    placement constraints says why (it used to fail with no reason); a pool names none."""
    from mrfq.validation import known_limitations

    why = policies.LIMITATIONS[policies.SEPARATE_SERVERS]
    listed = scenario_from_dict(_raw(servers=[[1.0, 1.0], [1.0, 1.0]]), "s.toml")
    assert known_limitations(listed) == {f"cluster:{NAME.DRF}": why}
    placed = scenario_from_dict(_raw(servers=[{"capacity": [1.0, 1.0], "type": "x"},
                                              [1.0, 1.0]], placement={"a": ["x"]}), "s.toml")
    assert known_limitations(placed) == {f"cluster:{NAME.DRF}": why}
    assert known_limitations(scenario_from_dict(_raw(), "s.toml")) == {}
