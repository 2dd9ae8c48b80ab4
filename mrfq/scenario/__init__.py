"""Scenarios (SPEC §5): what a scenario file says, validated, and what follows from it.

* :mod:`mrfq.scenario.config` — the section records :class:`TrafficClass`,
  :class:`FluidConfig`, :class:`PacketConfig` (plain data with defaults);
* :mod:`mrfq.scenario.checks` — validating one section into its record
  (:func:`check_init` and the field checks);
* :mod:`mrfq.scenario.cluster` — the ``[cluster]`` section (:func:`parse_cluster`);
* :mod:`mrfq.scenario.network` — ``[routers]`` and class routes (SPEC §3.2), validated
  and normalised (the defaults are the tandem);
* :mod:`mrfq.scenario.model` — :class:`Scenario`: requirements, weights, loads (BR eq. 8),
  the stored dict, validated copies;
* :mod:`mrfq.scenario.files` — a whole scenario from a dict (:func:`scenario_from_dict`)
  or a TOML file (:func:`load_scenario`), and the scenarios shipped in ``mrfq/scenarios/``.

Each module imports only the ones above it in this list, so there is no import circle;
every name is re-exported here, so ``from mrfq.scenario import ...`` is the way in.
"""

from mrfq.scenario.checks import check_init
from mrfq.scenario.config import (
    FLUID_METHODS,
    PACKET_INITS,
    VIRTUAL_TIMES,
    ClusterConfig,
    FluidConfig,
    PacketConfig,
    TrafficClass,
)
from mrfq.scenario.files import (
    PACKAGED_SCENARIOS,
    load_scenario,
    packaged_scenarios,
    scenario_from_dict,
    scenario_path,
)
from mrfq.scenario.model import Scenario, size_spec

__all__ = [
    "FLUID_METHODS", "PACKAGED_SCENARIOS", "PACKET_INITS", "VIRTUAL_TIMES", "ClusterConfig",
    "FluidConfig",
    "PacketConfig",
    "Scenario", "TrafficClass", "check_init", "load_scenario", "packaged_scenarios",
    "scenario_from_dict", "scenario_path", "size_spec",
]
