"""Check of the run-length advisor (``mrfq plan``, :func:`mrfq.advisor.advise`) against
reality: the spread of γ_k it predicts for a run of ``--flows`` flows against the spread
measured over ``--seeds`` independent runs of that length.

Figure 3 scenario (fig3_packet with m = ``--mean-size``, W = ``--window``,
``warmup = "auto"``), one packet policy, each load of ``--loads``:

* measured: ``--seeds`` single runs of ``--flows`` flows (seeds 1000 + i) through the
  sweep's point function and combiner (:func:`mrfq.kinds.packet.packet_point`,
  :func:`mrfq.kinds.packet.combine_packet_records`); per class the standard deviation of
  γ_k over the runs divided by their mean (with the 95% range of that SD from χ²), and
  the mean reported relative half-width (the runs' γ are kept in ``--cache``);
* predicted: for each pilot length of ``--pilot-flows`` ("auto": the advisor's default,
  :func:`mrfq.advisor.pilot_length`) and each of ``--pilot-seeds`` pilots (seeds
  5000 + j), the pilot's predicted relative standard deviation of γ_k for one run as
  configured, σ_rel / √(measured flows) (``sigma_rel``: the pilot's own estimate, even
  where the plan sizes the point by the fluid model's variance, ``basis`` "model", whose
  SD over the measured is ``model_ratio``);
* ratio predicted / measured SD per pilot (median and range over the pilots), and how
  many pilots' ``factor_low``–``factor_high`` range holds the measured variance
  (σ²_true / σ²_est = 1 / ratio²);
* time: the advisor's predicted CPU seconds of one run (``wall_s_configured``) against
  ``--wall-runs`` runs timed back to back in this process, in CPU seconds and wall
  seconds (the machine may be shared: CPU seconds are what the advisor predicts).

    nice -n 10 python benchmarks/advisor_check.py --seeds 100 --jobs 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from mrfq.advisor import AUTO_WARMUP_ALLOWANCE, advise
from mrfq.executor import execute
from mrfq.kinds.packet import combine_packet_records, packet_point
from mrfq.scenario import load_scenario
from mrfq.stats.runlength import variance_factor

RUN_SEED = 1000
PILOT_SEED = 5000


def scenario_for(args: argparse.Namespace, seed: int):
    return load_scenario("fig3_packet").with_overrides(
        flows=args.flows, mean_size=args.mean_size, window=args.window, warmup="auto",
        seed=seed, replications=1)


def one_run(args: argparse.Namespace, item: tuple) -> pd.DataFrame:
    """γ_k and reported half-width of one run: item = (load, index)."""
    load, index = item
    scenario = scenario_for(args, RUN_SEED + index)
    record = packet_point(scenario, args.policy, load, 0)
    table = combine_packet_records(scenario, [record])
    return pd.DataFrame({"load": load, "seed": index, "class": table["class"],
                         "gamma": table["gamma"],
                         "half_width": (table["ci_high"] - table["gamma"]) / table["gamma"]})


def measured(args: argparse.Namespace) -> pd.DataFrame:
    cache = Path(args.cache) / (f"runs_{args.policy}_m{args.mean_size:g}_W{args.window}_"
                                f"f{args.flows}_s{args.seeds}_"
                                f"{'_'.join(f'{v:g}' for v in args.loads)}.csv")
    if cache.exists():  # the seed runs do not depend on the advisor: computed once
        runs = pd.read_csv(cache, dtype={"class": str})
    else:
        items = [(load, i) for load in args.loads for i in range(args.seeds)]
        runs = pd.concat([table for _, table in execute(one_run, items, arguments=(args,),
                                                        jobs=args.jobs)])
        cache.parent.mkdir(parents=True, exist_ok=True)
        runs.to_csv(cache, index=False)
    rows = []
    for (load, name), group in runs.groupby(["load", "class"]):
        n = len(group)
        sd = group["gamma"].std(ddof=1) / group["gamma"].mean()
        # 95% range of an SD estimated from n values: sqrt((n-1)/χ²)
        low = sd * np.sqrt((n - 1) / sps.chi2.ppf(0.975, n - 1))
        high = sd * np.sqrt((n - 1) / sps.chi2.ppf(0.025, n - 1))
        rows.append({"load": load, "class": name, "runs": n, "gamma_mean": group["gamma"].mean(),
                     "measured_sd": sd, "sd_low": low, "sd_high": high,
                     "mean_half_width": group["half_width"].mean()})
    return pd.DataFrame(rows)


def predicted(args: argparse.Namespace) -> pd.DataFrame:
    tables = []
    for pilot in args.pilot_flows:
        for j in range(args.pilot_seeds):
            started = time.perf_counter()
            table = advise(scenario_for(args, RUN_SEED), policy_names=[args.policy],
                           loads=args.loads, seed=PILOT_SEED + j,
                           pilot_flows=None if pilot == "auto" else int(pilot))
            table["pilot"] = pilot
            table["pilot_seed"] = j
            table["pilot_wall_s"] = time.perf_counter() - started
            # the pilot's predicted SD of γ̂ for the run as configured: σ_rel / √(measured
            # flows) (= half_width_configured over its one-run factor where the plan's
            # basis is the pilot; the model's basis sizes BMF since 2026-11-29, and its
            # factor is γ̂'s: the pilot's χ² range is recomputed from its dof here)
            measured_flows = args.flows * (1 - AUTO_WARMUP_ALLOWANCE)
            table["predicted_sd"] = table["sigma_rel"] / np.sqrt(measured_flows)
            # what the plan sizes a model-basis point by: the fluid model's SD of γ̂
            table["model_sd"] = table["model_sigma_rel"] / np.sqrt(measured_flows)
            ranges = [variance_factor(dof) for dof in table["pilot_dof"]]
            table["factor_low"] = [low for low, _ in ranges]
            table["factor_high"] = [high for _, high in ranges]
            tables.append(table)
    return pd.concat(tables)


def wall_check(args: argparse.Namespace, pred: pd.DataFrame) -> pd.DataFrame:
    """Predicted CPU seconds of one run (median over the pilots) against runs timed here."""
    rows = []
    for load in args.loads:
        timed, walls = [], []
        for i in range(args.wall_runs):
            started, wall = time.process_time(), time.perf_counter()
            packet_point(scenario_for(args, RUN_SEED + i), args.policy, load, 0)
            timed.append(time.process_time() - started)
            walls.append(time.perf_counter() - wall)
        at = pred[pred["load"] == load].drop_duplicates(["pilot", "pilot_seed"])
        for pilot, group in at.groupby("pilot"):
            rows.append({"load": load, "pilot": pilot,
                         "predicted_s": group["wall_s_configured"].median(),
                         "measured_cpu_s": float(np.median(timed)),
                         "measured_wall_s": float(np.median(walls)),
                         "ratio": group["wall_s_configured"].median() / np.median(timed)})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--flows", type=int, default=20000)
    parser.add_argument("--mean-size", type=float, default=200)
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--policy", default="bmf")
    parser.add_argument("--loads", type=lambda s: [float(v) for v in s.split(",")],
                        default=[0.5, 0.9])
    parser.add_argument("--pilot-flows", type=lambda s: s.split(","),
                        default=["auto", "5000"])
    parser.add_argument("--wall-runs", type=int, default=5)
    parser.add_argument("--pilot-seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache", default="results/advisor_check",
                        help="Directory keeping the seed runs' γ (one CSV per setting).")
    args = parser.parse_args()
    started = time.perf_counter()
    pred = predicted(args)
    meas = measured(args)
    rows = []
    for (load, name, pilot), group in pred.groupby(["load", "class", "pilot"]):
        m = meas[(meas["load"] == load) & (meas["class"] == name)].iloc[0]
        ratio = group["predicted_sd"] / m["measured_sd"]
        inside = ((group["factor_low"] <= 1 / ratio ** 2)
                  & (1 / ratio ** 2 <= group["factor_high"]))
        rows.append({"load": load, "class": name, "pilot": pilot,
                     "pilot_flows": int(group["pilot_flows"].median()),
                     "measured_sd_%": 100 * m["measured_sd"],
                     "sd_range_%": f"[{100 * m['sd_low']:.2f}, {100 * m['sd_high']:.2f}]",
                     "predicted_sd_%": 100 * group["predicted_sd"].median(),
                     "ratio_median": ratio.median(),
                     "ratio_range": f"[{ratio.min():.2f}, {ratio.max():.2f}]",
                     # the plan's basis "model" (BMF with exponential sizes): the fluid
                     # model's SD of γ̂ (scaled by the pilot's γ̂) against the measured
                     "model_ratio": (group["model_sd"] / m["measured_sd"]).median(),
                     "factor": f"x{group['factor_low'].median():.2g}-"
                               f"{group['factor_high'].median():.2g}",
                     "in_factor": f"{int(inside.sum())}/{len(group)}",
                     "correlated_pilots": int((group["pilot_problem"] != "").sum()),
                     "pilot_wall_s": group["pilot_wall_s"].median()})
    pd.set_option("display.width", 200)
    print(f"policy {args.policy}, m = {args.mean_size:g}, W = {args.window}, one run of "
          f"{args.flows} flows, {args.seeds} seeds per load, {args.pilot_seeds} pilots per "
          f"length")
    print(meas.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(wall_check(args, pred).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"total wall {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
