"""The progress line on stderr (done/total, elapsed time, ETA), shared by the command line
(:mod:`mrfq.console`) and the Python API (``progress=True``, :mod:`mrfq.api`). It draws
only on an interactive stderr unless told to: a log file or a CI job gets no
carriage-return noise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from mrfq.arguments import accepts

_state: dict = {"open": False, "lost": None}  # a line without its newline; a gone stderr


def to_stderr(text: str) -> None:
    """Write ``text`` on stderr now (the progress display, the command line's messages).
    Both inform, nothing more: if stderr's reader has gone (``mrfq sweep … 2>&1 | head
    -1``), they stop, and the work goes on to save its results (the failed write ended
    the sweep before its summary was written). Only that stream is given up: a new
    ``sys.stderr`` (a notebook's, a test's) is written again; a full non-blocking pipe
    drops this text only; no stderr at all (``2>&-``) is written nothing."""
    stream = sys.stderr
    if stream is None or stream is _state["lost"]:
        return
    try:
        stream.write(text)
        stream.flush()
    except BlockingIOError:  # (a slow reader: this text is lost, not the next)
        return
    except (OSError, ValueError):  # (a closed pipe; a closed file)
        _state["lost"] = stream


def end_line() -> None:
    """End an open progress line, so that what is printed next starts a line."""
    if _state["open"]:
        to_stderr("\n")
        _state["open"] = False


def eta_seconds(done: int, total: int, done_before: int, seconds: float) -> float | None:
    """Seconds until ``total`` is done, at the rate of this run: ``done − done_before``
    units (points, flows) computed in ``seconds``; ``None`` before the run has computed
    any. Units done before the run (a resumed sweep's stored points) are left out of the
    rate: counted in, they made the ETA of a resumed sweep far too short."""
    computed = done - done_before
    if computed <= 0 or seconds <= 0:
        return None
    return seconds / computed * max(total - done, 0)


class Progress:
    """A one-line progress display on stderr: ``label: done/total (percent) elapsed …
    eta …``, redrawn in place; enabled when stderr is a terminal or ``always``.

    The ETA (:func:`eta_seconds`) counts from the first report of a run: its ``done``
    is what was done before (a sweep's first report is the points already stored) and
    the rate is that of the units completed since, over the time since. A report after
    the line finished, or with fewer done than the last, starts a new run (one display
    over several sweeps).

    ``log_every`` (seconds): where stderr is not a terminal (a log file, a CI job) the
    display is not redrawn in place but written as whole lines, at most one every
    ``log_every`` seconds, and the last: a long sweep's log shows it moving without a
    carriage return per point."""

    def __init__(self, label: str, always: bool = False, log_every: float | None = None):
        self.label = label
        tty = sys.stderr is not None and sys.stderr.isatty()
        self.enabled = always or tty or log_every is not None
        self.log_every = None if tty or always else log_every
        self.started = time.perf_counter()
        self._run: tuple[int, float] | None = None  # (done, time) at the run's first report
        self._last = (0, 0)  # the last report's (done, total)
        self._logged: tuple[float, tuple[int, int]] | None = None  # (when, which) last line

    @classmethod
    def shown(cls, label: str) -> Progress:
        """The command line's display: redrawn in place on a terminal, else (a log file, a
        CI job) a whole line at most every 10 seconds."""
        return cls(label, log_every=10.0)

    def finish(self) -> None:
        """The work is over, whether or not the count reached its total (a simulation
        counts the flows planned, and its last ones need not be reported): in a log the
        last count is written if it was not; on a terminal the line is ended."""
        if self.log_every is not None and self._last[1] > 0 and (
                self._logged is None or self._logged[1] != self._last):
            self._write_line(self._last, time.perf_counter())
        end_line()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.perf_counter()
        if self._run is None or done < self._last[0] or self._last[0] >= self._last[1]:
            self._run = (done, now)
        self._last = (done, total)
        if self.log_every is not None:
            # (no line at the start: an input error found in the first point is then
            # the only line, as everywhere else)
            since = self._logged[0] if self._logged else self.started
            if done >= total or now - since >= self.log_every:
                self._write_line(self._last, now)
            return
        to_stderr("\r" + self._text(done, total, now))
        _state["open"] = True
        if done >= total:
            end_line()

    def _write_line(self, count: tuple[int, int], now: float) -> None:
        self._logged = (now, count)
        to_stderr(self._text(*count, now) + "\n")

    def _text(self, done: int, total: int, now: float) -> str:
        eta = 0.0 if done >= total else eta_seconds(done, total, self._run[0],
                                                    now - self._run[1])
        shown = "     ?" if eta is None else f"{eta:6.1f}s"
        return (f"{self.label}: {done}/{total} ({100 * done / total:5.1f}%) elapsed "
                f"{now - self.started:6.1f}s eta {shown}")


ProgressArg = bool | Callable[[int, int], None] | None


def progress_callback(progress: ProgressArg, label: str) -> Callable[[int, int], None] | None:
    """What the API's ``progress`` argument means: ``True`` a :class:`Progress` line (on a
    terminal only), a callable ``progress(done, total)`` itself, ``False``/``None`` none."""
    if progress is True:
        return Progress(label)
    if progress is False or progress is None:
        return None
    if not callable(progress) or not accepts(progress, 0, 1):
        from mrfq.errors import InputError  # only on the error path

        shown = ("one that cannot take (done, total)" if callable(progress)
                 else type(progress).__name__)
        raise InputError(f"must be True, False or a callable (done, total), got {shown}",
                         "progress")
    return progress
