"""Fluid points by the flow-level simulator (:mod:`mrfq.fluid.flowsim`): Poisson flow
arrivals with any size law, the policy's allocation re-computed at every arrival and
completion; γ_k by the ratio estimator Σ S / Σ T over ``[fluid] replications`` runs of
``[fluid] flows`` arrivals with a confidence interval (:func:`mrfq.fluid.method.flow_point`).
Used where the Markov model does not hold (other size laws) or is too large."""

from __future__ import annotations

from mrfq import policies
from mrfq.fluid import flowsim
from mrfq.fluid.method import CONFIDENCE, WARMUP, flow_point
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

NAME = "flowlevel"
REALISATION = policies.FLUID
REPLICATED = False
PRIORITY = 1


def check(scenario: Scenario, policy: str, load: float) -> None:
    """Every fluid policy can be simulated at any stable load."""


def key_parts(scenario: Scenario, point: Point) -> dict:
    """The model, the size laws, the run lengths, the seed and the estimator."""
    cfg = scenario.fluid
    return {**model_key_parts(scenario, point.load), "method": "simulation",
            "flowsim": flowsim.FLOWSIM_VERSION, "sizes": [law.key() for law in scenario.size_laws],
            "flows": cfg.flows, "replications": cfg.replications, "seed": cfg.seed,
            "warmup": WARMUP, "confidence": CONFIDENCE, "estimator": "ratio"}


def compute(scenario: Scenario, point: Point) -> dict:
    """The flow-level fluid record of (policy, load)."""
    return flow_point(scenario, point.policy, point.load)
