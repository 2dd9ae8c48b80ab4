"""Allocation lab: the seed papers' worked examples and property tables."""

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.optimize import OptimizeResult

from mrfq.allocation import (
    POLICIES,
    Problem,
    allocate,
    check_all,
    dedicated_weights,
    pareto_optimal,
    sharing_incentive,
    strategy_proofness_probe,
)
from mrfq.cli import main

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"

SLIDES = Problem(capacity=[[9, 18]], demand=[[1, 4], [3, 1]])
ASSET_70 = Problem(capacity=[[70, 70]], demand=[[2, 2], [1, 2]])
THOUSAND = Problem(capacity=[[1000, 1000]], demand=[[2, 3], [5, 1]])
DRFH_FIG1 = Problem(capacity=[[2, 12], [12, 2]], demand=[[0.2, 1], [1, 0.2]])
TSF_TOY = Problem(capacity=[[9, 12], [3, 4], [9, 12]], demand=[[1, 2], [3, 1], [1, 4]],
                  allowed=[[1, 1, 0], [0, 1, 0], [1, 1, 1]])
# one resource (single-resource fairness applies); CPU every user's dominant resource
# (bottleneck fairness applies: asset fairness gives 5.32 and 4.68 CPU, not 5 and 5)
ONE = Problem(capacity=[[10]], demand=[[1], [2], [1]], max_tasks=[2, np.inf, np.inf])
NECK = Problem(capacity=[[10, 100]], demand=[[1, 1], [2, 5]])
# found by a seeded random search, checked by hand: CEEI (max Σ log x) gives u1 4.248
# tasks; when u3 leaves, both resources bind (5 x1 + x2 = 30, x1 + 2 x2 = 30, KKT
# multipliers 0.0583 and 0.0083 ≥ 0), so u1 drops to 10/3: not population monotonic
CEEI_PM = Problem(capacity=[[30, 30]], demand=[[5, 1], [1, 2], [1, 5]])
# found by a seeded random search: DRFH breaks sharing incentive under constraints
DRFH_NO_SI = Problem(capacity=[[4, 8], [9, 3]], demand=[[2, 1], [3, 3]],
                     allowed=[[1, 0], [1, 1]])


def true_tasks(problem, user, declared, policy):
    lied = allocate(problem.with_demand(user, np.array(declared, dtype=float)), policy)
    return problem.tasks_fitting(user, lied.bundles()[user])


# --- DRF slides -----------------------------------------------------------------------


def test_drf_slides_three_and_two_tasks():
    for policy in ("drf", "drf-online"):
        result = allocate(SLIDES, policy)
        assert result.user_tasks == pytest.approx([3, 2])
        assert result.dominant_shares == pytest.approx([2 / 3, 2 / 3])


def test_thousand_cpu_drf_asset_ceei_comparison():
    assert allocate(THOUSAND, "drf").user_tasks == pytest.approx([200, 120])
    asset = allocate(THOUSAND, "asset")
    v = 1000 / (2 / 0.005 + 5 / 0.006)  # equal asset shares, CPU saturated
    assert asset.user_tasks == pytest.approx([v / 0.005, v / 0.006])
    assert allocate(THOUSAND, "ceei").user_tasks == pytest.approx([250, 100], rel=1e-8)


def test_asset_fairness_seventy_cluster():
    assert allocate(ASSET_70, "asset").user_tasks == pytest.approx([15, 20])


def test_ceei_strategy_example_user2_claims_3cpu_2gb():
    truthful = allocate(SLIDES, "ceei").user_tasks
    assert truthful == pytest.approx([45 / 11, 18 / 11])
    assert allocate(SLIDES, "ceei").shares[1, 0] == pytest.approx(6 / 11)  # 55% CPU
    lying = true_tasks(SLIDES, 1, [3, 2], "ceei")
    assert lying == pytest.approx(1.8) and lying > truthful[1]
    assert allocate(SLIDES.with_demand(1, np.array([3.0, 2.0])), "ceei").shares[1, 0] \
        == pytest.approx(0.6)  # 60% CPU


def test_br_pf_misreport_example():
    problem = Problem(capacity=[[1, 1]], demand=[[0.5, 1], [1, 0.5]])
    assert allocate(problem, "pf").user_tasks == pytest.approx([2 / 3, 2 / 3])
    assert true_tasks(problem, 0, [2 / 3, 1], "pf") == pytest.approx(3 / 4)
    assert true_tasks(problem, 0, [1, 1], "pf") == pytest.approx(1 / 2)


# --- DRFH -------------------------------------------------------------------------------


def test_drfh_example():
    assert allocate(DRFH_FIG1, "per-server-drf").user_tasks == pytest.approx([6, 6])
    drfh = allocate(DRFH_FIG1, "drfh")
    assert drfh.user_tasks == pytest.approx([10, 10])
    assert drfh.dominant_shares == pytest.approx([5 / 7, 5 / 7])
    assert drfh.tasks == pytest.approx(np.array([[10, 0], [0, 10]]))
    assert allocate(DRFH_FIG1, "drfh-best-fit").tasks == pytest.approx(
        np.array([[10, 0], [0, 10]]))


def test_drfh_first_fit_by_hand():
    """First-Fit on DRFH Fig. 1, traced by hand. Both users' tasks are 1/14 of the pool
    (dominant), so they alternate, user 1 first on ties. Server 1 (2 CPU, 12 GB) takes
    u1, u2, u1 (0.6 CPU left); then u2's 1-CPU tasks go to server 2 while u1 fills
    server 1 up to 5 tasks (CPU 0); u1's 6th task goes to server 2, leaving (7.8, 0.2);
    u2's 5th task there leaves (6.8, 0) and nothing fits any more."""
    first_fit = allocate(DRFH_FIG1, "drfh-first-fit")
    assert first_fit.feasible()
    assert first_fit.tasks == pytest.approx(np.array([[5, 1], [1, 5]]))
    # the heuristic's known loss against DRFH (10 tasks each): 12 of 20
    assert first_fit.user_tasks.sum() == pytest.approx(12)


# --- TSF ---------------------------------------------------------------------------------


def test_tsf_toy_example():
    result = allocate(TSF_TOY, "tsf")
    assert result.info["tasks_alone"] == pytest.approx([14, 7, 7])
    assert result.info["task_share_levels"] == pytest.approx([3 / 7, 1 / 7, 3 / 7])
    assert result.user_tasks == pytest.approx([6, 1, 3])


# --- IBAA ---------------------------------------------------------------------------------


def test_ibaa_numerical_example_and_misreport():
    # c_d = 200 (HD), c_s = 1000 (SSD); hit ratios 0.75, 0.5, 0.9, 0.95
    h = np.array([0.75, 0.5, 0.9, 0.95])
    problem = Problem(capacity=[[200, 1000]], demand=np.c_[1 - h, h])
    result = allocate(problem, "ibaa")
    info = result.info
    assert info["alpha"] == pytest.approx(0.55, abs=0.01)
    assert info["beta"] == pytest.approx(1.67, abs=0.01)
    assert info["p_d"] == pytest.approx(1.41, abs=0.01)
    assert info["p_s"] == pytest.approx(1.44, abs=0.01)
    assert result.user_tasks == pytest.approx([282.5, 141.3, 398.6, 377.6], abs=0.6)
    # q lies: hit ratio 0.6 instead of 0.5 and gets more (paper: 180 against 141.3)
    lie = np.array([0.4, 0.6])
    lied = allocate(problem.with_demand(1, lie), "ibaa")
    assert lied.info["p_d"] == pytest.approx(1.44, abs=0.01)
    assert lied.info["p_s"] == pytest.approx(1.34, abs=0.01)
    assert lied.user_tasks[1] == pytest.approx(180, abs=1.5)
    assert lied.user_tasks[1] > result.user_tasks[1]


def test_ibaa_caps_and_weights():
    h = np.array([0.75, 0.5, 0.9, 0.95])
    capped = Problem(capacity=[[200, 1000]], demand=np.c_[1 - h, h],
                     max_tasks=[100, np.inf, np.inf, np.inf], weights=[1, 2, 1, 1])
    result = allocate(capped, "ibaa")
    assert result.user_tasks[0] == pytest.approx(100)
    assert result.feasible()


# --- property tables ------------------------------------------------------------------


def _row(problems, policy):
    """Per property: True if it holds on every instance; else the first counter-example."""
    out = {}
    for problem in problems:
        for name, (ok, example) in check_all(problem, POLICIES[policy], probe_trials=20).items():
            if ok is False and name not in out:  # None: unknown or not applicable
                out[name] = example
    return out


def test_drf_slides_property_table(capsys):
    # Property          Asset  CEEI  DRF    (Ghodsi et al., slide 29; DRF paper Table 2)
    # share guar.        ✗      ✔     ✔
    # strategy-proof     ✔      ✗     ✔
    # Pareto eff.        ✔      ✔     ✔
    # envy-free          ✔      ✔     ✔
    # single resource    ✔      ✔     ✔
    # bottleneck fair.   ✗      ✔     ✔
    # population mono.   ✔      ✗     ✔
    expected_failures = {"asset": {"sharing_incentive", "bottleneck_fair"},
                         "ceei": {"strategy_proof", "population_monotonic"}, "drf": set()}
    for policy, failing in expected_failures.items():
        row = _row([SLIDES, ASSET_70, THOUSAND, ONE, NECK, CEEI_PM], policy)
        assert set(row) == failing, (policy, row)
        for name, example in row.items():
            print(f"{policy} violates {name}: {example}")
    assert "violates" in capsys.readouterr().out


def test_tsf_table_1():
    # Property  Per-Machine DRF  DRFH  TSF      (TSF paper, Table 1; CDRF not implemented)
    # SI             ✗            ✗     ✓
    # SP             ✓            ✓     ✓
    # EF             ✓            ✓     ✓
    # PO             ✗            ✓     ✓
    instances = [DRFH_FIG1, TSF_TOY, DRFH_NO_SI]
    per_machine = _row(instances, "per-server-drf")
    drfh = _row(instances, "drfh")
    # TSF's SI benchmark is an equal slice of every machine (TSF §2): DRFH fails it;
    # check_all's is DRFH's own (a dedicated cloud of whole servers, DRFH §IV-D)
    assert set(drfh) == set(), drfh
    halves = np.array([0.5, 0.5])
    assert not sharing_incentive(allocate(DRFH_NO_SI, "drfh"), pools=halves).holds
    assert "pareto_optimal" in per_machine, per_machine
    assert "strategy_proof" not in per_machine and "envy_free" not in per_machine
    # sharing incentive with arbitrary dedicated pools (90% / 10% of every machine):
    # per-machine DRF ignores them; TSF weighted by the pools' task shares keeps them
    pools = np.array([0.9, 0.1])
    ok, example = sharing_incentive(allocate(DRFH_FIG1, "per-server-drf"), pools=pools)
    assert not ok and example["user"] == "u1"
    for problem in instances:
        k = problem.n_users
        pool = np.full(k, 1 / k) if k != 2 else pools
        weighted = replace(problem, weights=dedicated_weights(problem, pool))
        assert sharing_incentive(allocate(weighted, "tsf"), pools=pool)[0]
        assert pareto_optimal(allocate(weighted, "tsf"))[0]
    for problem in instances:
        assert strategy_proofness_probe(problem, POLICIES["tsf"], trials=20)[0]


def test_pareto_checker_finds_improvement():
    ok, example = pareto_optimal(allocate(DRFH_FIG1, "per-server-drf"))
    assert ok is False and example["could_have"] > example["tasks"]
    assert pareto_optimal(allocate(DRFH_FIG1, "drfh")) == (True, None)


def _failing_linprog(*args, **kwargs):
    return OptimizeResult(status=4, success=False, x=None, fun=None,
                          message="Numerical difficulties encountered.")


def test_pareto_unknown_when_its_lp_fails(monkeypatch):
    """A failed LP proves nothing: the verdict is unknown, with the solver's reason,
    never "holds" (the old behaviour) nor "fails"."""
    import mrfq.allocation.properties as properties

    # per-server DRF on DRFH Fig. 1 is *not* Pareto optimal: any answer but None is wrong
    allocation = allocate(DRFH_FIG1, "per-server-drf")
    monkeypatch.setattr(properties, "linprog", _failing_linprog)
    holds, detail = pareto_optimal(allocation)
    assert holds is None
    assert detail == {"reason": "LP failed (status 4): Numerical difficulties encountered."}
    checks = check_all(DRFH_FIG1, POLICIES["per-server-drf"], allocation, probe_trials=1)
    assert checks["pareto_optimal"].holds is None
    assert checks["pareto_optimal"].text == (
        "unknown (LP failed (status 4): Numerical difficulties encountered.)")
    assert checks["envy_free"].text == "yes"  # the others are unaffected


def test_allocate_cli_shows_unknown(monkeypatch, tmp_path):
    import mrfq.allocation.properties as properties

    monkeypatch.setattr(properties, "linprog", _failing_linprog)
    out = tmp_path / "alloc.csv"
    result = CliRunner().invoke(main, ["allocate", str(PROBLEMS / "drfh_two_servers.toml"),
                                       "--policies", "per-server-drf", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert ("  pareto_optimal       unknown (LP failed (status 4): Numerical difficulties "
            "encountered.)") in result.stdout.splitlines()
    table = out.read_text().splitlines()
    column = table[0].split(",").index("pareto_optimal")
    assert [row.split(",")[column] for row in table[1:]] == ["unknown", "unknown"]


def test_check_all_takes_the_rule():
    """check_all runs the rule it is given (the strategy probe re-runs it), no name lookup."""
    calls = []

    def rule(problem):
        calls.append(problem)
        return POLICIES["drf"](problem)

    checks = check_all(SLIDES, rule, probe_trials=2)
    assert list(checks) == ["sharing_incentive", "strategy_proof", "pareto_optimal",
                            "envy_free", "single_resource_fair", "bottleneck_fair",
                            "population_monotonic"]
    # two resources, each some user's dominant one: the last premises do not hold
    assert checks.pop("single_resource_fair").holds is None
    assert checks.pop("bottleneck_fair").holds is None
    assert all(v.holds for v in checks.values())
    assert len(calls) > 2 and any(p.demand.tolist() != SLIDES.demand.tolist()
                                  for p in calls)
    with pytest.raises(TypeError, match="policy function"):
        check_all(SLIDES, "drf")


# --- command line ---------------------------------------------------------------------


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", *args], capture_output=True,
                          text=True)


def test_allocate_cli(tmp_path):
    out = tmp_path / "alloc.csv"
    result = _cli("allocate", str(PROBLEMS / "drfh_two_servers.toml"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "drfh" in result.stdout and "pareto_optimal" in result.stdout
    assert "tasks,dominant_share" in out.read_text().splitlines()[0].replace("policy,user,", "")
