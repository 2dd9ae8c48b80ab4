"""Bad input found by an adversarial review: each case one InputError naming its field
(on the command line one line `error: <file>: <field>: <problem>`, exit code 2), before
any work and with nothing written."""

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import assert_one_line_error, run_cli

import mrfq
from mrfq.advisor import advise
from mrfq.allocation import load_problem
from mrfq.errors import InputError
from mrfq.fluid.laws import service_rates
from mrfq.fluid.method import fluid_curves
from mrfq.io import RESULTS_OF, check_figure_formats
from mrfq.packet import kernel
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.scenario.checks import MIN_LOAD_SHARE_RATIO
from mrfq.scenario.limits import PACKET_SLOTS, window_bytes

ROOT = Path(__file__).resolve().parent.parent
QUICK = (ROOT / "scenarios" / "quickstart.toml").read_text()
PROBLEM = (ROOT / "mrfq" / "problems" / "drf_slides.toml").read_text()
ROGUE = (ROOT / "scenarios" / "isolation_rogue.toml").read_text()


_cli = run_cli
_refused = assert_one_line_error


def _file(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _raises(text: str, field: str, match: str, name: str = "s.toml", tmp_path=None):
    path = _file(tmp_path, text, name)
    with pytest.raises(InputError, match=match) as info:
        (mrfq.allocate if "[[users]]" in text else load_scenario)(path)
    assert info.value.field == field, info.value


# --- windows: a window of 10^9 packets ("no window") asked for terabytes: a traceback ----

@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("window = 5", "window = 1000000000"), "packet.window"),
    (lambda t: t.replace("window = 5", "window = 4611686018427387904"), "packet.window"),
])
def test_a_window_beyond_memory_is_refused_in_the_file(tmp_path, edit, field):
    _raises(edit(QUICK), field, "must be <= .* packets with 2 resources and 2 classes",
            tmp_path=tmp_path)


def test_an_explicit_flows_window_beyond_memory_is_refused(tmp_path):
    text = ROGUE.replace('name = "A"\n', 'name = "A"\nwindow = 1000000000\n')
    _raises(text, "flows[0].window", "must be <= ", tmp_path=tmp_path)


def test_a_window_option_beyond_memory_is_one_line(tmp_path):
    _refused(_cli("simulate", "quickstart", "--policy", "bmf", "--load", "0.3", "--flows",
                  "100", "--window", "1e30", cwd=tmp_path), "error: --window: must be <= ")
    with pytest.raises(InputError, match="must be <= ") as info:
        mrfq.simulate("quickstart", "bmf", 0.3, flows=100, window=10**9)
    assert info.value.field == "window"


def test_the_window_bound_covers_the_engine_records():
    """The bound's bytes are at least what the engine allocates for its first slots."""
    for J in (1, 2, 5, 12):
        for W in (1, 30, 1000):
            layout = kernel.record_layout(J, W, J)  # (MR3 with one router per resource)
            K = 3
            engine = PACKET_SLOTS * (8 * (int(layout.ni) + int(layout.nf)) + 16 * K * W)
            assert window_bytes(W, J, K) >= engine, (J, W)


# --- packet.policies = "bmf": read letter by letter ---------------------------------------

def test_a_lone_packet_policy_string_is_one_policy(tmp_path):
    text = QUICK.replace('policies = ["drfq", "bmf"]', 'policies = "bmf"')
    assert load_scenario(_file(tmp_path, text)).packet.policies == ("bmf",)
    _raises(QUICK.replace('policies = ["drfq", "bmf"]', 'policies = "bmfx"'),
            "packet.policies", "unknown policy 'bmfx'", tmp_path=tmp_path)


# --- empty names: a class named "" read back from summary.csv as NaN ----------------------

@pytest.mark.parametrize("old, new, field", [
    ('name = "crypto"', 'name = ""', "classes[1].name"),
    ('name = "crypto"', 'name = "  "', "classes[1].name"),
    ('resources = ["cpu", "link"]', 'resources = ["cpu", ""]', "resources[1]"),
    ('name = "quickstart"', 'name = ""', "name"),
])
def test_empty_names_are_refused(tmp_path, old, new, field):
    _raises(QUICK.replace(old, new), field, "must be a name", tmp_path=tmp_path)


@pytest.mark.parametrize("old, new, field", [
    ('name = "user2"', 'name = ""', "users[1].name"),
    ('name = "node"', 'name = " "', "servers[0].name"),
    ('resources = ["cpu", "mem"]', 'resources = ["cpu", ""]', "resources"),
])
def test_empty_names_in_problems_are_refused(tmp_path, old, new, field):
    _raises(PROBLEM.replace(old, new), field, "empty", tmp_path=tmp_path)


def test_an_empty_flow_name_is_refused(tmp_path):
    _raises(ROGUE.replace('name = "A"', 'name = ""'), "flows[0].name", "must be a name",
            tmp_path=tmp_path)


# --- values accepted that nothing reads ------------------------------------------------------

def test_slots_per_server_without_the_slot_scheduler_is_refused(tmp_path):
    text = QUICK.replace("[cluster]", "[cluster]\nslots_per_server = 3")
    _raises(text, "cluster.slots_per_server", "only slots reads it", tmp_path=tmp_path)
    # with the slot scheduler, or at its default, it stays accepted
    load_scenario(_file(tmp_path, text.replace('policies = ["drf"]',
                                               'policies = ["drf", "slots"]')))
    load_scenario(_file(tmp_path, QUICK.replace("[cluster]", "[cluster]\nslots_per_server = 14")))


def test_max_replications_without_precision_is_refused(tmp_path):
    with pytest.raises(InputError, match="budget of a precision target") as info:
        mrfq.simulate("quickstart", "bmf", 0.3, flows=100, max_replications=3)
    assert info.value.field == "max_replications"
    _refused(_cli("sweep", "quickstart", "-o", "r", "--jobs", "1", "--max-replications", "3",
                  cwd=tmp_path), "error: --max-replications: is the replication budget")
    assert not (tmp_path / "r").exists()
    path = _file(tmp_path, QUICK.replace("[packet]", "[packet]\nmax_replications = 5"))
    with pytest.raises(InputError, match="budget") as info:
        mrfq.simulate(path, "bmf", 0.3, flows=100)
    assert info.value.field == "packet.max_replications"
    # with a target (the file's or an argument's) it is read
    mrfq.simulate(path, "bmf", 0.3, flows=100, mean_size=5, precision=0.9)


def test_an_infinite_tolerance_is_refused(tmp_path):
    """Every point would pass (the API's arguments refused it; the command line did not)."""
    _refused(_cli("run", "quickstart", "-o", "r", "--tolerance", "inf", cwd=tmp_path),
             "error: --tolerance: must be finite")
    assert not (tmp_path / "r").exists()


def test_a_flow_starting_after_the_timeline_is_refused(tmp_path):
    text = ROGUE.replace('name = "A"\n', 'name = "A"\nstart = 500\nstop = 600\n')
    _raises(text, "flows[0].start", "must be before timeline.duration", tmp_path=tmp_path)


# --- the scheduler: a typo was a traceback, an empty value ran locally -------------------

@pytest.mark.parametrize("address, problem", [
    ("nonsense", "not a scheduler address"), ("tcp://localhost", "not a scheduler address"),
    ("", "is an empty address"), (123, "must be an address")])
def test_a_bad_scheduler_is_refused_before_any_work(tmp_path, address, problem):
    with pytest.raises(InputError, match=problem) as info:
        mrfq.sweep("quickstart", tmp_path / "r", scheduler=address)
    assert info.value.field == "scheduler"
    assert not (tmp_path / "r").exists()


def test_a_bad_scheduler_option_is_one_line(tmp_path):
    _refused(_cli("run", "quickstart", "-o", "r", "--scheduler", "nonsense", cwd=tmp_path),
             "error: --scheduler: not a scheduler address")
    assert not (tmp_path / "r").exists()


# --- outputs that are one another ----------------------------------------------------------

def test_simulate_refuses_one_file_for_two_outputs(tmp_path):
    _refused(_cli("simulate", "quickstart", "--policy", "bmf", "--load", "0.3", "--flows",
                  "100", "-o", "a.csv", "--flows-out", "./a.csv", cwd=tmp_path),
             "error: ./a.csv: --flows-out: is also --output's file")
    assert not (tmp_path / "a.csv").exists()


def test_fluid_refuses_an_output_that_is_its_results_directory(tmp_path):
    _refused(_cli("fluid", "quickstart", "-o", "r", "--results", "r", "--jobs", "1",
                  cwd=tmp_path), "error: r: --output: is also the --results directory")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("first, second, holds", [
    (("sweep", "small.toml"), ("flows", "rogue.toml"), "summary.csv"),
    (("flows", "rogue.toml"), ("sweep", "small.toml"), "flows.csv"),
])
def test_a_results_directory_of_another_kind_of_run_is_refused(tmp_path, first, second,
                                                               holds):
    """`mrfq flows` into a sweep's directory replaced its scenario.json: `mrfq plot` then
    drew the sweep's summary under the flows scenario's name."""
    small = QUICK.replace("flows = 3000", "flows = 200").replace("jobs = 1000", "jobs = 40")
    _file(tmp_path, small.replace("values = [0.3, 0.6]", "values = [0.3]"), "small.toml")
    _file(tmp_path, ROGUE.replace("duration = 400", "duration = 20").replace(
        '["drfq", "mr3", "bmf", "pf", "fifo", "bottleneck-fq"]', '["bmf"]'), "rogue.toml")
    extra = ["--jobs", "1"] if first[0] == "sweep" else []
    assert _cli(*first, "-o", "r", *extra, cwd=tmp_path).returncode == 0
    before = sorted(p.name for p in (tmp_path / "r").iterdir())
    extra = ["--jobs", "1"] if second[0] == "sweep" else []
    _refused(_cli(*second, "-o", "r", *extra, cwd=tmp_path),
             f"error: r: --output: holds the results of {RESULTS_OF[first[0]][1]} ({holds})")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == before


def test_the_results_markers_are_the_files_runs_write():
    from mrfq import pipeline, sweeps

    assert RESULTS_OF["sweep"][0] == (sweeps.SUMMARY_FILE, sweeps.POINTS_DIR)
    assert RESULTS_OF["flows"][0] == (pipeline.FLOWS_FILE, pipeline.TIMELINE_FILE)
    assert RESULTS_OF["trace"][0] == (pipeline.TRACE_FILE,)


# --- a damaged results directory: validate and plot tracebacks ------------------------------

def test_damaged_results_files_are_one_line(tmp_path):
    from mrfq.sweeps import store_scenario

    store_scenario(load_scenario("quickstart"), tmp_path / "good")
    scenario = tmp_path / "good" / "scenario.json"
    cases = {"empty": ("", "not a CSV table"), "bytes": ("x\x00\xff\n", "not a CSV table"),
             "columns": ("a,b\n1,2\n", "not a table mrfq wrote: no column kind")}
    for name, (content, problem) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "scenario.json").write_text(scenario.read_text())
        (folder / "summary.csv").write_bytes(content.encode("latin-1"))
        for verb in ("validate", "plot"):
            _refused(_cli(verb, name, cwd=tmp_path), f"error: {name}/summary.csv: {problem}")
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "scenario.json").write_text("{")
    (tmp_path / "json" / "summary.csv").write_text("kind\n")
    _refused(_cli("plot", "json", cwd=tmp_path),
             "error: json/scenario.json: not a scenario mrfq wrote")


def test_validate_refuses_a_table_that_is_not_a_summary():
    with pytest.raises(InputError, match="no column") as info:
        mrfq.validate(pd.DataFrame({"a": [1]}))
    assert info.value.field == "summary"


# --- Python arguments of the wrong type: tracebacks ----------------------------------------

@pytest.mark.parametrize("call, field", [
    (lambda: check_figure_formats(3), "formats"),
    (lambda: check_figure_formats(["png", 3]), "formats"),
    (lambda: mrfq.plot(3), "sources"),
    (lambda: mrfq.load_scenario(3), "scenario"),
])
def test_arguments_of_the_wrong_type_are_input_errors(call, field):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field


# --- allocation problems beyond the linear programs' range ----------------------------------

@pytest.mark.parametrize("old, new", [
    ("demand = [1, 4]", "demand = [1e-9, 1e-9]"),     # DRF gave this user no task at all
    ("demand = [1, 4]", "demand = [1e15, 4]"),         # HiGHS: model error, a traceback
    ("capacity = [9, 18]", "capacity = [1e-300, 18]"),
])
def test_demand_shares_beyond_the_solvers_range_are_refused(tmp_path, old, new):
    _raises(PROBLEM.replace(old, new), "users[0].demand", "dominant share",
            tmp_path=tmp_path)


def test_tiny_non_dominant_demands_stay_accepted(tmp_path):
    report = mrfq.allocate(_file(tmp_path, PROBLEM.replace("demand = [1, 4]",
                                                           "demand = [1e-30, 4]")),
                           ["drf"], properties=False)
    assert report.table()["tasks"].iloc[0] == pytest.approx(27 / 7)


def test_a_stored_scenario_still_reads_back():
    """Default values (a stored scenario writes every field) are not refused."""
    scenario = load_scenario("google_like_trace")
    assert scenario_from_dict(scenario.to_dict()) == scenario
    quick = load_scenario("quickstart")
    assert scenario_from_dict(quick.to_dict()) == quick


def test_a_scheduler_address_without_host_and_port_is_left_to_dask():
    """The host-and-port check refused an in-process cluster's address (inproc://, what
    ``LocalCluster(processes=False)`` gives), which ran before: only network schemes
    need a port."""
    from mrfq import arguments

    for address in ("inproc://192.0.2.2/16042/1", "tcp://host:8786", "host:8786",
                    "tls://h:1", "tcp://[::1]:8786"):
        assert arguments.scheduler(address) == address


# --- load shares: 1.7e308 overflowed to NaN γ; a class 1e-10 of the others got a γ 18%
# off with an error estimate of 4e-9 (the Markov solver cannot resolve it) ---------------

def _two_classes(share_b: float, share_a: float = 1.0, load: float = 0.5) -> dict:
    return {"name": "shares", "resources": ["cpu", "link"],
            "classes": [{"name": "a", "requirements": [1.0, 0.5], "load_share": share_a},
                        {"name": "b", "requirements": [0.5, 1.0], "load_share": share_b}],
            "load": {"values": [load]}, "fluid": {"policies": ["drf"]}}


@pytest.mark.parametrize("share_a, share_b, index, match", [
    (1.7e308, 1.7e308, 0, r"must be 0 or between 1e-300 and 1e\+300"),
    (1e-320, 1e-320, 0, r"must be 0 or between 1e-300 and 1e\+300 .*got 9.99989e-321"),
    (1.0, 1e-7, 1, "1e-07 is less than 1e-06 of the largest load_share"),
    (1e6, 0.5, 1, r"0.5 is less than 1e-06 of the largest load_share \(1e\+06\)"),
])
def test_load_shares_beyond_the_solvers_range_are_refused(share_a, share_b, index, match):
    with pytest.raises(InputError, match=match) as info:
        scenario_from_dict(_two_classes(share_b, share_a))
    assert info.value.field == f"classes[{index}].load_share"


def test_a_small_load_share_is_one_line_and_writes_nothing(tmp_path):
    text = QUICK.replace("load_share = 1\n", "load_share = 1e-9\n", 1)
    assert text != QUICK
    path = _file(tmp_path, text)
    _refused(_cli("fluid", str(path), "-o", "out.csv", cwd=tmp_path),
             f"error: {path}: classes[0].load_share: 1e-09 is less than")
    assert not (tmp_path / "out.csv").exists()


def test_the_smallest_load_share_accepted_is_still_resolved():
    """At the bound (1e-6 of the largest) the fluid γ of the small class is its limit as
    its load vanishes: the γ at 1e-5 and at the bound agree to 1e-5 (they differ by
    ~1.4e-6, the γ's own slope in ρ_b; at 1e-8 the solver was 4e-3 off), and zero is
    still allowed."""
    gammas = []
    for share in (1e-5, MIN_LOAD_SHARE_RATIO):
        table = mrfq.fluid(scenario_from_dict(_two_classes(share)))
        gammas.append(float(table.set_index("class").loc["b", "gamma"]))
    assert gammas[1] == pytest.approx(gammas[0], rel=1e-5)
    assert 0.5 < gammas[1] < 0.7
    scenario_from_dict(_two_classes(0.0))
    with pytest.raises(InputError, match="less than 1e-06 of the largest"):
        scenario_from_dict(_two_classes(MIN_LOAD_SHARE_RATIO / 2))


def test_the_fluid_solvers_refuse_what_the_file_refuses():
    """The same bounds for every caller of the solvers (a Scenario made with
    dataclasses.replace, ``service_rates``): a class at 5e-11 of the other got a γ 12.6%
    off with an error estimate of 4e-9; a weight of 1e308 a ZeroDivisionError."""
    requirements = [[1.0, 0.5], [0.5, 1.0]]
    with pytest.raises(InputError, match="class 1's load 5e-11 is less than") as info:
        service_rates("drf", requirements, [0.5, 5e-11])
    assert info.value.field == "loads"
    with pytest.raises(InputError, match="must be between 1e-06 and 1e\\+06") as info:
        service_rates("drf", requirements, [0.3, 0.3], weights=[1e308, 1.0])
    assert info.value.field == "weights"
    scenario = scenario_from_dict(_two_classes(1.0))
    tiny = replace(scenario, classes=(scenario.classes[0],
                                      replace(scenario.classes[1], load_share=1e-10)))
    with pytest.raises(InputError, match="less than 1e-06 of the largest"):
        mrfq.fluid(tiny, jobs=1)
    assert service_rates("drf", requirements, [0.3, 0.3], weights=[1e6, 1.0]).gamma[0] > 0.69


@pytest.mark.parametrize("weight, accepted", [(1e6, True), (1e-6, True), (1.1e6, False),
                                              (1e-7, False), (1e308, False)])
def test_weights_beyond_the_solvers_range_are_refused(weight, accepted):
    raw = _two_classes(1.0)
    raw["classes"][0]["weight"] = weight
    if accepted:
        assert scenario_from_dict(raw).classes[0].weight == weight
        return
    with pytest.raises(InputError, match="must be between 1e-06 and 1e\\+06") as info:
        scenario_from_dict(raw)
    assert info.value.field == "classes[0].weight"


def test_every_function_taking_loads_refuses_a_repeated_one():
    scenario = scenario_from_dict(_two_classes(1.0))
    with pytest.raises(InputError, match="values must be distinct: 0.5 is given twice"):
        fluid_curves(scenario, loads=[0.5, 0.5])
    with pytest.raises(InputError, match="values must be distinct: 0.3 is given twice"):
        advise("fig3_quick", loads=[0.3, 0.5, 0.3])


@pytest.mark.parametrize("call", [
    lambda: mrfq.fluid("fig1_balanced", loads=0.5, log="yes"),
    lambda: mrfq.cluster("quickstart", log=print.__name__),
])
def test_a_log_that_is_not_a_function_is_refused(call):
    """``log="yes"`` was a TypeError from inside the sweep."""
    with pytest.raises(InputError, match="must be a function of one string") as info:
        call()
    assert info.value.field == "log"


def test_problem_weights_beyond_the_solvers_range_are_refused(tmp_path):
    """A user's weight of 1e308 ended in HiGHS's "model error" traceback."""
    text = PROBLEM.replace("demand = [1, 4]\n", "demand = [1, 4]\nweight = 1e308\n", 1)
    assert text != PROBLEM
    _raises(text, "users[0].weight", "must be between 1e-06 and 1e\\+06", tmp_path=tmp_path)
    problem = load_problem(_file(tmp_path, PROBLEM, "p.toml"))
    with pytest.raises(InputError, match="weights must be between") as info:
        replace(problem, weights=[1e-7, 1.0])  # (checked on construction)
    assert info.value.field == "weights"


@pytest.mark.parametrize("capacity, accepted", [(1e-9, False), (1e10, False), (1e-6, True),
                                                (1e9, True), (0.0, True)])
def test_listed_server_capacities_beyond_the_kernels_tolerance_are_refused(capacity,
                                                                           accepted):
    """Capacities of 1e-9 (the cluster kernel's absolute fit tolerance) crashed the run
    (more tasks running than its heap holds: a segfault or heap corruption)."""
    raw = _two_classes(1.0)
    raw["cluster"] = {"policies": ["drf"], "jobs": 400, "mean_tasks": 5,
                      "servers": [[capacity, 1.0], [1.0, 1.0]]}
    if accepted:
        assert scenario_from_dict(raw).cluster.servers[0][0][0] == capacity
        return
    with pytest.raises(InputError, match="entries must be 0 or between 1e-06 and 1e\\+09"):
        scenario_from_dict(raw)


def test_flow_level_flows_beyond_memory_are_refused():
    """``[fluid] flows = 1e12`` asked for 7 TiB (a MemoryError traceback)."""
    raw = _two_classes(1.0)
    raw["fluid"]["flows"] = 10**12
    with pytest.raises(InputError, match="must be <= 300,000,000 .*40 bytes") as info:
        scenario_from_dict(raw)
    assert info.value.field == "fluid.flows"
    raw["fluid"]["flows"] = 3 * 10**8
    assert scenario_from_dict(raw).fluid.flows == 3 * 10**8


@pytest.mark.parametrize("size, field, accepted", [
    ({"distribution": "hyperexponential", "scv": 1e16}, "scv", False),  # ZeroDivisionError
    ({"distribution": "hyperexponential", "scv": 1e12}, "scv", True),
    ({"distribution": "lognormal", "sigma": 12.0}, "sigma", False),  # γ inf, then overflow
    ({"distribution": "lognormal", "sigma": 8.0}, "sigma", True),
    ({"distribution": "pareto", "shape": 1.5, "max": 1e308}, "max", False),  # OverflowError
    ({"distribution": "pareto", "shape": 1.5, "max": 1e100}, "max", True),
])
def test_size_law_parameters_beyond_the_moments_range_are_refused(size, field, accepted):
    raw = _two_classes(1.0)
    raw["classes"][0]["size"] = size
    if accepted:
        scenario = scenario_from_dict(raw)
        assert math.isfinite(scenario.classes[0].size.raw_moment(3))
        return
    with pytest.raises(InputError, match="must") as info:
        scenario_from_dict(raw)
    assert info.value.field == f"classes[0].size.{field}"


def test_packets_beyond_the_engines_count_are_refused_before_the_run(tmp_path):
    """``mean_size = 1e308`` overflowed and hung; ~1e9 ran until the engine's 2^43
    packet arrivals, hours in, before failing."""
    raw = _two_classes(1.0)
    raw["packet"] = {"policies": ["bmf"], "flows": 10**4, "mean_size": 1e9}
    with pytest.raises(InputError, match="2e\\+13 packet arrivals per replication") as info:
        scenario_from_dict(raw)
    assert info.value.field == "packet.mean_size"
    raw["packet"]["mean_size"] = 1e8
    scenario = scenario_from_dict(raw)
    with pytest.raises(InputError, match="inf packet arrivals") as info:
        scenario.with_overrides(mean_size=1e308)
    assert info.value.field == "mean_size"
    _refused(_cli("simulate", "quickstart", "--policy", "bmf", "--load", "0.3", "--mean-size",
                  "1e308", cwd=tmp_path), "error: --mean-size: ")


def test_loads_too_small_to_see_a_flow_are_refused(tmp_path):
    """A load of 1e-200 ended in the Markov solver's "Poisson equation did not converge"
    traceback (1e-160 gave γ 0.999987 with an error estimate of 0)."""
    raw = _two_classes(1.0, load=1e-10)
    with pytest.raises(InputError, match="load must be >= 1e-09") as info:
        scenario_from_dict(raw)
    assert info.value.field == "load.values[0]"
    _refused(_cli("fluid", "fig1_balanced", "--loads", "1e-200", "-o", "f.csv", cwd=tmp_path),
             "error: --loads: load must be >= 1e-09")
    table = mrfq.fluid(scenario_from_dict(_two_classes(1.0, load=1e-9)), jobs=1)
    assert table["gamma"].to_numpy() == pytest.approx(1.0, abs=1e-8)


def test_requirements_all_in_subnormal_numbers_are_refused():
    """[1.4e-323, 1e-323] was normalised to [1, 0.667] (the digits lost), not 0.714."""
    raw = _two_classes(1.0)
    raw["classes"][0]["requirements"] = [1.4e-323, 1e-323]
    with pytest.raises(InputError, match="requirements are relative, scale them") as info:
        scenario_from_dict(raw)
    assert info.value.field == "classes[0]"
    raw["classes"][0]["requirements"] = [1.4e-300, 1e-300]
    assert scenario_from_dict(raw).classes[0].requirements[1] == pytest.approx(1 / 1.4)


def test_a_timeline_beyond_any_run_is_refused(tmp_path):
    """``duration = 1e308`` ran without end (windowed flows send until their stop)."""
    text = ROGUE.replace("duration = 400", "duration = 1e308", 1).replace(
        "interval = 10", "interval = 1e303", 1)
    _raises(text, "timeline.duration", "must be <= 1e9 time units", tmp_path=tmp_path)
    # (1e9 itself: the rogue's open-loop rate would offer more than its 10^9 packets)
    longest = ROGUE.replace("duration = 400", "duration = 1e6", 1)
    assert load_scenario(_file(tmp_path, longest, "ok.toml")).timeline.duration == 1e6


def test_cluster_runs_beyond_any_task_count_are_refused():
    """``mean_tasks = 2^53`` (one job's bound) hung the cluster run."""
    raw = _two_classes(1.0)
    raw["cluster"] = {"policies": ["drf"], "jobs": 400, "mean_tasks": 2**53}
    with pytest.raises(InputError, match="tasks, more than 2\\^43 in one run") as info:
        scenario_from_dict(raw)
    assert info.value.field == "cluster.mean_tasks"
    raw["cluster"]["mean_tasks"] = 2**30
    assert scenario_from_dict(raw).cluster.jobs == 400
