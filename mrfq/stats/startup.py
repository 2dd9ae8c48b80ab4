"""The start of a packet run (SPEC §3 Measurement): which flows a replication leaves out
of its estimates. :func:`warmup_cut` is the record's own cut (a fixed fraction, or MSER-5
with ``warmup = "auto"``); :func:`relaxation_cut` the start-up cut ``warmup = "auto"``
adds when replications are combined — :data:`~mrfq.stats.estimators.RELAXATIONS`
relaxation times of the most loaded resource (:func:`~mrfq.stats.estimators.
relaxation_flows`), which MSER-5 does not see at load 0.9 (issue 25)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mrfq.stats.estimators import mser_truncation

WARMUP_LIMIT_PROBLEM = ("warm-up: MSER-5 minimum at its limit (half the run); the initial "
                        "transient may be longer than the run")


def warmup_cut(arrival: np.ndarray, completion: np.ndarray, flow_class: np.ndarray,
               warmup: float | str, *, direction: str = "low") -> tuple[int, str]:
    """Arrival index of the first measured flow, and a problem string ("" when fine).

    ``warmup`` a fraction in [0, 1): ⌊warmup · flows⌋. ``"auto"``: MSER-5
    (:func:`mser_truncation`) on the pooled sojourn series of all flows in arrival order,
    each flow's sojourn divided by its class's mean sojourn (so classes with long sojourns
    do not dominate). Pooled rather than per class because the start-up transient is a
    property of the whole system (every class starts empty at the same time), one cut
    keeps the measured flows a single arrival window for every class (as with a fixed
    fraction; the window Little's law averages over), and all flows inform the cut — a
    small class alone gives a noisy one. ``direction`` is passed to
    :func:`mser_truncation`: "low" (default) because runs start empty, so the transient
    has short sojourns; two-sided MSER-5 on sojourns selects against early long busy
    periods. Measured on the Figure 3 scenario (BMF, m = 1000, W = 30, link load 0.9,
    20 000 flows, 40 seeds, paired with a fixed 5% warm-up): two-sided MSER-5 cut in 17
    runs and raised γ by +6.1 ± 2.2% (class 1), +2.1 ± 0.8% (class 2), +6.3 ± 2.3%
    (class 3); "low" cut in none and moved γ by +0.1 ± 0.3%. (The start-up transient there
    lasts about 250 flows — ensemble mean of the first 250 sojourns 0.73 of the later
    ones — too little to matter in 20 000 flows and too little for MSER to see in one run.)
    """
    flows = int(np.asarray(arrival).shape[0])
    if isinstance(warmup, str):
        if warmup != "auto":
            raise ValueError(f"warmup must be a fraction in [0, 1) or 'auto', got {warmup!r}")
        sojourn = np.asarray(completion, dtype=np.float64) - arrival
        if not np.isfinite(sojourn).all():
            return 0, "warm-up: non-finite sojourn times, no transient detection"
        scaled = np.empty_like(sojourn)
        for k in np.unique(flow_class):
            mine = flow_class == k
            mean = sojourn[mine].mean()
            scaled[mine] = sojourn[mine] / mean if mean > 0 else 0.0
        cut = mser_truncation(scaled, direction=direction)
        return cut.discard, WARMUP_LIMIT_PROBLEM if cut.at_limit else ""
    warmup = float(warmup)
    if not 0.0 <= warmup < 1.0:
        raise ValueError(f"warmup must be a fraction in [0, 1) or 'auto', got {warmup!r}")
    return int(warmup * flows), ""



def relaxation_cut(tables: list[pd.DataFrame], warmup_flows: int, even: bool = False
                   ) -> tuple[int, str]:
    """Leading batches every replication drops (the most any of them needs), and a
    problem: see :func:`relaxation_drops`."""
    drops, problem = relaxation_drops(tables, warmup_flows, even)
    return (max(drops) if drops and not problem else 0), problem


def relaxation_drops(tables: list[pd.DataFrame], warmup_flows: int, even: bool = False
                     ) -> tuple[list[int], str]:
    """Leading batches every replication drops so that at least ``warmup_flows`` flows
    from its start (arrival order, all classes) are left out of γ, beyond the cut its
    record already made (``warmup_cut``), and a problem ("" when fine).

    The batches of a class split its measured flows evenly in arrival order, so batch b
    of every class covers about the same arrival window: dropping d of B batches leaves
    out d/B of the measured flows. d is the nearest whole number of batches to the flows
    asked for (a batch is 5% of the run, so up to half a batch fewer); it may be at most
    half the batches — a replication that needs more is too short for the warm-up its
    load needs, and says so with the length it needs. ``even``:
    d rounded up to an even number (lugsail batches pair the remaining ones)."""
    if warmup_flows <= 0:
        return [0] * len(tables), ""
    runs = [_run_shape(table.to_dict("records")) for table in tables]
    if any(run is None for run in runs):
        return [0] * len(tables), ""  # records from before batch sums: no finer cut
    drops = [relaxation_batches(run, warmup_flows, even) for run in runs]
    problem = next((p for _, p in drops if p), "")
    return [d for d, _ in drops], problem


def _run_shape(rows: list[dict]) -> tuple[int, int, int] | None:
    """(batches, measured flows of all classes, the record's own cut) of one
    replication's class rows; None for rows from before batch sums. A class with no
    batches has an empty list, so the count is the largest over the classes."""
    batch_sums = [row.get("batch_sojourn_sums") for row in rows]
    if not all(isinstance(v, (list, np.ndarray)) for v in batch_sums):
        return None
    cut = rows[0].get("warmup_cut")
    return (max(len(v) for v in batch_sums), int(sum(row["flows_measured"] for row in rows)),
            int(cut) if cut is not None and pd.notna(cut) else 0)


def relaxation_batches(run: tuple[int, int, int], warmup_flows: int,
                       even: bool = False) -> tuple[int, str]:
    """:func:`relaxation_drops` for one replication of shape (batches, measured flows of
    all classes, record's own cut): the number of leading batches to drop, and a
    problem."""
    batches, measured, cut = run
    if measured == 0:
        return 0, ""
    extra = max(warmup_flows - cut, 0)
    # no batches (fewer measured flows than batches): nothing can be left out, so a cut
    # that is due is a problem, not a silent 0 (15-flow replications at load 0.9 gave
    # an unflagged interval 2.4 times the exact gamma)
    drop = int(np.floor(extra * batches / measured + 0.5)) if batches else 0
    drop += drop % 2 if even else 0
    if not (2 * drop > batches or (batches == 0 and extra > 0)):
        return drop, ""
    if 2 * warmup_flows > cut + measured:
        flows = cut + measured
        return 0, (f"warm-up: this load relaxes over about {warmup_flows} flows, more than "
                   f"half a replication ({flows} flow{'s' * (flows != 1)}); runs of at "
                   f"least {2 * warmup_flows} flows are needed")
    if batches == 0:  # long enough, but with fewer flows than batches
        return 0, (f"warm-up: this load's relaxation (the first {extra} measured flows) "
                   "cannot be left out: the replication has no batches")
    # long enough, but the cut rounded to whole (even) batches is more than half of them
    return 0, (f"warm-up: leaving this load's relaxation (the first {extra} measured "
               f"flows) out would take more than half of the {batches} batches")


def record_relaxation_drops(record: dict, warmup_flows: int) -> int | None:
    """Leading batches one stored point record leaves out of γ (its own relaxation cut,
    :func:`relaxation_batches` of that replication alone, as :func:`combine_replications
    <mrfq.stats.combine_replications>` does over replications); 0 for a record from
    before batch sums; None for one too short for the cut (its point is flagged and
    keeps every batch, as :func:`relaxation_drops` does)."""
    run = _run_shape(record["classes"]) if warmup_flows > 0 else None
    if run is None:
        return 0
    drop, problem = relaxation_batches(run, warmup_flows)
    return None if problem else drop
