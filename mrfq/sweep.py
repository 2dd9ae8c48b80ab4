"""Sweeps: every (policy, load, replication) packet point and every fluid point of a
scenario, one result file per point, resumable and parallel (local processes or Dask).

A point's file name carries a hash of everything that determines it (scenario content,
kind, policy, load, replication, seed, engine version), and is written atomically
(temporary file + rename): an interrupted sweep — Ctrl-C or SIGKILL — restarted with the
same arguments recomputes nothing that finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mrfq.errors import InputError
from mrfq.io import atomic_path, write_csv
from mrfq.packet.kernel import ENGINE_VERSION
from mrfq.scenario import Scenario, load_scenario

POINTS_DIR = "points"
SCENARIO_COPY = "scenario.toml"


@dataclass(frozen=True)
class Point:
    """One unit of work: a fluid (policy, load) or a packet (policy, load, replication)."""

    kind: str
    policy: str
    load: float
    replication: int = 0

    def key(self, scenario: Scenario) -> str:
        cfg = scenario.packet
        parts = [scenario.content_hash, self.kind, self.policy, repr(float(self.load)),
                 str(self.replication), ENGINE_VERSION]
        if self.kind == "packet":
            parts += [str(cfg.seed), repr(cfg.mean_size), str(cfg.window), str(cfg.flows),
                      repr(cfg.warmup), repr(cfg.delta), str(cfg.batches)]
        else:
            from mrfq.fluid.markov import SOLVER_VERSION

            parts += [repr(scenario.fluid.tolerance), SOLVER_VERSION]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    def filename(self, scenario: Scenario) -> str:
        rep = f"-r{self.replication}" if self.kind == "packet" else ""
        return f"{self.kind}-{self.policy}-{self.load:g}{rep}-{self.key(scenario)}.json"


def sweep_points(scenario: Scenario, fluid: bool = True, packet: bool = True) -> list[Point]:
    """All points of a scenario: fluid curves for the fluid policies and the fluid
    counterparts of the packet policies, packet points for every replication."""
    from mrfq.policies import fluid_counterpart

    points = []
    if fluid:
        policies = list(scenario.fluid.policies)
        if packet:
            for p in scenario.packet.policies:
                target = fluid_counterpart(p)
                if target is not None and target not in policies:
                    policies.append(target)
        points += [Point("fluid", p, load) for p in policies for load in scenario.load_values]
    if packet:
        points += [Point("packet", p, load, r) for p in scenario.packet.policies
                   for load in scenario.load_values
                   for r in range(scenario.packet.replications)]
    return points


def compute_point(scenario_path: str, point: Point) -> dict:
    """Compute one point (runs in a worker); returns a JSON-serialisable record."""
    scenario = load_scenario(scenario_path)
    started = time.perf_counter()
    if point.kind == "fluid":
        from mrfq.fluid.markov import service_rates

        result = service_rates(point.policy, scenario.requirements,
                               scenario.class_loads(point.load), scenario.weights,
                               scenario.fluid.tolerance)
        classes = [{"class": name, "gamma": float(result.gamma[k]),
                    "mean_in_progress": float(result.mean_in_progress[k]),
                    "error_estimate": float(result.error_estimate[k])}
                   for k, name in enumerate(scenario.class_names)]
        extra = {"level": result.level, "states": result.states}
    else:
        from mrfq.packet.engine import run_replication
        from mrfq.packet.model import PacketModel
        from mrfq.packet.simulate import replication_seed
        from mrfq.stats import replication_table

        cfg = scenario.packet
        rho = scenario.class_loads(point.load)
        run = run_replication(PacketModel.from_scenario(scenario), point.policy, rho,
                              replication_seed(cfg.seed, point.replication), flows=cfg.flows,
                              mean_size=cfg.mean_size, window=cfg.window, delta=cfg.delta)
        table = replication_table(run.arrival, run.completion, run.flow_class, run.size,
                                  scenario.class_names, rho, cfg.mean_size, cfg.warmup,
                                  cfg.batches)
        classes = table.to_dict("records")
        extra = {"services": run.services}
    return {"kind": point.kind, "policy": point.policy, "load": point.load,
            "replication": point.replication, "classes": classes,
            "wall_s": time.perf_counter() - started, **extra}


def _store(directory: Path, name: str, record: dict) -> None:
    with atomic_path(directory / name) as tmp:
        tmp.write_text(json.dumps(record, default=float))


def _warm_up(policies: set[str]) -> None:
    """Compile (or load from cache) the kernels of these packet policies (one compiled
    loop each) and the fluid kernels once, before fanning out to workers."""
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel
    from mrfq.scenario import scenario_from_dict

    tiny = scenario_from_dict({"resources": ["a", "b"], "classes": [
        {"requirements": [1, 0.5], "load_share": 1}], "load": {"values": [0.5]}})
    model = PacketModel.from_scenario(tiny)
    for policy in sorted(policies):
        run_replication(model, policy, tiny.class_loads(0.5), np.random.SeedSequence(0),
                        flows=3, mean_size=3, window=2)
    from mrfq.fluid.markov import service_rates

    service_rates("pf", [[1.0]], [0.3])


def run_sweep(scenario_path: str | Path, results_dir: str | Path, jobs: int | None = None,
              scheduler: str | None = None, fluid: bool = True, packet: bool = True,
              progress: Callable[[int, int], None] | None = None,
              log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run every missing point of a scenario into ``results_dir``; return the summary.

    ``jobs``: local worker processes (default: all cores). ``scheduler``: address of a
    Dask distributed scheduler (``tcp://host:8786``) instead of local processes.
    """
    scenario_path = Path(scenario_path)
    scenario = load_scenario(scenario_path)
    results = Path(results_dir)
    points_dir = results / POINTS_DIR
    points_dir.mkdir(parents=True, exist_ok=True)
    copy = results / SCENARIO_COPY
    if copy.exists() and load_scenario(copy).content_hash != scenario.content_hash:
        raise InputError("holds results of a different scenario; choose another directory",
                         None, str(results))
    if not (copy.exists() and copy.samefile(scenario_path)):
        shutil.copyfile(scenario_path, copy)
    points = sweep_points(scenario, fluid, packet)
    todo = [p for p in points if not (points_dir / p.filename(scenario)).exists()]
    total = len(points)
    done = total - len(todo)
    if log:
        log(f"{total} points, {done} already done, {len(todo)} to compute")
    if progress:
        progress(done, total)
    # the expensive points first so the workers finish together
    todo.sort(key=lambda p: (p.kind != "packet", -p.load))
    if todo:
        _warm_up({p.policy for p in todo if p.kind == "packet"})
        for record_point, record in _execute(str(copy), todo, jobs, scheduler):
            _store(points_dir, record_point.filename(scenario), record)
            done += 1
            if progress:
                progress(done, total)
    return write_summary(results)


def _execute(scenario_path: str, todo: list[Point], jobs: int | None, scheduler: str | None):
    if scheduler:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise InputError("needs the optional extra: pip install 'mrfq[dask]'",
                             "--scheduler") from None
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as exc:
            raise InputError(f"cannot reach the Dask scheduler: {exc}", "--scheduler") \
                from None
        try:
            futures = {client.submit(compute_point, scenario_path, p, pure=False): p
                       for p in todo}
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            client.close()
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for p in todo:
            yield p, compute_point(scenario_path, p)
        return
    from concurrent.futures import FIRST_COMPLETED, wait

    from mrfq.parallel import worker_pool

    with worker_pool(jobs) as pool:
        pending = {pool.submit(compute_point, scenario_path, p): p for p in todo}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield pending.pop(future), future.result()
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def load_records(results_dir: str | Path) -> tuple[Scenario, list[dict]]:
    """The scenario copy and every stored point record of a results directory that
    belongs to it (files of other scenario versions are ignored)."""
    results = Path(results_dir)
    copy = results / SCENARIO_COPY
    if not copy.exists():
        raise InputError("not a results directory (no scenario.toml)", None, str(results))
    scenario = load_scenario(copy)
    wanted = {p.filename(scenario): p for p in sweep_points(scenario)}
    records = []
    for name in sorted(wanted):
        path = results / POINTS_DIR / name
        if path.exists():
            records.append(json.loads(path.read_text()))
    return scenario, records


def summarize(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Tidy summary: kind, policy, load, class, gamma, ci_low, ci_high, replications, …"""
    from mrfq.stats import combine_replications

    rows = []
    packets: dict[tuple[str, float], list[pd.DataFrame]] = {}
    for record in records:
        if record["kind"] == "fluid":
            for c in record["classes"]:
                rows.append({"kind": "fluid", "policy": record["policy"],
                             "load": record["load"], "class": c["class"],
                             "gamma": c["gamma"], "ci_low": np.nan, "ci_high": np.nan,
                             "replications": 0, "flows_measured": 0,
                             "mean_in_progress": c["mean_in_progress"],
                             "error_estimate": c["error_estimate"]})
        else:
            packets.setdefault((record["policy"], record["load"]), []).append(
                pd.DataFrame(record["classes"]))
    for (policy, load), tables in packets.items():
        combined = combine_replications(tables, scenario.packet.mean_size)
        for _, c in combined.iterrows():
            rows.append({"kind": "packet", "policy": policy, "load": load,
                         "class": c["class"], "gamma": c["gamma"], "ci_low": c["ci_low"],
                         "ci_high": c["ci_high"], "replications": len(tables),
                         "flows_measured": c["flows_measured"],
                         "mean_in_progress": c["mean_in_progress"], "error_estimate": np.nan,
                         "ratio_estimate": c["ratio_estimate"],
                         "little_gamma": c["little_gamma"], "ci_method": c["ci_method"]})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    order = {name: i for i, name in enumerate(scenario.class_names)}
    frame["_c"] = frame["class"].astype(str).map(order)
    frame = frame.sort_values(["kind", "policy", "load", "_c"]).drop(columns="_c")
    return frame.reset_index(drop=True)


def write_summary(results_dir: str | Path) -> pd.DataFrame:
    scenario, records = load_records(results_dir)
    summary = summarize(scenario, records)
    write_csv(summary, Path(results_dir) / "summary.csv")
    return summary
