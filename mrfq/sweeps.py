"""Sweeps: every point of a scenario — fluid (policy, load) points and packet (policy,
load, replication) points — one result file per point, resumable and parallel (the one
executor, :mod:`mrfq.executor`: local processes or Dask), and the summary table built
from them.

What a point is, how it is computed, what its key is and how its records become summary
rows is its kind's business (:mod:`mrfq.kinds`); how many replications a (policy, load)
gets is the plan's (:mod:`mrfq.point_plan`). A point's file is named by a hash of exactly what
determines its numbers (:func:`mrfq.kinds.point_key`), so editing a scenario's name,
description or list of loads leaves every finished point valid. Files are written
atomically (temporary file + rename): an interrupted sweep — Ctrl-C or SIGKILL —
restarted recomputes nothing that finished.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pandas as pd

from mrfq import arguments, policies
from mrfq.errors import InputError
from mrfq.executor import check_scheduler, execute
from mrfq.fluid.method import record_method
from mrfq.io import (
    SUMMARY_COLUMNS,
    atomic_path,
    check_not_directories,
    check_writable_dir,
    read_table,
    write_csv,
)
from mrfq.kinds import (  # noqa: F401 - Point, point_key, point_filename: the sweep's API
    REALISATIONS,
    Point,
    compute_point,
    is_record,
    kind_of,
    kind_of_record,
    point_filename,
    point_key,
)
from mrfq.kinds.cluster import TRACE_FILE
from mrfq.point_plan import Group, Plan
from mrfq.scenario import PacketConfig, Scenario, load_scenario, scenario_from_dict

POINTS_DIR = "points"
SCENARIO_FILE = "scenario.json"
SUMMARY_FILE = "summary.csv"
SIZE_BINS_FILE = "size_bins.csv"
VALIDATION_FILE = "validation.csv"  # (written by mrfq.pipeline.validate, from the summary)
KINDS = REALISATIONS


def sweep_groups(scenario: Scenario, kinds: Iterable[str] = KINDS) -> list[Group]:
    """The (realisation, policy, load) groups of a scenario: the policies of each
    realisation's table (``[fluid] policies``, ``[packet] policies``) at every load, and
    the fluid counterparts of the other realisations' policies (validation needs them)."""
    kinds = [k for k in REALISATIONS if k in set(kinds)]
    chosen = {kind: list(getattr(scenario, kind).policies) for kind in kinds}
    if policies.FLUID in chosen:
        for kind in kinds:
            for policy in chosen[kind] if kind != policies.FLUID else ():
                target = policies.get(kind, policy).realises
                if target is not None and target not in chosen[policies.FLUID]:
                    chosen[policies.FLUID].append(target)
    return [(kind, policy, load) for kind in kinds for policy in chosen[kind]
            for load in scenario.load_values]


def sweep_points(scenario: Scenario, kinds: Iterable[str] = KINDS) -> list[Point]:
    """The first points of every group (:func:`sweep_groups`): what a sweep without
    stored points starts with."""
    return [Point(*group, r) for group in sweep_groups(scenario, kinds)
            for r in range(kind_of(scenario, *group).first_replications(scenario))]


def _stored(scenario: Scenario, points_dir: Path,
            unreadable: Callable[[Path], None] | None = None
            ) -> Callable[[Point], dict | None]:
    """A point's stored record, None when there is none. A file that is not a record
    (truncated by a crash outside mrfq, which writes atomically, or edited) is handed to
    ``unreadable`` and counts as missing, so a sweep computes it again; without
    ``unreadable`` (reading a directory, not filling it) it is an InputError naming it."""
    def stored(point: Point) -> dict | None:
        path = points_dir / point_filename(scenario, point)
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:  # (JSONDecodeError is a ValueError)
            record = exc
        if is_record(scenario, point, record):
            return record
        if unreadable is None:
            raise InputError("not a point record (truncated or edited?): delete it, or run "
                             "the sweep again, which computes it anew", None, str(path))
        unreadable(path)
        return None
    return stored


def store_scenario(scenario: Scenario, results_dir: str | Path) -> None:
    """Write the scenario a results directory holds (replacing an older version)."""
    with atomic_path(Path(results_dir) / SCENARIO_FILE) as tmp:
        tmp.write_text(json.dumps(scenario.to_dict(), indent=1))


def check_same_scenario(results_dir: str | Path, scenario: Scenario,
                        markers: Sequence[str]) -> None:
    """InputError when ``results_dir`` holds a run (any of its ``markers`` files) of a
    scenario of another name: that run's figures, named after its scenario, would stay
    beside this run's, drawn from tables this run replaces. Only the stored scenario's
    name is read: one that cannot be read is no reason to refuse (it is replaced)."""
    results = Path(results_dir)
    if not any((results / marker).is_file() for marker in markers):
        return
    try:
        other = json.loads((results / SCENARIO_FILE).read_text(encoding="utf-8"))["name"]
    except (OSError, ValueError, TypeError, KeyError):
        return
    if isinstance(other, str) and other != scenario.name:
        raise InputError(f"holds the run of scenario {other!r} ({', '.join(markers)}): give "
                         f"this run of {scenario.name!r} a directory of its own", None,
                         str(results), output=True)


def stored_scenario(results_dir: str | Path) -> Scenario:
    """The scenario of a results directory (InputError if it is not one)."""
    results = Path(results_dir)
    path = results / SCENARIO_FILE
    if path.is_file():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # (edited, truncated)
            raise InputError(f"not a scenario mrfq wrote: {exc}", None, str(path)) from None
        # as mrfq stored them until 2026-11-28: a pooled cluster's empty server list, and
        # the default batches (read as set, and refused above fewer measured flows)
        cluster, packet = (raw.get(key) if isinstance(raw, dict) else None
                           for key in ("cluster", "packet"))
        if isinstance(cluster, dict) and cluster.get("servers") == []:
            del cluster["servers"]
        if isinstance(packet, dict) and packet.get("batches") == PacketConfig.batches:
            del packet["batches"]
        return scenario_from_dict(raw, str(path))
    if (results / "scenario.toml").is_file():  # written by mrfq before 0.2
        return load_scenario(results / "scenario.toml")
    raise InputError("not a results directory (no scenario.json)", None, str(results))


def run_sweep(scenario: Scenario | str | Path, results_dir: str | Path, *,
              jobs: int | None = None, scheduler: str | None = None,
              kinds: Iterable[str] = KINDS,
              progress: Callable[[int, int], None] | None = None,
              log: Callable[[str], None] | None = None,
              record: bool = True) -> pd.DataFrame:
    """Compute every missing point of ``scenario`` into ``results_dir``; return (and write
    as ``summary.csv``) the summary of all its points.

    ``jobs``: local worker processes (default: one per core). ``scheduler``: address of a
    Dask distributed scheduler (``tcp://host:8786``) instead of local processes; workers
    receive the scenario object, so they need no access to its file. Results do not
    depend on either. ``record=False`` computes and caches the points without making
    this scenario the one the directory holds (no scenario.json, no summary.csv): for
    partial sweeps such as ``mrfq fluid --loads``.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    jobs = arguments.count(jobs, "jobs")
    scheduler = arguments.scheduler(scheduler)  # (an address that can be used, or none)
    results = Path(results_dir)
    check_writable_dir(results, run="sweep")
    points_dir = results / POINTS_DIR
    if points_dir.exists() and not points_dir.is_dir():  # (said before any work)
        raise InputError("exists and is not a directory (the sweep's point files go "
                         "there)", None, str(points_dir))
    if record:
        check_not_directories(results, (SCENARIO_FILE, SUMMARY_FILE, SIZE_BINS_FILE))
    groups = sweep_groups(scenario, kinds)
    for group in groups:  # every point computable (e.g. init = "fluid"), before any work
        kind_of(scenario, *group).check(scenario, group[1], group[2])
    broken: list[Path] = []
    plan = Plan(scenario, groups, _stored(scenario, points_dir, broken.append))
    todo = plan.start()
    if todo:  # (a read-only points/ was found when the first point was saved)
        check_writable_dir(points_dir)
    if broken:
        say = log or (lambda text: warnings.warn(text, stacklevel=3))
        say(f"{len(broken)} stored point file(s) not a point record, computed again: "
            + ", ".join(path.name for path in broken[:3]) + (", ..." if len(broken) > 3 else ""))
    done = plan.read
    total = done + len(todo)
    if scheduler and todo:  # unreachable: one line, before any point is announced
        check_scheduler(scheduler)
    if log:
        log(f"{total} point{'s' * (total != 1)}, {done} already done, {len(todo)} to compute"
            + (f" at first (then packet replications are added until the 95% half-width "
               f"is {scenario.packet.precision:.12g} of gamma: the total grows)"
               if scenario.packet.precision is not None and policies.PACKET in kinds
               else ""))
    if progress:  # the points stored before this run: a progress line's ETA leaves them out
        progress(done, total)
    # the expensive points first, so parallel workers finish together
    todo.sort(key=lambda p: (plan.kinds[(p.kind, p.policy, p.load)].PRIORITY, -p.load))
    if todo:
        if not scheduler:
            for kind in {plan.kinds[g] for g in plan.kinds}:
                kind.prepare({p.policy for p in todo if plan.kinds[
                    (p.kind, p.policy, p.load)] is kind}, jobs or os.cpu_count() or 1)

        def follow_up(point: Point, result: dict) -> list[Point]:
            nonlocal total
            more = plan.finished(point, result)
            total += len(more)
            return more

        for point, result in execute(compute_point, todo, arguments=(scenario,), jobs=jobs,
                                     scheduler=scheduler, follow_up=follow_up):
            # atomic_path creates the directory with the first finished point
            with atomic_path(points_dir / point_filename(scenario, point)) as tmp:
                tmp.write_text(json.dumps(result, default=float))
            done += 1
            if progress:
                progress(done, total)
    # the summary is the directory's: points of kinds not swept now (a `mrfq run`'s
    # packet points under `mrfq cluster`) stay in it, as their files stay in points/
    records = load_records(scenario, results, KINDS if record else kinds)
    summary = summarize(scenario, records)
    if record:  # the scenario and its summary change together, at the end
        store_scenario(scenario, results)
        _replace_summary(results, summary, summarize_size_bins(scenario, records))
    return summary


def _replace_summary(results: Path, summary: pd.DataFrame, bins: pd.DataFrame) -> None:
    """Write a sweep's summary and size bins; what was derived from an other summary (a
    changed scenario, precision, ...) goes: its validation (whose verdicts `mrfq plot`
    rings on the new points) and size bins the new points do not have."""
    path = results / SUMMARY_FILE
    before = path.read_bytes() if path.is_file() else None
    write_csv(summary, path)
    if before is not None and path.read_bytes() != before and (
            results / VALIDATION_FILE).is_file():
        (results / VALIDATION_FILE).unlink()
    if not bins.empty:
        write_csv(bins, results / SIZE_BINS_FILE)
    elif (results / SIZE_BINS_FILE).is_file():
        (results / SIZE_BINS_FILE).unlink()


def load_records(scenario: Scenario, results_dir: str | Path,
                 kinds: Iterable[str] = KINDS) -> list[dict]:
    """Every stored point record of ``scenario`` in a results directory (files of other
    scenario versions are ignored): per group, replications 0, 1, … up to the first one
    missing or the kind's most (the stopping rule, applied when combining, decides how
    many count). A sweep leaves no gap; in a directory where a replication was deleted,
    the ones after it are not read."""
    stored = _stored(scenario, Path(results_dir) / POINTS_DIR)
    records = []
    for group in sweep_groups(scenario, kinds):
        for r in range(kind_of(scenario, *group).max_replications(scenario)):
            record = stored(Point(*group, r))
            if record is None:
                break
            records.append(record)
    return records


def _groups(scenario: Scenario, records: list[dict]
            ) -> dict[Group, tuple[object, list[dict]]]:
    """The records of every (realisation, policy, load), in record order, with the kind
    module that made them."""
    groups: dict[Group, tuple[object, list[dict]]] = {}
    for record in records:
        group = (record["kind"], record["policy"], record["load"])
        if group not in groups:
            groups[group] = (kind_of_record(record), [])
        groups[group][1].append(record)
    return groups


def summarize_size_bins(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Flow completion time and slowdown by flow size for every (policy, load) whose kind
    measures them (packet points), one row per class and size bin."""
    frames = [kind.size_bin_rows(scenario, group)
              for kind, group in _groups(scenario, records).values()]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def summarize(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Tidy summary, one row per (kind, policy, load, class): gamma, ci_low, ci_high,
    replications, flows_measured, mean_in_progress, error_estimate and method (fluid:
    markov, whose interval is γ itself, or simulation), and the packet estimators'
    columns (:func:`mrfq.kinds.packet.combine_packet_records`, whose γ intervals take
    their variance from the Markov fluid records among ``records``): each kind's
    ``summary_rows``, fluid rows first."""
    grouped = _groups(scenario, records)
    order = {kind: i for i, kind in enumerate(REALISATIONS)}
    # the Markov fluid records, which packet points take their γ intervals' variance from
    fluid_records = {(r["policy"], float(r["load"])): r for r in records
                     if r["kind"] == policies.FLUID and record_method(r) == "markov"}
    rows = []
    for group in sorted(grouped, key=lambda g: order[g[0]]):
        kind, group_records = grouped[group]
        rows += kind.summary_rows(scenario, group_records, fluid_records)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    position = {name: i for i, name in enumerate(scenario.class_names)}
    frame["_c"] = frame["class"].astype(str).map(position)
    frame = frame.sort_values(["kind", "policy", "load", "_c"], kind="stable")
    return frame.drop(columns="_c").reset_index(drop=True)


def read_summary(results_dir: str | Path) -> pd.DataFrame:
    """The ``summary.csv`` a sweep wrote (class and policy names read as text)."""
    path = Path(results_dir) / SUMMARY_FILE
    if not Path(results_dir).is_dir():  # (a review: "holds no summary.csv" for a file)
        raise InputError("does not exist" if not Path(results_dir).exists() else
                         "is not a directory (a results directory of mrfq sweep or run)",
                         None, str(results_dir))
    if not path.is_file():  # (a trace run is not swept: sweep refuses its scenario)
        raise InputError(f"holds a trace run ({TRACE_FILE}): a trace has no fluid model to "
                         "validate against" if (path.parent / TRACE_FILE).is_file() else "holds "
                         "no summary.csv yet (run mrfq sweep first)", None, str(results_dir))
    text = ("class", "policy", "kind", "ci_problem", "ci_method", "ci_warning")
    summary = read_table(path, SUMMARY_COLUMNS, dtype=dict.fromkeys(text, str))
    for column in ("ci_problem", "ci_warning"):
        if column in summary:
            summary[column] = summary[column].fillna("")
    return summary
