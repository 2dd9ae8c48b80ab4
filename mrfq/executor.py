"""The one executor: run a function over independent work items in this process, in local
worker processes, or on a Dask distributed cluster, yielding results as they finish.

Workers receive the function's arguments as objects (a scenario, not a path), so a
cluster without a shared filesystem works. Local workers are spawned (not forked) with one
BLAS thread each: OpenBLAS's default thread pool per process oversubscribes the cores
once several workers run (on the 2-core machine 2 workers were slower than 1 for the
fluid Figures 1–2: 118.8 s against 40.3 s). The fluid solver itself pins BLAS to one
thread wherever it runs (:func:`mrfq.fluid.service_rates`), so results do not depend on
where a point ran.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

import numpy as np

from mrfq.errors import InputError

Item = TypeVar("Item")

_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _end_with_parent(parent: int) -> None:
    """A worker's initializer: the worker ends when the process that started it does. A
    parent killed (SIGKILL, or SIGTERM from the Python API) left its workers behind for
    good, asleep on the pool's queue after finishing their point. On Linux the kernel
    kills the worker with its parent (PR_SET_PDEATHSIG, at once, even inside a Numba
    loop); elsewhere a thread waits for the parent's end."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before that
        os._exit(1)
    watched = multiprocessing.parent_process()
    if watched is not None:
        threading.Thread(target=lambda: (watched.join(), os._exit(1)), daemon=True).start()


@contextlib.contextmanager
def spawned_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """``jobs`` spawned worker processes, each with one BLAS thread and ending with this
    process (:func:`_end_with_parent`): every process pool mrfq starts is one of these."""
    saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    for name in _THREAD_VARIABLES:
        os.environ[name] = "1"  # inherited by the spawned workers
    try:
        with ProcessPoolExecutor(max_workers=jobs,
                                 mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_end_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            yield pool
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


FollowUp = Callable[[Any, Any], Iterable[Any]]


def execute(function: Callable[..., Any], items: Iterable[Item], *,
            arguments: tuple = (), jobs: int | None = 1,
            scheduler: str | None = None,
            follow_up: FollowUp | None = None) -> Iterator[tuple[Item, Any]]:
    """Yield ``(item, function(*arguments, item))`` for every item, in completion order.

    ``jobs``: local worker processes (1: in this process; ``None``: one per core).
    ``scheduler``: address of a Dask distributed scheduler (``tcp://host:8786``), used
    instead of local processes. ``follow_up(item, result)``, called as each result
    arrives (before it is yielded), returns further items to run the same way (for
    example the next replications of a point that has not reached its precision).
    Interrupting the iteration (Ctrl-C) cancels what has not started; what was yielded
    is the caller's to keep.
    """
    items = list(items)
    if scheduler:
        yield from _dask(function, items, arguments, scheduler, follow_up)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or (len(items) <= 1 and follow_up is None):
        waiting = collections.deque(items)
        while waiting:
            item = waiting.popleft()
            try:
                result = function(*arguments, item)
            except Exception as exc:  # Ctrl-C inside a Numba kernel's call back to Python
                interrupt = interrupt_behind(exc)
                if interrupt is None:
                    raise
                raise interrupt from None
            if follow_up is not None:
                waiting.extend(follow_up(item, result))
            yield item, result
        return
    with spawned_pool(jobs if follow_up else min(jobs, len(items))) as pool:
        # Each future reports itself on a queue when done. Not concurrent.futures.wait: it
        # takes every pending future's lock in a Python loop, and a Ctrl-C landing inside
        # that loop leaves some taken for good; the pool's thread then blocks on one and
        # the process never exits (seen once, a sweep hung after "interrupted").
        done: queue.SimpleQueue = queue.SimpleQueue()
        pending: dict = {}

        def submit(item: Item) -> None:
            future = pool.submit(function, *arguments, item)
            pending[future] = item
            future.add_done_callback(done.put)

        for item in items:
            submit(item)
        try:
            while pending:
                future = done.get()
                item, result = pending.pop(future), future.result()
                if follow_up is not None:
                    for more in follow_up(item, result):
                        submit(more)
                yield item, result
        except BrokenProcessPool:
            _abandon(pool)
            raise InputError(
                "a worker process died: killed (out of memory?) or, in a Python script, the "
                "calls to mrfq are not under `if __name__ == \"__main__\":`, which worker "
                "processes need (they are spawned and import the script); jobs=1 runs "
                "everything in this process", "jobs") from None
        except BaseException:
            # interrupted (or the caller stopped iterating): do not wait for the points
            # in progress; what was yielded is kept, the rest is recomputed on resume
            _abandon(pool)
            raise


def interruptible(kernel: Callable[..., Any], *args: Any) -> Any:
    """``kernel(*args, stop)`` for a compiled kernel that releases the GIL (Numba
    ``nogil``) and returns early, unfinished, once ``stop[0]`` (one int64) is set.

    Python runs signal handlers in the main thread only, between bytecodes: Ctrl-C and
    SIGTERM (:class:`mrfq.console.Terminated`) landing inside one long compiled call
    waited for its end, minutes at paper scale (the cluster kernel is one call per
    run). Here the kernel runs in a thread while the main thread waits: the interrupt
    is raised at once in the main thread, which tells the kernel to stop and drops its
    result. Outside the main thread (no signal is handled there) it runs in the caller.
    """
    stop = np.zeros(1, dtype=np.int64)
    if threading.current_thread() is not threading.main_thread():
        return kernel(*args, stop)
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = kernel(*args, stop)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            out["error"] = exc

    thread = threading.Thread(target=run, name="mrfq-kernel", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)  # (a timeout: Windows runs the handlers between the waits)
    except BaseException:
        stop[0] = 1  # the kernel returns at its next event
        thread.join(1.0)  # (a kernel still compiling ends on its own: a daemon thread)
        raise
    if "error" in out:
        raise out["error"]
    return out["result"]


def interrupt_behind(exc: BaseException) -> BaseException | None:
    """The interrupt (KeyboardInterrupt, or SIGTERM's subclass of it) behind an exception,
    if any: a signal that lands while compiled Numba code calls back into Python (the
    cluster kernel does) comes out as SystemError ("returned a result with an exception
    set") caused by it, which the command line took for a bug (exit 3, a traceback)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and stop the workers now (``shutdown(wait=True)``, the
    pool's exit, would otherwise wait for every running point: minutes at paper scale)."""
    processes = list(getattr(pool, "_processes", {}).values())  # private, but stable API
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()


def _connect(scheduler: str):
    """A Dask client of ``scheduler`` (InputError, field ``scheduler``, if it cannot be
    reached within 10 s or the optional extra is missing)."""
    try:
        from distributed import Client  # optional dependency (mrfq[dask])
    except ImportError:
        raise InputError("needs the optional extra: pip install 'mrfq[dask]'",
                         "scheduler") from None
    try:
        return Client(scheduler, timeout="10s")
    except (OSError, ValueError) as exc:  # (ValueError: a transport not installed, ucx://)
        raise InputError(f"cannot reach the Dask scheduler: {exc}", "scheduler") from None


def check_scheduler(scheduler: str) -> None:
    """InputError (field ``scheduler``) unless a Dask client reaches ``scheduler``: a
    sweep calls it before it announces or starts any work."""
    _connect(scheduler).close()


def _dask(function, items, arguments, scheduler, follow_up=None):
    from distributed import as_completed  # (present: _connect checked the extra)

    client = _connect(scheduler)
    try:
        # the shared arguments (the scenario) go to the cluster once
        shared = [client.scatter(a, broadcast=True) if not isinstance(a, int | float | str)
                  else a for a in arguments]
        futures = {client.submit(function, *shared, item, pure=False): item
                   for item in items}
        running = as_completed(list(futures))
        for future in running:
            item, result = futures.pop(future), future.result()
            if follow_up is not None:
                for more in follow_up(item, result):
                    new = client.submit(function, *shared, more, pure=False)
                    futures[new] = more
                    running.add(new)
            yield item, result
    finally:
        client.close()
