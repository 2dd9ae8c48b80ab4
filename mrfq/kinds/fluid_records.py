"""What the three fluid kinds share: the part of a fluid point's key that the model
determines, and how a fluid record becomes summary rows.

A fluid record is ``{kind, policy, load, replication, method, classes, …}`` with, per
class (scenario order), γ_k, E[n_k] and a relative error estimate (the truncation error
of an exact method, the interval's half-width of a simulated one), and for a simulated
point the interval (:func:`mrfq.fluid.method.class_interval`).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mrfq import policies
from mrfq.fluid.markov import service_rates_and_variances
from mrfq.fluid.method import class_interval, fluid_method, record_method, simulated_warnings
from mrfq.kinds.replications import Stopping
from mrfq.scenario import Scenario

#: what every class of a fluid record holds (a stored file without them was edited)
RECORD_CLASS_KEYS = ("gamma", "mean_in_progress", "error_estimate")


def floats(values: ArrayLike) -> list[float]:
    """A flat list of Python floats (how arrays enter a point's key)."""
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def model_key_parts(scenario: Scenario, load: float) -> dict:
    """The fluid model of one point: requirement vectors (with their shape), class
    weights and class loads ρ_k at ``load``."""
    return {"requirements": floats(scenario.requirements),
            "shape": list(scenario.requirements.shape),
            "weights": floats(scenario.weights), "rho": floats(scenario.class_loads(load))}


def first_replications(scenario: Scenario) -> int:
    """A fluid (or cluster) point is one computation, one run."""
    return 1


def stopping(scenario: Scenario, records: list[dict], start: int | None = None,
             confidence: float = 0.95) -> Stopping:
    """A fluid (or cluster) point uses its one record."""
    return Stopping(1, 1)


def max_replications(scenario: Scenario) -> int:
    """A fluid point is one computation."""
    return 1


def prepare(chosen_policies: set[str], jobs: int = 1) -> None:
    """Nothing to compile ahead for a fluid point."""


def summary_rows(scenario: Scenario, records: list[dict],
                 fluid_records: dict | None = None) -> list[dict]:
    """One row per class of a fluid record: γ, its interval (γ itself for an exact
    method), E[n_k], the error estimate, the method and ``ci_warning`` (a simulated
    point at which some class's size law makes the intervals unreliable:
    :func:`mrfq.fluid.method.simulated_warnings`; "" otherwise)."""
    rows = []
    for record in records:
        simulated = record_method(record) == "simulation"
        warnings = simulated_warnings(scenario, record["load"])
        for k, (name, c) in enumerate(zip(scenario.class_names, record["classes"],
                                          strict=True)):
            low, high = class_interval(record, k)
            rows.append({"kind": policies.FLUID, "policy": record["policy"],
                         "load": record["load"], "class": name, "gamma": c["gamma"],
                         "ci_low": low, "ci_high": high,
                         "replications": record.get("replications", 0),
                         "flows_measured": c.get("flows_measured", 0),
                         "mean_in_progress": c["mean_in_progress"],
                         "error_estimate": c["error_estimate"],
                         "method": record_method(record),
                         "ci_warning": warnings[k] if simulated else ""})
    return rows


def size_bin_rows(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Fluid points have no per-size table."""
    return pd.DataFrame()


def fluid_reference(scenario: Scenario, policy: str, load: float) -> dict | None:
    """The Markov fluid record's classes (``gamma``, ``flow_variance``: :func:`mrfq.fluid.
    markov.markov_point`) of the fluid policy a packet ``policy`` realises, at ``load``:
    what :func:`mrfq.kinds.packet.combine_packet_records` takes the variance of γ̂_k from, as
    ``{"classes": [...]}``. None when the policy realises none, or the Markov model does
    not give that point (sizes not exponential, over the state budget, an explicit law:
    :func:`mrfq.fluid.method.fluid_method`); ``flow_variance`` NaN where the state budget
    left v_k unsettled (:func:`mrfq.fluid.markov.service_rates_and_variances`), so the
    point keeps its runs' own interval there. Solved once per process and model."""
    counterpart = policies.fluid_counterpart(policy)
    if counterpart is None:
        return None
    entry = policies.get(policies.FLUID, counterpart)
    if entry.law != policies.MARKOV_LAW or fluid_method(scenario, counterpart,
                                                        load) != "markov":
        return None
    requirements = tuple(tuple(floats(row)) for row in scenario.requirements)
    return _markov_classes(counterpart, requirements, tuple(floats(scenario.class_loads(load))),
                           tuple(floats(scenario.weights)), scenario.fluid.tolerance)


@functools.lru_cache(maxsize=64)
def _markov_classes(policy: str, requirements: tuple, loads: tuple, weights: tuple,
                    tolerance: float) -> dict:
    result, variances, _, _ = service_rates_and_variances(
        policy, np.array(requirements), np.array(loads), np.array(weights), tolerance)
    return {"classes": [{"gamma": float(g), "flow_variance": float(v)}
                        for g, v in zip(result.gamma, variances, strict=True)]}
