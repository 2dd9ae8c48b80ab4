"""The precision rule of replicated points: how many replications a (policy, load)
starts with and how many of those finished it uses (SPEC §3 Measurement; the
``[packet]`` keys ``replications``, ``precision``, ``max_replications``).

Without a precision target a point uses ``replications`` replications. With one, it uses
the first n ≥ :func:`first_replications` replications such that every class's 95%
half-width over replications 0 … n−1 is at most ``precision`` × γ_k, or the budget
(:func:`stopping`). The answer depends only on the replications' values, so it is the
same whatever the number of workers; replications computed ahead are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mrfq.scenario import PacketConfig
from mrfq.stats import MIN_REPLICATIONS_FOR_T, relative_half_widths, replications_for_precision
from mrfq.stats.startup import record_relaxation_drops


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


def _sums(records: list[dict], warmup_flows: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(replications × classes) arrays of Σ N and Σ T of the measured flows, less the
    leading batches each replication's relaxation cut leaves out (``warmup_flows``:
    :func:`mrfq.stats.startup.record_relaxation_drops`), as the point's interval does."""
    drops = [record_relaxation_drops(r, warmup_flows) for r in records]
    if any(d is None for d in drops):  # one too short: the point is flagged, no cut
        drops = [0] * len(records)
    size = [[c.get("size_sum", np.nan) - float(np.sum(c["batch_size_sums"][:d]))
             if d else c.get("size_sum", np.nan) for c in r["classes"]]
            for r, d in zip(records, drops, strict=True)]
    sojourn = [[c.get("sojourn_sum", np.nan) - float(np.sum(c["batch_sojourn_sums"][:d]))
                if d else c.get("sojourn_sum", np.nan) for c in r["classes"]]
               for r, d in zip(records, drops, strict=True)]
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
             start: int | None = None, warmup_flows: int = 0) -> Stopping:
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
    ignored. ``warmup_flows``: the point's relaxation cut (the sums are those its interval
    uses).
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
    size, sojourn = _sums(ordered, warmup_flows)
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
                        confidence: float = 0.95, warmup_flows: int = 0) -> list[dict]:
    """The replications of one (policy, load) that its results use: all of them, or with
    a precision target those the stopping rule chose (:func:`stopping`; extra ones
    computed ahead are ignored)."""
    if packet.precision is None:
        return records
    decided = stopping(packet, records, confidence, warmup_flows=warmup_flows)
    ordered = _in_order(records)
    return ordered[: decided.replications or len(ordered)]


