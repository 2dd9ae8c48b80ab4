"""The packet model written the way a user would write it with SimPy (the baseline).

Same model as mrfq's kernel for memoryless DRFQ, PF and BMF (SPEC §3): resources in
tandem, each a PriorityResource ordered by the SFQ start tag (ties: request order), flows
with a window of W packets, Poisson arrivals, geometric sizes. Not bit-identical to the
kernel (SimPy orders simultaneous events its own way), statistically the same model.
"""

from __future__ import annotations

import math

import numpy as np
import simpy


def simulate_simpy(requirements: np.ndarray, class_loads: np.ndarray, policy: str, *,
                   flows: int, mean_size: float, window: int, seed: int) -> dict:
    """Returns per-flow arrays (class, size, arrival, completion) and the service count."""
    rng = np.random.default_rng(seed)
    K, J = requirements.shape
    rates = class_loads / mean_size
    env = simpy.Environment()
    resources = [simpy.PriorityResource(env, capacity=1) for _ in range(J)]
    vtime = [0.0] * J
    state = {"vglobal": 0.0, "services": 0, "outstanding": flows}
    done = env.event()
    out = {"class": np.zeros(flows, int), "size": np.zeros(flows, int),
           "arrival": np.zeros(flows), "completion": np.full(flows, np.nan)}

    def packet(flow):
        k = flow["class"]
        s = requirements[k]
        if policy == "drfq":
            tag = max(state["vglobal"], flow["tag"][0] + s.max())
            flow["tag"][0] = tag
        for j in range(J):
            if s[j] <= 0:
                continue
            flow["queue"][j] += 1
            if policy == "bmf":
                tag = max(vtime[j], flow["tag"][j] + s[j])
                flow["tag"][j] = tag
            elif policy == "pf":
                tag = max(vtime[j], flow["tag"][j] + s[j] / flow["queue"][j])
                flow["tag"][j] = tag
            with resources[j].request(priority=tag) as request:
                yield request
                if policy == "drfq":
                    state["vglobal"] = max(state["vglobal"], tag)
                else:
                    vtime[j] = tag
                yield env.timeout(s[j])
            flow["queue"][j] -= 1
            state["services"] += 1
        flow["in_system"] -= 1
        if flow["to_send"] > 0:
            flow["to_send"] -= 1
            flow["in_system"] += 1
            env.process(packet(flow))
        elif flow["in_system"] == 0:
            i = flow["index"]
            if i < flows:
                out["completion"][i] = env.now
                state["outstanding"] -= 1
                if state["outstanding"] == 0:
                    done.succeed()

    def arrivals():
        index = 0
        while True:
            yield env.timeout(rng.exponential(1.0 / rates.sum()))
            k = int(rng.choice(K, p=rates / rates.sum()))
            size = int(rng.geometric(1.0 / mean_size))
            flow = {"class": k, "index": index, "to_send": size, "in_system": 0,
                    "tag": [-math.inf] * J, "queue": [0] * J}
            if index < flows:
                out["class"][index], out["size"][index] = k, size
                out["arrival"][index] = env.now
            index += 1
            burst = min(window, size)
            flow["to_send"] -= burst
            flow["in_system"] += burst
            for _ in range(burst):
                env.process(packet(flow))

    env.process(arrivals())
    env.run(until=done)
    out["services"] = state["services"]
    return out
