"""Precision-targeted points (``[packet] precision``): the sequential stopping rule, its
determinism whatever the number of workers, resumability, and the run facts it reports."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import make_scenario
from scipy import stats as sps

from mrfq import simulate
from mrfq import stats as S
from mrfq.executor import execute
from mrfq.kinds.replications import first_replications, stopping
from mrfq.scenario import scenario_from_dict
from mrfq.sweeps import POINTS_DIR, Point, compute_point, point_filename, run_sweep

PACKET = ("packet",)


def _by_hand_relative_half_width(y, x):
    """Delta-method ratio interval written out from its textbook formula."""
    n = y.size
    r = y.sum() / x.sum()
    se = np.sqrt(((y - r * x) ** 2).sum() / (n * (n - 1))) / x.mean()
    return sps.t.ppf(0.975, n - 1) * se / r


def test_stopping_rule_is_the_first_n_that_qualifies(rng):
    """Against the rule written out: the smallest n ≥ first whose every class has
    t_{n−1} · se / R ≤ precision — and with iid units of known coefficient of variation,
    that n is close to the textbook (1.96 · cv / precision)² (bounded both ways)."""
    reps, cv, precision = 2000, 0.3, 0.03
    x = rng.uniform(0.5, 1.5, (reps, 2)) * 100.0
    y = x * (2.0 + cv * 2.0 * rng.standard_normal((reps, 2)))  # ratio 2, cv of y/x: 0.3
    n = S.replications_for_precision(y, x, precision, first=10)
    expected = None
    for m in range(10, reps + 1):
        if all(_by_hand_relative_half_width(y[:m, k], x[:m, k]) <= precision
               for k in range(2)):
            expected = m
            break
    assert n == expected
    # n ≈ (z · cv_of_ratio_residuals / precision)²; residual cv here ≈ 0.3 · E[x²]/E[x]²
    textbook = (1.96 * cv * np.sqrt(np.mean(x**2)) / np.mean(x) / precision) ** 2
    assert 0.6 * textbook <= n <= 1.4 * textbook, (n, textbook)
    # `start` only skips n known to fail: same answer
    assert S.replications_for_precision(y, x, precision, first=10, start=n - 3) == n
    # not reachable with fewer rows: None, never a guess
    assert S.replications_for_precision(y[: n - 1], x[: n - 1], precision, first=10) is None
    with pytest.raises(ValueError):
        S.replications_for_precision(y, x, 0.0, first=10)


def test_stopping_rule_ignores_nan_and_flagged_classes(rng):
    y = rng.uniform(1, 2, (50, 2))
    x = np.ones((50, 2))
    y[:, 1] = np.nan
    assert S.replications_for_precision(y, x, 0.5, first=10) is None
    assert np.isnan(S.relative_half_widths(y, x)[1])


def _records(size_sums, sojourn_sums, problems=None):
    """Point records with the fields the stopping rule reads."""
    out = []
    for r, (ys, xs) in enumerate(zip(size_sums, sojourn_sums, strict=True)):
        out.append({"replication": r, "classes": [
            {"size_sum": float(a), "sojourn_sum": float(b),
             "ci_problem": (problems or {}).get(r, "")} for a, b in zip(ys, xs, strict=True)]})
    return out


def test_stopping_budget_gaps_and_flagged_replications(rng):
    packet = make_scenario(precision=0.001, max_replications=40, replications=3).packet
    assert first_replications(packet) == S.MIN_REPLICATIONS_FOR_T  # raised to 10
    y = rng.uniform(90, 110, (60, 3))
    x = np.full((60, 3), 50.0)
    records = _records(y, x)
    assert stopping(packet, records[:9]).replications is None
    assert stopping(packet, records[:9]).wanted == 10
    undecided = stopping(packet, records[:20])
    assert undecided.replications is None and 20 < undecided.wanted <= 40
    # the budget: 40 replications, whatever more are stored
    assert stopping(packet, records).replications == 40
    # only replications 0, 1, 2, … without a gap count
    gap = records[:15] + records[16:]
    assert stopping(packet, gap).replications is None
    # a flagged replication ends the point (its interval is flagged whatever follows)
    flagged = _records(y, x, {12: "warm-up: MSER-5 minimum at its limit"})
    assert stopping(packet, flagged[:30]).replications == 13
    assert stopping(packet, _records(y, x, {3: "x"})[:30]).replications == 10
    # without a target: the scenario's replications
    assert stopping(make_scenario(replications=3).packet, records).replications == 3


def test_simulate_stops_at_the_first_n_and_uses_the_same_streams():
    """The chosen replications are exactly replications 0 … n−1 of a fixed-count run
    (same streams), the target holds at n and fails at n − 1 for some class."""
    scenario = make_scenario(flows=300, mean_size=10, warmup="auto")
    precise = simulate(scenario, "bmf", 0.5, precision=0.06)
    n = int(precise.classes["replications"].iloc[0])
    assert 10 < n < 200
    assert (precise.classes["achieved_precision"] <= 0.06).all()
    assert precise.classes["precision_reached"].all()
    assert (precise.classes["target_precision"] == 0.06).all()
    assert (precise.classes["flows_simulated"] == 300 * n).all()
    fixed = simulate(scenario, "bmf", 0.5, replications=n)
    columns = ["gamma", "ci_low", "ci_high", "flows_measured", "services"]
    pd.testing.assert_frame_equal(precise.classes[columns], fixed.classes[columns],
                                  check_exact=True)
    before = simulate(scenario, "bmf", 0.5, replications=n - 1).classes
    assert ((before["ci_high"] - before["gamma"]) / before["gamma"] > 0.06).any()
    # a budget below what the target needs: stops at the budget, says so
    short = simulate(scenario, "bmf", 0.5, precision=0.06, max_replications=12).classes
    assert (short["replications"] == 12).all() and not short["precision_reached"].any()


def test_a_class_with_load_share_0_neither_stops_the_point_nor_misses_the_target():
    """A class with load share 0 has no flows ("no measured flows" in every replication,
    no interval). It stopped every precision-targeted point at the first 10
    replications, target unmet, whatever the target (a review); the rule now judges the
    loaded classes only, so the point runs until they reach the target and says so."""
    raw = {"name": "idle_class", "resources": ["link"], "classes": [
        {"name": "a", "requirements": [1.0], "load_share": 1},
        {"name": "b", "requirements": [1.0], "load_share": 0}],
        "load": {"axis": "max", "values": [0.5]}, "fluid": {"policies": ["bmf"]},
        "packet": {"policies": ["bmf"], "mean_size": 10, "window": 5, "flows": 300,
                   "seed": 4, "warmup": "auto"}}
    result = simulate(scenario_from_dict(raw), "bmf", 0.5, precision=0.06).classes
    n = int(result["replications"].iloc[0])
    assert 10 < n < 200
    assert result["achieved_precision"].iloc[0] <= 0.06
    assert result["precision_reached"].all() and np.isnan(result["gamma"].iloc[1])
    before = simulate(scenario_from_dict(raw), "bmf", 0.5, replications=n - 1).classes
    assert (before["ci_high"] - before["gamma"]).iloc[0] / before["gamma"].iloc[0] > 0.06


@pytest.mark.parametrize("confidence", [0.8, 0.99])
def test_simulate_applies_the_precision_rule_at_its_confidence(confidence):
    """The rule judges the intervals at ``simulate``'s confidence: the point uses the first
    n replications whose half-widths at that confidence are within the target, and its
    per-flow and per-replication tables hold exactly those n."""
    scenario = make_scenario(flows=300, mean_size=10, warmup="auto")
    result = simulate(scenario, "bmf", 0.5, precision=0.06, confidence=confidence)
    n = int(result.classes["replications"].iloc[0])
    assert result.classes["precision_reached"].all()
    assert (result.classes["achieved_precision"] <= 0.06).all()
    assert sorted(result.replications["replication"].unique()) == list(range(n))
    assert sorted(result.flows["replication"].unique()) == list(range(n))
    before = simulate(scenario, "bmf", 0.5, replications=n - 1, confidence=confidence)
    assert ((before.classes["ci_high"] - before.classes["gamma"])
            / before.classes["gamma"] > 0.06).any()
    at_95 = int(simulate(scenario, "bmf", 0.5, precision=0.06).classes["replications"].iloc[0])
    assert (n < at_95) if confidence < 0.95 else (n > at_95)


def _scenario(tmp_path, precision, loads=(0.3, 0.6)):
    raw = {"name": "precise", "resources": ["cpu", "link"], "classes": [
        {"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
        {"name": "2", "requirements": [1.0, 0.1], "load_share": 1},
        {"name": "3", "requirements": [1.0, 1.0], "load_share": 1}],
        "load": {"axis": "link", "values": list(loads)},
        "fluid": {"policies": ["drf"]},
        "packet": {"policies": ["drfq", "bmf"], "mean_size": 10, "window": 5, "flows": 300,
                   "seed": 4, "precision": precision, "max_replications": 300}}
    return scenario_from_dict(raw)


def _stored(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (directory / POINTS_DIR).glob("*.json")}


def test_precision_sweep_identical_over_jobs_and_resumable(tmp_path):
    scenario = _scenario(tmp_path, 0.08)
    one = run_sweep(scenario, tmp_path / "one", jobs=1, kinds=PACKET)
    two = run_sweep(scenario, tmp_path / "two", jobs=2, kinds=PACKET)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    packet = one[one["kind"] == "packet"]
    assert (packet["achieved_precision"] <= 0.08).all() and packet["precision_reached"].all()
    used = packet.groupby(["policy", "load"])["replications"].first()
    assert (used >= 10).all() and used.max() > used.min()  # load 0.6 needs more
    # the summary is the fixed-count sweep of the same replications
    for (policy, load), n in used.items():
        fixed = simulate(scenario, policy, load, replications=int(n)).classes
        mine = packet[(packet["policy"] == policy) & (packet["load"] == load)]
        np.testing.assert_array_equal(mine["gamma"], fixed["gamma"])
        np.testing.assert_array_equal(mine["ci_high"], fixed["ci_high"])
    # resume: remove the last replications (as if interrupted), run again — what is
    # stored is read, not recomputed, and the answer is the same
    stored = _stored(tmp_path / "one")
    removed = [name for name in stored if name.startswith("packet-bmf-0.6-r")
               and int(name.split("-r")[1].split("-")[0]) >= 12]
    for name in removed:
        os.remove(tmp_path / "one" / POINTS_DIR / name)
    again = run_sweep(scenario, tmp_path / "one", jobs=1, kinds=PACKET)
    pd.testing.assert_frame_equal(one, again, check_exact=True)
    now = _stored(tmp_path / "one")
    assert all(now[name] == mtime for name, mtime in stored.items() if name not in removed)
    assert removed and all(name in now for name in removed)  # recomputed, the same
    # replications computed ahead, past the stopping point, are stored and ignored
    for (policy, load), n in used.items():
        for r in (int(n), int(n) + 1):
            point = Point("packet", policy, load, r)
            path = tmp_path / "one" / POINTS_DIR / point_filename(scenario, point)
            if not path.exists():
                path.write_text(json.dumps(compute_point(scenario, point), default=float))
    ahead = run_sweep(scenario, tmp_path / "one", jobs=1, kinds=PACKET)
    pd.testing.assert_frame_equal(one, ahead, check_exact=True)
    # a coarser target reuses the stored replications: nothing new is computed
    before = _stored(tmp_path / "one")
    coarse = run_sweep(_scenario(tmp_path, 0.1), tmp_path / "one", jobs=1, kinds=PACKET)
    assert _stored(tmp_path / "one") == before
    coarse_used = coarse[coarse["kind"] == "packet"].groupby(["policy", "load"])[
        "replications"].first()
    assert (coarse_used <= used).all()


def test_precision_sweep_after_an_interrupt(tmp_path):
    """Ctrl-C mid-sweep (raised from the progress callback), then resume: the finished
    replications are kept and reused, and the result equals an uninterrupted sweep."""
    scenario = _scenario(tmp_path, 0.08, loads=(0.6,))
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if done >= 25:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(scenario, tmp_path / "cut", jobs=1, progress=interrupt, kinds=PACKET)
    kept = _stored(tmp_path / "cut")
    assert len(kept) >= 24
    resumed = run_sweep(scenario, tmp_path / "cut", jobs=1, kinds=PACKET)
    for name, mtime in kept.items():
        assert _stored(tmp_path / "cut")[name] == mtime
    clean = run_sweep(scenario, tmp_path / "clean", jobs=1, kinds=PACKET)
    pd.testing.assert_frame_equal(resumed, clean, check_exact=True)


def _square_and_more(offset, item):
    return item * item + offset


def test_executor_follow_up_runs_added_items_alike():
    def follow_up(item, result):
        return [item + 10] if item < 30 else []

    for jobs in (1, 2):
        got = dict(execute(_square_and_more, [1, 2], arguments=(5,), jobs=jobs,
                           follow_up=follow_up))
        assert got == {i: i * i + 5 for i in (1, 2, 11, 12, 21, 22, 31, 32)}


def test_precision_is_validated_and_stored():
    for bad in (0, 1.5, -0.1, "x", float("nan")):
        with pytest.raises(Exception, match="precision"):
            make_scenario(precision=bad)
    with pytest.raises(Exception, match="max_replications"):
        make_scenario(precision=0.1, replications=20, max_replications=10)
    with pytest.raises(Exception, match="max_replications"):
        make_scenario(max_replications=0)
    scenario = make_scenario(precision=0.02, max_replications=50)
    rebuilt = scenario_from_dict(json.loads(json.dumps(scenario.to_dict())))
    assert rebuilt.packet == scenario.packet
    assert scenario_from_dict(json.loads(json.dumps(make_scenario().to_dict()))).packet \
        .precision is None


def test_precision_plan_schedules_the_first_replications_at_once(tmp_path):
    from mrfq.point_plan import Plan
    from mrfq.sweeps import sweep_groups

    scenario = _scenario(tmp_path, 0.08, loads=(0.6,))
    plan = Plan(scenario, sweep_groups(scenario, ("packet",)), stored=lambda point: None)
    first = plan.start()
    assert sorted(p.replication for p in first if p.policy == "bmf") == list(range(10))
    assert len(first) == 20


@pytest.mark.parametrize("policy, load", [("bmf", 0.6), ("drfq", 0.6), ("drfq", 0.3)])
def test_the_rules_half_widths_from_sums_are_the_points_tables(tmp_path, policy, load):
    """The precision rule judges the interval the point reports; it reads it from the
    replications' sums (fast_reported_half_widths), the summary from the point's table
    (combine_replications, then the fluid model's variance): the same numbers, with
    and without the model, for every prefix of 10 to 40 replications."""
    from mrfq.kinds.packet import _records_start_up, fluid_reference
    from mrfq.kinds.replications import fast_reported_half_widths, reported_half_widths

    scenario = _scenario(tmp_path, 0.08, loads=(load,))
    records = [compute_point(scenario, Point("packet", policy, load, r)) for r in range(40)]
    start_up = _records_start_up(scenario, records)
    model = fluid_reference(scenario, policy, load)
    assert model is not None
    for n in range(10, 41):
        for fluid in (None, model):
            fast = fast_reported_half_widths(records[:n], 0.95, start_up, fluid)
            slow = reported_half_widths(scenario.class_names, records[:n],
                                        scenario.packet.mean_size, 0.95, start_up, fluid)
            np.testing.assert_allclose(fast, slow, rtol=1e-12, equal_nan=True)
