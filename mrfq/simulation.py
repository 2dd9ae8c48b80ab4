"""``simulate``: the packet simulation of one (policy, load) of a scenario, as a one-group
sweep (:mod:`mrfq.point_plan` through :func:`mrfq.executor.execute`) that also returns the
per-flow records and per-replication estimates a sweep does not keep."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from mrfq import arguments, policies
from mrfq.errors import InputError
from mrfq.executor import execute
from mrfq.kinds import Point, packet
from mrfq.kinds.packet import (
    MEAN_FCT_COLUMNS,
    combine_packet_records,
    fluid_reference,
    run_point,
    size_bin_table,
)
from mrfq.point_plan import Plan
from mrfq.scenario import Scenario, load_scenario


@dataclass
class SimulationResult:
    """``classes``: one row per class (gamma, ci_low, ci_high, …, run facts).
    ``flows``: per-flow records of every replication used (replication, class, size,
    arrival, completion, measured). ``replications``: per-replication, per-class
    estimates. ``size_bins``: flow completion time and slowdown by size
    (:func:`mrfq.kinds.packet.size_bin_table`)."""

    classes: pd.DataFrame
    flows: pd.DataFrame
    replications: pd.DataFrame
    size_bins: pd.DataFrame


#: the value in force of each parameter a packet rule reads (a default resolved: Δ = W)
_IN_FORCE = {policies.DELTA: lambda scenario: scenario.packet.dovetail_delta,
             policies.VIRTUAL_TIME: lambda scenario: scenario.packet.virtual_time,
             policies.FQ_RESOURCE: lambda scenario: ",".join(
                 scenario.resources[j] for j in scenario.fq_resources)}


def _flow_table(scenario: Scenario, record: dict, run) -> pd.DataFrame:
    """Per-flow records of one replication; ``measured``: at or after the warm-up cut
    (a fixed fraction of the arrivals or MSER-5's)."""
    names = np.array(scenario.class_names, dtype=object)
    measured = np.arange(scenario.packet.flows) >= int(record["classes"][0]["warmup_cut"])
    return pd.DataFrame({"replication": record["replication"],
                         "class": names[run.flow_class], "size": run.size,
                         "arrival": run.arrival, "completion": run.completion,
                         "measured": measured})


def simulate(scenario: Scenario | str, policy: str, load: float, seed: int | None = None,
             *, flows: int | None = None, mean_size: float | None = None,
             window: int | None = None, replications: int | None = None,
             warmup: float | str | None = None, delta: float | None = None,
             virtual_time: str | None = None,
             precision: float | None = None, max_replications: int | None = None,
             init: str | None = None, fq_resource: str | list[str] | None = None,
             batches: int | None = None, debug: bool | None = None, confidence: float = 0.95,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Packet simulation of ``scenario`` (an object, a file or a packaged name) at a
    value ``load`` of its load axis: its replications, combined as in a sweep.

    Keyword overrides replace the scenario's ``[packet]`` values (validated alike).
    γ_k = m / E[T_k] in work units per time unit, comparable with the fluid γ_k. With a
    ``precision`` target, replications are added one at a time until the stopping rule
    (:func:`mrfq.kinds.replications.stopping`, at ``confidence``; a sweep's is 95%) ends
    the point: at 95%, the same replications a sweep uses. ``confidence`` also sets the
    reported intervals.
    ``progress(done, total)``: flows completed over the replications planned so far.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    debug = arguments.flag(debug, "debug")
    entry = policies.get(policies.PACKET, policy)
    policy = entry.name
    for name, value in ((policies.DELTA, delta), (policies.VIRTUAL_TIME, virtual_time),
                        (policies.FQ_RESOURCE, fq_resource)):
        who = policies.readers(name)
        if value is not None and policy not in who:  # else silently unused
            raise InputError(f"only {' and '.join(who)} {'reads' if len(who) == 1 else 'read'}"
                             f" it, not {policy}", name)
    scenario = scenario.with_overrides(flows=flows, mean_size=mean_size, window=window,
                                       replications=replications, warmup=warmup,
                                       delta=delta, virtual_time=virtual_time, seed=seed,
                                       precision=precision,
                                       max_replications=max_replications, init=init,
                                       fq_resource=fq_resource, batches=batches)
    scenario.check_load(load, in_file=False)  # an argument, not the file's
    try:
        packet.check(scenario, policy, load)
    except InputError as exc:  # a check that failed on a value an argument gave names it
        given = {"packet.init": init, "packet.flows": flows}
        if given.get(exc.field) is not None:
            raise InputError(exc.problem, exc.field.split(".")[1]) from None
        raise
    if isinstance(confidence, bool) or not isinstance(confidence, Real) \
            or not 0 < confidence < 1:
        raise InputError(f"must be in (0, 1), got {confidence!r}", "confidence")
    group = (policies.PACKET, policy, float(load))
    plan = Plan(scenario, [group], stored=lambda point: None, ahead=False,
                confidence=confidence)
    runs: dict[int, pd.DataFrame] = {}
    started = time.perf_counter()

    def replicate(point: Point) -> dict:
        def report(done: int, total: int) -> None:
            if progress:
                planned = max(plan.wanted[group], plan.scheduled[group],
                              point.replication + 1)
                progress(point.replication * total + done, planned * total)

        record, run = run_point(scenario, policy, load, point.replication, debug, report)
        runs[point.replication] = _flow_table(scenario, record, run)
        return record

    # one worker, in this process: the runs' per-flow arrays stay here
    for _ in execute(replicate, plan.start(), jobs=1, follow_up=plan.finished):
        pass
    # the runs' own time: not the Markov solve of the interval's variance below (a
    # review: bmf reported 15 M services/s where fifo, with no such solve, reported 72)
    simulated = time.perf_counter() - started
    records = plan.used(group)
    summary = combine_packet_records(scenario, records, confidence,
                                     fluid_reference(scenario, policy, load)
                                     ).rename(columns=MEAN_FCT_COLUMNS)  # (as a summary's)
    summary.insert(0, "class_load", scenario.class_loads(load))
    summary.insert(0, "load", load)
    for name in reversed(policies.get(policies.PACKET, policy).parameters):
        summary.insert(0, name, _IN_FORCE[name](scenario))  # (the rule's, as it ran)
    summary.insert(0, "policy", policy)
    summary["wall_s"] = simulated
    per_replication = []
    for record in records:
        table = pd.DataFrame(record["classes"])
        table = table.drop(columns=[c for c in table if c.startswith(("batch_", "size_bin_"))
                                    or c in ("packet_hist", "packet_hist_offset")])
        table = table.rename(columns=MEAN_FCT_COLUMNS)
        table.insert(0, "class", scenario.class_names)
        table.insert(0, "replication", record["replication"])
        per_replication.append(table)
    return SimulationResult(
        classes=summary,
        flows=pd.concat([runs[r["replication"]] for r in records], ignore_index=True),
        replications=pd.concat(per_replication, ignore_index=True),
        size_bins=size_bin_table(scenario, records))
