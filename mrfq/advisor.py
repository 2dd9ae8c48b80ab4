"""The run-length advisor (``mrfq plan``): before a sweep, how many flows (one run) or
replications (of the scenario's ``flows``) each packet point needs for a target relative
precision of every class's γ_k, and the sweep's wall time on this machine.

Per (policy, load) one short pilot replication through the sweep's own point function
(:func:`mrfq.kinds.packet.packet_point`; seeded, empty or fluid start as the scenario
says), with more batches than a run keeps so that the variance estimate is steadier.
Per class: the pilot's γ_k, its relative asymptotic variance per flow
σ²_rel = n · Var(γ̂_k)/γ̂_k² from correlation-checked batch means
(:func:`mrfq.stats.runlength.relative_variance`) and the measured flows needed for a
relative half-width h, n = (q σ_rel / h)² (:func:`mrfq.stats.runlength.flows_for_precision`),
turned into flow arrivals with the warm-up allowance: for one run q is the median factor of
its t interval over lugsail batches (2.65 with 5 batches, so that half of such runs
report h or less; z = 1.96 under-sized them: a review measured 6.03% for 4%), for
replications z (the stopping rule adds them until h is reached). The point's binding
class is the one that needs the most. The pilot's services per flow and per CPU second
give the time.

A point whose reported interval is the fluid model's (``ci_method`` "fluid-variance",
:func:`mrfq.stats.with_fluid_variance`: a policy with a Markov fluid counterpart) reports
the half-width z γ_k^fluid √(v_k / n_k), whose width the run's own batches do not set: its
need is n_k = (z γ_k^fluid / γ̂_k)² v_k / h² class-k flows (``basis`` "model"; sized with
the t factor q instead it asked for (2.65/1.96)² ≈ 1.8 times the flows, a review found).
A run keeps that interval only while its own variance over the model's lies in the band
of :func:`mrfq.stats.model_variance.consistent_ratio`, and so does the plan: for one run
the basis a run keeps with the larger chance at the pilot's ratio
(:func:`mrfq.stats.model_variance.model_kept_probability`; ``basis_problem`` between 5%
and 95%), for replications the precision rule followed n by n
(:func:`mrfq.stats.model_variance.rule_replications`); "pilot" where the run's own
interval stands.

It is an estimate from a pilot: the variance rests on a few batches, and on few
relaxation times at high load; ``factor_low``/``factor_high`` is the 95% range of the
flows needed over the estimate (χ² on the batches, with fewer degrees of freedom for
skewed batch means, or on the relaxation times spanned / :data:`RELAXATIONS_PER_DOF`,
whichever is fewer), and a pilot whose batch means stay correlated, or that spans
fewer than :data:`RELAXATIONS_PER_DOF` relaxation times, says that it underestimates
(``pilot_problem``).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import scipy  # scipy.stats on first use (a lazy submodule): 0.3-0.6 s where unused

from mrfq import arguments, policies
from mrfq.errors import InputError
from mrfq.kinds import packet
from mrfq.kinds.fluid_records import fluid_reference
from mrfq.kinds.packet import packet_point
from mrfq.kinds.replications import first_replications
from mrfq.packet.engine import check_flows
from mrfq.packet.model import relaxation_flows  # (also the advisor's name)
from mrfq.progress import ProgressArg, progress_callback
from mrfq.scenario import Scenario, load_scenario
from mrfq.scenario.checks import MIN_PRECISION
from mrfq.stats import LUGSAIL_BATCHES, MIN_REPLICATIONS_FOR_T
from mrfq.stats.model_variance import (
    RULE_HORIZON,
    RuleClass,
    model_kept_probability,
    replication_units,
    rule_replications,
)
from mrfq.stats.runlength import (
    flows_for_precision,
    half_width,
    relative_variance,
    variance_factor,
)

#: relative half-width of every class's γ when neither the caller nor the scenario sets one
DEFAULT_PRECISION = 0.02
#: the shortest pilot by default (flows)
MIN_PILOT_FLOWS = 5000
#: by default a pilot spans this many relaxation times of the bottleneck (flows)
PILOT_RELAXATIONS = 60
#: … but no more flows than this: near load 1 the relaxation time grows without bound
#: (60 of them were 2.4·10^8 flows at 0.999); a shorter pilot says so by its wider
#: ``factor`` range, and below RELAXATIONS_PER_DOF of them by a warning
MAX_PILOT_FLOWS = 1_000_000
#: batches a pilot keeps: more than a run's 20, so that σ² rests on more of them
PILOT_BATCHES = 40
#: warm-up allowance with ``warmup = "auto"`` (MSER-5's cut is data-dependent; it cut
#: little or nothing in VALIDATION.md's runs)
AUTO_WARMUP_ALLOWANCE = 0.05
#: least replications of a precision-targeted point (the t interval over replications)
MIN_REPLICATIONS = MIN_REPLICATIONS_FOR_T
#: the confidence levels a plan takes: z of the normal interval finite and not 0
MIN_CONFIDENCE, MAX_CONFIDENCE = 0.5, 0.999999
#: relaxation times per degree of freedom of a pilot's variance estimate: batch means of
#: a pilot that spans few relaxation times are neither independent nor normal, and the
#: χ² range on its batches is too narrow. Set from VALIDATION.md ("Run-length advisor"):
#: with it the range of 20 pilots per cell at 60 and 100-290 relaxation times (load 0.9)
#: holds the measured variance in 17-20 of 20
RELAXATIONS_PER_DOF = 20


def _warmup_fraction(scenario: Scenario) -> float:
    warmup = scenario.packet.warmup
    return AUTO_WARMUP_ALLOWANCE if isinstance(warmup, str) else float(warmup)


def _pilot_scenario(scenario: Scenario, flows: int, seed: int | None) -> Scenario:
    """One replication of ``flows`` flows, :data:`PILOT_BATCHES` batches, no precision
    target (the pilot is measured, not stopped)."""
    cfg = scenario.packet
    pilot = replace(cfg, flows=int(flows), replications=1, precision=None,
                    batches=PILOT_BATCHES, seed=cfg.seed if seed is None else seed)
    return replace(scenario, packet=pilot)


def pilot_length(scenario: Scenario, load: float) -> int:
    """Default flows of the pilot at ``load``: :data:`PILOT_RELAXATIONS` relaxation times
    (:func:`relaxation_flows`), at least :data:`MIN_PILOT_FLOWS` (about 20 000 flows at
    a bottleneck load of 0.9, 5 000 up to 0.8; measured in VALIDATION.md "Run-length
    advisor": pilots of 5 000 flows at 0.9 predict half the spread of γ; these, 0.74-0.90
    of it in the median)."""
    relaxations = PILOT_RELAXATIONS * relaxation_flows(scenario, load)
    if not relaxations < MAX_PILOT_FLOWS:  # (also at load 1, where it is infinite)
        return MAX_PILOT_FLOWS
    return max(MIN_PILOT_FLOWS, math.ceil(relaxations / 100) * 100)


def _check(precision: object, pilot_flows: object, seed: object, confidence: object
           ) -> tuple[float | None, int | None, int | None, float]:
    """The arguments (not the file's values, validated when it was read), each refused
    with the same message from Python as from the command line: ``precision`` in
    [MIN_PRECISION, 1) or None, ``pilot_flows`` a whole number of at least 20 flows per
    batch or None, ``seed`` a whole number >= 0 or None, ``confidence`` in (0, 1)."""
    precision = arguments.real(precision, "precision")
    if precision is not None and not MIN_PRECISION <= precision < 1.0:
        raise InputError(f"must be in [{MIN_PRECISION:g}, 1), got {precision!r}", "precision")
    pilot_flows = arguments.count(pilot_flows, "pilot_flows", 20 * PILOT_BATCHES,
                                  why=f" (the pilot keeps {PILOT_BATCHES} batches)")
    if pilot_flows is not None:
        check_flows(pilot_flows, "pilot_flows")
    seed = arguments.count(seed, "seed", 0)
    confidence = arguments.real(confidence, "confidence", 0.95)
    if not MIN_CONFIDENCE <= confidence <= MAX_CONFIDENCE:
        raise InputError(f"must be in [{MIN_CONFIDENCE:g}, {MAX_CONFIDENCE:g}], got "
                         f"{confidence!r}", "confidence")
    return precision, pilot_flows, seed, confidence


def advise(scenario: Scenario | str, *, precision: float | None = None,
           pilot_flows: int | None = None, policy_names: list[str] | None = None,
           loads: list[float] | None = None, seed: int | None = None,
           confidence: float = 0.95, progress: ProgressArg = None) -> pd.DataFrame:
    """The run-length table of ``scenario``'s packet points (module doc): one row per
    (policy, load, class).

    ``precision``: target relative half-width h of every class's γ_k (default: the
    scenario's ``[packet] precision``, else :data:`DEFAULT_PRECISION`); ``pilot_flows``:
    flows of every pilot (default: :func:`pilot_length` of each load);
    ``policy_names``, ``loads``: override the scenario's; ``seed``: the pilots' seed.

    Columns: ``pilot_flows``, ``pilot_gamma`` (packets per time unit), ``sigma_rel``
    (√σ²_rel per measured flow arrival), ``pilot_batches``, ``pilot_lag1``,
    ``pilot_relaxations`` (relaxation times the pilot spans, :func:`relaxation_flows`),
    ``pilot_dof`` (degrees of freedom of its variance estimate),
    ``factor_low``/``factor_high`` (95% range of the true flows needed / the estimate),
    ``pilot_problem``, ``basis`` ("model": the point reports the fluid model's variance
    and the need follows from it; "pilot": from the pilot's batches; "" for a class
    without flows at this load), ``basis_problem`` (the run, or with a precision target the
    rule where the model's width reaches h, keeps the model's interval with a probability
    between 5% and 95%; and the other basis's need; with a target, where the point stops
    when that is not this class's stop, and this class's later stop beyond it),
    ``model_sigma_rel`` (√ of the model's σ²_rel, NaN without one), ``target_precision``,
    ``flows_needed`` (flow arrivals of one run, warm-up allowance included),
    ``replications_needed`` (of the scenario's ``flows``: where the precision rule stops
    for this class, :func:`mrfq.stats.model_variance.rule_replications` from the rule's
    first replications, inf beyond 10^9), ``budget_problem`` (with a precision target:
    the class's need, or the classes' together, exceeds ``max_replications``, and the
    half-width the rule stops at; "" otherwise), ``half_width_configured`` (relative 95%
    half-width predicted for the run as configured: ``flows`` × ``replications``),
    ``binding`` (the class that needs the most at this point), ``services_per_flow``,
    ``services_per_cpu_s`` (of the pilot), ``wall_s`` (CPU seconds of the point: the
    point's need, replications at which every class is within h at once, up to the
    budget, when the scenario sets a precision target, else one run of the binding
    class's ``flows_needed``) and ``wall_s_configured`` (the
    run as configured). ``confidence``: of the intervals planned, in [0.5, 0.999999];
    ``progress``: as :func:`mrfq.plan`'s (True: a progress line; a callable (done, total)).
    Bad arguments raise :class:`mrfq.InputError` naming the argument, before any pilot."""
    precision, pilot_flows, seed, confidence = _check(precision, pilot_flows, seed,
                                                      confidence)
    progress = progress_callback(progress, "pilots")  # (refused here as by mrfq.plan)
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    cfg = scenario.packet
    if precision is None:
        precision = cfg.precision if cfg.precision is not None else DEFAULT_PRECISION
    chosen = arguments.names(policy_names, "policies")
    names = [policies.get(policies.PACKET, p, "policies").name for p in chosen] \
        if chosen else [policies.get(policies.PACKET, p, "packet.policies",
                                     scenario.source).name for p in cfg.policies]
    chosen_loads = list(arguments.numbers(loads, "loads") or scenario.load_values)
    for load in chosen_loads:
        scenario.check_load(load, "load.values" if loads is None else "loads",
                            in_file=loads is None)
    for name in names:
        for load in chosen_loads:
            packet.check(scenario, name, load)
    packet.prepare(set(names))  # compile first: the pilots' timing is of the loop alone
    warm = _warmup_fraction(scenario)
    per_replication = cfg.flows * (1.0 - warm)  # measured flows of one replication
    rows = []
    total = len(names) * len(chosen_loads)
    if progress is not None:  # the start, compiled: a progress line's rate counts from here
        progress(0, total)
    for i, (name, load) in enumerate((n, v) for n in names for v in chosen_loads):
        flows = pilot_length(scenario, load) if pilot_flows is None else int(pilot_flows)
        started = time.process_time()  # CPU seconds: other processes' load does not count
        record = packet_point(_pilot_scenario(scenario, flows, seed), name, load, 0)
        cpu = time.process_time() - started
        span = flows / relaxation_flows(scenario, load)
        rows.extend(_point_rows(scenario, record, float(precision), warm, per_replication,
                                confidence, cpu, span, fluid_reference(scenario, name, load)))
        if progress is not None:
            progress(i + 1, total)
    return pd.DataFrame(rows)


def _model_variance(reference: dict | None, k: int, share: float, estimate: float
                    ) -> float:
    """σ²_rel per measured flow of all classes of the interval the point reports from the
    fluid model's variance (module doc): (γ_k^fluid / γ̂_k)² v_k / p_k, with p_k the
    class's share of the measured flows (its interval counts its own flows, n_k = p_k n);
    NaN where the point keeps its own interval (no Markov reference, no flows)."""
    if reference is None or not share > 0 or not estimate > 0:
        return math.nan
    c = reference["classes"][k]
    gamma, v = float(c["gamma"]), float(c.get("flow_variance", math.nan))
    if not (np.isfinite(gamma) and gamma > 0 and np.isfinite(v) and v > 0):
        return math.nan
    return (gamma / estimate) ** 2 * v / share


def _model_factor(own: float, model: float, measured: int, dof: float,
                  confidence: float) -> tuple[float, float]:
    """The 95% range of the true need over a model-basis need: it scales as (γ̂_pilot /
    γ)², and γ̂_pilot's relative variance is at least the model's, model / measured (its
    own estimate, from few batches, ran under it: a review found 9.4% against 13.5% at
    load 0.9), with a t quantile on the pilot's degrees of freedom (NaN below 1: unknown)."""
    if not dof >= 1:
        return math.nan, math.nan
    spread = float(scipy.stats.t.ppf(0.5 + confidence / 2, dof)) * math.sqrt(
        max(own if np.isfinite(own) else 0.0, model) / measured)
    return max(0.0, 1.0 - spread) ** 2, (1.0 + spread) ** 2


def _point_rows(scenario: Scenario, record: dict, precision: float, warm: float,
                per_replication: float, confidence: float, cpu: float,
                span: float, reference: dict | None) -> list[dict]:
    """The rows of one pilot (:func:`advise`) that took ``cpu`` seconds and spans
    ``span`` relaxation times; ``reference``: the Markov fluid record whose variance the
    point's interval takes (:func:`mrfq.kinds.fluid_records.fluid_reference`), or None."""
    cfg = scenario.packet
    classes = record["classes"]
    cut = int(classes[0]["warmup_cut"])
    pilot_flows = sum(int(c["flows_measured"]) for c in classes) + cut
    measured = max(pilot_flows - cut, 1)
    services_per_flow = record["services"] / pilot_flows
    rate = record["services"] / max(cpu, 1e-9)
    seconds_per_flow = services_per_flow / rate
    replicated = cfg.precision is not None
    z = float(scipy.stats.norm.ppf(0.5 + confidence / 2))
    configured = per_replication * cfg.replications
    loaded = scenario.class_loads(record["load"]) > 0  # the classes the rule judges
    # the precision rule's first replications and budget (none without a target: the
    # replications a target of h would take)
    first = first_replications(cfg) if replicated else MIN_REPLICATIONS
    budget = cfg.max_replications if replicated else RULE_HORIZON
    rows, judged, edges = [], {}, {}  # row -> its rule; -> its two stops (RuleClass.edge)
    for k, (name, c) in enumerate(zip(scenario.class_names, classes, strict=True)):
        rv = relative_variance(c["batch_size_sums"], c["batch_sojourn_sums"], measured,
                               confidence)
        model = _model_variance(reference, k, int(c["flows_measured"]) / measured,
                                float(c["gamma"]))
        # the χ² range on the batches, or on the relaxation times spanned / 20 if fewer
        dof = min(rv.dof, span / RELAXATIONS_PER_DOF)
        short = ("" if dof >= 1 else f"pilot spans {span:.0f} relaxation times (< "
                 f"{RELAXATIONS_PER_DOF}): its estimate is likely biased")
        # one run keeps the model's interval while its own variance (5 lugsail batches)
        # over the model's stays in the band: the chance of that at the pilot's ratio
        keep = (model_kept_probability(rv.variance / model, LUGSAIL_BATCHES, True)
                if np.isfinite(model) else 0.0)
        need_model = z ** 2 * model / precision ** 2  # the model's z γ^f √(v/n_k) / γ̂
        # one run reports t with 4 degrees of freedom over its lugsail batches: sized so
        # that its half-width is the target in half of such runs (q 2.65)
        need_pilot = flows_for_precision(rv.variance, precision, confidence,
                                         LUGSAIL_BATCHES, lugsail=True)
        rule = RuleClass(model, rv.variance, per_replication, confidence)
        reps = (rule_replications([rule], precision, first)
                if np.isfinite(model) or np.isfinite(rv.variance) else math.nan)
        reps = math.inf if reps > RULE_HORIZON else reps
        basis = (rule.basis(min(reps, budget)) if replicated
                 else "model" if keep >= 0.5 else "pilot")
        need_run = need_model if keep >= 0.5 else need_pilot
        uncertain = ""
        if np.isfinite(model) and 0.05 < keep < 0.95 and not replicated:
            other = need_pilot if keep >= 0.5 else need_model
            uncertain = (f"a run keeps the fluid model's interval with probability "
                         f"{keep:.0%} (the pilot's own variance is {rv.variance / model:.3g}"
                         f" of the model's, near the band a run tests): otherwise it "
                         f"needs {math.ceil(other / (1.0 - warm)):.3g} flows")
        elif replicated and np.isfinite(model) and np.isfinite(rv.variance):
            edge = rule.edge(precision, first, budget)
            if edge is not None:
                at, kept, other = edge
                edges[len(rows)] = (at, other)
                uncertain = (f"the rule keeps the fluid model's interval at {at} "
                             f"replications with probability {kept:.0%} (the pilot's own "
                             f"variance is {rule.ratio:.3g} of the model's): the class is "
                             f"within the target at about {at} on it, else "
                             f"{'earlier' if other < at else 'later'}, at about {other}, on "
                             "the runs' own")
        if basis == "model":
            low, high = _model_factor(rv.variance, model, measured, dof, confidence)
            problem = short
        else:
            low, high = variance_factor(dof, confidence)
            problem = rv.problem or short
        units, lugsail = replication_units(cfg.replications)
        kept_configured = (keep if (units, lugsail) == (LUGSAIL_BATCHES, True)
                           else model_kept_probability(rv.variance / model, units, lugsail))
        configured_width = (z * math.sqrt(model / configured)
                            if kept_configured >= 0.5 and np.isfinite(model)
                            else half_width(rv.variance, configured, confidence, units,
                                            lugsail))
        if not loaded[k]:  # no flows at this load: nothing to plan, nothing judged
            problem = uncertain = basis = ""
        else:
            judged[len(rows)] = rule
        rows.append({
            "policy": record["policy"], "load": record["load"], "class": name,
            "pilot_flows": pilot_flows, "pilot_gamma": float(c["gamma"]),
            "sigma_rel": math.sqrt(rv.variance) if np.isfinite(rv.variance) else math.nan,
            "pilot_batches": rv.batches, "pilot_lag1": rv.lag1,
            "pilot_relaxations": span, "factor_low": low, "factor_high": high,
            "pilot_dof": dof, "pilot_problem": problem, "basis": basis,
            "basis_problem": uncertain,
            "model_sigma_rel": math.sqrt(model) if np.isfinite(model) else math.nan,
            "target_precision": precision,
            "flows_needed": (math.ceil(need_run / (1.0 - warm)) if np.isfinite(need_run)
                             else math.nan),
            "replications_needed": reps, "budget_problem": "",
            "half_width_configured": configured_width,
            "services_per_flow": services_per_flow, "services_per_cpu_s": rate,
            "configured_replications": cfg.replications,
            "wall_s_configured": cfg.flows * cfg.replications * seconds_per_flow})
    # the point stops when every judged class is within h at once: neither a class's own
    # stop nor the binding class's need, necessarily, and maybe beyond the budget (reviews)
    point_reps = (rule_replications(list(judged.values()), precision, first) if judged
                  else math.nan)
    point_reps = math.inf if point_reps > RULE_HORIZON else point_reps  # (as a class's)
    needs = [r["replications_needed" if replicated else "flows_needed"] for r in rows]
    binding = int(np.nanargmax(needs)) if np.isfinite(needs).any() else -1
    for k, row in enumerate(rows):
        row["binding"] = k == binding
        row["mode"] = "replications" if replicated else "one run"
        stop, top = min(point_reps, budget), rows[binding] if binding >= 0 else row
        if k in edges and row["basis_problem"] and np.isfinite(stop) and not (
                top is row and row["replications_needed"] == stop >= max(edges[k])):
            named = (f", where class {top['class']} binds" if top is not row and
                     top["replications_needed"] == stop != row["replications_needed"] else "")
            row["basis_problem"] += "; the point stops at " + (
                f"max_replications = {stop}" if stop < point_reps else f"about {stop}{named}") + (
                f", or at about {max(edges[k])} if this class stops there"
                if max(edges[k]) > stop else "")
        if replicated and k in judged and point_reps > budget and \
                judged[k].width(budget) > precision:  # the rule stops at the budget
            alone = row["replications_needed"] > budget  # (else only with the other classes)
            row["budget_problem"] = (
                f"{'needs' if alone else 'the classes together need'} "
                f"{row['replications_needed'] if alone else point_reps} replications, more "
                f"than max_replications = {budget}: stops there at about "
                f"{judged[k].width(budget):.2%}")
        row["wall_s"] = ((stop * cfg.flows if replicated
                          else top["flows_needed"]) * seconds_per_flow)
    return rows


def sweep_wall_time(table: pd.DataFrame, jobs: int = 1, configured: bool = False) -> float:
    """Estimated wall seconds of the sweep of ``table``'s points (:func:`advise`) on
    ``jobs`` otherwise idle cores: the points' CPU seconds (``wall_s``, or
    ``wall_s_configured``) shared over the cores, and never less than the longest single
    run (one run is not split; replications are). Excludes compilation and the fluid
    curves; cores shared with other work make it longer."""
    column = "wall_s_configured" if configured else "wall_s"
    points = table.drop_duplicates(["policy", "load"])
    times = points[column].to_numpy(dtype=np.float64)
    if times.size == 0:
        return 0.0
    longest = float(np.nanmax(times))
    if configured:
        longest /= max(int(points["configured_replications"].iloc[0]), 1)
    elif (points["mode"] == "replications").all():
        longest = 0.0
    return float(max(np.nansum(times) / jobs, longest))
