"""DRFQ's in-service clock against BR's started clock: how much is the schedule, how much
the code? (issue 22's speed bar)

The in-service clock (the DRFQ paper's V, SPEC §3) gives another schedule than BR's
started clock *and* adds code to the loop: the bound check at every injection with its
scan of the resources (0.4% of injections at load 0.8), the tag of every started packet
stored per resource. Three kinds of process, alternating:

* **shipped**: this checkout's loops, one compiled loop per clock (as users run them);
* **same code**: one loop for both clocks, the clock read at run time
  (``kernel._make_event_loop(DRFQ, False, False, ANY, 0)``): the two schedules as the same
  machine code, so its in-service / started ratio is the schedule together with the
  bookkeeping it executes;
* **probe**: a copy of the package whose started-clock DRFQ loop does in-service
  bookkeeping besides, its tags staying BR's. It adds more work than the in-service loop
  does (a bound register of its own, raised at every start and after every arrival; the
  in-service loop reuses ``vglobal``), and none in the lone-flow loop, so its cost
  overestimates that of the bookkeeping's code on BR's schedule.

The probe is made in a temporary directory from this checkout's ``mrfq/`` by textual edits
of ``mrfq/packet/kernel.py``; each edit asserts that its anchor is found once, so an edit
of the kernel that moves an anchor stops the script instead of measuring something else.
Its started-clock results must equal the shipped kernel's bit for bit (completion times
and sojourn histogram: Figure 3 at loads 0.3 and 0.9 with and without the lone-flow loop,
and the timed run), or the script stops. Every process checks it imported the package it
was given. Timing: Figure 3 at link load 0.8, m = 2000, W = 30, ~``--services`` services
per run, 4 alternating rounds per process, the lone-flow loop on as shipped. Processes
differ by up to ±10% for the same code (placement), so compare medians over processes.

Measured 2026-11-27, ``--rounds 4``: in-service / started 0.900 in the shipped loops
(0.897–0.905 per process), 0.942 in one loop for both clocks (0.940–0.944); started clock
65.2 as shipped against 59.2 in the probe (0.909); BENCHMARKS.md, "DRFQ's virtual time".

Usage: python benchmarks/drfq_clock_cost.py [--rounds 4] [--services 2e7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = "(DRFQ_LOOP and not in_service and not network)"

# (anchor, replacement): the anchor must occur exactly once in kernel.py
EDITS = (
    # the tag of every started packet is stored per resource (the in-service clock reads it)
    ("        if in_service or (network and key > res_f[_U(J + j)]):\n"
     "            res_f[_U(J + j)] = key\n",
     "        if not network or in_service or (network and key > res_f[_U(J + j)]):\n"
     "            res_f[_U(J + j)] = key\n"),
    # the bound, a register of the loop, kept in an unused slot between kernel calls
    ("        vglobal = fstate[F_VGLOBAL]\n",
     "        vglobal = fstate[F_VGLOBAL]\n"
     "        bound = fstate[F_MAXSC_PREV] if DRFQ_LOOP else 0.0\n"),
    ("        fstate[F_VGLOBAL] = vglobal\n",
     "        fstate[F_VGLOBAL] = vglobal\n"
     "        if DRFQ_LOOP:\n"
     "            fstate[F_MAXSC_PREV] = bound\n"),
    # the check (and the scan, when the flow lags the bound) at every injection
    ("                    pk, dest, s, vglobal = _inject(",
     f"                    if {PROBE}:\n"
     "                        bound = _virtual_time(res_f, J, bound, True, flow_f[bf])\n"
     "                    pk, dest, s, vglobal = _inject("),
    # the bound raised by every start: a packet starting at once at its resource ...
    ("                                      in_service, network, model.fq_mask, ev_key, ev_id)\n"
     "                    seq += 1\n",
     "                                      in_service, network, model.fq_mask, ev_key, ev_id)\n"
     f"                    if {PROBE} and res_f[_U(target)] < np.inf:\n"
     "                        bound = max(bound, res_f[_U(J + target)])\n"
     "                    seq += 1\n"),
    ("                                  network, model.fq_mask, ev_key, ev_id)\n"
     "                seq += 1\n",
     "                                  network, model.fq_mask, ev_key, ev_id)\n"
     f"                if {PROBE} and res_f[_U(dest)] < np.inf:\n"
     "                    bound = max(bound, res_f[_U(J + dest)])\n"
     "                seq += 1\n"),
    # ... and a start in phase 2
    ("                                         ev_key, ev_id)\n"
     "                head += 1\n",
     "                                         ev_key, ev_id)\n"
     f"                if {PROBE}:\n"
     "                    bound = max(bound, key)\n"
     "                head += 1\n"),
)

CHILD = """
import hashlib, statistics, sys, time
import numpy as np
import mrfq
from mrfq.packet import kernel
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.scenario import load_scenario
mode, services, tree = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if not mrfq.__file__.startswith(tree):
    sys.exit(f"imported {mrfq.__file__}, not the package in {tree}")
scenario = load_scenario("fig3_packet")
model = PacketModel.from_scenario(scenario)
rho = scenario.class_loads(0.8)
flows = int(services / 4000) + 1
if mode == "hash":  # the started clock's results: the checks' cases and the timed run
    cases = [(load, lone, 1000, 500.0) for load in (0.3, 0.9) for lone in (True, False)]
    cases.append((0.8, True, flows, 2000.0))
    for load, lone, n, m in cases:
        r = run_replication(model, "drfq", scenario.class_loads(load),
                            np.random.SeedSequence(3 if n == 1000 else 1), flows=n,
                            mean_size=m, window=30, virtual_time="started", lone_flow=lone)
        print(hashlib.sha1(r.completion.tobytes() + r.sojourn_hist.tobytes()).hexdigest())
    sys.exit()
if mode == "same":  # one loop for both clocks: the clock read at run time
    loop = kernel._make_event_loop(kernel.DRFQ, False, False, kernel.ANY, 0)
    kernel._LOOPS[kernel.DRFQ] = kernel._STARTED_LOOPS[kernel.DRFQ] = loop
clocks = ("in-service", "started")
def run(clock, seed, n):
    return run_replication(model, "drfq", rho, np.random.SeedSequence(seed), flows=n,
                           mean_size=2000.0, window=30, virtual_time=clock)
for clock in clocks:
    run(clock, 0, 50)
rates = {clock: [] for clock in clocks}
for r in range(4):
    for clock in (clocks if r % 2 == 0 else clocks[::-1]):
        started = time.process_time()
        done = run(clock, 1, flows).services
        rates[clock].append(done / (time.process_time() - started) / 1e6)
ratio = statistics.median(a / b for a, b in zip(rates[clocks[0]], rates[clocks[1]]))
print(" ".join(f"{statistics.median(rates[c]):.2f}" for c in clocks), f"{ratio:.4f}")
"""


def probe_tree(directory: Path) -> Path:
    """A copy of this checkout's package with the bookkeeping in the started loop."""
    shutil.copytree(ROOT / "mrfq", directory / "mrfq",
                    ignore=shutil.ignore_patterns("__pycache__"))
    kernel = directory / "mrfq" / "packet" / "kernel.py"
    text = kernel.read_text()
    for anchor, replacement in EDITS:
        if text.count(anchor) != 1:
            sys.exit(f"drfq_clock_cost: the kernel changed: an anchor occurs "
                     f"{text.count(anchor)} times, not once:\n{anchor}")
        text = text.replace(anchor, replacement)
    kernel.write_text(text)
    return directory


def child(tree: Path, mode: str, services: float) -> list[str]:
    """Run CHILD in a process of its own with ``tree``'s package first on the path (run
    from ``tree``, so that no other checkout's package is imported; the child checks)."""
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(services), str(tree)],
                          cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                          capture_output=True, text=True)
    if done.returncode != 0:  # (e.g. the child imported another package)
        sys.exit(f"drfq_clock_cost: the {mode} process in {tree} failed:\n{done.stderr}")
    return done.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--services", type=float, default=2e7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shipped = Path(tmp) / "shipped"
        shutil.copytree(ROOT / "mrfq", shipped / "mrfq",
                        ignore=shutil.ignore_patterns("__pycache__"))
        probe = probe_tree(Path(tmp) / "probe")
        same = (child(shipped, "hash", args.services)
                == child(probe, "hash", args.services))
        if not same:
            sys.exit("drfq_clock_cost: the probe's started-clock results differ from the "
                     "shipped kernel's: it would not measure the same schedule")
        print("probe: started-clock results identical to the shipped kernel's (Figure 3, "
              "loads 0.3 and 0.9, lone-flow loop on and off, and the timed run)")
        rows = {"shipped": [], "probe": [], "same code": []}
        for r in range(args.rounds):
            for name in (("shipped", "probe", "same code") if r % 2 == 0
                         else ("same code", "probe", "shipped")):
                tree, mode = (probe, "time") if name == "probe" else (
                    shipped, "same" if name == "same code" else "time")
                rates = [float(x) for x in child(tree, mode, args.services)]
                rows[name].append(rates)
                print(f"round {r + 1} {name:9s}: in-service {rates[0]:.1f}, started "
                      f"{rates[1]:.1f} M services per CPU-second, ratio of the rounds' "
                      f"{rates[2]:.3f}", flush=True)
        shipped_started = statistics.median(x[1] for x in rows["shipped"])
        probe_started = statistics.median(x[1] for x in rows["probe"])
        in_service = statistics.median(x[0] for x in rows["shipped"])
        shipped_ratio = statistics.median(x[2] for x in rows["shipped"])
        same_ratio = statistics.median(x[2] for x in rows["same code"])
        print(f"in-service / started, medians over processes: shipped loops "
              f"{shipped_ratio:.3f}; one loop for both clocks (the clock read at run time) "
              f"{same_ratio:.3f} "
              f"({', '.join(f'{x[2]:.3f}' for x in rows['same code'])})")
        print(f"medians over {args.rounds} processes each: started clock {shipped_started:.1f} "
              f"as shipped, {probe_started:.1f} with the in-service bookkeeping "
              f"(ratio {probe_started / shipped_started:.3f}); in-service clock "
              f"{in_service:.1f} (ratio to the shipped started loop "
              f"{in_service / shipped_started:.3f})")


if __name__ == "__main__":
    main()
