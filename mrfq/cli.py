"""Command line: ``mrfq run | sweep | validate | plot | fluid | simulate | flows | plan |
allocate | cluster | list``.

The CLI only wires: every verb is the function of the same name in :mod:`mrfq.api`
(``list``: :func:`mrfq.api.available`) plus argument parsing and printing. Every
user-fixable problem prints one line ``error: <file>: <field>: <problem>`` on stderr and
exits with code 2; outputs are written atomically, so a failed run leaves no file.
Exit codes: 0 success, 1 validation failed, 2 bad input (or an output that cannot be
written), 3 internal error (a bug: the traceback is printed), 130 interrupted, 143 SIGTERM.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from mrfq import api, arguments, console, pipeline, table_warnings
from mrfq import policies as registry
from mrfq.console import (
    COUNT,
    OneOf,
    Progress,
    RegistryChoice,
    _end_line,
    _fail,
    _log,
    split_floats,
    split_names,
    user_errors,
)
from mrfq.errors import InputError
from mrfq.io import check_figure_formats, check_outputs, check_writable, write_csv
from mrfq.plan_text import advice_text, advice_warnings
from mrfq.scenario import FLUID_METHODS, PACKET_INITS, VIRTUAL_TIMES, load_scenario

JOBS_HELP = "Local worker processes, at most 1024 (default: all cores)."
SCHEDULER_HELP = "Dask scheduler address, e.g. tcp://host:8786 (instead of --jobs)."


def _check_jobs(jobs: int | None, scheduler: str | None = None) -> None:
    arguments.jobs(jobs, "--jobs", scheduler)


def _show(table, columns, digits: int = 5) -> None:
    click.echo(table[columns].to_string(index=False, float_format=lambda v: f"{v:.{digits}g}"))


def _warn(table) -> None:
    """The table's unreliable intervals (``ci_warning``), one line per distinct warning."""
    for line in table_warnings.interval_warnings(table):
        _log(line)


def _no_such(kind: str, close: Iterable[str | None], see: str) -> str:
    """``no such option (did you mean --x?)``, or with nothing close, where to look."""
    close = sorted(name for name in close if name)
    return f"no such {kind} (did you mean {' or '.join(close)}?)" if close else \
        f"no such {kind} ({see})"


class _OneLineErrors(click.Group):
    """A group whose usage errors (a bad option value, a missing argument) are one line
    ``error: <option>: <problem>`` with exit code 2, like every other input error."""

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.UsageError as exc:
            param = getattr(exc, "param", None)
            where = (param.opts[-1] if param is not None and param.opts else
                     param.human_readable_name if param is not None else "usage")
            command = exc.ctx.info_name if exc.ctx and exc.ctx.parent else None
            see = f"see mrfq {command} -h" if command else "see mrfq -h"
            # (click ≥ 8.4 raises NoSuchCommand; older ones a UsageError with this text)
            unknown = re.fullmatch(r"No such command '(.*?)'\.(?:\s*Did you mean '(.*?)'\?)?",
                                   exc.format_message().strip())
            if isinstance(exc, click.exceptions.NoSuchOption):
                where, problem = exc.option_name, _no_such("option", exc.possibilities, see)
            elif unknown:
                where, problem = unknown[1], _no_such("command", unknown.groups()[1:], see)
            elif isinstance(exc, click.exceptions.MissingParameter):
                problem = "missing (see mrfq COMMAND -h)"
            elif isinstance(exc, click.exceptions.BadParameter):
                problem = exc.message
            else:
                problem = exc.format_message()
            _fail(f"{where}: {problem}")
        except click.exceptions.Abort:
            _end_line()
            sys.exit(130)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mrfq")
def main() -> None:
    """mrfq — multi-resource fair queueing: fluid model and packet simulator.

    SCENARIO arguments are TOML files or the names of the packaged scenarios
    (`mrfq list` shows them, with the problems, policies and size laws).
    """


@main.command("list")
def list_() -> None:
    """Packaged scenarios, problems, workloads and size laws; the policies of every kind."""
    listing = api.available()
    click.echo("scenarios (use the name as SCENARIO):")
    for row in listing["scenarios"].itertuples():
        click.echo(f"  {row.name:22s} {row.description}")
    click.echo("problems (mrfq allocate PROBLEM):")
    for row in listing["problems"].itertuples():
        click.echo(f"  {row.name}")
    for kind, rows in listing["policies"].groupby("kind", sort=False):
        click.echo(f"{kind} policies:")
        for row in rows.itertuples():
            realises = f" (realises {row.realises})" if row.realises else ""
            click.echo(f"  {row.name:22s} {row.summary}{realises}")
    for title, names in [("size laws (size, [cluster] tasks, duration_law)", listing[
            "size_laws"].distribution), ("workloads (size.workload)", listing["workloads"].name)]:
        click.echo(f"{title}: {', '.join(names)}")


@main.command()
@click.argument("scenario")
@console.output_option(required=True, help="CSV file to write.")
@click.option("--policies", help="Override the fluid policies, comma-separated ("
              + ", ".join(registry.names(registry.FLUID)) + ").")
@click.option("--loads", help="Override the load values, e.g. '0.5,0.9'.")
@click.option("--tolerance", type=float, help="Markov solver's relative truncation error.")
@click.option("--method", type=OneOf(FLUID_METHODS),
              help="Override the scenario's [fluid] method (default auto: the Markov "
              "solver when it is exact and within its state budget, else the flow-level "
              "simulator).")
@click.option("--results", type=console.OutputPath(), help="Results directory caching the "
              "points (default: none, a temporary directory).")
@click.option("--jobs", type=int, help=JOBS_HELP)
@click.option("--scheduler", help=SCHEDULER_HELP)
@user_errors
def fluid(scenario, output, policies, loads, tolerance, method, results, jobs, scheduler):
    """Fluid service rates γ_k of SCENARIO (BR §4.1) into a tidy CSV: the Markov solver
    or the flow-level simulator per point (column ``method``; ``ci_low``/``ci_high``
    equal γ for the exact method).

    With --results the points go through the cached sweep: a second call reuses them."""

    _check_jobs(jobs, scheduler)
    check_outputs([(output, "--output")], [(results, "--results")], csv=True)
    table = api.fluid(load_scenario(scenario), results, policies=split_names(policies),
                      loads=split_floats(loads, "--loads"), tolerance=tolerance,
                      method=method, jobs=jobs, scheduler=scheduler,
                      progress=Progress.shown("fluid"),
                      log=_log if results else None)
    write_csv(table, output)
    _show(table, ["policy", "load", "class", "method", "gamma", "ci_low", "ci_high",
                  "error_estimate"], 6)
    _warn(table)
    _log(f"wrote {output}")


@main.command()
@click.argument("scenario")
@click.option("--policy", required=True, type=RegistryChoice(registry.PACKET),
              help="The packet policy.")
@click.option("--load", "load", required=True, type=float, help="Value on the load axis.")
@click.option("--seed", type=COUNT, help="Override the scenario's seed.")
@console.output_option(help="CSV file for the per-class table.")
@click.option("--flows", type=COUNT, help="Flow arrivals per replication (e.g. 1e4).")
@click.option("--mean-size", type=float, help="Mean flow size m in packets.")
@click.option("--window", type=COUNT, help="Window W in packets.")
@click.option("--replications", type=COUNT, help="Independent replications (<= 10^6).")
@click.option("--warmup", help="Warm-up: 'auto' (MSER-5) or a fraction of flow arrivals.")
@click.option("--init", type=OneOf(PACKET_INITS), help="Start of a replication: "
              "empty (default) or fluid (flows in progress at t = 0 drawn from the fluid "
              "model's stationary law; not measured).")
@click.option("--delta", type=float, help="Dovetailing bound Δ in time units "
              "(drfq-dovetail; default: the window W; inf: no bound).")
@click.option("--virtual-time", type=OneOf(VIRTUAL_TIMES), help="DRFQ's V: the largest "
              "tag in service (in-service, default) or ever started (started, BR's).")
@click.option("--precision", type=float, help="Target 95% half-width as a fraction of "
              "gamma, every class: replications are added until it is reached.")
@click.option("--max-replications", type=COUNT, help="Replication budget of a point with "
              "--precision (default: the scenario's, 1000).")
@console.output_option("--flows-out", help="CSV file for per-flow records.")
@console.output_option("--size-bins-out", help="CSV file for flow completion "
                       "time and slowdown by flow size (decades of packets).")
@click.option("--debug", is_flag=True, help="Check engine invariants after every event.")
@user_errors
def simulate(scenario, policy, load, seed, output, flows, mean_size, window, replications,
             warmup, init, delta, virtual_time, precision, max_replications, flows_out,
             size_bins_out, debug):
    """Packet simulation of SCENARIO at one load (docs: equations.md): the sweep's packet point
    function for every replication, combined as in a sweep."""

    check_outputs([(output, "--output"), (flows_out, "--flows-out"),
                   (size_bins_out, "--size-bins-out")], csv=True)
    shown = Progress.shown(f"simulate {policy}")
    result = api.simulate(load_scenario(scenario), policy, load, seed, flows=flows,
                        mean_size=mean_size, window=window, replications=replications,
                        warmup=warmup, delta=delta, virtual_time=virtual_time, precision=precision,
                        max_replications=max_replications, init=init, debug=debug or None,
                        progress=shown)
    shown.finish()  # (the flows are counted as planned: the last count need not be total)
    for table, path in ((result.classes, output), (result.flows, flows_out),
                        (result.size_bins, size_bins_out)):
        if path:
            write_csv(table, path)
            _log(f"wrote {path}")
    ran_with = registry.get(registry.PACKET, policy).parameters  # (columns of simulate's)
    _show(result.classes, ["policy", *ran_with, "load", "class", "gamma", "ci_low", "ci_high",
                           "flows_measured", "ratio_estimate", "little_gamma",
                           "achieved_precision", "replications", "mean_fct",
                           "mean_slowdown", "mean_packet_sojourn", "p99_sojourn",
                           "jain_index"])
    _warn(result.classes)
    services = int(result.classes["services"].iloc[0])
    wall = float(result.classes["wall_s"].iloc[0])
    _log(f"{services} packet-resource services in {wall:.2f}s "
         f"({services / max(wall, 1e-9) / 1e6:.1f} M/s)")


@main.command()
@click.argument("scenario")
@console.output_option("-o", "--output", "results", help="Results directory "
              "(default results/<scenario name>).")
@click.option("--policies", help="Packet policies, comma-separated ("
              + ", ".join(registry.names(registry.PACKET)) + "; default: the scenario's).")
@click.option("--seed", type=COUNT, help="Override the scenario's seed.")
@user_errors
def flows(scenario, results, policies, seed):
    """Run a scenario's explicit flows ([[flows]]): flows.csv, timeline.csv (service per
    flow, resource and interval) and the dominant share over time plot."""

    sc = load_scenario(scenario)  # validate before creating anything
    for item in api.flows(sc, results, policies=split_names(policies), seed=seed).files:
        click.echo(f"wrote {item}")


@main.command()
@click.argument("sources", nargs=-1)
@console.output_option(help="Output figure, a figure suffix its format, another part of the "
              "name (default: <results>/<name>, PNG+PDF); also <stem>_delays, _fluid, "
              "_network, and <stem>_2... for more sources.")
@click.option("--format", "formats", help="Figure formats, comma-separated (default: the "
              "suffix of -o, else png,pdf).")
@click.option("--jobs", type=int, help=JOBS_HELP + " For the fluid curves (no SOURCES).")
@user_errors
def plot(sources, output, formats, jobs):
    """Draw figures. With no SOURCES: BR Figures 1–2 (fluid) into plots/ or the directory
    -o names (the curves are swept, cached, into results/fig1_balanced, fig2_unbalanced).

    A SOURCE may be a results directory of ``mrfq sweep`` (Figure 3 layout: one panel per
    packet policy, fluid lines, packet points with CIs; plus the Figure 1/2 panels) or a
    fluid CSV written by ``mrfq fluid`` (Figure 1/2 layout), a directory of ``mrfq
    flows`` (dominant share over time), or one of ``mrfq cluster`` (a trace run's
    shares, utilisation and completion times over time).
    """

    _check_jobs(jobs)
    if not sources:  # (checked before the banner: an error is one line)
        pipeline.check_paper_figures(output or "plots")
        check_figure_formats(formats)  # (None: the defaults)
        _log("no SOURCES: BR Figures 1-2, the fluid sweeps of "
             + " and ".join(f"{name} (into results/{name}/, cached)"
                            for name, _ in pipeline.PAPER_FLUID_FIGURES)
             + f", drawn into {output or 'plots'}/")
    for source in sources:
        if not Path(source).exists():
            raise InputError("no such file or directory", None, source)
    if output and sources:
        check_writable(output)
    for item in api.plot(*sources, output=output, formats=formats, jobs=jobs,
                         progress=Progress.shown("fluid")):
        click.echo(f"wrote {item}")


def _sweep(scenario: str, results: str | None, jobs: int | None, scheduler: str | None,
           precision: float | None = None, max_replications: int | None = None):

    _check_jobs(jobs, scheduler)
    sc = load_scenario(scenario)  # validated before anything is created
    results = Path(results) if results else pipeline.default_results_dir(sc)
    summary = pipeline.sweep(sc, results, jobs=jobs, scheduler=scheduler,
                             progress=Progress.shown("sweep"), log=_log,
                             precision=precision, max_replications=max_replications)
    _log(f"wrote {results / 'summary.csv'} ({len(summary)} rows)")
    _warn(summary)
    return results


@main.command()
@click.argument("scenario")
@console.output_option("-o", "--output", "results", help="Results directory "
              "(default: results/<scenario name>).")
@click.option("--jobs", type=int, help=JOBS_HELP)
@click.option("--scheduler", help=SCHEDULER_HELP)
@click.option("--precision", type=float, help="Target 95% half-width as a fraction of "
              "gamma, every class: replications are added until it is reached.")
@click.option("--max-replications", type=COUNT, help="Replication budget of a point with "
              "--precision (default: the scenario's, 1000).")
@user_errors
def sweep(scenario, results, jobs, scheduler, precision, max_replications):
    """Every point of SCENARIO: each (policy, load, replication) packet point, each
    (policy, load) cluster point ([cluster]), and the fluid curves.

    One file per point (hash-named, atomic): an interrupted sweep resumes where it was.
    """
    _sweep(scenario, results, jobs, scheduler, precision, max_replications)


@main.command()
@click.argument("results")
@click.option("--tolerance", type=float, default=0.05, show_default=True,
              help="Relative difference that passes even outside the CI.")
@user_errors
def validate(results, tolerance):
    """Packet γ (95% CI) against fluid γ for every packet point of a results directory
    (from its summary.csv); writes validation.csv; exit 1 if any point fails."""
    if not results.strip():  # (Path("") is the current directory)
        raise InputError("an empty path", "results")
    table = pipeline.validate(results, tolerance)
    console.print_validation(table, tolerance)
    _log(f"wrote {Path(results) / pipeline.VALIDATION_FILE}")
    console.exit_validated(table)


@main.command()
@click.argument("scenario", required=False)
@console.output_option("-o", "--output", "results", help="Results directory "
              "(default: results/<scenario name>).")
@click.option("--jobs", type=int, help=JOBS_HELP)
@click.option("--scheduler", help=SCHEDULER_HELP)
@click.option("--tolerance", type=float, default=0.05, show_default=True,
              help="Relative difference from the fluid γ that passes even outside the CI.")
@click.option("--precision", type=float, help="Target 95% half-width as a fraction of "
              "gamma, every class: replications are added until it is reached.")
@click.option("--max-replications", type=COUNT, help="Replication budget of a point with "
              "--precision (default: the scenario's, 1000).")
@click.option("--format", "formats", help="Figure formats, comma-separated (default: "
              "png,pdf).")
@user_errors
def run(scenario, results, jobs, scheduler, tolerance, precision, max_replications, formats):
    """The main job: fluid curves, packet sweep, validation and plots for SCENARIO
    (default: fig3_quick, the Figure 3 scenario at reduced scale). Exit 0 when every
    packet and cluster point validates, 1 otherwise."""

    _check_jobs(jobs, scheduler)
    check_figure_formats(formats)
    log = console.log_after(None if scenario is not None else (
        f"no SCENARIO: the main job, the packaged {pipeline.DEFAULT_SCENARIO} (BR Figure 3 "
        f"at reduced scale; about 2 minutes on 2 cores) into "
        f"{str(results or 'results/' + pipeline.DEFAULT_SCENARIO).rstrip('/')}/"))
    result = pipeline.run(scenario, results, jobs=jobs, scheduler=scheduler,
                          tolerance=tolerance, progress=Progress.shown("sweep"),
                          log=log, precision=precision, max_replications=max_replications,
                          formats=formats)
    console.print_validation(result.validation, tolerance)
    for written in result.figures:
        click.echo(f"wrote {written}")
    click.echo(f"results in {result.results_dir}/ (summary.csv, validation.csv, plots)")
    console.exit_validated(result.validation)


@main.command()
@click.argument("scenario")
@click.option("--precision", type=float, help="Target 95% half-width as a fraction of "
              "gamma, every class (default: the scenario's [packet] precision, else 0.02).")
@click.option("--pilot-flows", type=COUNT, help="Flows of each point's pilot run (default: "
              "60 relaxation times of the busiest resource, at least 5000).")
@click.option("--jobs", type=int, help="Worker processes the sweep would use, for its wall "
              "time, at most 1024 (default: all cores, as the sweep's).")
@click.option("--policies", help="Packet policies, comma-separated (default: the "
              "scenario's).")
@click.option("--loads", help="Load values, e.g. '0.5,0.9' (default: the scenario's).")
@click.option("--seed", type=COUNT, help="Seed of the pilots (default: the scenario's).")
@console.output_option(help="CSV file for the full table.")
@user_errors
def plan(scenario, precision, pilot_flows, jobs, policies, loads, seed, output):
    """Run-length advisor: from a short pilot run per packet point of SCENARIO, the flows
    (one run) or replications each point needs for a target precision of every class's
    gamma, and the sweep's wall time on this machine. An estimate, not a guarantee."""

    _check_jobs(jobs)
    check_outputs([(output, "--output")], csv=True)
    table = api.plan(load_scenario(scenario), precision=precision, pilot_flows=pilot_flows,
                     jobs=jobs, policies=split_names(policies),
                     loads=split_floats(loads, "--loads"), seed=seed,
                     progress=Progress.shown("pilots"))
    if output:
        write_csv(table, output)
    click.echo(advice_text(table, table.attrs["jobs"]))
    for line in advice_warnings(table):
        _log(f"warning: {line}")
    if output:
        _log(f"wrote {output}")


@main.command()
@click.argument("problem")
@click.option("--policies", help="Policies to run, comma-separated (default: the file's "
              "list or all): " + ", ".join(registry.names(registry.ALLOCATION)) + ".")
@console.output_option(help="CSV with one row per (policy, user).")
@click.option("--no-properties", is_flag=True, help="Skip the property checks.")
@user_errors
def allocate(problem, policies, output, no_properties):
    """Static allocation of PROBLEM (TOML: resources, servers, users) under the seed
    papers' policies, with tasks, dominant shares, utilisation and properties."""

    check_outputs([(output, "--output")], csv=True)
    report = api.allocate(problem, split_names(policies), properties=not no_properties)
    click.echo(report.text())
    if output:
        write_csv(report.table(), output)
        click.echo(f"wrote {output}", err=True)


@main.command()
@click.argument("scenario")
@console.output_option("-o", "--output", "results", help="Results directory "
              "(default: results/<scenario name>).")
@click.option("--jobs", type=int, help=JOBS_HELP)
@click.option("--scheduler", help=SCHEDULER_HELP)
@click.option("--tolerance", type=float, default=0.05, show_default=True,
              help="Relative difference from the fluid γ that passes even outside the CI.")
@user_errors
def cluster(scenario, results, jobs, scheduler, tolerance):
    """The cluster points of SCENARIO's [cluster] section (docs: guide/clusters.md) and
    the fluid curves, then cluster γ against fluid γ (exit 1 if a point fails); or, with
    [cluster] trace, one run of the trace per policy (a summary, tables and figures)."""

    _check_jobs(jobs, scheduler)
    result = api.cluster(load_scenario(scenario), results, jobs=jobs, scheduler=scheduler,
                         tolerance=tolerance, progress=Progress.shown("sweep"), log=_log)
    if "jct_mean" in result.summary:  # (a trace: no load axis, nothing to validate)
        console.print_trace(result.summary)
        click.echo(f"results in {result.results_dir}/ ({pipeline.TRACE_OUTPUTS})")
        sys.exit(0)
    console.print_validation(result.validation, tolerance)
    click.echo(f"results in {result.results_dir}/ (summary.csv, validation.csv)")
    console.exit_validated(result.validation)


if __name__ == "__main__":
    console.command_line(main)
