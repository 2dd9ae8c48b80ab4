"""The fluid point of a scenario: which method computes it, and the point functions.

Two methods give a fluid γ_k (BR §4.1, γ_k = ρ_k / E[n_k] = E[S_k] / E[T_k]):

* ``markov`` — exact up to a reported truncation error: the Markov solver
  (:mod:`mrfq.fluid.markov`) for DRF, PF and BMF, which assumes exponential sizes, and
  balanced fairness's explicit stationary law (:mod:`mrfq.fluid.balanced`), which holds
  for every size law (BF is insensitive);
* ``simulation`` — the flow-level simulator (:mod:`mrfq.fluid.flowsim`): any size law,
  any number of classes and any load below saturation, with a confidence interval.

``auto`` (the default of a scenario's ``[fluid] method``) takes ``markov`` when it is
exact for the point (BF, or every class exponential) and its truncation is predicted to
fit its state budget (:func:`predicted_states` against the Markov solver's,
:func:`predicted_bf_states` against BF's law's), ``simulation`` otherwise — for BF
too. The choice depends only on the scenario, the policy and the load, so a point's key
(:func:`mrfq.kinds.point_key`) is known before it is computed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mrfq import arguments
from mrfq import policies as registry
from mrfq.errors import InputError
from mrfq.fluid import balanced, markov_solver
from mrfq.fluid.flowsim import flow_service_rates
from mrfq.fluid.flowsim_stats import relaxation, too_short
from mrfq.fluid.markov import markov_point
from mrfq.scenario import FLUID_METHODS as METHODS  # noqa: F401 - the names, re-exported
from mrfq.scenario import Scenario
from mrfq.sizes import interval_warning

#: predicted final truncation level = max(MIN_LEVEL, LEVEL_FACTOR · ln(tol) / ln(r)), r
#: the largest resource load. Calibrated on Figures 1-2 (DRF, PF, BMF, loads 0.1-0.9,
#: tolerance 1e-5; README): from load 0.5 on the solver's final level was at most
#: 2.43 ln(tol)/ln(r), below it at most 36 (its first levels are ≥ 16 and grow by ≥ 10);
#: the paper's loads up to 0.9 stay with the solver, 0.95 goes to simulation
LEVEL_FACTOR = 2.6
MIN_LEVEL = 40
#: the flow-level simulator's intervals (the points' ``ci_low``/``ci_high``)
CONFIDENCE = 0.95
#: fraction of each replication's arrivals not measured
WARMUP = 0.05


#: balanced fairness's explicit law (:func:`mrfq.fluid.balanced.bf_service_rates`), the
#: same form with its own constants. Calibrated at tolerance 1e-5 on Figures 1-2, the
#: triangle (3 classes, 3 resources) and a 4-class point, loads 0.1-0.98 (README): its
#: final level was at most 1.99 ln(tol)/ln(r) from load 0.5 on (1.52-1.83 at 0.7-0.98),
#: and 16 below
BF_LEVEL_FACTOR = 2.2
BF_MIN_LEVEL = 16


def _predicted(requirements, class_loads, tolerance: float, factor: float,
               min_level: int) -> int:
    """C(L̂ + K, K) states (K the classes with load) at level
    L̂ = max(min_level, factor · ln(tol) / ln(r)), r the largest resource load."""
    a = np.asarray(requirements, dtype=np.float64)
    rho = np.asarray(class_loads, dtype=np.float64)
    r = max(float((rho @ a).max()), 0.05)
    level = max(min_level, math.ceil(factor * math.log(tolerance) / math.log(r)))
    K = int(np.count_nonzero(rho > 0))
    return math.comb(level + K, K)


def predicted_states(requirements: ArrayLike, class_loads: ArrayLike, tolerance: float) -> int:
    """States the Markov solver is expected to need: C(L̂ + K, K) states at level
    L̂ = max(MIN_LEVEL, LEVEL_FACTOR · ln(tol) / ln(r)), r the largest resource load (the
    level mass decays about like r^l; the constants are calibrated on the paper's
    scenarios)."""
    return _predicted(requirements, class_loads, tolerance, LEVEL_FACTOR, MIN_LEVEL)


def predicted_bf_states(requirements: ArrayLike, class_loads: ArrayLike,
                        tolerance: float) -> int:
    """States balanced fairness's explicit law is expected to visit (its truncation at
    tolerance ``tolerance``): as :func:`predicted_states` with :data:`BF_LEVEL_FACTOR`
    and :data:`BF_MIN_LEVEL`."""
    return _predicted(requirements, class_loads, tolerance, BF_LEVEL_FACTOR, BF_MIN_LEVEL)


def fluid_method(scenario: Scenario, policy: str, load: float) -> str:
    """``"markov"`` or ``"simulation"``: the method of one fluid point (module doc).

    Raises InputError (field ``fluid.method``) when ``markov`` is forced on a policy whose
    Markov model does not hold for the scenario's size laws.
    """
    entry = registry.get(registry.FLUID, policy)
    chosen = scenario.fluid.method
    # the Markov law assumes exponential sizes; an insensitive law holds for every one
    exact = scenario.exponential_sizes or entry.insensitive
    if chosen == "markov":
        if not exact:
            law = next(c for c in scenario.classes if c.size.distribution != "exponential")
            raise InputError(f"the Markov solver of {registry.label(policy)} assumes "
                             f"exponential sizes, but class '{law.name}' has "
                             f"{law.size.distribution} sizes (use 'simulation' or 'auto')",
                             "fluid.method", scenario.source)
        return "markov"
    if chosen == "simulation" or not exact:
        return "simulation"
    rho = scenario.class_loads(load)
    if entry.law == registry.EXPLICIT_LAW:
        # an explicit law: no linear solve, and its own (larger) budget (read at the call)
        states = predicted_bf_states(scenario.requirements, rho, scenario.fluid.tolerance)
        return "markov" if states <= balanced.MAX_STATES else "simulation"
    states = predicted_states(scenario.requirements, rho, scenario.fluid.tolerance)
    # (the level grows from its start: half the budget leaves it room)
    level = markov_solver.initial_level(rho @ scenario.requirements, scenario.fluid.tolerance)
    return ("markov" if states <= markov_solver.MAX_STATES
            and level <= markov_solver.MAX_LEVEL // 2 else "simulation")


def flow_point(scenario: Scenario, policy: str, load: float) -> dict:
    """The flow-level fluid point function: γ_k of one policy at one load by the
    flow-level simulator (``[fluid]`` flows, replications, seed; warm-up
    :data:`WARMUP`; intervals at :data:`CONFIDENCE`), as a record like
    :func:`mrfq.fluid.markov.markov_point`'s with ``method`` "simulation", per class
    ``ci_low``, ``ci_high`` and, as ``error_estimate``, the interval's relative
    half-width.

    γ_k is the ratio estimator Σ S / Σ T over the measured flows (the packet side's
    primary estimator, Σ N / Σ T), not E[S_k] / mean T: with heavy tails a run's sample
    mean of S is typically below E[S], and E[S] / mean T then overestimates γ (J = 1,
    Pareto 1.5, load 0.1, 10 × 10^5 flows: 0.9159 [0.9059, 0.9261] against 1 − ρ = 0.9;
    the ratio estimator 0.9014 [0.9000, 0.9029])."""
    cfg = scenario.fluid
    started = time.perf_counter()
    try:
        result = flow_service_rates(scenario.requirements, scenario.class_loads(load), policy,
                                    scenario.size_laws, flows=cfg.flows, warmup=WARMUP,
                                    replications=cfg.replications, seed=cfg.seed,
                                    weights=scenario.weights, confidence=CONFIDENCE,
                                    warn=False)  # (said in the point's ci_warning)
    except InputError as exc:  # (e.g. balanced fairness's box: the file's [fluid] flows)
        exc.field = {"flows": "fluid.flows", "policy": "fluid.policies"}.get(exc.field,
                                                                             exc.field)
        raise exc.located(scenario.source) from None
    classes = []
    for k in range(len(scenario.classes)):
        gamma, low, high = (float(x[k]) for x in (result.ratio, result.ratio_low,
                                                  result.ratio_high))
        classes.append({"gamma": gamma, "ci_low": low, "ci_high": high,
                        "mean_in_progress": float(result.mean_in_progress[k]),
                        "error_estimate": (high - low) / 2 / gamma if gamma > 0 else np.nan,
                        "flows_measured": int(result.flows_measured[k])})
    return {"kind": registry.FLUID, "policy": policy, "load": float(load), "replication": 0,
            "method": "simulation", "classes": classes, "ci_method": result.ci_method,
            "replications": int(result.replications), "events": int(result.events),
            "wall_s": time.perf_counter() - started}


def fluid_point(scenario: Scenario, policy: str, load: float) -> dict:
    """The fluid point function of sweeps: :func:`mrfq.fluid.markov.markov_point` or
    :func:`flow_point`, as :func:`fluid_method` chooses."""
    if fluid_method(scenario, policy, load) == "markov":
        return markov_point(scenario, policy, load)
    return flow_point(scenario, policy, load)


def record_method(record: dict) -> str:
    """The method of a stored fluid record (records from before the choice: markov)."""
    return record.get("method", "markov")


def class_interval(record: dict, k: int) -> tuple[float, float]:
    """(ci_low, ci_high) of class k in a fluid record: γ itself for an exact method."""
    c = record["classes"][k]
    return c.get("ci_low", c["gamma"]), c.get("ci_high", c["gamma"])


def class_warnings(scenario: Scenario, load: float, laws: list | None = None,
                   label: str = "", unit: str = "flows",
                   quantity: str = "sizes") -> list[str]:
    """Per class (scenario order), what a simulated interval of γ_k at ``load`` (a value
    on the scenario's load axis; the warning reads the most loaded resource's load) must
    say: :func:`mrfq.sizes.interval_warning` of the most severe size law among the
    classes (infinite variance before infinite third moment), naming the classes that
    have it, for *every* class of the point, or "" for all. Every class, because the
    classes beside a heavy-tailed one share its congestion: with processor sharing, an
    exponential class beside a Pareto 1.8 one at load 0.9 covered 82% as the Pareto
    class did (VALIDATION.md "Heavy tails"). ``laws``: per class, instead of the flow-size
    laws (a cluster's task laws), named with ``label`` after the classes; ``unit``: what
    the laws' draws make (flows, or a cluster's jobs); ``quantity``: what the laws
    draw (flow sizes, a cluster's tasks per job or task durations)."""
    peak = float(np.max(scenario.resource_loads(load)))
    laws = scenario.size_laws if laws is None else laws
    found = [interval_warning(law, peak, unit=unit, quantity=quantity) for law in laws]
    for severe in ("infinite variance", "infinite third moment"):
        owners = [k for k, text in enumerate(found) if severe in text]
        if owners:
            names = ", ".join(scenario.class_names[k] for k in owners)
            names += f" ({label})" if label else ""
            return [interval_warning(laws[owners[0]], peak, names, unit,
                                     quantity)] * len(laws)
    return [""] * len(laws)


def transient_warning(scenario: Scenario, load: float) -> str:
    """What a flow-level interval of γ at ``load`` must say when the ``[fluid]`` runs are
    too short for it (:func:`mrfq.fluid.flowsim_stats.too_short`), "" otherwise: every
    replication starts empty and is measured inside or just after its start-up
    transient, where sojourns are short, so γ comes out high and the interval, from
    runs biased alike, misses it (quickstart, DRF, load 1 − 10⁻⁹, 10⁶ flows, before the
    cut: γ 3.8·10⁻⁴ [3.5·10⁻⁴, 4.2·10⁻⁴] where the stationary γ is of order 10⁻⁹)."""
    rho = scenario.class_loads(load)
    relaxation_time = relaxation(scenario.requirements, rho,
                                 [law.mean for law in scenario.size_laws])
    why = too_short(scenario.fluid.flows, scenario.fluid.replications, relaxation_time,
                    WARMUP)
    if not why:
        return ""
    return (f"unreliable interval: at load {load:.12g} {why}: the runs are measured in "
            "their start-up transient, so gamma comes out high and the interval does not "
            "hold; more [fluid] flows (or 10 replications), or a lower load")


def simulated_warnings(scenario: Scenario, load: float) -> list[str]:
    """Per class, the ``ci_warning`` of a flow-level point at ``load``: the size laws'
    (:func:`class_warnings`) first, else the start-up transient's
    (:func:`transient_warning`)."""
    transient = transient_warning(scenario, load)
    return [warning or transient for warning in class_warnings(scenario, load)]


def fluid_table(scenario: Scenario, records: list[dict]) -> pd.DataFrame:
    """Tidy table of fluid point records: policy, load, class, rho, gamma, method,
    ci_low, ci_high (= gamma for the exact method), ci_warning (every class of a
    simulated point at which some class's size law makes the intervals unreliable:
    :func:`class_warnings`; "" otherwise),
    mean_in_progress, error_estimate (relative: truncation error, or the interval's
    half-width), level, states (Markov truncation; NaN for simulation)."""
    rows = []
    for record in records:
        rho = scenario.class_loads(record["load"])
        method = record_method(record)
        warnings = simulated_warnings(scenario, record["load"])
        for k, name in enumerate(scenario.class_names):
            c = record["classes"][k]
            low, high = class_interval(record, k)
            rows.append({"policy": record["policy"], "load": record["load"], "class": name,
                         "rho": float(rho[k]), "gamma": c["gamma"],
                         "method": method, "ci_low": low, "ci_high": high,
                         "ci_warning": warnings[k] if method == "simulation" else "",
                         "mean_in_progress": c["mean_in_progress"],
                         "error_estimate": c["error_estimate"],
                         "level": record.get("level", np.nan),
                         "states": record.get("states", np.nan)})
    return pd.DataFrame(rows)


def fluid_curves(scenario: Scenario, policies: list[str] | None = None,
                 loads: list[float] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Fluid γ_k for every (policy, load) of a scenario, computed here one point after
    the other with the method :func:`fluid_method` chooses, as a tidy table
    (:func:`fluid_table`). For parallel, cached and resumable curves use
    :func:`mrfq.sweep` (``mrfq fluid``); the numbers are the same.
    ``progress(done, total)`` is called after each point.
    """
    loads = list(arguments.numbers(loads, "loads") or scenario.load_values)
    for load in loads:
        scenario.check_load(load)
    chosen = [registry.get(registry.FLUID, p).name
              for p in (policies or scenario.fluid.policies)]
    records = []
    total = len(chosen) * len(loads)
    for policy in chosen:
        for load in loads:
            records.append(fluid_point(scenario, policy, load))
            if progress:
                progress(len(records), total)
    return fluid_table(scenario, records)
