"""``[cluster]`` sizes and trace rows that used to crash or pass silently (issue 24's review):
counts of servers, slots and tasks at once beyond what a run can allocate gave a
MemoryError or ValueError traceback (exit 3), some after writing points, or built a
Python list until memory ran out; a request of 1e-300 overflowed the kernel's heap size;
a task index of -1 was accepted. Each is now one line naming the file and field, exit 2,
nothing written — the bounds (mrfq.scenario.limits) are the same for a file and for
Python. Also: ``trace = ""`` names cluster.trace, not the classes; ``mrfq validate`` on a
trace run's directory says why there is nothing to validate; "policies", not
"policys"."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_cluster_scenario_checks import ONE_CLASS, _refused
from test_cluster_scenario_checks import _raw as _raw_classes

import mrfq
from mrfq import fields, policies
from mrfq.cli import main
from mrfq.cluster import pooled_model
from mrfq.cluster.model import ClusterModel
from mrfq.cluster.servers import draw_servers
from mrfq.cluster.trace import load_task_events, trace_summary
from mrfq.errors import InputError
from mrfq.scenario import limits, scenario_from_dict
from mrfq.scenario.limits import MAX_RUNNING, MAX_SERVERS, MIN_REQUEST

NAME = policies.named(policies.CLUSTER)
ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "data" / "task_events_small.csv"
PACKAGED_TRACE = ROOT / "mrfq" / "scenarios" / "google_like_trace.toml"
CLASSES = ONE_CLASS


def _raw(**cluster):
    """The checks' scenario (tests/test_cluster_scenario_checks.py) with one class."""
    return _raw_classes([{"name": "a", "requirements": [1.0, 0.4], "load_share": 1}],
                        **cluster)


# --- the scenario file's bounds ------------------------------------------------------------

@pytest.mark.parametrize("cluster,field,starts", [
    ({"policies": [NAME.DRF, NAME.SLOTS], "slots_per_server": 10**15},
     "cluster.slots_per_server", "must be <= 100,000,000 (the largest server holds that "
     "many slots, each a task that can run at once: 32 bytes of memory each"),
    ({"tasks_per_resource": 1e15}, "cluster.tasks_per_resource",
     "must be <= 50,000,000 (up to 2 × it tasks run at once, at most 100,000,000: 32 "
     "bytes of memory each, allocated before the run), got 1e+15"),
    ({"servers": {"table": "google", "count": 10**12}}, "cluster.servers.count",
     "must be <= 10,000,000 (about 1 KB of memory each), got 1,000,000,000,000"),
    ({"servers": [{"capacity": [1.0, 1.0], "count": 10**12}]}, "cluster.servers[0].count",
     "must be <= 10,000,000 (about 1 KB of memory each)"),
    ({"servers": [{"capacity": [1.0, 1.0], "count": 6 * 10**6},
                  {"capacity": [1.0, 0.5], "count": 6 * 10**6}]}, "cluster.servers",
     "lists 12,000,000 servers, more than 10,000,000 (about 1 KB of memory each)"),
    ({"policies": [NAME.SLOTS], "servers": [{"capacity": [1.0, 1.0], "count": 12}],
      "tasks_per_resource": 24, "slots_per_server": 10**7}, "cluster.slots_per_server",
     "with 10,000,000 slots per largest server the 12 servers hold 120,000,000 slots in "
     "all, more than 100,000,000 tasks at once"),
])
def test_sizes_beyond_what_a_run_can_allocate_are_refused(cluster, field, starts):
    """Each of these gave a MemoryError (the kernel's event heap, or a list of 10^12
    servers built entry by entry) or ran out of memory."""
    _refused(_raw(**cluster), field, starts)


def test_each_bound_is_the_largest_value_accepted():
    """The bounds are <=, not <: the value at the bound reads, the next one is refused;
    the slots in all only count when the slot scheduler runs."""
    slots = {"policies": [NAME.SLOTS], "tasks_per_resource": 24}
    for ok, past, field in (
            ({"tasks_per_resource": MAX_RUNNING / 2},
             {"tasks_per_resource": MAX_RUNNING / 2 + 1}, "cluster.tasks_per_resource"),
            ({**slots, "slots_per_server": MAX_RUNNING},
             {**slots, "slots_per_server": MAX_RUNNING + 1}, "cluster.slots_per_server"),
            ({"servers": {"table": "google", "count": MAX_SERVERS}},
             {"servers": {"table": "google", "count": MAX_SERVERS + 1}},
             "cluster.servers.count"),
            ({**slots, "servers": [[1.0, 1.0]] * 10, "slots_per_server": 10**7},  # 10^8
             {**slots, "servers": [[1.0, 1.0]] * 11, "slots_per_server": 10**7},
             "cluster.slots_per_server")):
        if "table" not in str(ok):  # (10^7 drawn servers: some seconds, ~1 GB)
            scenario_from_dict(_raw(**ok), "s.toml")
        _refused(_raw(**past), field, "")
    # no slot scheduler: no slot bound, but a k that nothing reads is refused as such
    _refused(_raw(servers=[[1.0, 1.0]] * 11, tasks_per_resource=24, slots_per_server=10**7),
             "cluster.slots_per_server", "only slots reads it")
    assert MIN_REQUEST == 1 / MAX_RUNNING
    # servers listed with counts are not expanded when read: the bound itself reads
    half = MAX_SERVERS // 2
    listed = [{"capacity": [1.0, 1.0], "count": half}, {"capacity": [1.0, 0.5]}]
    listed[1]["count"] = MAX_SERVERS - half
    assert sum(c for _, c, _ in scenario_from_dict(
        _raw(servers=listed, tasks_per_resource=MAX_RUNNING / 2), "s.toml").cluster.servers
    ) == MAX_SERVERS
    listed[1]["count"] += 1
    _refused(_raw(servers=listed, tasks_per_resource=MAX_RUNNING / 2), "cluster.servers",
             "lists 10,000,001 servers")


def test_a_drawn_pool_at_the_servers_bound_reads(monkeypatch):
    """A drawn pool is an array of its servers, so 10^7 of them take seconds and ~1 GB:
    the comparison (<=, not <) is checked at a bound of 40 instead."""
    monkeypatch.setattr(limits, "MAX_SERVERS", 40)
    drawn = scenario_from_dict(_raw(servers={"table": "google", "count": 40},
                                    tasks_per_resource=1000), "s.toml")
    assert len(drawn.cluster.servers) == 40
    _refused(_raw(servers={"table": "google", "count": 41}), "cluster.servers.count",
             "must be <= 40")


# --- the Python API: the same bounds -------------------------------------------------------

def _raises(field, problem, call, *args, **kwargs):
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    assert info.value.field == field, str(info.value)
    assert problem in info.value.problem, str(info.value)


def test_the_python_api_refuses_the_same_sizes(tmp_path):
    _raises("tasks_per_resource", "must be <= 50,000,000 (up to 2 × it tasks run at once",
            pooled_model, [[1.0, 0.4]], [0.3], NAME.DRF, tasks_per_resource=1e15)
    pooled_model([[1.0, 0.4]], [0.3], NAME.DRF, tasks_per_resource=MAX_RUNNING / 2)
    _raises("slots_per_server", "must be <= 100,000,000 (the largest server holds",
            pooled_model, [[1.0, 0.4]], [0.3], NAME.SLOTS, slots_per_server=10**15)
    _raises("n", "must be <= 10,000,000 servers (about 1 KB of memory each)",
            draw_servers, 10**12, 1)
    servers = np.ones((12, 2))
    _raises("slots_per_server", "the 12 servers hold 120,000,000 slots in all",
            ClusterModel, capacity=servers, demand=[[0.1, 0.1]], policy=NAME.SLOTS,
            slots_per_server=10**7)
    # 1e-300 of a server: R / δ = 2.4e301 tasks at once, an overflow in the kernel
    _raises("demand", "up to 2.4e+301 tasks could run at once", ClusterModel,
            capacity=servers, demand=[[1e-300, 0.0]], policy=NAME.DRF)
    path = tmp_path / "small.csv"
    path.write_text("\n".join(row.replace("0.1,0.2", "1e-8,1e-8").replace("0.05,0.3",
                                                                          "1e-8,1e-8")
                              for row in SMALL.read_text().splitlines()) + "\n")
    # every request at the bound, on 12 servers: 2.4e9 tasks at once
    _raises("demand", "tasks could run at once (class ", trace_summary,
            load_task_events(path), servers, NAME.DRFH_BEST_FIT)


# --- the trace loader's rows ---------------------------------------------------------------



def test_only_the_larger_request_of_a_task_is_bounded(tmp_path):
    """It decides how many tasks fit a machine: 1e-300 CPU beside 0.3 of memory is
    harmless, 1e-300 beside none is refused."""
    path = tmp_path / "t.csv"
    path.write_text(SMALL.read_text().replace("0.1,0.3,", "1e-300,0.3,"))  # job 11
    assert load_task_events(path).demand.tolist()[1] == [1e-300, 0.3]
    path.write_text(SMALL.read_text().replace("0.1,0.3,", "1e-300,0,"))
    with pytest.raises(InputError, match="row 3, CPU request: must be 0 or >= 1e-08"):
        load_task_events(path)


# --- the CLI: one line, exit 2, nothing written --------------------------------------------

def _trace_scenario(tmp_path, trace, slots=14):
    text = PACKAGED_TRACE.read_text().replace('trace = "google_like_trace.csv"',
                                              f'trace = "{trace}"')
    return text.replace("slots_per_server = 14", f"slots_per_server = {slots}")


def _edited_trace(tmp_path, old, new, count=1):
    """The packaged trace with ``old`` replaced by ``new`` (its first ``count`` times, -1:
    every time), as t.csv beside the scenario."""
    source = (PACKAGED_TRACE.parent / "google_like_trace.csv").read_text()
    assert old in source
    (tmp_path / "t.csv").write_text(source.replace(old, new, count))
    return "t.csv"


CASES = {
    "slots 1e15": (lambda t: CLASSES.replace("jobs = 400", 'jobs = 400\npolicies = ["drf", '
                                             '"slots"]\nslots_per_server = 1000000000000000'),
                   "cluster.slots_per_server: must be <= 100,000,000"),
    "tasks_per_resource 1e15": (lambda t: CLASSES.replace("= 6", "= 1e15"),
                                "cluster.tasks_per_resource: must be <= 50,000,000"),
    "drawn servers 1e12": (lambda t: CLASSES + 'servers = {table = "google", count = '
                           "1000000000000}\n", "cluster.servers.count: must be <= 10,000,000"),
    "listed servers 1e12": (lambda t: CLASSES + "servers = [{capacity = [1.0, 1.0], count = "
                            "1000000000000}]\n",
                            "cluster.servers[0].count: must be <= 10,000,000"),
    "trace slots 1e12": (lambda t: _trace_scenario(t, str(PACKAGED_TRACE.with_suffix(".csv")),
                                                   10**12),
                         "cluster.slots_per_server: must be <= 100,000,000"),
    "trace slots in all": (lambda t: _trace_scenario(t, str(PACKAGED_TRACE.with_suffix(
        ".csv")), 5 * 10**7), "cluster.slots_per_server: with 50,000,000 slots per largest "
        "server the 12 servers hold 275,000,000 slots in all"),
    "trace requests 1e-8": (lambda t: _trace_scenario(t, _edited_trace(t, ",0.0422,0.1195,",
                                                                       ",1e-8,1e-8,", -1)),
                            "cluster.trace: its smallest tasks (demand [1e-08, 1e-08]) could "
                            "run 1,150,000,000 at once on the listed servers"),
    "trace request 1e-300": (lambda t: _trace_scenario(t, _edited_trace(
        t, "620504067,,1,0,,0,user,1,2,0.0422,0.1195", "620504067,,1,0,,0,user,1,2,1e-300,0")),
        "row 5, CPU request: must be 0 or >= 1e-08"),
    "trace task index -1": (lambda t: _trace_scenario(t, _edited_trace(
        t, "620504067,,1,0,", "620504067,,1,-1,")), "row 5, task index: must be ≥ 0, got -1"),
    "empty trace": (lambda t: 'resources = ["cpu", "memory"]\n[cluster]\ntrace = ""\n',
                    "cluster.trace: names no file: give a task_events file"),
    "empty trace beside classes": (lambda t: CLASSES + 'trace = ""\n',
                                   "cluster.trace: names no file"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_cli_refuses_before_any_work(tmp_path, case):
    """``mrfq cluster s.toml -o out --jobs 1``: the slots case used to leave
    out/points/cluster-drf-*.json behind; the others gave a traceback, exit 3 (the list of
    10^12 servers ran the machine out of memory); the task index and ``trace = ""`` were
    accepted or refused as the classes."""
    write, message = CASES[case]
    path = tmp_path / "s.toml"
    path.write_text(write(tmp_path))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "mrfq", "cluster", str(path), "-o", str(out),
                             "--jobs", "1"], capture_output=True, text=True, cwd=tmp_path,
                            timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), \
        result.stderr[-3000:]
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
    if "row 5" in message:  # a row of the trace: the trace file is named
        assert result.stderr.startswith(f"error: {tmp_path / 't.csv'}: row 5, ")
    else:
        assert result.stderr.startswith(f"error: {path}: cluster.")
    assert not out.exists()


def test_a_mistyped_trace_names_cluster_trace():
    for value, problem in ((0, "must be a string, got 0"), ("  ", "names no file")):
        _refused({"resources": ["cpu", "memory"], "cluster": {"trace": value}},
                 "cluster.trace", problem)


# --- validate on a trace run's directory ---------------------------------------------------

def test_validate_says_a_trace_run_has_nothing_to_validate(tmp_path):
    """It said "holds no summary.csv yet (run mrfq sweep first)", and sweep refuses a
    trace scenario."""
    shutil.copy(SMALL, tmp_path / "trace.csv")
    (tmp_path / "s.toml").write_text('resources = ["cpu", "memory"]\n[cluster]\ntrace = '
                                     '"trace.csv"\npolicies = ["fifo"]\nbatches = 2\n'
                                     "servers = [[1.0, 1.0]]\n")
    mrfq.cluster(tmp_path / "s.toml", tmp_path / "r")
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output == (f"error: {tmp_path / 'r'}: holds a trace run (trace_summary.csv): "
                             "a trace has no fluid model to validate against\n")
    with pytest.raises(InputError, match="a trace has no fluid model to validate against"):
        mrfq.validate(tmp_path / "r")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"holds no summary.csv yet \(run mrfq sweep first"):
        mrfq.validate(tmp_path / "empty")
    assert not (tmp_path / "r" / "validation.csv").exists()


# --- plurals ------------------------------------------------------------------------------

def test_a_list_of_policies_is_spelt_so():
    """f"{what}s" gave "policys"."""
    _refused(_raw(policies=[]), "cluster.policies", "must be a non-empty list of policies")
    _refused(_raw(policies=[1]), "cluster.policies", "must be a list of policies, got 1")
    for what, plural in (("server", "servers"), ("resource name", "resource names"),
                         ("key", "keys")):
        with pytest.raises(InputError, match=f"non-empty list of {plural}$"):
            fields.name_list([], "f", None, what=what)
