"""The registry's contract (``mrfq.policies``), checked entry by entry: every test is
parametrized over the entries of its kind, so a new policy is checked by adding its entry.

* codes: unique per kind; a packet entry's code is what the packet kernel dispatches on,
  a Markov-law fluid entry's what the fluid allocator kernels dispatch on;
* twins (``tests/naive.py``): a packet entry's kernel run equals the reference simulator;
  a Markov-law fluid entry's solver γ equals the dense Markov twin; an explicit-law entry's
  rule and γ equal the brute-force balance function's; an allocation entry's rule exists
  and allocates the packaged ``drf_slides`` problem (as the fluid rule it realises, if any);
* parameters: a packet rule's results change with the parameters it declares and with no
  other;
* record schema: a tiny point record of every fluid and packet entry makes its summary rows;
* fluid counterpart: ``realises`` and ``compare`` name fluid entries, and the validation of
  a packet entry compares it with the fluid policy it realises (or skips it without one).
"""

import itertools
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import FIG3_CLASSES, make_scenario
from naive import bf_rates, brute_force_phi, dense_stationary, naive_flows, simulate_reference

from mrfq import kinds, policies
from mrfq.allocation import POLICIES as ALLOCATION_RULES
from mrfq.allocation import Allocation, load_problem
from mrfq.allocation import allocate as allocate_problem
from mrfq.errors import InputError
from mrfq.fluid import allocate, fluid_point, kernels, service_rates
from mrfq.fluid.flowsim import simulate_flows
from mrfq.kinds import Point
from mrfq.kinds.packet import packet_point
from mrfq.packet import kernel
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel
from mrfq.scenario import scenario_from_dict
from mrfq.sweeps import summarize
from mrfq.validation import validate_summary

FLUID = policies.entries(policies.FLUID)
PACKET = policies.entries(policies.PACKET)
ALLOCATION = policies.entries(policies.ALLOCATION)
CLUSTER = policies.entries(policies.CLUSTER)
MARKOV = [p for p in FLUID if p.law == policies.MARKOV_LAW]
EXPLICIT = [p for p in FLUID if p.law == policies.EXPLICIT_LAW]
FLUID_NAMES = {p.name for p in FLUID}

# two classes on two resources with different bottlenecks: DRF differs from PF and BMF
TWO = np.array([[0.2, 1.0], [1.0, 0.5]])
TWO_LOADS = np.array([0.45, 0.3])  # resource loads 0.39, 0.6


def _ids(entries):
    return [p.name for p in entries]


# --- codes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", policies.KINDS)
def test_names_codes_and_constants_are_unique_per_kind(kind):
    entries = policies.entries(kind)
    assert entries, kind
    for attribute in ("name", "code", "constant"):
        values = [getattr(p, attribute) for p in entries]
        assert len(set(values)) == len(values), (kind, attribute, values)
    assert vars(policies.codes(kind)) == {p.constant: p.code for p in entries}
    assert set(policies.defaults(kind)) <= set(policies.names(kind))
    for p in entries:
        assert p.kind == kind and p.label and p.summary
        assert policies.get(kind, p.name.upper()) is p  # case-insensitive look-up


@pytest.mark.parametrize("entry", PACKET, ids=_ids(PACKET))
def test_packet_code_is_what_the_kernel_dispatches(entry):
    assert getattr(kernel, entry.constant) == entry.code


@pytest.mark.parametrize("entry", MARKOV, ids=_ids(MARKOV))
def test_markov_fluid_code_is_what_the_allocator_kernels_dispatch(entry):
    assert getattr(kernels, entry.constant) == entry.code
    assert np.all(allocate(entry.name, [[0.5, 1], [1, 0.5]]) > 0)


def test_fluid_entries_have_a_law():
    assert {p.law for p in FLUID} <= {policies.MARKOV_LAW, policies.EXPLICIT_LAW}
    assert len(MARKOV) + len(EXPLICIT) == len(FLUID)
    assert all(p.insensitive for p in EXPLICIT)  # a written-down product form
    assert not any(p.insensitive for p in MARKOV)


def test_an_unknown_name_is_an_input_error():
    with pytest.raises(InputError, match="unknown policy 'wfq'"):
        policies.get(policies.PACKET, "wfq")
    with pytest.raises(InputError, match="did you mean 'drfq'"):
        policies.get(policies.PACKET, "drfqq")


# --- twins -------------------------------------------------------------------------------

def _packet_runs(entry, flows=80, seed=5, **extra):
    """(kernel, reference) completion times of one small weighted Figure 3 run."""
    classes = [{**c, "weight": w} for c, w in zip(FIG3_CLASSES, (1.0, 3.0, 0.7), strict=True)]
    scenario = make_scenario(classes=classes, axis="link", mean_size=10, window=3)
    rho = scenario.class_loads(0.8)
    seed_seq = np.random.SeedSequence(seed)
    fast = run_replication(PacketModel.from_scenario(scenario), entry.name, rho, seed_seq,
                           flows=flows, mean_size=10, window=3, debug=True, **extra)
    slow = simulate_reference(scenario, entry.name, rho, seed_seq, flows=flows,
                              mean_size=10, window=3, **extra)
    return fast.completion, slow


#: a non-default value of every packet parameter, as run_replication's keyword
PARAMETER_VALUES = {policies.DELTA: ("delta", 0.5), policies.FQ_RESOURCE: ("fq_resource", 0),
                    policies.VIRTUAL_TIME: ("virtual_time", "started")}


def _parameter_values(entry):
    """The non-default values of the parameters the rule declares."""
    return dict(PARAMETER_VALUES[name] for name in entry.parameters)


@pytest.mark.parametrize("entry", PACKET, ids=_ids(PACKET))
def test_packet_kernel_matches_the_reference_simulator(entry):
    for extra in ({}, _parameter_values(entry)):
        fast, slow = _packet_runs(entry, **extra)
        assert np.all(np.isfinite(fast))
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("entry", PACKET, ids=_ids(PACKET))
def test_packet_rule_reads_the_parameters_it_declares_and_no_other(entry):
    plain, _ = _packet_runs(entry, flows=150)
    for name, (keyword, value) in PARAMETER_VALUES.items():
        fast, _ = _packet_runs(entry, flows=150, **{keyword: value})
        changed = not np.array_equal(fast, plain)
        assert changed == (name in entry.parameters), (name, changed)


@pytest.mark.parametrize("entry", MARKOV, ids=_ids(MARKOV))
def test_markov_solver_matches_the_dense_twin(entry):
    result = service_rates(entry.name, TWO, TWO_LOADS, tolerance=1e-5)
    states, pi, Q = dense_stationary(entry.name, TWO, TWO_LOADS, result.level)
    assert np.abs(pi @ Q).max() < 1e-12 and len(states) == result.states
    dense_mean = pi @ np.array(states, dtype=float)
    # the solver's γ on its final truncation, then its tail-corrected γ within its estimate
    np.testing.assert_allclose(result.gamma_truncated, TWO_LOADS / dense_mean, rtol=1e-8)
    assert np.all(np.abs(result.gamma / (TWO_LOADS / dense_mean) - 1) < 1e-4)


@pytest.mark.parametrize("entry", EXPLICIT, ids=_ids(EXPLICIT))
def test_explicit_law_matches_the_brute_force_balance_function(entry):
    # the rule, state by state: φ_k(n) = Φ(n − e_k) / (n_k Φ(n))
    rates = bf_rates(TWO)
    for n in itertools.product(range(6), repeat=2):
        if sum(n):
            np.testing.assert_allclose(allocate(entry.name, TWO, n), rates(n), rtol=1e-12)
    # the law π(n) ∝ Φ(n) ρ^n, summed to a level where the tail is below 1e-15
    phi = brute_force_phi(TWO)
    level = 90
    weight = {n: phi(n) * np.prod(TWO_LOADS ** np.array(n))
              for n in itertools.product(range(level + 1), repeat=2) if sum(n) <= level}
    total = sum(weight.values())
    mean = sum(np.array(n) * w for n, w in weight.items()) / total
    result = service_rates(entry.name, TWO, TWO_LOADS, tolerance=1e-8)
    np.testing.assert_allclose(result.gamma, TWO_LOADS / mean, rtol=1e-7)


SLIDES = load_problem("drf_slides")


@pytest.mark.parametrize("entry", ALLOCATION, ids=_ids(ALLOCATION))
def test_allocation_rule_exists_and_allocates_the_slides_problem(entry):
    assert entry.name in ALLOCATION_RULES
    result = allocate_problem(SLIDES, entry.name)
    assert isinstance(result, Allocation)
    assert result.feasible() and np.all(result.user_tasks > 0), result.user_tasks
    if entry.realises is not None:  # the fluid rule on the pool (no task caps here)
        pooled = SLIDES.demand / SLIDES.total
        np.testing.assert_allclose(result.user_tasks, allocate(entry.realises, pooled),
                                   rtol=1e-9)


def test_every_allocation_rule_has_an_entry():
    assert set(ALLOCATION_RULES) == set(policies.names(policies.ALLOCATION))


# --- record schema -------------------------------------------------------------------------

SUMMARY_COLUMNS = {"kind", "policy", "load", "class", "gamma", "ci_low", "ci_high",
                   "mean_in_progress", "flows_measured", "replications"}


def _summary_rows(scenario, record, entry):
    assert {"kind", "policy", "load", "classes"} <= set(record)
    assert (record["kind"], record["policy"], record["load"]) == (entry.kind, entry.name, 0.5)
    assert len(record["classes"]) == len(scenario.classes)
    summary = summarize(scenario, [record])
    assert SUMMARY_COLUMNS <= set(summary.columns)
    assert summary["class"].tolist() == scenario.class_names
    assert (summary["kind"] == entry.kind).all() and (summary["policy"] == entry.name).all()
    assert np.all(np.isfinite(summary["gamma"]) & (summary["gamma"] > 0)), summary["gamma"]
    return summary


def _tiny_scenario(**packet):
    classes = [{"name": "a", "requirements": TWO[0].tolist(), "load_share": 3},
               {"name": "b", "requirements": TWO[1].tolist(), "load_share": 2}]
    return make_scenario(classes=classes, **packet)


@pytest.mark.parametrize("entry", FLUID, ids=_ids(FLUID))
def test_fluid_point_record_makes_its_summary_rows(entry):
    scenario = _tiny_scenario()
    summary = _summary_rows(scenario, fluid_point(scenario, entry.name, 0.5), entry)
    np.testing.assert_array_equal(summary["gamma"], summary["ci_low"])  # an exact method


@pytest.mark.parametrize("entry", PACKET, ids=_ids(PACKET))
def test_packet_point_record_makes_its_summary_rows(entry):
    scenario = _tiny_scenario(flows=400, mean_size=5, window=3)
    record = packet_point(scenario, entry.name, 0.5, 0)
    assert record["replication"] == 0
    summary = _summary_rows(scenario, record, entry)
    measured = [c["flows_measured"] for c in record["classes"]]
    assert summary["flows_measured"].tolist() == measured and sum(measured) > 300


# --- fluid counterparts ----------------------------------------------------------------------

@pytest.mark.parametrize("entry", PACKET + ALLOCATION + CLUSTER, ids=[
    f"{p.kind}-{p.name}" for p in PACKET + ALLOCATION + CLUSTER])
def test_realises_names_a_fluid_entry(entry):
    assert entry.realises is None or entry.realises in FLUID_NAMES
    if entry.kind == policies.PACKET:
        assert policies.fluid_counterpart(entry.name) == entry.realises


@pytest.mark.parametrize("entry", FLUID, ids=_ids(FLUID))
def test_compare_names_fluid_entries(entry):
    assert set(entry.compare) <= FLUID_NAMES - {entry.name}


@pytest.mark.parametrize("entry", PACKET, ids=_ids(PACKET))
def test_validation_compares_a_packet_entry_with_its_fluid_counterpart(entry):
    # every fluid policy at its own γ, so the value compared says which one was taken
    fluid = {p.name: 0.30 + 0.05 * i for i, p in enumerate(FLUID)}
    rows = [{"kind": policies.FLUID, "policy": name, "load": 0.5, "class": "1",
             "gamma": gamma, "ci_low": np.nan, "ci_high": np.nan, "ci_problem": ""}
            for name, gamma in fluid.items()]
    rows.append({"kind": policies.PACKET, "policy": entry.name, "load": 0.5, "class": "1",
                 "gamma": 0.4, "ci_low": 0.2, "ci_high": 0.6, "ci_problem": ""})
    table = validate_summary(pd.DataFrame(rows))
    if entry.realises is None:
        assert table.empty
        return
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["policy"], row["fluid_policy"]) == (entry.name, entry.realises)
    assert row["fluid_gamma"] == fluid[entry.realises]
    assert bool(row["passed"]) and row["verdict"] == "fluid in CI"


# ---------------------------------------------------------------------------------------
# kinds of point: every module of mrfq.kinds has the one face the sweep uses


KIND_FACE = ("NAME", "REALISATION", "REPLICATED", "PRIORITY", "check", "key_parts",
             "compute", "first_replications", "stopping", "max_replications", "prepare",
             "summary_rows", "size_bin_rows")


def _kind_case(name):
    """A tiny scenario and point that the kind ``name`` computes."""
    fluid = {"markov": {"policies": ["drf"]}, "explicit": {"policies": ["bf"]},
             "flowlevel": {"policies": ["drf"], "method": "simulation", "flows": 2000,
                           "replications": 2},
             "packet": {}, "cluster": {}}[name]
    raw = {"resources": ["cpu", "link"], "classes": FIG3_CLASSES,
           "load": {"values": [0.4]}, "fluid": fluid,
           "packet": {"policies": ["bmf"], "flows": 200, "mean_size": 10, "window": 3},
           "cluster": {"policies": ["pf"], "jobs": 400, "mean_tasks": 20,
                       "tasks_per_resource": 5}}
    scenario = scenario_from_dict(raw)
    realisation = {"packet": policies.PACKET, "cluster": policies.CLUSTER}.get(
        name, policies.FLUID)
    policy = {"packet": scenario.packet.policies[0],
              "cluster": scenario.cluster.policies[0]}.get(name, fluid.get("policies",
                                                                             [None])[0])
    return scenario, Point(realisation, policy, 0.4)


@pytest.mark.parametrize("name", list(kinds.KINDS))
def test_every_kind_has_the_face_and_is_chosen_for_its_points(name):
    module = kinds.KINDS[name]
    missing = [attr for attr in KIND_FACE if not hasattr(module, attr)]
    assert not missing, f"mrfq.kinds.{name} lacks {missing}"
    assert module.NAME == name and module.REALISATION in kinds.REALISATIONS
    scenario, point = _kind_case(name)
    assert kinds.kind_of(scenario, point.kind, point.policy, point.load) is module
    record = kinds.compute_point(scenario, point)
    assert kinds.kind_of_record(record) is module
    rows = module.summary_rows(scenario, [record])
    assert [r["class"] for r in rows] == scenario.class_names
    assert all(r["kind"] == point.kind and r["policy"] == point.policy
               and np.isfinite(r["gamma"]) and r["ci_low"] <= r["gamma"] <= r["ci_high"]
               for r in rows)
    # the key follows what determines the point and nothing else
    renamed = replace(scenario, name="other", description="other")
    assert kinds.point_key(renamed, point) == kinds.point_key(scenario, point)
    moved = scenario_from_dict({**scenario.to_dict(), "classes": [
        {**c, "weight": 2.0} if k == 0 else c
        for k, c in enumerate(scenario.to_dict()["classes"])]})
    assert kinds.point_key(moved, point) != kinds.point_key(scenario, point)
    assert module.first_replications(scenario) >= 1
    assert module.stopping(scenario, [record]).replications is not None or module.REPLICATED


@pytest.mark.parametrize("entry", policies.entries(policies.FLUID), ids=lambda e: e.name)
def test_every_fluid_entry_matches_the_flow_level_twin(entry):
    """The flow-level simulator's run of each fluid policy equals the plain-Python twin's
    (tests/naive.py) on one arrival trace: three resources, weights, every class in."""
    requirements = [[1, 1, 0], [0, 1, 1], [1, 0, 1]]
    loads, weights = [0.3, 0.2, 0.25], [1.0, 2.0, 0.5]
    rng = np.random.default_rng(5)
    times = np.cumsum(rng.exponential(1 / sum(loads), 600))
    classes = rng.choice(3, 600, p=np.array(loads) / sum(loads))
    trace = (times, classes, rng.exponential(1.0, 600))
    run = simulate_flows(requirements, loads, entry.name, arrivals=trace, flows=120,
                         weights=weights)
    twin = naive_flows(requirements, entry.name, trace, 120, weights=weights)
    # not bit-identical: the kernel drains class virtual times, the twin every flow's
    # remaining work (roundings ~1e-15 relative)
    np.testing.assert_allclose(run.completion, twin, rtol=1e-9, atol=0)
