"""Slow, plain-Python twin of the cluster kernel (SPEC §6), written from the rules'
definitions: jobs are dicts, events a heapq of (time, launch number), and at every event
the scheduler sorts the jobs whose next task fits somewhere by (−score, class, arrival)
and launches for the first. It shares nothing with :mod:`mrfq.cluster.kernel` but the
duration hash (so that both draw the same task durations) and the public fluid
allocator (the ideal allocation φ)."""

import heapq
import math

from mrfq import policies
from mrfq.fluid import allocate

MASK = (1 << 64) - 1
NAME = policies.named(policies.CLUSTER)


def uniform(seed, job, task):
    z = (seed * 0x9E3779B97F4A7C15 + job * 0xBF58476D1CE4E5B9
         + task * 0x94D049BB133111EB + 1) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return ((z >> 11) + 0.5) / 9007199254740992.0


def draw(law, u, v):
    """A mean-1 draw of a flow-size law from two uniforms, each law from its definition
    (mrfq.sizes' module doc): H2 with balanced means, p_1 = (1 + √((c² − 1)/(c² + 1)))/2,
    phase i of rate 2 p_i, chosen by v; lognormal exp(σ Z − σ²/2), Z by Box–Muller from
    (u, v); Pareto by inversion, x_m = (α − 1)/α, and bounded by H: the inverse of the
    CDF truncated to [x_m, H], divided by that law's mean ∫ x · c x^(−α−1) dx over [x_m,
    H], c = α x_m^α / (1 − (x_m/H)^α); empirical: row ⌊u n⌋; CDF table: linear between the points
    (u below the first point's F: its size)."""
    name, p = law.distribution, law.params
    if name == "hyperexponential":
        c2 = p["scv"]
        p1 = (1 + math.sqrt((c2 - 1) / (c2 + 1))) / 2
        rate = 2 * p1 if v < p1 else 2 * (1 - p1)
        return -math.log(u) / rate
    if name == "lognormal":
        s = p["sigma"]
        z = math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * v)
        return math.exp(s * z - s * s / 2)
    if name == "pareto":
        alpha, high = p["shape"], p.get("max")
        low = (alpha - 1) / alpha
        if high is None:
            return low * u ** (-1 / alpha)
        cut = 1 - (low / high) ** alpha
        density = alpha * low ** alpha / cut  # the truncated law's density: this / x^(α+1)
        mean = density * (high ** (1 - alpha) - low ** (1 - alpha)) / (1 - alpha)
        return low * (1 - u * cut) ** (-1 / alpha) / mean
    if name == "empirical":
        values = list(law.values)
        return values[min(int(u * len(values)), len(values) - 1)]
    sizes, cdf = list(law.values[0]), list(law.values[1])  # a CDF table
    if u < cdf[0]:
        return sizes[0]
    for i in range(1, len(cdf)):
        if cdf[i - 1] <= u < cdf[i]:
            return sizes[i - 1] + (u - cdf[i - 1]) / (cdf[i] - cdf[i - 1]) * (
                sizes[i] - sizes[i - 1])
    return sizes[-1]


def naive_cluster(policy, capacity, demand, weights, arrival, job_class, job_tasks,
                  duration_mean, exponential=True, seed=1, slots_per_server=14,
                  allowed=None, task_time=None, log=None, max_parallel=None):
    """Finish time of every job and the number of task events. ``allowed[k][l]``: class
    k may use server l (default: every server); ``exponential``: the duration law
    (True: exponential, False: fixed) of every class, or a list with one per class, each
    True, False or a :class:`mrfq.sizes.SizeLaw` (:func:`draw`);
    ``task_time``: given task durations,
    job after job; ``log``: a list that gets (job, class, start, end) of every task;
    ``max_parallel[k]``: a class-k job never runs more tasks at once (None or inf: no
    cap) — one at its cap is left out of the jobs the scheduler may pick, as a job with
    nothing left to launch is."""
    capacity = [list(map(float, row)) for row in capacity]
    demand = [list(map(float, row)) for row in demand]
    L, R, K = len(capacity), len(capacity[0]), len(demand)
    total = [0.0] * R
    for row in capacity:
        for r in range(R):
            total[r] += row[r]
    biggest = [max(row[r] for row in capacity) for r in range(R)]
    delta = [0.0] * K
    for k in range(K):
        for r in range(R):
            delta[k] = max(delta[k], demand[k][r] / total[r])
    a = [[demand[k][r] / total[r] / delta[k] for r in range(R)] for k in range(K)]
    allowed = [[True] * L for _ in range(K)] if allowed is None else allowed
    cap = [math.inf] * K if max_parallel is None else [float(c) for c in max_parallel]
    # TSF: tasks a class-k job could run alone on the whole cluster, ignoring placement
    alone = [sum(min(c[r] / demand[k][r] for r in range(R) if demand[k][r] > 0)
                 for c in capacity) for k in range(K)]
    first_task = [sum(job_tasks[:j]) for j in range(len(job_tasks))]
    realises = policies.get(policies.CLUSTER, policy).realises
    ideal = policy in (NAME.DRF, NAME.PF, NAME.BMF)
    # slots (kernel doc): slots per server and per task
    slot = [b / max(slots_per_server, 1) for b in biggest]
    free_slots = [math.floor(min(c[r] / slot[r] for r in range(R)) + 1e-9) for c in capacity]
    task_slots = [max(1, math.ceil(max(d[r] / slot[r] for r in range(R)) - 1e-9))
                  for d in demand]
    free = [row[:] for row in capacity]
    jobs = []
    heap = []
    seq = events = 0
    counts = [0.0] * K
    phi = [0.0] * K
    nxt = 0

    def fits(k, l):
        if not allowed[k][l]:
            return False
        if policy == NAME.SLOTS:
            return free_slots[l] >= task_slots[k]
        # up to a rounding error: 1e-9 of the server's capacity more
        return all(demand[k][r] <= free[l][r] + 1e-9 * capacity[l][r] for r in range(R))

    def usable(k, l):  # once empty, server l could run a task of class k
        return allowed[k][l] and all(demand[k][r] <= capacity[l][r] * (1 + 1e-9)
                                     for r in range(R))

    def server(k, barred=()):
        ok = [l for l in range(L) if fits(k, l) and l not in barred]
        if policy != NAME.DRFH_BEST_FIT or not ok:
            return ok[0] if ok else -1
        first = next(r for r in range(R) if demand[k][r] > 0)
        best, best_h = -1, math.inf
        for l in ok:  # DRFH eq. (9), shares of the pool
            c1 = free[l][first] / total[first]
            if c1 <= 0:
                continue
            h = sum(abs((demand[k][r] / total[r]) / (demand[k][first] / total[first])
                        - (free[l][r] / total[r]) / c1) for r in range(R))
            if h < best_h:
                best, best_h = l, h
        return best

    def bottlenecks():
        out = [[False] * R for _ in range(K)]
        for r in range(R):
            used = 0.0
            for k in range(K):
                used += counts[k] * phi[k] * a[k][r]
            # BMF's largest share on a resource: weighted, φ_k a_kr / w_k
            present = [phi[k] * a[k][r] / weights[k] for k in range(K) if counts[k] > 0]
            top = max(present) if present else 0.0
            if used < 1 - 1e-9:
                continue
            for k in range(K):
                if counts[k] > 0 and a[k][r] > 0 and (
                        phi[k] * a[k][r] / weights[k] >= top * (1 - 1e-9)):
                    out[k][r] = True
        for k in range(K):
            if not any(out[k]):
                out[k] = [a[k][r] > 0 for r in range(R)]
        return out

    def score(job, live, neck):
        k = job["k"]
        if policy in (NAME.DRF, NAME.PF):
            return phi[k] - job["running"] * delta[k]
        if policy == NAME.BMF:
            ranks = []
            for r in range(R):
                if neck[k][r]:  # weighted shares of resource r: x D_kr / (C_r w_k)
                    mine = job["running"] * demand[k][r] / total[r] / weights[k]
                    ahead = mine + demand[k][r] / total[r] / weights[k] * (1.0 + 1e-9)
                    ranks.append(1 + sum(
                        1 for o in live
                        if o["running"] * demand[o["k"]][r] / total[r] / weights[o["k"]]
                        > ahead))
            return min(ranks) + 0.5 * (phi[k] - job["running"] * delta[k])
        if policy == NAME.FIFO:
            return -job["id"]
        if policy == NAME.SLOTS:
            return -job["slots"] / weights[k]
        if policy == NAME.TSF:
            return -job["running"] / (alone[k] * weights[k])
        return -job["running"] * delta[k] / weights[k]

    while nxt < len(arrival) or heap:
        if heap and (nxt >= len(arrival) or heap[0][0] <= arrival[nxt]):
            t, _, j, l = heapq.heappop(heap)
            events += 1
            job = jobs[j]
            k = job["k"]
            for r in range(R):
                free[l][r] += demand[k][r]
            free_slots[l] += task_slots[k]
            job["slots"] -= task_slots[k]
            job["running"] -= 1
            job["done"] += 1
            if job["done"] == job["tasks"]:
                job["finish"] = t
                counts[k] -= 1
                if ideal:
                    phi = list(allocate(realises, a, counts, weights))
        else:
            t = arrival[nxt]
            jobs.append({"id": nxt, "k": int(job_class[nxt]), "tasks": int(job_tasks[nxt]),
                         "launched": 0, "running": 0, "done": 0, "slots": 0,
                         "finish": math.nan})
            counts[int(job_class[nxt])] += 1
            nxt += 1
            if ideal:
                phi = list(allocate(realises, a, counts, weights))
        neck = bottlenecks() if policy == NAME.BMF else None
        while True:
            live = [job for job in jobs if job["done"] < job["tasks"]]
            pending = [job for job in live if job["launched"] < job["tasks"]
                       and job["running"] < cap[job["k"]]]
            ready = [job for job in pending if server(job["k"]) >= 0]
            if not ready:
                break

            def order(o, live=live, neck=neck):
                return (-score(o, live, neck), o["k"], o["id"])

            top = min(pending, key=order)
            barred = ()
            if ideal and server(top["k"]) < 0 and phi[top["k"]] > top["running"] * delta[
                    top["k"]]:
                # held for the most deprived job: the servers it can use take no task;
                # those it can never use go on to the others
                barred = [l for l in range(L) if usable(top["k"], l)]
                ready = [job for job in pending if server(job["k"], barred) >= 0]
                if not ready:
                    break
            job = min(ready, key=order)
            k, l = job["k"], server(job["k"], barred)
            for r in range(R):
                free[l][r] -= demand[k][r]
            free_slots[l] -= task_slots[k]
            job["slots"] += task_slots[k]
            if task_time is not None:
                d = task_time[first_task[job["id"]] + job["launched"]]
            else:
                u = uniform(seed, job["id"], job["launched"])
                # one law for every class, or one per class (a list)
                law = exponential[k] if isinstance(exponential, list) else exponential
                if law is True or law is False:
                    d = -duration_mean[k] * math.log(u) if law else duration_mean[k]
                else:
                    d = duration_mean[k] * draw(law, u, uniform(seed, job["id"],
                                                                job["launched"] + 2**40))
            heapq.heappush(heap, (t + d, seq, job["id"], l))
            if log is not None:
                log.append((job["id"], k, t, t + d))
            seq += 1
            job["launched"] += 1
            job["running"] += 1
            events += 1
    return [job["finish"] for job in jobs], events


def naive_timeline(log, n_classes, dt, n_bins):
    """From a twin's task log: [b][k] = ∫ tasks of class k running dt over [b·dt,
    (b+1)·dt), task by task and bin by bin (the definition, no bookkeeping)."""
    out = [[0.0] * n_classes for _ in range(n_bins)]
    for _, k, start, end in log:
        for b in range(n_bins):
            lo, hi = max(start, b * dt), min(end, (b + 1) * dt)
            if hi > lo:
                out[b][k] += hi - lo
    return out


def naive_done_by(log, n_jobs, horizon):
    """Per job, its tasks ending at or before ``horizon`` (from a twin's task log)."""
    done = [0] * n_jobs
    for j, _, _, end in log:
        if end <= horizon:
            done[j] += 1
    return done
