"""Defects a new user's review of the scale-out guide, the Python guide and the references
found (2026-11-28), each fixed: a results directory that cannot be written named a
temporary file (and `validate` worked first); ``--jobs`` beside ``--scheduler`` was
ignored without a word; ``mrfq.fluid`` and ``mrfq.cluster`` hid their signatures; the
CLI's fluid and cluster had no ``--scheduler``; two help texts left out --jobs' bound."""

import errno
import inspect
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import mrfq
from mrfq import io
from mrfq.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
FINISHED = ROOT / "reproduction" / "packet_mixes" / "skip"  # a committed results directory


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mrfq", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture
def read_only_results(tmp_path, monkeypatch):
    """A finished results directory in which no file can be created (as on a read-only
    file system: root ignores permission bits, so ``mkstemp`` is made to fail there)."""
    results = tmp_path / "r"
    results.mkdir()
    for name in ("summary.csv", "scenario.json"):
        shutil.copy(FINISHED / name, results / name)
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() == results.resolve():
            raise OSError(errno.EROFS, "Read-only file system",
                          str(results / f".{kwargs.get('prefix', 'x')}tmp"))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return results


def test_validate_refuses_an_unwritable_results_directory_first(read_only_results):
    with pytest.raises(InputError) as caught:
        mrfq.validate(read_only_results)
    assert caught.value.message == (f"{read_only_results / 'validation.csv'}: cannot be "
                                    "written (Read-only file system)")


def test_plot_refuses_an_unwritable_results_directory_first(read_only_results):
    with pytest.raises(InputError, match=r"/r: cannot be written \(Read-only file system\)$"):
        mrfq.plot(read_only_results)
    assert sorted(p.name for p in read_only_results.iterdir()) == ["scenario.json",
                                                                   "summary.csv"]


def test_a_file_that_cannot_be_created_is_named_by_its_target(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / ".t.csv.x1.csv"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(OSError) as caught, io.atomic_path(tmp_path / "t.csv"):
        pass
    assert caught.value.filename == str(tmp_path / "t.csv")


@pytest.mark.parametrize("verb", ["sweep", "run", "fluid", "cluster"])
def test_jobs_beside_a_scheduler_is_refused(tmp_path, verb):
    with pytest.raises(InputError, match="^jobs: counts local worker processes, and with a "
                                         "Dask scheduler"):
        getattr(mrfq, verb)("quickstart", tmp_path / "r", jobs=2,
                            scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("verb", ["sweep", "run", "fluid", "cluster"])
def test_the_cli_refuses_jobs_beside_a_scheduler(tmp_path, verb):
    output = ["-o", str(tmp_path / ("f.csv" if verb == "fluid" else "r"))]
    result = _cli(verb, "quickstart", *output, "--jobs", "2", "--scheduler",
                  "tcp://127.0.0.1:1")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: --jobs: counts local worker processes"), \
        result.stderr
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_trace_refuses_a_scheduler(tmp_path):
    with pytest.raises(InputError, match="^scheduler: a trace runs as one run per policy"):
        mrfq.cluster("google_like_trace", tmp_path / "r", scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("verb", ["fluid", "cluster"])
def test_the_callable_packages_show_their_verbs(verb):
    signature = inspect.signature(getattr(mrfq, verb))
    assert list(signature.parameters)[:2] == ["scenario", "results_dir"]
    assert "scheduler" in signature.parameters and "jobs" in signature.parameters
    assert f"Called as mrfq.{verb}(scenario" in getattr(mrfq, verb).__doc__


@pytest.mark.parametrize("verb", ["fluid", "cluster", "plan", "sweep", "run"])
def test_every_jobs_option_states_its_bound(verb):
    text = " ".join(_cli(verb, "--help").stdout.split())
    assert "at most 1024" in text
    assert ("--scheduler" in text) == (verb != "plan")


# --- the review of those fixes -----------------------------------------------------------

def _finished(directory: Path) -> Path:
    directory.mkdir()
    for name in ("summary.csv", "scenario.json"):
        shutil.copy(FINISHED / name, directory / name)
    return directory


def test_plot_checks_every_source_before_drawing_any(tmp_path, monkeypatch):
    """``mrfq plot a b`` drew a's figures, then refused b: now nothing is drawn."""
    first, second = _finished(tmp_path / "a"), _finished(tmp_path / "b")
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() == second.resolve():
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    with pytest.raises(InputError, match=r"/b: cannot be written \(Read-only file system\)$"):
        mrfq.plot(first, second)
    assert sorted(p.name for p in first.iterdir()) == ["scenario.json", "summary.csv"]


def test_a_name_that_is_no_figure_format_is_kept_for_every_source(tmp_path):
    first, second = _finished(tmp_path / "a"), _finished(tmp_path / "b")
    written = mrfq.plot(first, second, output=tmp_path / "out" / "name.v2", formats="png")
    names = sorted(p.name for p in written)
    assert "name.v2.png" in names and "name.v2_2.png" in names, names
    assert not any(name.startswith("name_2") for name in names), names
    trace = tmp_path / "trace"
    mrfq.cluster("google_like_trace", trace)
    written = mrfq.plot(trace, output=tmp_path / "t" / "name.v2", formats="png")
    assert sorted(p.name for p in written) == ["name.v2_completion_times.png",
                                               "name.v2_shares.png", "name.v2_utilisation.png"]


def test_a_trace_refuses_even_an_empty_scheduler(tmp_path):
    """``--scheduler ""`` ran the trace (a sweep refuses it as an empty address); ``jobs``
    stays allowed: the trace's one process is within any number of workers."""
    with pytest.raises(InputError, match="^scheduler: a trace runs as one run per policy"):
        mrfq.cluster("google_like_trace", tmp_path / "r", scheduler="")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("second", ["empty", "note.txt"])
def test_plot_reads_every_source_before_drawing_any(tmp_path, second):
    """A second source that is no results directory or no fluid table was found only
    after the first source's figures were written (a review of 8ee51b6)."""
    first = _finished(tmp_path / "a")
    (tmp_path / "empty").mkdir()
    (tmp_path / "note.txt").write_text("hi\n")
    with pytest.raises(InputError, match="not a results directory|missing columns"):
        mrfq.plot(first, tmp_path / second)
    assert sorted(p.name for p in first.iterdir()) == ["scenario.json", "summary.csv"]


@pytest.mark.parametrize("output", [".", "/"])
def test_plot_to_a_directory_is_an_input_error(tmp_path, output):
    first = _finished(tmp_path / "a")
    with pytest.raises(InputError) as caught:  # (it was a ValueError)
        mrfq.plot(first, first, output=output)
    assert caught.value.message == f"{output}: output: is a directory, not a file"
