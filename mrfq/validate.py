"""Packet against fluid: for each packet point, the fluid γ of the policy it realises
(drfq, drfq-dovetail → drf; pf → pf; bmf → bmf), the packet γ with its CI, the relative
difference and pass/fail (pass: fluid γ inside the CI, or |relative difference| ≤ tol)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mrfq.policies import fluid_counterpart


def validate_summary(summary: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """One row per packet (policy, load, class); ``passed`` as defined above."""
    fluid = summary[summary["kind"] == "fluid"].set_index(["policy", "load", "class"])["gamma"]
    rows = []
    for _, row in summary[summary["kind"] == "packet"].iterrows():
        key = (fluid_counterpart(row["policy"]), row["load"], row["class"])
        target = float(fluid.get(key, np.nan))
        relative = (row["gamma"] - target) / target if target > 0 else np.nan
        inside = bool(row["ci_low"] <= target <= row["ci_high"])
        close = bool(abs(relative) <= tolerance)
        rows.append({"policy": row["policy"], "load": row["load"], "class": row["class"],
                     "fluid_gamma": target, "packet_gamma": row["gamma"],
                     "ci_low": row["ci_low"], "ci_high": row["ci_high"],
                     "relative_difference": relative, "fluid_in_ci": inside,
                     "passed": bool(np.isfinite(target) and (inside or close))})
    return pd.DataFrame(rows)
