"""Packet against fluid: each packet point's γ_k with its confidence interval against the
fluid γ_k of the policy it realises (the registry's ``realises``: drfq → drf, pf → pf,
bmf → bmf; a packet policy without a fluid counterpart is not validated).

A point passes when its interval could be computed and either contains the fluid value or
the relative difference is within the tolerance. ``verdict`` says which: ``fluid in CI``,
``within joint CI`` (below), ``within tolerance``, ``outside CI and tolerance``, ``no
interval: <why>`` or ``no fluid value``. An interval that could not be computed (too few
measured flows, a NaN, an unbounded side) fails, whatever the point estimate.

**A simulated fluid value** (``method`` simulation: the flow-level simulator, e.g. for
Pareto sizes) has its own interval. Both estimates are independent (different random
streams), so the check is on their difference d = γ_packet − γ_fluid: it passes as
``within joint CI`` when |d| ≤ √(h_p² + h_f²), with h_p and h_f the half-widths of the
two intervals on the sides facing each other (for d > 0 the packet interval's lower side
and the fluid interval's upper side) — the normal-approximation interval of d at the
same confidence. With an exact fluid value (h_f = 0) this is "fluid in CI". A simulated
fluid value without a finite interval fails (``no interval: fluid ...``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mrfq import policies

COLUMNS = ["policy", "load", "class", "fluid_policy", "fluid_gamma", "fluid_method",
           "fluid_ci_low", "fluid_ci_high", "packet_gamma", "ci_low", "ci_high",
           "relative_difference", "fluid_in_ci", "passed", "verdict"]


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


def _fluid_values(summary: pd.DataFrame) -> pd.DataFrame:
    """Fluid rows indexed by (policy, load, class): gamma, method, ci_low, ci_high (an
    exact value's interval is the value itself; summaries from before the method choice
    have no method and NaN bounds)."""
    fluid = summary[summary["kind"] == policies.FLUID].copy()
    if "method" not in fluid:
        fluid["method"] = "markov"
    fluid["method"] = fluid["method"].fillna("markov")
    exact = fluid["method"] != "simulation"
    for side in ("ci_low", "ci_high"):
        fluid.loc[exact, side] = fluid.loc[exact, "gamma"]
    return fluid.set_index(["policy", "load", "class"])[["gamma", "method", "ci_low",
                                                         "ci_high"]]


def _joint_inside(row: pd.Series, target: float, low: float, high: float) -> bool:
    """|γ_p − γ_f| within √(h_p² + h_f²), the half-widths on the facing sides."""
    difference = row["gamma"] - target
    if difference >= 0:
        packet_half, fluid_half = row["gamma"] - row["ci_low"], high - target
    else:
        packet_half, fluid_half = row["ci_high"] - row["gamma"], target - low
    return bool(abs(difference) <= np.hypot(packet_half, fluid_half))


def validate_summary(summary: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """One row per packet (policy, load, class) whose policy has a fluid counterpart;
    ``passed`` and ``verdict`` as in the module docstring."""
    fluid = _fluid_values(summary)
    rows = []
    for _, row in summary[summary["kind"] == policies.PACKET].iterrows():
        target_policy = policies.fluid_counterpart(row["policy"])
        if target_policy is None:
            continue
        key = (target_policy, row["load"], row["class"])
        found = key in fluid.index
        target = float(fluid.loc[key, "gamma"]) if found else np.nan
        method = fluid.loc[key, "method"] if found else ""
        low = float(fluid.loc[key, "ci_low"]) if found else np.nan
        high = float(fluid.loc[key, "ci_high"]) if found else np.nan
        simulated = method == "simulation"
        relative = (row["gamma"] - target) / target if target > 0 else np.nan
        problem = _interval_problem(row)
        if not problem and simulated and not (np.isfinite(low) and np.isfinite(high)):
            problem = "fluid value (simulated) has no finite interval"
        if problem:
            inside = False
        elif simulated:
            inside = _joint_inside(row, target, low, high)
        else:
            inside = bool(row["ci_low"] <= target <= row["ci_high"])
        close = bool(abs(relative) <= tolerance)
        if not np.isfinite(target):
            verdict = "no fluid value"
        elif problem:
            verdict = f"no interval: {problem}"
        elif inside:
            verdict = "within joint CI" if simulated else "fluid in CI"
        elif close:
            verdict = "within tolerance"
        else:
            verdict = "outside CI and tolerance"
        rows.append({"policy": row["policy"], "load": row["load"], "class": row["class"],
                     "fluid_policy": target_policy, "fluid_gamma": target,
                     "fluid_method": method, "fluid_ci_low": low, "fluid_ci_high": high,
                     "packet_gamma": row["gamma"], "ci_low": row["ci_low"],
                     "ci_high": row["ci_high"], "relative_difference": relative,
                     "fluid_in_ci": inside,
                     "passed": verdict in ("fluid in CI", "within joint CI",
                                           "within tolerance"),
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=COLUMNS)
