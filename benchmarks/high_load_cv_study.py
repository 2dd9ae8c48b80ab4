"""Control variates for γ at load 0.9 (issue 25), offline on the raw runs of
high_load_runs.py: the realised offered work is a control with a known mean, and a run
that happened to see little work (no long busy period) is corrected down.

For class k, unit u (a batch of its measured flows in one run, or one replication) spans
the arrival times [t_first, t_last] of its flows; the control is the work offered to the
busiest resource j by the flows of *every* class arriving in (t_first, t_last], minus
ρ_j (t_last − t_first). Its mean is exactly 0: the unit holds a fixed number of class-k
gaps (sum of exponentials, mean n/λ_k) and the other classes are Poisson and independent.
The estimate regresses z_u = N_u − γ̂ T_u on the control (Lavenberg & Welch 1981; Nelson
1990): γ_cv = γ̂ − β̂ c̄ / T̄, variance s²_e (1/n + c̄² / Σ(c_u − c̄)²), t with n − 2
degrees of freedom. ``--groups G`` first adds the 20 batches of a single run into G.
The package's interval ("package") is computed alongside on the same runs.

    python benchmarks/high_load_cv_study.py --policies bmf,drfq --modes single,reps
"""

from __future__ import annotations

import argparse
import glob

import numpy as np
from scipy import stats as sps

from mrfq.kinds.packet import start_up_flows
from mrfq.scenario import load_scenario
from mrfq.stats import combine_replications, replication_table


def reference(out: str, policy: str, load: float, tag: str) -> np.ndarray:
    files = sorted(glob.glob(f"{out}/reference-{policy}-{load:g}-{tag}-*.npz"))
    n = np.array([np.load(f)["size_sum"].sum(axis=0) for f in files])
    t = np.array([np.load(f)["sojourn_sum"].sum(axis=0) for f in files])
    return n.sum(0) / t.sum(0)


def cv_interval(N, T, C, confidence=0.95):
    """(γ_cv, low, high) from unit sums N, T and mean-zero controls C (units × q)."""
    n, q = N.size, C.shape[1]
    gamma = N.sum() / T.sum()
    z = N - gamma * T
    X = np.column_stack([np.ones(n), C])
    coef, *_ = np.linalg.lstsq(X, z, rcond=None)
    residual = z - X @ coef
    s2 = residual @ residual / (n - q - 1)
    cbar = C.mean(0)
    centred = C - cbar
    var = s2 * (1 / n + cbar @ np.linalg.solve(centred.T @ centred, cbar))
    estimate = gamma - coef[1:] @ cbar / T.mean()
    half = sps.t.ppf(0.5 + confidence / 2, n - q - 1) * np.sqrt(var) / T.mean()
    return estimate, estimate - half, estimate + half


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="results/high_load_runs")
    p.add_argument("--policies", default="bmf,drfq")
    p.add_argument("--modes", default="single,reps")
    p.add_argument("--load", type=float, default=0.9)
    p.add_argument("--mean-size", type=int, default=200)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--groups", default="20,10,6")
    args = p.parse_args()
    sc = load_scenario("fig3_packet").with_overrides(mean_size=args.mean_size, window=30,
                                                     warmup="auto")
    A = np.asarray(sc.requirements, dtype=np.float64)
    rho_j = sc.class_loads(args.load) @ A
    busiest = int(np.argmax(rho_j))
    cut = start_up_flows(sc, args.load)
    tag = f"m{args.mean_size}-w30-empty"
    for policy in args.policies.split(","):
        truth = reference(args.out, policy, args.load, tag + "-f2000000-b500-d20000")
        for mode in args.modes.split(","):
            if mode == "single":
                groups = [[f"{args.out}/single-{policy}-{args.load:g}-{tag}-f20000-{i}.npz"]
                          for i in range(args.runs)]
            else:
                groups = [[f"{args.out}/reps-{policy}-{args.load:g}-{tag}-f2000-"
                           f"{r * 10 + j}.npz" for j in range(10)] for r in range(args.runs)]
            methods: dict[str, list] = {}
            for paths in groups:
                runs = [np.load(path) for path in paths]
                tables = [replication_table(z["arrival"], z["arrival"] + z["sojourn"],
                                            z["flow_class"], z["size"].astype(np.float64),
                                            sc.class_names, sc.class_loads(args.load),
                                            sc.packet.mean_size, "auto", sc.packet.batches)
                          for z in runs]
                out = combine_replications(tables, sc.packet.mean_size, warmup_flows=cut)
                methods.setdefault("package", []).append(
                    out[["gamma", "ci_low", "ci_high"]].to_numpy())
                drop = int(out["relaxation_batches"].iloc[0])
                per_group: dict[str, list] = {}
                for k in range(len(sc.class_names)):
                    N, T, C = [], [], []
                    for z, table in zip(runs, tables, strict=True):
                        arrival, size, cls = z["arrival"], z["size"].astype(float), \
                            z["flow_class"]
                        first = int(table["warmup_cut"].iloc[0])
                        mine = np.flatnonzero(cls == k)
                        mine = mine[mine >= first]
                        if mode == "single":
                            units = np.array_split(mine, sc.packet.batches)[drop:]
                        else:
                            units = [mine[mine >= max(cut, first)]]
                        for unit in units:
                            lo, hi = arrival[unit[0]], arrival[unit[-1]]
                            i0, i1 = np.searchsorted(arrival, [lo, hi], side="right")
                            work = size[i0:i1] @ A[cls[i0:i1], busiest]
                            N.append(size[unit].sum())
                            T.append(z["sojourn"][unit].sum())
                            C.append(work - rho_j[busiest] * (hi - lo))
                    N, T, C = np.array(N), np.array(T), np.array(C)[:, None]
                    sizes = [int(g) for g in args.groups.split(",")] if mode == "single" \
                        else [N.size]
                    for g in sizes:
                        parts = np.array_split(np.arange(N.size), min(g, N.size))
                        merged = [np.array([a[i].sum(0) for i in parts]) for a in (N, T, C)]
                        per_group.setdefault(f"cv, {len(parts)} units", []).append(
                            cv_interval(*merged))
                for name, rows in per_group.items():
                    methods.setdefault(name, []).append(np.array(rows))
            for name, rows in methods.items():
                r = np.array(rows)
                covered = ((r[:, :, 1] <= truth) & (truth <= r[:, :, 2])).mean(0) * 100
                bias = (np.nanmean(r[:, :, 0], 0) / truth - 1) * 100
                width = np.nanmean((r[:, :, 2] - r[:, :, 1]) / 2 / truth, 0) * 100
                above = (r[:, :, 1] > truth).sum(0)
                print(f"| {policy} | {mode} | {name} | "
                      + " / ".join(f"{c:.1f}%" for c in covered) + " | "
                      + " / ".join(f"{b:+.2f}%" for b in bias) + " | "
                      + " / ".join(f"{w:.1f}%" for w in width) + " | "
                      + " / ".join(str(a) for a in above) + " |")


if __name__ == "__main__":
    main()
