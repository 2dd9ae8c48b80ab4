"""Issue 22's dovetailing study: how much dovetailing can dynamic flows afford before DRF
is lost? Dovetailing DRFQ's Δ bounds how far apart a flow's finish tags on different
resources may drift (SPEC §3): Δ = 0 charges every packet like memoryless DRFQ, Δ = ∞ is
full dovetailing.

Usage (from the checkout): python reproduction/dovetail_delta/run.py [--jobs 2]
       [--results results/dovetail_delta] [--plot-only]

1. ``scenario.toml`` (BR Figure 3's classes, m = 200, W = 30, 4 replications of 40 000
   flows per point, link loads 0.1…0.9) swept with ``drfq-dovetail`` for every Δ of
   ``DELTAS`` under both virtual-time clocks (``in-service``, the default, and
   ``started``, BR's reading) into one results directory (Δ and the clock are part of
   each point's key), each validated against fluid DRF as ``mrfq validate`` does (fluid
   γ in the 95% interval, or within 5%) → ``delta_study.csv`` here (one row per Δ,
   clock, load and class).
2. The alternating check (SPEC §3: flow A alternates packets (1, 2) and (2, 1), flow B
   sends (3, 3), both backlogged; full dovetailing gives A half of each resource,
   memoryless DRFQ 3/7) and the weights check (two backlogged (0.5, 1) flows of weights
   1 and 2 behind a lightly loaded CPU; weighted DRF gives the weight-2 flow 2/3 of the
   link) for the same Δ and clocks → ``alternating.csv`` (``share``, ``weighted_share``).
3. ``summary.csv``: per Δ and clock, the points that validate (of 27), the largest
   |γ / γ_DRF − 1| and the alternating share; printed.
4. ``dovetail_delta.png`` (+ PDF): γ / γ_DRF against Δ per class with its 95% interval
   at loads 0.5, 0.8 and 0.9, and the backlogged checks' shares against Δ.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from mrfq import pipeline
from mrfq.io import write_csv
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.plots import _colour
from mrfq.scenario import VIRTUAL_TIMES, load_scenario, scenario_from_dict

HERE = Path(__file__).resolve().parent
DELTAS = (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0, math.inf)
TOLERANCE = 0.05


def alternating_share(delta: float, virtual_time: str, packets: int = 20000) -> float:
    """A's share of each resource in SPEC §3's alternating check (its packets over its
    completion time; a packet's mean work is 1)."""
    scenario = scenario_from_dict({
        "resources": ["cpu", "link"], "load": {"values": [0.5]},
        "classes": [{"name": "A", "load_share": 1, "packet_order": "cycle",
                     "packets": [{"requirements": [1, 2]}, {"requirements": [2, 1]}]},
                    {"name": "B", "requirements": [3, 3], "load_share": 1}]})
    run = run_replication(PacketModel.from_scenario(scenario), "drfq-dovetail",
                          scenario.class_loads(0.5), np.random.SeedSequence(0), flows=1,
                          mean_size=1000, window=64, delta=delta, virtual_time=virtual_time,
                          arrivals=([0.0, 0.0], [0, 1], [packets, 10**7]))
    return packets / float(run.completion[0])


def weighted_share(delta: float, virtual_time: str, packets: int = 20000) -> float:
    """The weight-2 flow's share of the link in SPEC §3's weights check: two backlogged
    flows (0.5, 1) of weights 1 and 2 behind a lightly loaded CPU (weighted DRF: 2/3).
    Its packets over its completion time while the weight-1 flow stays backlogged."""
    scenario = scenario_from_dict({
        "resources": ["cpu", "link"], "load": {"values": [0.5]},
        "classes": [{"name": "w1", "requirements": [0.5, 1], "load_share": 1, "weight": 1},
                    {"name": "w2", "requirements": [0.5, 1], "load_share": 1, "weight": 2}]})
    run = run_replication(PacketModel.from_scenario(scenario), "drfq-dovetail",
                          scenario.class_loads(0.5), np.random.SeedSequence(0), flows=1,
                          mean_size=10, window=30, delta=delta, virtual_time=virtual_time,
                          arrivals=([0.0, 0.0], [1, 0], [packets, 10**8]))
    return packets / float(run.completion[0])


def study(results: Path, jobs: int | None) -> pd.DataFrame:
    """Every (Δ, clock) sweep, validated against fluid DRF."""
    base = load_scenario(HERE / "scenario.toml")
    frames = []
    for virtual_time in VIRTUAL_TIMES:
        for delta in DELTAS:
            scenario = base.with_overrides(delta=delta, virtual_time=virtual_time)
            started = time.perf_counter()
            summary = pipeline.sweep(scenario, results, jobs=jobs)
            table = pipeline.validate(summary, TOLERANCE, scenario)
            table.insert(0, "virtual_time", virtual_time)
            table.insert(0, "delta", delta)
            frames.append(table)
            print(f"delta {delta:g}, {virtual_time}: {int(table['passed'].sum())}/"
                  f"{len(table)} validate ({time.perf_counter() - started:.0f} s)")
    return pd.concat(frames, ignore_index=True)


#: the loads drawn: where Δ = ∞ departs most from DRF (0.8: class 2 +183%), a middle
#: load, and 0.9, where it happens not to (the intervals there are about ±9%)
PLOTTED_LOADS = (0.5, 0.8, 0.9)


def plot(table: pd.DataFrame, alternating: pd.DataFrame, path: Path) -> None:
    """γ / γ_DRF against Δ with its 95% interval (one panel per load of
    :data:`PLOTTED_LOADS`, one colour per class as in every mrfq figure; in-service
    clock) and the backlogged checks' shares against Δ, each with its own references;
    Δ = ∞ drawn at the right end."""
    finite = [d for d in DELTAS if math.isfinite(d)]
    position = {d: i for i, d in enumerate(DELTAS)}
    labels = [f"{d:g}" for d in finite] + ["∞"]
    fig = Figure(figsize=(17, 4.4), layout="constrained")
    axes = fig.subplots(1, len(PLOTTED_LOADS) + 1,
                        gridspec_kw={"width_ratios": [1] * len(PLOTTED_LOADS) + [1.3]})
    chosen = table[table["virtual_time"] == VIRTUAL_TIMES[0]]
    classes = list(dict.fromkeys(chosen["class"]))
    for ax, load in zip(axes, PLOTTED_LOADS, strict=False):
        for i, name in enumerate(classes):
            rows = chosen[(chosen["load"] == load) & (chosen["class"] == name)].sort_values(
                "delta", key=lambda s: s.map(position))
            ratio = rows["packet_gamma"] / rows["fluid_gamma"]
            bars = [ratio - rows["ci_low"] / rows["fluid_gamma"],
                    rows["ci_high"] / rows["fluid_gamma"] - ratio]
            # classes side by side at each Δ, so that their bars do not hide each other
            ax.errorbar([position[d] + 0.15 * (i - 1) for d in rows["delta"]], ratio,
                        yerr=bars, marker="o", markersize=3, capsize=2, color=_colour(i),
                        label=f"class {name}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhspan(1 - TOLERANCE, 1 + TOLERANCE, color="grey", alpha=0.15,
                   label=f"±{TOLERANCE:.0%} (validation tolerance)")
        ax.set_xticks(range(len(DELTAS)), labels)
        ax.set_xlabel("Δ (time units of a packet's dominant service)")
        # each load its own range: 0.8's +183% would squash 0.9's ±9% intervals
        at = chosen[chosen["load"] == load]
        low = min(1 - 2 * TOLERANCE, float((at["ci_low"] / at["fluid_gamma"]).min()))
        high = max(1 + 2 * TOLERANCE, float((at["ci_high"] / at["fluid_gamma"]).max()))
        ax.set_ylim(low - 0.03 * (high - low), high + 0.03 * (high - low))
        ax.set_title(f"link load {load:g}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"packet $\gamma$ / fluid DRF $\gamma$ (95% CI)")
    axes[0].legend(fontsize=7, loc="upper left")
    right = axes[-1]
    for column, marker, colour, what, references in (
            ("share", "o", "tab:blue", "alternating mix: A's share",
             ((3 / 7, "--", "memoryless: 3/7"), (0.5, ":", "full dovetailing: 1/2"))),
            ("weighted_share", "s", "tab:red", "weights 1:2: the weight-2 flow's share",
             ((2 / 3, "-.", "weighted DRF: 2/3"),))):
        clocks = {v: rows.sort_values("delta", key=lambda s: s.map(position))
                  for v, rows in alternating.groupby("virtual_time")}
        same = len({tuple(rows[column]) for rows in clocks.values()}) == 1
        for virtual_time, rows in list(clocks.items())[:1] if same else clocks.items():
            # one line when the clocks agree (a second would hide under the first)
            right.plot([position[d] for d in rows["delta"]], rows[column], marker=marker,
                       color=colour, linestyle="-" if virtual_time == VIRTUAL_TIMES[0]
                       else "--", label=f"{what}, V: "
                       f"{'both clocks (equal)' if same else virtual_time}")
        for value, style, text in references:  # in the series' colour, named in the legend
            right.axhline(value, color=colour, linewidth=0.8, linestyle=style,
                          label=f"reference: {text}")
    right.set_xticks(range(len(DELTAS)), labels)
    right.set_xlabel("Δ")
    right.set_ylabel("share")
    right.set_ylim(0.15, 0.7)
    right.set_title("backlogged checks")
    right.legend(fontsize=7, loc="lower right")
    fig.suptitle("Dovetailing DRFQ against DRF for each bound Δ (BR Figure 3's classes, "
                 "m = 200, W = 30, in-service clock)")
    for suffix in (".png", ".pdf"):
        fig.savefig(path.with_suffix(suffix), dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--results", default="results/dovetail_delta")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw dovetail_delta.png from the CSVs here, no runs")
    args = parser.parse_args()
    if args.plot_only:
        plot(pd.read_csv(HERE / "delta_study.csv", dtype={"class": str}),
             pd.read_csv(HERE / "alternating.csv"), HERE / "dovetail_delta.png")
        return
    table = study(Path(args.results), args.jobs)
    write_csv(table, HERE / "delta_study.csv")
    alternating = pd.DataFrame([{"delta": d, "virtual_time": v, "share": alternating_share(d, v),
                                 "weighted_share": weighted_share(d, v)}
                                for v in VIRTUAL_TIMES for d in DELTAS])
    write_csv(alternating, HERE / "alternating.csv")
    table["abs_difference"] = table["relative_difference"].abs()
    summary = table.groupby(["virtual_time", "delta"], sort=False).agg(
        points=("passed", "size"), validate=("passed", "sum"),
        max_abs_difference=("abs_difference", "max")).reset_index()
    summary = summary.merge(alternating, on=["delta", "virtual_time"])
    write_csv(summary, HERE / "summary.csv")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    plot(table, alternating, HERE / "dovetail_delta.png")
    print(f"wrote {HERE / 'dovetail_delta.png'}")


if __name__ == "__main__":
    main()
