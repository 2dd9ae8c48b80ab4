"""mrfq: multi-resource fair queueing — fluid model, flow-level and packet simulators
(Bonald & Roberts).

Every command-line verb is a function here with the same arguments (:mod:`mrfq.api`):
:func:`fluid`, :func:`simulate`, :func:`flows`, :func:`sweep`, :func:`validate`,
:func:`run`, :func:`plot`, :func:`plan`, :func:`allocate` and :func:`available`
(``mrfq list``)::

    import mrfq
    table = mrfq.fluid("fig1_balanced", loads=[0.5, 0.9])        # fluid γ per class
    result = mrfq.simulate("fig3_quick", "drfq", 0.5, flows=2000)  # one packet point
    report = mrfq.run("fig3_quick")                              # sweep, validate, plot
"""

import types as _types

import mrfq.fluid as _fluid_package
from mrfq.api import (
    FlowsResult,
    RunResult,
    SimulationResult,
    allocate,
    available,
    flows,
    plan,
    plot,
    run,
    simulate,
    sweep,
    validate,
)
from mrfq.api import fluid as _fluid_verb
from mrfq.errors import InputError
from mrfq.scenario import Scenario, load_scenario, scenario_from_dict


class _FluidPackage(_types.ModuleType):
    """``mrfq.fluid`` is both the fluid-model subpackage (``mrfq.fluid.markov``, …) and the
    ``fluid`` verb: calling the package runs :func:`mrfq.api.fluid`."""

    def __call__(self, *args, **kwargs):
        return _fluid_verb(*args, **kwargs)


# the subpackage keeps its attributes and submodules; only its type gains __call__, so
# `import mrfq.fluid.x` and `mrfq.fluid(...)` both work whatever the import order
_fluid_package.__class__ = _FluidPackage
_FluidPackage.__doc__ = _fluid_verb.__doc__
fluid = _fluid_package

__version__ = "0.2.0"

__all__ = ["FlowsResult", "InputError", "RunResult", "Scenario", "SimulationResult",
           "allocate", "available", "flows", "fluid", "load_scenario", "plan", "plot", "run",
           "scenario_from_dict", "simulate", "sweep", "validate", "__version__"]
