"""One point function per kind, and ``simulate``: the unit every sweep, ``mrfq simulate``
and ``mrfq fluid`` compute.

* :func:`fluid_point` (from :mod:`mrfq.fluid.markov`) — the Markov model's γ_k of one
  (policy, load) (BR §4.1);
* :func:`packet_point` — one independent replication of the packet model at one
  (policy, load) with its per-class statistics (SPEC §3 Measurement).

A point returns a JSON-serialisable record ``{kind, policy, load, replication, classes,
wall_s, …}`` whose ``classes`` list is in the scenario's class order. Records of a
(policy, load) combine into the per-class table with :func:`combine_packet_records`,
which the sweep summary and :func:`simulate` both use, so their schemas are one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid.markov import fluid_point
from mrfq.scenario import Scenario
from mrfq.stats import combine_replications, replication_table


def replication_seed(seed: int, replication: int) -> np.random.SeedSequence:
    """Seed of one replication: independent of the policy and load (common random
    numbers) and of how many workers run the replications."""
    return np.random.SeedSequence(seed, spawn_key=(replication,))


def _replication(scenario: Scenario, policy: str, load: float, replication: int,
                 debug: bool | None = None,
                 progress: Callable[[int, int], None] | None = None):
    from mrfq.packet.engine import run_replication
    from mrfq.packet.model import PacketModel

    cfg = scenario.packet
    rho = scenario.class_loads(load)
    started = time.perf_counter()
    run = run_replication(PacketModel.from_scenario(scenario), policy, rho,
                          replication_seed(cfg.seed, replication), flows=cfg.flows,
                          mean_size=cfg.mean_size, window=cfg.window, delta=cfg.delta,
                          fq_resource=scenario.fq_resource_index, debug=debug,
                          progress=progress)
    table = replication_table(run.arrival, run.completion, run.flow_class, run.size,
                              scenario.class_names, rho, cfg.mean_size, cfg.warmup,
                              cfg.batches)
    classes = table.drop(columns="class").to_dict("records")
    record = {"kind": policies.PACKET, "policy": policy, "load": float(load),
              "replication": int(replication), "classes": classes,
              "services": int(run.services), "wall_s": time.perf_counter() - started}
    return record, run


def packet_point(scenario: Scenario, policy: str, load: float, replication: int) -> dict:
    """One replication of the packet model (SPEC §3) at one (policy, load): per class the
    measured flows, mean sojourn, γ_k = m / E[T_k], the ratio estimator, the time-average
    number in progress, Little's γ and the batch means that intervals are built from."""
    return _replication(scenario, policy, load, replication)[0]


def combine_packet_records(scenario: Scenario, records: list[dict],
                           confidence: float = 0.95) -> pd.DataFrame:
    """Per-class table of the replications of one (policy, load): γ_k with its
    ``confidence`` interval and ``ci_method`` (:func:`mrfq.stats.combine_replications`)."""
    tables = []
    for record in sorted(records, key=lambda r: r["replication"]):
        table = pd.DataFrame(record["classes"])
        table.insert(0, "class", scenario.class_names)
        tables.append(table)
    combined = combine_replications(tables, scenario.packet.mean_size, confidence)
    combined["replications"] = len(records)
    combined["services"] = sum(int(r.get("services", 0)) for r in records)
    return combined


@dataclass
class SimulationResult:
    """``classes``: one row per class (gamma, ci_low, ci_high, …, run facts).
    ``flows``: per-flow records of every replication (replication, class, size, arrival,
    completion, measured). ``replications``: per-replication, per-class estimates."""

    classes: pd.DataFrame
    flows: pd.DataFrame
    replications: pd.DataFrame


def simulate(scenario: Scenario, policy: str, load: float, seed: int | None = None, *,
             flows: int | None = None, mean_size: float | None = None,
             window: int | None = None, replications: int | None = None,
             warmup: float | str | None = None, delta: float | None = None,
             debug: bool | None = None, confidence: float = 0.95,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Packet simulation of ``scenario`` at a value ``load`` of its load axis: the
    replications of :func:`packet_point`, combined as in a sweep.

    Keyword overrides replace the scenario's ``[packet]`` values (validated alike).
    γ_k = m / E[T_k] in work units per time unit, comparable with the fluid γ_k.
    """
    policy = policies.get(policies.PACKET, policy).name
    scenario = scenario.with_overrides(flows=flows, mean_size=mean_size, window=window,
                                       replications=replications, warmup=warmup,
                                       delta=delta, seed=seed)
    scenario.check_load(load)
    if not 0 < confidence < 1:
        raise InputError(f"must be in (0, 1), got {confidence!r}", "confidence")
    cfg = scenario.packet
    started = time.perf_counter()
    records, flow_frames = [], []
    names = np.array(scenario.class_names, dtype=object)
    for rep in range(cfg.replications):
        def report(done, total, rep=rep):
            if progress:
                progress(rep * total + done, cfg.replications * total)
        record, run = _replication(scenario, policy, load, rep, debug, report)
        records.append(record)
        # the first measured flow: fixed by a warm-up fraction or found by MSER-5
        measured = np.arange(cfg.flows) >= int(record["classes"][0]["warmup_cut"])
        flow_frames.append(pd.DataFrame({
            "replication": rep, "class": names[run.flow_class], "size": run.size,
            "arrival": run.arrival, "completion": run.completion, "measured": measured}))
    summary = combine_packet_records(scenario, records, confidence)
    summary.insert(0, "class_load", scenario.class_loads(load))
    summary.insert(0, "load", load)
    summary.insert(0, "policy", policy)
    summary["wall_s"] = time.perf_counter() - started
    per_replication = []
    for record in records:
        table = pd.DataFrame(record["classes"])
        table = table.drop(columns=[c for c in table if c.startswith("batch_")])
        table.insert(0, "class", scenario.class_names)
        table.insert(0, "replication", record["replication"])
        per_replication.append(table)
    return SimulationResult(classes=summary,
                            flows=pd.concat(flow_frames, ignore_index=True),
                            replications=pd.concat(per_replication, ignore_index=True))


POINT_FUNCTIONS = {policies.FLUID: fluid_point, policies.PACKET: packet_point}
