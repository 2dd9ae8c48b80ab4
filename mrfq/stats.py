"""Statistics of packet runs (SPEC §3 Measurement): per-class service rates and CIs."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

#: below this many replications the CI uses pooled batch means instead (a t interval
#: from 2–3 replications is uselessly wide and its spread estimate unreliable)
MIN_REPLICATIONS_FOR_T = 10


def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent estimates."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    n = values.size
    if n == 0:
        return np.nan, np.nan, np.nan
    mean = float(values.mean())
    if n < 2:
        return mean, np.nan, np.nan
    half = float(sps.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half, mean + half


def in_progress_average(arrival: np.ndarray, completion: np.ndarray, start: float,
                        end: float) -> float:
    """Time-average number of the given flows in progress over [start, end]."""
    overlap = np.clip(np.minimum(completion, end) - np.maximum(arrival, start), 0.0, None)
    return float(overlap.sum() / (end - start)) if end > start else np.nan


def replication_table(arrival, completion, flow_class, size, class_names, class_loads,
                      mean_size: float, warmup: float, batches: int) -> pd.DataFrame:
    """Per-class estimates from one replication's flow records.

    Measured flows: arrival index ≥ ⌊warmup · flows⌋. γ_k = m / E[T_k] (SPEC §4), the ratio
    estimator Σ N / Σ T, the time-average number in progress over the measured arrival
    window [first, last measured arrival] (all flows count) and Little's-law γ_k = ρ_k /
    E[n_k]. ``batch_sojourns`` are mean sojourn times over consecutive batches of measured
    flows (arrival order), for a batch-means interval when there is a single replication.
    """
    flows = arrival.shape[0]
    first = int(warmup * flows)
    start, end = float(arrival[first]), float(arrival[-1])
    sojourn = completion - arrival
    rows = []
    for k, name in enumerate(class_names):
        mine = flow_class == k
        measured = mine.copy()
        measured[:first] = False
        T = sojourn[measured]
        count = int(T.size)
        mean_T = float(T.mean()) if count else np.nan
        n_avg = in_progress_average(arrival[mine], completion[mine], start, end)
        idx = np.flatnonzero(measured)
        batch = []
        if count >= batches:
            for part in np.array_split(idx, batches):
                batch.append(float(sojourn[part].mean()))
        rows.append({
            "class": name,
            "flows_measured": count,
            "mean_sojourn": mean_T,
            "gamma": mean_size / mean_T if count else np.nan,
            "ratio_estimate": float(size[measured].sum() / T.sum()) if count else np.nan,
            "mean_in_progress": n_avg,
            "little_gamma": class_loads[k] / n_avg if n_avg > 0 else np.nan,
            "batch_sojourns": batch,
        })
    return pd.DataFrame(rows)


def combine_replications(tables: list[pd.DataFrame], mean_size: float,
                         confidence: float = 0.95) -> pd.DataFrame:
    """Per-class summary over replications.

    γ_k = m / E[T_k] with E[T_k] pooled over all measured flows. The interval is a
    Student-t interval for E[T_k] over independent units — the replications when there
    are at least :data:`MIN_REPLICATIONS_FOR_T`, otherwise the consecutive batches of
    every replication pooled (``ci_method``) — mapped through the decreasing function
    m / T, so it always brackets γ_k.
    """
    rows = []
    for name in tables[0]["class"]:
        per = [t[t["class"] == name].iloc[0] for t in tables]
        counts = np.array([p["flows_measured"] for p in per], dtype=np.float64)
        sojourns = np.array([p["mean_sojourn"] for p in per])
        ok = counts > 0
        pooled = float((counts[ok] * sojourns[ok]).sum() / counts[ok].sum()) if ok.any() \
            else np.nan
        if len(per) >= MIN_REPLICATIONS_FOR_T:
            units, method = sojourns, "replications"
        else:  # too few replications for a trustworthy spread: pool their batches
            units = np.concatenate([np.asarray(p["batch_sojourns"], dtype=float)
                                    for p in per])
            method = "batch-means"
        _, low_T, high_T = t_interval(units, confidence)
        rows.append({
            "class": name,
            "gamma": mean_size / pooled,
            "ci_low": mean_size / high_T if high_T > 0 else 0.0,
            "ci_high": mean_size / low_T if low_T > 0 else np.inf,
            "ci_method": method,
            "flows_measured": int(counts.sum()),
            "ratio_estimate": float(np.mean([p["ratio_estimate"] for p in per])),
            "mean_in_progress": float(np.mean([p["mean_in_progress"] for p in per])),
            "little_gamma": float(np.mean([p["little_gamma"] for p in per])),
            "mean_sojourn": pooled,
        })
    return pd.DataFrame(rows)
