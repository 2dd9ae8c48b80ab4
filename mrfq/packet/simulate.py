"""``simulate``: replications of the packet model with statistics (SPEC §3)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.scenario import Scenario
from mrfq.stats import combine_replications, replication_table


@dataclass
class SimulationResult:
    """``classes``: one row per class (gamma, ci_low, ci_high, …, run facts).
    ``flows``: per-flow records of every replication (replication, class, size, arrival,
    completion, measured). ``replications``: per-replication, per-class estimates."""

    classes: pd.DataFrame
    flows: pd.DataFrame
    replications: pd.DataFrame


def replication_seed(seed: int, replication: int) -> np.random.SeedSequence:
    """Seed of one replication: independent of the policy and load (common random
    numbers) and of how many workers run the replications."""
    return np.random.SeedSequence(seed, spawn_key=(replication,))


def simulate(scenario: Scenario, policy: str, load: float, seed: int | None = None, *,
             flows: int | None = None, mean_size: float | None = None,
             window: int | None = None, replications: int | None = None,
             warmup: float | None = None, delta: float | None = None,
             debug: bool | None = None, confidence: float = 0.95,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Packet simulation of ``scenario`` at a value ``load`` of its load axis.

    Keyword overrides replace the scenario's ``[packet]`` values (validated alike).
    γ_k = m / E[T_k] in work units per time unit, comparable with the fluid γ_k.
    """
    policy = policies.get(policies.PACKET, policy).name
    scenario = scenario.with_overrides(flows=flows, mean_size=mean_size, window=window,
                                       replications=replications, warmup=warmup,
                                       delta=delta, seed=seed)
    scenario.check_load(load)
    cfg = scenario.packet
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(load)
    started = time.perf_counter()
    tables, flow_frames, services = [], [], 0
    for rep in range(cfg.replications):
        def report(done, total, rep=rep):
            if progress:
                progress(rep * total + done, cfg.replications * total)
        run = run_replication(model, policy, rho, replication_seed(cfg.seed, rep),
                              flows=cfg.flows, mean_size=cfg.mean_size, window=cfg.window,
                              delta=cfg.delta, debug=debug, progress=report)
        services += run.services
        table = replication_table(run.arrival, run.completion, run.flow_class, run.size,
                                  scenario.class_names, rho, cfg.mean_size, cfg.warmup,
                                  cfg.batches)
        table.insert(0, "replication", rep)
        tables.append(table)
        names = np.array(scenario.class_names, dtype=object)
        measured = np.arange(cfg.flows) >= int(cfg.warmup * cfg.flows)
        flow_frames.append(pd.DataFrame({
            "replication": rep, "class": names[run.flow_class], "size": run.size,
            "arrival": run.arrival, "completion": run.completion, "measured": measured}))
    wall = time.perf_counter() - started
    summary = combine_replications(tables, cfg.mean_size, confidence)
    summary.insert(0, "class_load", rho)
    summary.insert(0, "load", load)
    summary.insert(0, "policy", policy)
    summary["replications"] = cfg.replications
    summary["services"] = services
    summary["wall_s"] = wall
    reps = pd.concat(tables, ignore_index=True).drop(columns="batch_sojourns")
    return SimulationResult(classes=summary, flows=pd.concat(flow_frames, ignore_index=True),
                            replications=reps)
