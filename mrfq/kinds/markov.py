"""Fluid points by the Markov demand model (BR §4.1): exponential sizes, Poisson
arrivals, the policy's allocation φ(n) in every state; γ_k = ρ_k / E[n_k] from the
stationary law solved on a truncated state space, with a truncation-error estimate
(:func:`mrfq.fluid.markov.markov_point`). Exact for exponential sizes only."""

from __future__ import annotations

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid.markov import markov_point, solver_version
from mrfq.fluid.markov_solver import MAX_STATES
from mrfq.fluid.method import fluid_method, predicted_states
from mrfq.kinds.fluid_records import (  # noqa: F401 - the shared part of the kind's face
    RECORD_CLASS_KEYS,
    first_replications,
    max_replications,
    model_key_parts,
    prepare,
    size_bin_rows,
    stopping,
    summary_rows,
)
from mrfq.kinds.point import Point
from mrfq.scenario import Scenario

NAME = "markov"
REALISATION = policies.FLUID
REPLICATED = False
PRIORITY = 1


def check(scenario: Scenario, policy: str, load: float) -> None:
    """InputError, before any work, when the Markov method is forced on a size law it does
    not hold for, or on a point whose truncation is predicted beyond the solver's state
    budget (:func:`mrfq.fluid.method.predicted_states`; ``auto`` simulates such points)."""
    if fluid_method(scenario, policy, load) != "markov":
        return
    entry = policies.get(policies.FLUID, policy)
    if scenario.fluid.method == "markov" and entry.law != policies.EXPLICIT_LAW:
        states = predicted_states(scenario.requirements, scenario.class_loads(load),
                                  scenario.fluid.tolerance)
        if states > MAX_STATES:
            raise InputError(f"the Markov solver would need about {states:,} states at load "
                             f"{load:g} (its budget: {MAX_STATES:,}): relax the tolerance, "
                             "lower the load or use 'auto' (simulates such points) or "
                             "'simulation'", "fluid.method", scenario.source)


def key_parts(scenario: Scenario, point: Point) -> dict:
    """The model, the truncation tolerance and the solver's version."""
    return {**model_key_parts(scenario, point.load),
            "tolerance": scenario.fluid.tolerance, "solver": solver_version(point.policy)}


def compute(scenario: Scenario, point: Point) -> dict:
    """The Markov fluid record of (policy, load)."""
    return markov_point(scenario, point.policy, point.load)
