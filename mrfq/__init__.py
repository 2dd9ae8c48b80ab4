"""mrfq: multi-resource fair queueing — fluid model, flow-level and packet simulators
(Bonald & Roberts).

Every command-line verb is a function here with the same arguments (:mod:`mrfq.api`):
:func:`fluid`, :func:`simulate`, :func:`flows`, :func:`sweep`, :func:`validate`,
:func:`run`, :func:`plot`, :func:`plan`, :func:`allocate`, :func:`cluster` and
:func:`available`
(``mrfq list``)::

    import mrfq
    table = mrfq.fluid("fig1_balanced", loads=[0.5, 0.9])        # fluid γ per class
    result = mrfq.simulate("fig3_quick", "drfq", 0.5, flows=2000)  # one packet point
    report = mrfq.run("fig3_quick")                              # sweep, validate, plot
"""
# ruff: noqa: E402 (the package's imports follow the interrupt handler they run under)

import inspect as _inspect
import os as _os
import signal as _signal
import sys as _sys
import types as _types


def _quiet_interrupt(signum, frame):  # Ctrl-C while the command line imports (~1.5 s)
    _sys.stderr.write("\ninterrupted\n")
    _sys.stderr.flush()
    _os._exit(130)  # (no clean-up of half-imported modules to run)


# the `mrfq` script, or `python -m mrfq[.cli]` while the module is located: a Ctrl-C in
# the imports below is the command's "interrupted", not a traceback through NumPy/SciPy
# (not in a worker process, spawned with the same argv: the command says it once)
_COMMAND_LINE = _sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0] if _sys.argv
                                                              else "") == "mrfq"
_WORKER = "multiprocessing" in _sys.modules and \
    _sys.modules["multiprocessing"].parent_process() is not None
if _COMMAND_LINE and not _WORKER and \
        _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _quiet_interrupt)

try:
    import mrfq.cluster as _cluster_package
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
    from mrfq.api import cluster as _cluster_verb
    from mrfq.api import fluid as _fluid_verb
    from mrfq.errors import InputError
    from mrfq.scenario import Scenario, load_scenario, scenario_from_dict
finally:  # imported (or failed to): Ctrl-C as usual
    if _signal.getsignal(_signal.SIGINT) is _quiet_interrupt:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def _callable_package(package: _types.ModuleType, verb) -> _types.ModuleType:
    """``mrfq.fluid`` and ``mrfq.cluster`` are both subpackages (``mrfq.fluid.markov``,
    ``mrfq.cluster.kernel``, …) and verbs: calling the package runs the verb of
    :mod:`mrfq.api`. Only the package's type gains ``__call__``: its attributes and
    submodules stay as they are, so ``import mrfq.fluid.x`` and ``mrfq.fluid(...)`` both
    work whatever the import order."""

    def call(self, *args, **kwargs):
        return verb(*args, **kwargs)

    package.__class__ = type(f"_{verb.__name__.title()}Package", (_types.ModuleType,),
                             {"__call__": call, "__doc__": verb.__doc__})
    # inspect.signature and help() read the instance: the verb's signature, and its
    # docstring after the package's
    package.__signature__ = _inspect.signature(verb)
    package.__doc__ = (f"{package.__doc__}\n\nCalled as mrfq.{verb.__name__}"
                       f"{package.__signature__}:\n\n{_inspect.cleandoc(verb.__doc__)}")
    return package


fluid = _callable_package(_fluid_package, _fluid_verb)
cluster = _callable_package(_cluster_package, _cluster_verb)

__version__ = "0.2.0"

__all__ = ["FlowsResult", "InputError", "RunResult", "Scenario", "SimulationResult",
           "allocate", "available", "cluster", "flows", "fluid", "load_scenario", "plan",
           "plot", "run", "scenario_from_dict", "simulate", "sweep", "validate",
           "__version__"]
