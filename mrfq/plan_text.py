"""What ``mrfq plan`` prints: the run-length advisor's table (:func:`mrfq.advisor.advise`)
as a console table with the sweep's wall time, and its warnings one line each."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mrfq.advisor import sweep_wall_time


def _duration(seconds: float) -> str:
    if not np.isfinite(seconds):
        return "unknown"
    if seconds < 120:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def advice_text(table: pd.DataFrame, jobs: int = 1) -> str:
    """The advisor's table (:func:`advise`) for a console: per (policy, load, class) the
    pilot's γ, the basis and the σ_rel the need follows from, what is needed (flows of
    one run, or replications), the binding class (*), the factor range of the need and
    the half-width of the run as
    configured; then the sweep's wall time on ``jobs`` cores and what the estimate rests
    on."""
    need = [f"{f:.3g} flows" if mode == "one run" else f"{r:.0f} reps"
            for f, r, mode in zip(table["flows_needed"], table["replications_needed"],
                                  table["mode"], strict=True)]
    # the σ_rel the need was computed from: the model's on a model basis
    sigma = np.where(table["basis"] == "model", table["model_sigma_rel"], table["sigma_rel"])
    shown = table.assign(need=need, bind=np.where(table["binding"], "*", ""), sigma=sigma,
                         factor=[f"x{lo:.2g}-{hi:.2g}" if np.isfinite(hi) else "unknown"
                                 for lo, hi in zip(table["factor_low"], table["factor_high"],
                                                   strict=True)])
    columns = ["policy", "load", "class", "pilot_gamma", "basis", "sigma", "need",
               "bind", "factor", "half_width_configured"]
    text = shown[columns].to_string(index=False, float_format=lambda v: f"{v:.4g}")
    h = float(table["target_precision"].iloc[0])
    low, high = int(table["pilot_flows"].min()), int(table["pilot_flows"].max())
    pilots = f"{low}" if low == high else f"{low}-{high}"
    return "\n".join([
        text,
        f"target: 95% half-width {h:.3g} x gamma, every class (* the binding class); "
        f"estimated sweep wall time on {jobs} job(s): "
        f"{_duration(sweep_wall_time(table, jobs))} (as configured: "
        f"{_duration(sweep_wall_time(table, jobs, configured=True))}; packet points only, "
        "compilation excluded, idle cores)",
        f"an estimate from pilots of {pilots} flows: the need is uncertain "
        "by the factor shown (95% range; basis pilot: from the pilot's batches and the "
        "relaxation times it spans, a longer --pilot-flows narrows it; basis model: the "
        "point reports the fluid model's variance, and only gamma's own spread is left)"])


def advice_warnings(table: pd.DataFrame) -> list[str]:
    """One line per (policy, load, class) whose pilot estimate is only a lower bound, whose
    run may or may not keep the fluid model's interval, or whose need exceeds the
    replication budget ``max_replications``."""
    return [f"{p} at load {v:g}, class {k}: {problem}"
            for column in ("pilot_problem", "basis_problem", "budget_problem")
            for p, v, k, problem in zip(table["policy"], table["load"], table["class"],
                                        table[column], strict=True) if problem]
