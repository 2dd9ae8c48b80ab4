"""Coverage of the nominal 95% intervals of γ under heavy-tailed flow sizes (issue 25):
one resource, one class, so that fair sharing is processor sharing, which is insensitive
(M/G/1-PS: E[T | size x] = x / (1 − ρ), so γ = E[S] / E[T] = 1 − ρ in work units per
time unit for every size law with a mean).

* ``--sim flow``: the flow-level simulator (:func:`mrfq.fluid.flowsim.flow_service_rates`,
  policy drf, which with one class is processor sharing; 5% warm-up as a fluid point),
  against the exact 1 − ρ.
* ``--sim packet``: the packet engine with DRFQ (fair queueing: with one class and one
  resource, packet-level processor sharing), through the sweep's own point function and
  combiner (:func:`mrfq.kinds.packet.packet_point`,
  :func:`mrfq.kinds.packet.combine_packet_records`), so what is measured is what a sweep
  reports; the reference is 1 − ρ up to packet effects, which ``--mode reference``
  measures with exponential sizes (long replications, t interval over them).

Modes: ``batch`` (one run of ``--flows`` flows, batch means), ``replications``
(``--replications`` runs of ``--flows`` / ``--replications`` flows each, t interval over
replications), ``reference`` (``--replications`` runs of ``--flows`` flows; prints the
pooled γ and its interval). Seeds ``--first-seed`` (1 000) + i for run i of a case
(independent runs).

One line per (law, load): runs, how many intervals contain the reference (withheld
intervals, NaN or a ``ci_problem``, count as misses and are counted), the coverage's
Clopper–Pearson 95% interval, the mean relative bias of γ with its 95% interval, and the
mean relative half-width. Run with ``nice``::

    nice -n 10 python benchmarks/heavy_tail_coverage.py --sim flow --mode batch \\
        --flows 20000 --seeds 400
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats as sps

from mrfq.fluid.flowsim import flow_service_rates
from mrfq.kinds.packet import combine_packet_records, packet_point
from mrfq.scenario import scenario_from_dict

LAWS = {"exponential": None,
        "pareto-3.5": {"distribution": "pareto", "shape": 3.5},
        "pareto-2.5": {"distribution": "pareto", "shape": 2.5},
        "pareto-2.2": {"distribution": "pareto", "shape": 2.2},
        "pareto-1.8": {"distribution": "pareto", "shape": 1.8}}
SEED = 1000


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a proportion k / n."""
    a = (1 - confidence) / 2
    low = 0.0 if k == 0 else float(sps.beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(sps.beta.ppf(1 - a, k + 1, n - k))
    return low, high


def packet_scenario(law, args, flows: int, seed: int):
    """One resource, one class with size law ``law`` (``--mixed``: and a first,
    exponential class with half the load), DRFQ, m = ``--mean-size``."""
    cls = {"name": "law", "requirements": [1.0], "load_share": 1}
    if law is not None:
        cls["size"] = law
    classes = ([{"name": "exp", "requirements": [1.0], "load_share": 1}] if args.mixed
               else []) + [cls]
    return scenario_from_dict({
        "resources": ["link"], "classes": classes, "load": {"values": [0.5]},
        "packet": {"policies": ["drfq"], "mean_size": args.mean_size, "window": args.window,
                   "flows": flows, "replications": 1, "seed": seed,
                   "warmup": args.warmup}})


def packet_estimate(law, load: float, args, seed: int, replications: int, flows: int
                    ) -> np.ndarray:
    """[γ, ci_low, ci_high] × class of one packet point (NaN bounds: withheld)."""
    scenario = packet_scenario(law, args, flows, seed)
    records = [packet_point(scenario, "drfq", load, r) for r in range(replications)]
    table = combine_packet_records(scenario, records)
    return table[["gamma", "ci_low", "ci_high"]].to_numpy(dtype=np.float64).T


def flow_estimate(law, load: float, args, seed: int, replications: int, flows: int
                  ) -> np.ndarray:
    """[γ, ci_low, ci_high] × class of one flow-level point (ratio estimator)."""
    k = 2 if args.mixed else 1
    laws = [None, law] if args.mixed else law
    r = flow_service_rates(np.ones((k, 1)), np.full(k, load / k), "drf", laws, flows=flows,
                           replications=replications, seed=seed, confidence=0.95)
    return np.array([r.ratio, r.ratio_low, r.ratio_high], dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", choices=("flow", "packet"), default="flow")
    parser.add_argument("--mode", choices=("batch", "replications", "reference"),
                        default="batch")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=SEED,
                        help="seed of the first run (run i: first + i)")
    parser.add_argument("--loads", default="0.5,0.9")
    parser.add_argument("--laws", default="exponential,pareto-2.5,pareto-1.8")
    parser.add_argument("--flows", type=int, default=20000,
                        help="flows per point (replications: split over them)")
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--mean-size", type=float, default=200.0)
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--warmup", default="auto", help="packet warm-up ('auto' or a fraction)")
    parser.add_argument("--mixed", action="store_true", help="an exponential class with "
                        "half the load beside the law's (both reported: PS gives both "
                        "1 - rho)")
    args = parser.parse_args()
    if args.warmup != "auto":
        args.warmup = float(args.warmup)
    estimate = packet_estimate if args.sim == "packet" else flow_estimate
    if args.mode == "batch":
        replications, flows, seeds = 1, args.flows, args.seeds
    elif args.mode == "replications":
        replications, flows, seeds = args.replications, args.flows // args.replications, args.seeds
    else:
        replications, flows, seeds = args.replications, args.flows, 1
    print(f"# {args.sim} {args.mode}: {replications} x {flows} flows, {seeds} seeds"
          + (f", m = {args.mean_size:g}, W = {args.window}, warm-up {args.warmup}"
             if args.sim == "packet" else ", warm-up 5%"), flush=True)
    for name in args.laws.split(","):
        law = LAWS[name]
        for load in (float(v) for v in args.loads.split(",")):
            exact = 1.0 - load
            runs = np.array([estimate(law, load, args, args.first_seed + i, replications,
                                      flows)
                             for i in range(seeds)])  # run × (γ, low, high) × class
            for k in range(runs.shape[2]):
                label = f"{'exp beside ' if args.mixed and k == 0 else ''}{name}"
                report(label, load, exact, runs[:, :, k], args.mode)


def report(name: str, load: float, exact: float, values: np.ndarray, mode: str) -> None:
    """One line: coverage, withheld, bias, half-width of runs × (γ, low, high)."""
    seeds = values.shape[0]
    if mode == "reference":
        g, low, high = values[0]
        print(f"{name:12s} load {load:.2f}: gamma {g:.5f} [{low:.5f}, {high:.5f}]; "
              f"1 - rho = {exact:.5f}; relative {g / exact - 1:+.3%} "
              f"[{low / exact - 1:+.3%}, {high / exact - 1:+.3%}]", flush=True)
        return
    gamma, low, high = values.T
    finite = np.isfinite(low) & np.isfinite(high)
    inside = int(np.sum(finite & (low <= exact) & (exact <= high)))
    cp = clopper_pearson(inside, seeds)
    bias = gamma / exact - 1
    se = float(np.std(bias, ddof=1) / math.sqrt(seeds))
    half = np.where(finite, (high - low) / 2 / gamma, np.nan)
    print(f"{name:12s} load {load:.2f}: {inside}/{seeds} inside = "
          f"{inside / seeds:.1%} [CP {cp[0]:.1%}, {cp[1]:.1%}], "
          f"{seeds - int(finite.sum())} withheld; mean bias {np.mean(bias):+.2%} "
          f"(± {1.96 * se:.2%}); median bias {np.median(bias):+.2%}; "
          f"mean half-width {np.nanmean(half):.1%}", flush=True)


if __name__ == "__main__":
    main()
