"""Packet (and cluster) against fluid: each packet point's γ_k with its confidence interval
against the fluid γ_k of the policy it realises (the registry's ``realises``: drfq → drf,
pf → pf, bmf → bmf; a packet policy without a fluid counterpart is not validated). Cluster
points (SPEC §6) are validated the same way (column ``kind``; their γ is in
``packet_gamma``).

A point passes when its interval could be computed and either contains the fluid value or
the relative difference is within the tolerance. ``verdict`` says which: ``fluid in CI``,
``within joint CI`` (below), ``within tolerance``, ``outside CI and tolerance``, ``no
interval: <why>``, ``no fluid value`` or ``no simulated value`` (γ NaN or infinite). An
interval that could not be computed (too few measured flows, a NaN, an unbounded side)
fails, whatever the point estimate.

**A simulated fluid value** (``method`` simulation: the flow-level simulator, e.g. for
Pareto sizes) has its own interval. Both estimates are independent (different random
streams), so the check is on their difference d = γ_packet − γ_fluid: it passes as
``within joint CI`` when ``|d|`` ≤ √(h_p² + h_f²), with h_p and h_f the half-widths of the
two intervals on the sides facing each other (for d > 0 the packet interval's lower side
and the fluid interval's upper side) — the normal-approximation interval of d at the
same confidence. With an exact fluid value (h_f = 0) this is "fluid in CI". A simulated
fluid value without a finite interval fails (``no interval: fluid ...``).

**Known limitations.** Where a packet policy is known to depart from its fluid
counterpart under a condition the scenario meets (the registry's ``limitations``: DRFQ with
unequal class weights or on routes across several routers, MR3 where some classes' DRF
shares differ, memoryless DRFQ and MR3 with a packet mix of different profiles, DRFQ
with packet types that skip a resource; :func:`known_limitations`),
a failing point of it says so: its verdict ends in ``; known limitation`` and
``known_limitation`` gives the reason. It still fails.

**Unreliable intervals.** A point whose packet interval (or simulated fluid interval)
the size law makes unreliable at its load (summary column ``ci_warning``: heavy tails,
:func:`mrfq.sizes.interval_warning`) is never a plain pass: its verdict ends in
``; unreliable interval (<reason>)`` and ``ci_warning`` holds the whole warning, with
what to do. ``passed`` still says whether the comparison passed; a point that passes
with an unreliable interval is shown as ``warn``, not ``pass``, by the CLI.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection

import numpy as np
import pandas as pd

from mrfq import policies
from mrfq.cluster.model import configured_laws
from mrfq.errors import InputError
from mrfq.fluid.allocators import allocate
from mrfq.io import SUMMARY_COLUMNS
from mrfq.scenario import Scenario
from mrfq.sizes import SizeLaw

COLUMNS = ["policy", "load", "class", "fluid_policy", "fluid_gamma", "fluid_method",
           "fluid_ci_low", "fluid_ci_high", "packet_gamma", "ci_low", "ci_high",
           "relative_difference", "fluid_in_ci", "passed", "verdict", "known_limitation",
           "ci_warning", "kind"]
#: how the verdict of a point with an unreliable interval ends (before its reason)
UNRELIABLE = "; unreliable interval"
#: how many classes :func:`known_limitations` checks every subset of (2^K − K − 1 DRF
#: allocations); above it, the pairs and the whole set
MAX_SUBSET_CLASSES = 12


def _unequal_dominant_shares(requirements: np.ndarray, weights: np.ndarray,
                             fluid_policy: str) -> bool:
    """Whether some set of ≥ 2 classes, one transaction each, gets unequal weighted
    dominant shares φ_k / w_k under ``fluid_policy`` (requirements are normalised, so φ_k
    is class k's dominant share)."""
    K = len(weights)
    if K <= MAX_SUBSET_CLASSES:
        subsets = [s for size in range(2, K + 1) for s in itertools.combinations(range(K), size)]
    else:
        subsets = [*itertools.combinations(range(K), 2), tuple(range(K))]
    for subset in subsets:
        chosen = list(subset)
        phi = allocate(fluid_policy, requirements[chosen], weights=weights[chosen])
        levels = phi / weights[chosen]
        if not np.allclose(levels, levels[0], rtol=1e-9, atol=0.0):
            return True
    return False


def unloaded_classes(scenario: Scenario) -> set[str]:
    """The names of the scenario's classes with ``load_share = 0`` (left out of the load:
    :func:`validate_summary` does not validate them)."""
    return {c.name for c in scenario.classes if c.load_share == 0}


def known_limitations(scenario: Scenario) -> dict[str, str]:
    """Packet policy → why it is known to depart from its fluid counterpart on this
    scenario (:data:`mrfq.policies.LIMITATIONS`): for the policies whose registry entry
    names a limitation whose condition holds — unequal class weights, (for a round
    robin on dominant times) some set of classes whose fluid shares are unequal, (for
    DRFQ and MR3 routers) a route across several routers, a packet mix of different
    profiles (:func:`_mixed_profiles`) or with types that skip a resource
    (:func:`_skipping_types`); and
    ``"cluster:<name>"`` → why, for every cluster policy when the scenario has per-job
    parallelism caps, listed servers or placement constraints, a law of the tasks per
    job that is not its class's flow-size law (:func:`_job_size_matches`), or task
    durations drawn from a size law. Only loaded classes count: a class with
    ``load_share = 0`` is never simulated, so it cannot be why a point fails."""
    loaded = [k for k, c in enumerate(scenario.classes) if c.load_share > 0]
    weights = np.asarray(scenario.weights, dtype=np.float64)[loaded]
    found = {}
    for name in scenario.packet.policies:
        entry = policies.get(policies.PACKET, name)
        why = []
        for condition in entry.limitations:
            if condition == policies.UNEQUAL_WEIGHTS:
                holds = bool(np.unique(weights).size > 1)
            elif condition == policies.UNEQUAL_DOMINANT_SHARES:
                holds = _unequal_dominant_shares(
                    np.asarray(scenario.requirements)[loaded], weights, entry.realises)
            elif condition == policies.ROUTES_ACROSS_ROUTERS:
                holds = _route_across_routers(scenario, loaded)
            elif condition == policies.MIXED_PROFILES:
                holds = any(_mixed_profiles(scenario.classes[k]) for k in loaded)
            elif condition == policies.SKIPPING_TYPES:
                holds = any(_skipping_types(scenario.classes[k]) for k in loaded)
            else:  # a registry entry naming a condition no check here knows
                raise ValueError(f"no check for the known limitation {condition!r}")
            if holds:
                why.append(policies.LIMITATIONS[condition])
        if why:
            found[name] = "; ".join(why)
    cluster = scenario.cluster
    why = []  # every cluster policy
    if cluster.max_parallel:  # the fluid model has no caps
        why.append(policies.LIMITATIONS[policies.PARALLELISM_CAPS])
    if cluster.servers or cluster.placement:  # nor servers
        why.append(policies.LIMITATIONS[policies.SEPARATE_SERVERS])
    if cluster.policies and not cluster.trace:  # the laws as run (built-ins in disguise)
        names = scenario.class_names
        if not all(_job_size_matches(tasks, size) for tasks, size in zip(
                configured_laws(cluster, names, "tasks"), scenario.size_laws, strict=True)):
            why.append(policies.LIMITATIONS[policies.JOB_SIZE_LAW])
        if any(isinstance(law, SizeLaw)
               for law in configured_laws(cluster, names, "duration_law")):
            why.append(policies.LIMITATIONS[policies.TASK_DURATION_LAW])
    for name in cluster.policies if why else ():
        found[f"{policies.CLUSTER}:{name}"] = "; ".join(why)
    return found


def _route_across_routers(scenario, classes: list[int]) -> bool:
    """Some class of ``classes`` has a route visiting resources of two or more routers
    (SPEC §3.2)."""
    router = scenario.router_index
    return any(len({int(router[j]) for j in scenario.routes[k]}) > 1 for k in classes)


def _mixed_profiles(traffic_class) -> bool:
    """The class's packet types are not all multiples of one requirement vector."""
    types = np.asarray(traffic_class.packet_requirements, dtype=np.float64)
    profiles = types / types.max(axis=1, keepdims=True) if types.size else types
    return bool(len(profiles) > 1 and not np.allclose(profiles, profiles[0], rtol=1e-9,
                                                      atol=0.0))


def _skipping_types(traffic_class) -> bool:
    """Some packet type of the class has a zero requirement on a resource another of its
    types uses (that type skips the resource, SPEC §3)."""
    used = np.asarray(traffic_class.packet_requirements, dtype=np.float64) > 0
    return bool(used.size and np.any(used.any(axis=0) & ~used.all(axis=0)))


def _job_size_matches(tasks, size: SizeLaw) -> bool:
    """A cluster class's law of tasks per job is its flow-size law: geometric tasks
    (exactly geometric packets of exponential work, :func:`mrfq.counts.packet_counts`)
    for exponential sizes, fixed for deterministic ones, or the same size law (a job's
    work, N task durations of mean d, then follows it up to the task granularity; compared
    by their keys, so a file named by two paths is one law)."""
    if tasks == "geometric":
        return size.distribution == "exponential"
    if tasks == "fixed":
        return size.distribution == "deterministic"
    return tasks.key() == size.key()


def _interval_problem(row: pd.Series) -> str:
    stated = row.get("ci_problem", "")
    if isinstance(stated, str) and stated:
        return stated
    low, high = row["ci_low"], row["ci_high"]
    if not (np.isfinite(low) and np.isfinite(high)):
        return "the interval has a missing or infinite bound"
    if not low > 0:
        return "the interval's lower bound is not positive"
    return ""


def warning_text(row: pd.Series) -> str:
    """A summary row's ``ci_warning`` ("" when absent or empty: older summaries)."""
    text = row.get("ci_warning", "")
    return text if isinstance(text, str) else ""


def warning_reason(warning: str) -> str:
    """The short reason of an :func:`mrfq.sizes.interval_warning` text: what comes
    between ``unreliable interval: `` and the next colon."""
    reason = warning.removeprefix("unreliable interval: ")
    return reason.split(": ")[0]


def _fluid_values(summary: pd.DataFrame) -> pd.DataFrame:
    """Fluid rows indexed by (policy, load, class): gamma, method, ci_low, ci_high (an
    exact value's interval is the value itself; summaries from before the method choice
    have no method and NaN bounds), ci_warning ("" when none)."""
    fluid = summary[summary["kind"] == policies.FLUID].copy()
    if "method" not in fluid:
        fluid["method"] = "markov"
    fluid["method"] = fluid["method"].fillna("markov")
    fluid["ci_warning"] = [warning_text(row) for _, row in fluid.iterrows()]
    exact = fluid["method"] != "simulation"
    for side in ("ci_low", "ci_high"):
        fluid.loc[exact, side] = fluid.loc[exact, "gamma"]
    return fluid.set_index(["policy", "load", "class"])[["gamma", "method", "ci_low",
                                                         "ci_high", "ci_warning"]]


def _joint_inside(row: pd.Series, target: float, low: float, high: float) -> bool:
    """|γ_p − γ_f| within √(h_p² + h_f²), the half-widths on the facing sides."""
    difference = row["gamma"] - target
    if difference >= 0:
        packet_half, fluid_half = row["gamma"] - row["ci_low"], high - target
    else:
        packet_half, fluid_half = row["ci_high"] - row["gamma"], target - low
    return bool(abs(difference) <= np.hypot(packet_half, fluid_half))


def check_tolerance(tolerance: float) -> None:
    """InputError unless ``tolerance`` (a relative difference) is >= 0: checked before any
    work by the commands that validate what they compute."""
    if not tolerance >= 0:  # (NaN too)
        raise InputError(f"must be a number >= 0, got {tolerance!r}", "tolerance")
    if tolerance == float("inf"):  # (every point would pass: no validation at all)
        raise InputError("must be finite, got inf", "tolerance")


def check_run(scenario: Scenario, tolerance: float) -> None:
    """The main job's checks before any work (``mrfq run``): InputError for a negative
    ``tolerance``, or when no packet or cluster policy of ``scenario`` (a
    :class:`~mrfq.scenario.Scenario`) has a fluid counterpart, so that no point computed
    could be validated (baselines such as ``bottleneck-fq``)."""
    check_tolerance(tolerance)
    if scenario.cluster.trace:  # the sweep refuses it, saying why (a trace has no load axis)
        return
    simulated = [(policies.PACKET, name) for name in scenario.packet.policies] + [
        (policies.CLUSTER, name) for name in scenario.cluster.policies]
    if not any(policies.get(kind, name).realises for kind, name in simulated):
        names = ", ".join(name for _, name in simulated) or "none"
        raise InputError(f"no packet or cluster policy with a fluid counterpart to validate "
                         f"({names}); `mrfq sweep` computes their points without validating",
                         "packet.policies", scenario.source)


def validate_summary(summary: pd.DataFrame, tolerance: float = 0.05,
                     limitations: dict[str, str] | None = None,
                     unloaded: Collection[str] = ()) -> pd.DataFrame:
    """One row per packet (policy, load, class) whose policy has a fluid counterpart;
    ``passed`` and ``verdict`` as in the module docstring. ``limitations`` (policy → why,
    :func:`known_limitations`): a point of such a policy that fails says so in its
    verdict and in ``known_limitation`` (it still fails). ``unloaded``: the classes with
    ``load_share = 0`` (:func:`unloaded_classes`), left out: no flow of theirs arrives, so
    they have neither a fluid nor a simulated γ to compare."""
    limitations = limitations or {}
    missing = sorted(set(SUMMARY_COLUMNS) - set(summary.columns))
    if missing:  # (a table that is not a sweep's summary)
        raise InputError(f"is not a sweep's summary: no column {', '.join(missing)}",
                         "summary")
    fluid = _fluid_values(summary)
    rows = []
    simulated_kinds = summary["kind"].isin([policies.PACKET, policies.CLUSTER])
    for _, row in summary[simulated_kinds & ~summary["class"].isin(list(unloaded))].iterrows():
        # a packet or cluster policy against the fluid policy it realises
        target_policy = policies.get(row["kind"], row["policy"]).realises
        if target_policy is None:
            continue
        key = (target_policy, row["load"], row["class"])
        found = key in fluid.index
        target = float(fluid.loc[key, "gamma"]) if found else np.nan
        method = fluid.loc[key, "method"] if found else ""
        low = float(fluid.loc[key, "ci_low"]) if found else np.nan
        high = float(fluid.loc[key, "ci_high"]) if found else np.nan
        simulated = method == "simulation"
        relative = (row["gamma"] - target) / target if target > 0 else np.nan
        problem = _interval_problem(row)
        if not problem and simulated and not (np.isfinite(low) and np.isfinite(high)):
            problem = "fluid value (simulated) has no finite interval"
        if problem:
            inside = False
        elif simulated:
            inside = _joint_inside(row, target, low, high)
        else:
            inside = bool(row["ci_low"] <= target <= row["ci_high"])
        close = bool(abs(relative) <= tolerance)
        if not np.isfinite(target):
            verdict = "no fluid value"
        elif not np.isfinite(row["gamma"]):  # (a hand-edited or broken summary)
            verdict = "no simulated value"
        elif problem:
            verdict = f"no interval: {problem}"
        elif inside:
            verdict = "within joint CI" if simulated else "fluid in CI"
        elif close:
            verdict = "within tolerance"
        else:
            verdict = "outside CI and tolerance"
        passed = verdict in ("fluid in CI", "within joint CI", "within tolerance")
        # packet policies by name, cluster ones as "cluster:<name>" (the names overlap)
        name = row["policy"] if row["kind"] == policies.PACKET else f"{row['kind']}:{row['policy']}"
        known = limitations.get(name, "") if not passed else ""
        if known:
            verdict += "; known limitation"
        warning = warning_text(row) or (fluid.loc[key, "ci_warning"] if simulated else "")
        if warning and np.isfinite(target):
            verdict += f"{UNRELIABLE} ({warning_reason(warning)})"
        rows.append({"policy": row["policy"], "load": row["load"], "class": row["class"],
                     "fluid_policy": target_policy, "fluid_gamma": target,
                     "fluid_method": method, "fluid_ci_low": low, "fluid_ci_high": high,
                     "packet_gamma": row["gamma"], "ci_low": row["ci_low"],
                     "ci_high": row["ci_high"], "relative_difference": relative,
                     "fluid_in_ci": inside, "passed": passed, "verdict": verdict,
                     "known_limitation": known, "ci_warning": warning,
                     "kind": row["kind"]})
    return pd.DataFrame(rows, columns=COLUMNS)


def count_line(table: pd.DataFrame, tolerance: float) -> str:
    """One line counting a validation table's verdicts: the points that pass, those
    covered (the fluid value in the interval, or, for a simulated fluid value, within the
    joint interval: counted apart) and those only within ``tolerance``."""
    failed = int((~table["passed"]).sum())
    inside = int(table["fluid_in_ci"].sum())
    joint = int(table["verdict"].astype(str).str.startswith("within joint CI").sum())
    covered = (f"{inside - joint} with the fluid value in the 95% CI, {joint} within the "
               "joint CI of a simulated fluid value" if joint else
               f"{inside} with the fluid value in the 95% CI")
    return (f"{len(table) - failed}/{len(table)} points pass ({covered}, "
            f"{len(table) - failed - inside} within {tolerance:.0%})")


def fair_dominant_shares(scenario: Scenario, policy: str, flows: pd.DataFrame,
                         times: np.ndarray) -> np.ndarray:
    """[flow, time]: the dominant share each explicit flow of ``scenario`` (``flows``:
    :class:`mrfq.packet.flows.FlowRun`'s table) gets at each of ``times`` in the fluid
    allocation of the policy the packet ``policy`` realises (NaN for a baseline with none):
    one transaction per flow present — a windowed flow from its start until it completes
    or stops, an open-loop flow from its start until its stop — and an open-loop flow's
    share capped at what it offers (its rate: a packet's dominant service is 1), the
    capacity it leaves going to the others (recomputed until no cap binds; for DRF,
    progressive filling of the others' dominant shares of the whole capacity)."""
    fluid_policy = policies.fluid_counterpart(policy)
    shares = np.full((len(flows), len(times)), np.nan)
    if fluid_policy is None:
        return shares
    by_name = {c.name: c for c in scenario.classes}
    a = np.array([by_name[c].requirements for c in flows["class"]], dtype=np.float64)
    w = np.array([by_name[c].weight for c in flows["class"]], dtype=np.float64)
    start = flows["start"].to_numpy(dtype=np.float64)
    rate = flows["rate"].to_numpy(dtype=np.float64)
    end = np.minimum(flows["stop"].to_numpy(dtype=np.float64),
                     np.where(rate > 0, np.inf,
                              flows["completion"].fillna(np.inf).to_numpy(dtype=np.float64)))
    cap = np.where(rate > 0, rate, np.inf)
    for i, t in enumerate(times):
        present = np.flatnonzero((start <= t) & (t < end))
        fixed: dict[int, float] = {}
        while present.size:
            free = np.array([k for k in present if k not in fixed])
            remaining = 1.0 - sum(fixed[k] * a[k] for k in fixed)
            if free.size == 0 or np.any(remaining <= 0):
                break
            scaled = a[free] / remaining  # the capacity the capped flows leave, as 1
            weights = w[free]
            if fluid_policy == policies.named(policies.FLUID).DRF:
                # DRF levels the dominant shares of the whole capacity, max_j a_kj, not of
                # what is left: weights × (scaled dominant / dominant) keep its units (a
                # review found 0.576 / 0.512 where progressive filling gives 0.533 each)
                weights = weights * scaled.max(axis=1) / a[free].max(axis=1)
            phi = allocate(fluid_policy, scaled, weights=weights)
            over = phi > cap[free] * (1 + 1e-12)
            if not over.any():
                shares[free, i] = phi
                break
            for k in free[over]:
                fixed[int(k)] = float(cap[k])
        for k, value in fixed.items():
            shares[k, i] = value
    return shares
