"""Worker processes for fluid curves and sweeps.

Workers are spawned (not forked) with one BLAS thread each: the Krylov solver's vector
operations go through OpenBLAS, whose default thread pool per process oversubscribes the
cores once several workers run — on the 2-core machine, 2 workers were slower than 1
(118.8 s against 40.3 s for the fluid Figures 1–2; BENCHMARKS.md).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers start with single-threaded BLAS."""
    saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    for name in _THREAD_VARIABLES:
        os.environ[name] = "1"  # inherited by the spawned workers
    try:
        with ProcessPoolExecutor(max_workers=jobs,
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            yield pool
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
