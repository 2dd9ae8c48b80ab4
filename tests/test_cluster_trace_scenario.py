"""Trace scenarios (issue 24): ``[cluster] trace`` plus servers runs a task_events file once
per cluster policy, from the CLI (``mrfq cluster``) and from Python (``mrfq.cluster``),
with one summary row per policy; bad input (a malformed row, a missing file, a task
larger than every server, classes beside a trace) is one line, exit 2, nothing written."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from naive_cluster import naive_cluster
from scipy import stats

import mrfq
from mrfq.cli import main
from mrfq.cluster.trace import google_like, load_task_events, write_task_events
from mrfq.scenario import load_scenario, scenario_from_dict

SMALL = Path(__file__).resolve().parent / "data" / "task_events_small.csv"
SCENARIO = """name = "t"
resources = ["cpu", "memory"]
[cluster]
trace = "{trace}"
policies = ["drfh-best-fit", "tsf"]
batches = 2
servers = [{{ capacity = [0.5, 0.5], count = 2 }}, [1.0, 0.25]]
"""


def _scenario(tmp_path, trace="trace.csv", text=SCENARIO):
    path = tmp_path / "s.toml"
    path.write_text(text.format(trace=trace))
    return path


def _cli(*args):
    return CliRunner().invoke(main, ["cluster", *map(str, args)])


def test_the_hand_made_trace_through_the_cli_gives_the_jobs_worked_out_by_hand(tmp_path):
    """tests/test_cluster_trace.py derives the small file's jobs: arrivals 0, 50, 300 s
    (job 10 was pending when the window opened, at 600 s), tasks of 60 and 80 s (job 10,
    demand (0.1, 0.3)), 5.5 s (job 11, same demand), 10 s; two dropped. On the three
    servers a 0.3-memory task fits only on the two of 0.5 memory, one each: job 11's task
    starts when job 10's first ends (60 s), so JCT 80, 15.5, 10."""
    shutil.copy(SMALL, tmp_path / "trace.csv")
    result = _cli(_scenario(tmp_path), "-o", tmp_path / "r")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "r" / "trace_summary.csv")
    assert table["policy"].tolist() == ["drfh-best-fit", "tsf"]
    row = table.iloc[0]
    assert (row.jobs, row.tasks, row.dropped_tasks, row.events) == (3, 4, 2, 8)
    assert row.jct_mean == pytest.approx((80 + 15.5 + 10) / 3)
    assert row.jct_p95 == pytest.approx(np.percentile([80, 15.5, 10], 95))
    assert row.makespan == pytest.approx(310.0)  # job 12: 300 + 10 s
    # busy over [0, 300 s] (the last arrival), a task holding its job's demand:
    # CPU 0.1 · (60 + 80 + 5.5) of 2.0, memory 0.3 · (60 + 80 + 5.5) of 1.25
    assert row.utilisation_cpu == pytest.approx(0.1 * (60 + 80 + 5.5) / (2.0 * 300))
    assert row.utilisation_memory == pytest.approx(0.3 * (60 + 80 + 5.5) / (1.25 * 300))
    assert np.isnan(row.jct_ci_low)  # 3 jobs: fewer than 2 per batch, no interval
    assert "drfh-best-fit" in result.output and "trace_summary.csv" in result.output


def test_the_packaged_example_from_python_matches_the_kernel_twin(tmp_path):
    """The shipped Google-like example: one row per policy, every task run, utilisation in
    (0, 1], a JCT interval around the mean, and the kernel's finish times as its twin's."""
    result = mrfq.cluster("google_like_trace", tmp_path / "r")
    scenario = load_scenario("google_like_trace")
    table = result.summary
    assert table["policy"].tolist() == list(scenario.cluster.policies)
    assert (tmp_path / "r" / "trace_summary.csv").is_file() and result.passed
    trace = load_task_events(scenario.cluster.trace)
    assert (table["tasks"] == 578).all() and (table["jobs"] == 40).all()
    assert (table["events"] == 2 * 578).all() and (table["dropped_tasks"] == 0).all()
    for r in scenario.resources:
        assert table[f"utilisation_{r}"].between(0.01, 1.0 + 1e-9).all()
    assert (table["jct_ci_low"] < table["jct_mean"]).all()
    assert (table["jct_mean"] < table["jct_ci_high"]).all()
    assert (table["jct_p95"] <= table["makespan"]).all()
    # the jct mean is the twin's (servers expanded as the scenario lists them)
    capacity = [[0.5, 0.5]] * 6 + [[0.5, 0.25]] * 3 + [[0.5, 0.75], [1.0, 1.0], [0.25, 0.25]]
    K = trace.demand.shape[0]
    for policy in ("drfh-best-fit", "slots"):
        finish, _ = naive_cluster(policy, capacity, trace.demand, [1.0] * K, trace.arrival,
                                  trace.job_class, trace.job_tasks, [1.0] * K, True, 1,
                                  14, None, trace.task_time.tolist())
        row = table[table["policy"] == policy].iloc[0]
        jct = np.array(finish) - trace.arrival
        assert row.jct_mean == pytest.approx(jct.mean(), rel=1e-12)
        # the interval: Student t on the means of 5 batches of consecutive jobs
        means = [b.mean() for b in np.array_split(jct, scenario.cluster.batches)]
        half = stats.t.ppf(0.975, 4) * np.std(means, ddof=1) / np.sqrt(5)
        assert row.jct_ci_high - row.jct_ci_low == pytest.approx(2 * half, rel=1e-9)


def test_a_google_like_trace_relative_to_the_scenario_file(tmp_path):
    write_task_events(google_like(30, 2, rate=0.1), tmp_path / "g.csv.gz")
    (tmp_path / "sub").mkdir()
    path = _scenario(tmp_path / "sub", "../g.csv.gz")
    scenario = load_scenario(path)
    assert scenario.cluster.trace == str((tmp_path / "g.csv.gz").resolve())
    assert scenario_from_dict(scenario.to_dict(), str(path)) == scenario
    table = mrfq.cluster(scenario, tmp_path / "r").summary
    assert len(table) == 2 and (table["jobs"] == 30).all()


@pytest.mark.parametrize("row,field", [
    ("700000000,,10,0,3,1,u1,2,4,0.1,0.2,0.001", "row 2: has 12 columns, expected 13"),
    ("700000000,,10,0,3,9,u1,2,4,0.1,0.2,0.001,0", "row 2, event type: must be 0 to 8"),
    ("700000000,,10,0,3,1,u1,2,4,0.1,1.5,0.001,0", "row 2, memory request: must be in"),
    ("650000000,,10,0,3,4,u1,2,4,0.1,0.2,0.001,0", "row 2, timestamp: FINISH at 650000000"),
])
def test_a_malformed_row_is_one_line_exit_2_and_nothing_written(tmp_path, row, field):
    trace = tmp_path / "trace.csv"
    trace.write_text(f"700000000,,10,0,3,1,u1,2,4,0.1,0.2,0.001,0\n{row}\n")
    result = _cli(_scenario(tmp_path), "-o", tmp_path / "r")
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {trace}: {field}"), result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


def test_a_truncated_gz_trace_is_one_line_exit_2_and_nothing_written(tmp_path):
    """A partial download of the real trace (a cut .csv.gz): named, not a traceback."""
    whole = tmp_path / "whole.csv.gz"
    write_task_events(google_like(40, 1), whole)
    (tmp_path / "trace.csv.gz").write_bytes(whole.read_bytes()[:3000])
    result = _cli(_scenario(tmp_path, "trace.csv.gz"), "-o", tmp_path / "r")
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {tmp_path / 'trace.csv.gz'}: the compressed file "
                                    "ends early (truncated .gz?; "), result.output
    assert result.output.count("\n") == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.format(trace="none.csv"), "cluster.trace: no such trace file: none.csv"),
    (lambda t: t.format(trace="trace.csv").replace("0.5, 0.5", "0.4, 0.5").replace(
        "1.0, 0.25", "0.4, 0.25"),
     "cluster.servers: a task of the trace (demand [0.5, 0.1]) is larger than every server"),
    (lambda t: t.format(trace="trace.csv").replace("servers = ", "x = "),
     "cluster.x: unknown key"),
    (lambda t: t.format(trace="trace.csv").replace("servers = [", "# ["),
     "cluster.servers: a trace runs on listed servers"),
    (lambda t: t.format(trace="trace.csv") + "placement = { a = [0] }\n",
     "cluster.placement: names scenario classes"),
    (lambda t: t.format(trace="trace.csv").replace('"memory"', '"memory", "disk"'),
     "resources: a trace scenario has two resources"),
    (lambda t: t.format(trace="trace.csv") + "[[classes]]\nname = \"a\"\n",
     "classes: a trace scenario takes its jobs from cluster.trace"),
    # every column was labelled with the other resource's name (a review)
    (lambda t: t.format(trace="trace.csv").replace('["cpu", "memory"]', '["memory", "cpu"]'),
     "resources: ['memory', 'cpu']: a trace's requests are CPU, then memory"),
    (lambda t: t.format(trace="."), "cluster.trace: is a directory, not a task_events file"),
])
def test_bad_trace_scenarios_are_one_line_exit_2_and_nothing_written(tmp_path, edit,
                                                                      message):
    shutil.copy(SMALL, tmp_path / "trace.csv")
    path = tmp_path / "s.toml"
    path.write_text(edit(SCENARIO))
    result = _cli(path, "-o", tmp_path / "r")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {path}: {message}"), result.output
    assert not (tmp_path / "r").exists()
    with pytest.raises(mrfq.InputError):
        mrfq.cluster(path, tmp_path / "r")


@pytest.mark.parametrize("verb", [["fluid", "-o", "OUT.csv"], ["simulate", "--policy", "bmf",
                                   "--load", "0.5"], ["flows", "-o", "OUT"],
                                  ["sweep", "-o", "OUT"], ["run", "-o", "OUT"], ["plan"]])
def test_the_other_verbs_refuse_a_trace_scenario(tmp_path, verb):
    """A trace has no classes or load axis: every verb but cluster says so in one line."""
    shutil.copy(SMALL, tmp_path / "trace.csv")
    path = _scenario(tmp_path)
    out = tmp_path / ("out.csv" if "OUT.csv" in verb else "out")
    result = CliRunner().invoke(main, [verb[0], str(path),
                                       *[str(out) if a.startswith("OUT") else a for a in verb[1:]]])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {path}: cluster.trace: a trace scenario has "
                                    "no "), result.output
    assert not out.exists()
    with pytest.raises(mrfq.InputError, match="cluster.trace: a trace scenario has no"):
        mrfq.sweep(path, tmp_path / "r")


def test_plot_redraws_a_trace_runs_figures_from_its_tables(tmp_path):
    """``mrfq plot DIR`` on a trace run's directory reads the tables it wrote back (the
    same numbers as the run returned) and draws the three figures again, into the
    directory or under ``-o``'s stem."""
    from mrfq.kinds.cluster import TRACE_TABLES

    shutil.copy(SMALL, tmp_path / "trace.csv")
    result = mrfq.cluster(_scenario(tmp_path), tmp_path / "r")
    for name, file in TRACE_TABLES.items():
        back = pd.read_csv(tmp_path / "r" / file)
        assert back.shape == result.tables[name].shape, name
    for figure in result.figures:
        figure.unlink()
    runner = CliRunner()
    out = runner.invoke(main, ["plot", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "r").glob("*.png")) == [
        "completion_times.png", "shares.png", "utilisation.png"]
    written = mrfq.plot(tmp_path / "r", output=tmp_path / "fig.pdf")
    assert sorted(p.name for p in written) == [
        "fig_completion_times.pdf", "fig_shares.pdf", "fig_utilisation.pdf"]
    assert all(p.stat().st_size > 5_000 for p in written)


def test_a_trace_run_interrupted_while_writing_leaves_no_summary_to_trust(tmp_path,
                                                                          monkeypatch):
    """The summary was written first: a rewrite stopped after it left the new summary
    beside an earlier run's tables, which ``mrfq plot`` read as one run. It is now
    removed first and written last, so it marks a complete set."""
    from mrfq import pipeline
    from mrfq.kinds.cluster import TRACE_FILE

    shutil.copy(SMALL, tmp_path / "trace.csv")
    mrfq.cluster(_scenario(tmp_path), tmp_path / "r")
    assert (tmp_path / "r" / TRACE_FILE).is_file()
    written = []

    def stop_after_one(frame, path):
        if written:
            raise KeyboardInterrupt
        written.append(path)
        frame.to_csv(path, index=False)

    monkeypatch.setattr(pipeline, "write_csv", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        mrfq.cluster(_scenario(tmp_path), tmp_path / "r")
    assert written and written[0].name != TRACE_FILE
    assert not (tmp_path / "r" / TRACE_FILE).exists()
