"""Atomic file output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from mrfq.errors import InputError


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path; on success it replaces ``path``, on error it is removed."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix,
                                   dir=path.parent)
    except OSError as exc:  # named by the target, not the temporary file
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; outputs get the usual mode
        try:
            os.replace(tmp, path)
        except OSError as exc:  # named by the target, not the temporary file
            raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def check_not_directories(directory: str | Path, names: Sequence[str]) -> None:
    """InputError if any of the files ``names`` a run will write into ``directory`` is an
    existing directory there: said before the work, not when the file is written."""
    for name in names:
        if (Path(directory) / name).is_dir():
            raise InputError("is a directory where the run writes a file", None,
                             str(Path(directory) / name))


def check_writable(path: str | Path, field: str = "--output") -> None:
    """InputError unless a file can be written at ``path`` — checked before any work, so
    that a long run never ends in an unwritable output. An existing directory at
    ``path`` or a non-directory on the way is refused; otherwise the file's directory is
    probed as :func:`check_writable_dir` does (made if missing, a temporary file created,
    both removed again)."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory, not a file", field, str(path))
    _probe_directory(path.parent, field, path)


def check_outputs(files: Sequence[tuple], directories: Sequence[tuple] = (),
                  csv: bool = False) -> None:
    """:func:`check_writable` for every (path, field) of ``files`` given (None: not
    asked for), and InputError when two of them, or one and a results directory of
    ``directories`` ((path, field) pairs), are the same path: the second would replace
    the first, or a file would take the directory's place, after the work. With
    ``csv`` (tables written by :func:`write_csv`) a name not ending in .csv is refused:
    ``-o out.json`` would hold CSV."""
    seen: dict[Path, str] = {}
    for path, field in files:
        if path:
            check_writable(path, field)
            if Path(path).resolve() in seen:
                raise InputError(f"is also {seen[Path(path).resolve()]}'s file: give each "
                                 "output a path of its own", field, str(path))
            seen[Path(path).resolve()] = field
    for path, field in directories:
        if path and Path(path).resolve() in seen:
            raise InputError(f"is also the {field} directory: give the file another path",
                             seen[Path(path).resolve()], str(path))
        for file, name in seen.items() if path else ():
            inside = file.relative_to(Path(path).resolve()).parts[:1] if file.is_relative_to(
                Path(path).resolve()) else ()
            if inside and inside[0] in RESULTS_OWN:  # (mrfq validate / plot would then fail)
                raise InputError(f"is the {field} directory's own {inside[0]}: give the "
                                 "file another path", name, str(file))
    for path, field in files if csv else ():
        if path and Path(path).suffix.lower() != ".csv":
            raise InputError("is written as CSV: give a name ending in .csv", field, str(path))


#: what each kind of run writes into its results directory that no other kind does (the
#: names of mrfq.sweeps, mrfq.pipeline and mrfq.kinds.cluster), and the command that does
RESULTS_OF = {"sweep": (("summary.csv", "points"), "mrfq sweep, run or cluster"),
              "flows": (("flows.csv", "timeline.csv"), "mrfq flows"),
              "trace": (("trace_summary.csv",), "mrfq cluster of a trace")}


#: the files and folders of a results directory that mrfq writes and reads back
RESULTS_OWN = frozenset({"scenario.json", "validation.csv", "size_bins.csv"}
                        | {name for names, _ in RESULTS_OF.values() for name in names})


def check_results_dir(path: str | Path, run: str) -> None:
    """InputError when the directory ``path`` holds the results of another kind of run
    than ``run`` (a key of :data:`RESULTS_OF`): its scenario.json would be replaced and
    ``mrfq plot`` / ``validate`` would read one run's tables with the other's scenario."""
    for other, (names, command) in RESULTS_OF.items():
        found = [name for name in names if (Path(path) / name).exists()]
        if other != run and found:
            raise InputError(f"holds the results of {command} ({found[0]}): give this "
                             f"{RESULTS_OF[run][1]} a directory of its own", None, str(path))


def check_writable_dir(path: str | Path, field: str | None = None,
                       run: str | None = None) -> None:
    """InputError unless files can be written in the directory ``path`` — checked before
    any work, so that a long run never ends unable to save what it computed. An existing
    non-directory at ``path`` (or on the way to it) is refused. The check is the real
    operation: the missing directories are made, a temporary file is created in ``path``,
    and then both are removed again, so the check leaves nothing behind (permission bits
    alone would pass root in ``/proc``). ``run``: the kind of run writing its results
    there (:func:`check_results_dir`)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError("exists and is not a directory", field, str(path), output=True)
    if run is not None:  # a results directory: of this kind of run, or new
        check_results_dir(path, run)
    _probe_directory(path, field, path)


def _probe_directory(directory: Path, field: str | None, shown: Path) -> None:
    """Make ``directory`` (and its missing parents), create and remove a file in it, and
    remove what was made; InputError about ``shown`` (the user's path) if any step fails."""
    ancestor = directory
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"{ancestor} is not a directory", field, str(shown), output=True)
    for attempt in range(3):
        made = []
        try:
            for level in reversed([directory, *directory.parents]):
                if not level.exists():
                    try:
                        level.mkdir()
                        made.append(level)
                    except FileExistsError:  # another run made it meanwhile: fine
                        pass
            fd, tmp = tempfile.mkstemp(prefix=".mrfq-check.", dir=directory)
            os.close(fd)
            os.unlink(tmp)
            return
        except FileNotFoundError:
            # another run's check removed a directory it had made under ours: try again
            if attempt == 2:
                raise InputError("cannot be written (No such file or directory)", field,
                                 str(shown), output=True) from None
        except OSError as exc:
            raise InputError(f"cannot be written ({exc.strerror or exc})", field,
                             str(shown), output=True) from None
        finally:
            for level in reversed(made):
                with contextlib.suppress(OSError):  # another run may be filling it by now
                    level.rmdir()


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame as CSV atomically (no partial file is ever left at ``path``)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


#: the columns of a sweep's summary that validation and plots read
SUMMARY_COLUMNS = ("kind", "policy", "load", "class", "gamma", "ci_low", "ci_high")


def read_table(path: str | Path, required: Sequence[str] = (), **options) -> pd.DataFrame:
    """A CSV table that mrfq wrote (``options``: pandas.read_csv's); a missing, empty,
    malformed or non-UTF-8 file, or one without a ``required`` column (a hand-edited or
    truncated file), is an InputError naming the file."""
    try:
        table = pd.read_csv(path, **options)
    except FileNotFoundError:
        raise InputError("no such file", None, str(path)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"not a CSV table: {exc}", None, str(path)) from None
    missing = [column for column in required if column not in table.columns]
    if missing:
        raise InputError(f"not a table mrfq wrote: no column {', '.join(missing)}", None,
                         str(path))
    return table


def read_toml(path: str | Path) -> dict:
    """Parse a TOML file; a missing file, a non-UTF-8 file or a syntax error becomes an
    InputError naming the file."""
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise InputError("no such file", None, source)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"TOML syntax error: {exc}", None, source) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", None, source) from None


#: the files a figure is written as, unless told otherwise (:mod:`mrfq.plots`)
FIGURE_FORMATS = ("png", "pdf")
#: the figure formats mrfq writes (matplotlib's, as file suffixes)
KNOWN_FIGURE_FORMATS = ("png", "pdf", "svg", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def figure_stem(path: str | Path) -> Path:
    """``path`` without a suffix that names a figure format (``fig.png`` → ``fig``); any
    other suffix is part of the name (``fig3.v2`` stays)."""
    path = Path(path)
    return path.with_suffix("") if path.suffix.lower().lstrip(".") in KNOWN_FIGURE_FORMATS \
        else path


def check_figure_formats(formats: Sequence[str] | str | None, field: str = "formats"
                  ) -> tuple[str, ...]:
    """Figure formats from a list or a comma-separated string; InputError for one
    matplotlib cannot write."""
    if formats is None:
        return FIGURE_FORMATS
    if isinstance(formats, str):
        if formats.strip() and not all(part.strip() for part in formats.split(",")):
            raise InputError(f"an empty value in '{formats}'", field)  # ("png,,pdf": a typo)
        formats = [f for f in formats.replace(",", " ").split() if f]
    if not isinstance(formats, Sequence | set) or not all(isinstance(f, str) for f in formats):
        raise InputError(f"must be figure formats such as 'png,pdf' or ['png'], got "
                         f"{formats!r}", field)
    known = KNOWN_FIGURE_FORMATS
    chosen = tuple(dict.fromkeys(f.lower().lstrip(".") for f in formats))
    bad = [f for f in chosen if f not in known]
    if bad or not chosen:
        raise InputError(f"unknown figure format {bad[0] if bad else '(none)'!r} (choose "
                         f"from {', '.join(known)})", field)
    return chosen


def is_path(path: Path, field: str, source: str | None, directory: bool = False) -> bool:
    """Whether ``path`` is a regular file (``directory``: a directory); InputError naming
    ``field`` when the system cannot even look (a name too long: a traceback-free line,
    not the whole name echoed without its field)."""
    try:
        return path.is_dir() if directory else path.is_file()
    except OSError as exc:
        shown = str(path) if len(str(path)) <= 80 else f"{str(path)[:77]}..."
        raise InputError(f"cannot be looked up ({exc.strerror or exc}): {shown}", field,
                         source) from None

