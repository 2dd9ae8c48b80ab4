"""Coverage campaign (issue 13): how often the nominal 95% intervals of mrfq's packet points
cover the true steady-state γ_k, and the mean relative bias of the estimate.

For the Figure 3 scenario (classes [0.1, 1], [1, 0.1], [1, 1], load shares 4:1:1, load on
the link) at each (policy, load), three kinds of independent runs, all through the
package's own point function and combiner (:func:`mrfq.kinds.packet.packet_point`,
:func:`mrfq.kinds.packet.combine_packet_records`), so what is measured is what a sweep reports:

* ``reference``: ``--reference-runs`` replications of ``--reference-factor`` × ``--flows``
  flows (seed 7); their pooled ratio estimate with its t interval over replications is
  the "true" γ_k, stated with its own CI;
* ``batch``: ``--runs`` single runs of ``--flows`` flows (seeds 1000 + i), the interval
  from correlation-checked batch means;
* ``replications``: ``--runs`` sets of ``--replications`` replications of
  ``--replication-flows`` flows (seeds 100 000 + i), the t interval over replications;
* ``precision`` (only when asked for in ``--modes``): ``--runs`` precision-targeted points
  (``--precision``, replications of ``--replication-flows`` flows, at least
  ``--replications``; seeds 200 000 + i), the sequential stopping rule of a sweep, on
  the interval a sweep reports (the fluid model's variance where the Markov model gives
  one, as since 2026-11-28; the tables in VALIDATION.md before that date used the runs'
  own intervals).

``--init fluid`` starts every run of the three modes (not the reference, which is shared)
with flows in progress drawn from the fluid stationary law (``[packet] init``); its
table then also gives, when the same items with ``--init empty`` are cached, the paired
change of the bias (same seeds, same arrival streams: common random numbers).

Per (mode, policy, load, class): coverage = fraction of runs whose interval contains the
reference γ_k (a flagged run, NaN interval, counts as a miss and is counted), with its
binomial 95% interval; relative bias = mean estimate / reference − 1 with a 95% interval
that includes the reference's own uncertainty. Every computed item is cached as one JSON
file under ``--cache`` (resumable). Run with ``nice``; the services estimate is printed
first.

    nice -n 10 python benchmarks/interval_coverage.py --runs 200 --jobs 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

from mrfq.executor import execute
from mrfq.kinds.packet import combine_packet_records, fluid_reference, packet_point, stopping
from mrfq.scenario import load_scenario

REFERENCE_SEED = 7
BATCH_SEED = 1000
REPLICATION_SEED = 100_000
PRECISION_SEED = 200_000
SERVICE_RATE = 4e7  # services per core-second, for the up-front estimate only


def scenario_for(settings: dict, mode: str, index: int):
    """The Figure 3 scenario with this mode's run length and seed."""
    flows = {"reference": settings["flows"] * settings["reference_factor"],
             "batch": settings["flows"],
             "replications": settings["replication_flows"],
             "precision": settings["replication_flows"]}[mode]
    seed = {"reference": REFERENCE_SEED, "batch": BATCH_SEED + index,
            "replications": REPLICATION_SEED + index,
            "precision": PRECISION_SEED + index}[mode]
    scenario = load_scenario("fig3_packet").with_overrides(
        flows=flows, mean_size=settings["mean_size"], window=settings["window"],
        warmup=settings["warmup"], seed=seed, replications=1)
    if mode != "reference" and settings.get("init", "empty") != "empty":
        scenario = scenario.with_overrides(init=settings["init"])
    if mode == "precision":
        scenario = scenario.with_overrides(precision=settings["precision"],
                                           replications=settings["replications"])
    return scenario


def compute(settings: dict, item: tuple) -> dict:
    """One replication: item = (mode, policy, load, run index, replication)."""
    mode, policy, load, index, replication = item
    scenario = scenario_for(settings, mode, index)
    if mode != "precision":
        return packet_point(scenario, policy, load, replication)
    records = []  # replications in order until the sweep's stopping rule ends the point
    while stopping(scenario, records, start=len(records)).replications is None:
        records.append(packet_point(scenario, policy, load, len(records)))
    return {"records": records}


def items_for(settings: dict) -> list[tuple]:
    out = []
    for policy in settings["policies"]:
        for load in settings["loads"]:
            out += [("reference", policy, load, 0, r) for r in range(settings["reference_runs"])]
            if "batch" in settings["modes"]:
                out += [("batch", policy, load, i, 0) for i in range(settings["runs"])]
            if "replications" in settings["modes"]:
                out += [("replications", policy, load, i, r) for i in range(settings["runs"])
                        for r in range(settings["replications"])]
            if "precision" in settings["modes"]:
                out += [("precision", policy, load, i, 0) for i in range(settings["runs"])]
    return out


def item_flows(settings: dict, item: tuple) -> int:
    return scenario_for(settings, item[0], item[3]).packet.flows


def cache_path(cache: Path, settings: dict, item: tuple) -> Path:
    from mrfq.packet.kernel import ENGINE_VERSION
    from mrfq.stats import STATS_VERSION

    # everything that determines the item's numbers (not the run counts)
    keyed = {k: settings[k] for k in ("mean_size", "window", "warmup")}
    if item[0] != "reference" and settings.get("init", "empty") != "empty":
        keyed["init"] = settings["init"]  # absent for an empty start: older caches hold
    if item[0] == "precision":
        keyed.update(precision=settings["precision"], first=settings["replications"])
    keyed.update(flows=item_flows(settings, item), engine=ENGINE_VERSION,
                 statistics=STATS_VERSION, item=list(item))
    digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:16]
    mode, policy, load, index, replication = item
    return cache / f"{mode}-{policy}-{load:g}-{index}-{replication}-{digest}.json"


def proportion_interval(hits: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson 95% interval of a proportion."""
    low = sps.beta.ppf(0.025, hits, n - hits + 1) if hits > 0 else 0.0
    high = sps.beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return float(low), float(high)


def _tables(settings: dict, records: dict[tuple, dict], mode: str, policy: str,
            load: float) -> list:
    """The combined per-class table of every run of one (mode, policy, load)."""
    reps = settings["replications"] if mode == "replications" else 1
    # a precision-targeted point reports (and stops on) what a sweep does: the interval on
    # the fluid model's variance where the Markov model gives one
    return [combine_packet_records(
        scenario_for(settings, mode, i),
        records[(mode, policy, load, i, 0)]["records"] if mode == "precision"
        else [records[(mode, policy, load, i, r)] for r in range(reps)],
        fluid_record=fluid_reference(scenario_for(settings, mode, i), policy, load)
        if mode == "precision" else None)
        for i in range(settings["runs"])]


def _empty_start_tables(settings: dict, cache: Path | None, mode: str, policy: str,
                        load: float) -> list | None:
    """The same runs with ``init = "empty"`` (same seeds), if all are cached."""
    if cache is None or settings.get("init", "empty") == "empty":
        return None
    empty = {**settings, "init": "empty"}
    items = [i for i in items_for(empty) if i[0] == mode and i[1] == policy and i[2] == load]
    paths = [cache_path(cache, empty, i) for i in items]
    if not all(p.exists() for p in paths):
        return None
    records = {i: json.loads(p.read_text()) for i, p in zip(items, paths, strict=True)}
    return _tables(empty, records, mode, policy, load)


def analyse(settings: dict, records: dict[tuple, dict], cache: Path | None = None
            ) -> list[dict]:
    rows = []
    for policy in settings["policies"]:
        for load in settings["loads"]:
            ref_records = [records[("reference", policy, load, 0, r)]
                           for r in range(settings["reference_runs"])]
            reference = combine_packet_records(scenario_for(settings, "reference", 0),
                                               ref_records)
            for mode in settings["modes"]:
                tables = _tables(settings, records, mode, policy, load)
                empty = _empty_start_tables(settings, cache, mode, policy, load)
                for k, name in enumerate(reference["class"]):
                    truth = float(reference["gamma"].iloc[k])
                    truth_half = float(reference["ci_high"].iloc[k]) - truth
                    est = np.array([t["gamma"].iloc[k] for t in tables])
                    low = np.array([t["ci_low"].iloc[k] for t in tables])
                    high = np.array([t["ci_high"].iloc[k] for t in tables])
                    flagged = int(np.count_nonzero(~np.isfinite(low)))
                    covered = int(np.count_nonzero((low <= truth) & (truth <= high)))
                    n = len(tables)
                    c_low, c_high = proportion_interval(covered, n)
                    bias = est.mean() / truth - 1
                    # 95% interval of the bias: runs' spread and the reference's own
                    se_mean = est.std(ddof=1) / np.sqrt(n) / truth
                    se_ref = truth_half / sps.t.ppf(0.975, settings["reference_runs"] - 1) \
                        / truth
                    bias_half = 1.96 * np.hypot(se_mean, se_ref)
                    width = np.nanmean((high - low) / 2 / est)
                    # flows MSER-5 discarded per run (all classes; summed over replications)
                    discarded = [float(t["warmup_flows"].sum()) for t in tables]
                    paired = paired_half = np.nan
                    if empty is not None:  # same seeds from empty: the bias it removes
                        diff = (est - np.array([t["gamma"].iloc[k] for t in empty])) / truth
                        paired = float(diff.mean())
                        paired_half = float(sps.t.ppf(0.975, n - 1) * diff.std(ddof=1)
                                            / np.sqrt(n))
                    rows.append({"mode": mode, "policy": policy, "load": load, "class": name,
                                 "reference": truth, "reference_half": truth_half,
                                 "runs": n, "covered": covered, "coverage": covered / n,
                                 "coverage_low": c_low, "coverage_high": c_high,
                                 "flagged": flagged, "bias": bias, "bias_half": bias_half,
                                 "mean_relative_half_width": width,
                                 "batches_used": float(np.mean(
                                     [t["batches_used"].iloc[k] for t in tables])),
                                 "warmup_flows": float(np.mean(
                                     [t["warmup_flows"].iloc[k] for t in tables])),
                                 "init": settings.get("init", "empty"),
                                 "discarded_flows": float(np.mean(discarded)),
                                 "runs_with_cut": int(np.count_nonzero(np.array(discarded))),
                                 "initial_flows": float(np.mean(
                                     [t["initial_flows"].iloc[k] if "initial_flows" in t
                                      else 0 for t in tables])),
                                 "bias_change": paired, "bias_change_half": paired_half})
    return rows


def markdown(rows: list[dict]) -> str:
    if any(r.get("init", "empty") != "empty" for r in rows):
        return _init_markdown(rows)
    lines = ["| mode | policy | load | class | reference γ [95% CI] | coverage [95% CI] | "
             "flagged | mean bias [95% CI] | mean half-width |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r['policy']} | {r['load']:g} | {r['class']} | "
            f"{r['reference']:.4f} ± {r['reference_half']:.4f} | "
            f"{100 * r['coverage']:.1f}% ({r['covered']}/{r['runs']}) "
            f"[{100 * r['coverage_low']:.1f}, {100 * r['coverage_high']:.1f}] | "
            f"{r['flagged']} | {100 * r['bias']:+.2f}% ± {100 * r['bias_half']:.2f} | "
            f"{100 * r['mean_relative_half_width']:.1f}% |")
    return "\n".join(lines)


def _init_markdown(rows: list[dict]) -> str:
    """The table of an ``--init fluid`` campaign: the usual columns, the flows placed at
    t = 0 and discarded by MSER-5 per run, and the paired change of the bias against the
    same runs from empty (when cached)."""
    lines = ["| mode | policy | load | class | reference γ | coverage [95% CI] | flagged | "
             "mean bias [95% CI] | mean half-width | initial flows of the class (mean) | "
             "discarded per run (mean; runs with a cut) | bias change vs empty [95% CI] |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        change = ("n/a" if not np.isfinite(r["bias_change"]) else
                  f"{100 * r['bias_change']:+.2f}% ± {100 * r['bias_change_half']:.2f}")
        lines.append(
            f"| {r['mode']} | {r['policy']} | {r['load']:g} | {r['class']} | "
            f"{r['reference']:.4f} | {100 * r['coverage']:.1f}% ({r['covered']}/{r['runs']}) "
            f"[{100 * r['coverage_low']:.1f}, {100 * r['coverage_high']:.1f}] | "
            f"{r['flagged']} | {100 * r['bias']:+.2f}% ± {100 * r['bias_half']:.2f} | "
            f"{100 * r['mean_relative_half_width']:.1f}% | {r['initial_flows']:.2f} | "
            f"{r['discarded_flows']:.0f} ({r['runs_with_cut']}) | {change} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--policies", default="bmf,drfq")
    parser.add_argument("--loads", default="0.5,0.9")
    parser.add_argument("--modes", default="batch,replications")
    parser.add_argument("--mean-size", type=float, default=200)
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--flows", type=int, default=20000)
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--replication-flows", type=int, default=2000)
    parser.add_argument("--reference-runs", type=int, default=10)
    parser.add_argument("--reference-factor", type=int, default=50)
    parser.add_argument("--warmup", default="auto")
    parser.add_argument("--init", default="empty", choices=("empty", "fluid"),
                        help="start of every run but the reference's ([packet] init)")
    parser.add_argument("--precision", type=float, default=0.05,
                        help="target of the precision mode")
    parser.add_argument("--cache", default="results/coverage_cache")
    parser.add_argument("--json", help="write the table as JSON here")
    parser.add_argument("--estimate-only", action="store_true")
    args = parser.parse_args(argv)
    warmup = args.warmup if args.warmup == "auto" else float(args.warmup)
    settings = {"runs": args.runs, "policies": args.policies.split(","),
                "loads": [float(v) for v in args.loads.split(",")],
                "modes": args.modes.split(","), "mean_size": args.mean_size,
                "window": args.window, "flows": args.flows,
                "replications": args.replications,
                "replication_flows": args.replication_flows,
                "reference_runs": args.reference_runs,
                "reference_factor": args.reference_factor, "warmup": warmup,
                "precision": args.precision, "init": args.init}
    cache = Path(args.cache)
    items = items_for(settings)
    todo = [i for i in items if not cache_path(cache, settings, i).exists()]
    # every Figure 3 class uses both resources: 2 services per packet (a precision-mode
    # item counts one replication here: it runs as many as its rule needs)
    services = sum(item_flows(settings, i) for i in todo) * settings["mean_size"] * 2
    print(f"{len(items)} items, {len(todo)} to compute: about {services:.3g} services, "
          f"{services / SERVICE_RATE:.0f} core-seconds at {SERVICE_RATE:.0e}/s",
          file=sys.stderr)
    if args.estimate_only:
        return 0
    started = time.perf_counter()
    todo.sort(key=lambda i: -item_flows(settings, i))  # the long ones first
    cache.mkdir(parents=True, exist_ok=True)
    for done, (item, record) in enumerate(execute(compute, todo, arguments=(settings,),
                                                  jobs=args.jobs), 1):
        path = cache_path(cache, settings, item)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, default=float))
        tmp.replace(path)
        if done % 50 == 0 or done == len(todo):
            print(f"{done}/{len(todo)} items, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr)
    records = {i: json.loads(cache_path(cache, settings, i).read_text()) for i in items}
    rows = analyse(settings, records, cache)
    print(markdown(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
