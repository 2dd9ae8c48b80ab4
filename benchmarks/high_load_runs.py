"""Raw runs for the high-load interval study (issue 25): per-flow records of independent
packet runs of the Figure 3 scenario, and long reference runs reduced to block sums, so
that interval methods can be compared offline on the same data.

Items (policy, load, mode, index):

* ``single``: one run of ``--flows`` flows (seed 300 000 + index), empty start;
* ``reps``: replication ``index % 10`` of run ``index // 10`` — 10 replications of
  ``--rep-flows`` flows (seed 400 000 + run, replication r);
* ``reference``: one run of ``--ref-flows`` flows (seed 500 000 + index), reduced to
  per-class sums over consecutive blocks of ``--block`` flows (arrival order) after
  dropping the first ``--ref-drop`` flows.

Per-flow files (``.npz``): arrival, sojourn, size (packets), flow class. Reference files:
per block and class Σ N, Σ T, flows. Everything cached under ``--out``; re-running
skips what exists.

    nice -n 10 python benchmarks/high_load_runs.py --runs 200 --ref-runs 50 --jobs 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np

from mrfq.kinds.packet import run_point
from mrfq.scenario import load_scenario

SEEDS = {"single": 300_000, "reps": 400_000, "reference": 500_000}


def scenario(args, mode: str, index: int):
    flows = {"single": args.flows, "reps": args.rep_flows, "reference": args.ref_flows}[mode]
    seed = SEEDS[mode] + (index // 10 if mode == "reps" else index)
    return load_scenario("fig3_packet").with_overrides(
        flows=flows, mean_size=args.mean_size, window=args.window, warmup=0.0, seed=seed,
        replications=1, init=args.init)


def path_of(args, item) -> Path:
    policy, load, mode, index = item
    tag = f"m{args.mean_size:g}-w{args.window}-{args.init}"
    if mode == "reference":
        tag += f"-f{args.ref_flows}-b{args.block}-d{args.ref_drop}"
    elif mode == "single":
        tag += f"-f{args.flows}"
    else:
        tag += f"-f{args.rep_flows}"
    return Path(args.out) / f"{mode}-{policy}-{load:g}-{tag}-{index}.npz"


def compute(job) -> str:
    args, item = job
    policy, load, mode, index = item
    target = path_of(args, item)
    if target.exists():
        return ""
    replication = index % 10 if mode == "reps" else 0
    started = time.perf_counter()
    _, run = run_point(scenario(args, mode, index), policy, load, replication)
    sojourn = run.completion - run.arrival
    tmp = target.with_suffix(".tmp.npz")
    if mode == "reference":
        cls = run.flow_class[args.ref_drop:]
        n = run.size[args.ref_drop:].astype(np.float64)
        t = sojourn[args.ref_drop:]
        blocks = cls.size // args.block
        classes = int(run.flow_class.max()) + 1
        sums = np.zeros((3, blocks, classes))
        block_of = np.arange(blocks * args.block) // args.block
        for k in range(classes):
            mine = cls[: blocks * args.block] == k
            sums[0, :, k] = np.bincount(block_of[mine], n[: blocks * args.block][mine], blocks)
            sums[1, :, k] = np.bincount(block_of[mine], t[: blocks * args.block][mine], blocks)
            sums[2, :, k] = np.bincount(block_of[mine], None, blocks)
        np.savez(tmp, size_sum=sums[0], sojourn_sum=sums[1], flows=sums[2])
    else:
        np.savez(tmp, arrival=run.arrival, sojourn=sojourn,
                 size=run.size.astype(np.int32), flow_class=run.flow_class.astype(np.int8))
    tmp.rename(target)
    return f"{target.name} {time.perf_counter() - started:.1f}s"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policies", default="bmf,drfq")
    p.add_argument("--loads", default="0.5,0.9")
    p.add_argument("--modes", default="reference,single,reps")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--ref-runs", type=int, default=50)
    p.add_argument("--flows", type=int, default=20_000)
    p.add_argument("--rep-flows", type=int, default=2_000)
    p.add_argument("--ref-flows", type=int, default=2_000_000)
    p.add_argument("--ref-drop", type=int, default=20_000)
    p.add_argument("--block", type=int, default=500)
    p.add_argument("--mean-size", type=float, default=200)
    p.add_argument("--window", type=int, default=30)
    p.add_argument("--init", default="empty")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="results/high_load_runs")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    items = []
    for mode in args.modes.split(","):
        for policy in args.policies.split(","):
            for load in (float(x) for x in args.loads.split(",")):
                count = {"single": args.runs, "reps": 10 * args.runs,
                         "reference": args.ref_runs}[mode]
                items += [(policy, load, mode, i) for i in range(count)]
    todo = [(args, i) for i in items if not path_of(args, i).exists()]
    print(f"{len(items)} items, {len(todo)} to compute", flush=True)
    done = 0
    with multiprocessing.Pool(args.jobs) as pool:
        for message in pool.imap_unordered(compute, todo, chunksize=1):
            done += 1
            if message and (done % 50 == 0 or "reference" in message):
                print(f"[{done}/{len(todo)}] {message}", flush=True)


if __name__ == "__main__":
    main()
