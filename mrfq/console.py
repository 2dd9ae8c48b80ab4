"""Console plumbing of the command line (:mod:`mrfq.cli`): one-line errors with their exit
codes, Ctrl-C, the progress line on stderr, and the option types (registry choices with
a "did you mean", counts in a scenario file's notation)."""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mrfq import policies as registry
from mrfq import table_warnings, validation
from mrfq.arguments import split_items
from mrfq.errors import InputError
from mrfq.executor import interrupt_behind
from mrfq.progress import Progress, end_line, to_stderr
from mrfq.scenario import load_scenario

__all__ = ["COUNT", "Progress", "RegistryChoice", "user_errors"]

_end_line = end_line


def _fail(message: str) -> None:
    _end_line()
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _as_option(exc: InputError) -> InputError:
    """The error with a Python keyword it names (``virtual_time``: the layers below the
    CLI name the API's keywords, also for a check that failed on a value an argument
    gave) shown as the running command's option for it (``--virtual-time``); errors
    about a file, or naming anything else, as they are."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and exc.source is None and exc.field:
        for param in ctx.command.params:
            if isinstance(param, click.Option) and param.name == exc.field:
                exc.field = max(param.opts, key=len)
    elif ctx is not None and exc.source is not None and exc.field is None \
            and (exc.output or not _is_input(ctx, exc.source)):
        # a path the layers below cannot name (a results directory): the option that gave it
        for param in ctx.command.params:
            given = ctx.params.get(param.name)
            if (isinstance(param, click.Option) and isinstance(param.type, OutputPath)
                    and given and Path(given) == Path(exc.source)):
                exc.field = max(param.opts, key=len)
    return exc


def _is_input(ctx: click.Context, source: str) -> bool:
    """Whether ``source`` is also one of the command's arguments (an input file, such as
    ``mrfq plot bad.csv -o bad.csv``'s): its error is the file's, not the output's."""
    for param in ctx.command.params:
        if isinstance(param, click.Argument):
            given = ctx.params.get(param.name)
            values = given if isinstance(given, tuple | list) else (given,)
            if any(v and Path(str(v)) == Path(source) for v in values):
                return True
    return False


def _keeps_points() -> bool:
    """Whether the running command stores finished points that a second run resumes
    from: a sweep (run, sweep, cluster of a scenario with classes; a trace's runs are
    kept only when all have ended), fluid with --results, or plot drawing the paper's
    fluid figures (no sources: their points are cached)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    if ctx.info_name == "cluster":
        try:  # (a TOML file or a packaged name: read again, quickly)
            return not load_scenario(ctx.params["scenario"]).cluster.trace
        except Exception:  # noqa: BLE001 - an interrupt's message must not fail
            return False
    return ctx.info_name in ("run", "sweep") or (
        ctx.info_name == "fluid" and bool(ctx.params.get("results"))) or (
        ctx.info_name == "plot" and not ctx.params.get("sources"))


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a batch system ending a job), raised where the program is, as
    Ctrl-C's KeyboardInterrupt is: the run stops the same way (workers stopped, nothing
    half-written kept) instead of dying at once and leaving its workers behind."""


def _raise_terminated(signum, frame):
    raise Terminated


def _catch_sigterm():
    """Handle SIGTERM as an interrupt (:class:`Terminated`) while a command runs; returns
    what restores the handler before (nothing to do outside the main thread, where
    signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    return lambda: signal.signal(signal.SIGTERM,
                                 signal.SIG_DFL if previous is None else previous)


def _interrupted(exc: BaseException) -> None:
    _end_line()
    terminated = isinstance(exc, Terminated)
    click.echo("interrupted" + (" by SIGTERM" if terminated else "")
               + (" (finished points are kept; run again to resume)"
                  if _keeps_points() else ""), err=True)
    sys.exit(143 if terminated else 130)


def command_line(main: Callable[[], Any]) -> None:
    """Run ``main`` (the click group) as the ``mrfq`` command. When it ends interrupted
    (exit 130 or 143), a second Ctrl-C during the exit that follows (the process pool's
    threads are joined) ends the process at once: raised there, it printed a traceback
    ("Exception ignored in: <module 'threading'>"). Only here, so that a program calling
    the verbs in-process keeps its own SIGINT handler."""
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code in (130, 143) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, lambda *_: os._exit(code))
        raise


def user_errors(func):
    """Turn InputError, an unwritable output (OSError), Ctrl-C and SIGTERM into a
    one-line message and an exit code (130 and 143 for the two interrupts); any other
    exception is a bug (traceback, exit 3)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        restore = _catch_sigterm()
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            _fail(_as_option(exc).message)
        except BrokenPipeError:  # the reader left (mrfq validate DIR | head): quietly, as
            # a command killed by SIGPIPE; stdout to /dev/null, so the exit's flush is silent
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except OSError as exc:
            where = exc.filename if exc.filename is not None else "output"
            _fail(f"{where}: {exc.strerror or exc}")
        except KeyboardInterrupt as exc:
            _interrupted(exc)
        except click.exceptions.Exit:
            raise
        except Exception as exc:
            interrupt = interrupt_behind(exc)  # Ctrl-C inside a Numba kernel's call back
            if interrupt is not None:
                _interrupted(interrupt)
            _end_line()
            traceback.print_exc()
            click.echo("internal error (a bug in mrfq; please report it with the traceback)",
                       err=True)
            sys.exit(3)
        finally:
            restore()

    return wrapper


def _log(message: str) -> None:
    _end_line()  # a progress line left open (a run that stopped short of its total)
    to_stderr(message + "\n")  # (informative: a reader gone does not stop the run)


def log_after(banner: str | None) -> Callable[[str], None]:
    """:func:`_log`, printing ``banner`` (if any) before its first message: a run's first
    message comes after its input is checked, so a bad input's error stays one line."""
    pending = [banner] if banner else []

    def log(message: str) -> None:
        while pending:
            _log(pending.pop())
        _log(message)

    return log


class OneOf(click.Choice):
    """A fixed choice (``--init``, ``--virtual-time``, ``--method``), case-insensitive as
    the same values are in a scenario file."""

    def __init__(self, choices):
        super().__init__(choices, case_sensitive=False)


class RegistryChoice(click.Choice):
    """A policy option: the registry's names of one kind (case-insensitive), and for a
    misspelling the registry's own message with its "did you mean"."""

    def __init__(self, kind: str):
        super().__init__(registry.names(kind), case_sensitive=False)
        self.kind = kind

    def convert(self, value, param, ctx):
        try:
            return registry.get(self.kind, value, None).name
        except InputError as exc:
            self.fail(exc.message, param, ctx)


class Count(click.ParamType):
    """A whole number that may be written as a float, as in a scenario file (``1e4``,
    ``20000.0``): the same values the TOML field accepts."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"must be a whole number, got {value}", param, ctx)
        if not number.is_integer():
            self.fail(f"must be a whole number, got {value}", param, ctx)
        return int(number)


COUNT = Count()


def split_names(text: str | None, field: str = "--policies") -> list[str] | None:
    """The items of a comma- or space-separated option (None: not given; given but empty:
    [], which the verb refuses as naming nothing). An empty item ("0.5,,0.9") is a typo."""
    return split_items(text, field) if text is not None else None


def split_floats(text: str | None, field: str) -> list[float] | None:
    """:func:`split_names` of a list of numbers (``--loads``)."""
    try:
        return [float(v) for v in split_names(text, field) or []] if text is not None else None
    except ValueError:
        raise InputError(f"expected numbers, got '{text}'", field) from None


class OutputPath(click.ParamType):
    """A file or directory to write: an empty path (``-o ""``, often an unset shell
    variable) is refused, not taken as "no output"."""

    name = "path"

    def convert(self, value, param, ctx):
        if not str(value).strip():
            self.fail("an empty path", param, ctx)
        return value


def output_option(*names: str, **kwargs):
    """``-o/--output`` (or the ``names`` given) as an :class:`OutputPath` option."""
    return click.option(*(names or ("-o", "--output")), type=OutputPath(), **kwargs)


def print_trace(table) -> None:
    """The summary of a trace run (one row per cluster policy; nothing to validate)."""
    shown = [c for c in table if c not in ("kind", "trace", "servers", "wall_s")]
    click.echo(table[shown].to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def print_validation(table, tolerance: float) -> None:
    """Print a validation table (:func:`mrfq.validation.validate_summary`), its count line,
    known limitations and unreliable intervals (:func:`exit_validated` ends the command)."""
    warned = table["ci_warning"] != ""
    shown = table.assign(ci=[f"[{a:.4f}, {b:.4f}]" for a, b in
                             zip(table["ci_low"], table["ci_high"], strict=True)],
                         status=[("warn" if w else "pass") if p else "FAIL"
                                 for p, w in zip(table["passed"], warned, strict=True)])
    columns = ["kind", "policy", "load", "class", "fluid_gamma", "packet_gamma", "ci",
               "relative_difference", "status", "verdict"]
    click.echo(shown[columns].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    click.echo(validation.count_line(table, tolerance))
    known = table[table["known_limitation"] != ""]
    for (policy, reason), rows in known.groupby(["policy", "known_limitation"], sort=False):
        click.echo(f"{len(rows)} failing {policy} point{'s' * (len(rows) != 1)}: known "
                   f"limitation: {reason}")
    if warned.any():
        click.echo(f"{table_warnings.count(int(warned.sum()), 'point')} "
                   f"{'has' if warned.sum() == 1 else 'have'} an unreliable interval (status warn "
                   "where they pass: not a validation; ci_warning in validation.csv)")
        for line in table_warnings.interval_warnings(table):
            click.echo(line)


def exit_validated(table) -> None:
    """Exit 0 when every point of a validation table passed, else 1 after a closing line
    naming the failed points' kinds (a cluster point can fail where every packet one
    passes; "fail", not "do not match": a point without an interval fails too)."""
    failed = table[~table["passed"]]
    if len(failed):
        click.echo(f"validation failed: {table_warnings.count(len(failed), 'point')} ("
                   f"{' and '.join(sorted(set(failed['kind'])))}) "
                   f"{'fail' if len(failed) > 1 else 'fails'} against the fluid model (verdicts "
                   "above)", err=True)
    sys.exit(1 if len(failed) else 0)
