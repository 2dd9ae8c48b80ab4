"""Problem files: the scenario's field checks and the one-line error contract of the CLI
(``error: <file>: <field>: <problem>``, exit code 2, no traceback, no output file)."""

import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from mrfq.allocation import POLICIES, load_problem, problem_from_dict
from mrfq.cli import main
from mrfq.errors import InputError

HEAD = 'resources = ["cpu", "mem"]\n'
SERVER = '[[servers]]\nname = "node"\ncapacity = [9, 18]\n'


def user(extra="", demand="[1, 4]"):
    return f'[[users]]\nname = "u1"\ndemand = {demand}\n{extra}\n'


# (file text, field, a piece of the problem that must be in the message)
BAD = {
    "weight not a number": (HEAD + SERVER + user('weight = "heavy"'), "users[0].weight",
                            "must be a number, got 'heavy'"),
    "servers not names": (HEAD + SERVER + user("servers = [1]"), "users[0].servers",
                          "must be a list of servers, got 1"),
    "lone unknown server": (HEAD + SERVER + user('servers = "nod"'), "users[0].servers",
                            "unknown server 'nod'"),
    "lone unknown policy": ('policies = "dfr"\n' + HEAD + SERVER + user(), "policies",
                            "unknown policy 'dfr'"),
    "capacity not numeric": (HEAD + '[[servers]]\ncapacity = ["a lot", 18]\n' + user(),
                             "servers[0].capacity[0]", "must be a number"),
    "negative max_tasks": (HEAD + SERVER + user("max_tasks = -1"), "users[0].max_tasks",
                           "must be non-negative"),
    "zero weight": (HEAD + SERVER + user("weight = 0"), "users[0].weight",
                    "must be positive"),
    "unknown top key": ('colour = "red"\n' + HEAD + SERVER + user(), "colour",
                        "unknown key"),
    "unknown user key": (HEAD + SERVER + user("priority = 1"), "users[0].priority",
                         "unknown key"),
    "unknown server key": (HEAD + SERVER + "memory = 3\n" + user(), "servers[0].memory",
                           "unknown key"),
    "missing users": (HEAD + SERVER, "users", "at least one [[users]]"),
    "users not tables": (HEAD + "users = [1]\n" + SERVER, "users[0]", "must be a table"),
    "demand too long": (HEAD + SERVER + user(demand="[1, 2, 3]"), "users[0].demand",
                        "has 3 entries, expected 2"),
    "capacity too short": (HEAD + '[[servers]]\ncapacity = [9]\n' + user(),
                           "servers[0].capacity", "has 1 entries, expected 2"),
    "demand missing": (HEAD + SERVER + '[[users]]\nname = "u1"\n', "users[0].demand",
                       "missing"),
    "negative demand": (HEAD + SERVER + user(demand="[-1, 4]"), "users[0].demand[0]",
                        "must be non-negative, got -1"),
    "nan demand": (HEAD + SERVER + user(demand="[nan, 4]"), "users[0].demand[0]",
                   "must be finite"),
    "resources missing": (SERVER + user(), "resources", "missing"),
    "resources repeated": ('resources = ["cpu", "cpu"]\n' + SERVER + user(), "resources",
                           "distinct"),
    "server names repeated": (HEAD + SERVER + SERVER + user(), "servers", "distinct"),
    "user name not text": (HEAD + SERVER + user("").replace('"u1"', "7"), "users[0].name",
                           "must be a string"),
    "resource nowhere": (HEAD + '[[servers]]\ncapacity = [9, 0]\n' + user(), "servers",
                         "resource 'mem' has no capacity"),
    "ibaa on three resources": ('resources = ["a", "b", "c"]\npolicies = ["ibaa"]\n'
                                + user(demand="[1, 1, 1]"), "resources", "two resources"),
}


def _allocate(tmp_path, text, *options):
    path = tmp_path / "problem.toml"
    path.write_text(text)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(main, ["allocate", str(path), "-o", str(out),
                                       "--no-properties", *options])
    return path, out, result


@pytest.mark.parametrize("case", list(BAD))
def test_bad_problem_file_is_one_line(tmp_path, case):
    text, field, problem = BAD[case]
    path, out, result = _allocate(tmp_path, text)
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}: {field}: "), lines[0]
    assert problem in lines[0], lines[0]
    assert result.stdout == ""
    assert not out.exists()


def test_bad_problem_file_in_a_real_process(tmp_path):
    """The same contract end to end (entry point, exit status, no traceback)."""
    path = tmp_path / "problem.toml"
    path.write_text(HEAD + SERVER + user('weight = "heavy"'))
    out = tmp_path / "out.csv"
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "allocate", str(path),
                             "-o", str(out)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: users[0].weight: must be a number, got 'heavy'"]
    assert result.stdout == "" and not out.exists()


def test_unknown_policy_option_names_the_option(tmp_path):
    _, out, result = _allocate(tmp_path, HEAD + SERVER + user(), "--policies", "dfr")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: --policies: unknown policy 'dfr' (choose from {', '.join(POLICIES)}; "
        "did you mean 'drf'?)"]
    assert not out.exists()


def test_lone_strings_are_one_element_lists_as_in_scenarios(tmp_path):
    """``fields.name_list`` (scenario policies) reads a lone string as a one-element list;
    problem files share it, so ``servers = "node"`` and ``policies = "drf"`` mean what
    they say instead of being iterated letter by letter."""
    text = ('policies = "drf"\n' + HEAD + SERVER
            + '[[servers]]\nname = "other"\ncapacity = [9, 18]\n' + user('servers = "node"'))
    _, out, result = _allocate(tmp_path, text)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("== ") == 1 and "== drf" in result.stdout
    problem = load_problem(tmp_path / "problem.toml")
    assert problem.policies == ("drf",)
    assert problem.allowed.tolist() == [[True, False]]
    assert out.read_text().splitlines()[0].startswith("policy,user,tasks,dominant_share")


def test_fields_reach_the_problem():
    raw = {"resources": ["cpu", "mem"],
           "servers": [{"name": "a", "capacity": [4, 8]}, {"name": "b", "capacity": [2, 1]}],
           "users": [{"name": "x", "demand": [1, 2], "weight": 2, "max_tasks": 3,
                      "servers": ["b"]},
                     {"demand": [2, 1]}]}
    problem = problem_from_dict(raw, "f.toml")
    assert problem.policies == ()  # none listed: every policy that applies
    assert problem.users == ("x", "u2") and problem.servers == ("a", "b")
    assert problem.resources == ("cpu", "mem")
    assert problem.capacity.tolist() == [[4, 8], [2, 1]]
    assert problem.demand.tolist() == [[1, 2], [2, 1]]
    assert problem.weights.tolist() == [2, 1]
    assert problem.max_tasks[0] == 3 and np.isinf(problem.max_tasks[1])
    assert problem.allowed.tolist() == [[False, True], [True, True]]
    # no [[servers]]: one unit pool
    pooled = problem_from_dict({"resources": ["r"], "users": [{"demand": [1]}]})
    assert pooled.capacity.tolist() == [[1.0]]
    with pytest.raises(InputError) as info:
        problem_from_dict({"resources": ["r"], "users": [{"demand": [1], "weight": "x"}]},
                          "f.toml")
    assert info.value.message.startswith("f.toml: users[0].weight: ")


def test_policies_set_on_a_problem_by_hand_are_checked_like_the_files():
    """``Problem.policies`` set by hand: case-insensitive names, a lone string is one name,
    an unknown name is an InputError with the registry's suggestion (not a KeyError)."""
    from dataclasses import replace

    from mrfq.allocation import allocation_report

    problem = load_problem("drf_slides")
    for given in (("DRF",), "drf"):
        report = allocation_report(replace(problem, policies=given), properties=False)
        assert [r.policy for r in report.results] == ["drf"]
    with pytest.raises(InputError, match="did you mean 'drf'"):
        allocation_report(replace(problem, policies=("drff",)), properties=False)
