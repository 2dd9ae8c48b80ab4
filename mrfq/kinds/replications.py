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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused

from mrfq.intervals import ratio_interval
from mrfq.scenario import PacketConfig
from mrfq.stats import (
    MIN_REPLICATIONS_FOR_T,
    combine_replications,
    relative_half_widths,
    replications_for_precision,
    with_fluid_variance,
)
from mrfq.stats.model_variance import consistent_ratio
from mrfq.stats.startup import record_relaxation_drops
from mrfq.stats.tables import batch_counts

#: per class, the relative half-width of the interval a point of these replications
#: reports (NaN where withheld): what the precision rule judges when given
Widths = Callable[[list[dict]], np.ndarray]


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


def replication_tables(class_names: Sequence[str], records: list[dict]) -> list[pd.DataFrame]:
    """One table of classes per record, in replication order, as
    :func:`mrfq.stats.combine_replications` takes them."""
    tables = []
    for record in sorted(records, key=lambda r: r["replication"]):
        table = pd.DataFrame(record["classes"])
        table.insert(0, "class", list(class_names))
        tables.append(table)
    return tables


def reported_half_widths(class_names: Sequence[str], records: list[dict], mean_size: float,
                         confidence: float, warmup_flows: int,
                         fluid_record: dict | None) -> np.ndarray:
    """Per class, (ci_high − γ) / γ of the interval a packet point of these replications
    reports: over the replications (or batches), rebuilt on the fluid model's variance
    where ``fluid_record`` gives one and the runs do not contradict it
    (:func:`mrfq.stats.with_fluid_variance`). NaN where the interval is withheld."""
    combined = combine_replications(replication_tables(class_names, records), mean_size,
                                    confidence, warmup_flows=warmup_flows)
    if fluid_record is not None:
        classes = fluid_record["classes"]
        combined = with_fluid_variance(
            combined, np.array([c["gamma"] for c in classes], dtype=np.float64),
            np.array([c.get("flow_variance", np.nan) for c in classes], dtype=np.float64),
            confidence)
    return ((combined["ci_high"] - combined["gamma"]) / combined["gamma"]).to_numpy(float)


def fast_reported_half_widths(records: list[dict], confidence: float, warmup_flows: int,
                              fluid_record: dict | None) -> np.ndarray:
    """:func:`reported_half_widths` of ≥ :data:`MIN_REPLICATIONS_FOR_T` replications from
    their sums, without building the point's table (the precision rule asks after every
    replication): per class the interval over replications of Σ N / Σ T after each one's
    relaxation cut (:func:`_sums`), Tin-corrected, and where ``fluid_record`` gives a
    variance the model's half-width z · γ_k^fluid √(v_k / n_k) unless the replications'
    own variance contradicts it (:func:`mrfq.stats.with_fluid_variance`'s rules). NaN
    where the point's interval is withheld. tests/test_precision.py checks it against the
    table, the slow way."""
    drops = [record_relaxation_drops(r, warmup_flows) for r in records]
    size, sojourn = _sums(records, warmup_flows)
    out = np.full(size.shape[1], np.nan)
    if any(d is None for d in drops):  # a replication too short for the cut: withheld
        return out
    z = float(scipy.stats.norm.ppf(0.5 + confidence / 2))
    t = float(scipy.stats.t.ppf(0.5 + confidence / 2, len(records) - 1))
    for k in range(size.shape[1]):
        if any(isinstance(r["classes"][k].get("ci_problem"), str)
               and r["classes"][k]["ci_problem"] for r in records):
            continue  # a replication's own problem withholds the point's interval
        ci = ratio_interval(size[:, k], sojourn[:, k], confidence, require_positive=True,
                            correct_bias=True)
        estimate = ci.estimate
        own = (ci.high - estimate) / estimate if ci.ok else np.nan
        classes = fluid_record["classes"] if fluid_record is not None else None
        gamma = float(classes[k]["gamma"]) if classes else np.nan
        v = float(classes[k].get("flow_variance", np.nan)) if classes else np.nan
        flows = sum(float(r["classes"][k]["flows_measured"]) - float(np.sum(
            batch_counts(r["classes"][k])[:d])) for r, d in zip(records, drops, strict=True))
        if not (np.isfinite(gamma) and gamma > 0 and np.isfinite(v) and v > 0 and flows > 0):
            out[k] = own
            continue
        if ci.problem and not ci.problem.startswith("interval reaches 0"):
            continue
        sd = gamma * np.sqrt(v / flows)
        if not ci.problem and not consistent_ratio(((ci.high - estimate) / t / sd) ** 2,
                                                   len(records), False):
            out[k] = own  # the model is not this system's: the runs' own interval
        elif estimate - z * sd > 0:
            out[k] = z * sd / estimate
    return out


def point_half_widths(class_names: Sequence[str], records: list[dict], mean_size: float,
                      confidence: float, warmup_flows: int,
                      fluid_record: dict | None) -> np.ndarray:
    """:func:`reported_half_widths`, from the sums where there are replications enough for
    the interval over them (:func:`fast_reported_half_widths`)."""
    if len(records) >= MIN_REPLICATIONS_FOR_T:
        return fast_reported_half_widths(records, confidence, warmup_flows, fluid_record)
    return reported_half_widths(class_names, records, mean_size, confidence, warmup_flows,
                                fluid_record)


@dataclass(frozen=True)
class Stopping:
    """What the precision rule says about the finished replications of one (policy, load).

    ``replications``: how many the point uses (replications 0 … n−1), or None when it
    needs more. ``wanted``: with None, the number of replications the spread seen so far
    suggests in total (> the replications available in order), to schedule ahead."""

    replications: int | None
    wanted: int


def stopping(packet: PacketConfig, records: list[dict], confidence: float = 0.95,
             start: int | None = None, warmup_flows: int = 0,
             widths: Widths | None = None, judged: np.ndarray | None = None) -> Stopping:
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
    uses). ``widths``: the half-widths the point reports for a prefix of its
    replications (:func:`reported_half_widths`: with the fluid model's variance, which a
    review found wider than the runs' own about as often as not, so that a point said
    "reached" beside a wider interval); without it, the runs' own intervals over
    replications. ``judged``: per class, whether the rule judges it (None: every class);
    a class with load share 0 has no flows, hence no interval and a "no measured flows"
    problem in every replication, which must neither stop the point nor keep it from its
    target (a review: every such point stopped at 10 replications, target unmet).
    """
    if packet.precision is None:
        return Stopping(packet.replications, packet.replications)
    ordered = _in_order(records)[: packet.max_replications]
    first = first_replications(packet)
    have = len(ordered)
    if have < first:
        return Stopping(None, first)
    mask = (np.ones(len(ordered[0]["classes"]), bool) if judged is None
            else np.asarray(judged, bool))
    bad = [i for i, r in enumerate(ordered)
           if any(isinstance(c.get("ci_problem"), str) and c["ci_problem"]
                  for c, counts in zip(r["classes"], mask, strict=True) if counts)]
    limit = max(first, bad[0] + 1) if bad else have  # no rule beyond a flagged one
    size, sojourn = _sums(ordered, warmup_flows)
    size, sojourn = size[:, mask], sojourn[:, mask]
    if first >= 2 and widths is None:
        n = replications_for_precision(size[:limit], sojourn[:limit], packet.precision,
                                       first, confidence, start)
        if n is not None:
            return Stopping(n, n)
    elif first >= 2:  # the same rule on the reported intervals
        for n in range(max(first, start or 0), limit + 1):
            if (widths(ordered[:n])[mask] <= packet.precision).all():  # (NaN never passes)
                return Stopping(n, n)
    if bad or have >= packet.max_replications:
        return Stopping(limit if bad else packet.max_replications, have)
    # n ≈ have · (achieved / target)²: the half-width shrinks like 1/√n
    achieved = (relative_half_widths(size, sojourn, confidence) if widths is None
                else widths(ordered)[mask])
    ratio = (float(np.max(achieved)) / packet.precision if np.isfinite(achieved).all()
             else 0.0)
    wanted = int(np.ceil(have * ratio * ratio)) if ratio > 0 else have + 1
    return Stopping(None, min(max(wanted, have + 1), packet.max_replications))


def chosen_replications(packet: PacketConfig, records: list[dict],
                        confidence: float = 0.95, warmup_flows: int = 0,
                        widths: Widths | None = None,
                        judged: np.ndarray | None = None) -> list[dict]:
    """The replications of one (policy, load) that its results use: all of them, or with
    a precision target those the stopping rule chose (:func:`stopping`; extra ones
    computed ahead are ignored)."""
    if packet.precision is None:
        return records
    decided = stopping(packet, records, confidence, warmup_flows=warmup_flows,
                       widths=widths, judged=judged)
    ordered = _in_order(records)
    return ordered[: decided.replications or len(ordered)]


