"""Issue 14's insensitivity study: how far does each policy's γ_k move with the flow-size
law, and does the paper's ranking (PF ≈ BMF better than DRF) survive heavy tails?

Usage (from the checkout): python reproduction/insensitivity/run.py [--jobs 2]
       [--results results/insensitivity] [--no-packet] [--plot-only]

1. Fluid: ``study.toml`` (BR Figure 2's classes, DRF/PF/BMF/BF, link loads 0.1…0.95)
   with every class's law replaced by each of ``LAWS`` (:func:`mrfq.pipeline.insensitivity`;
   each point takes the method the pipeline chooses: exact where it can — Markov for
   exponential sizes up to load 0.9, BF's explicit law always — and the flow-level
   simulator otherwise) → ``insensitivity.csv`` here.
2. Packet: ``packet_pareto.toml`` (the same classes with Pareto 2.5 sizes, m = 2000,
   W = 30, 10 replications of 10 000 flows, loads 0.3/0.5/0.7/0.9) swept into the same
   results directory (so its fluid points are the study's) and validated against the
   flow-level fluid γ → ``packet_summary.csv``, ``packet_validation.csv`` here.
3. Control: BF by flow-level simulation (forced) for every law (exponential included: its
   DRF/PF/BMF points are simulated where the Markov solver is over budget), with the
   study's run lengths (``flows``, ``replications`` columns), against BF's exact
   (insensitive) γ: the simulation's own error at these settings → ``bf_control.csv``.
4. Corrected curves and findings: every *simulated* γ_k divided by the simulated-BF /
   exact-BF ratio of the same law, load and class (a control variate: the policies of a
   law share arrivals and sizes, common random numbers) → ``corrected.csv`` (per law,
   policy, load, class: γ, the ratio, corrected γ, the exponential reference and the raw
   and corrected departures from it); the numbers the README's findings quote, computed
   from it → ``findings.csv`` (one row per number: what, law, policy, class, loads,
   value) and printed.
5. ``plots/insensitivity.png`` (+ PDF): one panel per policy, line style per law, the
   corrected curves (step 4), packet crosses for Pareto 2.5 (``--plot-only`` redraws it
   from the CSVs here).
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from mrfq import pipeline
from mrfq.io import write_csv
from mrfq.plots import insensitivity as plot_insensitivity
from mrfq.scenario import load_scenario

HERE = Path(__file__).resolve().parent
LAWS = {
    "exponential": {"distribution": "exponential"},
    "deterministic": {"distribution": "deterministic"},
    "H2 (SCV 10)": {"distribution": "hyperexponential", "scv": 10},
    "Pareto 2.5": {"distribution": "pareto", "shape": 2.5},
    "Pareto 1.5": {"distribution": "pareto", "shape": 1.5},
}
PACKET_LAW = "Pareto 2.5"


def correct(table: pd.DataFrame, control: pd.DataFrame) -> pd.DataFrame:
    """Per law, policy (DRF/PF/BMF), load, class: ``gamma``, ``bf_ratio`` (simulated /
    exact BF of the same law, load and class), ``corrected`` (γ / bf_ratio for a simulated
    point, γ for an exact one), ``reference`` (the exponential law's corrected γ of the
    same policy, load and class), ``raw_departure`` = γ / exponential γ − 1 and
    ``corrected_departure`` = corrected / reference − 1."""
    ratio = control.assign(bf_ratio=control["gamma"] / control["exact_gamma"]).set_index(
        ["law", "load", "class"])["bf_ratio"]
    rows = table[table["policy"] != "bf"].copy()
    keys = list(zip(rows["law"], rows["load"], rows["class"], strict=True))
    rows["bf_ratio"] = [ratio.get(key, np.nan) for key in keys]
    simulated = rows["method"] == "simulation"
    rows["corrected"] = np.where(simulated, rows["gamma"] / rows["bf_ratio"], rows["gamma"])
    base = rows[rows["law"] == "exponential"].set_index(["policy", "load", "class"])
    ref = list(zip(rows["policy"], rows["load"], rows["class"], strict=True))
    rows["reference"] = [base["corrected"].get(key, np.nan) for key in ref]
    rows["raw_departure"] = rows["gamma"] / [base["gamma"].get(key, np.nan)
                                             for key in ref] - 1
    rows["corrected_departure"] = rows["corrected"] / rows["reference"] - 1
    return rows[["law", "policy", "load", "class", "method", "gamma", "bf_ratio",
                 "corrected", "reference", "raw_departure", "corrected_departure"]
                ].reset_index(drop=True)


def findings(table: pd.DataFrame, control: pd.DataFrame, corrected: pd.DataFrame
             ) -> pd.DataFrame:
    """The numbers the README's insensitivity findings quote, one row each: ``what``
    (the statistic), ``law``, ``policy``, ``class``, ``loads`` (which loads it is taken
    over) and ``value`` (relative numbers as fractions, counts as counts)."""
    rows: list[dict] = []

    def add(what, law, policy, cls, loads, value):
        rows.append({"what": what, "law": law, "policy": policy, "class": cls,
                     "loads": loads, "value": float(value)})

    laws = [law for law in LAWS if law != "exponential"]
    sim = table[(table["method"] == "simulation") & (table["policy"] != "bf")]
    for law in LAWS:
        part = sim[sim["law"] == law]
        for loads, chosen in (("<=0.8", part["load"] <= 0.8), ("0.9", part["load"] == 0.9),
                              ("0.95", part["load"] == 0.95)):
            if chosen.any():
                add("max 95% relative half-width", law, "drf/pf/bmf", "all", loads,
                    part.loc[chosen, "error_estimate"].max())
    for law, part in control.groupby("law", sort=False):
        error = (part["gamma"] / part["exact_gamma"] - 1).abs()
        add("BF control: exact inside the 95% CI (count)", law, "bf", "all", "all",
            part["inside"].sum())
        add("BF control: points", law, "bf", "all", "all", len(part))
        add("BF control: max |simulated/exact - 1|", law, "bf", "all", "<=0.8",
            error[part["load"] <= 0.8].max())
        add("BF control: max |simulated/exact - 1|", law, "bf", "all", "0.95",
            error[part["load"] == 0.95].max())
    low = corrected[corrected["load"] <= 0.8]
    for law in laws:
        part = low[low["law"] == law]
        add("max |raw departure| from exponential", law, "drf/pf/bmf", "all", "<=0.8",
            part["raw_departure"].abs().max())
        for policy in ("pf", "bmf"):
            one = part[part["policy"] == policy]
            add("max |corrected departure|", law, policy, "all", "<=0.8",
                one["corrected_departure"].abs().max())
        drf = part[(part["policy"] == "drf") & (part["class"] != "2")]
        add("max |corrected departure|", law, "drf", "1,3", "<=0.8",
            drf["corrected_departure"].abs().max())
        for load in (0.5, 0.7, 0.8, 0.9, 0.95):
            one = corrected[(corrected["law"] == law) & (corrected["policy"] == "drf")
                            & (corrected["class"] == "2") & (corrected["load"] == load)]
            add("corrected departure", law, "drf", "2", f"{load:g}",
                one["corrected_departure"].iloc[0])
    for load in (0.9, 0.95):
        at = corrected[(corrected["load"] == load) & corrected["policy"].isin(["pf", "bmf"])
                       & (corrected["law"] != "exponential")]
        add("max |corrected departure|", "non-exponential", "pf/bmf", "all", f"{load:g}",
            at["corrected_departure"].abs().max())
    add("max |corrected departure|", "non-exponential", "drf", "1,3", "0.95",
        corrected.loc[(corrected["load"] == 0.95) & (corrected["policy"] == "drf")
                      & (corrected["class"] != "2"), "corrected_departure"].abs().max())
    add("BF control: largest |simulated/exact - 1| (the correction)", "all", "bf", "all",
        "0.95", (control["gamma"] / control["exact_gamma"] - 1)[control["load"] == 0.95]
        .abs().max())
    top = corrected[(corrected["load"] == 0.95) & (corrected["law"] != "exponential")]
    for law, part in top.groupby("law", sort=False):
        add("max |corrected departure|", law, "drf/pf/bmf", "all", "0.95",
            part["corrected_departure"].abs().max())
    # the ranking (ratios of two policies are the same raw or corrected)
    wide = table[table["policy"] != "bf"].pivot_table(
        index=["law", "load", "class"], columns="policy", values="gamma").reset_index()
    pf_bmf = wide["pf"] / wide["bmf"] - 1
    add("max |PF/BMF - 1|", "all", "pf/bmf", "all", "all", pf_bmf.abs().max())
    for cls, what, fn in (("3", "min PF/BMF - 1", np.min), ("2", "max PF/BMF - 1", np.max)):
        add(what, "all", "pf/bmf", cls, "all", fn(pf_bmf[wide["class"] == cls]))
    bmf_drf = wide["bmf"] / wide["drf"] - 1
    add("max |BMF/DRF - 1|", "all", "bmf/drf", "1,3", "all",
        bmf_drf[wide["class"] != "2"].abs().max())
    for law in ("exponential", "Pareto 1.5"):
        for load in (0.5, 0.8, 0.9):
            chosen = (wide["law"] == law) & (wide["load"] == load) & (wide["class"] == "2")
            add("BMF/DRF - 1", law, "bmf/drf", "2", f"{load:g}", bmf_drf[chosen].iloc[0])
    return pd.DataFrame(rows)


def draw(table: pd.DataFrame, corrected: pd.DataFrame, packet: pd.DataFrame | None,
         plots: Path, description: str) -> None:
    """``plots/insensitivity.png`` (+ PDF): the *corrected* curves (``corrected.csv``: a
    simulated DRF/PF/BMF γ divided by the BF control's ratio; exact points and BF as
    computed), since the raw simulated curves fan out by the simulator's own error (the
    BF control), which is not sensitivity; the packet crosses as measured."""
    key = ["law", "policy", "load", "class"]
    drawn = table.merge(corrected[key + ["corrected"]], on=key, how="left")
    drawn["gamma"] = drawn["corrected"].fillna(drawn["gamma"])  # BF: exact, not corrected
    for path in plot_insensitivity(
            drawn, plots / "insensitivity",
            description.split(":")[0] + ": Figure 2's classes; simulated γ corrected by "
            "the BF control (corrected.csv)", "load of resource 'link'", packet, PACKET_LAW):
        print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results", default="results/insensitivity")
    parser.add_argument("--plots", default="plots")
    parser.add_argument("--no-packet", action="store_true")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw plots/insensitivity.png from the CSVs here, no runs")
    args = parser.parse_args()
    study = load_scenario(HERE / "study.toml")
    if args.plot_only:
        packet = pd.read_csv(HERE / "packet_summary.csv", dtype={"class": str})
        draw(pd.read_csv(HERE / "insensitivity.csv", dtype={"class": str}),
             pd.read_csv(HERE / "corrected.csv", dtype={"class": str}),
             packet[packet["kind"] == "packet"], Path(args.plots), study.description)
        return
    started = time.perf_counter()
    table = pipeline.insensitivity(study, LAWS, args.results, jobs=args.jobs)
    write_csv(table, HERE / "insensitivity.csv")
    print(f"fluid: {len(table)} rows in {time.perf_counter() - started:.0f} s")
    forced = replace(study, fluid=replace(study.fluid, policies=("bf",), method="simulation"))
    control = pipeline.insensitivity(forced, LAWS, args.results, jobs=args.jobs)
    exact = table[table["policy"] == "bf"].drop_duplicates(["load", "class"]).set_index(
        ["load", "class"])["gamma"]
    control["exact_gamma"] = [exact[(load, name)] for load, name in
                              zip(control["load"], control["class"], strict=True)]
    control["inside"] = ((control["ci_low"] <= control["exact_gamma"])
                         & (control["exact_gamma"] <= control["ci_high"]))
    control["flows"] = forced.fluid.flows
    control["replications"] = forced.fluid.replications
    write_csv(control, HERE / "bf_control.csv")
    corrected = correct(table, control)
    write_csv(corrected, HERE / "corrected.csv")
    numbers = findings(table, control, corrected)
    write_csv(numbers, HERE / "findings.csv")
    print(numbers.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    packet = None
    if not args.no_packet:
        started = time.perf_counter()
        summary = pipeline.sweep(load_scenario(HERE / "packet_pareto.toml"), args.results,
                                 jobs=args.jobs)
        validation = pipeline.validate(args.results, 0.05)
        shutil.copy(Path(args.results) / "summary.csv", HERE / "packet_summary.csv")
        shutil.copy(Path(args.results) / pipeline.VALIDATION_FILE,
                    HERE / "packet_validation.csv")
        packet = summary[summary["kind"] == "packet"]
        print(f"packet: {int(validation['passed'].sum())}/{len(validation)} pass "
              f"({int(validation['fluid_in_ci'].sum())} within the joint CI) in "
              f"{time.perf_counter() - started:.0f} s")
    draw(table, corrected, packet, Path(args.plots), study.description)


if __name__ == "__main__":
    main()
