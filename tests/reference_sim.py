"""Slow, obviously-correct packet simulator (pure Python, global heapq event queue).

Same model and event rules as mrfq.packet.kernel, written the plain way: one event heap
keyed (time, priority, insertion counter); at each resource one FIFO per flow, and the
scheduler scans all flow heads for the smallest (key, seq). Used only
by the tests, which require identical per-flow completion times from the same seed.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from mrfq.packet.kernel import packet_uniform
from mrfq.packet.model import ArrivalStream, PacketModel


def simulate_reference(model: PacketModel, policy: str, class_loads, seed_seq, *, flows: int,
                       mean_size: float, window: int, delta: float = math.inf):
    J = model.service.shape[1]
    K = len(model.type_start)
    stream = ArrivalStream(seed_seq, class_loads, mean_size)
    hash_key = np.uint64(seed_seq.generate_state(1, np.uint64)[0])
    arrivals = []  # (time, class, size)

    def arrival(i):
        while len(arrivals) <= i:
            times, classes, sizes = stream.next_block()
            arrivals.extend(zip(times.tolist(), classes.tolist(), sizes.tolist(), strict=True))
        return arrivals[i]

    events = []  # (time, priority, counter, kind, payload)
    counter = 0

    def schedule(t, priority, kind, payload):
        nonlocal counter
        heapq.heappush(events, (t, priority, counter, kind, payload))
        counter += 1

    busy = [None] * J            # packet in service
    waiting = [{} for _ in range(J)]  # per resource: flow index -> FIFO list of packets
    vtime = [0.0] * J
    vglobal = 0.0
    seq = 0
    completion = {}
    outstanding = flows
    next_index = 0
    schedule(arrival(0)[0], J + K, "arrival", None)

    def packet_type(flow, number):
        k = flow["class"]
        start, count = model.type_start[k], model.type_count[k]
        if count == 1:
            return start
        if model.class_cycle[k]:
            return start + number % count
        u = packet_uniform(hash_key, flow["index"], number)
        c = 0
        while c < count - 1 and model.type_cdf[start + c] <= u:
            c += 1
        return start + c

    def inject(flow):
        nonlocal vglobal
        number = flow["sent"]
        flow["sent"] += 1
        flow["to_inject"] -= 1
        flow["in_system"] += 1
        ptype = packet_type(flow, number)
        s = model.service[ptype]
        packet = {"flow": flow, "type": ptype, "key": None, "vtags": None}
        if policy == "drfq":
            key = max(vglobal, flow["tag"][0] + float(s.max()))
            flow["tag"][0] = key
            packet["key"] = key
        elif policy == "drfq-dovetail":
            vtags = [None] * J
            key = -math.inf
            for j in range(J):
                if s[j] > 0:
                    begin = max(vtime[j], flow["tag"][j])
                    vtags[j] = begin
                    flow["tag"][j] = begin + s[j]
                    key = max(key, begin)
            if delta < math.inf:
                top = max(flow["tag"])
                flow["tag"] = [max(f, top - delta) for f in flow["tag"]]
            packet["key"] = key
            packet["vtags"] = vtags
        return packet, int(model.first_resource[ptype])

    def arrive(packet, j):
        nonlocal seq
        flow = packet["flow"]
        flow["queue"][j] += 1
        s = model.service[packet["type"], j]
        if policy == "bmf":
            packet["key"] = max(vtime[j], flow["tag"][j] + s)
            flow["tag"][j] = packet["key"]
        elif policy == "pf":
            packet["key"] = max(vtime[j], flow["tag"][j] + s / flow["queue"][j])
            flow["tag"][j] = packet["key"]
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
                schedule(t + model.service[packet["type"], j], j, "done", j)

    while outstanding > 0:
        t, _, _, kind, payload = heapq.heappop(events)
        moves = []  # packets to arrive somewhere: (packet, resource)
        if kind == "done":
            j = payload
            packet = busy[j]
            busy[j] = None
            flow = packet["flow"]
            flow["queue"][j] -= 1
            nj = int(model.next_resource[packet["type"], j])
            if nj >= 0:
                moves.append((packet, nj))
            else:
                flow["in_system"] -= 1
                if flow["to_inject"] > flow["pending"]:
                    rtt = model.class_rtt[flow["class"]]
                    if rtt > 0:
                        flow["pending"] += 1
                        schedule(t + rtt, J + flow["class"], "inject", flow)
                    else:
                        moves.append(inject(flow))
                elif flow["in_system"] == 0 and flow["pending"] == 0:
                    if flow["index"] < flows:
                        completion[flow["index"]] = t
                        outstanding -= 1
        elif kind == "inject":
            payload["pending"] -= 1
            moves.append(inject(payload))
        else:
            _, k, size = arrival(next_index)
            flow = {"uid": next_index, "class": k, "index": next_index, "to_inject": size,
                    "in_system": 0, "sent": 0, "pending": 0, "tag": [-math.inf] * J,
                    "queue": [0] * J}
            next_index += 1
            schedule(arrival(next_index)[0], J + K, "arrival", None)
            for _ in range(min(window, size)):
                packet, j = inject(flow)
                arrive(packet, j)
        for packet, j in moves:
            arrive(packet, j)
        start_idle(t)
    return np.array([completion[i] for i in range(flows)])
