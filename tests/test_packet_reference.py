"""The Numba kernel against the pure-Python reference: identical completion times."""

import numpy as np
import pytest
from conftest import FIG3_CLASSES, make_scenario
from hypothesis import example, given, settings
from hypothesis import strategies as st
from naive import reference_histogram, simulate_reference

from mrfq.packet import engine, kernel
from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel

POLICIES = ["drfq", "drfq-dovetail", "pf", "bmf", "fifo", "bottleneck-fq", "mr3"]

CASES = {
    "fig3-0.5": dict(classes=FIG3_CLASSES, axis="link", load=0.5),
    "fig3-0.8": dict(classes=FIG3_CLASSES, axis="link", load=0.8),
    "fig3-0.95": dict(classes=FIG3_CLASSES, axis="link", load=0.95),
    "window-1": dict(classes=FIG3_CLASSES, axis="link", load=0.7, window=1),
    "size-1": dict(classes=FIG3_CLASSES, axis="link", load=0.7, mean_size=1),
    "single-resource": dict(
        classes=[{"name": "a", "requirements": [1.0], "load_share": 1},
                 {"name": "b", "requirements": [0.5], "load_share": 2}],
        resources=("cpu",), load=0.8),
    "orthogonal": dict(
        classes=[{"name": "a", "requirements": [1, 0], "load_share": 2},
                 {"name": "b", "requirements": [0, 1], "load_share": 1}], load=0.7),
    "three-resources-zeros": dict(
        classes=[{"name": "a", "requirements": [1, 0, 0.5], "load_share": 1},
                 {"name": "b", "requirements": [0, 1, 1], "load_share": 1},
                 {"name": "c", "requirements": [0.3, 0.2, 0], "load_share": 1}],
        resources=("r1", "r2", "r3"), load=0.8),
    "packet-mix": dict(
        classes=[{"name": "mix", "load_share": 1, "packets": [
                     {"requirements": [1, 0.2], "probability": 0.3},
                     {"requirements": [0.1, 1], "probability": 0.5},
                     {"requirements": [0, 0.6], "probability": 0.2}]},
                 {"name": "cyc", "load_share": 1, "packet_order": "cycle", "packets": [
                     {"requirements": [1, 2]}, {"requirements": [2, 1]}]},
                 {"name": "plain", "requirements": [1, 1], "load_share": 1}], load=0.8),
    "rtt": dict(
        classes=[{"name": "1", "requirements": [0.1, 1.0], "load_share": 4, "rtt": 3.0},
                 {"name": "2", "requirements": [1.0, 0.1], "load_share": 1, "rtt": 0.5},
                 {"name": "3", "requirements": [1.0, 1.0], "load_share": 1}],
        axis="link", load=0.8),
    # weights that are not powers of two: every s / w is rounded, alike in both
    "weighted": dict(
        classes=[{**c, "weight": w} for c, w in zip(FIG3_CLASSES, (1.0, 3.0, 0.7),
                                                     strict=True)],
        axis="link", load=0.8),
    "weighted-mix": dict(
        classes=[{"name": "mix", "load_share": 1, "weight": 2.5, "packets": [
                     {"requirements": [1, 0.2], "probability": 0.3},
                     {"requirements": [0.1, 1], "probability": 0.5},
                     {"requirements": [0, 0.6], "probability": 0.2}]},
                 {"name": "cyc", "load_share": 1, "packet_order": "cycle", "weight": 0.3,
                  "packets": [{"requirements": [1, 2]}, {"requirements": [2, 0]},
                              {"requirements": [0.5, 1]}]},
                 {"name": "plain", "requirements": [1, 1], "load_share": 1}], load=0.8),
    # non-geometric sizes: Pareto 1.5 packets, deterministic (= m), lognormal
    "size-laws": dict(
        classes=[{**FIG3_CLASSES[0], "size": {"distribution": "pareto", "shape": 1.5}},
                 {**FIG3_CLASSES[1], "size": {"distribution": "deterministic"}},
                 {**FIG3_CLASSES[2], "size": {"distribution": "lognormal", "sigma": 1.5}}],
        axis="link", load=0.8),
}


def _both(case, policy, seed=3, flows=150, delta=np.inf, **extra):
    spec = dict(case)
    load = spec.pop("load")
    packet = {k: spec.pop(k) for k in ("window", "mean_size") if k in spec}
    scenario = make_scenario(**spec, **packet)
    cfg = scenario.packet
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(load)
    seed_seq = np.random.SeedSequence(seed)
    fast = run_replication(model, policy, rho, seed_seq, flows=flows, mean_size=cfg.mean_size,
                           window=cfg.window, delta=delta, debug=True,
                           size_laws=scenario.size_laws, **extra)
    record = {}
    slow = simulate_reference(scenario, policy, rho, seed_seq, flows=flows,
                              mean_size=cfg.mean_size, window=cfg.window, delta=delta,
                              record=record, **extra)
    # the production loop (with its lone-flow loop) must give the same times as well
    production = run_replication(model, policy, rho, seed_seq, flows=flows,
                                 mean_size=cfg.mean_size, window=cfg.window, delta=delta,
                                 debug=False, size_laws=scenario.size_laws, **extra)
    np.testing.assert_array_equal(production.completion, fast.completion)
    # per-packet sojourn histograms and work, from both loops, against the reference's
    # own packets
    hist, sums = kernel_histogram(record["sojourns"], flows, len(scenario.classes))
    for run in (fast, production):
        np.testing.assert_array_equal(run.sojourn_hist, hist)
        np.testing.assert_allclose(run.sojourn_sum, sums, rtol=1e-12, atol=1e-9)
        # busy time: the kernel's t − Σ idle periods against the reference's Σ services
        # started − the rest of the one in service (rounding: ~1e-16 · t per idle period;
        # 1.2e-12 relative seen)
        np.testing.assert_allclose(run.work, record["work"], rtol=1e-10)
    return fast, slow


def kernel_histogram(sojourns, flows, K):
    """:func:`naive.reference_histogram` with the geometry the kernel states."""
    return reference_histogram(sojourns, flows, K, kernel.SOJOURN_BUCKETS, kernel.SOJOURN_SUB,
                               kernel.SOJOURN_EMIN, kernel.SOJOURN_BINS)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(CASES))
def test_kernel_matches_reference_exactly(name, policy):
    fast, slow = _both(CASES[name], policy)
    assert np.all(np.isfinite(fast.completion))
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("case", ["packet-mix", "weighted-mix"])
@pytest.mark.parametrize("delta", [0.0, 0.5, 3.0])
def test_dovetail_delta_matches_reference(delta, case):
    fast, slow = _both(CASES[case], "drfq-dovetail", delta=delta)
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("name", ["fig3-0.8", "three-resources-zeros", "packet-mix",
                                  "weighted-mix", "rtt"])
@pytest.mark.parametrize("extra", [dict(policy="bottleneck-fq", fq_resource=0),
                                   dict(policy="mr3", inflight=1),
                                   dict(policy="mr3", inflight=3),
                                   dict(policy="mr3", inflight=50)],
                         ids=["bfq-first", "mr3-L1", "mr3-L3", "mr3-L50"])
def test_baseline_parameters_match_reference(name, extra):
    """Bottleneck FQ on another resource than the link, and MR3 with other ingress bounds
    (1: one packet in the tandem at a time; 50: more than every window)."""
    extra = dict(extra)
    fast, slow = _both(CASES[name], extra.pop("policy"), **extra)
    np.testing.assert_array_equal(fast.completion, slow)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), policy=st.sampled_from(POLICIES),
       load=st.floats(0.2, 0.95), window=st.integers(1, 6),
       weights=st.lists(st.sampled_from([1.0, 2.0, 0.3, 3.7]), min_size=3, max_size=3))
def test_kernel_matches_reference_random(seed, policy, load, window, weights):
    classes = [{**c, "weight": w} for c, w in zip(FIG3_CLASSES, weights, strict=True)]
    case = dict(classes=classes, axis="link", load=load, window=window)
    fast, slow = _both(case, policy, seed=seed, flows=60)
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", ["fig3-0.95", "three-resources-zeros", "packet-mix", "rtt"])
def test_production_loop_matches_the_checked_debug_loop(name, policy):
    """Each policy has its own compiled loop without the checks; the debug loop is the one
    compared with the reference above. Both must give the same completion times."""
    spec = dict(CASES[name])
    load = spec.pop("load")
    scenario = make_scenario(**spec)
    model = PacketModel.from_scenario(scenario)
    runs = [run_replication(model, policy, scenario.class_loads(load),
                            np.random.SeedSequence(11), flows=300,
                            mean_size=scenario.packet.mean_size,
                            window=scenario.packet.window, debug=debug)
            for debug in (True, False)]
    np.testing.assert_array_equal(runs[0].completion, runs[1].completion)
    assert runs[0].services == runs[1].services


def test_every_compiled_loop_has_a_cache_index_of_its_own():
    """The loops are closures of one factory (kernel._make_event_loop); Numba's disk cache
    names an index by the function's name and line, so loops sharing a name would share
    an index file, and parallel first compilations could overwrite each other's entries
    and replay the wrong loop. Each loop must carry its own name."""
    loops = [value for name, value in vars(kernel).items()
             if name.startswith("_loop_") and hasattr(value, "py_func")]
    assert len(loops) >= 15  # 9 tandem, 1 general, 5 network
    # the index file's name as Numba's cache will write it (fixed when njit ran)
    indexes = [loop._cache._cache_file._index_name for loop in loops]
    assert len(set(indexes)) == len(indexes), indexes
    assert all(loop.py_func.__closure__ for loop in loops)  # the flags are constants
    with pytest.raises(RuntimeError, match="share a cache index"):
        kernel._make_event_loop(kernel.BMF, False, False, 0, 0)  # _loop_bmf again


STATE_NAMES = ("istate", "fstate", "free_slots", "flow_i", "flow_f", "res_i", "res_f",
               "heap_key", "heap_id")
assert kernel.State._fields[:len(STATE_NAMES)] == STATE_NAMES


def _assert_same_final_state(run, vglobal_is_a_bound=False):
    """``run(lone_flow)`` with and without the lone-flow loop: the kernel's whole final
    state must be the same (heaps compared over their live entries; the loop does not
    copy stale roots), not only the completion times. Returns both runs.

    ``vglobal_is_a_bound``: memoryless DRFQ with the in-service clock keeps in F_VGLOBAL
    only an upper bound of V, lowered to the exact V when an injection needs the scan
    (``kernel._virtual_time``); the lone-flow loop never needs it (its flow's own tags are
    V), so the two loops may leave different bounds, both at least the true V. Found by
    hypothesis: two flows of weights 1 and 2, window 1, left 2.0 and 1.5."""
    captured, results = [], []
    real = kernel.run_kernel

    def capture(*args, **kwargs):
        captured.append(args[5])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "run_kernel", capture)
        for lone in (True, False):
            results.append(run(lone))
    states = (captured[0]._asdict(), captured[-1]._asdict())
    for name in STATE_NAMES[:7]:
        first, second = states[0][name], states[1][name]
        if name == "fstate" and vglobal_is_a_bound:
            first, second = np.delete(first, kernel.F_VGLOBAL), np.delete(second,
                                                                         kernel.F_VGLOBAL)
        np.testing.assert_array_equal(first, second, err_msg=name)
    res_i = states[0]["res_i"]
    J = res_i.shape[0] // 4
    for j in range(J):
        live = np.arange(res_i[3 * J + j]) * J + j
        for name in ("heap_key", "heap_id"):
            np.testing.assert_array_equal(states[0][name][live], states[1][name][live])
    np.testing.assert_array_equal(results[0].completion, results[1].completion)
    assert (results[0].services, results[0].events) == (results[1].services, results[1].events)
    return results


def _lone_flow_runs(scenario, policy, arrivals, window):
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.5)
    return _assert_same_final_state(lambda lone: run_replication(
        model, policy, rho, np.random.SeedSequence(2), flows=len(arrivals[0]), mean_size=10.0,
        window=window, debug=False, lone_flow=lone, arrivals=arrivals),
        vglobal_is_a_bound=policy == "drfq")


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("load", [0.3, 0.7, 0.95])
def test_lone_flow_loop_leaves_the_same_state(policy, load, weighted):
    classes = CASES["weighted"]["classes"] if weighted else FIG3_CLASSES
    scenario = make_scenario(classes=classes, axis="link")
    model = PacketModel.from_scenario(scenario)
    _assert_same_final_state(lambda lone: run_replication(
        model, policy, scenario.class_loads(load), np.random.SeedSequence(4), flows=300,
        mean_size=20, window=5, debug=False, lone_flow=lone),
        vglobal_is_a_bound=policy == "drfq")


@settings(max_examples=60, deadline=None)
@given(policy=st.sampled_from(POLICIES), window=st.integers(1, 6),
       requirements=st.lists(st.tuples(
           st.sampled_from([[0.5, 1.0], [1.0, 0.5], [1.0, 1.0], [0.0, 1.0], [1.0, 0.25]]),
           st.sampled_from([1.0, 2.0, 0.5, 3.0])), min_size=1, max_size=3),
       flows=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 2), st.integers(1, 30)),
                      min_size=1, max_size=12))
@example(policy="drfq", window=1, requirements=[([0.5, 1.0], 1.0), ([0.5, 1.0], 2.0)],
         flows=[(0, 0, 3), (0, 1, 4)])  # the loops leave different V bounds (2.0, 1.5)
def test_lone_flow_loop_changes_nothing(policy, window, requirements, flows):
    """Integer arrival times and dyadic service times: completions often fall exactly on
    an arrival, so the lone-flow loop's hand-over at equal times is exercised (weights
    1, 2, ½ keep the times dyadic; 3 does not)."""
    classes = [{"name": str(k), "requirements": r, "load_share": 1, "weight": w}
               for k, (r, w) in enumerate(requirements)]
    scenario = make_scenario(classes=classes)
    arrivals = ([float(t) for t, _, _ in flows], [c % len(classes) for _, c, _ in flows],
                [n for _, _, n in flows])
    _lone_flow_runs(scenario, policy, arrivals, window)


def test_lone_flow_loop_hands_over_at_an_arrival_that_ties_with_a_completion():
    """Flow 0 alone (sizes in whole packets, service times 0.5 and 1): its completions
    fall on whole times, where the other flows arrive."""
    scenario = make_scenario(classes=[{"name": "a", "requirements": [0.5, 1.0],
                                       "load_share": 1}])
    arrivals = ([0.0, 3.0, 3.0, 7.5], [0, 0, 0, 0], [6, 2, 3, 1])
    for policy in POLICIES:
        lone, _ = _lone_flow_runs(scenario, policy, arrivals, 2)
        assert np.all(np.isfinite(lone.completion))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("load", [0.3, 0.9])
def test_results_do_not_depend_on_where_the_kernel_stops(policy, load):
    """The kernel returns to Python every CHUNK_EVENTS events, often in the middle of a
    lone-flow period; resuming from the written-back state must give the same run."""
    scenario = make_scenario(classes=FIG3_CLASSES, axis="link")
    model = PacketModel.from_scenario(scenario)

    def run(lone_flow):
        return run_replication(model, policy, scenario.class_loads(load),
                               np.random.SeedSequence(8), flows=200, mean_size=20, window=5,
                               debug=False, lone_flow=lone_flow)

    whole = run(True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "CHUNK_EVENTS", 7)
        pieces = [run(True), run(False)]
    for other in pieces:
        np.testing.assert_array_equal(other.completion, whole.completion)
        assert (other.services, other.events) == (whole.services, whole.events)


def test_lone_flow_drfq_injection_takes_the_virtual_time_when_the_flow_lags():
    """Memoryless DRFQ: S = max(V, F) at injection. A lone flow's F is usually at V (V is
    the largest tag started, and only its own packets start), but it can inherit a lag.
    X (CPU-bound, (1, 0.1)) runs beside Y (link only, weight 0.01: +100 per packet tag).
    When Y's last packet starts at the link, V jumps ~100 above X's F, and while it holds
    the link for one time unit none of X's packets can leave, so X injects nothing (the
    general loop would reset it to V). Y leaves; X is alone, and its lone-flow injections
    are lifted to V by max(V, ·). At t = 400, Z (X's class) arrives with S = V: X's ≤ W
    packets injected alone have tags at V, level with Z's. Without the max they would be
    ~100 below and go first at the CPU (until X's next injection, in the general loop,
    resets X to V): Z finishes 3.0 later. So the max changes the outcome for the next flow,
    and, beyond it, the kernel state (X's F and packet keys, V)."""
    classes = [{"name": "x", "requirements": [1.0, 0.1], "load_share": 1},
               {"name": "y", "requirements": [0.0, 1.0], "load_share": 1, "weight": 0.01}]
    scenario = make_scenario(classes=classes)
    arrivals = ([0.0, 0.0, 400.0], [1, 0, 0], [300, 3000, 500])
    lone, general = _lone_flow_runs(scenario, "drfq", arrivals, 4)
    y_done, x_done, z_done = general.completion
    assert y_done < 400.0 < z_done < x_done  # X alone in (y_done, 400)
    # X and Z share the CPU from t = 400: Z's 500 packets take about 1000
    assert z_done - 400.0 == pytest.approx(1000.0, rel=0.01)


@pytest.mark.parametrize("policy", ["drfq", "drfq-dovetail"])
@pytest.mark.parametrize("name", list(CASES))
def test_started_virtual_time_matches_reference(name, policy):
    """BR's reading of DRFQ's virtual time (V = the largest tag ever started), kept as the
    ``virtual_time = "started"`` option: the kernel and the reference implement it
    independently of the in-service rule (the default, tested above)."""
    fast, slow = _both(CASES[name], policy, virtual_time="started")
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("virtual_time", ["in-service", "started"])
@pytest.mark.parametrize("case", ["packet-mix", "weighted-mix"])
@pytest.mark.parametrize("delta", [0.0, 0.5, 3.0])
def test_dovetail_delta_matches_reference_under_either_clock(delta, case, virtual_time):
    fast, slow = _both(CASES[case], "drfq-dovetail", delta=delta, virtual_time=virtual_time)
    np.testing.assert_array_equal(fast.completion, slow)
