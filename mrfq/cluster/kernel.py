"""The cluster event loop (SPEC §6): jobs of tasks on servers, plain arrays in and out.

Events are job arrivals (given, sorted) and task completions (a binary heap keyed by
(time, launch number)); a completion at the same instant as an arrival comes first. At
every event, while some pending task of some job fits on some server, the scheduler picks
a job (the largest *score*, ties: lowest class, then earliest arrival) and a server, and
launches one task there. The scores, larger first (x_i: tasks job i runs, k its class,
δ_k = max_r D_kr / C_r its dominant share per task of the pool C, w_k its weight):

* ``DRF``, ``PF`` (BR §3.1–3.2): φ_k(n) − x_i δ_k, the gap between the job's ideal
  dominant share — the fluid allocation φ of its class in the current state n (jobs per
  class in the system), :func:`mrfq.fluid.kernels.allocate_into` — and its current one;
* ``BMF`` (BR §3.3): the job's status, its minimum rank over its bottleneck resources,
  rank_ij = 1 + #{jobs whose weighted share x D_kj / (C_j w_k) of resource j exceeds job
  i's even after job i launches one more task} (BR's rank at task granularity: jobs
  within one task of each other tie, else an integer split of a bottleneck always ranks
  someone 2nd and starves the jobs alone on theirs); the bottleneck resources of class k
  are those saturated by the fluid BMF allocation in which class k holds the largest
  weighted share φ_k a_kj / w_k (BMF's definition), else all it uses. Equal statuses
  (ranks tie whenever shares do, e.g. from an empty cluster) are ordered by the gap to
  the ideal: status + (φ_k − x_i δ_k) / 2;
* ``FIFO``: −(job index), i.e. the earliest job whose task fits;
* ``DRF_ONLINE``, ``DRFH_FIRST_FIT``, ``DRFH_BEST_FIT``: −x_i δ_k / w_k, the lowest
  (global) dominant share;
* ``TSF`` (task share fairness, Wang, Liang, Li, SC'16): −x_i / (T_k w_k), the lowest
  task share, T_k = Σ_l min_r c_lr / D_kr the tasks a class-k job could run alone on the
  whole cluster ignoring placement constraints (the normaliser of the static TSF,
  :func:`mrfq.allocation.policies.tsf`), so a constrained job is not compensated for
  the servers it cannot use;
* ``SLOTS``: −(slots held) / w_k; every server l holds ⌊min_r c_lr / s_r⌋ slots of size
  s = (componentwise largest server) / k, a task takes ⌈max_r D_kr / s_r⌉ slots of one
  server.

The rules with an ideal (``DRF``, ``PF``, ``BMF``) hold resources for the most deprived
job: when the job of the largest score is below its ideal (φ_k > x_i δ_k) and its task
fits nowhere, nothing is launched on the servers it can use (allowed, and large enough
for its task) until it fits (otherwise the jobs of small tasks would take every freed
crumb and starve a job of large tasks below its share); the other servers, which it can
never use, go on to the others by their scores. The others are work-conserving: the job
of the largest score among those whose task fits.

Parallelism caps (every rule): a class-k job runs at most ``max_parallel[k]`` tasks at
once; at its cap it is not eligible, as a job with no task left to launch: the rule picks
the next eligible job by its score; a capped job never holds resources (its φ_k: fluid).

Placement constraints (every rule): a class-k task runs only on the servers l with
``allowed[k, l]``. Server: the first allowed one that fits (within a slack EPS c_lr),
except ``DRFH_BEST_FIT`` (least DRFH eq. 9 score, free capacity and demand as pool
shares normalised by the first resource the task needs; ties: lowest index) and ``SLOTS``
(the first with enough free slots). Jobs arriving at one instant are events in order.

Task durations: a counter-based hash of (seed, job, task index) through the law of the
task's class (:func:`mrfq.cluster.durations.task_duration`), the same under every scheduler
and in the slow twin (``tests/naive_cluster.py``); a trace's: ``task_time[job_first[j] + i]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mrfq import policies
from mrfq.cluster.bmf_status import bmf_status, bottlenecks
from mrfq.cluster.durations import D_EXPONENTIAL, D_FIXED, task_duration, uniform
from mrfq.cluster.heap import heap_pop, heap_push
from mrfq.fluid.kernels import allocate_into

_C = policies.codes(policies.CLUSTER)
DRF, PF, BMF, FIFO = _C.DRF, _C.PF, _C.BMF, _C.FIFO
DRF_ONLINE, DRFH_FIRST_FIT, DRFH_BEST_FIT, SLOTS, TSF = (
    _C.DRF_ONLINE, _C.DRFH_FIRST_FIT, _C.DRFH_BEST_FIT, _C.SLOTS, _C.TSF)
#: fit slack, relative (any units): demand ≤ free + EPS c_lr (an absolute 1e-9 put 1000
#: tasks of 1e-12 too many on a server of 1e-6; BENCHMARKS.md, "the cluster fit slack")
EPS = 1e-9


# inlined: once per server per lookup; not inlined, the 2 000-server Best-Fit run took 233
# CPU-s instead of 21 (BENCHMARKS.md, "Cluster simulator")
@njit(cache=True, inline="always")
def _fits(policy, capacity, free, free_slots, task_slots, demand, allowed, k, l):
    if not allowed[k, l]:
        return False
    if policy == SLOTS:
        return free_slots[l] >= task_slots[k]
    for r in range(free.shape[1]):
        if demand[k, r] > free[l, r] + EPS * capacity[l, r]:
            return False
    return True


@njit(cache=True)
def _server(policy, capacity, free, free_slots, task_slots, demand, allowed, total, k):
    """The server for a task of class k (module doc), -1 if it fits nowhere."""
    L, R = free.shape
    best, best_h = -1, np.inf
    first = 0
    while demand[k, first] <= 0.0:
        first += 1
    for l in range(L):
        if not _fits(policy, capacity, free, free_slots, task_slots, demand, allowed, k, l):
            continue
        if policy != DRFH_BEST_FIT:
            return l
        c1 = free[l, first] / total[first]
        if c1 <= 0.0:
            continue
        h = 0.0
        for r in range(R):
            h += abs((demand[k, r] / total[r]) / (demand[k, first] / total[first])
                     - (free[l, r] / total[r]) / c1)
        if h < best_h:
            best, best_h = l, h
    return best


@njit(cache=True, nogil=True)
def simulate(policy, fluid_policy, capacity, demand, weights, allowed, max_parallel,
             arrival, job_class, job_tasks, duration_mean, duration_code, duration_par,
             duration_table, duration_span, seed, slots_per_server, t_warm, t_end,
             sample_dt, n_samples, task_time, job_first, timeline_dt, timeline_bins, stop):
    """Run the cluster from empty until every job has finished.

    ``capacity`` (L×R), ``demand`` (K×R, per task), ``weights`` (K), ``allowed`` (K×L
    placement constraints), ``max_parallel`` (K, int64: a job's running tasks at most;
    uncapped: ≥ its tasks); jobs: ``arrival`` (sorted), ``job_class``, ``job_tasks`` (N ≥ 1);
    task durations of class k: mean ``duration_mean[k]``, law ``duration_code[k]`` with
    ``duration_par[k]`` and the rows ``duration_span[k, 0]:duration_span[k, 1]`` of
    ``duration_table`` (:func:`mrfq.cluster.durations.task_duration`). ``fluid_policy``:
    the fluid code whose φ is the ideal (DRF, PF, BMF rules). ``task_time`` (Σ_j N_j, or
    empty), ``job_first`` (J): given durations.

    Returns ``finish`` (per job), ``jobs_area`` (K: ∫ jobs in system dt over [t_warm,
    t_end]), ``busy`` (R: ∫ resources in use dt over the same window), ``samples``
    (n_samples × K tasks running per class at t = s·sample_dt), the number of task events
    (launches + completions), the ``timeline`` (B × K: ∫ tasks running of class k dt over
    bin b = [b·w, (b+1)·w), zero-sized unless ``timeline_bins`` > 0), its bin width w and
    ``done_by_end`` (per job: its tasks completed at t ≤ t_end). The timeline starts with
    w = ``timeline_dt`` and B = ``timeline_bins`` (even) bins; when the run outlasts B·w,
    adjacent bins are summed pairwise and w doubles (exact: integrals add), so B bins
    always cover [0, makespan]. ``stop`` (one int64), once set, ends the run unfinished
    (nogil: :func:`mrfq.executor.interruptible` runs it in a thread, sets it on Ctrl-C)."""
    L, R = capacity.shape
    K = demand.shape[0]
    J = arrival.size
    total = np.zeros(R)
    biggest = np.zeros(R)
    for l in range(L):
        for r in range(R):
            total[r] += capacity[l, r]
            biggest[r] = max(biggest[r], capacity[l, r])
    delta = np.zeros(K)
    alone = np.zeros(K)  # TSF's T_k
    a = np.zeros((K, R))
    for k in range(K):
        for l in range(L):
            m = np.inf
            for r in range(R):
                if demand[k, r] > 0.0:
                    m = min(m, capacity[l, r] / demand[k, r])
            alone[k] += m
        for r in range(R):
            delta[k] = max(delta[k], demand[k, r] / total[r])
        for r in range(R):
            a[k, r] = demand[k, r] / total[r] / delta[k]
    # slots: per server, and per task of each class
    slot = biggest / max(slots_per_server, 1)
    free_slots = np.zeros(L, dtype=np.int64)
    task_slots = np.ones(K, dtype=np.int64)
    if policy == SLOTS:
        for l in range(L):
            m = np.inf
            for r in range(R):
                m = min(m, capacity[l, r] / slot[r])
            free_slots[l] = int(np.floor(m + EPS))
        for k in range(K):
            m = 0.0
            for r in range(R):
                m = max(m, demand[k, r] / slot[r])
            task_slots[k] = max(1, int(np.ceil(m - EPS)))
    # a heap entry per running task, each δ_k ≥ min δ of a pool of ≤ (1 + EPS) C_r: ≤ R /
    # min δ + 0.1 (R / min δ ≤ 10^8 is checked; or the slots)
    most = 2 + L
    if policy == SLOTS:
        for l in range(L):
            most += free_slots[l]
    else:
        most += int(R / delta.min())
    h_time = np.empty(most)
    h_seq = np.empty(most, dtype=np.int64)
    h_job = np.empty(most, dtype=np.int64)
    h_srv = np.empty(most, dtype=np.int64)
    size = 0
    free = capacity.copy()
    launched = np.zeros(J, dtype=np.int64)
    room = np.zeros(J, dtype=np.int64)  # min(tasks to launch, cap − running): eligible if > 0
    done = np.zeros(J, dtype=np.int64)
    running = np.zeros(J, dtype=np.int64)
    slots_held = np.zeros(J, dtype=np.int64)
    finish = np.full(J, np.nan)
    active = np.empty(J, dtype=np.int64)
    n_active = 0
    counts = np.zeros(K)
    phi = np.zeros(K)
    bottleneck = np.zeros((K, R), dtype=np.bool_)
    class_running = np.zeros(K, dtype=np.int64)
    in_use = np.zeros(R)  # Σ_l resources in use (kept by the launches and completions)
    jobs_area = np.zeros(K)
    busy = np.zeros(R)
    samples = np.zeros((n_samples, K))
    next_sample = 0
    score, status, share = np.zeros(J), np.zeros(J), np.zeros(J)
    class_server = np.zeros(K, dtype=np.int64)
    ideal = policy == DRF or policy == PF or policy == BMF
    # usable[k, l]: class k may run a task on server l once it is empty (the servers a
    # held job's freed resources are kept on)
    usable = np.zeros((K, L), dtype=np.bool_)
    usable_all = np.ones(K, dtype=np.bool_)
    # the placement the scan reads: ``allowed``, but while a job is held (``held``) not the
    # servers it can use (a copy changed only then: passing either array per pass, or
    # testing the held class per server, cost every rule 10-45%)
    barred = allowed.copy()
    held = -1
    for k in range(K):
        for l in range(L):
            usable[k, l] = _fits(FIFO, capacity, capacity, free_slots, task_slots, demand,
                                 allowed, k, l)
            usable_all[k] = usable_all[k] and usable[k, l]
    # timeline: each class's running tasks are integrated lazily, from the last time its
    # count changed (tl_last[k]) to the next change, so an event costs O(bins crossed)
    n_bins = timeline_bins + (timeline_bins % 2) if timeline_bins > 0 else 0
    timeline = np.zeros((n_bins, K))
    tl_dt = np.array([timeline_dt if timeline_dt > 0 else 1.0])
    tl_last = np.zeros(K)
    done_by_end = np.zeros(J, dtype=np.int64)
    nxt = 0
    seq = 0
    events = 0
    now = 0.0
    while (nxt < J or size > 0) and stop[0] == 0:  # (stop: interrupted, results dropped)
        if size > 0 and (nxt >= J or h_time[0] <= arrival[nxt]):
            t = h_time[0]
        else:
            t = arrival[nxt]
        while next_sample < n_samples and next_sample * sample_dt <= t:
            for k in range(K):
                samples[next_sample, k] = class_running[k]
            next_sample += 1
        lo, hi = max(now, t_warm), min(t, t_end)
        if hi > lo:
            for k in range(K):
                jobs_area[k] += counts[k] * (hi - lo)
            for r in range(R):
                busy[r] += in_use[r] * (hi - lo)
        now = t
        changed = False
        if size > 0 and (nxt >= J or h_time[0] <= arrival[nxt]):
            j, l = h_job[0], h_srv[0]
            size = heap_pop(h_time, h_seq, h_job, h_srv, size)
            events += 1
            k = job_class[j]
            if n_bins > 0:
                add_running(timeline, tl_dt, tl_last, class_running, k, t)
            if t <= t_end:
                done_by_end[j] += 1
            for r in range(R):
                free[l, r] += demand[k, r]
                in_use[r] -= demand[k, r]
            free_slots[l] += task_slots[k]
            slots_held[j] -= task_slots[k]
            running[j] -= 1
            room[j] = min(job_tasks[j] - launched[j], max_parallel[k] - running[j])
            class_running[k] -= 1
            done[j] += 1
            if done[j] == job_tasks[j]:
                finish[j] = t
                counts[k] -= 1
                changed = True
                w = 0
                for i in range(n_active):
                    if active[i] != j:
                        active[w] = active[i]
                        w += 1
                n_active = w
        else:
            j = nxt
            nxt += 1
            active[n_active] = j
            n_active += 1
            counts[job_class[j]] += 1
            room[j] = min(job_tasks[j], max_parallel[job_class[j]])
            changed = True
        if changed and (policy == DRF or policy == PF or policy == BMF):
            allocate_into(fluid_policy, a, counts, weights, phi)
            if policy == BMF:
                bottlenecks(a, counts, phi, weights, bottleneck)
        # launch while some pending task fits somewhere
        if held >= 0:
            held = -1
            barred[:, :] = allowed
        while True:
            if policy == BMF:
                bmf_status(active, n_active, job_class, running, demand, total, weights,
                           bottleneck, share, status)
            pick, pick_server, top, top_s = -1, -1, -1, -np.inf
            for k in range(K):
                class_server[k] = -2  # not looked up yet in this round
            for i in range(n_active):
                j = active[i]
                k = job_class[j]
                if room[j] <= 0:
                    continue  # nothing to launch, or at its cap: not eligible
                if policy == DRF or policy == PF:
                    s = phi[k] - running[j] * delta[k]
                elif policy == BMF:
                    # status first; among equal statuses the larger gap to the ideal
                    # (fluid BMF) dominant share (a gap is < 1, a status step is 1)
                    s = status[j] + 0.5 * (phi[k] - running[j] * delta[k])
                elif policy == FIFO:
                    s = -float(j)
                elif policy == SLOTS:
                    s = -slots_held[j] / weights[k]
                elif policy == TSF:
                    s = -running[j] / (alone[k] * weights[k])
                else:
                    s = -running[j] * delta[k] / weights[k]
                if top < 0 or s > top_s or (s == top_s and (
                        k < job_class[top] or (k == job_class[top] and j < top))):
                    top, top_s = j, s
                if pick >= 0:
                    kp = job_class[pick]
                    if s < score[pick] or (s == score[pick] and (
                            k > kp or (k == kp and j > pick))):
                        continue
                if class_server[k] == -2:  # the server depends on the class only
                    class_server[k] = _server(policy, capacity, free, free_slots, task_slots,
                                              demand, barred, total, k)
                srv = class_server[k]
                if srv < 0:
                    continue
                score[j] = s
                pick, pick_server = j, srv
            if held >= 0 and top != held:  # another job is the most deprived now
                held = -1
                barred[:, :] = allowed
                continue
            if pick < 0:
                break
            kt = job_class[top]
            if top != pick and ideal and phi[kt] > running[top] * delta[kt] and held < 0:
                if usable_all[kt]:
                    break  # hold the freed resources for a job below its ideal share
                held = top  # hold only the servers it can use: look again without them
                for k in range(K):
                    for l in range(L):
                        barred[k, l] = allowed[k, l] and not usable[kt, l]
                continue
            k = job_class[pick]
            if n_bins > 0:
                add_running(timeline, tl_dt, tl_last, class_running, k, t)
            for r in range(R):
                free[pick_server, r] -= demand[k, r]
                in_use[r] += demand[k, r]
            free_slots[pick_server] -= task_slots[k]
            slots_held[pick] += task_slots[k]
            if task_time.size > 0:
                d = task_time[job_first[pick] + launched[pick]]
            elif duration_code[k] == D_EXPONENTIAL:  # (task_duration's, kept in the loop:
                # the call cost the pooled runs 9%)
                d = -duration_mean[k] * np.log(uniform(seed, pick, launched[pick]))
            elif duration_code[k] == D_FIXED:
                d = duration_mean[k]
            else:
                d = task_duration(duration_code[k], duration_par[k], duration_table,
                                  duration_span[k, 0], duration_span[k, 1],
                                  duration_mean[k], seed, pick, launched[pick])
            if size == most:  # never (the bound above); Numba does not check bounds
                raise RuntimeError("cluster kernel: its event heap is full (a bug)")
            size = heap_push(h_time, h_seq, h_job, h_srv, size, t + d, seq, pick, pick_server)
            seq += 1
            launched[pick] += 1
            running[pick] += 1
            room[pick] -= 1
            class_running[k] += 1
            events += 1
    # the samples after the last event stay 0: every task has ended
    if n_bins > 0:
        for k in range(K):  # every class's tasks have ended: nothing left to add
            add_running(timeline, tl_dt, tl_last, class_running, k, now)
    return finish, jobs_area, busy, samples, events, timeline, tl_dt[0], done_by_end


# here, not in timeline.py: Numba's cache of simulate is keyed on this file only, so a
# helper in another module could change without recompiling simulate
@njit(cache=True)
def add_running(timeline, dt, last, running, k, t):
    """Add class k's running tasks × time over [last[k], t] to column k of ``timeline``
    (B × K, bin b = [b·w, (b+1)·w), w = dt[0]) and set last[k] = t. While t lies past
    the bins, adjacent bins are summed pairwise and w doubles (integrals add, so this
    is exact); call it before every change of ``running[k]`` and once at the end."""
    B = timeline.shape[0]
    while t >= B * dt[0]:
        for b in range(B // 2):
            for c in range(timeline.shape[1]):
                timeline[b, c] = timeline[2 * b, c] + timeline[2 * b + 1, c]
        for b in range(B // 2, B):
            for c in range(timeline.shape[1]):
                timeline[b, c] = 0.0
        dt[0] *= 2.0
    n = running[k]
    a = last[k]
    last[k] = t
    if n == 0 or t <= a:
        return
    w = dt[0]
    b = min(int(a / w), B - 1)
    while True:
        edge = (b + 1) * w
        if edge >= t or b == B - 1:
            timeline[b, k] += n * (t - a)
            return
        if edge > a:  # (a rounded into bin b from just past its edge: nothing to add)
            timeline[b, k] += n * (edge - a)
            a = edge
        b += 1
