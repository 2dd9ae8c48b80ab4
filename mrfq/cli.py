"""Command line: ``mrfq fluid | simulate | plot``.

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

    from mrfq.fluid.markov import fluid_curves
    from mrfq.io import write_csv
    from mrfq.scenario import FLUID_POLICIES

    sc = _load(scenario)
    names = _split_names(policies)
    for name in names or []:
        if name.lower() not in FLUID_POLICIES:
            raise InputError(f"unknown policy '{name}' (choose from drf, pf, bmf)",
                             "--policies")
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


@main.command()
@click.argument("sources", nargs=-1)
@click.option("-o", "--output", help="Output figure (PNG; a PDF is written beside it).")
@click.option("--jobs", type=int, default=2, show_default=True)
@user_errors
def plot(sources, output, jobs):
    """Draw figures. With no SOURCES: BR Figures 1–2 (fluid) into plots/fig1.png, fig2.png.

    A SOURCE may be a fluid CSV written by ``mrfq fluid`` (Figure 1/2 layout).
    """
    import pandas as pd

    from mrfq.fluid.markov import fluid_curves
    from mrfq.io import write_csv
    from mrfq.plots import fluid_comparison

    if not sources:
        for number, name in ((1, "fig1_balanced"), (2, "fig2_unbalanced")):
            sc = _load(SCENARIO_DIR / f"{name}.toml")
            table = fluid_curves(sc, jobs=max(1, jobs), progress=Progress(f"fig{number}"))
            write_csv(table, PLOT_DIR / f"fig{number}_fluid.csv")
            xlabel = ("load of the most loaded resource" if sc.load_axis == "max"
                      else f"load of resource '{sc.load_axis}'")
            for path in fluid_comparison(table, PLOT_DIR / f"fig{number}.png",
                                         sc.description, xlabel):
                click.echo(f"wrote {path}")
        return
    for source in sources:
        path = Path(source)
        if not path.is_file():
            raise InputError("no such file", None, source)
        table = pd.read_csv(path)
        missing = {"policy", "load", "class", "gamma"} - set(table.columns)
        if missing:
            raise InputError(f"missing columns {sorted(missing)}", None, source)
        target = Path(output) if output else path.with_suffix(".png")
        for written in fluid_comparison(table, target):
            click.echo(f"wrote {written}")


if __name__ == "__main__":
    main()
