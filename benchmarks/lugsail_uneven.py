"""Lugsail batch means over a number of stored batch sums that ten does not divide.

A run stores 20 equal batch sums; the relaxation cut (``warmup = "auto"``) leaves out an
even number of leading batches, so :func:`mrfq.intervals.lugsail_units` often regroups
18, 16, 14 or 12 sums into its 10 half-batches, some of 2 sums and some of 1, and pairs
them into 5 batches. This measures what that unevenness costs. On stationary AR(1)
series of known variance (φ, unit innovations; Var of the mean in closed form), batches
of ``--batch`` values, ``--series`` series per seed, it averages three estimates of
Var(mean), each over 5 lugsail batches (2 σ²_BM(b) − σ²_BM(b/2), Vats & Flegal 2022):

* ``production``: ``lugsail_units`` on the stored sums (halves first, then pairs);
* ``batches-first``: the sums split into 5 near-equal batches first, each into 2 halves
  (an alternative regrouping, not used);
* ``even``: 10 halves of equal length cut from the raw series, which stored sums cannot
  give (the yardstick).

Prints each as a fraction of the exact variance and the spread of the per-series ratio.

Usage: python benchmarks/lugsail_uneven.py [--phi 0.99] [--batch 100] [--series 1500]
       [--seeds 1,2] [--sums 20,18,16,14,12]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.signal import lfilter

from mrfq.intervals import lugsail_scale, lugsail_units


def ar1(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """Stationary AR(1), unit innovations, mean 0 (started from its stationary law)."""
    e = rng.standard_normal(n)
    e[0] /= np.sqrt(1 - phi ** 2)
    return lfilter([1.0], [1.0, -phi], e)


def exact_variance_of_mean(n: int, phi: float) -> float:
    lags = np.arange(1, n)
    return float((1 + 2 * np.sum((1 - lags / n) * phi ** lags)) / (1 - phi ** 2) / n)


def five_batch_variance(y5: np.ndarray, c5: np.ndarray, n: int) -> float:
    """Var(mean) from 5 batch sums y5 of c5 values each (ratio residuals)."""
    e = y5 - (y5.sum() / n) * c5
    return float(e @ e) * 5 / 4 / n ** 2


def lugsail_of_halves(hy: np.ndarray, hc: np.ndarray, n: int) -> float:
    y5, c5 = hy.reshape(5, 2).sum(1), hc.reshape(5, 2).sum(1)
    return five_batch_variance(y5, c5, n) * lugsail_scale(y5, c5, hy, hc)


def batches_first(y: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hy, hc = [], []
    for py, pc in zip(np.array_split(y, 5), np.array_split(c, 5), strict=True):
        for qy, qc in zip(np.array_split(py, 2), np.array_split(pc, 2), strict=True):
            hy.append(qy.sum())
            hc.append(qc.sum())
    return np.array(hy), np.array(hc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phi", type=float, default=0.99)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--series", type=int, default=1500)
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--sums", default="20,18,16,14,12")
    args = parser.parse_args()
    print(f"AR(1) phi={args.phi}, batches of {args.batch} values, "
          f"{args.series} series x seeds {args.seeds}; Var(mean) / exact: mean (sd)")
    for sums in (int(s) for s in args.sums.split(",")):
        n = sums * args.batch
        exact = exact_variance_of_mean(n, args.phi)
        out: dict[str, list[float]] = {"production": [], "batches-first": [], "even": []}
        for seed in (int(s) for s in args.seeds.split(",")):
            rng = np.random.default_rng(seed)
            for _ in range(args.series):
                x = ar1(rng, n, args.phi)
                y, c = x.reshape(sums, args.batch).sum(1), np.full(sums, float(args.batch))
                y5, c5, scale = lugsail_units([y], [c])
                out["production"].append(five_batch_variance(y5, c5, n) * scale)
                out["batches-first"].append(lugsail_of_halves(*batches_first(y, c), n))
                parts = np.array_split(x, 10)
                out["even"].append(lugsail_of_halves(
                    np.array([p.sum() for p in parts]),
                    np.array([p.size for p in parts], dtype=float), n))
        cells = "  ".join(f"{k} {np.mean(v) / exact:.3f} ({np.std(v) / exact:.2f})"
                          for k, v in out.items())
        print(f"{sums:3d} sums: {cells}")


if __name__ == "__main__":
    main()
