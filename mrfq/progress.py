"""The progress line on stderr (done/total, elapsed time, ETA), shared by the command line
(:mod:`mrfq.console`) and the Python API (``progress=True``, :mod:`mrfq.api`). It draws
only on an interactive stderr unless told to: a log file or a CI job gets no
carriage-return noise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

_state = {"open": False}  # a progress line is on stderr without its newline


def end_line() -> None:
    """End an open progress line, so that what is printed next starts a line."""
    if _state["open"]:
        sys.stderr.write("\n")
        sys.stderr.flush()
        _state["open"] = False


class Progress:
    """A one-line progress display on stderr: ``label: done/total (percent) elapsed …
    eta …``, redrawn in place; enabled when stderr is a terminal or ``always``."""

    def __init__(self, label: str, always: bool = False):
        self.label = label
        self.enabled = always or sys.stderr.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        elapsed = time.perf_counter() - self.started
        eta = f"{elapsed / done * (total - done):6.1f}s" if done else "     ?"
        sys.stderr.write(f"\r{self.label}: {done}/{total} ({100 * done / total:5.1f}%) "
                         f"elapsed {elapsed:6.1f}s eta {eta}")
        sys.stderr.flush()
        _state["open"] = True
        if done >= total:
            end_line()


ProgressArg = bool | Callable[[int, int], None] | None


def progress_callback(progress: ProgressArg, label: str) -> Callable[[int, int], None] | None:
    """What the API's ``progress`` argument means: ``True`` a :class:`Progress` line (on a
    terminal only), a callable ``progress(done, total)`` itself, ``False``/``None`` none."""
    if progress is True:
        return Progress(label)
    if progress is False or progress is None:
        return None
    if not callable(progress):
        from mrfq.errors import InputError  # only on the error path

        raise InputError(f"must be True, False or a callable (done, total), got "
                         f"{type(progress).__name__}", "progress")
    return progress
