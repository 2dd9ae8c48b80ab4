"""What does DRFQ's in-service clock's code cost on BR's schedule? (issue 22's speed bar)

The in-service clock (the DRFQ paper's V, SPEC §3) gives another schedule than BR's
started clock *and* adds code to the loop: the bound check at every injection with its
scan of the resources (0.4% of injections at load 0.8), the tag of every started packet
stored per resource. This script separates the two by running the in-service clock's
code on BR's schedule: a copy of the package whose started-clock DRFQ loop also does the
in-service bookkeeping (the bound kept in a register, raised at every start, checked and
tightened by the scan at every injection, the result kept) while its tags stay BR's.

1. The copy is made in a temporary directory from this checkout's ``mrfq/`` by textual
   edits of ``mrfq/packet/kernel.py`` (each edit asserts that its anchor is found: an
   edit of the kernel that moves an anchor stops the script instead of measuring
   something else).
2. Its started-clock runs must give this checkout's results bit for bit (completion
   times and sojourn histogram, Figure 3 at loads 0.3 and 0.9, with and without the
   lone-flow loop); the script stops otherwise.
3. Both trees are timed in alternating processes (``--rounds`` each; one process runs
   drfq under both clocks, 3 runs each, Figure 3 at link load 0.8, m = 2000, W = 30,
   ~2e7 services per run, the lone-flow loop on as shipped). Processes differ by up to
   ±10% for the same code (code and data placement), so compare medians over rounds.

The probe does more than the in-service loop does: its bound is a register of its own,
raised at every start and after every arrival, where the in-service loop reuses the
``vglobal`` every DRFQ loop keeps. Its cost is therefore an upper bound on that of the
in-service clock's code.

Measured 2026-11-27, ``--rounds 4`` (M services per CPU-second, medians over 4 processes
each): started clock 64.4 as shipped, 58.9 with the probe (same results; ratio 0.915);
in-service clock 57.9. A loop that reads the clock at run time, the same machine code for
both clocks, puts the schedule's own share at 5–7% (BENCHMARKS.md, "DRFQ's virtual
time").

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
     "        if True or in_service or (network and key > res_f[_U(J + j)]):\n"
     "            res_f[_U(J + j)] = key\n"),
    # the bound, a register of the loop, kept in an unused slot between kernel calls
    ("        vglobal = fstate[F_VGLOBAL]\n",
     "        vglobal = fstate[F_VGLOBAL]\n"
     "        bound = fstate[F_MAXSC_PREV]\n"),
    ("        fstate[F_VGLOBAL] = vglobal\n",
     "        fstate[F_VGLOBAL] = vglobal\n"
     "        fstate[F_MAXSC_PREV] = bound\n"),
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
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.scenario import load_scenario
scenario = load_scenario("fig3_packet")
model = PacketModel.from_scenario(scenario)
mode, services = sys.argv[1], float(sys.argv[2])
if mode == "hash":
    for load in (0.3, 0.9):
        for lone in (True, False):
            r = run_replication(model, "drfq", scenario.class_loads(load),
                                np.random.SeedSequence(3), flows=1000, mean_size=500.0,
                                window=30, virtual_time="started", lone_flow=lone)
            print(hashlib.sha1(r.completion.tobytes() + r.sojourn_hist.tobytes()).hexdigest())
    sys.exit()
rho = scenario.class_loads(0.8)
flows = int(services / 4000) + 1
clocks = ("in-service", "started")
def run(clock, seed, n):
    return run_replication(model, "drfq", rho, np.random.SeedSequence(seed), flows=n,
                           mean_size=2000.0, window=30, virtual_time=clock)
for clock in clocks:
    run(clock, 0, 50)
rates = {clock: [] for clock in clocks}
for r in range(3):
    for clock in (clocks if r % 2 == 0 else clocks[::-1]):
        started = time.process_time()
        done = run(clock, 1, flows).services
        rates[clock].append(done / (time.process_time() - started) / 1e6)
print(" ".join(f"{statistics.median(rates[c]):.2f}" for c in clocks))
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


def child(tree: Path, mode: str, services: float) -> str:
    """Run CHILD with ``tree``'s package first on the path (from a neutral directory, so
    that the current directory's package is not imported instead)."""
    return subprocess.run([sys.executable, "-c", CHILD, mode, str(services)], cwd=tree,
                          env=dict(os.environ, PYTHONPATH=str(tree)),
                          capture_output=True, text=True, check=True).stdout.split()


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
        same = child(shipped, "hash", 0) == child(probe, "hash", 0)
        if not same:
            sys.exit("drfq_clock_cost: the probe's started-clock results differ from the "
                     "shipped kernel's: it would not measure the same schedule")
        print("probe: started-clock results identical to the shipped kernel's (Figure 3, "
              "loads 0.3 and 0.9, lone-flow loop on and off)")
        rows = {"shipped": [], "probe": []}
        for r in range(args.rounds):
            for name in (("shipped", "probe") if r % 2 == 0 else ("probe", "shipped")):
                rates = [float(x) for x in child(shipped if name == "shipped" else probe,
                                                 "time", args.services)]
                rows[name].append(rates)
                print(f"round {r + 1} {name:7s}: in-service {rates[0]:.1f}, started "
                      f"{rates[1]:.1f} M services per CPU-second", flush=True)
        shipped_started = statistics.median(x[1] for x in rows["shipped"])
        probe_started = statistics.median(x[1] for x in rows["probe"])
        in_service = statistics.median(x[0] for x in rows["shipped"])
        print(f"medians over {args.rounds} processes each: started clock {shipped_started:.1f} "
              f"as shipped, {probe_started:.1f} with the in-service bookkeeping "
              f"(ratio {probe_started / shipped_started:.3f}); in-service clock "
              f"{in_service:.1f} (ratio to the shipped started loop "
              f"{in_service / shipped_started:.3f})")


if __name__ == "__main__":
    main()
