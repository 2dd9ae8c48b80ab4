"""Compile every Numba kernel into its on-disk cache before the test suite, in parallel.

Why: on a fresh clone the suite spends about six of its thirteen serial minutes compiling
(each packet policy's event loop is its own specialisation, 20–40 s apiece). Compiling
them first, one process per specialisation on every core, takes that to about half, and
the test workers (``pytest -n``) then load the cached machine code instead of compiling
the same loop twice. Used by ``tests/conftest.py`` when pytest runs with
``--warm-numba-cache`` (as ``make test`` does); a warm cache makes it a few seconds.

Each task runs a tiny simulation through the public API, so the specialisations compiled
are exactly those the engine dispatches to; nothing here is checked (the tests do that).
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

_TANDEM = {
    "name": "warm",
    "resources": ["cpu", "link"],
    "classes": [{"name": "a", "requirements": [0.5, 1.0], "load_share": 1},
                {"name": "b", "requirements": [1.0, 0.5], "load_share": 1}],
    "load": {"axis": "max", "values": [0.5]},
    "fluid": {"policies": ["drf", "pf", "bmf"]},
    "packet": {"flows": 60, "mean_size": 4, "window": 3, "warmup": 0.1, "seed": 1},
    "cluster": {"policies": ["drf"], "tasks_per_resource": 4, "mean_tasks": 8,
                "jobs": 40, "seed": 1},
}


def _packet(policy: str, virtual_time: str | None = None, debug: bool = False) -> None:
    import mrfq

    overrides = {} if virtual_time is None else {"virtual_time": virtual_time}
    if not debug:
        mrfq.simulate(_TANDEM, policy, 0.5, **overrides)
        return
    # the pool reuses its processes: the flag must not reach the next task's loop choice
    os.environ["MRFQ_DEBUG"] = "1"
    try:
        mrfq.simulate(_TANDEM, policy, 0.5, **overrides)
    finally:
        del os.environ["MRFQ_DEBUG"]


def _network(policy: str) -> None:
    import mrfq

    mrfq.simulate("linear_network", policy, 0.5, flows=60, replications=1)


def _fluid(method: str) -> None:
    import mrfq

    mrfq.fluid(_TANDEM, loads=[0.5], method=method, jobs=1)


def _cluster() -> None:
    import mrfq

    with tempfile.TemporaryDirectory() as results:
        mrfq.cluster(_TANDEM, results, jobs=1)


def tasks() -> list[tuple]:
    """(function, arguments) per specialisation, the slowest (packet loops) first."""
    from mrfq import policies as registry

    packet = [(_packet, (name,)) for name in registry.names(registry.PACKET)]
    packet += [(_packet, ("drfq", "started")), (_packet, ("drfq-dovetail", "started")),
               (_packet, ("drfq", None, True))]
    # bmf, pf and the DRFQs have network loops of their own; the rest share one
    packet += [(_network, (name,)) for name in ("bmf", "pf", "drfq", "drfq-dovetail", "fifo")]
    return packet + [(_cluster, ()), (_fluid, ("markov",)), (_fluid, ("simulation",))]


def _run(function, arguments) -> str | None:
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            function(*arguments)
    except Exception as error:  # the tests report it properly; here it is only a note
        return f"{function.__name__}{arguments}: {type(error).__name__}: {error}"
    return None


def warm(jobs: int | None = None) -> list[str]:
    """Run every task on ``jobs`` processes (default: every core); the failures, as lines."""
    jobs = jobs or os.cpu_count() or 1
    failures = []
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_run, function, arguments) for function, arguments in tasks()]
        for future in as_completed(futures):
            if future.result() is not None:
                failures.append(future.result())
    return failures
