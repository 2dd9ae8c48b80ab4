"""The slow twins of the tests: plain-Python versions of what the kernels compute fast,
written the obvious way so that a kernel can be held to them (bit for bit where the
floating-point operations are the same, to a stated tolerance where they are not).

Each twin derives what it needs from the model itself — the scenario's classes and
requirement vectors, and the papers' rules as the SPEC and the papers write them — not
from the kernels' preprocessed arrays or helper functions (no tag, bin, hash or state
enumeration of ``mrfq.packet.kernel`` / ``mrfq.fluid.markov`` is imported here). What a
twin does take from mrfq is named below; it is the model's *input*, not the computation
under test.

* :func:`simulate_reference` — the **packet reference simulator** (SPEC §3): one global
  event heap, a FIFO per flow at every resource, and a scheduler that scans all flow
  heads for the smallest (key, seq). Tags as the SPEC writes them (BR eqs. 2, 5, 7;
  Ghodsi et al. for dovetailing DRFQ; the baselines of SPEC §3.1: FIFO, bottleneck FQ,
  MR3's elastic round robin). Packet types are drawn with its own SplitMix64 counter
  hash (:func:`splitmix64`, :func:`packet_uniform`, as documented in the README). From
  mrfq it takes only the arrival stream (:class:`mrfq.packet.model.ArrivalStream`: flow
  arrival times, classes and sizes drawn from the seed), so that both see the same
  arrivals. Tests require identical per-flow completion times from the same seed.
* :func:`reference_histogram` — the per-packet **sojourn histogram** the packet kernel
  keeps, from the reference's list of departing packets: octaves found with ``log2``
  and corrected by comparison, split into equal parts; the geometry (buckets, parts per
  octave, lowest octave, bins) is passed in as the numbers the kernel states.
* :func:`backlogged_rate` — not a twin but a **harness**: it runs the production engine
  (:func:`mrfq.packet.engine.run_replication`) on an explicit trace where every flow but
  the measured one stays backlogged, so that the measured flow's packet rate is its
  static share, which the tests compare with the fluid allocation.
* :func:`dense_stationary` — the **dense Markov twin** of the truncation solver (BR
  §4.1): states {n : Σ n_k ≤ L} by ``itertools``, a dense generator built one state at a
  time (arrivals at rate ρ_k, blocked at L; departures at n_k φ_k(n)), and π Q = 0,
  Σ π = 1 by dense least squares. φ(n) is the policy's rule, taken one state at a time
  from the public :func:`mrfq.fluid.allocate` (the allocators are held to the papers'
  closed forms in ``test_allocators.py``); nothing of the solver's state enumeration,
  CSR generator, batched allocations or iterative solve is used.
  :func:`dense_flow_variances` is its twin of :mod:`mrfq.fluid.markov_variance`: the
  asymptotic variance of a simulated γ_k from the deviation matrix (1π − Q)⁻¹ of the
  same dense generator, not from the Poisson equation's sparse adjoint solve.
* :func:`brute_force_phi` — the **balance function Φ of balanced fairness** (Bonald &
  Proutière): Φ(0) = 1, Φ(n) = max_j Σ_{k: n_k>0} a_kj Φ(n − e_k), plain memoised
  recursion; :func:`bf_rates` turns it into the per-flow rates Φ(n − e_k)/(n_k Φ(n)).
* :func:`naive_flows` — the **flow-level twin** of :func:`mrfq.fluid.simulate_flows`:
  after every event it recomputes every rate and the next event from scratch, draining
  every flow's remaining work (the kernel drains class virtual times). Rates: BF's from
  :func:`bf_rates`, the others' from the public :func:`mrfq.fluid.allocate`, as above.
"""

from __future__ import annotations

import heapq
import itertools
import math
from functools import cache

import numpy as np
from conftest import make_scenario

from mrfq.fluid import allocate
from mrfq.packet.engine import run_replication
from mrfq.packet.model import ArrivalStream, PacketModel

# --- the packet reference simulator (SPEC §3) -------------------------------------------

_MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    """SplitMix64 finaliser on a 64-bit integer."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def packet_uniform(key: int, flow: int, number: int) -> float:
    """Uniform [0, 1) draw for packet ``number`` of flow ``flow``: the top 53 bits of
    splitmix64(key ^ splitmix64(flow · 0x100000001B3 + number)), all mod 2^64."""
    x = splitmix64(key ^ splitmix64((flow * 0x100000001B3 + number) & _MASK))
    return (x >> 11) * 2.0 ** -53


def record_service(row: list, interval: float, bins: int, t: float, s: float) -> None:
    """A packet served in [t − s, t] at one resource: add to ``row[b]`` the time that
    service overlaps the interval [b·interval, (b+1)·interval), b < ``bins`` (one interval
    holding it all gets s itself)."""
    first = max(0, math.floor((t - s) / interval))
    last = math.floor(t / interval)
    if first >= bins:
        return
    if first == last:
        row[first] += s
        return
    for b in range(first, min(last, bins - 1) + 1):
        overlap = min(t, (b + 1) * interval) - max(t - s, b * interval)
        if overlap > 0:
            row[b] += overlap


def simulate_reference(scenario, policy: str, class_loads, seed_seq, *, flows: int,
                       mean_size: float, window: int, delta: float | None = None,
                       virtual_time: str = "in-service",
                       arrivals=None, fq_resource: int = -1, inflight: int | None = None,
                       class_window=None, class_period=None, class_stop=None,
                       interval: float = 0.0, bins: int = 0, record: dict | None = None):
    """Per-flow completion times of flows 0 … flows−1 under the packet model (SPEC §3).

    Same model and event rules as mrfq.packet.kernel, written the plain way from the
    scenario itself: packet types, probabilities, order and weight from each class; a
    packet's route is the resources where its requirement is > 0, in index order; its
    type is drawn with :func:`packet_uniform`. One event heap keyed (time, priority,
    insertion counter); at each resource one FIFO per flow, and the scheduler scans all
    flow heads for the smallest (key, seq). Tags charge a flow for its previous packet
    (at a resource: its previous packet there), each increment divided by the class
    weight, written as the SPEC writes them. The baselines of SPEC §3.1: FIFO keys a
    packet by its arrival number at the resource; bottleneck FQ uses the BMF tag at
    ``fq_resource`` and FIFO elsewhere; MR3 holds a flow's window at an ingress and
    releases packets by elastic round robin on dominant processing times (rounds
    numbered explicitly) while fewer than ``inflight`` packets are inside, FIFO inside.
    With routers (SPEC §3.2) every router has its own MR3 ingress: a packet waits at the
    ingress of each router it enters (its first at injection; another when it moves on
    from a resource of a different router), each router releases by its own round robin,
    charging the packet's largest time over that router's resources, while fewer than its
    own bound are inside it; after an event's moves the routers release in index order.

    ``arrivals`` = (times, classes,
    sizes) replaces the Poisson stream by an explicit trace, as in ``run_replication``.
    ``virtual_time`` (SPEC §3): "in-service" — memoryless DRFQ's V is the largest tag among
    the packets in service, and, with none in service, the value it had just before the
    last one left; dovetailing's V_j is the tag at j of the packet in service there (idle:
    its last value) — or "started" — V (V_j) the largest tag ever started (at j).
    ``fq_resource``: bottleneck FQ's resource (−1: the last); ``inflight``: MR3's bound on
    packets inside the tandem, or inside each router (default 2 × its resources).

    Explicit-flow settings per class (as ``run_replication``): ``class_window`` (default
    ``window``); ``class_period`` > 0: an open-loop flow, one packet every period from
    its arrival until it has offered its size, dropped when it already has its window in
    the router; ``class_stop``: a windowed flow injects nothing at a departure at or after
    that time. With ``interval`` > 0, ``record["timeline"][k][j][b]`` is the time resource j spent
    serving class k in [b·interval, (b+1)·interval), b < ``bins`` (:func:`record_service`), and
    ``record["dropped"][k]`` the open-loop packets dropped. With a ``record``, also
    ``record["sojourns"]``: (flow index, class, sojourn) of every departing packet of the
    flows 0 … flows−1, in departure order (sojourn: from the packet's injection into the
    router — for MR3 into its ingress, where it waits for its release — to its departure
    from the last resource), and ``record["work"][j]``: the time resource j was busy
    until the last event (the service time it started, less what is left of the one in
    service)."""
    if delta is None:  # dovetailing's default bound: one window's worth of time units
        delta = float(window)
    J = len(scenario.resources)
    # networks (SPEC §3.2): a class's route is its ``route`` or the resources where its
    # requirement is nonzero, in index order; routers as listed (none: one router)
    routes = [list(c.route) if c.route is not None
              else [j for j in range(J) if c.requirements[j] > 0] for c in scenario.classes]
    router = [0] * J
    for r, (_, members) in enumerate(scenario.routers):
        for j in members:
            router[j] = r
    R = max(router) + 1
    fq_set = {j % J for j in (fq_resource if isinstance(fq_resource, tuple)
                              else (fq_resource,))}
    # MR3: one ingress per router, router r's bound its own (default 2 J_r)
    limit = [2 * router.count(r) if inflight is None else inflight for r in range(R)]
    K = len(scenario.classes)
    windows = [window] * K if class_window is None else [int(x) for x in class_window]
    periods = [0.0] * K if class_period is None else [float(x) for x in class_period]
    stops = [math.inf] * K if class_stop is None else [float(x) for x in class_stop]
    timeline = [[[0.0] * bins for _ in range(J)] for _ in range(K)]
    dropped = [0] * K
    types = [[[float(x) for x in row] for row in c.packet_requirements]
             for c in scenario.classes]
    cdfs = [list(itertools.accumulate(float(p) for p in c.packet_probabilities))
            for c in scenario.classes]
    cycled = [c.packet_order == "cycle" for c in scenario.classes]
    weights = [float(c.weight) for c in scenario.classes]
    rtts = [float(c.rtt) for c in scenario.classes]
    hash_key = int(seed_seq.generate_state(1, np.uint64)[0])
    trace = []  # (time, class, size)
    if arrivals is not None:
        times, classes, sizes = (list(x) for x in arrivals)
        order = sorted(range(len(times)), key=lambda i: times[i])  # stable
        trace = [(float(times[i]), int(classes[i]), int(sizes[i])) for i in order]
    else:
        # the scenario's size laws (geometric packets for exponential classes)
        stream = ArrivalStream(seed_seq, class_loads, mean_size,
                               [c.size for c in scenario.classes])

    def arrival(i):
        if arrivals is not None:
            return trace[i] if i < len(trace) else (math.inf, 0, 1)
        while len(trace) <= i:
            times, classes, sizes = stream.next_block()
            trace.extend(zip(times.tolist(), classes.tolist(), sizes.tolist(), strict=True))
        return trace[i]

    events = []  # (time, priority, counter, kind, payload)
    counter = 0

    def schedule(t, priority, kind, payload):
        nonlocal counter
        heapq.heappush(events, (t, priority, counter, kind, payload))
        counter += 1

    busy = [None] * J            # packet in service
    clock = [0.0]                # the current event's time (packets' entry times)
    sojourns = []
    work = [0.0] * J
    waiting = [{} for _ in range(J)]  # per resource: flow index -> FIFO list of packets
    vtime = [0.0] * J
    vglobal = [0.0] * R  # the started rule's V, per router
    v_idle = [0.0] * R  # the in-service rule's V while nothing is in service in the router
    in_service = virtual_time == "in-service"

    def in_service_v(r):
        """The largest tag among the packets in service in router r; V_r's last value if
        none is."""
        keys = [packet["key"] for j, packet in enumerate(busy)
                if packet is not None and router[j] == r]
        return max(keys) if keys else v_idle[r]
    seq = 0
    completion = {}
    outstanding = flows
    next_index = 0
    # MR3's ingress, one per router: flows with held packets there in round-robin order,
    # each with the round in which it is served next there; MaxSC of the previous and
    # current round (normalised by w); packets released by it and not yet out of the router
    rr_flows = [[] for _ in range(R)]
    rr_round = [0] * R
    max_sc = [{"previous": 0.0, "current": 0.0} for _ in range(R)]
    inside = [0] * R
    turn = [{"flow": None, "allowance": 0.0} for _ in range(R)]
    schedule(arrival(0)[0], J + K, "arrival", None)

    def packet_type(flow, number):
        k = flow["class"]
        count = len(types[k])
        if count == 1:
            return 0
        if cycled[k]:
            return number % count
        u = packet_uniform(hash_key, flow["index"], number)
        c = 0
        while c < count - 1 and cdfs[k][c] <= u:
            c += 1
        return c

    def route(k, s):
        return [j for j in routes[k] if s[j] > 0]

    def enter_router(packet, r):
        """DRFQ's tag when the packet enters router r (SPEC §3.2): memoryless, charged
        the flow's previous packet's largest time over r's resources; dovetailing, tags on
        r's resources only."""
        flow, s = packet["flow"], packet["s"]
        w = weights[flow["class"]]
        mine = [j for j in range(J) if router[j] == r]
        if policy == "drfq":
            # S = max(V, S_prev + max_j s_prev_j / w): the previous packet's charge
            v = in_service_v(r) if in_service else vglobal[r]
            packet["key"] = max(v, flow["S"][r] + flow["cost"][r])
            flow["S"][r] = packet["key"]
            flow["cost"][r] = max(s[j] for j in mine) / w
        elif policy == "drfq-dovetail":
            vtags = packet["vtags"] or [None] * J
            key = -math.inf
            for j in packet["route"]:
                if router[j] == r:
                    begin = max(vtime[j], flow["F"][j])
                    vtags[j] = begin
                    flow["F"][j] = begin + s[j] / w
                    key = max(key, begin)
            if delta < math.inf:
                top = max(flow["F"][j] for j in mine)
                for j in mine:
                    flow["F"][j] = max(flow["F"][j], top - delta)
            packet["key"] = key
            packet["vtags"] = vtags

    def hold(flow):
        """MR3: the window's next packet enters the network at its first router's
        ingress."""
        number = flow["sent"]
        flow["sent"] += 1
        flow["to_inject"] -= 1
        flow["in_system"] += 1
        s = types[flow["class"]][packet_type(flow, number)]
        packet = {"flow": flow, "s": s, "route": route(flow["class"], s), "key": None,
                  "vtags": None, "entry": clock[0]}
        join(packet, packet["route"][0])

    def join(packet, j):
        """MR3: the packet, next bound for resource j, waits at the ingress of j's router,
        behind its flow's packets already there."""
        r = router[j]
        flow = packet["flow"]
        packet["next"] = j
        if not flow["held"][r]:
            # a flow joining during a round is served from the next one
            flow["round"][r] = rr_round[r] + (1 if rr_flows[r] else 0)
            rr_flows[r].append(flow)
        flow["held"][r].append(packet)

    def release():
        """MR3 (SPEC §3.1, per router §3.2): every router in index order runs elastic round
        robin on dominant processing times over its own resources, in units of dominant
        time / weight: the head flow's allowance 1 + MaxSC(previous round) − SC_i, while
        fewer than its bound are inside it."""
        for r in range(R):
            mine = [j for j in range(J) if router[j] == r]
            while inside[r] < limit[r] and rr_flows[r]:
                flow = rr_flows[r][0]
                w = weights[flow["class"]]
                if turn[r]["flow"] is not flow:
                    turn[r]["flow"] = flow
                    turn[r]["allowance"] = 1.0 + max_sc[r]["previous"] - flow["sc"][r]
                packet = flow["held"][r].pop(0)
                turn[r]["allowance"] -= max(packet["s"][j] for j in mine) / w
                inside[r] += 1
                arrive(packet, packet["next"])
                if turn[r]["allowance"] <= 0 or not flow["held"][r]:
                    surplus = -turn[r]["allowance"]
                    max_sc[r]["current"] = max(max_sc[r]["current"], surplus)
                    turn[r]["flow"] = None
                    rr_flows[r].pop(0)
                    if flow["held"][r]:
                        flow["sc"][r] = surplus
                        flow["round"][r] += 1
                        rr_flows[r].append(flow)
                    else:
                        flow["sc"][r] = 0.0
                    if all(f["round"][r] > rr_round[r] for f in rr_flows[r]):  # round over
                        rr_round[r] += 1
                        max_sc[r]["previous"] = max_sc[r]["current"]
                        max_sc[r]["current"] = 0.0

    def inject(flow):
        number = flow["sent"]
        flow["sent"] += 1
        flow["to_inject"] -= 1
        flow["in_system"] += 1
        s = types[flow["class"]][packet_type(flow, number)]
        packet = {"flow": flow, "s": s, "route": route(flow["class"], s), "key": None,
                  "vtags": None, "entry": clock[0]}
        enter_router(packet, router[packet["route"][0]])
        return packet, packet["route"][0]

    def arrive(packet, j):
        nonlocal seq
        flow = packet["flow"]
        flow["queue"][j] += 1
        cost_here = packet["s"][j] / weights[flow["class"]]
        if policy == "bmf":
            # charged for the flow's previous packet at j: its tag and its cost there
            packet["key"] = max(vtime[j], flow["S"][j] + flow["cost"][j])
            flow["S"][j] = packet["key"]
            flow["cost"][j] = cost_here
        elif policy == "pf":
            # Q counts this packet, at its arrival
            packet["key"] = max(vtime[j], flow["S"][j] + flow["cost"][j] / flow["queue"][j])
            flow["S"][j] = packet["key"]
            flow["cost"][j] = cost_here
        elif policy == "bottleneck-fq" and j in fq_set:
            packet["key"] = max(vtime[j], flow["S"][j] + flow["cost"][j])
            flow["S"][j] = packet["key"]
            flow["cost"][j] = cost_here
        elif policy in ("fifo", "bottleneck-fq", "mr3"):
            packet["key"] = float(seq)  # first come first served
        packet["seq"] = seq
        waiting[j].setdefault(flow["uid"], []).append(packet)
        seq += 1

    def start_idle(t):
        nonlocal vglobal
        for j in range(J):
            heads = [(q[0]["key"], q[0]["seq"], uid) for uid, q in waiting[j].items() if q]
            if busy[j] is None and heads:
                key, _, uid = min(heads)
                packet = waiting[j][uid].pop(0)
                if policy == "drfq":
                    vglobal[router[j]] = max(vglobal[router[j]], key)
                elif policy == "drfq-dovetail":
                    tag = packet["vtags"][j]
                    vtime[j] = tag if in_service else max(vtime[j], tag)
                else:
                    vtime[j] = key
                busy[j] = packet
                work[j] += packet["s"][j]
                packet["finish"] = t + packet["s"][j]
                schedule(t + packet["s"][j], j, "done", j)

    while outstanding > 0:
        t, _, _, kind, payload = heapq.heappop(events)
        clock[0] = t
        if t == math.inf:
            raise RuntimeError("explicit arrival trace exhausted")
        moves = []  # packets to arrive somewhere: (packet, resource)
        if kind == "done":
            j = payload
            packet = busy[j]
            before = in_service_v(router[j])  # V just before this packet leaves service
            busy[j] = None
            if all(busy[i] is None for i in range(J) if router[i] == router[j]):
                v_idle[router[j]] = before
            flow = packet["flow"]
            flow["queue"][j] -= 1
            if interval > 0:
                record_service(timeline[flow["class"]][j], interval, bins, t, packet["s"][j])
            later = packet["route"][packet["route"].index(j) + 1:]
            if later and policy == "mr3" and router[later[0]] != router[j]:
                inside[router[j]] -= 1  # it leaves the router for the next one's ingress
                join(packet, later[0])
            elif later:
                if router[later[0]] != router[j]:
                    enter_router(packet, router[later[0]])
                moves.append((packet, later[0]))
            else:
                if flow["index"] < flows:
                    sojourns.append((flow["index"], flow["class"], t - packet["entry"]))
                flow["in_system"] -= 1
                if policy == "mr3":
                    inside[router[j]] -= 1
                if t >= stops[flow["class"]]:  # the flow stops: cancel what is not sent
                    flow["to_inject"] = flow["pending"]
                if periods[flow["class"]] > 0:  # open loop: departures inject nothing
                    if flow["in_system"] == 0 and flow["pending"] == 0:
                        if flow["index"] < flows:
                            completion[flow["index"]] = t
                            outstanding -= 1
                elif flow["to_inject"] > flow["pending"]:
                    rtt = rtts[flow["class"]]
                    if rtt > 0:
                        flow["pending"] += 1
                        schedule(t + rtt, J + flow["class"], "inject", flow)
                    elif policy == "mr3":
                        hold(flow)
                    else:
                        moves.append(inject(flow))
                elif flow["in_system"] == 0 and flow["pending"] == 0:
                    if flow["index"] < flows:
                        completion[flow["index"]] = t
                        outstanding -= 1
        elif kind == "tick":  # an open-loop flow offers its next packet
            flow = payload
            flow["pending"] -= 1
            if flow["in_system"] < windows[flow["class"]]:
                if policy == "mr3":
                    hold(flow)
                else:
                    moves.append(inject(flow))
            else:
                flow["to_inject"] -= 1
                dropped[flow["class"]] += 1
            if flow["to_inject"] > 0:
                flow["pending"] += 1
                schedule(t + periods[flow["class"]], J + flow["class"], "tick", flow)
        elif kind == "inject":
            payload["pending"] -= 1
            if policy == "mr3":
                hold(payload)
            else:
                moves.append(inject(payload))
        else:
            _, k, size = arrival(next_index)
            flow = {"uid": next_index, "class": k, "index": next_index, "to_inject": size,
                    "in_system": 0, "sent": 0, "pending": 0, "S": [-math.inf] * J,
                    "cost": [0.0] * J, "F": [-math.inf] * J, "queue": [0] * J,
                    "held": [[] for _ in range(R)], "sc": [0.0] * R, "round": [0] * R}
            next_index += 1
            schedule(arrival(next_index)[0], J + K, "arrival", None)
            # an open-loop flow offers its first packet on arrival, then one every period
            for _ in range(1 if periods[k] > 0 else min(windows[k], size)):
                if policy == "mr3":
                    hold(flow)
                else:
                    packet, j = inject(flow)
                    arrive(packet, j)
            if periods[k] > 0 and flow["to_inject"] > 0:
                flow["pending"] += 1
                schedule(t + periods[k], J + k, "tick", flow)
        for packet, j in moves:
            arrive(packet, j)
        if policy == "mr3":
            release()
        start_idle(t)
    if record is not None:
        record["timeline"] = np.array(timeline).reshape(K, J, bins)
        record["dropped"] = np.array(dropped)
        record["sojourns"] = sojourns
        record["work"] = np.array([work[j] - (busy[j]["finish"] - clock[0] if busy[j] else 0.0)
                                   for j in range(J)])
    return np.array([completion[i] for i in range(flows)])


def reference_histogram(sojourns, flows: int, K: int, buckets: int, sub: int,
                        lowest: int, bins: int):
    """The sojourn histogram and sums the packet kernel should keep, from the reference's
    list of departing packets (``record["sojourns"]``: flow index, class, sojourn x).

    Flow bucket: index · buckets // flows. Bin: the octave [2^(e−1), 2^e) that holds x,
    split into ``sub`` equal parts, numbered from octave ``lowest`` and clamped to
    [0, bins − 1] at both ends (the geometry the kernel states: SOJOURN_BUCKETS,
    SOJOURN_SUB, SOJOURN_EMIN, SOJOURN_BINS). Returns (hist [buckets, K, bins] int,
    sums [buckets, K])."""
    hist = np.zeros((buckets, K, bins), np.int64)
    sums = np.zeros((buckets, K))
    for index, k, x in sojourns:
        e = math.floor(math.log2(x)) + 1  # x in [2^(e-1), 2^e)
        while x >= 2.0 ** e:
            e += 1
        while x < 2.0 ** (e - 1):
            e -= 1
        part = math.floor((x - 2.0 ** (e - 1)) / (2.0 ** (e - 1) / sub))
        b = min(max((e - lowest) * sub + part, 0), bins - 1)
        hist[index * buckets // flows, k, b] += 1
        sums[index * buckets // flows, k] += x
    return hist, sums


# --- backlogged flows (a harness of the production engine) ------------------------------

def backlogged_rate(classes, measured, policy, size=20000, window=30,
                    resources=("cpu", "link"), **engine):
    """Packets per unit time of one flow of class ``measured`` (``size`` packets) while
    one flow of every other class stays backlogged throughout (10^8 packets, never
    finished). All arrive at t = 0; the run stops when the measured flow completes.
    A packet's dominant service is 1, so this is also the flow's dominant share.
    ``engine``: further arguments of ``run_replication`` (``virtual_time``, ``delta``)."""
    scenario = make_scenario(classes=classes, resources=resources)
    model = PacketModel.from_scenario(scenario)
    others = [k for k in range(len(classes)) if k != measured]
    trace = ([0.0] * len(classes), [measured, *others], [size] + [10**8] * len(others))
    run = run_replication(model, policy, scenario.class_loads(0.5), np.random.SeedSequence(0),
                          flows=1, mean_size=10, window=window, arrivals=trace, **engine)
    return size / run.completion[0]



def backlogged_steady_rate(classes, measured, policy, size=100_000, window=30,
                           resources=("cpu", "link"), **engine):
    """:func:`backlogged_rate` without the start and the end of the measured flow: its
    ``size`` middle packets over the time they add, size / (T(2 size) − T(size)) with
    T(n) the completion time of a measured flow of n packets (same seed, so the two runs
    share their start-up, whose W packets fill the route, and their final drain)."""
    short = size / backlogged_rate(classes, measured, policy, size, window, resources,
                                   **engine)
    long = 2 * size / backlogged_rate(classes, measured, policy, 2 * size, window,
                                      resources, **engine)
    return size / (long - short)

# --- per-packet processor sharing with windows (BR §3.2's assumption) -------------------

def ps_closed_throughputs(requirements, window):
    """Packets per unit time of R flows that each keep ``window`` packets circulating
    (no delay between a departure and the next injection) through PS resources, flow r
    taking ``requirements[r][j]`` per packet at resource j (0: not visited). This is
    "serving packets at rates proportional to Q_ij / a_ij", the assumption of BR §3.2's
    derivation of eq. 5: a closed multiclass BCMP network of PS stations (product form,
    any packet-time law), solved by exact mean value analysis (Reiser & Lavenberg 1980)
    over every population vector n ≤ (W, …, W):
        R_rj(n) = a_rj (1 + Q_j(n − e_r)),  X_r(n) = n_r / Σ_j R_rj(n),
        Q_j(n) = Σ_r X_r(n) R_rj(n)."""
    a = [list(map(float, row)) for row in requirements]
    R, J = len(a), len(a[0])
    queue = {(0,) * R: [0.0] * J}
    x = [0.0] * R
    for n in sorted(itertools.product(range(window + 1), repeat=R), key=sum)[1:]:
        q = [0.0] * J
        for r in range(R):
            if n[r] == 0:
                continue
            below = queue[n[:r] + (n[r] - 1,) + n[r + 1:]]
            residence = [a[r][j] * (1.0 + below[j]) for j in range(J)]
            x[r] = n[r] / sum(residence)
            for j in range(J):
                q[j] += x[r] * residence[j]
        queue[n] = q
    return np.array(x)


# --- the dense Markov twin (BR §4.1) ----------------------------------------------------

def dense_stationary(policy, requirements, rho, level, weights=None):
    """Stationary law of the Markov demand model truncated at ``level`` (arrivals blocked
    when Σ n_k = level), built densely from scratch.

    States: every n with Σ n_k ≤ level, from ``itertools.product`` (lexicographic order).
    Rates out of n: an arrival of class k at ρ_k (if Σ n < level); a departure of one of
    the n_k class-k transactions, each at rate φ_k(n) (``mrfq.fluid.allocate``). π solves
    π Q = 0, Σ π = 1 by dense least squares. Returns (states as tuples, π, Q)."""
    a = np.asarray(requirements, dtype=float)
    K = len(rho)
    states = [n for n in itertools.product(range(level + 1), repeat=K) if sum(n) <= level]
    index = {n: i for i, n in enumerate(states)}
    Q = np.zeros((len(states), len(states)))
    for n, i in index.items():
        counts = np.array(n, dtype=float)
        phi = allocate(policy, a, counts, weights) if counts.sum() else np.zeros(K)
        for k in range(K):
            if sum(n) < level:  # arrival (blocked at the truncation level)
                up = list(n)
                up[k] += 1
                Q[i, index[tuple(up)]] += rho[k]
            if n[k] > 0:  # one of the n_k transactions, each at rate φ_k, completes
                down = list(n)
                down[k] -= 1
                Q[i, index[tuple(down)]] += n[k] * phi[k]
        Q[i, i] = -Q[i].sum()
    system = np.vstack([Q.T, np.ones(len(states))])
    rhs = np.zeros(len(states) + 1)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(system, rhs, rcond=None)[0]
    return states, pi, Q


def dense_flow_variances(policy, requirements, rho, level, weights=None):
    """v_k = lim n_k Var(γ̂_k) / γ_k² of the chain of :func:`dense_stationary`, by dense
    linear algebra: with f_k(n) = n_k φ_k(n) (work served to class k per unit time) and
    h_k = f_k − γ_k n_k, γ_k = E[f_k] / E[n_k], the asymptotic variance of ∫ h_k is
    σ_k² = 2 Σ π h_k D h_k with the deviation matrix D = (1π − Q)⁻¹ − 1π (Kemeny & Snell;
    π h_k = 0 drops the 1π terms), and n_k flows are measured in t = n_k / E[f_k], so
    v_k = σ_k² / E[f_k]. Returns (states, π, v)."""
    states, pi, Q = dense_stationary(policy, requirements, rho, level, weights)
    a = np.asarray(requirements, dtype=float)
    S, K = len(states), len(rho)
    served = np.zeros((S, K))
    for i, n in enumerate(states):
        if sum(n):
            served[i] = np.array(n) * allocate(policy, a, np.array(n, float), weights)
    counts = np.array(states, dtype=float)
    fundamental = np.linalg.inv(np.outer(np.ones(S), pi) - Q)
    v = np.zeros(K)
    for k in range(K):
        gamma = (pi @ served[:, k]) / (pi @ counts[:, k])
        h = served[:, k] - gamma * counts[:, k]
        v[k] = 2 * (pi * h) @ fundamental @ h / (pi @ served[:, k])
    return states, pi, v


# --- balanced fairness's balance function (Bonald & Proutière) -------------------------

def brute_force_phi(requirements):
    """The balance function of balanced fairness, Φ(0) = 1,
    Φ(n) = max_j Σ_{k: n_k>0} a_kj Φ(n − e_k): plain memoised recursion on tuples n."""
    a = [list(map(float, row)) for row in requirements]

    @cache
    def phi(n):
        if sum(n) == 0:
            return 1.0
        best = 0.0
        for j in range(len(a[0])):
            total = 0.0
            for k in range(len(n)):
                if n[k] > 0:
                    below = n[:k] + (n[k] - 1,) + n[k + 1:]
                    total += a[k][j] * phi(below)
            best = max(best, total)
        return best

    return phi


def bf_rates(requirements):
    """Per-flow BF rates φ_k(n) = Φ(n − e_k) / (Φ(n) n_k) (0 for an empty class) from
    :func:`brute_force_phi`; a function of the counts n."""
    phi = brute_force_phi(requirements)

    def rates(counts):
        n = tuple(int(x) for x in counts)
        return np.array([phi(n[:k] + (n[k] - 1,) + n[k + 1:]) / phi(n) / n[k] if n[k] else 0.0
                         for k in range(len(n))])

    return rates


# --- the flow-level twin ---------------------------------------------------------------

def naive_flows(requirements, policy, trace, flows, weights=None):
    """Completion times of flows 0 … flows−1 of an explicit ``trace`` (times, classes,
    works) under fluid policy ``policy``; every allocation and the next event recomputed
    from scratch after every event.

    Flows are [arrival index, class, remaining work]; all remaining works drain at their
    class's rate. Departure before arrival at equal times; equal departure times: lowest
    class, then lowest arrival index (the documented order). ``policy == "bf"``: the
    rates of :func:`bf_rates`; otherwise ``mrfq.fluid.allocate``.
    """
    times, classes, works = trace
    K = len(requirements)
    bf = bf_rates(requirements) if policy == "bf" else None
    completion = np.full(flows, np.nan)
    active = []
    t, nxt = 0.0, 0
    while np.isnan(completion).any():
        counts = np.bincount([f[1] for f in active], minlength=K).astype(float)
        if not active:
            phi = np.zeros(K)
        elif bf is not None:
            phi = bf(counts)
        else:
            phi = allocate(policy, requirements, counts, weights)
        departure = min(((max(f[2], 0.0) / phi[f[1]], f[1], f[0]) for f in active),
                        default=None)
        if departure is not None and t + departure[0] <= times[nxt]:
            dt = departure[0]
        else:
            dt = times[nxt] - t
        for f in active:
            f[2] -= phi[f[1]] * dt
        t += dt
        if departure is not None and dt == departure[0]:
            ident = departure[2]
            active = [f for f in active if f[0] != ident]
            if ident < flows:
                completion[ident] = t
        else:
            active.append([nxt, int(classes[nxt]), float(works[nxt])])
            nxt += 1
    return completion


def generator_flux(policy, requirements, rho, states, pi, weights=None):
    """π Q of a law ``pi`` on the states ``states`` (S×K) of the chain truncated at their
    largest level L (the generator of :func:`dense_stationary`, applied state by state
    without building it): entry n is the probability flow into n minus the flow out of n,
    zero for every n at the stationary law."""
    a = np.asarray(requirements, dtype=float)
    K = len(rho)
    rows = [tuple(int(v) for v in n) for n in np.asarray(states)]
    level = max(sum(n) for n in rows)
    index = {n: i for i, n in enumerate(rows)}
    flux = np.zeros(len(rows))
    for i, n in enumerate(rows):
        phi = allocate(policy, a, np.array(n, float), weights) if sum(n) else np.zeros(K)
        for k in range(K):
            moves = []
            if sum(n) < level:
                moves.append((n[:k] + (n[k] + 1,) + n[k + 1:], rho[k]))
            if n[k] > 0:
                moves.append((n[:k] + (n[k] - 1,) + n[k + 1:], n[k] * phi[k]))
            for target, rate in moves:
                flux[index[target]] += pi[i] * rate
                flux[i] -= pi[i] * rate
    return flux
