"""Coverage of a packet point's utilisation and Jain's-index intervals at one load
(VALIDATION.md, "Utilisation and Jain's index intervals at load 0.9").

* Utilisation: the busy fraction of resource j in steady state is its offered load
  Σ_k ρ_k a_kj exactly (every resource is work-conserving and the system is stable).
* Jain's index (per class, and ``jain_overall``): no closed form; the reference is one
  point of 10 replications of ``--reference-flows`` flows (seed 777), pooled, whose own
  interval is printed beside it.

Usage: python benchmarks/metric_coverage.py [--load 0.9] [--seeds 400] [--mean-size 50]
       [--flows 4000] [--reference-flows 200000] [--policy bmf] [--scenario fig3_quick]
       [--lugsail-batches 5]

Runs ``mrfq.simulate`` (one replication: intervals over the run's batches) for seeds
1…N and prints, per statistic: the truth or reference, the fraction of runs with an
interval (``given``), its coverage among them with the Clopper–Pearson 95% interval,
the misses below and above, the estimates' mean minus the reference (bias), their
standard deviation and the mean half-width.
"""

from __future__ import annotations

import argparse

import numpy as np
from interval_coverage import proportion_interval  # (Clopper–Pearson)

import mrfq
from mrfq.scenario import load_scenario
from mrfq.stats import estimators, metric_intervals


def statistics(resources, classes) -> dict[str, tuple[str, int]]:
    """Statistic label → (column stem, row of the classes table it is read from)."""
    found = {f"utilisation {r}": (f"utilisation_{r}", 0) for r in resources}
    found["jain_overall"] = ("jain_overall", 0)
    found |= {f"jain_index {name}": ("jain_index", k) for k, name in enumerate(classes)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--seeds", type=int, default=400)
    parser.add_argument("--mean-size", type=float, default=50)
    parser.add_argument("--flows", type=int, default=4000)
    parser.add_argument("--reference-flows", type=int, default=200_000)
    parser.add_argument("--policy", default="bmf")
    parser.add_argument("--scenario", default="fig3_quick")
    parser.add_argument("--lugsail-batches", type=int, default=estimators.LUGSAIL_BATCHES,
                        help="batches of the lugsail intervals (an experiment: the "
                             "package's constant, changed in this process only)")
    args = parser.parse_args()
    estimators.LUGSAIL_BATCHES = metric_intervals.LUGSAIL_BATCHES = args.lugsail_batches
    scenario = load_scenario(args.scenario)
    wanted = statistics(scenario.resources, scenario.class_names)
    reference = mrfq.simulate(scenario, args.policy, args.load, seed=777,
                              flows=args.reference_flows, mean_size=args.mean_size,
                              replications=10).classes
    truth = dict(zip((f"utilisation {r}" for r in scenario.resources),
                     scenario.class_loads(args.load) @ np.asarray(scenario.requirements),
                     strict=True))
    exact = set(truth)
    for label, (stem, row) in wanted.items():
        if label not in truth:
            truth[label] = float(reference[stem].iloc[row])
    found = {label: [] for label in wanted}
    for seed in range(1, args.seeds + 1):
        table = mrfq.simulate(scenario, args.policy, args.load, seed=seed, flows=args.flows,
                              mean_size=args.mean_size).classes
        for label, (stem, row) in wanted.items():
            found[label].append([table[f"{stem}{s}"].iloc[row] for s in ("", "_low", "_high")])
    print(f"{args.scenario}, {args.policy}, load {args.load}, m = {args.mean_size:g}, "
          f"{args.flows} flows, {args.seeds} seeds")
    for label, (stem, row) in wanted.items():
        t = truth[label]
        a = np.array(found[label])
        given = np.isfinite(a[:, 1]) & np.isfinite(a[:, 2])
        g = a[given]
        hits = int(np.sum((g[:, 1] <= t) & (t <= g[:, 2])))
        low, high = proportion_interval(hits, len(g))
        source = "true" if label in exact else (
            f"reference [{reference[stem + '_low'].iloc[row]:.4f}, "
            f"{reference[stem + '_high'].iloc[row]:.4f}]")
        print(f"{label}: {source} {t:.4f}; given {given.mean():.3f}; coverage "
              f"{hits / len(g):.3f} [{low:.3f}, {high:.3f}]; below {np.mean(g[:, 2] < t):.3f},"
              f" above {np.mean(g[:, 1] > t):.3f}; bias {a[:, 0].mean() - t:+.4f}; sd "
              f"{a[:, 0].std(ddof=1):.4f}; mean half-width {np.mean(g[:, 2] - g[:, 1]) / 2:.4f}")


if __name__ == "__main__":
    main()
