"""The ``[cluster]`` section and the cluster kind of point: parsed and checked like the
other sections (one-line errors), absent unless asked for, and swept, summarised and
validated against the fluid γ by the same machinery as packet points."""

import subprocess
import sys

import pytest
from conftest import FIG3_CLASSES

from mrfq import policies
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict
from mrfq.sweeps import run_sweep, sweep_groups
from mrfq.validation import validate_summary

NAME = policies.named(policies.CLUSTER)


def _raw(**cluster):
    raw = {"resources": ["cpu", "link"], "classes": FIG3_CLASSES,
           "load": {"values": [0.3]}, "fluid": {"policies": ["drf"]}}
    if cluster is not None:
        raw["cluster"] = cluster
    return raw


def test_no_cluster_section_no_cluster_points():
    scenario = scenario_from_dict({k: v for k, v in _raw().items() if k != "cluster"})
    assert scenario.cluster.policies == ()
    assert not [g for g in sweep_groups(scenario) if g[0] == policies.CLUSTER]
    assert "cluster" not in scenario.to_dict()


def test_a_cluster_section_takes_the_registry_defaults_and_round_trips():
    scenario = scenario_from_dict(_raw(mean_tasks=50, jobs=300))
    assert scenario.cluster.policies == policies.defaults(policies.CLUSTER)
    assert scenario.cluster.mean_tasks == 50 and scenario.cluster.jobs == 300
    again = scenario_from_dict(scenario.to_dict())
    assert again.cluster == scenario.cluster
    groups = [g for g in sweep_groups(scenario) if g[0] == policies.CLUSTER]
    assert [g[1] for g in groups] == list(scenario.cluster.policies)


@pytest.mark.parametrize("cluster,field,problem", [
    ({"mean_tasks": 0.5}, "cluster.mean_tasks", "must be >= 1 task"),
    ({"tasks_per_resource": 0.5}, "cluster.tasks_per_resource", "must fit the pool"),
    ({"policies": ["drfq"]}, "cluster.policies", "unknown policy"),
    ({"tasks": "poisson"}, "cluster.tasks", "must be 'geometric' or 'fixed', or a size-law table"),
    ({"jobs": 10}, "cluster.jobs", "must be >= 22 (2 measured jobs per batch, 10 batches"),
    ({"jobz": 10}, "cluster", "jobz"),
])
def test_bad_cluster_values_name_their_field(cluster, field, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(**cluster), "s.toml")
    text = str(info.value)
    assert text.startswith(f"s.toml: {field}"), text
    assert problem in text, text


def test_a_bad_cluster_section_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "link"]\n[[classes]]\nrequirements = [1, 0.5]\n'
                    'load_share = 1\n[cluster]\nmean_tasks = 0\n')
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "sweep", str(path), "-o",
                             str(out)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: cluster.mean_tasks: must be a number > 0, got 0"] or (
        len(result.stderr.splitlines()) == 1
        and result.stderr.startswith(f"error: {path}: cluster.mean_tasks: "))
    assert not out.exists()


def test_cluster_points_are_swept_summarised_and_validated(tmp_path):
    raw = _raw(policies=[NAME.DRF, NAME.FIFO], jobs=400, mean_tasks=20,
               tasks_per_resource=5)
    summary = run_sweep(scenario_from_dict(raw), tmp_path / "r", jobs=1,
                        kinds=(policies.FLUID, policies.CLUSTER))
    cluster = summary[summary["kind"] == policies.CLUSTER]
    assert sorted(set(cluster["policy"])) == sorted([NAME.DRF, NAME.FIFO])
    assert (cluster["ci_low"] <= cluster["gamma"]).all()
    assert (cluster["gamma"] <= cluster["ci_high"]).all()
    table = validate_summary(summary)
    # drf realises the fluid drf; fifo has no fluid counterpart and is not validated
    assert set(table["kind"]) == {policies.CLUSTER}
    assert set(table["policy"]) == {NAME.DRF}
    assert len(table) == len(FIG3_CLASSES)
    assert table["fluid_gamma"].notna().all()


def test_the_cluster_command_runs_fluid_and_cluster_points_only(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu", "link"]\n'
                    '[[classes]]\nrequirements = [0.1, 1]\nload_share = 4\n'
                    '[[classes]]\nrequirements = [1, 0.1]\nload_share = 1\n'
                    '[load]\nvalues = [0.3]\n[fluid]\npolicies = ["drf"]\n'
                    '[cluster]\npolicies = ["drf"]\njobs = 400\nmean_tasks = 20\n'
                    'tasks_per_resource = 5\n')
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "cluster", str(path), "-o",
                             str(out), "--jobs", "1", "--tolerance", "1"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "2/2 points pass" in result.stdout
    kinds = {name.split("-")[0] for name in (p.name for p in (out / "points").iterdir())}
    assert kinds == {policies.FLUID, policies.CLUSTER}
    assert (out / "validation.csv").is_file()
    assert "2 points, 0 already done, 2 to compute" in result.stdout + result.stderr
    # run again: it says what it reuses, as `mrfq run` and `mrfq sweep` do (it said nothing)
    again = subprocess.run([sys.executable, "-m", "mrfq.cli", "cluster", str(path), "-o",
                            str(out), "--jobs", "1", "--tolerance", "1"],
                           capture_output=True, text=True)
    assert "2 points, 2 already done, 0 to compute" in again.stdout + again.stderr


def test_the_cluster_command_needs_a_cluster_section(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('resources = ["cpu"]\n[[classes]]\nrequirements = [1]\n'
                    'load_share = 1\n')
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "cluster", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: cluster: the scenario has no [cluster] section"]
