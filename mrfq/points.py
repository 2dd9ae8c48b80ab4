"""One point function per kind, and ``simulate``: the unit every sweep, ``mrfq simulate``
and ``mrfq fluid`` compute.

* :func:`fluid_point` (from :mod:`mrfq.fluid.method`) — the fluid γ_k of one
  (policy, load) (BR §4.1): the Markov solver or the flow-level simulator, as
  :func:`mrfq.fluid.method.fluid_method` chooses;
* :func:`packet_point` — one independent replication of the packet model at one
  (policy, load) with its per-class statistics (SPEC §3 Measurement).

A point returns a JSON-serialisable record ``{kind, policy, load, replication, classes,
wall_s, …}`` whose ``classes`` list is in the scenario's class order. Records of a
(policy, load) combine into the per-class table with :func:`combine_packet_records`,
which the sweep summary and :func:`simulate` both use, so their schemas are one.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.errors import InputError
from mrfq.fluid.method import fluid_point
from mrfq.scenario import PacketConfig, Scenario
from mrfq.stats import (
    MIN_REPLICATIONS_FOR_T,
    combine_replications,
    first_full_bucket,
    jain_index,
    packet_delay_sums,
    relative_half_widths,
    replication_table,
    replications_for_precision,
    utilisation,
)


def replication_seed(seed: int, replication: int) -> np.random.SeedSequence:
    """Seed of one replication: independent of the policy and load (common random
    numbers) and of how many workers run the replications."""
    return np.random.SeedSequence(seed, spawn_key=(replication,))


def check_init(scenario: Scenario, policy: str, load: float) -> None:
    """InputError (field ``packet.init``) unless the point (packet ``policy``, ``load``)
    can start from the fluid stationary law: ``init = "fluid"`` needs every class
    exponential, a fluid counterpart of ``policy`` (:mod:`mrfq.policies`) and the
    Markov truncation within the solver's budget
    (:func:`mrfq.fluid.method.predicted_states` ≤ :data:`mrfq.fluid.markov.MAX_STATES`).
    Nothing to check for ``init = "empty"``."""
    from mrfq.fluid.markov import MAX_STATES
    from mrfq.fluid.method import predicted_states
    from mrfq.scenario import check_init as check_scenario

    if scenario.packet.init != "fluid":
        return
    check_scenario(scenario.packet, scenario.classes, "packet.init", scenario.source,
                   check_policies=False)
    if policies.fluid_counterpart(policy) is None:
        raise InputError(f"'fluid' needs a fluid counterpart of the packet policy, and "
                         f"{policy} has none", "packet.init", scenario.source)
    states = predicted_states(scenario.requirements, scenario.class_loads(load),
                              scenario.fluid.tolerance)
    if states > MAX_STATES:
        raise InputError(f"'fluid' needs the Markov model, whose state space at load "
                         f"{load:g} (about {states:.3g} states) is beyond the solver's "
                         f"budget ({MAX_STATES})", "packet.init", scenario.source)


@functools.lru_cache(maxsize=16)
def _stationary_law(policy: str, requirements: tuple, shape: tuple, loads: tuple,
                    weights: tuple, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """π of the Markov model (states, probabilities), once per process and point (a
    solve takes seconds at load 0.9; arguments as tuples so that they hash)."""
    from mrfq.fluid.markov import stationary_distribution

    return stationary_distribution(policy, np.array(requirements).reshape(shape),
                                   np.array(loads), np.array(weights), tolerance)


def initial_law(scenario: Scenario, policy: str, load: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The stationary law π(n) (states S×K, probabilities S) that ``init = "fluid"``
    draws a replication's flows in progress at t = 0 from: the Markov demand model
    (BR §4.1) of the fluid counterpart of the packet ``policy`` at ``load``, solved to the
    scenario's ``[fluid] tolerance``; checked by :func:`check_init`."""
    check_init(scenario, policy, load)
    a = scenario.requirements
    return _stationary_law(policies.fluid_counterpart(policy), tuple(a.ravel().tolist()),
                           a.shape, tuple(scenario.class_loads(load).tolist()),
                           tuple(scenario.weights.tolist()), float(scenario.fluid.tolerance))


def _replication(scenario: Scenario, policy: str, load: float, replication: int,
                 debug: bool | None = None,
                 progress: Callable[[int, int], None] | None = None):
    from mrfq.packet.engine import run_replication
    from mrfq.packet.initial import draw_initial_flows
    from mrfq.packet.model import PacketModel

    cfg = scenario.packet
    rho = scenario.class_loads(load)
    seed_seq = replication_seed(cfg.seed, replication)
    initial = None
    if cfg.init == "fluid":  # flows in progress at t = 0, n(0) ~ π (not measured)
        initial = draw_initial_flows(seed_seq, *initial_law(scenario, policy, load),
                                     cfg.mean_size)
    started = time.perf_counter()
    run = run_replication(PacketModel.from_scenario(scenario), policy, rho,
                          seed_seq, flows=cfg.flows,
                          mean_size=cfg.mean_size, window=cfg.window, delta=cfg.delta,
                          fq_resource=scenario.fq_resource_index, debug=debug,
                          progress=progress, size_laws=scenario.size_laws, initial=initial)
    table = replication_table(
        run.arrival, run.completion, run.flow_class, run.size, scenario.class_names, rho,
        cfg.mean_size, cfg.warmup, cfg.batches,
        None if initial is None else (initial[0], run.initial_completion),
        class_weights=[c.weight for c in scenario.classes])
    classes = table.drop(columns="class").to_dict("records")
    # packet delays and utilisation from the first histogram bucket after the warm-up cut
    bucket = first_full_bucket(int(classes[0]["warmup_cut"]), cfg.flows,
                               run.sojourn_hist.shape[0])
    for row, delays in zip(classes, packet_delay_sums(run.sojourn_hist, run.sojourn_sum,
                                                      bucket), strict=True):
        row.update(delays)
    record = {"kind": policies.PACKET, "policy": policy, "load": float(load),
              "replication": int(replication), "classes": classes,
              "services": int(run.services), "wall_s": time.perf_counter() - started,
              "delay_bucket": bucket,
              "utilisation": utilisation(run.work, run.bucket_work, run.bucket_time,
                                         run.end_time, bucket)}
    return record, run


def packet_point(scenario: Scenario, policy: str, load: float, replication: int) -> dict:
    """One replication of the packet model (SPEC §3) at one (policy, load): per class the
    measured flows, mean sojourn, γ_k = m / E[T_k], the ratio estimator, the time-average
    number in progress, Little's γ and the batch means that intervals are built from."""
    return _replication(scenario, policy, load, replication)[0]


def first_replications(packet: PacketConfig) -> int:
    """Replications every packet point starts with: ``replications``; with a precision
    target at least :data:`mrfq.stats.MIN_REPLICATIONS_FOR_T` (the stopping rule uses the
    t interval over replications), at most ``max_replications``."""
    if packet.precision is None:
        return packet.replications
    return min(max(packet.replications, MIN_REPLICATIONS_FOR_T), packet.max_replications)


def _in_order(records: list[dict]) -> list[dict]:
    """The records of replications 0, 1, 2, … up to the first missing index."""
    by_index = {int(r["replication"]): r for r in records}
    ordered = []
    while len(ordered) in by_index:
        ordered.append(by_index[len(ordered)])
    return ordered


def _sums(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(replications × classes) arrays of Σ N and Σ T of the measured flows."""
    size = [[c.get("size_sum", np.nan) for c in r["classes"]] for r in records]
    sojourn = [[c.get("sojourn_sum", np.nan) for c in r["classes"]] for r in records]
    return (np.array(size, dtype=np.float64).reshape(len(records), -1),
            np.array(sojourn, dtype=np.float64).reshape(len(records), -1))


@dataclass(frozen=True)
class Stopping:
    """What the precision rule says about the finished replications of one (policy, load).

    ``replications``: how many the point uses (replications 0 … n−1), or None when it
    needs more. ``wanted``: with None, the number of replications the spread seen so far
    suggests in total (> the replications available in order), to schedule ahead."""

    replications: int | None
    wanted: int


def stopping(packet: PacketConfig, records: list[dict], confidence: float = 0.95,
             start: int | None = None) -> Stopping:
    """The precision stopping rule on the finished replications of one (policy, load)
    (any order; only those from replication 0 without a gap count).

    The point uses the first n ≥ :func:`first_replications` replications such that every
    class's 95% half-width over replications 0 … n−1 is at most ``precision`` × γ_k
    (:func:`mrfq.stats.replications_for_precision`), or ``max_replications`` (the
    budget). It also stops at the first n at which one of its replications has a
    ``ci_problem`` (for example MSER-5 at its limit): the point's interval is flagged
    whatever follows, so more replications cannot help. Without a precision target:
    ``replications``. The answer depends only on the replications' values, so it is the
    same whatever the number of workers, and extra replications computed ahead are
    ignored.
    """
    if packet.precision is None:
        return Stopping(packet.replications, packet.replications)
    ordered = _in_order(records)[: packet.max_replications]
    first = first_replications(packet)
    have = len(ordered)
    if have < first:
        return Stopping(None, first)
    bad = [i for i, r in enumerate(ordered)
           if any(isinstance(c.get("ci_problem"), str) and c["ci_problem"]
                  for c in r["classes"])]
    limit = max(first, bad[0] + 1) if bad else have  # no rule beyond a flagged one
    size, sojourn = _sums(ordered)
    if first >= 2:
        n = replications_for_precision(size[:limit], sojourn[:limit], packet.precision,
                                       first, confidence, start)
        if n is not None:
            return Stopping(n, n)
    if bad or have >= packet.max_replications:
        return Stopping(limit if bad else packet.max_replications, have)
    # n ≈ have · (achieved / target)²: the half-width shrinks like 1/√n
    widths = relative_half_widths(size, sojourn, confidence)
    ratio = float(np.max(widths)) / packet.precision if np.isfinite(widths).all() else 0.0
    wanted = int(np.ceil(have * ratio * ratio)) if ratio > 0 else have + 1
    return Stopping(None, min(max(wanted, have + 1), packet.max_replications))


def chosen_replications(packet: PacketConfig, records: list[dict],
                        confidence: float = 0.95) -> list[dict]:
    """The replications of one (policy, load) that its results use: all of them, or with
    a precision target those the stopping rule chose (:func:`stopping`; extra ones
    computed ahead are ignored)."""
    if packet.precision is None:
        return records
    decided = stopping(packet, records, confidence)
    ordered = _in_order(records)
    return ordered[: decided.replications or len(ordered)]


def combine_packet_records(scenario: Scenario, records: list[dict],
                           confidence: float = 0.95) -> pd.DataFrame:
    """Per-class table of the replications of one (policy, load): γ_k with its
    ``confidence`` interval and ``ci_method`` (:func:`mrfq.stats.combine_replications`).

    With a precision target, the replications the stopping rule chose (:func:`stopping`;
    extra ones computed ahead are ignored). Run facts: ``replications``,
    ``flows_simulated`` (flow arrivals over all replications, warm-up included),
    ``services`` (packet-resource services), ``target_precision`` (NaN without one),
    ``achieved_precision`` (half-width / γ_k of this class's interval) and
    ``precision_reached`` (every class of the point at or below the target); with
    ``init = "fluid"``, ``initial_flows`` (this class's flows placed at t = 0, summed over
    the replications; not measured)."""
    packet = scenario.packet
    records = chosen_replications(packet, records, confidence)
    tables = []
    for record in sorted(records, key=lambda r: r["replication"]):
        table = pd.DataFrame(record["classes"])
        table.insert(0, "class", scenario.class_names)
        tables.append(table)
    from mrfq.packet.engine import sojourn_bin_edges

    combined = combine_replications(tables, packet.mean_size, confidence,
                                    sojourn_edges=sojourn_bin_edges())
    combined["replications"] = len(records)
    combined["flows_simulated"] = packet.flows * len(records)
    combined["services"] = sum(int(r.get("services", 0)) for r in records)
    achieved = (combined["ci_high"] - combined["gamma"]) / combined["gamma"]
    combined["target_precision"] = np.nan if packet.precision is None else packet.precision
    combined["achieved_precision"] = achieved
    combined["precision_reached"] = (np.nan if packet.precision is None
                                     else bool((achieved <= packet.precision).all()))
    # point-level: Jain's index over all measured flows, utilisation of every resource
    # (mean over replications); NaN for records from before these metrics
    rows = [c for r in records for c in r["classes"]]
    if all("rate_sum" in c and isinstance(c.get("size_bin_flows"), list) for c in rows):
        combined["jain_overall"] = jain_index(sum(c["rate_sum"] for c in rows),
                                              sum(c["rate_sq_sum"] for c in rows),
                                              sum(sum(c["size_bin_flows"]) for c in rows))
    else:
        combined["jain_overall"] = np.nan
    shares = [r.get("utilisation") for r in records]
    for j, resource in enumerate(scenario.resources):
        combined[f"utilisation_{resource}"] = (
            float(np.mean([u[j] for u in shares])) if all(isinstance(u, list) for u in shares)
            else np.nan)
    if packet.init == "fluid":  # flows in progress at t = 0, over all replications
        combined["initial_flows"] = [
            sum(int(r["classes"][k].get("initial_flows", 0)) for r in records)
            for k in range(len(scenario.classes))]
    return combined


def size_bin_table(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Flow completion time and slowdown by flow size, pooled over the replications of one
    (policy, load): one row per class and size bin [10^i, 10^(i+1)) packets with measured
    flows (:func:`mrfq.stats.flow_metric_sums`): ``flows``, ``mean_fct`` (time units),
    ``mean_slowdown`` (T / N). Empty for records from before these metrics."""
    rows = []
    if not records or not all(isinstance(c.get("size_bin_flows"), list)
                              for r in records for c in r["classes"]):
        return pd.DataFrame(rows)
    for k, name in enumerate(scenario.class_names):
        flows = np.sum([r["classes"][k]["size_bin_flows"] for r in records], axis=0)
        fct = np.sum([r["classes"][k]["size_bin_sojourn_sums"] for r in records], axis=0)
        slow = np.sum([r["classes"][k]["size_bin_slowdown_sums"] for r in records], axis=0)
        for i in np.flatnonzero(flows):
            rows.append({"class": name, "size_low": int(10 ** i),
                         "size_high": int(10 ** (i + 1)), "flows": int(flows[i]),
                         "mean_fct": float(fct[i] / flows[i]),
                         "mean_slowdown": float(slow[i] / flows[i])})
    return pd.DataFrame(rows)


@dataclass
class SimulationResult:
    """``classes``: one row per class (gamma, ci_low, ci_high, …, run facts).
    ``flows``: per-flow records of every replication (replication, class, size, arrival,
    completion, measured). ``replications``: per-replication, per-class estimates.
    ``size_bins``: flow completion time and slowdown by size (:func:`size_bin_table`)."""

    classes: pd.DataFrame
    flows: pd.DataFrame
    replications: pd.DataFrame
    size_bins: pd.DataFrame


def simulate(scenario: Scenario, policy: str, load: float, seed: int | None = None, *,
             flows: int | None = None, mean_size: float | None = None,
             window: int | None = None, replications: int | None = None,
             warmup: float | str | None = None, delta: float | None = None,
             precision: float | None = None, max_replications: int | None = None,
             init: str | None = None, debug: bool | None = None, confidence: float = 0.95,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Packet simulation of ``scenario`` at a value ``load`` of its load axis: the
    replications of :func:`packet_point`, combined as in a sweep.

    Keyword overrides replace the scenario's ``[packet]`` values (validated alike).
    γ_k = m / E[T_k] in work units per time unit, comparable with the fluid γ_k. With a
    ``precision`` target, replications are added one at a time until the stopping rule
    of :func:`stopping` ends the point (the same replications a sweep would use).
    """
    policy = policies.get(policies.PACKET, policy).name
    scenario = scenario.with_overrides(flows=flows, mean_size=mean_size, window=window,
                                       replications=replications, warmup=warmup,
                                       delta=delta, seed=seed, precision=precision,
                                       max_replications=max_replications, init=init)
    scenario.check_load(load)
    check_init(scenario, policy, load)
    if not 0 < confidence < 1:
        raise InputError(f"must be in (0, 1), got {confidence!r}", "confidence")
    cfg = scenario.packet
    started = time.perf_counter()
    records, flow_frames = [], []
    names = np.array(scenario.class_names, dtype=object)
    first = planned = first_replications(cfg)  # planned grows with a precision target
    rep = 0
    while True:
        if rep >= first:  # the rule after every replication, in order
            decided = stopping(cfg, records, confidence, start=rep)
            if decided.replications is not None:
                break
            planned = max(planned, decided.wanted)

        def report(done, total, rep=rep, planned=planned):
            if progress:
                progress(rep * total + done, planned * total)
        record, run = _replication(scenario, policy, load, rep, debug, report)
        records.append(record)
        # the first measured flow: fixed by a warm-up fraction or found by MSER-5
        measured = np.arange(cfg.flows) >= int(record["classes"][0]["warmup_cut"])
        flow_frames.append(pd.DataFrame({
            "replication": rep, "class": names[run.flow_class], "size": run.size,
            "arrival": run.arrival, "completion": run.completion, "measured": measured}))
        rep += 1
    summary = combine_packet_records(scenario, records, confidence)
    summary.insert(0, "class_load", scenario.class_loads(load))
    summary.insert(0, "load", load)
    summary.insert(0, "policy", policy)
    summary["wall_s"] = time.perf_counter() - started
    per_replication = []
    for record in records:
        table = pd.DataFrame(record["classes"])
        table = table.drop(columns=[c for c in table if c.startswith(("batch_", "size_bin_"))
                                    or c in ("packet_hist", "packet_hist_offset")])
        table.insert(0, "class", scenario.class_names)
        table.insert(0, "replication", record["replication"])
        per_replication.append(table)
    return SimulationResult(classes=summary,
                            flows=pd.concat(flow_frames, ignore_index=True),
                            replications=pd.concat(per_replication, ignore_index=True),
                            size_bins=size_bin_table(scenario, records))


POINT_FUNCTIONS = {policies.FLUID: fluid_point, policies.PACKET: packet_point}
