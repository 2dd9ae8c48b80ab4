"""The committed precise Figure 3 (``reproduction/fig3_precise``) with today's γ intervals
(issue 25): its packet summary rows (γ and measured flows, unchanged: the precision rule
stops on the runs' own intervals) get the fluid model's variance
(:func:`mrfq.stats.with_fluid_variance`, the Markov fluid point solved by
:func:`mrfq.kinds.packet.fluid_reference`), and each point is checked as ``validate``
does: the fluid γ inside the interval, or within 5% of it.

    python benchmarks/precise_fig3_fluid_variance.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mrfq.kinds.packet import fluid_reference
from mrfq.stats import with_fluid_variance
from mrfq.sweeps import stored_scenario

TOLERANCE = 0.05


def main() -> None:
    results = Path(__file__).resolve().parent.parent / "reproduction" / "fig3_precise"
    scenario = stored_scenario(results)
    summary = pd.read_csv(results / "summary.csv")
    rows = []
    for (policy, load), group in summary[summary["kind"] == "packet"].groupby(
            ["policy", "load"], sort=False):
        fluid = np.array([c["gamma"] for c in fluid_reference(scenario, policy, load)
                          ["classes"]])
        variance = np.array([c["flow_variance"] for c in fluid_reference(
            scenario, policy, load)["classes"]])
        table = with_fluid_variance(group.reset_index(drop=True), fluid, variance)
        for k, row in table.iterrows():
            rows.append({"policy": policy, "load": load, "class": row["class"],
                         "gamma": row["gamma"], "fluid": fluid[k],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                         "fluid_in_ci": row["ci_low"] <= fluid[k] <= row["ci_high"],
                         "within_tolerance": abs(row["gamma"] / fluid[k] - 1) <= TOLERANCE,
                         "variance_ratio": row["variance_ratio"]})
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    passed = table["fluid_in_ci"] | table["within_tolerance"]
    print(f"fluid in CI: {int(table['fluid_in_ci'].sum())}/{len(table)}; "
          f"pass (in CI or within {TOLERANCE:.0%}): {int(passed.sum())}/{len(table)}")


if __name__ == "__main__":
    main()
