"""Allocation lab: static multi-resource allocation policies of the seed papers on one API
(DRF and online DRF, asset fairness, CEEI, PF, BMF, DRFH and its First-/Best-Fit
heuristics, per-server DRF, TSF, BAA/IBAA) with property checkers."""

from mrfq.allocation.policies import POLICIES, allocate
from mrfq.allocation.problem import Allocation, Problem, load_problem
from mrfq.allocation.properties import (
    check_all,
    dedicated_weights,
    envy_free,
    pareto_optimal,
    sharing_incentive,
    strategy_proofness_probe,
)

__all__ = [
    "POLICIES", "Allocation", "Problem", "allocate", "check_all", "dedicated_weights",
    "envy_free",
    "load_problem", "pareto_optimal", "sharing_incentive", "strategy_proofness_probe",
]
