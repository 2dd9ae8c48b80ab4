"""mrfq: multi-resource fair queueing — fluid model and packet simulator (Bonald & Roberts)."""

from mrfq.errors import InputError
from mrfq.packet import SimulationResult, simulate
from mrfq.scenario import Scenario, load_scenario, scenario_from_dict

__version__ = "0.1.0"

__all__ = ["InputError", "Scenario", "SimulationResult", "load_scenario",
           "scenario_from_dict", "simulate", "__version__"]
