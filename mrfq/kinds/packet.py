"""Packet points: one replication of the packet engine (SPEC §3) at one (policy, load),
its per-class statistics (SPEC §3 Measurement), and how the replications of a
(policy, load) combine into summary rows (:func:`combine_packet_records`).

A record is ``{kind, policy, load, replication, classes, services, wall_s,
delay_bucket, utilisation, utilisation_busy, utilisation_time}``: per class (scenario
order) the measured flows, mean sojourn, γ_k = m / E[T_k], the ratio estimator, the
time-average number in progress, Little's γ, the batch means intervals are built from,
and the packet-delay sums; per resource the busy fraction of the measured window and, by
flow bucket, its busy times and durations (for the utilisation's interval).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from mrfq import policies, seeds, stats
from mrfq.counts import mean_count, more_than
from mrfq.errors import InputError
from mrfq.executor import execute
from mrfq.fluid.markov import (
    MAX_STATES,
    solver_version,
    stationary_distribution,
)
from mrfq.fluid.method import class_warnings, predicted_states
from mrfq.kinds.fluid_records import floats, fluid_reference
from mrfq.kinds.point import Point
from mrfq.kinds.replications import (
    Stopping,
    Widths,
    chosen_replications,
    point_half_widths,
    replication_tables,
)
from mrfq.kinds.replications import first_replications as first_of_config
from mrfq.kinds.replications import stopping as stopping_rule
from mrfq.packet import kernel
from mrfq.packet.engine import Replication, check_flows, run_replication, sojourn_bin_edges
from mrfq.packet.initial import draw_initial_flows
from mrfq.packet.model import PacketModel, relaxation_flows
from mrfq.scenario import Scenario, scenario_from_dict
from mrfq.scenario import check_init as check_scenario_init
from mrfq.scenario.checks import check_parameters_read
from mrfq.scenario.limits import check_round_trips
from mrfq.stats import (
    combine_replications,
    first_full_bucket,
    jain_index,
    jain_overall_columns,
    packet_delay_sums,
    replication_table,
    utilisation,
    utilisation_batches,
    utilisation_columns,
    withhold,
)

NAME = "packet"
REALISATION = policies.PACKET
REPLICATED = True
PRIORITY = 0  # the expensive points first
#: what every class of a packet record has held since the engine's first records
RECORD_CLASS_KEYS = ("gamma", "flows_measured", "mean_sojourn", "ratio_estimate")
#: the mean flow completion time as summaries and simulate's table name it (records: sojourn)
MEAN_FCT_COLUMNS = {f"mean_sojourn{e}": f"mean_fct{e}" for e in ("", "_low", "_high", "_problem")}

#: the key part of each per-policy parameter a packet rule may read (the registry's
#: ``parameters``): only the points of the policies that read it depend on it
PARAMETER_KEYS: dict[str, Callable[[Scenario], object]] = {
    policies.DELTA: lambda scenario: repr(scenario.packet.dovetail_delta),
    # one scheduled resource: its index (as every key before lists); several: the set, in
    # resource order (the kernel reads a mask)
    policies.FQ_RESOURCE: lambda scenario: (
        scenario.fq_resource_index if len(scenario.fq_resources) == 1
        else sorted(scenario.fq_resources)),
    # absent for BR's rule, which every point computed before the option used
    policies.VIRTUAL_TIME: lambda scenario: (None if scenario.packet.virtual_time == "started"
                                             else scenario.packet.virtual_time),
}


def key_parts(scenario: Scenario, point: Point) -> dict:
    """The classes' packet mixes, weights and round-trip times, the class loads, the run
    configuration, seed and replication, the engine's and the statistics' versions (read
    from their modules at each call, so that a bump changes the key), and what only some
    points depend on: the parameters the policy reads, non-geometric size laws (rate
    ρ_k / E[N_k]), a steady-state start (absent when they do not apply: older keys hold)."""
    cfg = scenario.packet
    parts = {"resources": len(scenario.resources),
             "classes": [{"packets": floats(c.packet_requirements),
                          "probabilities": floats(c.packet_probabilities),
                          "order": c.packet_order, "weight": c.weight, "rtt": c.rtt}
                         for c in scenario.classes],
             "rho": floats(scenario.class_loads(point.load)), "mean_size": cfg.mean_size,
             "window": cfg.window, "flows": cfg.flows, "seed": cfg.seed,
             "replication": point.replication, "engine": kernel.ENGINE_VERSION,
             "warmup": cfg.warmup, "batches": cfg.batches, "statistics": stats.STATS_VERSION}
    for parameter in policies.get(policies.PACKET, point.policy).parameters:
        part = PARAMETER_KEYS[parameter](scenario)
        if part is not None:
            parts[parameter] = part
    if scenario.network:  # routes and routers (SPEC §3.2); absent for the tandem
        # the routers as a partition of the resources, in resource order: the numbers do
        # not depend on the order [routers] lists them in, nor on their names
        parts["network"] = {"routes": [list(r) for r in scenario.routes],
                            "routers": sorted(list(m) for _, m in scenario.routers)}
    if not scenario.exponential_sizes:
        parts.update(sizes=[law.key() for law in scenario.size_laws], flow_rate="rho / E[N]")
    if cfg.init != "empty":
        target = policies.fluid_counterpart(point.policy)
        parts.update(init=cfg.init, tolerance=scenario.fluid.tolerance,
                     solver=solver_version(target) if target else None)
    return parts


def check(scenario: Scenario, policy: str, load: float) -> None:
    """InputError (field ``packet.init``) unless the point (packet ``policy``, ``load``)
    can start from the fluid stationary law: ``init = "fluid"`` needs every class
    exponential, a fluid counterpart of ``policy`` (:mod:`mrfq.policies`) and the
    Markov truncation within the solver's budget
    (:func:`mrfq.fluid.method.predicted_states` ≤ :data:`mrfq.fluid.markov.MAX_STATES`).
    Nothing to check for ``init = "empty"``. Also (field ``packet.flows``) the flows of a
    replication against the engine's limits (:func:`mrfq.packet.engine.check_flows`)."""
    try:
        check_flows(scenario.packet.flows)
    except InputError as exc:  # a file's value: named by the file and its field
        raise InputError(exc.problem, "packet.flows", scenario.source) from None
    check_parameters_read(scenario.packet, [policy], scenario.source)
    m, window = scenario.packet.mean_size, scenario.packet.window
    check_round_trips([c.rtt for c in scenario.classes], scenario.class_loads(load),
                      [mean_count(law, m) for law in scenario.size_laws], window,
                      kernel.MAX_SLOTS, scenario.source,
                      [more_than(law, m, window) for law in scenario.size_laws])
    if scenario.packet.init != "fluid":
        return
    check_scenario_init(scenario.packet, scenario.classes, "packet.init", scenario.source,
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
    return stationary_distribution(policy, np.array(requirements).reshape(shape),
                                   np.array(loads), np.array(weights), tolerance)


def initial_law(scenario: Scenario, policy: str, load: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The stationary law π(n) (states S×K, probabilities S) that ``init = "fluid"``
    draws a replication's flows in progress at t = 0 from: the Markov demand model
    (BR §4.1) of the fluid counterpart of the packet ``policy`` at ``load``, solved to the
    scenario's ``[fluid] tolerance``; checked by :func:`check`."""
    check(scenario, policy, load)
    a = scenario.requirements
    return _stationary_law(policies.fluid_counterpart(policy), tuple(a.ravel().tolist()),
                           a.shape, tuple(scenario.class_loads(load).tolist()),
                           tuple(scenario.weights.tolist()), float(scenario.fluid.tolerance))


@threadpool_limits.wrap(limits=1)  # bit for bit wherever it runs (as compute_point)
def run_point(scenario: Scenario, policy: str, load: float, replication: int,
              debug: bool | None = None,
              progress: Callable[[int, int], None] | None = None
              ) -> tuple[dict, Replication]:
    """One replication: its record (module doc) and the engine's run (per-flow arrays,
    for :func:`mrfq.simulate`). ``debug``: check the engine's invariants after every
    event; ``progress(done, total)``: flows completed."""
    cfg = scenario.packet
    rho = scenario.class_loads(load)
    seed_seq = seeds.run_seed(cfg.seed, replication)
    initial = None
    if cfg.init == "fluid":  # flows in progress at t = 0, n(0) ~ π (not measured)
        initial = draw_initial_flows(seed_seq, *initial_law(scenario, policy, load),
                                     cfg.mean_size)
    started = time.perf_counter()
    run = run_replication(PacketModel.from_scenario(scenario), policy, rho,
                          seed_seq, flows=cfg.flows,
                          mean_size=cfg.mean_size, window=cfg.window, delta=cfg.dovetail_delta,
                          virtual_time=cfg.virtual_time,
                          fq_resource=scenario.fq_resources, debug=debug,
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
                                                      bucket, sojourn_bin_edges()),
                           strict=True):
        row.update(delays)
    busy, spans = utilisation_batches(run.work, run.bucket_work, run.bucket_time,
                                      run.end_time, bucket)
    record = {"kind": policies.PACKET, "policy": policy, "load": float(load),
              "replication": int(replication), "classes": classes,
              "services": int(run.services), "wall_s": time.perf_counter() - started,
              "delay_bucket": bucket,
              "utilisation": utilisation(run.work, run.bucket_work, run.bucket_time,
                                         run.end_time, bucket),
              "utilisation_busy": busy, "utilisation_time": spans}
    return record, run


def packet_point(scenario: Scenario, policy: str, load: float, replication: int) -> dict:
    """One replication of the packet model (SPEC §3) at one (policy, load): per class the
    measured flows, mean sojourn, γ_k = m / E[T_k], the ratio estimator, the time-average
    number in progress, Little's γ and the batch means that intervals are built from."""
    return run_point(scenario, policy, load, replication)[0]




def start_up_flows(scenario: Scenario, load: float) -> int:
    """Flows from each replication's start that ``warmup = "auto"`` leaves out of γ at
    least: :data:`mrfq.stats.RELAXATIONS` relaxation times of the most loaded resource
    (:func:`mrfq.packet.model.relaxation_flows`); 0 with a fixed warm-up fraction (the user's
    choice stands)."""
    if scenario.packet.warmup != "auto":
        return 0
    flows = stats.RELAXATIONS * relaxation_flows(scenario, load)
    return int(np.ceil(flows)) if np.isfinite(flows) else scenario.packet.flows


def _records_start_up(scenario: Scenario, records: list[dict]) -> int:
    """:func:`start_up_flows` at the load of these records of one point (0 for none)."""
    return start_up_flows(scenario, records[0]["load"]) if records else 0


def combine_packet_records(scenario: Scenario, records: list[dict],
                           confidence: float = 0.95,
                           fluid_record: dict | None = None) -> pd.DataFrame:
    """Per-class table of the replications of one (policy, load): γ_k with its
    ``confidence`` interval and ``ci_method`` (:func:`mrfq.stats.combine_replications`).

    With ``fluid_record`` (the Markov fluid record of the fluid policy this one realises,
    at the same load: :func:`fluid_reference`), the interval's variance is the fluid
    model's (:func:`mrfq.stats.with_fluid_variance`, ``ci_method`` "fluid-variance"; the
    run's own interval in ``ci_low_data``/``ci_high_data``); the precision rule judges
    the interval reported, as ``achieved_precision`` does (:func:`_reported_widths`).

    With a precision target, the replications the stopping rule chose (:func:`stopping`;
    extra ones computed ahead are ignored). Run facts: ``replications``,
    ``flows_simulated`` (flow arrivals over all replications, warm-up included),
    ``services`` (packet-resource services), ``target_precision`` (NaN without one),
    ``achieved_precision`` (half-width / γ_k of this class's interval) and
    ``precision_reached`` (every class of the point at or below the target),
    ``ci_warning`` (some class's size law makes the point's intervals unreliable at
    this load: :func:`mrfq.fluid.method.class_warnings`; "" otherwise); with
    ``init = "fluid"``, ``initial_flows`` (this class's flows placed at t = 0, summed over
    the replications; not measured)."""
    packet = scenario.packet
    start_up = _records_start_up(scenario, records)
    records = chosen_replications(packet, records, confidence, start_up,
                                  _reported_widths(scenario, records, confidence, fluid_record),
                                  _loaded(scenario, records))
    tables = replication_tables(scenario.class_names, records)
    combined = combine_replications(tables, packet.mean_size, confidence,
                                    sojourn_edges=sojourn_bin_edges(),
                                    warmup_flows=start_up)
    relaxation = combined.attrs.get("relaxation_problem", "")
    if fluid_record is not None:
        classes = fluid_record["classes"]
        combined = stats.with_fluid_variance(
            combined, np.array([c["gamma"] for c in classes], dtype=np.float64),
            np.array([c.get("flow_variance", np.nan) for c in classes], dtype=np.float64),
            confidence)
    combined["replications"] = len(records)
    combined["flows_simulated"] = packet.flows * len(records)
    combined["services"] = sum(int(r.get("services", 0)) for r in records)
    achieved = (combined["ci_high"] - combined["gamma"]) / combined["gamma"]
    combined["target_precision"] = np.nan if packet.precision is None else packet.precision
    combined["achieved_precision"] = achieved
    combined["precision_reached"] = (np.nan if packet.precision is None else bool(
        (achieved[_loaded(scenario, records)] <= packet.precision).all()))
    combined["ci_warning"] = class_warnings(scenario, records[0]["load"])
    # point-level (NaN for records from before them): Jain's index, utilisation
    rows = [c for r in records for c in r["classes"]]
    if all("rate_sum" in c and isinstance(c.get("size_bin_flows"), list) for c in rows):
        combined["jain_overall"] = jain_index(sum(c["rate_sum"] for c in rows),
                                              sum(c["rate_sq_sum"] for c in rows),
                                              sum(sum(c["size_bin_flows"]) for c in rows))
    else:
        combined["jain_overall"] = np.nan
    point = {**jain_overall_columns(records, confidence),
             **utilisation_columns(records, list(scenario.resources), confidence)}
    for column, value in withhold(point, relaxation).items():  # (a run too short)
        combined[column] = value
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


def compute(scenario: Scenario, point: Point) -> dict:
    """The record of replication ``point.replication`` of (policy, load)."""
    return packet_point(scenario, point.policy, point.load, point.replication)


def first_replications(scenario: Scenario) -> int:
    """Replications every (policy, load) starts with (:mod:`mrfq.kinds.replications`)."""
    return first_of_config(scenario.packet)


def stopping(scenario: Scenario, records: list[dict], start: int | None = None,
             confidence: float = 0.95) -> Stopping:
    """The precision rule on the finished replications of one (policy, load)
    (:func:`mrfq.kinds.replications.stopping`) at ``confidence``."""
    return stopping_rule(scenario.packet, records, confidence, start=start,
                         warmup_flows=_records_start_up(scenario, records),
                         widths=_reported_widths(scenario, records, confidence),
                         judged=_loaded(scenario, records))


def _loaded(scenario: Scenario, records: list[dict]) -> np.ndarray | None:
    """Per class, whether it has flows at these records' load (load share > 0): the
    classes the precision rule judges (None for no records)."""
    return scenario.class_loads(records[0]["load"]) > 0 if records else None


def _reported_widths(scenario: Scenario, records: list[dict], confidence: float,
                     fluid_record: dict | None | bool = True) -> Widths | None:
    """The precision rule's judge (with a target): the half-widths a point of a prefix of
    these replications reports, with the fluid model's variance of ``fluid_record``
    (True: the Markov model's where it gives the point's, :func:`fluid_reference`, as
    :func:`summary_rows` and so a sweep; None: the runs' own intervals)."""
    if scenario.packet.precision is None or not records:
        return None
    start_up = _records_start_up(scenario, records)
    reference = (fluid_reference(scenario, records[0]["policy"], records[0]["load"])
                 if fluid_record is True else fluid_record)
    return functools.partial(point_half_widths, scenario.class_names,
                             mean_size=scenario.packet.mean_size, confidence=confidence,
                             warmup_flows=start_up, fluid_record=reference)


def max_replications(scenario: Scenario) -> int:
    """The most replications a (policy, load) can use: ``replications``, or with a
    precision target the budget ``max_replications``."""
    cfg = scenario.packet
    return cfg.replications if cfg.precision is None else cfg.max_replications


#: a first loop that took longer than this was compiled, not loaded from the disk cache
COLD_LOOP_SECONDS = 2.0


def _compile(policy: str) -> None:
    """One tiny replication of ``policy``: its event loop compiled into, or loaded from,
    Numba's disk cache."""
    tiny = scenario_from_dict({"resources": ["a", "b"], "classes": [
        {"requirements": [1, 0.5], "load_share": 1}], "load": {"values": [0.5]}})
    run_replication(PacketModel.from_scenario(tiny), policy, tiny.class_loads(0.5),
                    np.random.SeedSequence(0), flows=3, mean_size=3, window=2)


def prepare(chosen_policies: set[str], jobs: int = 1) -> None:
    """Compile (or load from the disk cache) the event loops of these packet policies
    once, before fanning out to workers, so the workers do not all compile at once.

    Each policy's loop is its own compilation (20–40 s). The first is compiled here; if
    that took a compilation rather than a cache load, the others are compiled in
    parallel, one per process on up to ``jobs`` processes, and then loaded here from the
    cache (a fresh ``make run``'s three loops: two compilations' time instead of three).
    """
    order = sorted(chosen_policies)
    if not order:
        return
    start = time.perf_counter()
    _compile(order[0])
    rest = order[1:]
    if jobs > 1 and len(rest) > 1 and time.perf_counter() - start > COLD_LOOP_SECONDS:
        # the executor's pool: workers end with this process, a Ctrl-C abandons them at
        # once (a pool's exit waited for them; a second Ctrl-C then hung the process)
        for _ in execute(_compile, rest, jobs=min(jobs, len(rest))):
            pass
    for policy in rest:
        _compile(policy)


def summary_rows(scenario: Scenario, records: list[dict],
                 fluid_records: dict | None = None) -> list[dict]:
    """The summary rows of the replications of one (policy, load): one per class
    (:func:`combine_packet_records`, with the fluid record of the policy this one
    realises at this load from ``fluid_records`` ((fluid policy, load) → record) when the
    sweep has it, else solved here (:func:`fluid_reference`); ``mean_sojourn`` and its
    interval reported as ``mean_fct``)."""
    policy, load = records[0]["policy"], records[0]["load"]
    counterpart = policies.fluid_counterpart(policy)
    fluid_record = (fluid_records or {}).get((counterpart, float(load)))
    if fluid_record is None:  # a sweep without fluid points: solve the Markov point here
        fluid_record = fluid_reference(scenario, policy, load)
    combined = combine_packet_records(scenario, records, fluid_record=fluid_record)
    combined = combined.rename(columns=MEAN_FCT_COLUMNS)
    return [{"kind": policies.PACKET, "policy": policy, "load": load, **row,
             "error_estimate": np.nan} for row in combined.to_dict("records")]


def size_bin_rows(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Flow completion time and slowdown by flow size of one (policy, load), over the
    replications the precision rule chose (:func:`size_bin_table`)."""
    table = size_bin_table(scenario, chosen_replications(
        scenario.packet, records, warmup_flows=_records_start_up(scenario, records),
        widths=_reported_widths(scenario, records, 0.95)))
    if not table.empty:
        table.insert(0, "load", records[0]["load"])
        table.insert(0, "policy", records[0]["policy"])
    return table
