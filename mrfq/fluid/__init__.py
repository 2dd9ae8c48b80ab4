"""Fluid model: DRF/PF/BMF allocations (BR §2–3) and the Markov demand model (BR §4.1)."""

from mrfq.fluid.allocators import allocate, bmf_conditions, is_pareto_efficient
from mrfq.fluid.markov import MarkovResult, fluid_curves, fluid_point, fluid_table, service_rates

__all__ = [
    "allocate", "bmf_conditions", "is_pareto_efficient", "MarkovResult", "fluid_curves",
    "fluid_point", "fluid_table", "service_rates",
]
