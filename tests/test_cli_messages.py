"""What the command line says around the work: the interrupt message only promises a
resume where finished points are kept, the main job announces the directory it writes,
and a log line never lands on an unfinished progress line."""

import signal
import subprocess
import sys
import time

import pytest

from mrfq import console
from mrfq.progress import Progress


def _interrupted(args, cwd, wait=8.0, first_line=False):
    """Start ``mrfq ARGS``, wait ``wait`` seconds (with ``first_line``: until it has
    printed its first line on stderr, at most 120 s: on a loaded machine the imports
    alone can take longer than ``wait``), send Ctrl-C (SIGINT); its exit code and
    stderr."""
    # (a test worker may run with SIGINT ignored, which a child would inherit: Python
    # then installs no handler, and Ctrl-C does nothing, unlike in a terminal)
    process = subprocess.Popen([sys.executable, "-m", "mrfq", *args], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = ""
    if first_line:
        first = process.stderr.readline()  # (blocks until the line, or the end)
    else:
        time.sleep(wait)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    return process.returncode, first + err


def test_the_interrupt_message_promises_a_resume_only_where_points_are_kept(tmp_path):
    code, err = _interrupted(["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5",
                              "--flows", "1e6"], tmp_path)
    assert code == 130 and err.splitlines()[-1] == "interrupted", err
    code, err = _interrupted(["sweep", "fig3_quick", "-o", str(tmp_path / "r")], tmp_path)
    assert code == 130, err
    assert err.splitlines()[-1] == ("interrupted (finished points are kept; run again to "
                                    "resume)")


def test_the_main_job_announces_the_directory_it_writes(tmp_path):
    code, err = _interrupted(["run", "-o", str(tmp_path / "mine")], tmp_path, first_line=True)
    first = err.splitlines()[0]
    assert first.startswith("no SCENARIO: the main job") and first.endswith(
        f"into {tmp_path / 'mine'}/"), first


def test_a_log_line_starts_on_a_line_of_its_own(capsys):
    """A progress line that stopped short of its total (a run that ended early) used to
    have the next message glued to it."""
    Progress("simulate", always=True)(3, 4)
    console._log("done")
    err = capsys.readouterr().err
    assert err.startswith("\rsimulate: 3/4") and err.endswith("\ndone\n"), repr(err)


def test_a_missed_precision_target_is_said(tmp_path):
    """A point that spent its replication budget before reaching the target used to pass
    silently (its summary row said precision_reached False, the console nothing)."""
    result = subprocess.run([sys.executable, "-m", "mrfq", "simulate", "fig3_quick",
                             "--policy", "bmf", "--load", "0.9", "--flows", "2000",
                             "--precision", "0.05", "--max-replications", "2"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ("warning: 1 packet point (bmf 0.9) did not reach the target precision ±0.05 "
            "within their replication budget") in result.stderr
    # (the intervals reported, which may be the fluid model's: not "the runs' own")
    assert "of gamma, in the intervals reported): raise max_replications" in result.stderr
    reached = subprocess.run([sys.executable, "-m", "mrfq", "simulate", "fig3_quick",
                              "--policy", "bmf", "--load", "0.3", "--flows", "2000",
                              "--precision", "0.5", "--max-replications", "4"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert reached.returncode == 0 and "did not reach" not in reached.stderr


def test_an_output_blocked_by_a_directory_is_refused_before_the_sweep(tmp_path):
    """A directory where the run writes a figure used to be found after the whole sweep,
    under a temporary file's name, with summary.csv and validation.csv left behind."""
    out = tmp_path / "r"
    (out / "quickstart.png").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "mrfq", "run", "quickstart", "-o",
                             str(out)], capture_output=True, text=True, cwd=tmp_path,
                            timeout=300)
    assert result.returncode == 2
    assert result.stderr == (f"error: {out / 'quickstart.png'}: is a directory where the "
                             "run writes a file\n")
    assert sorted(p.name for p in out.iterdir()) == ["quickstart.png"]


def test_a_sweep_says_a_missed_target_once(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mrfq", "sweep", "quickstart", "-o",
                             str(tmp_path / "r"), "--precision", "0.001",
                             "--max-replications", "2"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("did not reach the target precision") == 1, result.stderr
    # the first round's count is not the sweep's: replications are added to it
    assert "16 points, 0 already done, 16 to compute at first (then packet replications " \
        "are added until the 95% half-width is 0.001 of gamma: the total grows)" \
        in result.stderr, result.stderr


def test_which_commands_promise_a_resume():
    """A trace's runs are kept only when all have ended; the paper's fluid figures (plot
    with no sources) cache their points."""
    import click

    from mrfq import cli

    def promised(command, **params):
        ctx = click.Context(cli.main.commands[command], info_name=command)
        ctx.params = params
        with ctx:
            return console._keeps_points()

    assert promised("cluster", scenario="quickstart")
    assert not promised("cluster", scenario="google_like_trace")
    assert not promised("cluster", scenario="no_such_scenario")
    assert promised("plot", sources=()) and not promised("plot", sources=("results/x",))
    assert promised("fluid", results="r") and not promised("fluid", results=None)
    assert promised("sweep") and not promised("simulate")


def test_progress_in_a_log_is_whole_lines_at_most_every_ten_seconds(monkeypatch, capsys):
    """stderr not a terminal (a CI log, ``2> log``): the sweep's display used to redraw
    in place there too, one carriage return per point; now whole lines, one per 10 s at
    most, and the last."""
    import types

    from mrfq import progress as progress_module

    now = [0.0]
    monkeypatch.setattr(progress_module, "time", types.SimpleNamespace(
        perf_counter=lambda: now[0]))
    line = Progress.shown("sweep")
    for done, at in [(0, 0.0), (1, 3.0), (2, 9.9), (3, 10.5), (4, 12.0), (5, 25.0),
                     (6, 26.0)]:
        now[0] = at
        line(done, 6)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert [x.split()[1] for x in err.splitlines()] == ["3/6", "5/6", "6/6"], err


def test_a_sweep_logged_to_a_file_has_no_carriage_returns(tmp_path):
    with open(tmp_path / "log", "w") as log:
        done = subprocess.run([sys.executable, "-m", "mrfq", "sweep", "quickstart", "-o",
                               str(tmp_path / "r")], stderr=log, stdout=subprocess.DEVNULL,
                              cwd=tmp_path, timeout=300)
    text = (tmp_path / "log").read_text()
    assert done.returncode == 0 and "\r" not in text, text
    lines = text.splitlines()
    assert [x for x in lines if x.startswith("sweep: ")][-1].startswith("sweep: 12/12 "), text


@pytest.mark.parametrize("delay", [0.3, 0.6, 0.9])
def test_ctrl_c_while_the_command_imports_is_no_traceback(tmp_path, delay):
    """The imports take about 1.5 s (more on a loaded machine); a Ctrl-C there printed a
    traceback through NumPy or SciPy (it failed a CI run of the main-job test above,
    whose fixed 3 s wait fell in them)."""
    process = subprocess.Popen([sys.executable, "-m", "mrfq", "simulate", "fig3_quick",
                                "--policy", "bmf", "--load", "0.5", "--flows", "1e6"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                           signal.SIG_DFL))
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert "Traceback" not in err, err
    # (130 and "interrupted", or killed by the signal before Python installed a handler)
    assert process.returncode == -signal.SIGINT or (
        process.returncode == 130 and err.splitlines()[-1] == "interrupted"), (
        process.returncode, err)


def test_a_simulation_logs_its_last_count(tmp_path):
    """The flows are counted as planned, so the count may stop short of its total: in a
    log no line was written at all, and on a terminal the table was glued to the open
    progress line (``…eta    0.0spolicy virtual_time load …``)."""
    with open(tmp_path / "log", "w") as log:
        done = subprocess.run([sys.executable, "-m", "mrfq", "simulate", "quickstart",
                               "--policy", "drfq", "--load", "0.5", "--flows", "2000",
                               "--mean-size", "20"], stderr=log, stdout=subprocess.DEVNULL,
                              cwd=tmp_path, timeout=300)
    lines = (tmp_path / "log").read_text().splitlines()
    assert done.returncode == 0 and lines[0].startswith("simulate drfq: "), lines
    assert "eta" in lines[0] and "\r" not in lines[0]
