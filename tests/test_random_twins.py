"""Random small models, each simulated by a kernel and by its slow twin (tests/naive.py,
tests/naive_cluster.py), which must agree exactly. The strategies cover what the other
random tests leave fixed: 1–3 resources with zero requirements, packet mixes (random or
cycled), RTTs, both DRFQ clocks, dovetailing's Δ, MR3's ingress bound (tandem); routers
that are any partition of 2–6 resources, up to 5 classes on any routes, with mixes and
RTTs (networks); 1–4 servers of 1–3 resources, placement constraints and parallelism
caps under every cluster scheduler (clusters). On 2026-11-28 these strategies, run with
``max_examples=20000`` in scratch copies (5–40 minutes each), agreed on 20 000 tandem,
20 000 cluster and over 12 000 network examples; MR3 with an ingress bound of 1 then ran
for minutes (see INFLIGHT)."""

import numpy as np
from conftest import make_scenario
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from naive_cluster import naive_cluster
from test_network_packet import POLICIES as NETWORK_POLICIES
from test_packet_reference import POLICIES, _both

from mrfq import policies
from mrfq.cluster import ClusterModel, workload
from mrfq.cluster.model import simulate_jobs
from mrfq.errors import InputError

EXAMPLES = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CLUSTER_POLICIES = [p.name for p in policies.entries(policies.CLUSTER)]
VALUES = [0.1, 0.2, 0.5, 0.7, 1.0, 2.0]
#: MR3's ingress bounds: the default (2 per resource of the router) or more. A smaller
#: bound can leave a router less capacity than the load it is offered (a bound of 1 on a
#: router of 5 resources serves one packet at a time): the flows then pile up without end
#: and a run of 100 flows took minutes (the fixed cases of test_packet_reference.py and
#: test_network_packet.py check bounds of 1 and 3 on stable loads)
INFLIGHT = [None, 50]


def _vector(draw, positions, size, zeros):
    """A requirement vector over ``size`` resources, nonzero somewhere in ``positions``."""
    vector = [0.0] * size
    for j in positions:
        vector[j] = draw(st.sampled_from(VALUES + [0.0] * zeros))
    if max(vector) == 0:
        vector[positions[0]] = 1.0
    return vector


def _packet_class(draw, name, positions, size, zeros):
    spec = {"name": name, "load_share": draw(st.sampled_from([1, 2, 0.5])),
            "weight": draw(st.sampled_from([1.0, 2.0, 0.3, 3.7]))}
    if draw(st.integers(0, 3)) == 0:  # a packet mix
        types = draw(st.integers(1, 3))
        mix = [_vector(draw, positions, size, 1) for _ in range(types)]
        for j in positions:  # a route must not cross a resource no type uses
            if not zeros and all(v[j] == 0 for v in mix):
                mix[0][j] = 0.5
        spec["packets"] = [{"requirements": v, "probability": 1 / types} for v in mix]
        if draw(st.booleans()):
            spec["packet_order"] = "cycle"
    else:
        spec["requirements"] = _vector(draw, positions, size, zeros)
    if draw(st.integers(0, 3)) == 0:
        spec["rtt"] = draw(st.sampled_from([0.5, 2.0, 5.0]))
    return spec


@st.composite
def _tandems(draw):
    J = draw(st.integers(1, 3))
    classes = [_packet_class(draw, f"c{k}", list(range(J)), J, 1)
               for k in range(draw(st.integers(1, 4)))]
    return dict(classes=classes, resources=("cpu", "link", "disk")[:J],
                load=draw(st.floats(0.2, 0.95)), window=draw(st.integers(1, 8)),
                mean_size=draw(st.sampled_from([1, 3, 10, 20])))


@st.composite
def _networks(draw):
    J = draw(st.integers(2, 6))
    names = [f"r{j}" for j in range(J)]
    owners = [draw(st.integers(0, J - 1)) for _ in range(J)]
    routers: dict[str, list[str]] = {}
    for j, owner in enumerate(owners):
        routers.setdefault(f"router{owner}", []).append(names[j])
    classes = []
    for k in range(draw(st.integers(1, 5))):
        route = draw(st.permutations(range(J)))[:draw(st.integers(1, J))]
        spec = _packet_class(draw, f"c{k}", route, J, 0)
        classes.append({**spec, "route": [names[j] for j in route]})
    return dict(classes=classes, resources=tuple(names), routers=routers,
                load=draw(st.floats(0.2, 0.93)), window=draw(st.integers(1, 8)),
                mean_size=draw(st.sampled_from([1, 5, 20])))


def _options(policy, clock, delta, inflight):
    extra = {"delta": delta if policy == "drfq-dovetail" else np.inf}
    if policy.startswith("drfq"):
        extra["virtual_time"] = clock
    if policy == "mr3" and inflight is not None:
        extra["inflight"] = inflight
    return extra


@EXAMPLES
@given(case=_tandems(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 2**32 - 1),
       flows=st.integers(10, 150), clock=st.sampled_from(["in-service", "started"]),
       delta=st.sampled_from([np.inf, 0.0, 0.5, 1.0, 10.0]), inflight=st.sampled_from(INFLIGHT))
def test_random_tandems_match_reference(case, policy, seed, flows, clock, delta, inflight):
    fast, slow = _both(case, policy, seed=seed, flows=flows,
                       **_options(policy, clock, delta, inflight))
    np.testing.assert_array_equal(fast.completion, slow)


@EXAMPLES
@given(case=_networks(), policy=st.sampled_from(NETWORK_POLICIES),
       seed=st.integers(0, 2**32 - 1), flows=st.integers(10, 120),
       clock=st.sampled_from(["in-service", "started"]),
       delta=st.sampled_from([np.inf, 0.0, 1.0, 10.0]), inflight=st.sampled_from(INFLIGHT))
def test_random_routed_networks_match_reference(case, policy, seed, flows, clock, delta,
                                                inflight):
    scenario = make_scenario(**{k: v for k, v in case.items() if k != "load"})
    fast, slow = _both(case, policy, seed=seed, flows=flows,
                       fq_resource=scenario.fq_resources,
                       **_options(policy, clock, delta, inflight))
    np.testing.assert_array_equal(fast.completion, slow)


@st.composite
def _clusters(draw):
    R, L, K = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    capacity = [[draw(st.sampled_from([1.0, 2.0, 4.0, 6.0, 12.0])) for _ in range(R)]
                for _ in range(L)]
    demand = [_vector(draw, list(range(R)), R, 1) for _ in range(K)]
    allowed = None
    if draw(st.booleans()):
        allowed = [[draw(st.booleans()) for _ in range(L)] for _ in range(K)]
        for row in allowed:
            if not any(row):
                row[draw(st.integers(0, L - 1))] = True
    caps = None
    if draw(st.booleans()):
        caps = [draw(st.sampled_from([1.0, 2.0, 3.0, np.inf])) for _ in range(K)]
    return dict(capacity=capacity, demand=demand, allowed=allowed, max_parallel=caps,
                weights=[draw(st.sampled_from([1.0, 2.0, 0.5])) for _ in range(K)],
                rates=[draw(st.sampled_from([0.2, 0.5, 1.0, 2.0])) for _ in range(K)],
                mean_tasks=[draw(st.sampled_from([1.0, 2.0, 4.0]))] * K,
                durations=[1.0, 0.5, 2.0][:K], slots_per_server=draw(st.integers(1, 6)),
                exponential=draw(st.booleans()))


@EXAMPLES
@given(case=_clusters(), policy=st.sampled_from(CLUSTER_POLICIES),
       jobs=st.integers(5, 60), seed=st.integers(0, 2**31))
def test_random_clusters_match_the_twin(case, policy, jobs, seed):
    case = dict(case)
    exponential = case.pop("exponential")
    try:  # a task that fits no (allowed) server is refused: not a case
        model = ClusterModel(policy=policy, **case,
                             duration_law="exponential" if exponential else "fixed")
        arrival, classes, tasks = workload(model, jobs, seed)
        finish, _, _, _, events = simulate_jobs(model, arrival, classes, tasks, seed)
    except InputError:
        assume(False)
    allowed = None if case["allowed"] is None else model.allowed.tolist()
    twin, twin_events = naive_cluster(policy, model.capacity, model.demand, model.weights,
                                      arrival, classes, tasks, model.durations, exponential,
                                      seed, case["slots_per_server"], allowed,
                                      max_parallel=case["max_parallel"])
    assert events == twin_events
    np.testing.assert_array_equal(finish, np.array(twin))
