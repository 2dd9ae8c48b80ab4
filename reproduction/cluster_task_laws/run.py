"""How much straggling can a cluster's jobs afford before the fluid model stops describing
them? BR Figure 2 (ρ_1 = 4ρ_2 = 4ρ_3) as a pooled cluster, as ``reproduction/cluster_fig2``
(100 tasks per resource, so a job alone runs 100 tasks at once; jobs of 10^4 tasks on
average, 100 such waves), 20 000 jobs per run, swept with DRF, PF and BMF at load 0.6
under several laws of the task durations and of the tasks per job ([cluster] duration_law,
tasks; docs/guide/clusters.md, "Task laws"):

* durations: exponential (the default), fixed, and lognormal of σ = 0.5, 1, 1.5 (mean
  d = 1, SCV e^{σ²} − 1 = 0.28, 1.72, 8.49), tasks geometric;
* tasks per job lognormal (σ = 1) with exponential durations, against the fluid model of
  the same flow-size law (``size`` of every class; the fluid γ by flow-level simulation)
  and against the exponential one (what the validation's known limitation warns of).

    cd <repo> && PYTHONPATH=. nice -n 10 python reproduction/cluster_task_laws/run.py [workers]
    (--plot-only: redraw gamma.png from results.csv)

Writes results.csv (one row per variant, policy, load and class: cluster γ with its
interval, the fluid γ it is compared with, the relative difference), output.txt and
gamma.png here; each variant's points are cached under runs/<variant>/points (rerun:
nothing recomputed).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import integrate  # noqa: E402

from mrfq import policies  # noqa: E402
from mrfq.plots import _colour  # noqa: E402
from mrfq.scenario import load_scenario, scenario_from_dict  # noqa: E402
from mrfq.sizes import parse_size  # noqa: E402
from mrfq.sweeps import run_sweep  # noqa: E402
from mrfq.validation import validate_summary  # noqa: E402

HERE = Path(__file__).resolve().parent
BASE = HERE.parent / "cluster_fig2" / "scenario.toml"
LOGNORMAL = {"distribution": "lognormal"}
#: variant → (its [cluster] laws, the classes' flow-size law: None = exponential)
VARIANTS = {
    "exponential": ({}, None),
    "fixed": ({"duration_law": "fixed"}, None),
    **{f"lognormal {s}": ({"duration_law": {**LOGNORMAL, "sigma": s}}, None)
       for s in (0.5, 1.0, 1.5)},
    "tasks lognormal 1": ({"tasks": {**LOGNORMAL, "sigma": 1.0}},
                          {**LOGNORMAL, "sigma": 1.0}),
}


def scenario(laws: dict, size: dict | None):
    raw = load_scenario(BASE).to_dict()
    raw["name"] = "cluster_task_laws"
    raw["cluster"].update(**laws)
    raw["load"]["values"] = [0.6]
    if size is not None:
        for c in raw["classes"]:
            c["size"] = size
    return scenario_from_dict(raw)


def longest_of(law: dict | str, count: int = 100) -> float:
    """E[max of ``count`` durations] / d of a duration law (its CDF integrated): the
    last wave's length, for a job running ``count`` tasks at once."""
    if law == "fixed":
        return 1.0
    cdf = parse_size(None if law == "exponential" else law).cdf
    return integrate.quad(lambda t: 1.0 - float(cdf(t)) ** count, 0, np.inf, limit=500)[0]


def main() -> None:
    if "--plot-only" in sys.argv:  # redraw gamma.png from results.csv, no runs
        plot(pd.read_csv(HERE / "results.csv", dtype={"class": str}))
        return
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rows = []
    fluid_exponential = None
    for name, (laws, size) in VARIANTS.items():
        print(f"== {name}", flush=True)
        s = scenario(laws, size)
        summary = run_sweep(s, HERE / "runs" / name.replace(" ", "_"), jobs=workers,
                            kinds=(policies.FLUID, policies.CLUSTER))
        table = validate_summary(summary)
        fluid = summary[summary["kind"] == policies.FLUID].set_index(
            ["policy", "load", "class"])["gamma"]
        if size is None and fluid_exponential is None:
            fluid_exponential = fluid
        for _, row in table.iterrows():
            key = (row["policy"], row["load"], row["class"])
            rows.append({"variant": name, "policy": row["policy"], "load": row["load"],
                         "class": row["class"], "gamma": row["packet_gamma"],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                         "fluid_gamma": row["fluid_gamma"],
                         "relative_difference": row["relative_difference"],
                         "fluid_in_ci": row["fluid_in_ci"], "verdict": row["verdict"]})
            if size is not None:  # the same cluster against the exponential fluid
                target = float(fluid_exponential.loc[key])
                rows.append({**rows[-1], "variant": f"{name} v exponential fluid",
                             "fluid_gamma": target,
                             "relative_difference": (row["packet_gamma"] - target) / target,
                             "fluid_in_ci": bool(row["ci_low"] <= target <= row["ci_high"]),
                             "verdict": ""})
    results = pd.DataFrame(rows)
    results.to_csv(HERE / "results.csv", index=False)
    lines = []
    for name, part in results.groupby("variant", sort=False):
        inside = int(part["fluid_in_ci"].sum())
        close = int((part["relative_difference"].abs() <= 0.05).sum())
        worst = part.loc[part["relative_difference"].abs().idxmax()]
        gammas = part.pivot_table(index=["load", "class"], columns="policy", values="gamma")
        ordered = all(gammas.loc[(0.6, "2"), p] > gammas.loc[(0.6, "2"), "drf"]
                      for p in ("pf", "bmf"))
        laws = VARIANTS.get(name, ({}, None))[0]
        if name in VARIANTS and "tasks" not in laws:
            longest = longest_of(laws.get("duration_law", "exponential"))
            lines.append(f"{name}: E[longest of 100 durations] = {longest:.2f} d")
        lines.append(f"{name:32s} fluid in CI {inside:2d}/{len(part)}, within 5% "
                     f"{close:2d}/{len(part)}, worst {worst['relative_difference']:+.1%} "
                     f"({worst['policy']}, load {worst['load']}, class {worst['class']}); "
                     f"class 2 gains under PF and BMF: {ordered}")
    text = "\n".join(lines)
    print(text)
    (HERE / "output.txt").write_text(text + "\n")
    plot(results)


def plot(results: pd.DataFrame) -> None:
    """Cluster γ over fluid γ per class (with the interval; class colours as in every mrfq
    figure), one panel per policy, a group of bars per variant; the legend below the
    panels, clear of the bars."""
    variants = list(dict.fromkeys(results["variant"]))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), sharey=True, layout="constrained")
    top = max(1.1, float((results["ci_high"] / results["fluid_gamma"]).max()) + 0.03)
    for ax, policy in zip(axes, ("drf", "pf", "bmf"), strict=True):
        part = results[results["policy"] == policy]
        for j, cls in enumerate(("1", "2", "3")):
            rows = part[part["class"].astype(str) == cls].set_index("variant").loc[variants]
            x = [i + (j - 1) * 0.27 for i in range(len(variants))]
            ratio = rows["gamma"] / rows["fluid_gamma"]
            err = [ratio - rows["ci_low"] / rows["fluid_gamma"],
                   rows["ci_high"] / rows["fluid_gamma"] - ratio]
            ax.bar(x, ratio, width=0.27, yerr=err, color=_colour(j), capsize=1.5,
                   label=f"class {cls}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_ylim(0.6, top)
        ax.set_xticks(range(len(variants)), variants, rotation=40, ha="right", fontsize=7)
        ax.set_title(f"{policy}: cluster γ / fluid γ, load 0.6", fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel(r"cluster $\gamma$ / fluid $\gamma$ (95% CI)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3,
               fontsize=8)
    fig.savefig(HERE / "gamma.png", dpi=120)


if __name__ == "__main__":  # workers are spawned processes
    main()
