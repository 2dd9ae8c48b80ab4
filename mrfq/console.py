"""Console plumbing of the command line (:mod:`mrfq.cli`): one-line errors with their exit
codes, Ctrl-C, and the progress line on stderr."""

from __future__ import annotations

import functools
import sys
import time
import traceback

import click

from mrfq.errors import InputError

_open_line = False  # a progress line is on stderr without its newline


def _end_line() -> None:
    global _open_line
    if _open_line:
        click.echo("", err=True)
        _open_line = False


def _fail(message: str) -> None:
    _end_line()
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def user_errors(func):
    """Turn InputError, an unwritable output (OSError) and Ctrl-C into a one-line message
    and an exit code; any other exception is a bug (traceback, exit 3)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            _fail(exc.message)
        except OSError as exc:
            where = exc.filename if exc.filename is not None else "output"
            _fail(f"{where}: {exc.strerror or exc}")
        except KeyboardInterrupt:
            _end_line()
            click.echo("interrupted (finished points are kept; run again to resume)",
                       err=True)
            sys.exit(130)
        except click.exceptions.Exit:
            raise
        except Exception:
            _end_line()
            traceback.print_exc()
            click.echo("internal error (a bug in mrfq; please report it with the traceback)",
                       err=True)
            sys.exit(3)

    return wrapper


class Progress:
    """A one-line progress display on stderr: done/total, elapsed time and ETA."""

    def __init__(self, label: str, always: bool = False):
        self.label = label
        self.enabled = always or sys.stderr.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        global _open_line
        if not self.enabled or total <= 0:
            return
        elapsed = time.perf_counter() - self.started
        eta = f"{elapsed / done * (total - done):6.1f}s" if done else "     ?"
        click.echo(f"\r{self.label}: {done}/{total} ({100 * done / total:5.1f}%) "
                   f"elapsed {elapsed:6.1f}s eta {eta}", err=True, nl=False)
        _open_line = True
        if done >= total:
            _end_line()


def _log(message: str) -> None:
    click.echo(message, err=True)
