"""mrfq: multi-resource fair queueing — fluid model and packet simulator (Bonald & Roberts).

The pipeline is a Python API: :func:`run` (sweep + validate + plots), :func:`sweep`,
:func:`validate`, :func:`plot`, and :func:`simulate` for one packet point.
"""

from mrfq.errors import InputError
from mrfq.pipeline import RunResult, plot, run, sweep, validate
from mrfq.scenario import Scenario, load_scenario, scenario_from_dict
from mrfq.simulation import SimulationResult, simulate

__version__ = "0.2.0"

__all__ = ["InputError", "RunResult", "Scenario", "SimulationResult", "load_scenario",
           "plot", "run", "scenario_from_dict", "simulate", "sweep", "validate",
           "__version__"]
