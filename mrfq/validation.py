"""Packet against fluid: each packet point's γ_k with its confidence interval against the
fluid γ_k of the policy it realises (the registry's ``realises``: drfq → drf, pf → pf,
bmf → bmf; a packet policy without a fluid counterpart is not validated).

A point passes when its interval could be computed and either contains the fluid value or
the relative difference is within the tolerance. ``verdict`` says which: ``fluid in CI``,
``within tolerance``, ``outside CI and tolerance``, ``no interval: <why>`` or ``no fluid
value``. An interval that could not be computed (too few measured flows, a NaN, an
unbounded side) fails, whatever the point estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mrfq import policies

COLUMNS = ["policy", "load", "class", "fluid_policy", "fluid_gamma", "packet_gamma",
           "ci_low", "ci_high", "relative_difference", "fluid_in_ci", "passed", "verdict"]


def _interval_problem(row: pd.Series) -> str:
    stated = row.get("ci_problem", "")
    if isinstance(stated, str) and stated:
        return stated
    low, high = row["ci_low"], row["ci_high"]
    if not (np.isfinite(low) and np.isfinite(high)):
        return "the interval has a missing or infinite bound"
    if not low > 0:
        return "the interval's lower bound is not positive"
    return ""


def validate_summary(summary: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """One row per packet (policy, load, class) whose policy has a fluid counterpart;
    ``passed`` and ``verdict`` as in the module docstring."""
    fluid = summary[summary["kind"] == policies.FLUID].set_index(
        ["policy", "load", "class"])["gamma"]
    rows = []
    for _, row in summary[summary["kind"] == policies.PACKET].iterrows():
        target_policy = policies.fluid_counterpart(row["policy"])
        if target_policy is None:
            continue
        target = float(fluid.get((target_policy, row["load"], row["class"]), np.nan))
        relative = (row["gamma"] - target) / target if target > 0 else np.nan
        problem = _interval_problem(row)
        inside = bool(not problem and row["ci_low"] <= target <= row["ci_high"])
        close = bool(abs(relative) <= tolerance)
        if not np.isfinite(target):
            verdict = "no fluid value"
        elif problem:
            verdict = f"no interval: {problem}"
        elif inside:
            verdict = "fluid in CI"
        elif close:
            verdict = "within tolerance"
        else:
            verdict = "outside CI and tolerance"
        rows.append({"policy": row["policy"], "load": row["load"], "class": row["class"],
                     "fluid_policy": target_policy, "fluid_gamma": target,
                     "packet_gamma": row["gamma"], "ci_low": row["ci_low"],
                     "ci_high": row["ci_high"], "relative_difference": relative,
                     "fluid_in_ci": inside,
                     "passed": verdict in ("fluid in CI", "within tolerance"),
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=COLUMNS)
