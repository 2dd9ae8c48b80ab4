"""Networks (SPEC §3.2) in the packet kernel against the reference simulator, which reads
routes and routers from the scenario itself (tests/naive.py): identical completion times,
per-packet sojourn histograms and busy times, for every policy, on small networks."""

import itertools
import math

import naive
import numpy as np
import pytest
from conftest import make_scenario
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import backlogged_rate, backlogged_steady_rate
from test_packet_reference import _both

from mrfq.fluid import allocate, bmf_conditions
from mrfq.packet import engine, kernel
from mrfq.packet.engine import run_replication
from mrfq.packet.model import ArrivalStream, PacketModel

ROUTER_POLICIES = ["drfq", "drfq-dovetail", "bottleneck-fq", "mr3"]
POLICIES = ["pf", "bmf", "fifo", *ROUTER_POLICIES]

# two classes crossing the same two resources in opposite orders
OPPOSITE = [{"name": "ab", "requirements": [1.0, 0.5], "load_share": 1, "route": ["a", "b"]},
            {"name": "ba", "requirements": [0.4, 1.0], "load_share": 1, "route": ["b", "a"]}]

NETWORKS = {
    "opposite-one-router": dict(classes=OPPOSITE, resources=("a", "b"), load=0.8),
    "opposite-two-routers": dict(classes=OPPOSITE, resources=("a", "b"), load=0.8,
                                 routers={"ra": ["a"], "rb": ["b"]}),
    # a line of three links, one router each: one long class, one class per link
    "linear": dict(
        classes=[{"name": "long", "requirements": [1, 0.5, 0.8], "load_share": 1},
                 {"name": "l1", "requirements": [1, 0, 0], "load_share": 1},
                 {"name": "l2", "requirements": [0, 1, 0], "load_share": 2},
                 {"name": "l3", "requirements": [0, 0, 0.6], "load_share": 1}],
        resources=("l1", "l2", "l3"), routers={"r1": ["l1"], "r2": ["l2"], "r3": ["l3"]},
        load=0.85),
    # two software routers in series (CPU + link each); a class that leaves after the
    # first, one only in the second, one the other way round, one with a packet mix
    "nfv": dict(
        classes=[{"name": "through", "requirements": [0.5, 1, 0.3, 1], "load_share": 2},
                 {"name": "edge", "requirements": [1, 0.4, 0, 0], "load_share": 1},
                 {"name": "core", "requirements": [0, 0, 1, 0.2], "load_share": 1},
                 {"name": "back", "requirements": [0.2, 1, 0.6, 0.5], "load_share": 1,
                  "route": ["cpu2", "link2", "cpu1", "link1"], "weight": 2.0},
                 {"name": "mix", "load_share": 1, "route": ["cpu2", "link2", "link1"],
                  "packets": [{"requirements": [0, 1, 0.5, 0.2], "probability": 0.5},
                              {"requirements": [0, 0.2, 1, 0], "probability": 0.5}]}],
        resources=("cpu1", "link1", "cpu2", "link2"),
        routers={"edge": ["cpu1", "link1"], "core": ["cpu2", "link2"]}, load=0.8),
    # a route that leaves a router and comes back to it (a new entry, a new tag)
    "re-entry": dict(
        classes=[{"name": "zig", "requirements": [1, 0.5, 0.7], "load_share": 1,
                  "route": ["x", "y", "z"]},
                 {"name": "zag", "requirements": [0.3, 1, 0.4], "load_share": 1,
                  "route": ["z", "y", "x"]}],
        resources=("x", "y", "z"), routers={"outer": ["x", "z"], "inner": ["y"]},
        load=0.8),
}


def _run_both(name, policy, **extra):
    case = dict(NETWORKS[name])
    scenario = make_scenario(**{k: v for k, v in case.items() if k != "load"})
    return _both(case, policy, fq_resource=scenario.fq_resources, **extra)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(NETWORKS))
def test_network_kernel_matches_reference_exactly(name, policy):
    fast, slow = _run_both(name, policy)
    assert np.all(np.isfinite(fast.completion))
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("name, names, expected", [
    ("nfv", ["cpu1", "link2"], (0, 3)),        # the CPU of one router, the link of the other
    ("linear", ["l3", "l1"], (2, 0)),          # two of three one-link routers
    ("opposite-two-routers", ["a"], (0,)),     # a one-name list: one scheduled resource
])
def test_bottleneck_fq_on_a_list_of_resources_matches_reference(name, names, expected):
    """``[packet] fq_resource`` as a list: the scenario's fq_resources, run by the kernel
    and by the reference simulator, which schedule exactly those resources."""
    case = NETWORKS[name]
    scenario = make_scenario(**{k: v for k, v in case.items() if k != "load"},
                             fq_resource=names)
    assert scenario.fq_resources == expected
    fast, slow = _both(case, "bottleneck-fq", fq_resource=scenario.fq_resources)
    np.testing.assert_array_equal(fast.completion, slow)
    default, _ = _run_both(name, "bottleneck-fq")  # the last resource of every router
    assert not np.array_equal(fast.completion, default.completion)


@pytest.mark.parametrize("policy", ["drfq", "drfq-dovetail"])
@pytest.mark.parametrize("name", ["nfv", "re-entry"])
def test_started_clock_and_finite_delta_match_reference(name, policy):
    fast, slow = _run_both(name, policy, virtual_time="started", delta=2.0)
    np.testing.assert_array_equal(fast.completion, slow)


def test_mr3_on_one_router_with_routes_matches_reference():
    fast, slow = _run_both("opposite-one-router", "mr3")
    np.testing.assert_array_equal(fast.completion, slow)


@pytest.mark.parametrize("inflight", [1, 3])
@pytest.mark.parametrize("name", ["opposite-two-routers", "nfv", "re-entry"])
def test_mr3_ingress_bound_per_router_matches_reference(name, inflight):
    """MR3 on several routers with every router's bound L_r = ``inflight`` (1: a router
    holds one packet at a time; 3: below the default 2 J_r of a two-resource router)."""
    fast, slow = _run_both(name, "mr3", inflight=inflight)
    np.testing.assert_array_equal(fast.completion, slow)
    default, _ = _run_both(name, "mr3")
    assert not np.array_equal(fast.completion, default.completion)


def _mr3_run(scenario, trace, flows):
    return run_replication(PacketModel.from_scenario(scenario), "mr3",
                           scenario.class_loads(0.8), np.random.SeedSequence(5), flows=flows,
                           mean_size=20, window=4, arrivals=trace)


def _restricted(classes, keep):
    """The classes with their requirement vectors (and packet types') cut to ``keep``."""
    def cut(x):
        return [x[j] for j in keep]
    out = []
    for c in classes:
        c = dict(c)
        if "requirements" in c:
            c["requirements"] = cut(c["requirements"])
        if "packets" in c:
            c["packets"] = [{**p, "requirements": cut(p["requirements"])} for p in c["packets"]]
        out.append(c)
    return out


@pytest.mark.parametrize("name", ["nfv", "re-entry"])
def test_mr3_router_ingress_on_one_router_is_the_tandem_ingress(name, monkeypatch):
    """The per-router ingress code (the network loop) on a network of one router gives
    bit for bit the tandem's MR3 (SPEC §3.1, one ingress), which the tandem loop runs
    (the networks' classes, with weights, packet mixes and routes, in one router)."""
    scenario = make_scenario(**{k: v for k, v in NETWORKS[name].items()
                                if k not in ("load", "routers")})
    rho = scenario.class_loads(0.85)
    model = PacketModel.from_scenario(scenario)
    runs = []
    for forced in (False, True):
        if forced:
            monkeypatch.setattr(engine, "needs_network_loop", lambda routers, mask: True)
        runs.append(run_replication(model, "mr3", rho, np.random.SeedSequence(7), flows=300,
                                    mean_size=20, window=4, debug=False))
    np.testing.assert_array_equal(runs[0].completion, runs[1].completion)
    np.testing.assert_array_equal(runs[0].sojourn_hist, runs[1].sojourn_hist)
    assert runs[0].services == runs[1].services


def test_mr3_routers_with_disjoint_routes_are_independent_tandems():
    """Two routers whose classes never cross: each router's MR3 ingress, round robin and
    resources see only its own classes, so every flow completes exactly when it does in
    that router's tandem alone with its classes' arrivals (the same trace)."""
    left = [{"name": "x", "requirements": [1, 0.5, 0, 0], "load_share": 1},
            {"name": "y", "requirements": [0.3, 1, 0, 0], "load_share": 2, "weight": 2.0}]
    right = [{"name": "u", "requirements": [0, 0, 1, 0.7], "load_share": 1},
             # types cycled: a drawn type would hash the flow's index, which differs
             {"name": "v", "load_share": 1, "packet_order": "cycle",
              "packets": [{"requirements": [0, 0, 0.4, 1], "probability": 0.5},
                          {"requirements": [0, 0, 1, 0.2], "probability": 0.5}]}]
    network = make_scenario(classes=left + right, resources=("a", "b", "c", "d"),
                            routers={"left": ["a", "b"], "right": ["c", "d"]})
    times, classes, sizes = ArrivalStream(np.random.SeedSequence(11),
                                          network.class_loads(1.6), 20.0).next_block()
    n = 400
    trace = (times[:n + 1], classes[:n + 1], sizes[:n + 1])
    whole = _mr3_run(network, trace, n)
    for part, members, keep, names in ((left, (0, 1), [0, 1], ("a", "b")),
                                       (right, (2, 3), [2, 3], ("c", "d"))):
        mine = np.isin(trace[1], members)
        alone = make_scenario(classes=_restricted(part, keep), resources=names)
        tandem = _mr3_run(alone, (trace[0][mine], trace[1][mine] - members[0],
                                  trace[2][mine]), int(np.sum(mine[:n])))
        assert len(tandem.completion) > 100
        np.testing.assert_array_equal(whole.completion[mine[:n]], tandem.completion)


def test_routes_change_the_order_of_visits():
    """The opposite-order case is not the tandem in disguise: reversing class ba's route
    changes its completion times."""
    case = NETWORKS["opposite-one-router"]
    routed = make_scenario(classes=OPPOSITE, resources=("a", "b"))
    tandem = make_scenario(classes=[{k: v for k, v in c.items() if k != "route"}
                                    for c in OPPOSITE], resources=("a", "b"))
    runs = [run_replication(PacketModel.from_scenario(s), "bmf", s.class_loads(case["load"]),
                            np.random.SeedSequence(3), flows=150, mean_size=20, window=5)
            for s in (routed, tandem)]
    assert not np.array_equal(runs[0].completion, runs[1].completion)


def _long_line(J):
    """J one-link routers in a line: a class crossing all of them, and a class on each of
    links 0, 1, J − 2 and J − 1 (the lowest and the highest event leaves)."""
    names = [f"l{j}" for j in range(J)]
    classes = [{"name": "long", "requirements": [0.3 + 0.05 * (j % 5) for j in range(J)],
                "load_share": 2}]
    for j in (0, 1, J - 2, J - 1):
        req = [0.0] * J
        req[j] = 1.0
        classes.append({"name": f"on{j}", "requirements": req, "load_share": 1})
    return dict(classes=classes, resources=tuple(names),
                routers={f"r{j}": [n] for j, n in enumerate(names)}, load=0.8)


@pytest.mark.parametrize("policy", ["bmf", "drfq"])
@pytest.mark.parametrize("J", [kernel.FLAT_EVENTS, kernel.FLAT_EVENTS + 2])
def test_networks_on_both_sides_of_the_flat_event_tournament_match_reference(J, policy):
    """Up to FLAT_EVENTS resources the next completion is a tournament over the leaves
    computed at every event, above it the tree of kernel._tree_set: both give the
    reference's completion times on a line of J routers."""
    fast, slow = _both(_long_line(J), policy, flows=80)
    np.testing.assert_array_equal(fast.completion, slow)


@st.composite
def _networks(draw):
    """A small random network: 2–4 resources split into routers, 2–3 classes on random
    routes (any subset, any order) with random requirements."""
    J = draw(st.integers(2, 4))
    names = [f"r{j}" for j in range(J)]
    cut = sorted(set(draw(st.lists(st.integers(1, J - 1), max_size=J - 1))))
    bounds = [0, *cut, J]
    routers = {f"router{i}": names[a:b]
               for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))}
    classes = []
    for k in range(draw(st.integers(2, 3))):
        route = draw(st.permutations(range(J)))[:draw(st.integers(1, J))]
        req = [0.0] * J
        for j in route:
            req[j] = draw(st.sampled_from([0.2, 0.5, 0.7, 1.0]))
        classes.append({"name": f"c{k}", "requirements": req, "route": [names[j] for j in route],
                        "load_share": draw(st.sampled_from([1, 2])),
                        "weight": draw(st.sampled_from([1.0, 2.0]))})
    return dict(classes=classes, resources=tuple(names), routers=routers,
                load=draw(st.floats(0.3, 0.9)), window=draw(st.integers(1, 5)))


@settings(max_examples=30, deadline=None)
@given(case=_networks(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 2**32 - 1))
def test_random_networks_match_reference(case, policy, seed):
    scenario = make_scenario(**{k: v for k, v in case.items() if k != "load"})
    fast, slow = _both(case, policy, seed=seed, flows=60, fq_resource=scenario.fq_resources)
    np.testing.assert_array_equal(fast.completion, slow)


def test_packet_bmf_picks_another_bmf_than_the_fluid_when_not_unique():
    """BR §2.4: for (1, 1, 1), (1, 1/2, 3/4), (1/2, 1, 3/4) every φ(x) = (2/5 − x/15,
    2/5 + 2x/45, 2/5 + 2x/45), 0 ≤ x ≤ 1, is BMF. Three one-resource routers, one
    backlogged flow each: per-resource FQ settles at x = 0, (2/5, 2/5, 2/5), while mrfq's
    fluid BMF is x = 1, (1/3, 4/9, 4/9) (reproduction/networks/bmf_nonunique.py)."""
    a = np.array([[1.0, 1.0, 1.0], [1.0, 0.5, 0.75], [0.5, 1.0, 0.75]])
    classes = [{"name": f"c{k}", "requirements": list(a[k]), "load_share": 1}
               for k in range(3)]
    original = naive.make_scenario
    naive.make_scenario = lambda **kw: original(
        **kw, routers={"R1": ["r1"], "R2": ["r2"], "R3": ["r3"]})
    try:
        phi = np.array([backlogged_rate(classes, k, "bmf", window=5,
                                        resources=("r1", "r2", "r3")) for k in range(3)])
    finally:
        naive.make_scenario = original
    np.testing.assert_allclose(phi, [0.4, 0.4, 0.4], rtol=0.005)
    fluid = allocate("bmf", a, np.ones(3))
    np.testing.assert_allclose(fluid, [1 / 3, 4 / 9, 4 / 9], rtol=1e-9)
    for x in (phi, fluid):
        assert bmf_conditions(a, np.ones(3), x, tol=0.005)["holds"]


def _product_form_constant(a, populations):
    """G(N) of a closed network of PS stations by brute force: the sum over every
    placement of each class's packets on the stations it visits of
    Π_j n_j! Π_r a_rj^n_rj / n_rj! (BCMP)."""
    def placements(stations, n):
        if len(stations) == 1:
            yield {stations[0]: n}
            return
        for k in range(n + 1):
            for rest in placements(stations[1:], n - k):
                yield {stations[0]: k, **rest}

    routes = [[j for j, x in enumerate(row) if x > 0] for row in a]
    total = 0.0
    for combo in itertools.product(*(list(placements(routes[r], n))
                                     for r, n in enumerate(populations))):
        term = 1.0
        for j in range(len(a[0])):
            counts = [combo[r].get(j, 0) for r in range(len(a))]
            term *= math.factorial(sum(counts))
            for r, n in enumerate(counts):
                term *= a[r][j] ** n / math.factorial(n)
        total += term
    return total


def test_per_packet_ps_twin_against_closed_forms():
    """Two PS resources in a cycle, one flow of W packets with times a1, a2: the closed
    network's throughput is G(W − 1) / G(W), G(N) = Σ_{k=0}^{N} a1^k a2^(N−k) (product
    form); two flows of W packets with equal times are one flow of 2W, shared equally.
    With routes that skip resources (linear_network's classes), X_r = G(N − e_r) / G(N)
    from the brute-force product form."""
    a1, a2 = 0.7, 0.3
    g = [sum(a1**k * a2**(n - k) for k in range(n + 1)) for n in range(13)]
    for window in (1, 4, 9):
        x = naive.ps_closed_throughputs([[a1, a2]], window)
        np.testing.assert_allclose(x, [g[window - 1] / g[window]], rtol=1e-12)
    np.testing.assert_allclose(naive.ps_closed_throughputs([[a1, a2], [a1, a2]], 6),
                               [g[11] / g[12] / 2] * 2, rtol=1e-12)
    a = [c["requirements"] for c in LINE_CLASSES]
    for window in (1, 3):
        full = _product_form_constant(a, [window] * 4)
        expected = [_product_form_constant(a, [window - (r == k) for r in range(4)]) / full
                    for k in range(4)]
        np.testing.assert_allclose(naive.ps_closed_throughputs(a, window), expected,
                                   rtol=1e-10)


LINE = ("link1", "link2", "link3")
LINE_CLASSES = [{"name": n, "requirements": a, "load_share": 1} for n, a in
                (("long", [1.0, 0.5, 0.8]), ("1", [1.0, 0, 0]), ("2", [0, 1.0, 0]),
                 ("3", [0, 0, 1.0]))]


def _line_pf_long(window, classes=LINE_CLASSES):
    """Steady packet `pf` rate of the long flow, one backlogged flow of each class given
    on linear_network's routers."""
    original = naive.make_scenario
    naive.make_scenario = lambda **kw: original(
        **kw, routers={f"r{j}": [r] for j, r in enumerate(LINE)})
    try:
        return backlogged_steady_rate(classes, 0, "pf", size=100_000, window=window,
                                      resources=LINE)
    finally:
        naive.make_scenario = original


def test_per_packet_ps_approaches_pf_on_linear_network_as_windows_grow():
    """Walton (2009): closed PS networks tend to PF as the populations grow in fixed
    proportion. On linear_network's (long, 2) state (PF: 1, 1/2, the long flow held by
    link 1 alone) exact per-packet PS gives the long flow 0.870 at W = 30 and 0.972 at
    W = 480."""
    a = [[1.0, 0.5, 0.8], [0.0, 1.0, 0.0]]
    np.testing.assert_allclose(allocate("pf", np.array(a), np.ones(2)), [1.0, 0.5], rtol=1e-6)
    x30, x120, x480 = (naive.ps_closed_throughputs(a, w)[0] for w in (30, 120, 480))
    assert x30 < x120 < x480 < 1.0
    np.testing.assert_allclose([x30, x480], [0.8697, 0.9718], atol=5e-4)


def test_packet_pf_settles_below_pf_on_linear_network():
    """BR eq. 5 (SFQ with the increment a_ij / Q_ij, Q_ij read at the packet's arrival,
    SPEC §3) with one backlogged flow of every linear_network class: the long flow's
    steady rate is 0.3333 at W = 30 (PF 0.3188, exact per-packet PS 0.3141) and settles
    near 0.303 as W grows (0.3033 at W = 960), about 5% below PF, where per-packet PS
    converges to PF; with only (long, 2) backlogged it does converge (0.9984 at W = 480
    against 1). Read Q when the packet becomes its flow's head instead and the four-flow
    state converges as well (reproduction/networks/sfq_q_sampling.py, README "Why packet
    `pf` misses fluid PF"). In the tandem (Figure 3's classes) the rule is within 0.2% of
    PF at W = 30."""
    pf = allocate("pf", np.array([c["requirements"] for c in LINE_CLASSES]), np.ones(4))
    np.testing.assert_allclose(pf[0], 0.3188, atol=1e-4)
    at30, at960 = _line_pf_long(30), _line_pf_long(960)
    np.testing.assert_allclose(at30, 1 / 3, rtol=2e-3)
    np.testing.assert_allclose(at960, 0.3033, rtol=3e-3)
    assert at30 > pf[0] * 1.04 and at960 < pf[0] * 0.97
    np.testing.assert_allclose(_line_pf_long(480, [LINE_CLASSES[0], LINE_CLASSES[2]]), 1.0,
                               atol=3e-3)
    fig3 = [{"name": f"c{k}", "requirements": a, "load_share": 1}
            for k, a in enumerate(([0.1, 1.0], [1.0, 0.1], [1.0, 1.0]))]
    tandem = [backlogged_steady_rate(fig3, k, "pf", size=100_000, window=30)
              for k in range(3)]
    np.testing.assert_allclose(tandem, allocate("pf", np.array(
        [c["requirements"] for c in fig3]), np.ones(3)), rtol=2e-3)
