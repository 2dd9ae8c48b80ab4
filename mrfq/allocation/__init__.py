"""Allocation lab: static multi-resource allocation policies of the seed papers on one API
(DRF and online DRF, asset fairness, CEEI, PF, BMF, DRFH and its First-/Best-Fit
heuristics, per-server DRF, TSF, BAA/IBAA) with property checkers.

Modules, in dependency order: ``problem`` (Problem, Allocation), ``policies`` (the rules and
:data:`POLICIES`), ``properties`` (checkers; they take a rule, never a name), ``files``
(problem files), ``report`` (what ``mrfq allocate`` prints and writes).
"""

from mrfq.allocation.files import load_problem, problem_from_dict
from mrfq.allocation.policies import POLICIES, allocate
from mrfq.allocation.problem import Allocation, Problem
from mrfq.allocation.properties import (
    Verdict,
    bottleneck_fairness,
    check_all,
    dedicated_weights,
    envy_free,
    pareto_optimal,
    population_monotonicity,
    sharing_incentive,
    single_resource_fairness,
    strategy_proofness_probe,
)
from mrfq.allocation.report import AllocationReport, allocation_report

__all__ = [
    "POLICIES", "Allocation", "AllocationReport", "Problem", "Verdict", "allocate",
    "allocation_report", "bottleneck_fairness", "check_all", "dedicated_weights",
    "envy_free", "load_problem", "population_monotonicity", "single_resource_fairness",
    "pareto_optimal", "problem_from_dict", "sharing_incentive", "strategy_proofness_probe",
]
