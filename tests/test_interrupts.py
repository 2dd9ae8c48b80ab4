"""Stopping a run: SIGTERM stops it as Ctrl-C does (its workers stopped, a message, exit
143), workers do not outlive a killed parent, and Ctrl-C that lands inside compiled code
is an interrupt, not a bug."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import classes_toml

from mrfq import console
from mrfq.executor import execute

# packet points of about 1.6e9 services (half a minute each): running when signalled
LONG = """
name = "long"
resources = ["cpu", "link"]
""" + classes_toml(2) + """[load]
axis = "link"
values = [0.2, 0.8]
[fluid]
policies = ["drf"]
[packet]
policies = ["drfq", "bmf"]
mean_size = 20000
window = 5
flows = 40000
seed = 4
"""

ROOT = Path(__file__).resolve().parent.parent
linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _sweep_with_workers(tmp_path):
    """A sweep on 2 workers, once both workers are computing: (process, worker pids)."""
    (tmp_path / "long.toml").write_text(LONG)
    proc = subprocess.Popen([sys.executable, "-m", "mrfq", "sweep", "long.toml", "-o", "res",
                             "--jobs", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    workers: set[int] = set()
    while time.time() < deadline:
        # the spawned workers (the resource tracker is a child too)
        workers = {p for p in _children(proc.pid)
                   if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()}
        if len(workers) >= 2:
            break
        time.sleep(0.1)
    assert len(workers) >= 2, "the sweep did not start its workers"
    time.sleep(3)  # compiled and computing
    return proc, workers


def _gone(pids: set[int], seconds: float) -> bool:
    """Whether the processes ``pids`` end within ``seconds``; those left are killed (a
    failing test must not leave them computing)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    return False


@pytest.mark.slow
@linux
def test_sigterm_stops_a_sweep_as_ctrl_c_does(tmp_path):
    """SIGTERM used to kill the sweep at once: no message, the progress line left open,
    exit 143 from the signal, and its workers left running (then asleep) for good."""
    proc, workers = _sweep_with_workers(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.splitlines()[-1] == ("interrupted by SIGTERM (finished points are kept; run "
                                    "again to resume)"), err
    assert _gone(workers, 10), "workers outlived the sweep"


@pytest.mark.slow
@linux
def test_workers_do_not_outlive_a_killed_sweep(tmp_path):
    """A sweep killed outright (SIGKILL, out of memory) cannot stop its workers: they
    must end with it, not compute on and then sleep forever on the pool's queue."""
    proc, workers = _sweep_with_workers(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    assert _gone(workers, 10), "workers outlived the killed sweep"


def _interrupted_in_compiled_code(interrupt):
    """What Numba makes of an interrupt that lands while compiled code calls back into
    Python: a SystemError caused by it."""
    def point(item):
        try:
            raise interrupt
        except KeyboardInterrupt as exc:
            raise SystemError("CPUDispatcher(<function simulate>) returned a result with an "
                              "exception set") from exc
    return point


def test_an_interrupt_inside_compiled_code_stops_a_sweep_in_this_process():
    """With --jobs 1 (and in mrfq simulate) Ctrl-C during the cluster kernel came out as
    SystemError: an internal error (exit 3, a traceback) instead of an interrupt."""
    function = _interrupted_in_compiled_code(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        list(execute(function, [1, 2], jobs=1))
    function = _interrupted_in_compiled_code(console.Terminated())
    with pytest.raises(console.Terminated):
        list(execute(function, [1, 2], jobs=1))


@pytest.mark.parametrize("interrupt, code", [(KeyboardInterrupt(), 130),
                                             (console.Terminated(), 143)])
def test_the_command_line_says_interrupted_for_an_interrupt_inside_compiled_code(
        interrupt, code, capsys):
    """A trace run calls the cluster kernel directly (no executor): the command line
    itself must see the interrupt behind the SystemError."""
    command = console.user_errors(lambda: _interrupted_in_compiled_code(interrupt)(None))
    with pytest.raises(SystemExit) as exited:
        command()
    assert exited.value.code == code
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("interrupted") and "internal error" not in err


def test_sigterm_is_restored_after_a_command():
    before = signal.getsignal(signal.SIGTERM)
    seen = []
    console.user_errors(lambda: seen.append(signal.getsignal(signal.SIGTERM)))()
    assert seen and seen[0] is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_every_process_pool_is_the_executors():
    """The packet kernels' compilation pool (``kinds.packet.prepare``, a cold cache) was
    a ProcessPoolExecutor of its own whose workers outlived a killed parent; every pool
    now comes from :func:`mrfq.executor.spawned_pool` (workers end with their parent)."""
    package = Path(__file__).resolve().parent.parent / "mrfq"
    elsewhere = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if p.name != "executor.py" and "ProcessPoolExecutor(" in p.read_text()]
    assert elsewhere == []


#: a Ctrl-C landing inside concurrent.futures.wait()'s loop over the pending futures'
#: locks (simulated: the first lock taken, then the interrupt), then a real Ctrl-C later
_LOCKS_LEFT_TAKEN = """
import concurrent.futures._base as base
import os, signal, threading, time

from mrfq.executor import execute


def enter(self):
    next(iter(self.futures))._condition.acquire()
    raise KeyboardInterrupt


base._AcquireFutures.__enter__ = enter

if __name__ == "__main__":
    # (a test run in the background by a non-interactive shell has SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        for _ in execute(time.sleep, [3.0] * 6, jobs=2):
            pass
    except KeyboardInterrupt:
        timer.cancel()  # (the simulated one came first: no second Ctrl-C to end a hang)
        print("interrupted", flush=True)
"""


def test_an_interrupt_never_leaves_the_pool_waiting_on_a_future(tmp_path):
    """The pool's results were awaited with concurrent.futures.wait, which takes every
    pending future's lock in a Python loop: a Ctrl-C inside it left locks taken, the
    pool's thread blocked on one at shutdown, and the process never exited (a sweep hung
    after printing "interrupted", once, beside another job). The executor now lets each
    future report itself on a queue: no lock of it is held while waiting."""
    script = tmp_path / "locks.py"
    script.write_text(_LOCKS_LEFT_TAKEN)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=30, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0 and result.stdout.strip() == "interrupted", result.stderr


#: ``kinds.packet.prepare`` on its pool path (taken on a cold cache: forced here), a
#: Ctrl-C once its workers run, a second 3 s later
_CTRL_C_WHILE_COMPILING = """
import multiprocessing, os, signal, threading, time

import mrfq.kinds.packet as packet


def interrupt(times):
    while not multiprocessing.active_children():
        time.sleep(0.02)
    time.sleep(0.3)
    times.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(3.0)
    os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    packet.COLD_LOOP_SECONDS = -1.0
    times = []
    threading.Thread(target=interrupt, args=(times,), daemon=True).start()
    try:
        packet.prepare({"drfq", "pf", "bmf"}, jobs=2)
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - times[0]:.2f} s", flush=True)
"""


def test_ctrl_c_stops_the_compilation_pool_at_once(tmp_path):
    """The packet loops' compilation pool (``prepare``, a cold cache: a fresh ``make
    run``) waited for its workers when interrupted: the first Ctrl-C took until the
    compilations ended (about 10 s), and a second one while it waited hung the process
    (for minutes, a review found). It is now the executor's pool, abandoned at once; the
    workers are stopped quietly (the old exit left them printing tracebacks)."""
    script = tmp_path / "compiling.py"
    script.write_text(_CTRL_C_WHILE_COMPILING)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    words = result.stdout.split()
    assert words[:2] == ["interrupted", "after"], (result.stdout, result.stderr)
    assert float(words[2]) < 0.6 and "Traceback" not in result.stderr, result.stderr
