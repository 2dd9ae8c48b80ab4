"""Sweeps: every fluid (policy, load) point and every packet (policy, load, replication)
point of a scenario, one result file per point, resumable and parallel (the executor of
:mod:`mrfq.executor`: local processes or Dask), and the summary table built from them.

A point's file is named by a hash of exactly what determines its numbers
(:func:`point_key`): the requirement vectors (packet mixes, weights, round-trip times),
the class loads at that point, the kind's own configuration, the seed and replication,
and the versions of the code that produced it (engine or solver, and the statistics).
Editing a scenario's name, description or list of loads therefore leaves every finished
point valid. Files are written atomically (temporary file + rename): an interrupted sweep
— Ctrl-C or SIGKILL — restarted recomputes nothing that finished.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.errors import InputError
from mrfq.io import atomic_path, write_csv
from mrfq.scenario import Scenario, load_scenario, scenario_from_dict

POINTS_DIR = "points"
SCENARIO_FILE = "scenario.json"
SUMMARY_FILE = "summary.csv"
SIZE_BINS_FILE = "size_bins.csv"
KINDS = (policies.FLUID, policies.PACKET)


@dataclass(frozen=True)
class Point:
    """One unit of work: a fluid (policy, load) or a packet (policy, load, replication)."""

    kind: str
    policy: str
    load: float
    replication: int = 0


def _floats(values) -> list:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def point_key(scenario: Scenario, point: Point) -> str:
    """Hash of everything that determines a point's stored numbers (and nothing else)."""
    rho = scenario.class_loads(point.load)
    if point.kind == policies.FLUID:
        from mrfq.fluid.flowsim import FLOWSIM_VERSION
        from mrfq.fluid.markov import solver_version
        from mrfq.fluid.method import CONFIDENCE, WARMUP, fluid_method

        parts = {"requirements": _floats(scenario.requirements),
                 "shape": list(scenario.requirements.shape),
                 "weights": _floats(scenario.weights), "rho": _floats(rho)}
        if fluid_method(scenario, point.policy, point.load) == "markov":
            # as before the method choice: finished Markov points keep their keys
            parts.update(tolerance=scenario.fluid.tolerance,
                         solver=solver_version(point.policy))
        else:
            cfg = scenario.fluid
            parts.update(method="simulation", flowsim=FLOWSIM_VERSION,
                         sizes=[law.key() for law in scenario.size_laws], flows=cfg.flows,
                         replications=cfg.replications, seed=cfg.seed, warmup=WARMUP,
                         confidence=CONFIDENCE, estimator="ratio")
    else:
        from mrfq.packet.kernel import ENGINE_VERSION
        from mrfq.stats import STATS_VERSION

        cfg = scenario.packet
        parts = {"resources": len(scenario.resources),
                 "classes": [{"packets": _floats(c.packet_requirements),
                              "probabilities": _floats(c.packet_probabilities),
                              "order": c.packet_order, "weight": c.weight, "rtt": c.rtt}
                             for c in scenario.classes],
                 "rho": _floats(rho), "mean_size": cfg.mean_size, "window": cfg.window,
                 "flows": cfg.flows, "seed": cfg.seed,
                 "replication": point.replication, "engine": ENGINE_VERSION,
                 "warmup": cfg.warmup, "batches": cfg.batches, "statistics": STATS_VERSION}
        if point.policy == "drfq-dovetail":  # the only policy Δ acts on
            parts["delta"] = repr(cfg.delta)
        if not scenario.exponential_sizes:  # absent for geometric sizes: older keys hold
            parts["sizes"] = [law.key() for law in scenario.size_laws]
        if point.policy == "bottleneck-fq":  # the only policy fq_resource acts on
            parts["fq_resource"] = scenario.fq_resource_index
        if cfg.init != "empty":  # absent for an empty start: older keys hold
            from mrfq.fluid.markov import solver_version

            target = policies.fluid_counterpart(point.policy)
            parts.update(init=cfg.init, tolerance=scenario.fluid.tolerance,
                         solver=solver_version(target) if target else None)
    parts.update(kind=point.kind, policy=point.policy)
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def point_filename(scenario: Scenario, point: Point) -> str:
    rep = f"-r{point.replication}" if point.kind == policies.PACKET else ""
    return (f"{point.kind}-{point.policy}-{point.load:g}{rep}-"
            f"{point_key(scenario, point)}.json")


def sweep_points(scenario: Scenario, kinds: Iterable[str] = KINDS) -> list[Point]:
    """All points of a scenario: fluid curves for the fluid policies and for the fluid
    counterparts of the packet policies (validation needs them), packet points for every
    replication."""
    kinds = set(kinds)
    points = []
    if policies.FLUID in kinds:
        chosen = list(scenario.fluid.policies)
        if policies.PACKET in kinds:
            for p in scenario.packet.policies:
                target = policies.fluid_counterpart(p)
                if target is not None and target not in chosen:
                    chosen.append(target)
        points += [Point(policies.FLUID, p, load) for p in chosen
                   for load in scenario.load_values]
    if policies.PACKET in kinds:
        from mrfq.points import first_replications

        points += [Point(policies.PACKET, p, load, r) for p in scenario.packet.policies
                   for load in scenario.load_values
                   for r in range(first_replications(scenario.packet))]
    return points


class _PrecisionPlan:
    """The packet replications of a sweep with a precision target (``[packet] precision``).

    Every (policy, load) starts with :func:`mrfq.points.first_replications` replications;
    as they finish, the stopping rule (:func:`mrfq.points.stopping`) is evaluated in
    replication order, and while it says "more", replications are scheduled up to half-way
    between those finished and the number the spread so far suggests (so that little is
    computed beyond the stopping point). Which replications a point
    uses depends only on their values, never on how many ran at once; a replication
    computed beyond the stopping point is stored and ignored. Replications already on
    disk (an interrupted sweep, or another precision) are read, not recomputed.
    """

    def __init__(self, scenario: Scenario, points_dir: Path):
        self.scenario = scenario
        self.points_dir = points_dir
        groups = [(p, load) for p in scenario.packet.policies for load in scenario.load_values]
        self.records: dict[tuple[str, float], dict[int, dict]] = {g: {} for g in groups}
        self.scheduled = dict.fromkeys(groups, 0)  # replications < this: stored or running
        self.checked = dict.fromkeys(groups, 0)  # the rule failed for every n < this
        self.decided: dict[tuple[str, float], int] = {}

    def start(self) -> list[Point]:
        """The replications to compute first (what is on disk is read)."""
        return [point for group in self.records for point in self._advance(group)]

    def finished(self, point: Point, record: dict) -> list[Point]:
        """Record a computed replication; return the next ones to compute."""
        if point.kind != policies.PACKET:
            return []
        group = (point.policy, point.load)
        self.records[group][point.replication] = record
        return [] if group in self.decided else self._advance(group)

    def _advance(self, group: tuple[str, float]) -> list[Point]:
        from mrfq.points import first_replications, stopping

        policy, load = group
        records = self.records[group]
        while True:
            decision = stopping(self.scenario.packet, list(records.values()),
                                start=self.checked[group])
            if decision.replications is not None:
                self.decided[group] = decision.replications
                return []
            prefix = 0
            while prefix in records:
                prefix += 1
            self.checked[group] = max(self.checked[group], prefix + 1)
            # schedule half-way to the number the spread suggests, and at most half as
            # many again as are finished: the rule stops at the first n that qualifies,
            # usually before that number, early spreads are noisy, and what runs past
            # the stopping point is wasted. Re-estimated as every replication finishes.
            target = min(prefix + -(-(decision.wanted - prefix) // 2),
                         prefix + prefix // 2 + 1)
            if prefix < first_replications(self.scenario.packet):
                target = decision.wanted  # the first replications: all at once
            if self.scheduled[group] >= target:
                return []
            new = []
            for r in range(self.scheduled[group], target):
                path = self.points_dir / point_filename(self.scenario,
                                                        Point(policies.PACKET, policy, load, r))
                if r in records:
                    continue
                if path.exists():
                    records[r] = json.loads(path.read_text())
                else:
                    new.append(Point(policies.PACKET, policy, load, r))
            self.scheduled[group] = target
            if new:
                return new


def compute_point(scenario: Scenario, point: Point) -> dict:
    """Compute one point with its kind's point function (runs in a worker)."""
    from mrfq.points import POINT_FUNCTIONS

    if point.kind == policies.FLUID:
        return POINT_FUNCTIONS[point.kind](scenario, point.policy, point.load)
    return POINT_FUNCTIONS[point.kind](scenario, point.policy, point.load, point.replication)


def _warm_up(packet_policies: set[str]) -> None:
    """Compile (or load from the disk cache) the loops of these packet policies once,
    before fanning out to workers, so the workers do not all compile at once."""
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel

    tiny = scenario_from_dict({"resources": ["a", "b"], "classes": [
        {"requirements": [1, 0.5], "load_share": 1}], "load": {"values": [0.5]}})
    model = PacketModel.from_scenario(tiny)
    for policy in sorted(packet_policies):
        run_replication(model, policy, tiny.class_loads(0.5), np.random.SeedSequence(0),
                        flows=3, mean_size=3, window=2)


def store_scenario(scenario: Scenario, results_dir: str | Path) -> None:
    """Write the scenario a results directory holds (replacing an older version)."""
    with atomic_path(Path(results_dir) / SCENARIO_FILE) as tmp:
        tmp.write_text(json.dumps(scenario.to_dict(), indent=1))


def stored_scenario(results_dir: str | Path) -> Scenario:
    """The scenario of a results directory (InputError if it is not one)."""
    results = Path(results_dir)
    path = results / SCENARIO_FILE
    if path.is_file():
        return scenario_from_dict(json.loads(path.read_text()), str(path))
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
    from mrfq.executor import execute

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if jobs is not None and jobs < 1:
        raise InputError("must be >= 1", "--jobs")
    kinds = tuple(kinds)
    results = Path(results_dir)
    if results.exists() and not results.is_dir():
        raise InputError("exists and is not a directory", None, str(results))
    points_dir = results / POINTS_DIR
    points = sweep_points(scenario, kinds)
    if policies.PACKET in kinds:  # init = "fluid": every point's Markov model, up front
        from mrfq.points import check_init

        for policy in scenario.packet.policies:
            for load in scenario.load_values:
                check_init(scenario, policy, load)
    plan = None
    if scenario.packet.precision is not None and policies.PACKET in kinds:
        plan = _PrecisionPlan(scenario, points_dir)
        points = [p for p in points if p.kind != policies.PACKET]
    todo = [p for p in points if not (points_dir / point_filename(scenario, p)).exists()]
    if plan is not None:
        todo += plan.start()
        stored = sum(len(r) for r in plan.records.values())
        points += [Point(policies.PACKET, policy, load, r)
                   for (policy, load), reps in plan.records.items() for r in reps]
        points += [p for p in todo if p.kind == policies.PACKET]
    total, done = len(points), len(points) - len(todo)
    if log:
        log(f"{total} points, {done} already done, {len(todo)} to compute"
            + (f" (packet replications added until the 95% half-width is "
               f"{scenario.packet.precision:g} of gamma; {stored} stored ones read)"
               if plan is not None else ""))
    if progress:
        progress(done, total)
    # the expensive points first, so parallel workers finish together
    todo.sort(key=lambda p: (p.kind != policies.PACKET, -p.load))
    if todo:
        if not scheduler:
            _warm_up({p.policy for p in todo if p.kind == policies.PACKET})
        added = 0

        def follow_up(point: Point, result: dict) -> list[Point]:
            nonlocal added
            more = plan.finished(point, result)
            added += len(more)
            return more

        for point, result in execute(compute_point, todo, arguments=(scenario,), jobs=jobs,
                                     scheduler=scheduler,
                                     follow_up=follow_up if plan is not None else None):
            # atomic_path creates the directory with the first finished point
            with atomic_path(points_dir / point_filename(scenario, point)) as tmp:
                tmp.write_text(json.dumps(result, default=float))
            done += 1
            if progress:
                progress(done, total + added)
    records = load_records(scenario, results, kinds)
    summary = summarize(scenario, records)
    if record:  # the scenario and its summary change together, at the end
        store_scenario(scenario, results)
        write_csv(summary, results / SUMMARY_FILE)
        bins = summarize_size_bins(scenario, records)
        if not bins.empty:
            write_csv(bins, results / SIZE_BINS_FILE)
    return summary


def load_records(scenario: Scenario, results_dir: str | Path,
                 kinds: Iterable[str] = KINDS) -> list[dict]:
    """Every stored point record of ``scenario`` in a results directory (files of other
    scenario versions are ignored)."""
    records = []
    packet = scenario.packet
    sequential = packet.precision is not None
    for point in sweep_points(scenario, kinds):
        if sequential and point.kind == policies.PACKET:
            continue
        path = Path(results_dir) / POINTS_DIR / point_filename(scenario, point)
        if path.exists():
            records.append(json.loads(path.read_text()))
    if sequential and policies.PACKET in set(kinds):
        # replications 0, 1, … up to the first one missing; the stopping rule
        # (mrfq.points.stopping, applied when combining) decides how many count
        for policy in packet.policies:
            for load in scenario.load_values:
                for r in range(packet.max_replications):
                    path = Path(results_dir) / POINTS_DIR / point_filename(
                        scenario, Point(policies.PACKET, policy, load, r))
                    if not path.exists():
                        break
                    records.append(json.loads(path.read_text()))
    return records


def _packet_groups(records: list[dict]) -> dict[tuple[str, float], list[dict]]:
    """The packet records (replications) of every (policy, load), in record order."""
    groups: dict[tuple[str, float], list[dict]] = {}
    for record in records:
        if record["kind"] == policies.PACKET:
            groups.setdefault((record["policy"], record["load"]), []).append(record)
    return groups


def summarize_size_bins(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Flow completion time and slowdown by flow size for every packet (policy, load), one
    row per class and size bin (:func:`mrfq.points.size_bin_table`; with a precision
    target, over the replications the stopping rule chose)."""
    from mrfq.points import chosen_replications, size_bin_table

    frames = []
    for (policy, load), group in _packet_groups(records).items():
        table = size_bin_table(scenario, chosen_replications(scenario.packet, group))
        if not table.empty:
            table.insert(0, "load", load)
            table.insert(0, "policy", policy)
            frames.append(table)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def summarize(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Tidy summary, one row per (kind, policy, load, class): gamma, ci_low, ci_high,
    replications, flows_measured, mean_in_progress, error_estimate and method (fluid:
    markov, whose interval is γ itself, or simulation, :mod:`mrfq.fluid.method`), and the
    packet estimators' columns (:func:`mrfq.points.combine_packet_records`)."""
    from mrfq.fluid.method import class_interval, record_method
    from mrfq.points import combine_packet_records

    rows = []
    for record in records:
        if record["kind"] == policies.FLUID:
            for k, (name, c) in enumerate(zip(scenario.class_names, record["classes"],
                                              strict=True)):
                low, high = class_interval(record, k)
                rows.append({"kind": policies.FLUID, "policy": record["policy"],
                             "load": record["load"], "class": name, "gamma": c["gamma"],
                             "ci_low": low, "ci_high": high,
                             "replications": record.get("replications", 0),
                             "flows_measured": c.get("flows_measured", 0),
                             "mean_in_progress": c["mean_in_progress"],
                             "error_estimate": c["error_estimate"],
                             "method": record_method(record)})
    for (policy, load), group in _packet_groups(records).items():
        combined = combine_packet_records(scenario, group)
        combined = combined.rename(columns={"mean_sojourn": "mean_fct"})
        for row in combined.to_dict("records"):
            rows.append({"kind": policies.PACKET, "policy": policy, "load": load, **row,
                         "error_estimate": np.nan})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    order = {name: i for i, name in enumerate(scenario.class_names)}
    frame["_c"] = frame["class"].astype(str).map(order)
    frame = frame.sort_values(["kind", "policy", "load", "_c"], kind="stable")
    return frame.drop(columns="_c").reset_index(drop=True)
