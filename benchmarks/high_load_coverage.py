"""Coverage and bias of the packet points' γ intervals at loads 0.5 and 0.9 (issue 25),
computed with the package's own statistics on the raw runs of ``high_load_runs.py``.

Each run's flow records go through :func:`mrfq.stats.replication_table` (``warmup =
"auto"``, 20 batches: what a packet point stores) and :func:`mrfq.stats.
combine_replications` with the start-up cut :func:`mrfq.kinds.packet.start_up_flows`
(what a sweep reports). The reference γ_k is the pooled ratio of the long reference runs
(block sums, their first 20 000 flows dropped) with a t interval over those runs.

Coverage: fraction of runs whose interval contains the reference (a withheld interval —
NaN, ``ci_problem`` set — is a miss and is counted), Clopper–Pearson 95% interval;
"above"/"below": intervals entirely on one side. Bias: mean estimate / reference − 1, ±
the 95% half-width from the runs' spread and the reference's own.

    python benchmarks/high_load_runs.py --runs 200 --jobs 2          # the raw runs
    python benchmarks/high_load_coverage.py --runs 200               # this table
"""

from __future__ import annotations

import argparse
import glob
import multiprocessing

import numpy as np
from scipy import stats as sps

from mrfq.kinds.packet import fluid_reference, start_up_flows
from mrfq.scenario import load_scenario
from mrfq.stats import combine_replications, replication_table, with_fluid_variance


def scenario(mean_size: float, window: int):
    return load_scenario("fig3_packet").with_overrides(
        mean_size=mean_size, window=window, warmup="auto"
    )


def reference(out: str, policy: str, load: float, tag: str):
    files = sorted(glob.glob(f"{out}/reference-{policy}-{load:g}-{tag}-*.npz"))
    n = np.array([np.load(f)["size_sum"].sum(axis=0) for f in files])
    t = np.array([np.load(f)["sojourn_sum"].sum(axis=0) for f in files])
    g = n.sum(0) / t.sum(0)
    r = len(files)
    se = np.sqrt((n - g * t).var(axis=0, ddof=1) / r) / t.mean(0)
    return g, sps.t.ppf(0.975, r - 1) * se / g, r


def table(path: str, sc, load: float):
    z = np.load(path)
    arrival, sojourn = z["arrival"], z["sojourn"]
    return replication_table(
        arrival,
        arrival + sojourn,
        z["flow_class"],
        z["size"].astype(np.float64),
        sc.class_names,
        sc.class_loads(load),
        sc.packet.mean_size,
        "auto",
        sc.packet.batches,
    )


def one_run(job):
    paths, mean_size, window, load, fluid = job
    sc = scenario(mean_size, window)
    tables = [table(p, sc, load) for p in paths]
    out = combine_replications(tables, mean_size, warmup_flows=start_up_flows(sc, load))
    if fluid is not None:  # what a sweep reports (mrfq.kinds.packet.combine_packet_records)
        out = with_fluid_variance(out, np.array([c["gamma"] for c in fluid["classes"]]),
                                  np.array([c["flow_variance"] for c in fluid["classes"]]))
    return (
        out["gamma"].to_numpy(),
        out["ci_low"].to_numpy(),
        out["ci_high"].to_numpy(),
        out["ratio_estimate"].to_numpy(),
        int(out["relaxation_batches"].iloc[0]),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="results/high_load_runs")
    p.add_argument("--policies", default="bmf,drfq")
    p.add_argument("--loads", default="0.5,0.9")
    p.add_argument("--modes", default="single,reps")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--flows", type=int, default=20_000)
    p.add_argument("--rep-flows", type=int, default=2_000)
    p.add_argument("--mean-size", type=float, default=200)
    p.add_argument("--window", type=int, default=30)
    p.add_argument("--ref-tag", default="f2000000-b500-d20000")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--old-bmf-ref", action="store_true")
    p.add_argument("--data-only", action="store_true",
                   help="the runs' own intervals (batch means / replications), as before "
                        "the fluid model's variance")
    p.add_argument("--dump", help="save each cell's estimates to <dump>-policy-load-mode.npz")
    args = p.parse_args()
    tag = f"m{args.mean_size:g}-w{args.window}-empty"
    print(
        "| mode | policy | load | class | reference γ | coverage [95% CI] | withheld | "
        "above / below | mean bias | bias of Σ N / Σ T | mean half-width |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with multiprocessing.Pool(args.jobs) as pool:
        for policy in args.policies.split(","):
            for load in (float(x) for x in args.loads.split(",")):
                ref, ref_rel, nref = reference(args.out, policy, load, f"{tag}-{args.ref_tag}")
                fluid = (None if args.data_only else
                         fluid_reference(scenario(args.mean_size, args.window), policy, load))
                if args.old_bmf_ref:  # 10 × 10^6 flows, seed 7 (VALIDATION.md, issue 13)
                    ref = np.array(
                        {0.9: [0.1004, 0.5082, 0.0998], 0.5: [0.4984, 0.7555, 0.4803]}[load]
                    )
                    ref_rel = (
                        np.array(
                            {0.9: [0.0019, 0.0028, 0.0019], 0.5: [0.0014, 0.0007, 0.0012]}[load]
                        )
                        / ref
                    )
                    nref = 10
                for mode in args.modes.split(","):
                    if mode == "single":
                        jobs = [
                            (
                                [
                                    f"{args.out}/single-{policy}-{load:g}-{tag}-f{args.flows}-{i}.npz"
                                ],
                                args.mean_size,
                                args.window,
                                load,
                                fluid,
                            )
                            for i in range(args.runs)
                        ]
                    else:
                        jobs = [
                            (
                                [
                                    f"{args.out}/reps-{policy}-{load:g}-{tag}-"
                                    f"f{args.rep_flows}-{10 * i + r}.npz"
                                    for r in range(10)
                                ],
                                args.mean_size,
                                args.window,
                                load,
                                fluid,
                            )
                            for i in range(args.runs)
                        ]
                    res = pool.map(one_run, jobs, chunksize=4)
                    g = np.array([r[0] for r in res])
                    lo = np.array([r[1] for r in res])
                    hi = np.array([r[2] for r in res])
                    raw = np.array([r[3] for r in res])
                    n = len(res)
                    if args.dump:
                        np.savez(
                            f"{args.dump}-{policy}-{load:g}-{mode}.npz",
                            g=g,
                            lo=lo,
                            hi=hi,
                            raw=raw,
                            ref=ref,
                            ref_rel=ref_rel,
                        )
                    for k in range(ref.size):
                        ok = (lo[:, k] <= ref[k]) & (ref[k] <= hi[:, k])
                        cov = int(ok.sum())
                        lo_cp = sps.beta.ppf(0.025, cov, n - cov + 1) if cov else 0.0
                        hi_cp = sps.beta.ppf(0.975, cov + 1, n - cov) if cov < n else 1.0
                        withheld = int((~np.isfinite(lo[:, k])).sum())
                        above = int((lo[:, k] > ref[k]).sum())
                        below = int((hi[:, k] < ref[k]).sum())
                        bias = g[:, k].mean() / ref[k] - 1
                        half = 1.96 * np.hypot(
                            g[:, k].std(ddof=1) / np.sqrt(n) / ref[k],
                            ref_rel[k] / sps.t.ppf(0.975, nref - 1),
                        )
                        rawb = raw[:, k].mean() / ref[k] - 1
                        hw = np.nanmean((hi[:, k] - lo[:, k]) / 2 / g[:, k])
                        label = (
                            f"1 × {args.flows}" if mode == "single" else f"10 × {args.rep_flows}"
                        )
                        print(
                            f"| {label} | {policy} | {load:g} | {k + 1} | {ref[k]:.4f} ± "
                            f"{ref_rel[k]:.2%} ({nref} runs) | {cov / n:.1%} ({cov}/{n}) "
                            f"[{lo_cp:.1%}, {hi_cp:.1%}] | {withheld} | {above} / {below} | "
                            f"{bias:+.2%} ± {half:.2%} | {rawb:+.2%} | {hw:.1%} |",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
