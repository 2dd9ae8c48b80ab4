"""Explicit flows through the packet engine (``[[flows]]`` of a scenario, SPEC §3.1): the
service each flow receives on each resource over time, and its dominant share.

Every explicit flow is run as a class of its own (its class's requirements, packet mix
and weight), so the engine's per-class settings are per-flow ones: window, stop time,
open-loop period. A windowed flow is backlogged from ``start`` (a size too large to
finish) and injects nothing at a departure at or after ``stop``; an open-loop flow offers
⌈(stop − start)·rate⌉ packets, one every 1/rate from ``start``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from mrfq import fields, policies, seeds
from mrfq.errors import InputError
from mrfq.intervals import histogram_quantile
from mrfq.packet.engine import run_replication, sojourn_bin_edges
from mrfq.packet.model import PacketModel
from mrfq.scenario import Scenario
from mrfq.scenario.checks import check_parameters_read

#: packets of a windowed explicit flow: more than any run can send
BACKLOGGED = 10**15


@dataclass
class FlowRun:
    """``flows``: one row per flow (name, class, start, stop, window, rate, completion:
    when its last packet left, offered and dropped packets of an open-loop flow, and its
    packets' delays through the router: ``packets`` departed, ``mean_packet_sojourn``
    (exact), ``p50_sojourn``, ``p95_sojourn``, ``p99_sojourn`` (from the engine's
    histogram, within one bin: ≤ 1/32 of the value); a sojourn runs from the packet's
    injection, for MR3 its arrival at the ingress, to its departure from the last
    resource).
    ``timeline``: one row per (flow, resource, interval): ``time`` (start of the
    interval), ``service`` (time the resource spent serving the flow's packets in it; a
    packet's service is split over the intervals it spans) and ``share`` = service /
    interval; ``dominant`` rows (resource "dominant") carry the flow's share of its
    dominant resource, the dominant share of the DRFQ and MR3 papers' figures
    (:func:`dominant_resources`; not the larger of the noisy per-resource shares of each
    interval, which is biased upward), NaN in an interval wholly before the flow's start
    or after its completion."""

    policy: str
    flows: pd.DataFrame
    timeline: pd.DataFrame
    #: [flow, bin]: the flow's departed packets by sojourn time (bins
    #: :func:`mrfq.packet.engine.sojourn_bin_edges`)
    sojourn_hist: np.ndarray | None = None
    #: per resource: the fraction of [0, end of the run] it was busy
    utilisation: dict[str, float] | None = None


def run_flows(scenario: Scenario, policy: str, seed: int | None = None,
              running: Iterable[str] = ()) -> FlowRun:
    """Run the explicit flows of ``scenario`` under one packet policy (deterministic for
    a seed, an integer >= 0; default the scenario's ``[packet] seed``). ``running``: the
    other policies the caller runs (a parameter one of them reads is not refused)."""
    if not scenario.flows or scenario.timeline is None:
        raise InputError("the scenario has no [[flows]] (explicit flows)", "flows",
                         scenario.source)
    # an argument, checked as the file's seed is (a negative one fails in numpy)
    seed = scenario.packet.seed if seed is None else fields.integer(seed, "seed", None, 0)
    policy = policies.get(policies.PACKET, policy).name
    running = [policies.get(policies.PACKET, name).name for name in running]
    check_parameters_read(scenario.packet, [policy, *running], scenario.source)
    by_name = {c.name: c for c in scenario.classes}
    per_flow = tuple(replace(by_name[f.class_name], name=f.name, rtt=0.0)
                     for f in scenario.flows)
    model = PacketModel.from_scenario(replace(scenario, classes=per_flow))
    K = len(per_flow)
    interval = scenario.timeline.interval
    # a whole number of intervals (checked when read), up to rounding: 12.3 / 0.3 is
    # 41.000000000000006, and ceil made a 42nd bin past the end
    bins = max(1, round(scenario.timeline.duration / interval))
    offered = [math.ceil((f.stop - f.start) * f.rate) if f.rate > 0 else 0
               for f in scenario.flows]
    sizes = [n if f.rate > 0 else BACKLOGGED for f, n in zip(scenario.flows, offered,
                                                              strict=True)]
    seed_seq = seeds.run_seed(seed)
    run = run_replication(
        model, policy, np.ones(K), seed_seq, flows=K, mean_size=scenario.packet.mean_size,
        window=max(f.window for f in scenario.flows),
        arrivals=([f.start for f in scenario.flows], list(range(K)), sizes),
        fq_resource=scenario.fq_resources, delta=scenario.packet.dovetail_delta,
        virtual_time=scenario.packet.virtual_time,
        class_window=[f.window for f in scenario.flows],
        class_period=[1.0 / f.rate if f.rate > 0 else 0.0 for f in scenario.flows],
        class_stop=[np.inf if f.rate > 0 else f.stop for f in scenario.flows],
        interval=interval, bins=bins)
    flows = pd.DataFrame({
        "policy": policy, "flow": [f.name for f in scenario.flows],
        "class": [f.class_name for f in scenario.flows],
        "start": [f.start for f in scenario.flows], "stop": [f.stop for f in scenario.flows],
        "window": [f.window for f in scenario.flows], "rate": [f.rate for f in scenario.flows],
        "completion": run.completion, "offered": offered, "dropped": run.dropped,
        **_packet_delays(run.sojourn_hist.sum(axis=0), run.sojourn_sum.sum(axis=0))})
    share = run.timeline / interval  # [flow, resource, bin]
    names = np.array([f.name for f in scenario.flows], dtype=object)
    resources = [*scenario.resources, "dominant"]
    dominant = dominant_resources(np.array([c.requirements for c in per_flow]))
    # the mean over a flow's dominant resources (equal requirements: equal expected shares)
    dominant_share = (share * dominant[:, :, None]).sum(axis=1) / dominant.sum(axis=1)[:, None]
    # a flow absent for a whole interval (it ends by the flow's start, or starts at or
    # after its completion) has no share there: NaN, a gap in the figure, not a 0
    edges = np.arange(bins) * interval
    starts = np.array([f.start for f in scenario.flows])
    dominant_share[(edges + interval <= starts[:, None])
                   | (edges >= run.completion[:, None])] = np.nan
    values = np.concatenate([share, dominant_share[:, None, :]], axis=1)
    service = np.concatenate([run.timeline, np.full((K, 1, bins), np.nan)], axis=1)
    index = np.indices(values.shape).reshape(3, -1)
    timeline = pd.DataFrame({
        "policy": policy, "flow": names[index[0]],
        "resource": np.array(resources, dtype=object)[index[1]],
        "time": index[2] * interval, "service": service.ravel(), "share": values.ravel()})
    busy = {r: float(w / run.end_time) if run.end_time > 0 else float("nan")
            for r, w in zip(scenario.resources, run.work, strict=True)}
    return FlowRun(policy, flows, timeline, run.sojourn_hist.sum(axis=0), busy)


def dominant_resources(requirements: np.ndarray) -> np.ndarray:
    """[flow, resource] mask of each flow's dominant resources: where its class's mean
    requirement vector (normalised, largest entry 1; for a packet mix, the mean over its
    packet types) is largest; several where the largest entries tie."""
    requirements = np.asarray(requirements, dtype=np.float64)
    return requirements >= requirements.max(axis=1, keepdims=True) * (1 - 1e-12)


def _packet_delays(hist: np.ndarray, sums: np.ndarray) -> dict[str, np.ndarray]:
    """Per flow (every explicit flow is a class of its own, measured from its start), the
    delay columns of :class:`FlowRun` from its histogram [flow, bin] and sojourn sums."""
    edges = sojourn_bin_edges()
    packets = hist.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(packets > 0, sums / packets, np.nan)
    columns = {"packets": packets, "mean_packet_sojourn": mean}
    for q in (50, 95, 99):
        columns[f"p{q}_sojourn"] = np.array([histogram_quantile(h, edges, q / 100)
                                             for h in hist])
    return columns
