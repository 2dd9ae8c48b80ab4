"""Command line: ``mrfq run | sweep | validate | plot | fluid | simulate``.

Every user-fixable problem prints one line ``error: <file>: <field>: <problem>`` on stderr
and exits with code 2; outputs are written atomically, so a failed run leaves no file.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import click

from mrfq.errors import InputError

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"
PLOT_DIR = Path("plots")


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def user_errors(func):
    """Turn InputError (and Ctrl-C) into a one-line message and an exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            _fail(exc.message)
        except KeyboardInterrupt:
            click.echo("\ninterrupted", err=True)
            sys.exit(130)

    return wrapper


class Progress:
    """A one-line progress display on stderr: done/total, rate and ETA."""

    def __init__(self, label: str, enabled: bool = True):
        self.label = label
        self.enabled = enabled and sys.stderr.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        elapsed = time.perf_counter() - self.started
        eta = elapsed / done * (total - done) if done else float("nan")
        click.echo(f"\r{self.label}: {done}/{total} ({100 * done / total:5.1f}%) "
                   f"elapsed {elapsed:6.1f}s eta {eta:6.1f}s", err=True, nl=False)
        if done >= total:
            click.echo("", err=True)


def _load(path: str):
    from mrfq.scenario import load_scenario

    return load_scenario(path)


def _split_floats(text: str | None, field: str) -> list[float] | None:
    if not text:
        return None
    try:
        return [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise InputError(f"expected numbers, got '{text}'", field) from None


def _split_names(text: str | None) -> list[str] | None:
    return [v for v in text.replace(",", " ").split()] if text else None


@click.group()
@click.version_option(package_name="mrfq")
def main() -> None:
    """mrfq — multi-resource fair queueing: fluid model and packet simulator."""


@main.command()
@click.argument("scenario")
@click.option("-o", "--output", required=True, help="CSV file to write.")
@click.option("--policies", help="Override the fluid policies, e.g. 'drf,pf'.")
@click.option("--loads", help="Override the load values, e.g. '0.5,0.9'.")
@click.option("--tolerance", type=float, help="Relative truncation error target.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@user_errors
def fluid(scenario, output, policies, loads, tolerance, jobs):
    """Fluid service rates γ_k of SCENARIO (Markov model, BR §4.1) into a tidy CSV."""
    from dataclasses import replace

    from mrfq import policies as registry
    from mrfq.fluid.markov import fluid_curves
    from mrfq.io import write_csv

    sc = _load(scenario)
    names = _split_names(policies)
    for name in names or []:
        registry.get(registry.FLUID, name, "--policies")
    values = _split_floats(loads, "--loads")
    if values:
        for value in values:
            sc.check_load(value, "--loads")
    if tolerance is not None:
        if not tolerance > 0:
            raise InputError("must be positive", "--tolerance")
        sc = replace(sc, fluid=replace(sc.fluid, tolerance=tolerance))
    table = fluid_curves(sc, [n.lower() for n in names] if names else None, values,
                         jobs=max(1, jobs), progress=Progress("fluid"))
    write_csv(table, output)
    click.echo(table[["policy", "load", "class", "gamma", "error_estimate"]]
               .to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    click.echo(f"wrote {output}", err=True)


@main.command()
@click.argument("scenario")
@click.option("--policy", required=True, help="drfq, drfq-dovetail, pf or bmf.")
@click.option("--load", "load", required=True, type=float, help="Value on the load axis.")
@click.option("--seed", type=int, help="Override the scenario's seed.")
@click.option("-o", "--output", help="CSV file for the per-class table.")
@click.option("--flows", type=int, help="Flow arrivals per replication.")
@click.option("--mean-size", type=float, help="Mean flow size m in packets.")
@click.option("--window", type=int, help="Window W in packets.")
@click.option("--replications", type=int, help="Independent replications.")
@click.option("--warmup", type=float, help="Warm-up fraction of flow arrivals.")
@click.option("--delta", type=float, help="Dovetailing bound Δ (drfq-dovetail).")
@click.option("--flows-out", help="CSV file for per-flow records.")
@click.option("--debug", is_flag=True, help="Check engine invariants after every event.")
@user_errors
def simulate(scenario, policy, load, seed, output, flows, mean_size, window, replications,
             warmup, delta, flows_out, debug):
    """Packet simulation of SCENARIO at one load (SPEC §3)."""
    from mrfq.io import write_csv
    from mrfq.packet import simulate as run

    sc = _load(scenario)
    result = run(sc, policy, load, seed, flows=flows, mean_size=mean_size, window=window,
                 replications=replications, warmup=warmup, delta=delta,
                 debug=debug or None, progress=Progress(f"simulate {policy}"))
    if output:
        write_csv(result.classes, output)
    if flows_out:
        write_csv(result.flows, flows_out)
    cols = ["policy", "load", "class", "gamma", "ci_low", "ci_high", "flows_measured",
            "ratio_estimate", "little_gamma"]
    click.echo(result.classes[cols].to_string(index=False,
                                              float_format=lambda v: f"{v:.5g}"))
    services = int(result.classes["services"].iloc[0])
    wall = float(result.classes["wall_s"].iloc[0])
    click.echo(f"{services} packet-resource services in {wall:.2f}s "
               f"({services / max(wall, 1e-9) / 1e6:.1f} M/s)", err=True)


def _plot_results(results: Path, output: str | None) -> list[Path]:
    """Figure 3 layout (packet vs fluid) and the Figure 1/2 panels from a results dir."""
    import pandas as pd

    from mrfq.plots import fluid_comparison, packet_vs_fluid
    from mrfq.sweep import load_records, summarize

    scenario, records = load_records(results)
    summary = summarize(scenario, records)
    if summary.empty:
        raise InputError("holds no finished points yet", None, str(results))
    xlabel = ("load of the most loaded resource" if scenario.load_axis == "max"
              else f"load of resource '{scenario.load_axis}'")
    target = Path(output) if output else results / f"{scenario.name}.png"
    fluid = summary[summary["kind"] == "fluid"]
    packet = summary[summary["kind"] == "packet"]
    order = {p: i for i, p in enumerate(scenario.packet.policies)}  # the paper's panel order
    packet = packet.sort_values("policy", key=lambda s: s.map(order), kind="stable")
    written = []
    if not packet.empty:
        written += packet_vs_fluid(fluid, packet, target, scenario.description, xlabel)
    if {"bmf", "drf", "pf"} <= set(fluid["policy"]):
        comparison = target.with_name(target.stem + "_fluid.png")
        written += fluid_comparison(pd.DataFrame(fluid), comparison, scenario.description,
                                    xlabel)
    return written


@main.command()
@click.argument("sources", nargs=-1)
@click.option("-o", "--output", help="Output figure (PNG; a PDF is written beside it).")
@click.option("--jobs", type=int, default=2, show_default=True)
@user_errors
def plot(sources, output, jobs):
    """Draw figures. With no SOURCES: BR Figures 1–2 (fluid) into plots/fig1.png, fig2.png.

    A SOURCE may be a results directory of ``mrfq sweep`` (Figure 3 layout: one panel per
    packet policy, fluid lines, packet points with CIs; plus the Figure 1/2 panels) or a
    fluid CSV written by ``mrfq fluid`` (Figure 1/2 layout).
    """
    import pandas as pd

    from mrfq.fluid.markov import fluid_curves_many
    from mrfq.io import write_csv
    from mrfq.plots import fluid_comparison

    if not sources:
        scenarios = [_load(SCENARIO_DIR / f"{name}.toml")
                     for name in ("fig1_balanced", "fig2_unbalanced")]
        tables = fluid_curves_many(scenarios, jobs=max(1, jobs), progress=Progress("fluid"))
        for number, (sc, table) in enumerate(zip(scenarios, tables, strict=True), 1):
            write_csv(table, PLOT_DIR / f"fig{number}_fluid.csv")
            xlabel = ("load of the most loaded resource" if sc.load_axis == "max"
                      else f"load of resource '{sc.load_axis}'")
            for path in fluid_comparison(table, PLOT_DIR / f"fig{number}.png",
                                         sc.description, xlabel):
                click.echo(f"wrote {path}")
        return
    for source in sources:
        path = Path(source)
        if path.is_dir():
            for written in _plot_results(path, output):
                click.echo(f"wrote {written}")
            continue
        if not path.is_file():
            raise InputError("no such file", None, source)
        table = pd.read_csv(path)
        missing = {"policy", "load", "class", "gamma"} - set(table.columns)
        if missing:
            raise InputError(f"missing columns {sorted(missing)}", None, source)
        target = Path(output) if output else path.with_suffix(".png")
        for written in fluid_comparison(table, target):
            click.echo(f"wrote {written}")


def _sweep(scenario: str, results: str, jobs: int | None, scheduler: str | None):
    from mrfq.sweep import run_sweep

    if jobs is not None and jobs < 1:
        raise InputError("must be >= 1", "--jobs")
    _load(scenario)  # validate before creating anything
    bar = Progress("sweep")
    bar.enabled = True
    summary = run_sweep(scenario, results, jobs=jobs, scheduler=scheduler, progress=bar,
                        log=lambda m: click.echo(m, err=True))
    click.echo(f"wrote {Path(results) / 'summary.csv'} ({len(summary)} rows)", err=True)
    return summary


@main.command()
@click.argument("scenario")
@click.option("-o", "--output", "results", required=True, help="Results directory.")
@click.option("--jobs", type=int, help="Local worker processes (default: all cores).")
@click.option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786.")
@user_errors
def sweep(scenario, results, jobs, scheduler):
    """Every (policy, load, replication) packet point of SCENARIO plus the fluid curves.

    One file per point (hash-named, atomic): an interrupted sweep resumes where it was.
    """
    _sweep(scenario, results, jobs, scheduler)


def _validation_table(results: Path, tolerance: float) -> tuple[bool, Path]:
    from mrfq.io import write_csv
    from mrfq.sweep import load_records, summarize
    from mrfq.validate import validate_summary

    if not tolerance >= 0:
        raise InputError("must be >= 0", "--tolerance")
    scenario, records = load_records(results)
    table = validate_summary(summarize(scenario, records), tolerance)
    if table.empty:
        raise InputError("holds no packet points to validate", None, str(results))
    out = results / "validation.csv"
    write_csv(table, out)
    shown = table.assign(ci=[f"[{a:.4f}, {b:.4f}]" for a, b in
                             zip(table["ci_low"], table["ci_high"], strict=True)],
                         status=["pass" if p else "FAIL" for p in table["passed"]])
    click.echo(shown[["policy", "load", "class", "fluid_gamma", "packet_gamma", "ci",
                      "relative_difference", "status"]].to_string(
        index=False, float_format=lambda v: f"{v:.4f}"))
    failed = int((~table["passed"]).sum())
    click.echo(f"{len(table) - failed}/{len(table)} points pass "
               f"(fluid in 95% CI or within {tolerance:.0%})")
    return failed == 0, out


@main.command()
@click.argument("results")
@click.option("--tolerance", type=float, default=0.05, show_default=True,
              help="Relative difference that passes even outside the CI.")
@user_errors
def validate(results, tolerance):
    """Packet γ (95% CI) against fluid γ for every packet point; exit 1 if any fails."""
    ok, out = _validation_table(Path(results), tolerance)
    click.echo(f"wrote {out}", err=True)
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("scenario", required=False)
@click.option("-o", "--output", "results", help="Results directory "
              "(default: results/<scenario name>).")
@click.option("--jobs", type=int, help="Local worker processes (default: all cores).")
@click.option("--tolerance", type=float, default=0.05, show_default=True)
@user_errors
def run(scenario, results, jobs, tolerance):
    """The main job: fluid curves, packet sweep, validation and plots for SCENARIO
    (default: scenarios/fig3_quick.toml, the Figure 3 scenario at reduced scale)."""
    scenario = scenario or str(SCENARIO_DIR / "fig3_quick.toml")
    sc = _load(scenario)
    results = Path(results or Path("results") / sc.name)
    _sweep(scenario, str(results), jobs, None)
    ok, out = _validation_table(results, tolerance)
    for written in _plot_results(results, None):
        click.echo(f"wrote {written}")
    click.echo(f"wrote {out}")
    click.echo(f"results in {results}/ (summary.csv, validation.csv, plots)")


@main.command()
@click.argument("problem")
@click.option("--policy", "policies", multiple=True,
              help="Policy to run (repeatable; default: the file's list or all).")
@click.option("-o", "--output", help="CSV with one row per (policy, user).")
@click.option("--no-properties", is_flag=True, help="Skip the property checks.")
@user_errors
def allocate(problem, policies, output, no_properties):
    """Static allocation of PROBLEM (TOML: resources, servers, users) under the seed
    papers' policies, with tasks, dominant shares, utilisation and properties."""
    from mrfq.allocation import allocation_report
    from mrfq.io import write_csv

    report = allocation_report(problem, policies, properties=not no_properties)
    click.echo(report.text())
    if output:
        write_csv(report.table(), output)
        click.echo(f"wrote {output}", err=True)


if __name__ == "__main__":
    main()
