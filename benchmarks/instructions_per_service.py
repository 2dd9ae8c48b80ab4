"""Instructions and mispredicted branches per packet-resource service of a packet run,
counted by valgrind's cachegrind (issue 22: is a schedule slower because the same code
does more work per service, or because that work runs slower?).

This machine has no hardware counters (`perf stat` reports cycles, instructions and
branch misses as "not supported"), so the counts come from cachegrind's simulation:
exact instruction counts, branch mispredictions by its own simple predictor model (a
proxy, not the hardware's). A whole process is counted — Python start-up, Numba's cache
load, the run — so each case runs twice, with ``--small`` and ``--large`` services, and
the difference over the difference in services is the run's own cost per service (the
start-up is the same in both, up to ±50 M instructions: with 1e6 against 1.6e7 services
that is ±3 instructions per service). The Numba cache is keyed by the CPU that valgrind
reports, so the first case under valgrind compiles its loop (minutes): run it once
with ``--warm`` first, or ignore a first case whose start-up differs.

Case: the Figure 3 scenario (``fig3_packet``) at link load 0.8, m = 2000, W = 30, as
``bench_fq_schedules.py``.

Usage: python benchmarks/instructions_per_service.py [--cases drfq:in-service,drfq:started]
       [--small 1e6] [--large 1.6e7] [--warm]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

EVENTS = ("Ir", "Bc", "Bcm")


def child(policy: str, clock: str, services: float) -> None:
    """The counted process: one small run (cache load, compilation), then the run."""
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel
    from mrfq.scenario import load_scenario

    scenario = load_scenario("fig3_packet")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.8)

    def run(seed: int, flows: int):
        return run_replication(model, policy, rho, np.random.SeedSequence(seed), flows=flows,
                               mean_size=2000.0, window=30, virtual_time=clock)

    run(0, 50)
    print(run(1, int(services / 4000) + 1).services)


def counted(policy: str, clock: str, services: float) -> tuple[int, dict]:
    """(services, {event: count}) of one child process under cachegrind."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "cg.out")
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=yes",
             f"--cachegrind-out-file={out}", sys.executable, __file__, "--child", policy,
             clock, str(services)], capture_output=True, text=True, check=True)
        names, values = [], []
        with open(out) as handle:
            for line in handle:
                if line.startswith("events:"):
                    names = line.split()[1:]
                elif line.startswith("summary:"):
                    values = [int(v) for v in line.split()[1:]]
    return int(done.stdout.split()[-1]), dict(zip(names, values, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="drfq:in-service,drfq:started")
    parser.add_argument("--small", type=float, default=1e6)
    parser.add_argument("--large", type=float, default=1.6e7)
    parser.add_argument("--warm", action="store_true",
                        help="run every case once first (compiles under valgrind)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], float(args.child[2]))
        return
    cases = [tuple(case.split(":")) for case in args.cases.split(",")]
    if args.warm:
        for policy, clock in cases:
            counted(policy, clock, 1e4)
    print(f"per service, ({args.large:g} − {args.small:g} services) differential: "
          + " ".join(EVENTS))
    for policy, clock in cases:
        n_small, small = counted(policy, clock, args.small)
        n_large, large = counted(policy, clock, args.large)
        per = [(large[e] - small[e]) / (n_large - n_small) for e in EVENTS]
        print(f"{policy:6s} {clock:10s} " + " ".join(f"{v:8.2f}" for v in per), flush=True)


if __name__ == "__main__":
    main()
