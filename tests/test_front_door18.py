"""The front door after an eighteenth-session review, each red on the code before its fix:
a class with ``load_share = 0`` (which the checks accept, "use 0 to leave it out") failed
validation with "no fluid value"; a scenario ``name`` of ``../../x`` put its results
outside ``results/``; ``mrfq fluid -o R/summary.csv --results R`` replaced the sweep's
summary; ``mrfq run`` printed its no-SCENARIO banner before a one-line error;
``mrfq.sweep`` and ``mrfq.run`` had no ``log``."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mrfq
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parent.parent
QUICK = tomllib.loads((ROOT / "mrfq" / "scenarios" / "quickstart.toml").read_text())


def _small(**top) -> dict:
    raw = {**QUICK, **top}
    raw["load"] = {**QUICK["load"], "values": [0.3]}
    raw["packet"] = {**QUICK["packet"], "policies": ["bmf"], "flows": 1500}
    raw["cluster"] = {**QUICK["cluster"], "jobs": 300}
    return raw


def test_a_class_without_load_is_left_out_of_the_validation(tmp_path):
    raw = _small()
    raw["classes"] = [{**QUICK["classes"][0], "load_share": 0}, QUICK["classes"][1]]
    lines: list[str] = []
    result = mrfq.run(scenario_from_dict(raw, "q.toml"), tmp_path / "r", jobs=1,
                      formats="png", log=lines.append)
    assert set(result.validation["class"]) == {"crypto"}
    assert result.validation["passed"].all() and len(result.validation) == 2  # bmf, drf
    assert any("points, 0 already done" in line for line in lines)  # run's log


def test_a_summary_table_validated_with_its_scenario_leaves_the_unloaded_class_out(
        tmp_path):
    """mrfq.validate(<DataFrame>) has no directory to read the scenario from: it takes it
    (a review found the unloaded class failing there)."""
    raw = _small()
    raw["classes"] = [{**QUICK["classes"][0], "load_share": 0}, QUICK["classes"][1]]
    scenario = scenario_from_dict(raw, "q.toml")
    summary = mrfq.sweep(scenario, tmp_path / "r", jobs=1)
    assert set(mrfq.validate(summary, scenario=scenario)["class"]) == {"crypto"}
    assert not mrfq.validate(summary).query("`class` == 'web'")["passed"].any()


@pytest.mark.parametrize("name", ["../../escape", "sub/x", "a\\b", ".."])
def test_a_scenario_name_is_one_file_name(name):
    with pytest.raises(InputError, match=r"^q\.toml: name: must be a file name"):
        scenario_from_dict({**QUICK, "name": name}, "q.toml")


def test_sweep_logs_through_a_python_function(tmp_path):
    lines: list[str] = []
    mrfq.sweep(scenario_from_dict(_small(), "q.toml"), tmp_path / "r", jobs=1,
               log=lines.append)
    assert lines[0].startswith("5 points, 0 already done, 5 to compute")  # 3 fluid
    with pytest.raises(InputError, match="^log: "):
        mrfq.sweep("quickstart", tmp_path / "s", log="print")


def _mrfq(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mrfq", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_fluid_output_refuses_the_results_directorys_own_files(tmp_path):
    (tmp_path / "R").mkdir()
    for own in ("summary.csv", "validation.csv", "scenario.json", "points/x.csv"):
        done = _mrfq("fluid", "quickstart", "--loads", "0.3", "--results", "R", "-o",
                     f"R/{own}", cwd=tmp_path)
        first = own.split("/")[0]
        assert done.returncode == 2
        assert done.stderr == (f"error: {tmp_path / 'R' / own}: --output: is the --results "
                               f"directory's own {first}: give the file another path\n")
    assert list((tmp_path / "R").iterdir()) == []


def test_run_without_a_scenario_prints_only_the_error_for_a_bad_argument(tmp_path):
    (tmp_path / "afile").write_text("")
    for args in (["--tolerance", "-1"], ["--scheduler", ""], ["-o", "afile"]):
        done = _mrfq("run", *args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")
    done = _mrfq("plot", "-o", "afile", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr


def _python(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    """``source`` run as a script in a fresh interpreter (at most 25 s)."""
    script = tmp_path / "script.py"
    script.write_text(source)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=25)


def test_a_second_interrupt_while_stopping_exits_at_once_without_a_traceback(tmp_path):
    """After the first Ctrl-C is handled ("interrupted", exit 130), the process is shutting
    down (the pool's threads are joined at exit): a second Ctrl-C there raised
    KeyboardInterrupt in threading's exit hook, which printed a traceback. The mrfq
    command now ends at once, exit 130."""
    done = _python(
        tmp_path,
        "import os, signal, threading, time\n"
        "from mrfq import console\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # (CI ignores SIGINT)\n"
        "def interrupted():\n"
        "    raise SystemExit(130)\n"
        "try:\n"
        "    console.command_line(interrupted)\n"
        "except SystemExit:\n"
        "    pass\n"
        "threading.Thread(target=time.sleep, args=(30,)).start()  # joined at exit\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(30)\n")
    assert (done.returncode, done.stderr) == (130, "")


def test_verbs_called_in_process_leave_the_sigint_handler_alone():
    """A notebook or a test calling a verb keeps its Ctrl-C: only the command installs
    the quick exit (a review found it left installed by an in-process interrupt)."""
    import signal

    from mrfq import console

    before = signal.getsignal(signal.SIGINT)

    @console.user_errors
    def verb():
        raise KeyboardInterrupt

    with pytest.raises(SystemExit):
        verb()
    assert signal.getsignal(signal.SIGINT) is before


def test_a_reader_that_leaves_early_gets_no_error_line(tmp_path):
    """``mrfq validate DIR | head``: the pipe closes before mrfq's output ends (a write
    raises BrokenPipeError); it printed "error: output: Broken pipe" (exit 2), now
    nothing, exit 141 as a command killed by SIGPIPE."""
    done = _python(
        tmp_path,
        "from mrfq.console import user_errors\n"
        "@user_errors\n"
        "def verb():\n"
        "    print('a line')\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "verb()\n")
    assert (done.returncode, done.stderr) == (141, "")


def test_a_precision_target_stopped_by_a_withheld_interval_is_not_blamed_on_the_budget():
    """The stopping rule ends at a replication whose interval is withheld (MSER-5 at its
    limit): the warning said "raise max_replications" (widest ±nan), which cannot help."""
    import pandas as pd

    from mrfq.table_warnings import precision_warnings

    table = pd.DataFrame({
        "policy": ["drfq", "drfq", "bmf"], "load": [0.6, 0.6, 0.3],
        "precision_reached": [False, False, False], "target_precision": [0.06] * 3,
        "achieved_precision": [float("nan"), float("nan"), 0.08],
        "ci_problem": ["replication 18: warm-up: MSER-5 at its limit", "", ""]})
    withheld, budget = precision_warnings(table)
    assert withheld.startswith("warning: 1 packet point (drfq 0.6) stopped short of the "
                               "target precision ±0.06: their interval is withheld "
                               "(replication 18: warm-up")
    assert "longer ones ([packet] flows)" in withheld and "nan" not in withheld
    assert budget.startswith("warning: 1 packet point (bmf 0.3) did not reach")
    assert "widest ±0.08 of gamma" in budget and "raise max_replications" in budget
