"""The pipeline as a Python API: ``sweep → validate → plot``, and ``run`` doing all three.

Every CLI verb is one of these functions plus argument parsing, so a notebook gets exactly
what the command line does (``mrfq.run("fig3_quick", "results/fig3_quick")``: sweep,
validation and plots; ``result.passed``, ``.validation``, ``.figures``). Validation and
plots read the summary the sweep produced (``summary.csv``), not the point files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mrfq import io
from mrfq import policies as registry
from mrfq import validation as rules
from mrfq.errors import InputError
from mrfq.fluid.method import fluid_table
from mrfq.io import check_figure_formats, check_not_directories, check_writable_dir, write_csv
from mrfq.kinds.cluster import TRACE_FILE, TRACE_TABLES, load_trace, trace_tables
from mrfq.packet.flows import run_flows
from mrfq.scenario import FLUID_METHODS, Scenario, load_scenario, scenario_from_dict
from mrfq.scenario.checks import MIN_TOLERANCE, TOLERANCE_FLOOR
from mrfq.sweeps import (
    KINDS,
    SCENARIO_FILE,
    SIZE_BINS_FILE,
    SUMMARY_FILE,
    VALIDATION_FILE,
    check_same_scenario,
    load_records,
    read_summary,
    run_sweep,
    store_scenario,
    stored_scenario,
)
from mrfq.table_warnings import precision_warnings

DEFAULT_SCENARIO = "fig3_quick"
TRACE_OUTPUTS = ", ".join([TRACE_FILE, *TRACE_TABLES.values()]) + ", figures"  #: a trace's
Progress = Callable[[int, int], None]


def scenario_of(scenario: Scenario | dict | str | Path | None) -> Scenario:
    """A scenario argument as a :class:`Scenario`: the object itself, a dict (a scenario
    file's content, :func:`scenario_from_dict`), a TOML path or a packaged name; ``None``
    is :data:`DEFAULT_SCENARIO`. InputError for anything else."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return scenario_from_dict(scenario)
    if scenario is not None and not isinstance(scenario, (str, Path)):
        raise InputError(f"must be a Scenario, a dict, a file or a packaged name, got "
                         f"{type(scenario).__name__}", "scenario")
    return load_scenario(scenario if scenario is not None else DEFAULT_SCENARIO)


def default_results_dir(scenario: Scenario) -> Path:
    """``results/<scenario name>`` under the current directory."""
    return Path("results") / scenario.name


def sweep(scenario: Scenario | str | Path, results_dir: str | Path | None = None, *,
          jobs: int | None = None, scheduler: str | None = None,
          kinds: Iterable[str] = KINDS, progress: Progress | None = None,
          log: Callable[[str], None] | None = None, precision: float | None = None,
          max_replications: int | None = None) -> pd.DataFrame:
    """Compute every missing point of a scenario (a :class:`Scenario`, a file, or the name
    of a packaged scenario) into ``results_dir`` and return its summary (also written as
    ``summary.csv``). Resumable; results independent of ``jobs`` and ``scheduler``.

    ``precision``, ``max_replications``: override the scenario's ``[packet]`` values (a
    target relative 95% half-width of every packet γ_k; replications are added until it
    is reached or the budget is spent)."""
    scenario = scenario_of(scenario).with_overrides(precision=precision,
                                                    max_replications=max_replications)
    if scenario.cluster.trace:
        raise InputError("a trace scenario has no load axis to sweep: run it with mrfq "
                         "cluster", "cluster.trace", scenario.source)
    results_dir = Path(results_dir) if results_dir else default_results_dir(scenario)
    return run_sweep(scenario, results_dir, jobs=jobs, scheduler=scheduler, kinds=kinds,
                     progress=progress, log=log)


def validate(source: pd.DataFrame | str | Path, tolerance: float = 0.05,
             scenario: Scenario | None = None) -> pd.DataFrame:
    """Packet γ against fluid γ for every packet point (:mod:`mrfq.validation`).

    ``source``: a summary table, or a results directory (its ``summary.csv`` is read and
    ``validation.csv`` written beside it). The scenario (default: the directory's) tells
    which known limitations apply and which classes carry no load (:func:`mrfq.validation.
    known_limitations`, :func:`~mrfq.validation.unloaded_classes`). InputError when there
    is nothing to validate."""
    rules.check_tolerance(tolerance)
    summary = source if isinstance(source, pd.DataFrame) else read_summary(source)
    if not isinstance(source, pd.DataFrame):  # validation.csv goes beside it
        io.check_writable(Path(source) / VALIDATION_FILE, None)
    if scenario is None and not isinstance(source, pd.DataFrame):
        scenario = stored_scenario(source)
    rules_of = ((rules.known_limitations(scenario), rules.unloaded_classes(scenario))
                if scenario is not None else ({}, ()))
    table = rules.validate_summary(summary, tolerance, *rules_of)
    if table.empty:
        raise InputError("holds no packet points with a fluid counterpart to validate",
                         None, None if isinstance(source, pd.DataFrame) else str(source))
    if not isinstance(source, pd.DataFrame):
        write_csv(table, Path(source) / VALIDATION_FILE)
    return table


def _axis_label(load_axis: str) -> str:
    return ("load of the most loaded resource" if load_axis == "max"
            else f"load of resource '{load_axis}'")


def _xlabel(scenario: Scenario) -> str:
    return _axis_label(scenario.load_axis)


def plot(results_dir: str | Path, output: str | Path | None = None,
         formats: Iterable[str] | str | None = None) -> list[Path]:
    """The figures of a results directory, from its summary: Figure 3's layout (packet and
    cluster points with their intervals against the fluid lines, failed validation points
    ringed; :func:`mrfq.plots.packet_vs_fluid`), the Figure 1/2 panels (``<name>_fluid``),
    the per-packet delays (``<name>_delays``) and a network's drawing (``<name>_network``).
    ``output`` names the first figure (the others take its stem); ``formats``: the file
    types (default: the suffix of ``output``, else PNG and PDF). Returns the files
    written; InputError when there is nothing to draw."""
    # start-up time: matplotlib is ~0.3 s of every mrfq command and worker that draws nothing
    from mrfq.plot_cluster import replot_trace
    from mrfq.plot_flows import dominant_share_over_time
    from mrfq.plot_network import network_drawing
    from mrfq.plots import (
        check_formats,
        fluid_comparison,
        packet_delays,
        packet_vs_fluid,
    )

    if formats is None and output is not None and io.figure_stem(output) != Path(output):
        formats = (Path(output).suffix,)  # a figure format's suffix; any other is the name's
    formats = check_formats(formats)
    results = Path(results_dir)
    if (results / TRACE_FILE).is_file() and not (results / SUMMARY_FILE).is_file():
        return replot_trace(results, output, formats)
    if (results / TIMELINE_FILE).is_file() and not (results / SUMMARY_FILE).is_file():
        timeline = io.read_table(results / TIMELINE_FILE, ("time", "flow"), dtype={"flow": str})
        known = stored_scenario(results) if (results / SCENARIO_FILE).is_file() else None
        name = f"{known.name}_dominant" if known else "dominant_share"  # as `mrfq flows`
        return dominant_share_over_time(timeline, Path(output) if output else results / name,
                                        known.description if known else "", formats=formats)
    scenario = stored_scenario(results)
    summary = read_summary(results)
    target = io.figure_stem(Path(output) if output else results / scenario.name)
    failed = None
    if (results / VALIDATION_FILE).is_file():
        checked = io.read_table(results / VALIDATION_FILE, ("passed",),
                                dtype={"class": str, "policy": str})
        failed = checked[~checked["passed"].astype(bool)]
    fluid, packet, cluster = (summary[summary["kind"] == kind] for kind in
                              (registry.FLUID, registry.PACKET, registry.CLUSTER))
    order = {p: i for i, p in enumerate(scenario.packet.policies)}  # the paper's panel order
    packet = packet.sort_values("policy", key=lambda s: s.map(order), kind="stable")
    rank = {p: i for i, p in enumerate(scenario.cluster.policies)}  # the scenario's order
    cluster = cluster.sort_values("policy", key=lambda s: s.map(rank), kind="stable")
    written, text = [], (scenario.description, _xlabel(scenario))  # title, x label
    if not packet.empty or not cluster.empty:
        written += packet_vs_fluid(fluid, packet, target, *text, failed, formats, cluster)
    if "p99_sojourn" in packet and packet["p99_sojourn"].notna().any():
        written += packet_delays(packet, target.with_name(target.name + "_delays"), *text,
                                 formats=formats)
    if not fluid.empty:  # (a pair's panel, or one of its own for BF or a lone policy)
        comparison, alone = ((target.with_name(target.name + "_fluid"), f"The fluid model "
                              f"alone; the scenario: {text[0]}".removesuffix("; the scenario: "))
                             if written else (target, text[0]))
        written += fluid_comparison(fluid, comparison, alone, text[1], formats=formats)
    if scenario.network:  # what was simulated: routers, resources, routes
        written += network_drawing(
            list(scenario.resources), [(n, list(m)) for n, m in scenario.drawn_routers],
            [list(r) for r in scenario.routes], scenario.class_names,
            target.with_name(target.name + "_network"), scenario.name, formats=formats)
    if not written:
        raise InputError("nothing to draw: no fluid, packet or cluster points", None,
                         str(results))
    return written


TIMELINE_FILE, FLOWS_FILE = "timeline.csv", "flows.csv"


@dataclass
class FlowsResult:
    """What :func:`flows` produced: ``flows`` (one row per flow and policy), ``timeline``
    (service and share per flow, resource and interval, with ``fair_share`` on the
    ``dominant`` rows) and the ``files`` written."""

    flows: pd.DataFrame
    timeline: pd.DataFrame
    files: list[Path] = field(default_factory=list)


def flows(scenario: Scenario | str | Path, results_dir: str | Path | None = None, *,
          policies: Iterable[str] | None = None, seed: int | None = None) -> FlowsResult:
    """Run a scenario's explicit flows (``[[flows]]``) under each packet policy (default:
    the scenario's ``[packet] policies``) and write ``flows.csv`` (one row per flow and
    policy), ``timeline.csv`` (service and share per flow, resource and interval; on the
    ``dominant`` rows also ``fair_share``, the flow's dominant share in the fluid
    allocation the policy realises among the flows present mid-interval,
    :func:`mrfq.validation.fair_dominant_shares`) and the dominant share over time plot.
    Returns the tables and the files written (:class:`FlowsResult`)."""
    # start-up time: matplotlib is ~0.3 s of every mrfq command and worker that draws nothing
    from mrfq.plot_flows import dominant_share_over_time

    scenario = scenario_of(scenario)
    chosen = [registry.get(registry.PACKET, p, "policies").name
              for p in (policies or scenario.packet.policies)]
    results = Path(results_dir) if results_dir else default_results_dir(scenario)
    check_writable_dir(results, run="flows")
    check_same_scenario(results, scenario, (FLOWS_FILE, TIMELINE_FILE))
    runs = [run_flows(scenario, p, seed, chosen) for p in chosen]
    results.mkdir(parents=True, exist_ok=True)
    store_scenario(scenario, results)  # for `mrfq plot DIR`'s name and title
    for run in runs:
        rows = run.timeline["resource"] == "dominant"
        times = np.sort(run.timeline.loc[rows, "time"].unique())
        fair = rules.fair_dominant_shares(scenario, run.policy, run.flows,
                                          times + scenario.timeline.interval / 2)
        flow_index = {name: i for i, name in enumerate(run.flows["flow"])}
        column = np.full(len(run.timeline), np.nan)
        dominant = run.timeline[rows]
        column[rows.to_numpy()] = fair[dominant["flow"].map(flow_index).to_numpy(),
                                       np.searchsorted(times, dominant["time"].to_numpy())]
        run.timeline["fair_share"] = column
    timeline = pd.concat([r.timeline for r in runs], ignore_index=True)
    per_flow = pd.concat([r.flows for r in runs], ignore_index=True)
    write_csv(per_flow, results / FLOWS_FILE)
    write_csv(timeline, results / TIMELINE_FILE)
    written = [results / FLOWS_FILE, results / TIMELINE_FILE, results / SCENARIO_FILE]
    written += dominant_share_over_time(timeline, results / f"{scenario.name}_dominant",
                                        scenario.description)
    return FlowsResult(per_flow, timeline, written)


def fluid(scenario: Scenario | str | Path, results_dir: str | Path | None = None, *,
          policies: Iterable[str] | None = None, loads: Iterable[float] | None = None,
          tolerance: float | None = None, method: str | None = None, jobs: int | None = 1,
          scheduler: str | None = None, progress: Progress | None = None,
          log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Fluid γ_k for every (policy, load) of a scenario through the cached sweep: the
    fluid points of ``results_dir`` (default ``results/<name>``) are reused and the
    missing ones computed (the directory's scenario and summary are left as they are;
    ``log`` is told how many points are reused).
    ``method`` (auto, markov, simulation) replaces the scenario's ``[fluid] method``
    (:func:`mrfq.fluid.method.fluid_method`). Returns the tidy table of
    :func:`mrfq.fluid.fluid_table` (with each point's method and interval) for the
    requested policies and loads, and the scenario's ``description`` and ``load_axis``
    (so that a plot of the table keeps its title and axis)."""
    scenario = scenario_of(scenario)
    chosen = tuple(dict.fromkeys(registry.get(registry.FLUID, p, "policies").name
                                 for p in (policies or scenario.fluid.policies)))
    values = tuple(dict.fromkeys(float(v) for v in (loads or scenario.load_values)))
    for value in values:
        scenario.check_load(value, "loads" if loads else "load.values", in_file=not loads)
    if tolerance is not None and not MIN_TOLERANCE <= tolerance < 1:  # (a relative error)
        raise InputError(TOLERANCE_FLOOR.format(tolerance) if 0 < tolerance < MIN_TOLERANCE
                         else f"must be in [1e-9, 1), got {tolerance:g}", "tolerance")
    if method is not None and str(method).lower() not in FLUID_METHODS:  # (as --method)
        raise InputError(f"must be one of {', '.join(FLUID_METHODS)}, got {method!r}",
                         "method")
    scenario = replace(scenario, load_values=values, fluid=replace(
        scenario.fluid, policies=chosen,
        tolerance=scenario.fluid.tolerance if tolerance is None else tolerance,
        method=scenario.fluid.method if method is None else str(method).lower()))
    results_dir = Path(results_dir) if results_dir else default_results_dir(scenario)
    try:
        run_sweep(scenario, results_dir, jobs=jobs, scheduler=scheduler,
                  kinds=(registry.FLUID,), progress=progress, record=False, log=log)
    except InputError as exc:  # a check failed on the method the argument chose
        raise InputError(exc.problem, "method") if method and exc.field == "fluid.method" \
            else exc from None
    table = fluid_table(scenario, load_records(scenario, results_dir, (registry.FLUID,)))
    # where the table came from, so that a plot of it keeps its title and axis
    table["description"] = scenario.description or scenario.name
    table["load_axis"] = scenario.load_axis
    return table


def insensitivity(scenario: Scenario | str | Path, laws: dict[str, Any],
                  results_dir: str | Path | None = None, *, jobs: int | None = 1,
                  scheduler: str | None = None,
                  progress: Progress | None = None) -> pd.DataFrame:
    """The fluid curves of ``scenario`` once per flow-size law (issue 14's insensitivity
    study): for every ``name → size table`` of ``laws`` the scenario with that law for
    every class (:meth:`Scenario.with_sizes`) goes through :func:`fluid` (so each point
    takes the method :func:`mrfq.fluid.method.fluid_method` chooses) into one cached
    ``results_dir``: Markov points, which do not depend on the law, are computed once.
    Returns the tables stacked, with a ``law`` column first."""
    scenario = scenario_of(scenario)
    results_dir = Path(results_dir) if results_dir else default_results_dir(scenario)
    tables = []
    for name, spec in laws.items():
        table = fluid(scenario.with_sizes(spec), results_dir, jobs=jobs, scheduler=scheduler,
                      progress=progress)
        table.insert(0, "law", name)
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def plot_fluid_frame(table: pd.DataFrame, output: str | Path, source: str = "<table>",
                     formats: Iterable[str] | None = None) -> list[Path]:
    """The Figure 1/2 layout of a fluid table (:func:`fluid`'s columns policy, load,
    class, gamma) into ``output``."""
    # start-up time: matplotlib is ~0.3 s of every mrfq command and worker that draws nothing
    from mrfq.plots import fluid_comparison

    table = fluid_rows(table, source)
    # the title and axis of the scenario the table came from (columns of :func:`fluid`)
    title = str(table["description"].iloc[0]) if "description" in table and len(table) \
        else ""
    xlabel = (_axis_label(str(table["load_axis"].iloc[0])) if "load_axis" in table
              and len(table) else "load")
    try:
        return fluid_comparison(table, Path(output), title, xlabel, formats=formats)
    except InputError as exc:  # (an empty table): named by its file
        raise exc.located(source) from None


def fluid_rows(table: pd.DataFrame, source: str = "<table>") -> pd.DataFrame:
    """The fluid rows of a table :func:`plot_fluid_frame` draws; InputError (about
    ``source``) when it has not the columns of :func:`fluid` or names other policies."""
    missing = {"policy", "load", "class", "gamma"} - set(table.columns)
    if missing:
        raise InputError(f"missing columns {sorted(missing)}", None, source)
    if "kind" in table:  # a sweep's summary: its fluid rows (the rest: mrfq plot DIR)
        table = table[table["kind"] == registry.FLUID]
    unknown = sorted(set(table["policy"].astype(str)) - set(registry.names(registry.FLUID)))
    if unknown:
        raise InputError(f"not fluid policies: {', '.join(unknown)} (a sweep's summary is "
                         "drawn from its results directory: mrfq plot DIR)", "policy", source)
    return table


#: the paper's fluid figures: (packaged scenario, figure file stem)
PAPER_FLUID_FIGURES = (("fig1_balanced", "fig1"), ("fig2_unbalanced", "fig2"))


def check_paper_figures(output_dir: str | Path, results_root: str | Path = "results") -> None:
    """What :func:`paper_fluid_figures` checks before any work: its outputs can be written."""
    check_writable_dir(output_dir)
    for name, _ in PAPER_FLUID_FIGURES:
        check_writable_dir(Path(results_root) / name, run="sweep")


def paper_fluid_figures(output_dir: str | Path = "plots", results_root: str | Path = "results",
                        jobs: int | None = 2, progress: Progress | None = None,
                        formats: Iterable[str] | str | None = None) -> list[Path]:
    """BR Figures 1 and 2 (fluid): the sweeps of the packaged scenarios into
    ``results_root/<name>`` (cached), their tables as ``figN_fluid.csv`` and the two-panel
    figures ``figN`` in ``formats`` (default PNG and PDF) in ``output_dir``."""
    # start-up time: matplotlib is ~0.3 s of every mrfq command and worker that draws nothing
    from mrfq.plots import fluid_comparison

    formats = check_figure_formats(formats)
    check_paper_figures(output_dir, results_root)
    written = []
    for name, stem in PAPER_FLUID_FIGURES:
        scenario = load_scenario(name)
        table = fluid(scenario, Path(results_root) / scenario.name, jobs=jobs,
                      progress=progress)
        csv = Path(output_dir) / f"{stem}_fluid.csv"
        write_csv(table, csv)
        written.append(csv)
        written += fluid_comparison(table, Path(output_dir) / stem,
                                    scenario.description, _xlabel(scenario), formats)
    return written


@dataclass
class RunResult:
    """What :func:`run` produced: the summary, the validation table, the figures written
    and where. ``passed``: every validated packet point passed. ``tables``: a trace run's
    other tables by name (:data:`TRACE_TABLES`)."""

    results_dir: Path
    summary: pd.DataFrame
    validation: pd.DataFrame
    figures: list[Path] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.validation["passed"].all())


def cluster_trace(scenario: Scenario, results_dir: str | Path | None = None,
                  formats: Iterable[str] | str | None = None) -> RunResult:
    """A trace scenario (``[cluster] trace``): the trace read and checked first (bad
    input writes nothing), then one run per cluster policy; the summary (one row per
    policy) is written to ``trace_summary.csv`` in ``results_dir`` (default
    ``results/<name>``), the run's other tables (:func:`mrfq.kinds.cluster.trace_tables`)
    to :data:`TRACE_TABLES` and its figures (:func:`mrfq.plot_cluster.trace_figures`) in
    ``formats`` (default PNG and PDF). No validation (no fluid model)."""
    # start-up time: matplotlib is ~0.3 s of every mrfq command and worker that draws nothing
    from mrfq.plot_cluster import trace_figures

    formats = check_figure_formats(formats)
    trace, capacity = load_trace(scenario)
    results = Path(results_dir) if results_dir else default_results_dir(scenario)
    check_writable_dir(results, run="trace")
    tables = trace_tables(scenario, trace, capacity)
    table = tables.pop("summary")
    (results / TRACE_FILE).unlink(missing_ok=True)  # it marks a complete set: written last,
    for name, file in TRACE_TABLES.items():  # an interrupted rewrite leaves none to trust
        write_csv(tables[name], results / file)
    write_csv(table, results / TRACE_FILE)
    figures = trace_figures(tables, results, scenario.description, formats)
    return RunResult(results, table, pd.DataFrame({"passed": []}, dtype=bool), figures,
                     tables)


def run(scenario: Scenario | str | Path | None = None, results_dir: str | Path | None = None,
        *, jobs: int | None = None, scheduler: str | None = None, tolerance: float = 0.05,
        progress: Progress | None = None, log: Callable[[str], None] | None = None,
        precision: float | None = None, max_replications: int | None = None,
        formats: Iterable[str] | str | None = None) -> RunResult:
    """The main job: sweep (fluid curves and packet points), validation and plots of a
    scenario (default: the packaged ``fig3_quick``, Figure 3 at reduced scale) into
    ``results_dir`` (default ``results/<name>``). ``precision``, ``max_replications``:
    as in :func:`sweep`; ``formats``: the figures' file types (default PNG and PDF)."""
    formats = check_figure_formats(formats)  # before any work
    scenario = scenario_of(scenario).with_overrides(precision=precision,
                                                    max_replications=max_replications)
    rules.check_run(scenario, tolerance)  # before the sweep
    results_dir = Path(results_dir) if results_dir else default_results_dir(scenario)
    figures = [f"{scenario.name}{part}.{kind}" for part in ("", "_delays", "_fluid", "_network")
               for kind in formats]
    check_not_directories(results_dir, (SCENARIO_FILE, SUMMARY_FILE, SIZE_BINS_FILE,
                                        VALIDATION_FILE, *figures))
    summary = sweep(scenario, results_dir, jobs=jobs, scheduler=scheduler, progress=progress,
                    log=log)
    for line in precision_warnings(summary) if log else ():  # (not in the validation)
        log(line)
    validation = validate(results_dir, tolerance, scenario)
    figures = plot(results_dir, formats=formats)
    return RunResult(results_dir, summary, validation, figures)
