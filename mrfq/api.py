"""One Python function per command-line verb, with the same arguments and defaults.

============================  =============================================================
``mrfq fluid SCENARIO``       :func:`mrfq.fluid` → the fluid γ table (DataFrame)
``mrfq simulate SCENARIO``    :func:`mrfq.simulate` → :class:`mrfq.SimulationResult`
``mrfq flows SCENARIO``       :func:`mrfq.flows` → :class:`FlowsResult`
``mrfq sweep SCENARIO``       :func:`mrfq.sweep` → the summary (DataFrame)
``mrfq validate RESULTS``     :func:`mrfq.validate` → the validation table (DataFrame)
``mrfq run [SCENARIO]``       :func:`mrfq.run` → :class:`mrfq.RunResult`
``mrfq plot [SOURCES]``       :func:`mrfq.plot` → the files written
``mrfq plan SCENARIO``        :func:`mrfq.plan` → the run-length table (DataFrame)
``mrfq allocate PROBLEM``     :func:`mrfq.allocate` → :class:`AllocationReport`
``mrfq cluster SCENARIO``     :func:`mrfq.cluster` → :class:`mrfq.RunResult`
``mrfq list``                 :func:`mrfq.available` → DataFrames of what is packaged
============================  =============================================================

A SCENARIO is a :class:`mrfq.Scenario`, a dict (the TOML file's content), a path, or the
name of a packaged scenario; a PROBLEM a :class:`mrfq.allocation.Problem`, a path or a
packaged name. ``progress=True`` draws
the command line's progress line on an interactive stderr (nothing in a log or a CI job);
a callable ``progress(done, total)`` gets the counts instead. Bad input raises
:class:`mrfq.InputError`, whose message is the command line's one-line error.

``list`` is a Python builtin, so its verb is :func:`available` here.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mrfq import arguments, io, pipeline
from mrfq import policies as registry
from mrfq.advisor import advise, sweep_wall_time
from mrfq.allocation import AllocationReport, Problem, allocation_report
from mrfq.allocation.files import packaged_problems
from mrfq.errors import InputError
from mrfq.io import check_figure_formats as check_formats
from mrfq.pipeline import FlowsResult, RunResult, scenario_of
from mrfq.progress import ProgressArg, progress_callback
from mrfq.scenario import Scenario, load_scenario, packaged_scenarios
from mrfq.simulation import SimulationResult
from mrfq.simulation import simulate as _simulate
from mrfq.sizes import DISTRIBUTIONS
from mrfq.validation import check_tolerance
from mrfq.workloads import BUNDLED

__all__ = ["FlowsResult", "RunResult", "SimulationResult", "allocate", "available",
           "cluster", "fluid", "flows", "plan", "plot", "run", "simulate", "sweep", "validate"]

ScenarioArg = Scenario | dict | str | Path
#: the validation's default tolerance: the relative difference from the fluid γ that
#: passes outside the interval (None means it too)
TOLERANCE = 0.05


def _modelled(scenario: ScenarioArg) -> Scenario:
    """The scenario (:func:`mrfq.pipeline.scenario_of`) of a verb that needs classes and
    a load axis: a trace scenario has neither (InputError naming ``cluster.trace``); None
    is refused (only :func:`run` has a default scenario)."""
    if scenario is None:
        raise InputError("must be given (a Scenario, a dict, a file or a packaged name)",
                         "scenario")
    scenario = scenario_of(scenario)
    if scenario.cluster.trace:
        raise InputError("a trace scenario has no classes or load axis: run it with mrfq "
                         "cluster", "cluster.trace", scenario.source)
    return scenario


def fluid(scenario: ScenarioArg, results_dir: str | Path | None = None, *,
          policies: Iterable[str] | None = None, loads: Iterable[float] | None = None,
          tolerance: float | None = None, method: str | None = None,
          jobs: int | None = None, scheduler: str | None = None,
          progress: ProgressArg = False,
          log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Fluid service rates γ_k (work per unit time, BR §4.1 eq. 5) of every (policy,
    load) of ``scenario``: one row per (policy, load, class) with the method that solved
    it and its interval (equal to γ for the exact Markov solution).

    ``results_dir`` caches the points (a second call reuses them; ``log``, a function of
    one string, is told how many); without it they are computed in a temporary directory
    that is removed, so nothing is left behind. ``jobs``: worker processes (default: all
    cores), or ``scheduler``: a Dask scheduler's address, whose workers run the points
    instead (not both)."""
    scenario = _modelled(scenario)
    results_dir = arguments.path(results_dir, "results_dir")
    policies, loads = arguments.names(policies, "policies"), arguments.numbers(loads, "loads")
    tolerance = arguments.real(tolerance, "tolerance")
    jobs = arguments.jobs(jobs, scheduler=scheduler)
    callback, log = progress_callback(progress, "fluid"), arguments.function(log, "log")
    if results_dir is not None:
        return pipeline.fluid(scenario, results_dir, policies=policies, loads=loads,
                              tolerance=tolerance, method=method, jobs=jobs,
                              scheduler=scheduler, progress=callback, log=log)
    with tempfile.TemporaryDirectory(prefix="mrfq-fluid-") as scratch:
        return pipeline.fluid(scenario, scratch, policies=policies, loads=loads,
                              tolerance=tolerance, method=method, jobs=jobs,
                              scheduler=scheduler, progress=callback, log=log)


def simulate(scenario: ScenarioArg, policy: str, load: float, seed: int | None = None, *,
             progress: ProgressArg = False, **overrides: Any) -> SimulationResult:
    """Packet simulation of ``scenario`` at one value ``load`` of its load axis under
    ``policy``: its replications combined as in a sweep (γ_k in work units per time
    unit, comparable with :func:`fluid`). ``overrides``: the ``[packet]`` values of
    :func:`mrfq.simulation.simulate` (flows, mean_size, window, replications, warmup,
    init, delta, virtual_time, fq_resource, batches, precision, max_replications, debug,
    confidence); an unknown one is an InputError listing them."""
    known = set(inspect.signature(_simulate).parameters) - {"scenario", "policy", "load",
                                                             "seed", "progress"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(f"unknown keyword '{unknown[0]}' (known: {', '.join(sorted(known))})",
                         unknown[0])
    return _simulate(_modelled(scenario), policy, load, seed,
                     progress=progress_callback(progress, f"simulate {policy}"), **overrides)


def flows(scenario: ScenarioArg, results_dir: str | Path | None = None, *,
          policies: Iterable[str] | None = None, seed: int | None = None) -> FlowsResult:
    """The scenario's explicit flows (``[[flows]]``) under each packet policy: per-flow
    records, the per-interval service timeline with each flow's fair dominant share, and
    the files written into ``results_dir`` (default ``results/<name>``)."""
    return pipeline.flows(_modelled(scenario), arguments.path(results_dir, "results_dir"),
                          policies=arguments.names(policies, "policies"),
                          seed=arguments.count(seed, "seed", 0))


def sweep(scenario: ScenarioArg, results_dir: str | Path | None = None, *,
          jobs: int | None = None, scheduler: str | None = None,
          precision: float | None = None, max_replications: int | None = None,
          progress: ProgressArg = False,
          log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Every missing point of ``scenario`` (fluid curves and packet replications) into
    ``results_dir`` (default ``results/<name>``; resumable); returns the summary. ``log``,
    a function of one string (e.g. ``print``), gets what the command line prints besides
    the table: the points already done and to compute, points whose precision target
    ran out of replications."""
    scenario = _modelled(scenario)
    results_dir = arguments.path(results_dir, "results_dir")
    return pipeline.sweep(scenario, results_dir or pipeline.default_results_dir(scenario),
                          jobs=arguments.jobs(jobs, scheduler=scheduler), scheduler=scheduler,
                          precision=arguments.real(precision, "precision"),
                          max_replications=arguments.count(max_replications,
                                                           "max_replications"),
                          progress=progress_callback(progress, "sweep"),
                          log=arguments.function(log, "log"))


def validate(results: pd.DataFrame | str | Path, tolerance: float = TOLERANCE,
             scenario: ScenarioArg | None = None) -> pd.DataFrame:
    """Every packet point of a results directory (or a summary table) against the fluid
    model it realises: one row per (policy, load, class) with ``passed`` and ``verdict``.
    ``scenario``: the one the table comes from (default: a directory's own; a table has
    none): its known limitations are named, its classes without load left out."""
    if not isinstance(results, pd.DataFrame):
        if results is None:
            raise InputError("must be a results directory or a summary table, got None",
                             "results")
        results = arguments.path(results, "results")
    return pipeline.validate(results, arguments.real(tolerance, "tolerance", TOLERANCE),
                             None if scenario is None else _modelled(scenario))


def run(scenario: ScenarioArg | None = None, results_dir: str | Path | None = None, *,
        jobs: int | None = None, scheduler: str | None = None, tolerance: float = TOLERANCE,
        precision: float | None = None, max_replications: int | None = None,
        formats: Sequence[str] | str | None = None,
        progress: ProgressArg = False, log: Callable[[str], None] | None = None) -> RunResult:
    """The main job: sweep, validation and figures of ``scenario`` (default: the packaged
    ``fig3_quick``, BR Figure 3 at reduced scale) into ``results_dir``; ``formats``: the
    figures' file types (default PNG and PDF); ``log``: as in :func:`sweep`."""
    return pipeline.run(None if scenario is None else _modelled(scenario),
                        arguments.path(results_dir, "results_dir"),
                        jobs=arguments.jobs(jobs, scheduler=scheduler), scheduler=scheduler,
                        tolerance=arguments.real(tolerance, "tolerance", TOLERANCE),
                        precision=arguments.real(precision, "precision"),
                        max_replications=arguments.count(max_replications,
                                                         "max_replications"),
                        formats=formats, progress=progress_callback(progress, "sweep"),
                        log=arguments.function(log, "log"))


def plot(*sources: str | Path | pd.DataFrame, output: str | Path | None = None,
         formats: Sequence[str] | str | None = None, jobs: int | None = None,
         progress: ProgressArg = False) -> list[Path]:
    """Draw the figures of each source: a results directory of :func:`sweep`/:func:`run`
    (Figure 3 layout and the fluid panels), a directory of :func:`flows` (dominant share
    over time), a fluid table from :func:`fluid` as a CSV file or a DataFrame (Figure 1/2
    layout; a DataFrame needs ``output``). With no source: BR Figures 1 and 2 into
    the directory ``output`` (default ``plots/``; their fluid curves are swept, cached,
    under ``results/``). ``formats``:
    the file types (default: the suffix of ``output``, else PNG and PDF). ``output`` names
    the first figure of the first source (a results directory adds ``<stem>_delays``,
    ``<stem>_fluid`` and, for a network, ``<stem>_network`` beside it); the second
    source's are ``<stem>_2…``, and so on, so no source overwrites another's. Returns
    the files written."""
    chosen = check_formats(formats) if formats is not None else None
    output = arguments.path(output, "output")
    if not sources:
        return pipeline.paper_fluid_figures(output or "plots", jobs=arguments.jobs(jobs),
                                            formats=chosen,
                                            progress=progress_callback(progress, "fluid"))
    if output is not None:
        io.check_writable(output, "output")  # (its siblings <stem>_2... share its folder)
    drawn = [_plot_source(source, _numbered(output, number))
             for number, source in enumerate(sources, start=1)]
    for _, _, _, folder in drawn:  # every source read and checked, every folder writable,
        if folder is not None:     # before any figure is drawn
            io.check_writable_dir(folder)
    written: list[Path] = []
    for source, target, name, _ in drawn:
        if isinstance(source, pd.DataFrame):
            written += pipeline.plot_fluid_frame(source, target, name, formats=chosen)
        else:
            written += pipeline.plot(source, target, chosen)
    return written


def _numbered(output: str | Path | None, number: int) -> Path | None:
    """Source ``number``'s output name: ``output`` for the first, ``<stem>_<number>``
    (with ``output``'s figure suffix, if it has one) for the others, so that no source
    overwrites another's figures; a suffix naming no figure format is part of the stem."""
    if output is None or number == 1:
        return None if output is None else Path(output)
    stem = io.figure_stem(output)
    suffix = Path(output).suffix if stem != Path(output) else ""
    return stem.with_name(f"{stem.name}_{number}{suffix}")


#: what a results directory :func:`plot` draws holds (a sweep's, flows', a trace's)
_DRAWABLE = (pipeline.SCENARIO_FILE, pipeline.TIMELINE_FILE, pipeline.TRACE_FILE)


def _plot_source(source: Any, target: Path | None
                 ) -> tuple[pd.DataFrame | Path, Path | None, str, Path | None]:
    """A source of :func:`plot` checked and resolved before anything is drawn: (a fluid
    table — a DataFrame or a CSV file's, read here — or a results directory; its output
    name; its name in messages; the folder its figures go to without ``-o``)."""
    if isinstance(source, pd.DataFrame):
        if target is None:
            raise InputError("a DataFrame source needs an output file", "output")
        return pipeline.fluid_rows(source), target, "<table>", None
    if not isinstance(source, str | os.PathLike):
        raise InputError(f"must be a results directory, a fluid CSV file or a DataFrame, "
                         f"got {type(source).__name__}", "sources")
    path = Path(source)
    if path.name == pipeline.SUMMARY_FILE and (path.parent / pipeline.SCENARIO_FILE).is_file():
        path = path.parent  # a sweep's summary.csv: its results directory's figures
    if path.suffix.lower() == ".toml" and not path.is_dir():
        raise InputError("is a scenario, not something to draw: sweep it (mrfq sweep or "
                         "run), then plot its results directory", None, str(source))
    if not path.exists():
        raise InputError("no such file or directory", None, str(source))
    folder = None if target is not None else path if path.is_dir() else path.parent
    if path.is_dir():
        if not any((path / name).is_file() for name in _DRAWABLE):
            raise InputError("not a results directory (no scenario.json)", None, str(path))
        if ((path / pipeline.FLOWS_FILE).is_file() and not any(
                (path / name).is_file() for name in (pipeline.TIMELINE_FILE,
                                                     pipeline.SUMMARY_FILE))):
            raise InputError(f"missing: this flows run's timeline ({pipeline.FLOWS_FILE} is "
                             "here): run mrfq flows again", None,
                             str(path / pipeline.TIMELINE_FILE))
        return path, target, str(path), folder
    table = io.read_table(path, dtype={"class": str, "policy": str})
    return (pipeline.fluid_rows(table, str(path)), target or path.with_suffix(""), str(path),
            folder)


def plan(scenario: ScenarioArg, *, precision: float | None = None,
         pilot_flows: int | None = None, jobs: int | None = None,
         policies: Sequence[str] | None = None, loads: Sequence[float] | None = None,
         seed: int | None = None, progress: ProgressArg = False) -> pd.DataFrame:
    """Run-length advice before a sweep (:func:`mrfq.advisor.advise`): from a short pilot
    per packet point, the flows (one run) or replications each point needs for the
    target ``precision`` (relative 95% half-width of every class's γ). The sweep's
    estimated wall time on ``jobs`` cores (default: all, as a sweep's) is in the table's
    ``attrs``: ``jobs``, ``sweep_wall_s`` (as advised) and ``sweep_wall_s_configured``
    (as the scenario is configured), seconds (:func:`mrfq.advisor.sweep_wall_time`)."""
    policies, loads = arguments.names(policies, "policies"), arguments.numbers(loads, "loads")
    cores = arguments.jobs(jobs) or os.cpu_count() or 1
    # precision, pilot_flows, seed and progress are advise's to check: one message for
    # both faces
    table = advise(_modelled(scenario), precision=precision, pilot_flows=pilot_flows,
                   policy_names=None if policies is None else list(policies),
                   loads=None if loads is None else list(loads), seed=seed,
                   progress=progress)
    table.attrs.update(jobs=cores, sweep_wall_s=sweep_wall_time(table, cores),
                       sweep_wall_s_configured=sweep_wall_time(table, cores, configured=True))
    return table


def allocate(problem: Problem | str | Path, policies: Sequence[str] | None = None, *,
             properties: bool = True) -> AllocationReport:
    """Static allocations of a problem (a :class:`mrfq.allocation.Problem`, a TOML file or
    a packaged name: resources, servers, users) under the seed papers' policies (default:
    the file's list, else all that apply), with their property checks unless
    ``properties`` is False."""
    if not isinstance(problem, (str, Path, Problem)):
        raise InputError(f"must be a Problem, a problem file or a packaged name, got "
                         f"{type(problem).__name__}", "problem")
    chosen = arguments.names(policies, "policies")
    return allocation_report(problem, chosen or (),
                             properties=arguments.flag(properties, "properties", True))


def cluster(scenario: ScenarioArg, results_dir: str | Path | None = None, *,
            jobs: int | None = None, scheduler: str | None = None,
            tolerance: float = TOLERANCE, progress: ProgressArg = False,
            log: Callable[[str], None] | None = None) -> RunResult:
    """The cluster points of the scenario's ``[cluster]`` section (its classes as
    jobs of tasks on a pooled cluster) and the fluid curves, swept into ``results_dir``
    (default ``results/<name>``), then every cluster γ against the fluid γ of the policy
    it realises (and the packet points an earlier run left in the directory: the
    summary and validation are the directory's). Returns the summary and the validation
    (no figures). A trace scenario (``[cluster] trace``): one run of the trace per
    policy, its summary (one row per policy) in ``results_dir/trace_summary.csv`` and an
    empty validation. ``jobs``, ``scheduler``: as in :func:`sweep` (a trace runs in this
    process). ``log``, if given, is told how many points a resumed sweep reuses (the
    command line prints it)."""
    if scenario is None:  # (only run has a default scenario, and it has no [cluster])
        raise InputError("must be given (a Scenario, a dict, a file or a packaged name)",
                         "scenario")
    scenario = scenario_of(scenario)
    results_dir = arguments.path(results_dir, "results_dir")
    jobs = arguments.jobs(jobs, scheduler=scheduler)
    tolerance = arguments.real(tolerance, "tolerance", TOLERANCE)
    log = arguments.function(log, "log")
    check_tolerance(tolerance)  # before any work (a trace has nothing to validate)
    if scenario.cluster.trace:
        if scheduler is not None:  # (nothing would read it; any ``jobs`` allows one process)
            raise InputError("a trace runs as one run per policy in this process: nothing "
                             "would read it", "scheduler")
        return pipeline.cluster_trace(scenario, results_dir)
    if not scenario.cluster.policies:
        raise InputError("the scenario has no [cluster] section", "cluster", scenario.source)
    if not any(registry.get(registry.CLUSTER, name).realises
               for name in scenario.cluster.policies):
        raise InputError(f"no cluster policy with a fluid counterpart to validate "
                         f"({', '.join(scenario.cluster.policies)}); `mrfq sweep` computes "
                         "their points without validating", "cluster.policies",
                         scenario.source)
    results = Path(results_dir) if results_dir else pipeline.default_results_dir(scenario)
    summary = pipeline.sweep(scenario, results, jobs=jobs, scheduler=scheduler,
                             kinds=(registry.FLUID, registry.CLUSTER),
                             progress=progress_callback(progress, "sweep"), log=log)
    validation = pipeline.validate(results, tolerance, scenario)
    return RunResult(results, summary, validation, [])


def available() -> dict[str, pd.DataFrame]:
    """What ``mrfq list`` prints: the packaged ``scenarios`` (name, description) and
    allocation ``problems`` (name), the ``policies`` of every kind (kind, name, the
    fluid policy it ``realises``, a one-line ``summary``), the flow-size ``size_laws``
    (distribution) and the bundled ``workloads`` (name, for ``distribution = "cdf"``'s
    ``workload``)."""
    scenarios = pd.DataFrame([{"name": name, "description": load_scenario(name).description}
                              for name in packaged_scenarios()])
    problems = pd.DataFrame({"name": packaged_problems()})
    policies = pd.DataFrame([{"kind": p.kind, "name": p.name, "realises": p.realises or "",
                              "summary": p.summary} for p in registry.REGISTRY.values()])
    laws = pd.DataFrame({"distribution": list(DISTRIBUTIONS)})
    workloads = pd.DataFrame({"name": list(BUNDLED)})
    return {"scenarios": scenarios, "problems": problems, "policies": policies,
            "size_laws": laws, "workloads": workloads}
