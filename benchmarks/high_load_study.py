"""Offline comparison of interval methods for γ on the raw runs of high_load_runs.py
(issue 25): plain batch means with 20 / 10 / 5 batches, Tin's bias correction, a
Willink-skewness or jackknife interval, lugsail batch means, fixed start-up drops, and
for 10 × 2 000 replications the ensemble MSER-5 cut and a bootstrap-t interval. The
methods are written out here (numpy) to compare them on the same runs; the one chosen is
the package's (measured with high_load_coverage.py).

    python benchmarks/high_load_study.py --drops 0,0.02,0.05 --rep-drops 0,200,500,1000
    python benchmarks/high_load_study.py --old-ref --policies bmf   # the issue-13 reference
"""

from __future__ import annotations

import argparse
import glob

import numpy as np
from scipy import stats as sps

K = 3


def load_flows(path):
    z = np.load(path)
    return z["arrival"], z["sojourn"], z["size"].astype(np.float64), z["flow_class"]


def reference(out, policy, load, tag):
    files = sorted(glob.glob(f"{out}/reference-{policy}-{load:g}-{tag}-*.npz"))
    per = []
    for f in files:
        z = np.load(f)
        per.append((z["size_sum"].sum(axis=0), z["sojourn_sum"].sum(axis=0)))
    n = np.array([p[0] for p in per])
    t = np.array([p[1] for p in per])
    g = n.sum(0) / t.sum(0)
    r = len(per)
    d = n - g * t
    se = np.sqrt(d.var(axis=0, ddof=1) / r) / t.mean(0)
    return g, sps.t.ppf(0.975, r - 1) * se, r


def class_blocks(arrival, sojourn, size, cls, blocks, drop=0):
    """Per class: Σ N and Σ T over `blocks` consecutive arrival-index blocks (after drop)."""
    n = arrival.size
    idx = np.arange(drop, n)
    b = ((idx - drop) * blocks) // (n - drop)
    N = np.zeros((blocks, K))
    T = np.zeros((blocks, K))
    for k in range(K):
        m = cls[drop:] == k
        N[:, k] = np.bincount(b[m], size[drop:][m], blocks)
        T[:, k] = np.bincount(b[m], sojourn[drop:][m], blocks)
    return N, T


def merge(a, groups):
    return a.reshape(groups, -1, *a.shape[1:]).sum(axis=1)


def t_ratio(N, T, conf=0.95):
    """Delta-method t interval of ΣN/ΣT over independent-ish units (rows)."""
    B = N.shape[0]
    g = N.sum(0) / T.sum(0)
    d = N - g * T
    se = np.sqrt(d.var(axis=0, ddof=1) / B) / T.mean(0)
    h = sps.t.ppf(0.5 + conf / 2, B - 1) * se
    return g, g - h, g + h, se


def tin(N, T):
    """Tin's bias-corrected ratio Σ N / Σ T (1 + (s_NT/(N̄T̄) − s_T²/T̄²)/B)."""
    B = N.shape[0]
    g = N.sum(0) / T.sum(0)
    nb, tb = N.mean(0), T.mean(0)
    sNT = ((N - nb) * (T - tb)).sum(0) / (B - 1)
    sTT = ((T - tb) ** 2).sum(0) / (B - 1)
    return g * (1 + (sNT / (nb * tb) - sTT / tb**2) / B)


def tin_ci(N, T, conf=0.95):
    g, lo, hi, se = t_ratio(N, T, conf)
    c = tin(N, T)
    return c, lo + c - g, hi + c - g, se


def lugsail_ci(N2, T2, conf=0.95):
    """Lugsail batch means (r = 2, c = 1/2): 2·Var(B batches) − Var(2B half batches),
    from 2B half-batches; t with B − 1 degrees of freedom (conservative)."""
    B2 = N2.shape[0]
    B = B2 // 2
    N, T = merge(N2, B), merge(T2, B)
    g = N.sum(0) / T.sum(0)
    d = N - g * T
    d2 = N2 - g * T2
    v_big = B * d.var(axis=0, ddof=1)  # Var(Σ d) from B batches
    v_half = B2 * d2.var(axis=0, ddof=1)  # from 2B half batches
    v = np.maximum(2 * v_big - v_half, v_big)
    se = np.sqrt(v) / T.sum(0)
    h = sps.t.ppf(0.5 + conf / 2, B - 1) * se
    c = tin(N, T)
    return c, c - h, c + h, se


def skew_ci(N, T, conf=0.95):
    """Willink / N-Skart skewness-adjusted t interval on the linearised residuals."""
    B = N.shape[0]
    g = N.sum(0) / T.sum(0)
    d = (N - g * T) / T.mean(0)  # influence of each batch on γ̂ (mean ≈ 0)
    s = d.std(axis=0, ddof=1)
    se = s / np.sqrt(B)
    skew = ((d - d.mean(0)) ** 3).mean(0) / s**3 * B * B / ((B - 1) * (B - 2)) if B > 2 else 0 * s
    a = skew / (6 * np.sqrt(B))
    c = tin(N, T)

    def G(z):
        a_ = np.where(np.abs(a) < 1e-9, 1e-9, a)
        return (np.cbrt(1 + 6 * a_ * (z - a_)) - 1) / (2 * a_)

    tq = sps.t.ppf(0.5 + conf / 2, B - 1)
    lo = c - G(tq) * se
    hi = c - G(-tq) * se
    return c, lo, hi, se


def boot_t(N, T, conf=0.95, draws=999, i_seed=0):
    """Bootstrap-t interval of ΣN/ΣT over independent units (Efron & Tibshirani ch. 12),
    centred on Tin's estimate."""
    rng = np.random.default_rng(i_seed)
    B = N.shape[0]
    g, _, _, se = t_ratio(N, T, conf)
    idx = rng.integers(0, B, (draws, B))
    Nb, Tb = N[idx], T[idx]  # draws × B × K
    gb = Nb.sum(1) / Tb.sum(1)
    d = Nb - gb[:, None, :] * Tb
    seb = np.sqrt(d.var(axis=1, ddof=1) / B) / Tb.mean(1)
    tstar = (gb - g) / np.where(seb > 0, seb, np.inf)
    q_lo = np.quantile(tstar, 0.5 - conf / 2, axis=0)
    q_hi = np.quantile(tstar, 0.5 + conf / 2, axis=0)
    c = tin(N, T)
    return c, c - q_hi * se, c - q_lo * se, se


def jack_ci(N, T, conf=0.95):
    """Tin-centred interval with the jackknife variance of the ratio."""
    B = N.shape[0]
    g = N.sum(0) / T.sum(0)
    loo = (N.sum(0) - N) / (T.sum(0) - T)
    v = (B - 1) / B * ((loo - loo.mean(0)) ** 2).sum(0)
    se = np.sqrt(v)
    c = B * g - (B - 1) * loo.mean(0)  # jackknife bias-corrected
    h = sps.t.ppf(0.5 + conf / 2, B - 1) * se
    return c, c - h, c + h, se


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="results/high_load_runs")
    p.add_argument("--policies", default="bmf,drfq")
    p.add_argument("--loads", default="0.5,0.9")
    p.add_argument("--tag", default="m200-w30-empty")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--old-ref", action="store_true")
    p.add_argument("--drops", default="0")
    p.add_argument("--rep-drops", default="0,200,500,1000")
    p.add_argument("--no-single", action="store_true")
    p.add_argument("--no-reps", action="store_true")
    args = p.parse_args()
    args.drops = [] if args.no_single else [float(x) for x in args.drops.split(",")]
    args.rep_drops = [int(x) for x in args.rep_drops.split(",")]
    args.ref_values = (
        {("bmf", 0.9): [0.1004, 0.5082, 0.0998], ("bmf", 0.5): [0.4984, 0.7555, 0.4803]}
        if args.old_ref
        else None
    )
    for policy in args.policies.split(","):
        for load in (float(x) for x in args.loads.split(",")):
            if args.ref_values:
                ref = np.array(args.ref_values[(policy, load)])
                ref_h = ref * 0
                r = 0
            else:
                ref, ref_h, r = reference(
                    args.out, policy, load, f"{args.tag}-f2000000-b500-d20000"
                )
            print(f"\n== {policy} {load}: reference {np.round(ref, 4)} "
                  f"± {np.round(ref_h / ref * 100, 2)}% ({r} runs)")
            single = [
                load_flows(f"{args.out}/single-{policy}-{load:g}-{args.tag}-f20000-{i}.npz")
                for i in range(args.runs)
            ]

            def show(name, res, ref=ref):
                g = np.array([x[0] for x in res])
                lo = np.array([x[1] for x in res])
                hi = np.array([x[2] for x in res])
                cov = ((lo <= ref) & (ref <= hi)).mean(0)
                above = (lo > ref).mean(0)
                bias = g.mean(0) / ref - 1
                sd = g.std(0, ddof=1) / ref
                hw = ((hi - lo) / 2 / g).mean(0)
                print(f"{name:14s} cov {np.round(cov * 100, 1)} above "
                      f"{np.round(above * 100, 1)} bias {np.round(bias * 100, 2)} "
                      f"sd {np.round(sd * 100, 1)} hw {np.round(hw * 100, 1)}")

            for drop in args.drops:
                blocks = [class_blocks(*s, 400, int(drop * s[0].size)) for s in single]
                for B in (20, 10, 5):
                    show(f"d{drop:g} bm{B}", [t_ratio(merge(N, B), merge(T, B)) for N, T in blocks])
                    show(
                        f"d{drop:g} bm{B}tin", [tin_ci(merge(N, B), merge(T, B)) for N, T in blocks]
                    )
                    show(
                        f"d{drop:g} bm{B}jk", [jack_ci(merge(N, B), merge(T, B)) for N, T in blocks]
                    )
                    show(
                        f"d{drop:g} lug{B}",
                        [lugsail_ci(merge(N, 2 * B), merge(T, 2 * B)) for N, T in blocks],
                    )
            if args.no_reps:
                continue
            reps = []
            for i in range(args.runs):
                rr = [
                    load_flows(
                        f"{args.out}/reps-{policy}-{load:g}-{args.tag}-f2000-{10 * i + j}.npz"
                    )
                    for j in range(10)
                ]
                reps.append(rr)

            def ensemble_cut(rr, direction):
                from mrfq.stats.estimators import mser_truncation

                acc = np.zeros(rr[0][0].size)
                for _, t, _, c in rr:
                    sc = np.empty_like(t)
                    for k in range(K):
                        m = c == k
                        sc[m] = t[m] / t[m].mean()
                    acc += sc
                return mser_truncation(acc / len(rr), direction=direction).discard

            cuts = {}
            for direction in ("low", "both"):
                cuts[direction] = [ensemble_cut(rr, direction) for rr in reps]
                print(f"ensemble MSER-5 ({direction}) cut: mean "
                      f"{np.mean(cuts[direction]):.0f} flows, median "
                      f"{np.median(cuts[direction]):.0f}, max {np.max(cuts[direction])}")
            variants = [(f"drop{d}", [d] * len(reps)) for d in args.rep_drops]
            variants += [(f"ens-{k}", v) for k, v in cuts.items()]
            for name, drops in variants:
                res, rest, skew, boot = [], [], [], []
                for rr, d in zip(reps, drops, strict=True):
                    sums = [class_blocks(*f, 1, int(d)) for f in rr]
                    N = np.array([s[0][0] for s in sums])
                    T = np.array([s[1][0] for s in sums])
                    res.append(t_ratio(N, T))
                    rest.append(tin_ci(N, T))
                    skew.append(jack_ci(N, T))
                    boot.append(boot_t(N, T, i_seed=len(boot)))
                show(f"reps {name}", res)
                show(f"reps {name} tin", rest)
                show(f"reps {name} jack", skew)
                show(f"reps {name} boot-t", boot)


if __name__ == "__main__":
    main()
