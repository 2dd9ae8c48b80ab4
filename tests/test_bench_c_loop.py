"""The C yardstick of benchmarks/bench_c_loop.py runs the same algorithm as the Numba
kernel: identical completion times, so its speed ratio compares like with like."""

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from mrfq.packet import kernel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_c_loop  # noqa: E402

needs_compiler = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                    reason="no C compiler")


@needs_compiler
@pytest.mark.parametrize("policy", ["bmf", "pf", "drfq", "drfq:started"])
@pytest.mark.parametrize("load", [0.3, 0.9])
def test_c_loop_matches_the_numba_kernel(tmp_path, monkeypatch, policy, load):
    c_kernel = bench_c_loop.c_run_kernel(bench_c_loop.build(tmp_path, ["-O2"]))
    _, numba_run = bench_c_loop.timed(policy, load, 2e5, 7)
    monkeypatch.setattr(kernel, "run_kernel", c_kernel)
    _, c_run = bench_c_loop.timed(policy, load, 2e5, 7)
    assert c_run.services == numba_run.services > 2e5
    assert np.array_equal(c_run.completion, numba_run.completion)
    assert np.isfinite(c_run.completion).all()


@needs_compiler
def test_c_loop_differs_when_the_algorithm_does(tmp_path, monkeypatch):
    """The comparison can fail: PF's loop on a BMF run gives other completion times."""
    lib = bench_c_loop.build(tmp_path, ["-O2"])
    _, numba_run = bench_c_loop.timed("bmf", 0.9, 2e5, 7)
    wrong = bench_c_loop.c_run_kernel(lib)
    monkeypatch.setattr(kernel, "run_kernel",
                        lambda policy, *args: wrong(kernel.PF, *args))
    _, c_run = bench_c_loop.timed("bmf", 0.9, 2e5, 7)
    assert not np.array_equal(c_run.completion, numba_run.completion)


@needs_compiler
def test_c_loop_refuses_what_it_does_not_cover(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "run_kernel",
                        bench_c_loop.c_run_kernel(bench_c_loop.build(tmp_path, ["-O2"])))
    with pytest.raises(ValueError, match="covers PF, BMF and memoryless DRFQ"):
        bench_c_loop.timed("fifo", 0.5, 1e4, 7)


@needs_compiler
def test_c_loop_drfq_clocks_are_two_schedules(tmp_path, monkeypatch):
    """DRFQ's two clocks give other completion times in the C loop too: the started
    clock's C loop on an in-service run does not match the kernel."""
    lib = bench_c_loop.build(tmp_path, ["-O2"])
    _, numba_run = bench_c_loop.timed("drfq", 0.9, 2e5, 7)
    started = lib.mrfq_loop_drfq_started
    lib.mrfq_loop_drfq = started  # the in-service entry point runs the started clock
    monkeypatch.setattr(kernel, "run_kernel", bench_c_loop.c_run_kernel(lib))
    _, c_run = bench_c_loop.timed("drfq", 0.9, 2e5, 7)
    assert not np.array_equal(c_run.completion, numba_run.completion)


@needs_compiler
def test_c_loop_drfq_bookkeeping_keeps_the_started_schedule(tmp_path, monkeypatch):
    """The C loop that does the in-service clock's work alongside BR's tags gives BR's
    schedule exactly (so timing it against the started loop prices that work alone)."""
    lib = bench_c_loop.build(tmp_path, ["-O2"])
    _, numba_run = bench_c_loop.timed("drfq:started", 0.9, 2e5, 7)
    monkeypatch.setattr(kernel, "run_kernel", bench_c_loop.c_run_kernel(lib, bookkeeping=True))
    _, c_run = bench_c_loop.timed("drfq:bookkeeping", 0.9, 2e5, 7)
    assert c_run.services == numba_run.services > 2e5
    assert np.array_equal(c_run.completion, numba_run.completion)
