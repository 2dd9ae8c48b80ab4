"""Numeric extremes found by a review (seventeenth session): each case either computed
right or refused with one line naming its field, before any work; never NaN, a hang or a
late error that blames another field."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import assert_one_line_error, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from mrfq import workloads
from mrfq.counts import mean_count
from mrfq.errors import InputError
from mrfq.fluid.method import WARMUP, transient_warning
from mrfq.intervals import relaxation_flows
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.sizes import parse_size
from mrfq.table_warnings import interval_warnings

ROOT = Path(__file__).resolve().parent.parent
QUICK = (ROOT / "scenarios" / "quickstart.toml").read_text()


def _cdf(points, **more):
    return parse_size({"distribution": "cdf", "points": points, **more},
                      "classes[0].size")


# --- table laws: sizes near 1e308 or in the subnormals (NaN mean; the flow level hung) --

def test_a_table_moment_does_not_overflow_near_the_largest_float():
    x, f = np.array([1.0, 1.7e308]), np.array([0.5, 1.0])
    mean = workloads.raw_moment(x, f, 1)  # 0.5 · 1 + 0.5 · (1.7e308 + 1) / 2
    assert mean == pytest.approx(0.25 * 1.7e308, rel=1e-12)
    assert math.isinf(workloads.raw_moment(x, f, 2))  # (its true value: beyond a float)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-6, 1e6), min_size=2, max_size=12, unique=True),
       st.integers(-900, 900), st.sampled_from([1, 2, 3]))
def test_a_table_moment_scales_exactly_by_powers_of_two(sizes, exponent, r):
    """E[(2^e X)^r] = 2^(e r) E[X^r]: to the bit for the mean (squares scale exactly, so
    the sizes rescaled to mean 1 stay what they were), within an ulp or two above it
    (x³ and x⁴ take ``pow``: a review found 5 one-ulp differences in 80 000 tables)."""
    x = np.sort(np.array(sizes))
    f = np.linspace(0.1, 1.0, x.size)
    moment = workloads.raw_moment(x, f, r)
    scaled = np.ldexp(x, exponent)
    with np.errstate(over="ignore"):
        expected = float(np.ldexp(moment, exponent * r))
    if not (1e-290 < x[0] * 2.0**exponent and expected < 1e290 and expected > 1e-290):
        return  # (out of the normal floats: the scaling is not exact there)
    if r == 1:
        assert workloads.raw_moment(scaled, f, r) == expected
    else:
        assert workloads.raw_moment(scaled, f, r) == pytest.approx(expected, rel=1e-14)


def test_a_subnormal_table_is_the_same_law_as_its_scaled_copy():
    law = _cdf([[1e-320, 0.5], [1e-310, 1.0]])
    twin = _cdf([[math.ldexp(1e-320, 1070), 0.5], [math.ldexp(1e-310, 1070), 1.0]])
    assert law.mean == pytest.approx(1.0, rel=1e-12)
    assert np.allclose(law.values, twin.values, rtol=1e-3)  # (1e-320 has ~3 digits)


@pytest.mark.parametrize("points, shown", [
    ([[1.0, 0.5], [1.7e308, 1.0]], "2.35e-308..4"),
    ([[1.0, 0.5], [1e120, 1.0]], "4e-120..4"),
])
def test_a_table_spanning_beyond_1e100_around_its_mean_is_refused(points, shown):
    with pytest.raises(InputError, match=f"must lie in \\[1e-100, 1e100\\], got {shown}") as info:
        _cdf(points)
    assert info.value.field == "classes[0].size.points"


def test_an_unscaled_table_beyond_1e100_work_units_is_refused():
    with pytest.raises(InputError, match="rescale = false: work units"):
        _cdf([[1.0, 0.5], [1e101, 1.0]], rescale=False)
    assert _cdf([[1.0, 0.5], [1e99, 1.0]], rescale=False).mean == pytest.approx(2.5e98)


def test_an_empirical_file_of_huge_sizes_rescales_to_mean_one(tmp_path):
    (tmp_path / "s.csv").write_text("size\n1e308\n1e308\n1.5e308\n")
    law = parse_size({"distribution": "empirical", "file": "s.csv"}, "classes[0].size",
                     base_dir=tmp_path)
    assert np.isfinite(law.values).all() and law.mean == pytest.approx(1.0)
    with pytest.raises(InputError, match="rescale = false") as info:
        parse_size({"distribution": "empirical", "file": "s.csv", "rescale": False},
                   "classes[0].size", base_dir=tmp_path)
    assert info.value.field == "classes[0].size.file"


def test_an_empirical_mean_keeps_its_bits():
    sizes = np.random.default_rng(1).lognormal(0.0, 2.0, 1001)
    assert workloads.sample_mean(sizes) == sizes.mean()


def test_the_cli_refuses_a_table_near_the_largest_float(tmp_path):
    text = QUICK.replace('load_share = 1\n', 'load_share = 1\nsize = {distribution = '
                         '"cdf", points = [[1.0, 0.5], [1.7e308, 1.0]]}\n', 1)
    (tmp_path / "s.toml").write_text(text)
    result = run_cli("fluid", "s.toml", "-o", "out.csv", cwd=tmp_path)
    assert_one_line_error(result, "error: s.toml: classes[0].size.points: sizes divided")
    assert not (tmp_path / "out.csv").exists()


# --- round trips: rtt = 1e10 failed after seconds, blaming --load -----------------------

def test_a_round_trip_that_fills_the_engine_is_refused_before_the_run(tmp_path):
    text = QUICK.replace('load_share = 1\n', 'load_share = 1\nrtt = 1e10\n', 1)
    (tmp_path / "s.toml").write_text(text)
    result = run_cli("simulate", "s.toml", "--policy", "bmf", "--load", "0.3", "-o",
                     "out.csv", cwd=tmp_path)
    assert_one_line_error(result, "error: s.toml: classes[0].rtt: 1e+10 keeps at least 3e+08")
    assert not (tmp_path / "out.csv").exists()


def test_the_round_trip_bound_is_littles_law_of_the_window():
    """Class k keeps ≥ λ_k max(E[N]/W − 1, 0) rtt_k flows in progress, λ_k = ρ_k / E[N]
    (a flow of N packets waits ≥ N/W − 1 round trips); refused above the engine's limit,
    accepted below."""
    from mrfq.scenario.limits import check_round_trips

    limit, m, window = 1000, 20.0, 5
    per_rtt = 0.2 / m * (m / window - 1)
    rtt = limit / per_rtt
    check_round_trips([rtt * 0.99, 0.0], [0.2, 0.2], [m, m], window, limit, None)
    with pytest.raises(InputError, match="keeps at least 1.01e\\+03") as info:
        check_round_trips([0.0, rtt * 1.01], [0.2, 0.2], [m, m], window, limit, None)
    assert info.value.field == "classes[1].rtt"
    # flows no longer than a window wait no round trip: m = 1.5 makes 1-packet flows
    # of a deterministic work 1 (the bound with E[N] = m · E[x] refused this run)
    deterministic = mean_count(parse_size({"distribution": "deterministic"}), 1.5)
    assert deterministic == 1.0
    check_round_trips([1e300], [0.2], [deterministic], 1, limit, None)
    check_round_trips([1e300], [0.2], [1.0], 1, limit, None)


def test_a_deterministic_one_packet_class_with_a_huge_rtt_runs(tmp_path):
    text = QUICK.replace('load_share = 1\n', 'load_share = 1\nrtt = 2e7\nsize = '
                         '{distribution = "deterministic"}\n', 1)
    text = text.replace("mean_size = 20", "mean_size = 1.5").replace("window = 5",
                                                                     "window = 1")
    (tmp_path / "s.toml").write_text(text)
    result = run_cli("simulate", "s.toml", "--policy", "bmf", "--load", "0.3", "--flows",
                     "500", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


# --- loads near 1: the flow level measured its start-up transient, with no warning -------

def _quick(load: float):
    raw = {"name": "q", "resources": ["cpu", "link"],
           "classes": [{"name": "web", "requirements": [0.5, 1.0], "load_share": 1},
                       {"name": "crypto", "requirements": [1.0, 0.5], "load_share": 1}],
           "load": {"axis": "max", "values": [load]}, "fluid": {"flows": 10**6}}
    return scenario_from_dict(raw)


def test_a_flow_level_point_inside_its_start_up_transient_is_flagged():
    text = transient_warning(_quick(0.999999999), 0.999999999)
    assert text.startswith("unreliable interval: at load 0.999999999 the start-up cut (2 "
                           "relaxation times of 4e+18 flows) takes more than half")
    assert transient_warning(_quick(0.9), 0.9) == ""


def test_the_transient_warning_starts_where_the_start_up_cut_takes_half_the_run():
    """Each run leaves out max(5%, two relaxation times) from its start (the packet side's
    cut, 2026-11-28); the warning starts where that cut would take more than half of it."""
    scenario = _quick(0.5)
    loads = np.linspace(0.98, 0.999, 40)
    relax = np.array([relaxation_flows(scenario.class_loads(v), scenario.requirements)
                      for v in loads])
    warned = np.array([transient_warning(scenario, v) != "" for v in loads])
    assert warned.any() and not warned.all()
    assert (warned == (2 * relax > 0.5 * scenario.fluid.flows)).all()
    assert not (warned == (relax > WARMUP * scenario.fluid.flows)).all()  # the old rule


@pytest.mark.parametrize("load, flows, replications, warned", [
    (0.9, 20_000, 1, False), (0.97, 20_000, 1, True), (0.99, 200_000, 1, True),
    (0.99, 200_000, 10, False)])
def test_one_run_whose_batches_span_few_relaxation_times_is_flagged(load, flows,
                                                                   replications, warned):
    """With fewer than 10 replications the interval comes from each run's batches, whose
    measured part must span 20 relaxation times: one 20 000-flow run at load 0.97 (2.6
    after the cut) covered 85% and sat +10% high, unwarned by the rule on the cut alone
    (a review); at 0.9 (55) it covers 91–94%. Ten replications need only the cut."""
    raw = {"name": "q", "resources": ["link"], "classes": [
        {"name": "a", "requirements": [1.0], "load_share": 3},
        {"name": "b", "requirements": [1.0], "load_share": 1}],
        "load": {"axis": "max", "values": [load]},
        "fluid": {"flows": flows, "replications": replications}}
    text = transient_warning(scenario_from_dict(raw), load)
    assert bool(text) == warned
    assert not warned or "fewer than 20 relaxation times" in text


def test_the_fluid_command_prints_the_transient_warning(tmp_path):
    text = QUICK.replace("[fluid]\n", "[fluid]\nflows = 20000\nreplications = 2\n")
    (tmp_path / "s.toml").write_text(text)
    result = run_cli("fluid", "s.toml", "-o", "f.csv", "--loads", "0.999999999", "--method",
                     "simulation", "--policies", "drf", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: 2 points (class web, crypto; load 0.999999999): unreliable interval" \
        in result.stderr
    table = pd.read_csv(tmp_path / "f.csv")
    assert table["ci_warning"].str.contains("start-up transient").all()


# --- intervals that cannot be formed: printed with their reason, not a bare NaN ---------

def test_a_missing_interval_is_printed_with_its_reason(tmp_path):
    # (each class has about half the 3 000 flows: fewer than its batches)
    text = QUICK.replace("flows = 3000\n", "flows = 3000\nbatches = 3000\n")
    (tmp_path / "s.toml").write_text(text)
    result = run_cli("simulate", "s.toml", "--policy", "bmf", "--load", "0.3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [x for x in result.stderr.splitlines() if "no 95% interval" in x]
    assert len(lines) == 2 and all("fewer measured flows" in x for x in lines), result.stderr
    # the warm-up's own line is true: 3 flows of relaxation are not half of 3 000
    assert "more than half a replication" not in result.stderr
    assert "cannot be left out: the replication has no batches" in result.stderr


def test_interval_warnings_name_rows_without_an_interval_only():
    table = pd.DataFrame({"class": ["a", "b"], "load": [0.5, 0.5],
                          "ci_low": [np.nan, 0.4], "ci_problem": ["too few", "ignored"]})
    assert interval_warnings(table) == [
        "warning: 1 point (class a; load 0.5) has no 95% interval: too few"]


# --- a precision target is shown as given, not rounded to ±1 ----------------------------

def test_a_precision_target_is_shown_with_its_digits():
    table = pd.DataFrame({"policy": ["bmf"], "load": [0.5], "class": ["a"],
                          "precision_reached": [False], "target_precision": [0.9999999],
                          "achieved_precision": [0.99999995]})
    (line,) = interval_warnings(table)
    assert "precision ±0.9999999 within" in line


def test_the_packaged_scenarios_still_load():
    for path in sorted((ROOT / "mrfq" / "scenarios").glob("*.toml")):
        load_scenario(path)


# --- IBAA with a zero demand: its β bound divided by 0 (a traceback from the probes) -----

def test_ibaa_skips_the_beta_bound_of_a_client_without_the_second_resource(tmp_path):
    """IBAA's β = min h_j f_j w_j / (h_i f_i w_i): with h_i = 0 the pair's inequality
    h_j / h_i ≥ … holds whatever p_D / p_S, so it bounds nothing. On <9, 18> with user 1
    (1, 0) in D and user 2 (0.5, 8) in S: f = (4.5, 1.125), α = 0.125; memory caps
    p_S at 2, the CPU then gives p_D = (9 − 0.5 · 1.125 · 2) / 4.5 = 1.75: tasks 7.875
    and 2.25. The property probes (a lie moves a client between D and S) used to crash."""
    import mrfq

    (tmp_path / "p.toml").write_text(
        'name = "z"\nresources = ["cpu", "mem"]\n[[servers]]\nname = "node"\n'
        'capacity = [9, 18]\n[[users]]\nname = "u1"\ndemand = [1, 0]\n'
        '[[users]]\nname = "u2"\ndemand = [0.5, 8]\n')
    report = mrfq.allocate(tmp_path / "p.toml", ["ibaa"])
    tasks = report.results[0].allocation.user_tasks
    assert tasks == pytest.approx([7.875, 2.25], rel=1e-9)
    result = run_cli("allocate", "p.toml", cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("policy", ["pf", "bmf", "ceei"])
def test_every_user_at_its_cap_gets_its_cap(tmp_path, policy):
    """Once every user is fixed at its cap, nobody is left for the fluid solver: it was
    called with no user and refused the file ('requirements: must be a non-empty K×J
    matrix', a field the file does not have)."""
    import mrfq

    (tmp_path / "p.toml").write_text(
        'name = "c"\nresources = ["cpu", "mem"]\n[[servers]]\nname = "node"\n'
        'capacity = [9, 18]\n[[users]]\nname = "u1"\ndemand = [1, 4]\nmax_tasks = 1\n'
        '[[users]]\nname = "u2"\ndemand = [3, 1]\nmax_tasks = 2\n')
    report = mrfq.allocate(tmp_path / "p.toml", [policy])
    assert report.results[0].allocation.user_tasks == pytest.approx([1.0, 2.0])


def test_whole_task_policies_refuse_more_placements_than_they_can_make(tmp_path):
    """Online DRF and First-/Best-Fit DRFH place one task per Python step (6·10^5 tasks:
    11 s, 9.5 min with the property probes); their loop stopped silently after 10^7
    steps where the share limits allow 10^8 tasks per user. Beyond MAX_PLACEMENTS
    whole tasks (each user alone in the pool: 5·10^5 + 3.3·10^5 here) they are skipped
    with the reason in a default list and refused when named, before any work."""
    import mrfq
    from mrfq.allocation.policies import MAX_PLACEMENTS, placements_bound

    (tmp_path / "p.toml").write_text(
        'name = "f"\nresources = ["cpu", "mem"]\n[[servers]]\nname = "node"\n'
        'capacity = [1, 1]\n[[users]]\nname = "u1"\ndemand = [1e-6, 2e-6]\n'
        '[[users]]\nname = "u2"\ndemand = [3e-6, 1e-6]\n')
    report = mrfq.allocate(tmp_path / "p.toml", properties=False)
    assert placements_bound(report.problem) == 500_000 + 333_333 > MAX_PLACEMENTS
    assert set(report.skipped) == {"drf-online", "drfh-first-fit", "drfh-best-fit"}
    result = run_cli("allocate", "p.toml", "--policies", "drf,drf-online", cwd=tmp_path)
    assert_one_line_error(result, "error: --policies: drf-online places whole tasks "
                          "one at a time, up to 833,333 here (more than 100,000)")
    # ten users sharing one pool of 20 000 tasks: the pool bounds them, not 10 × 20 000
    (tmp_path / "q.toml").write_text(
        'name = "q"\nresources = ["cpu", "mem"]\n[[servers]]\nname = "node"\n'
        'capacity = [20000, 20000]\n' + "".join(
            f'[[users]]\nname = "u{i}"\ndemand = [1, 1]\n' for i in range(10)))
    report = mrfq.allocate(tmp_path / "q.toml", ["drf-online"], properties=False)
    assert placements_bound(report.problem) == 40_000
    assert report.results[0].allocation.user_tasks.sum() == 20_000


def test_a_huge_integer_is_shown_short_in_its_error():
    """``max_parallel = 1e308`` is an integral float: its error printed all 309 digits."""
    from mrfq.fields import count_text

    raw = {"resources": ["cpu", "mem"], "load": {"values": [0.5]},
           "classes": [{"name": "a", "requirements": [1.0, 0.4], "load_share": 1}],
           "cluster": {"policies": ["drf"], "max_parallel": 1e308}}
    with pytest.raises(InputError, match=r"\(tasks at once\), got ~1e308$") as info:
        scenario_from_dict(raw, "s.toml")
    assert info.value.field == "cluster.max_parallel" and len(str(info.value)) < 120
    assert count_text(10**400) == "~1e400" and count_text(1234567) == "1,234,567"
    assert count_text(2.4e300) == "2.4e+300"
