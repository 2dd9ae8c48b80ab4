"""Slow, obviously-correct packet simulator (pure Python, global heapq event queue).

Same model and event rules as mrfq.packet.kernel, written the plain way from the scenario
itself (SPEC §3): packet types, probabilities, order and weight from each class; a
packet's route is the resources where its requirement is > 0, in index order; its type
is drawn with the SplitMix64 counter hash documented in the README, reimplemented here.
Nothing comes from the kernel's preprocessed arrays or helpers. One event heap keyed
(time, priority, insertion counter); at each resource one FIFO per flow, and the
scheduler scans all flow heads for the smallest (key, seq). Tags charge a flow for its
previous packet (at a resource: its previous packet there), each increment divided by
the class weight, written as the SPEC writes them. The baselines of SPEC §3.1: FIFO keys
a packet by its arrival number at the resource; bottleneck FQ uses the BMF tag at
``fq_resource`` and FIFO elsewhere; MR3 holds a flow's window at an ingress and releases
packets by elastic round robin on dominant processing times (rounds numbered explicitly)
while fewer than ``inflight`` packets are inside, FIFO inside. Used only by the tests,
which require identical per-flow completion times from the same seed.
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from mrfq.packet.model import ArrivalStream

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


def simulate_reference(scenario, policy: str, class_loads, seed_seq, *, flows: int,
                       mean_size: float, window: int, delta: float = math.inf,
                       arrivals=None, fq_resource: int = -1, inflight: int | None = None,
                       class_window=None, class_period=None, class_stop=None,
                       interval: float = 0.0, bins: int = 0, record: dict | None = None):
    """Per-flow completion times of flows 0 … flows−1. ``arrivals`` = (times, classes,
    sizes) replaces the Poisson stream by an explicit trace, as in ``run_replication``.
    ``fq_resource``: bottleneck FQ's resource (−1: the last); ``inflight``: MR3's bound on
    packets inside the tandem (default 2J).

    Explicit-flow settings per class (as ``run_replication``): ``class_window`` (default
    ``window``); ``class_period`` > 0: an open-loop flow, one packet every period from
    its arrival until it has offered its size, dropped when it already has its window in
    the router; ``class_stop``: a windowed flow injects nothing at a departure at or after
    that time. With ``interval`` > 0, ``record["timeline"][k][j][b]`` is the service time
    class k completed at resource j in [b·interval, (b+1)·interval), b < ``bins``, and
    ``record["dropped"][k]`` the open-loop packets dropped. With a ``record``, also
    ``record["sojourns"]``: (flow index, class, sojourn) of every departing packet of the
    flows 0 … flows−1, in departure order (sojourn: from the packet's injection into the
    router — for MR3 into its ingress, where it waits for its release — to its departure
    from the last resource), and ``record["work"][j]``: the time resource j was busy
    until the last event (the service time it started, less what is left of the one in
    service)."""
    J = len(scenario.resources)
    fq_resource %= J
    inflight = 2 * J if inflight is None else inflight
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
    vglobal = 0.0
    seq = 0
    completion = {}
    outstanding = flows
    next_index = 0
    # MR3's ingress: flows with held packets in round-robin order, each with the round in
    # which it is served next; MaxSC of the previous and current round (normalised by w)
    rr_flows = []
    rr_round = 0
    max_sc = {"previous": 0.0, "current": 0.0}
    inside = 0
    turn = {"flow": None, "allowance": 0.0}
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

    def route(s):
        return [j for j in range(J) if s[j] > 0]

    def hold(flow):
        """MR3: the window's next packet waits at the ingress."""
        number = flow["sent"]
        flow["sent"] += 1
        flow["to_inject"] -= 1
        flow["in_system"] += 1
        s = types[flow["class"]][packet_type(flow, number)]
        packet = {"flow": flow, "s": s, "route": route(s), "key": None, "vtags": None,
                  "entry": clock[0]}
        if not flow["held"]:
            # a flow joining during a round is served from the next one
            flow["round"] = rr_round + (1 if rr_flows else 0)
            rr_flows.append(flow)
        flow["held"].append(packet)

    def release():
        """MR3 (SPEC §3.1): elastic round robin on dominant processing times, in units of
        dominant time / weight: allowance 1 + MaxSC(previous round) − SC_i."""
        nonlocal inside, rr_round
        while inside < inflight and rr_flows:
            flow = rr_flows[0]
            w = weights[flow["class"]]
            if turn["flow"] is not flow:
                turn["flow"] = flow
                turn["allowance"] = 1.0 + max_sc["previous"] - flow["sc"]
            packet = flow["held"].pop(0)
            turn["allowance"] -= max(packet["s"]) / w
            inside += 1
            arrive(packet, packet["route"][0])
            if turn["allowance"] <= 0 or not flow["held"]:
                surplus = -turn["allowance"]
                max_sc["current"] = max(max_sc["current"], surplus)
                turn["flow"] = None
                rr_flows.pop(0)
                if flow["held"]:
                    flow["sc"] = surplus
                    flow["round"] += 1
                    rr_flows.append(flow)
                else:
                    flow["sc"] = 0.0
                if all(f["round"] > rr_round for f in rr_flows):  # the round is over
                    rr_round += 1
                    max_sc["previous"], max_sc["current"] = max_sc["current"], 0.0

    def inject(flow):
        nonlocal vglobal
        number = flow["sent"]
        flow["sent"] += 1
        flow["to_inject"] -= 1
        flow["in_system"] += 1
        s = types[flow["class"]][packet_type(flow, number)]
        w = weights[flow["class"]]
        packet = {"flow": flow, "s": s, "route": route(s), "key": None, "vtags": None,
                  "entry": clock[0]}
        if policy == "drfq":
            # S = max(V, S_prev + max_j s_prev_j / w): the previous packet's charge
            packet["key"] = max(vglobal, flow["S"][0] + flow["cost"][0])
            flow["S"][0] = packet["key"]
            flow["cost"][0] = max(s) / w
        elif policy == "drfq-dovetail":
            vtags = [None] * J
            key = -math.inf
            for j in packet["route"]:
                begin = max(vtime[j], flow["F"][j])
                vtags[j] = begin
                flow["F"][j] = begin + s[j] / w
                key = max(key, begin)
            if delta < math.inf:
                top = max(flow["F"])
                flow["F"] = [max(f, top - delta) for f in flow["F"]]
            packet["key"] = key
            packet["vtags"] = vtags
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
        elif policy == "bottleneck-fq" and j == fq_resource:
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
                    vglobal = max(vglobal, key)
                elif policy == "drfq-dovetail":
                    vtime[j] = max(vtime[j], packet["vtags"][j])
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
            busy[j] = None
            flow = packet["flow"]
            flow["queue"][j] -= 1
            if interval > 0 and int(t / interval) < bins:
                timeline[flow["class"]][j][int(t / interval)] += packet["s"][j]
            later = [r for r in packet["route"] if r > j]
            if later:
                moves.append((packet, later[0]))
            else:
                if flow["index"] < flows:
                    sojourns.append((flow["index"], flow["class"], t - packet["entry"]))
                flow["in_system"] -= 1
                if policy == "mr3":
                    inside -= 1
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
                    "held": [], "sc": 0.0, "round": 0}
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
