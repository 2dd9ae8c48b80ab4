"""Fluid model: DRF/PF/BMF allocations (BR §2–3), the Markov demand model (BR §4.1),
balanced fairness and the flow-level simulator for general flow sizes."""

from mrfq.fluid.allocators import allocate, bmf_conditions, is_pareto_efficient
from mrfq.fluid.balanced import allocate_bf, bf_service_rates
from mrfq.fluid.flowsim import flow_service_rates, simulate_flows
from mrfq.fluid.flowsim_stats import FlowLevelRun, FlowRates, flow_rates
from mrfq.fluid.markov import service_rates
from mrfq.fluid.method import fluid_curves, fluid_method, fluid_point, fluid_table
from mrfq.fluid.problem import MarkovResult

__all__ = [
    "allocate", "bmf_conditions", "is_pareto_efficient", "MarkovResult", "fluid_curves",
    "fluid_point", "fluid_table", "service_rates", "allocate_bf", "bf_service_rates",
    "FlowRates", "FlowLevelRun", "flow_rates", "flow_service_rates", "simulate_flows",
    "fluid_method",
]
