"""The Python API's arguments: each wrong type or empty list is one InputError naming the
keyword (the CLI shows the option), a string list is comma-separated as on the command
line, never split letter by letter (docs/guide/python.md)."""

import subprocess
import sys

import numpy as np
import pytest

import mrfq
from mrfq import arguments
from mrfq.errors import InputError


@pytest.mark.parametrize("call,field,starts", [
    (lambda: mrfq.fluid("fig1_balanced", loads="0.5,x"), "loads", "must be numbers"),
    (lambda: mrfq.fluid("fig1_balanced", loads=[]), "loads", "names no value"),
    (lambda: mrfq.fluid("fig1_balanced", loads="0.3,0.3"), "loads", "values must be distinct"),
    (lambda: mrfq.plan("fig3_quick", loads=[0.5, 0.5]), "loads", "values must be distinct"),
    (lambda: mrfq.fluid("fig1_balanced", loads=["a"]), "loads", "must be a list of finite"),
    (lambda: mrfq.fluid("fig1_balanced", loads=[True]), "loads", "must be a list of finite"),
    (lambda: mrfq.fluid("fig1_balanced", loads=[0.5], jobs="2"), "jobs", "must be a whole"),
    (lambda: mrfq.fluid("fig1_balanced", loads=[0.5], jobs=1.5), "jobs", "must be a whole"),
    (lambda: mrfq.fluid("fig1_balanced", loads=[0.5], tolerance="x"), "tolerance",
     "must be a finite number"),
    (lambda: mrfq.fluid("fig1_balanced", 3), "results_dir", "must be a path"),
    (lambda: mrfq.fluid("fig1_balanced", policies=""), "policies", "names nothing"),
    (lambda: mrfq.fluid("fig1_balanced", policies="d"), "policies", "unknown policy 'd'"),
    (lambda: mrfq.fluid("fig1_balanced", policies=[1]), "policies", "must be a list of names"),
    (lambda: mrfq.validate(3), "results", "must be a path"),
    (lambda: mrfq.simulate(None, "bmf", 0.5), "scenario", "must be given"),
    (lambda: mrfq.plan("fig3_quick", seed=-1), "seed", "must be >= 0"),
    (lambda: mrfq.plan("fig3_quick", jobs=0), "jobs", "must be >= 1"),
    (lambda: mrfq.plan("fig3_quick", policies="bmf,nope"), "policies", "unknown policy"),
    (lambda: mrfq.allocate("drf_slides", []), "policies", "names nothing"),
    (lambda: mrfq.allocate("drf_slides", "drf,nope"), "policies", "unknown policy 'nope'"),
    (lambda: mrfq.run("quickstart", ""), "results_dir", "is an empty path"),
    (lambda: mrfq.cluster("quickstart", jobs=0), "jobs", "must be >= 1"),
    (lambda: mrfq.sweep("quickstart", jobs=True), "jobs", "must be a whole number"),
    # as on the command line (a review, 2026-11-29: the API dropped the empty item, and a
    # log or progress function of the wrong arity raised a TypeError at its first use)
    (lambda: mrfq.fluid("fig1_balanced", loads="0.5,,0.6"), "loads", "an empty value in"),
    (lambda: mrfq.fluid("fig1_balanced", policies="drf,,pf"), "policies", "an empty value"),
    (lambda: mrfq.fluid("fig1_balanced", policies=["drf", ""]), "policies",
     "an empty name in ['drf', '']"),
    (lambda: mrfq.sweep("quickstart", log=lambda: None), "log",
     "must be a function of one string, or None; got one that cannot take one argument"),
    (lambda: mrfq.sweep("quickstart", progress=lambda done: None), "progress",
     "must be True, False or a callable (done, total), got one that cannot take"),
])
def test_a_bad_argument_is_one_input_error_naming_its_keyword(call, field, starts):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field and info.value.source is None
    assert info.value.problem.startswith(starts), info.value.problem


def test_lists_as_the_command_line_writes_them():
    assert arguments.names("drf, pf", "policies") == ("drf", "pf")
    assert arguments.names(["drf"], "policies") == ("drf",)
    assert arguments.names(None, "policies") is None
    assert arguments.numbers("0.3,0.6", "loads") == (0.3, 0.6)
    assert arguments.numbers(0.5, "loads") == (0.5,)
    assert arguments.numbers(None, "loads") is None
    assert arguments.count(4.0, "jobs") == 4


def test_a_string_of_one_policy_runs_that_policy(tmp_path):
    """``policies="drf"`` used to be taken letter by letter ('d' unknown)."""
    table = mrfq.fluid("fig1_balanced", policies="drf", loads=0.3, jobs=1)
    assert set(table["policy"]) == {"drf"} and set(table["load"]) == {0.3}


@pytest.mark.parametrize("option,message", [
    ("--policies", "error: --policies: names nothing"),
    ("--loads", "error: --loads: names no value"),
    ("--results", "error: --results: an empty path"),
    ("--loads=0.3,0.3", "error: --loads: values must be distinct"),
])
def test_an_empty_option_is_refused_not_taken_as_its_default(tmp_path, option, message):
    """``--loads ''`` (often an unset shell variable) used to run every load; a repeated
    load was silently dropped (the scenario file's load.values refuses it)."""
    given = [option] if "=" in option else [option, ""]
    result = subprocess.run([sys.executable, "-m", "mrfq", "fluid", "fig1_balanced", "-o",
                             str(tmp_path / "f.csv"), *given], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "f.csv").exists()


@pytest.mark.parametrize("policy,keyword,value,readers", [
    ("drfq", "delta", 5.0, "drfq-dovetail reads"),
    ("bmf", "virtual_time", "started", "drfq and drfq-dovetail read"),
])
def test_a_parameter_the_policy_does_not_read_is_refused(policy, keyword, value, readers):
    """``--delta`` with drfq, ``--virtual-time`` with bmf used to run and ignore it."""
    with pytest.raises(InputError) as info:
        mrfq.simulate("fig3_quick", policy, 0.5, flows=100, **{keyword: value})
    assert info.value.field == keyword
    assert info.value.problem == f"only {readers} it, not {policy}"


@pytest.mark.parametrize("listed,key,value,problem", [
    (["drfq"], "delta", 5,
     "no policy run or listed in packet.policies (drfq) reads it; drfq-dovetail does"),
    (["pf"], "virtual_time", "started",
     "no policy run or listed in packet.policies (pf) reads it; drfq and drfq-dovetail do"),
    (["drfq", "bmf"], "fq_resource", "cpu",
     "no policy run or listed in packet.policies (drfq, bmf) reads it; bottleneck-fq does"),
])
def test_a_file_parameter_no_policy_of_the_run_reads_is_refused(tmp_path, listed, key, value,
                                                                 problem):
    """A file's ``delta`` with only drfq listed and run (or ``virtual_time`` with pf) ran
    and ignored it, though the CLI and the API refuse the same value for such a policy.
    It is refused where a run starts, before any work: a sweep of the file's policies, a
    simulate of one; a policy that reads it, listed or run, takes it."""
    from mrfq.scenario import scenario_from_dict

    raw = {"name": "s", "resources": ["cpu", "link"],
           "classes": [{"name": "1", "requirements": [1, 0.5], "load_share": 1}],
           "packet": {"policies": listed, key: value, "flows": 50, "mean_size": 5}}
    scenario = scenario_from_dict(raw, "s.toml")  # read (a stored scenario reads back)
    with pytest.raises(InputError) as info:
        mrfq.sweep(scenario, tmp_path / "out", jobs=1)
    assert str(info.value) == f"s.toml: packet.{key}: {problem}"
    assert not (tmp_path / "out").exists()
    with pytest.raises(InputError) as info:
        mrfq.simulate(scenario, listed[0], 0.5)
    assert str(info.value) == f"s.toml: packet.{key}: {problem}"
    reader = {"delta": "drfq-dovetail", "virtual_time": "drfq",
              "fq_resource": "bottleneck-fq"}[key]
    assert len(mrfq.simulate(scenario, reader, 0.5).classes) == 1  # a reader run: taken
    listed_reader = scenario.with_overrides(policies=[*listed, reader])
    assert len(mrfq.simulate(listed_reader, listed[0], 0.5).classes) == 1  # a reader listed


def test_a_stored_scenario_reads_back_with_a_parameter_no_policy_reads(tmp_path):
    """Results directories of older versions stored Δ always ("delta": 30.0 with drfq,
    pf, bmf, e.g. reproduction/cluster_fig2): `mrfq validate` and `plot` still read
    them (the check is where a run starts, not where a file is read)."""
    import json

    from mrfq.sweeps import stored_scenario

    raw = {"resources": ["cpu", "link"],
           "classes": [{"name": "1", "requirements": [1, 0.5], "load_share": 1}],
           "packet": {"policies": ["drfq", "pf", "bmf"], "delta": 30.0}}
    (tmp_path / "scenario.json").write_text(json.dumps(raw))
    assert stored_scenario(tmp_path).packet.delta == 30.0


def test_a_file_asking_more_flows_than_the_engine_can_number_is_refused_by_its_field():
    """The engine numbers at most 2^43 packet arrivals per replication (each flow makes
    one): a file's ``flows`` beyond it is refused with the file, before any run."""
    from mrfq.packet import kernel
    from mrfq.scenario import checks, scenario_from_dict

    assert checks.MAX_FLOWS == kernel.MAX_SEQ
    raw = {"resources": ["cpu", "link"],
           "classes": [{"name": "1", "requirements": [1, 0.5], "load_share": 1}],
           "packet": {"flows": 1e19}}
    with pytest.raises(InputError) as info:
        scenario_from_dict(raw, "big.toml")
    assert str(info.value).startswith("big.toml: packet.flows: must be <= 8,796,093,022,208")
    # the packets they bring count too: flows × mean_size × resources < 2^43
    scenario_from_dict({**raw, "packet": {"flows": 2**41, "mean_size": 1}}, "ok.toml")
    with pytest.raises(InputError, match="packet arrivals per replication"):
        scenario_from_dict({**raw, "packet": {"flows": 2**42, "mean_size": 1}}, "no.toml")


def test_tolerance_none_is_the_default_and_a_path_like_is_a_path(tmp_path):
    """``tolerance=None`` used to reach the check as None (TypeError); any os.PathLike
    is a path, as Path() takes it."""
    import os

    class Where(os.PathLike):
        def __fspath__(self):
            return str(tmp_path / "out")

    assert arguments.real(None, "tolerance", 0.05) == 0.05
    assert arguments.path(Where(), "results_dir") == tmp_path / "out"
    assert arguments.names("drf pf", "policies") == ("drf", "pf")
    with pytest.raises(InputError, match="holds no summary.csv"):
        mrfq.validate(tmp_path, tolerance=None)


def test_a_file_error_is_the_files_even_with_an_option_of_that_name(tmp_path):
    """An option of the same last name (--seed, --jobs) must not take the blame for a bad
    value in the file; a check failing on the option's own value names the option."""
    bad = tmp_path / "s.toml"
    bad.write_text('resources = ["cpu", "link"]\n[[classes]]\nname = "1"\n'
                   'requirements = [1, 0.5]\nload_share = 1\n[packet]\nseed = -1\n')
    result = subprocess.run([sys.executable, "-m", "mrfq", "simulate", str(bad), "--policy",
                             "bmf", "--load", "0.3", "--seed", "4"], capture_output=True,
                            text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {bad}: packet.seed: must be >= 0"), result.stderr
    result = subprocess.run([sys.executable, "-m", "mrfq", "simulate", "fig3_quick",
                             "--policy", "fifo", "--load", "0.3", "--init", "fluid"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("error: --init: "), \
        result.stderr


def test_explicit_flows_refuse_a_parameter_no_policy_of_the_run_reads(tmp_path):
    """`mrfq flows` with Δ set and only drfq run or listed ignored Δ; refused before any
    run or file, and taken when a chosen policy reads it."""
    scenario = mrfq.load_scenario("isolation_rogue").with_overrides(
        delta=5.0, policies=["drfq"])
    with pytest.raises(InputError) as info:
        mrfq.flows(scenario, tmp_path / "out", policies=["drfq", "fifo"])
    assert info.value.field == "packet.delta" and "drfq-dovetail does" in info.value.problem
    assert not (tmp_path / "out").exists()


def test_run_flows_takes_the_other_policies_by_any_spelling():
    """run_flows(running=...) compared the names as given: "DRFQ-Dovetail" did not count
    as the reader of a file's Δ."""
    from mrfq.packet.flows import run_flows

    scenario = mrfq.load_scenario("isolation_rogue").with_overrides(delta=5.0,
                                                                   policies=["drfq"])
    run = run_flows(scenario, "drfq", running=["DRFQ-Dovetail"])
    assert run.policy == "drfq"


@pytest.mark.parametrize("value", ["no", "false", 1, 0.0])
def test_a_switch_takes_true_or_false_only(value):
    """``allocate(properties="no")`` ran the property checks ("no" is true in Python) and
    ``simulate(debug="yes")`` was taken as is: a switch is True or False (numpy's too)."""
    with pytest.raises(InputError, match="must be True or False") as info:
        mrfq.allocate("drf_slides", properties=value)
    assert info.value.field == "properties"
    with pytest.raises(InputError, match="must be True or False") as info:
        mrfq.simulate("quickstart", "bmf", 0.3, flows=200, debug=value)
    assert info.value.field == "debug"
    assert arguments.flag(np.False_, "x") is False and arguments.flag(None, "x", True) is True
    report = mrfq.allocate("drf_slides", properties=False)
    assert report is not None


def test_a_fixed_choice_is_case_insensitive_as_on_the_command_line(tmp_path):
    """``--method MARKOV`` is taken (click's case-insensitive choice, as the scenario
    file's values are); ``method="MARKOV"`` was refused by the API."""
    table = mrfq.fluid("quickstart", tmp_path / "r", loads=[0.5], method="MARKOV", jobs=1)
    assert set(table["method"]) == {"markov"}


def test_a_wrapped_log_function_is_judged_by_its_own_signature():
    """``inspect.signature`` follows ``functools.wraps`` to the wrapped function: a
    wrapper of one argument around a function of two was refused as a ``log``."""
    import functools

    def write(message, stream):
        stream.append(message)

    lines = []

    @functools.wraps(write)
    def log(message):
        write(message, lines)

    assert arguments.function(log, "log") is log
    assert arguments.accepts(functools.partial(write, stream=lines), "message")
    assert not arguments.accepts(write, "message")
