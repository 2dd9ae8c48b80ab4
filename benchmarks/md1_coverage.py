"""Coverage of the per-packet sojourn intervals on M/D/1 (issue 15's mean, issue 25's
percentiles, flow completion time, utilisation and Jain's index).

FIFO, one resource, one-packet flows (service 1): the mean sojourn is
1 + ρ / (2(1 − ρ)) (Pollaczek–Khinchine) and its p-quantile 1 + the M/D/1 waiting-time
quantile (Erlang's formula, :func:`mrfq.queueing.md1_sojourn_quantile`). For each load,
``--seeds`` independent points of ``--replications`` replications × ``--flows`` flows
(5% warm-up): with ≥ 10 replications the intervals are over replications, with fewer over
batches (``--replications 1 --flows 400000``: one long run). Prints, per statistic, how
many 95% intervals contain the exact value (flagged intervals count as misses, and how
many were flagged), the mean relative half-width and the mean relative error of the
estimate.

``--no-rounding``: the percentile intervals as sectioning gives them, without rounding
their bounds out to the histogram's bin edges (a diagnostic: how much of the coverage the
bins' resolution provides).

Usage: python benchmarks/md1_coverage.py [--seeds 20] [--flows 40000] [--loads 0.5,0.9]
           [--replications 10] [--no-rounding] [--first-seed 1]
"""

import argparse

import numpy as np

from mrfq.queueing import md1_sojourn_quantile, md1_waiting_cdf
from mrfq.scenario import scenario_from_dict
from mrfq.simulation import simulate

STATISTICS = (("mean", "mean_packet_sojourn", "packet_sojourn"),
              ("p50", "p50_sojourn", "p50_sojourn"),
              ("p95", "p95_sojourn", "p95_sojourn"),
              ("p99", "p99_sojourn", "p99_sojourn"),
              ("fct", "mean_fct", "mean_fct"),
              ("util", "utilisation_link", "utilisation_link"),
              ("jain", "jain_index", "jain_index"))


def _inverse_moment(rho: float, power: int) -> float:
    """E[T^−power] of the M/D/1 sojourn T = 1 + W: 1 − ∫ power (1 − F(w)) / (1 + w)^(power+1)
    dw (integration by parts), by 8-point Gauss–Legendre on each unit interval."""
    nodes, weights = np.polynomial.legendre.leggauss(8)
    total, n = 0.0, 0
    while True:
        w = n + (nodes + 1) / 2
        tail = np.array([1.0 - md1_waiting_cdf(x, rho) for x in w])
        total += 0.5 * float(weights @ (power * tail / (1 + w) ** (power + 1)))
        n += 1
        if tail[-1] < 1e-14:
            return 1.0 - total


def exact_values(rho: float) -> dict[str, float]:
    """The exact mean and percentiles of the M/D/1 sojourn time (service 1); the flow
    completion time (one-packet flows: the same mean), the utilisation ρ, and Jain's index
    (E x)² / E x² of the flows' rates x = 1/T."""
    return {"mean": 1.0 + rho / (2.0 * (1.0 - rho)),
            "p50": md1_sojourn_quantile(0.50, rho),
            "p95": md1_sojourn_quantile(0.95, rho),
            "p99": md1_sojourn_quantile(0.99, rho),
            "fct": 1.0 + rho / (2.0 * (1.0 - rho)),
            "util": rho,
            "jain": _inverse_moment(rho, 1) ** 2 / _inverse_moment(rho, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--flows", type=int, default=40_000)
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--loads", default="0.5,0.9")
    parser.add_argument("--no-rounding", action="store_true")
    args = parser.parse_args()
    if args.no_rounding:
        # the diagnostic replaces the rounding where the columns are built
        from mrfq.stats import metric_columns
        metric_columns.round_outward = lambda ci, edges: ci
    scenario = scenario_from_dict({
        "name": "md1", "resources": ["link"],
        "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
        "load": {"axis": "link", "values": [0.5]},
        "packet": {"policies": ["fifo"], "mean_size": 1, "window": 1, "flows": args.flows,
                   "replications": args.replications, "warmup": 0.05}})
    print(f"{args.replications} replication(s) x {args.flows} flows, {args.seeds} seeds"
          + (", percentile bounds not rounded to bin edges" if args.no_rounding else ""))
    for rho in (float(x) for x in args.loads.split(",")):
        exact = exact_values(rho)
        inside = dict.fromkeys(exact, 0)
        flagged = dict.fromkeys(exact, 0)
        halves = {k: [] for k in exact}
        errors = {k: [] for k in exact}
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            row = simulate(scenario, "fifo", rho, seed=seed).classes.iloc[0]
            for key, point, stem in STATISTICS:
                low, high = row[f"{stem}_low"], row[f"{stem}_high"]
                if not (np.isfinite(low) and np.isfinite(high)):
                    flagged[key] += 1
                    continue
                inside[key] += bool(low <= exact[key] <= high)
                halves[key].append((high - low) / 2 / exact[key])
                errors[key].append(row[point] / exact[key] - 1.0)
        for key, _, _ in STATISTICS:
            print(f"load {rho} {key}: exact {exact[key]:.4f}, inside the 95% interval "
                  f"{inside[key]}/{args.seeds} ({flagged[key]} flagged), mean half-width "
                  f"{np.mean(halves[key]):.2%}, mean error {np.mean(errors[key]):+.2%}")


if __name__ == "__main__":
    main()
