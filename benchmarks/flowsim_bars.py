"""Issue 14's accuracy bars for the flow-level simulator, too long for the test suite.

Usage: python benchmarks/flowsim_bars.py [--part markov|bf|both] [--out DIR]
       [--results DIR] [--loads 0.5,0.8,0.9]

* ``markov``: exponential sizes against the Markov solver, Figures 1 and 2
  (``fig1_balanced``, ``fig2_unbalanced``), loads 0.5, 0.8, 0.9, DRF/PF/BMF. Bar: the
  Markov γ_k inside the simulator's 99% interval at every point, with 99% half-widths
  ≤ 1% of γ_k.
* ``bf``: balanced fairness's exact γ_k (explicit law, insensitive) inside the
  simulator's 99% interval for deterministic, hyperexponential (SCV 10), Pareto 2.5 and
  bounded Pareto 1.5 (max 1000) sizes, the same two scenarios and three loads.

The simulated γ_k is the ratio estimator Σ S / Σ T the pipeline reports (``ratio``),
with its delta-method interval over the replications (centred on it).
Every point: 10 replications (t interval over replications) of ``FLOWS[load]`` flows,
its own seeds (``MARKOV_SEED``/``BF_SEED`` + the point's index; a column); in
the ``markov`` part, when a half-width exceeds 0.95%, rerun with the flows scaled by
(half-width / 0.9%)² (a new run with its own seeds, not the old one extended). The
``bf`` part has no width bar and runs once per point.
The Markov values are cached sweeps in ``--results`` (default results/flowsim_bars).
Writes ``markov.csv`` / ``bf.csv`` in ``--out`` (default reproduction/flowsim_bars) and
prints one line per point and a verdict.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mrfq import pipeline
from mrfq.fluid.balanced import bf_service_rates
from mrfq.fluid.flowsim import flow_service_rates
from mrfq.io import write_csv
from mrfq.scenario import load_scenario
from mrfq.sizes import parse_size

SCENARIOS = ("fig1_balanced", "fig2_unbalanced")
FLOWS = {0.5: 200_000, 0.8: 800_000, 0.9: 2_500_000}
REPLICATIONS = 10
CONFIDENCE = 0.99
TARGET = 0.0095  # rerun above this 99% relative half-width (bar: 1%)
#: point i (in the order run) uses seed base + i: every point its own random numbers, so
#: the misses counted over points are independent trials (a rerun adds 1000)
MARKOV_SEED, BF_SEED = 1, 5001
LAWS = {
    "deterministic": {"distribution": "deterministic"},
    "h2-scv10": {"distribution": "hyperexponential", "scv": 10},
    "pareto-2.5": {"distribution": "pareto", "shape": 2.5},
    "pareto-1.5-max1000": {"distribution": "pareto", "shape": 1.5, "max": 1000},
}


def simulated(scenario, policy: str, load: float, law, seed: int, adapt: bool = True
              ) -> tuple:
    """(result, flows per replication, CPU seconds, seed of the last run); with ``adapt``
    rerun (at most twice, seed + 1000 each time) until the ratio estimator's half-widths
    are ≤ TARGET."""
    flows = FLOWS.get(load, 1_000_000)
    cpu, half = 0.0, 0.0
    for attempt in range(3 if adapt else 1):
        if attempt:
            flows = int(math.ceil(flows * (half / 0.009) ** 2))
            seed += 1000
        started = time.process_time()
        result = flow_service_rates(scenario.requirements, scenario.class_loads(load), policy,
                                    law, flows=flows, replications=REPLICATIONS, seed=seed,
                                    confidence=CONFIDENCE)
        cpu += time.process_time() - started
        half = float(np.max((result.ratio_high - result.ratio_low) / 2 / result.ratio))
        if half <= TARGET:
            break
    return result, flows, cpu, seed


def rows_for(scenario, policy, load, exact, result, flows, cpu, law_name, seed):
    rows = []
    for k, name in enumerate(scenario.class_names):
        low, high = result.ratio_low[k], result.ratio_high[k]
        half = (high - low) / 2 / result.ratio[k]
        rows.append({"scenario": scenario.name, "policy": policy, "law": law_name,
                     "load": load, "class": name, "exact_gamma": float(exact[k]),
                     "sim_gamma": float(result.ratio[k]), "ci_low": float(low),
                     "ci_high": float(high), "half_width": float(half),
                     "inside": bool(low <= exact[k] <= high), "seed": seed,
                     "flows_per_replication": flows, "replications": REPLICATIONS,
                     "cpu_s": cpu})
    return rows


def report(rows: list[dict]) -> None:
    row = rows[-1]
    worst = max(r["half_width"] for r in rows[-3:])
    inside = all(r["inside"] for r in rows[-3:])
    print(f"{row['scenario']:16s} {row['policy']:4s} {row['law']:19s} {row['load']:.2f} "
          + " ".join(f"{r['exact_gamma']:.4f}/{r['sim_gamma']:.4f}" for r in rows[-3:])
          + f" max half {worst:.3%} {'inside' if inside else 'OUTSIDE'} "
          f"{row['flows_per_replication']:>9,d}x{REPLICATIONS} {row['cpu_s']:.0f}s",
          flush=True)


def part_markov(loads, out: Path, results: Path) -> pd.DataFrame:
    rows, index = [], -1
    for name in SCENARIOS:
        scenario = load_scenario(name)
        markov = pipeline.fluid(scenario, results / name, loads=loads, jobs=1,
                                method="markov")
        for policy in ("drf", "pf", "bmf"):
            for load in loads:
                exact = markov[(markov["policy"] == policy) & (markov["load"] == load)]
                index += 1
                result, flows, cpu, seed = simulated(scenario, policy, load, None,
                                                     seed=MARKOV_SEED + index)
                rows += rows_for(scenario, policy, load, exact["gamma"].to_numpy(), result,
                                 flows, cpu, "exponential", seed)
                report(rows)
    table = pd.DataFrame(rows)
    write_csv(table, out / "markov.csv")
    return table


def part_bf(loads, out: Path) -> pd.DataFrame:
    rows, index = [], -1
    for name in SCENARIOS:
        scenario = load_scenario(name)
        for law_name, spec in LAWS.items():
            law = parse_size(spec)
            for load in loads:
                exact = bf_service_rates(scenario.requirements, scenario.class_loads(load)
                                         ).gamma
                index += 1
                result, flows, cpu, seed = simulated(scenario, "bf", load, law,
                                                     seed=BF_SEED + index,
                                                     adapt=False)
                rows += rows_for(scenario, "bf", load, exact, result, flows, cpu, law_name,
                                 seed)
                report(rows)
    table = pd.DataFrame(rows)
    write_csv(table, out / "bf.csv")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=["markov", "bf", "both"], default="both")
    parser.add_argument("--out", default="reproduction/flowsim_bars")
    parser.add_argument("--results", default="results/flowsim_bars")
    parser.add_argument("--loads", default="0.5,0.8,0.9")
    args = parser.parse_args()
    loads = [float(v) for v in args.loads.split(",")]
    out = Path(args.out)
    tables = []
    if args.part in ("markov", "both"):
        tables.append(("Markov", part_markov(loads, out, Path(args.results))))
    if args.part in ("bf", "both"):
        tables.append(("BF", part_bf(loads, out)))
    for label, table in tables:
        print(f"{label}: {int(table['inside'].sum())}/{len(table)} exact values inside the "
              f"99% CI; max half-width {table['half_width'].max():.3%}; "
              f"{table['cpu_s'].drop_duplicates().sum():.0f} s CPU")


if __name__ == "__main__":
    main()
