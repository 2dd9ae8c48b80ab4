"""Best-Fit vs First-Fit DRFH (issue 24, DRFH §V-B and §VI, Fig. 5): in which regime, if
any, does Best-Fit give higher CPU and memory utilisation and shorter jobs than First-Fit
on every seed? A research script, not a benchmark of speed.

Workload: :func:`mrfq.cluster.trace.google_like` on servers drawn from DRFH's Table I
(:func:`mrfq.cluster.servers.draw_servers`), both with the same seed; the same jobs and
task durations under both rules (paired). A regime fixes

* ``servers`` (the paper: 2 000) and ``jobs``;
* ``load``: offered load of the dominant resource (memory): job rate × expected memory
  work per job (task-seconds × request, from a 200 000-job sample of the generator) /
  (servers × expected memory per Table I server); ``None`` keeps the repository run's
  rate 0.4 / s on 100 servers (≈ 2.5);
* ``scale``: every request multiplied by it (the rate divided by it, so the load holds):
  tasks smaller relative to the servers;
* ``warm``: utilisation is measured over [warm · T, T], T the last arrival (the
  repository run: warm = 0), from the run's timeline (256 bins of T / 256,
  coarsened alike when a run outlasts 1 024 of them); ``above``:
  the fraction of those bins in which Best-Fit's utilisation is ≥ First-Fit's for
  both resources (the paper: "uniformly higher ... at all times").

Mechanism (``--mechanism``): a Numba re-implementation of the kernel's DRFH rules
(:mod:`mrfq.cluster.kernel` doc; checked here to give the kernel's finish times bit for
bit) that counts, per launch, the servers where the launched task fits, whether
First-Fit's and Best-Fit's server differ, and whether the chosen server is the one whose
task completion triggered this event.

    PYTHONPATH=. nice -n 10 python benchmarks/drfh_fit_regimes.py [--seeds 10]
        [--first-seed 1] [--regimes a,b] [--slots REGIME] [--mechanism REGIME]

Measured (10 seeds, Best-Fit − First-Fit, mean [min, max]; CPU, memory in points):
repo 100 srv: +0.13 [−0.35, +0.46], −0.25 [−0.83, +0.20], JCT +1.1 s [−8.9, +16.7];
100 srv load 1.0: −0.48 [−0.70, −0.26], −1.09 [−1.66, −0.76], JCT +10 s [+4, +24];
2000 srv load 1.2: −0.42 [−0.48, −0.30], −1.25 [−1.51, −0.93], JCT +8 s [+4, +10];
2000 srv load 2.5: +0.88 [+0.57, +1.08], −0.09 [−0.15, −0.02], JCT +3 s [+0.2, +4.9].
Larger tasks (40 seeds, 100 srv, load 1.2, mean ± 1.96 s.e.): requests x1.25 CPU −0.00 ±
0.10, mem +0.02 ± 0.27, JCT −0.5 ± 17.9 s; x1.5 +0.16 ± 0.11, +0.19 ± 0.26, +1.3 ± 15.9;
x1.75 +0.14 ± 0.14, +0.26 ± 0.28, −16.9 ± 24.6; x2 −0.37 ± 0.16, −0.94 ± 0.44, +51 ± 37
(x1: −0.37 ± 0.11, −0.90 ± 0.23, +15.1 ± 3.9): level at x1.25–1.75 on these seeds (at
x1.75 all three means on Best-Fit's side, none beyond its interval), First-Fit ahead at
x1 and x2.
Confirmed on fresh seeds (``--first-seed``; decided beforehand: ahead if all three 95%
intervals are on Best-Fit's side): x1.75, seeds 41–240: +0.14 ± 0.07, +0.39 ± 0.14, −30.6
± 10.9 s; seeds 241–440 with ``--slots``: +0.17 ± 0.06, +0.54 ± 0.15, −26.8 ± 13.4 s, and
First-Fit − best slots +8.84 ± 0.47, +13.81 ± 0.42, −1843 ± 271 s (200/200 seeds); x1.5,
seeds 41–240: +0.09 ± 0.05, +0.09 ± 0.12, +3.1 ± 6.6 s. So at x1.75 Best-Fit is ahead
of First-Fit in the mean on all three, in both confirmation sets (DRFH's ordering), but
not seed by seed (ahead on all three on 85 of 200 seeds) nor bin by bin; at x1.5 the two
are level on memory and JCT, and at the generator's own sizes (x1) First-Fit is ahead.
No regime has Best-Fit ≥ First-Fit on both resources and JCT on every seed. Mechanism:
every launch at a completion event goes on the freed server (forced); launches at
arrivals (43–86% of all) have a choice, the two rules would put 39–84% of all launches on
different servers, and Best-Fit picks emptier servers there.
Against a uniformly random fitting server (``--mechanism``'s fourth rule, the "randomly
picking a server" DRFH §V sets Best-Fit against), Best-Fit − random fit: repo 100 srv
+0.17 [−0.49, +0.60], +0.09 [−0.43, +0.54], JCT −3.1 s [−30, +16]; 100 srv load 1.2
+0.12 [−0.30, +0.52], +0.29 [−0.66, +0.96], JCT −13 s [−27, +1.4]: ahead on average,
not on every seed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from mrfq import policies
from mrfq.cluster.heap import heap_pop, heap_push
from mrfq.cluster.model import run_jobs
from mrfq.cluster.servers import draw_servers, table_i
from mrfq.cluster.trace import Trace, google_like, trace_model

NAME = policies.named(policies.CLUSTER)
BF, FF = NAME.DRFH_BEST_FIT, NAME.DRFH_FIRST_FIT
BINS = 256
EPS = 1e-9  # as the kernel's
#: name: (servers, jobs, load, scale, warm)
REGIMES = {
    "repo (100 srv, rate 0.4)": (100, 2000, None, 1.0, 0.0),
    "repo, window 0.25T..T": (100, 2000, None, 1.0, 0.25),
    "100 srv, load 0.8": (100, 2000, 0.8, 1.0, 0.25),
    "100 srv, load 1.0": (100, 2000, 1.0, 1.0, 0.25),
    "100 srv, load 1.2": (100, 2000, 1.2, 1.0, 0.25),
    "100 srv, load 1.5": (100, 2000, 1.5, 1.0, 0.25),
    "100 srv, load 1.2, requests x0.4": (100, 5000, 1.2, 0.4, 0.25),
    "100 srv, load 1.2, requests x1.25": (100, 1600, 1.2, 1.25, 0.25),
    "100 srv, load 1.2, requests x1.5": (100, 1400, 1.2, 1.5, 0.25),
    "100 srv, load 1.2, requests x1.75": (100, 1150, 1.2, 1.75, 0.25),
    "100 srv, load 1.2, requests x2": (100, 1000, 1.2, 2.0, 0.25),
    "2000 srv, load 1.2": (2000, 20000, 1.2, 1.0, 0.25),
    "2000 srv, load 2.5": (2000, 20000, 2.5, 1.0, 0.25),
}


def _per_job_work() -> np.ndarray:
    """Expected (CPU, memory) task-seconds × request per google_like job (scale 1)."""
    trace = google_like(200_000, 0, 1.0)
    cls = np.repeat(trace.job_class, trace.job_tasks)
    return (trace.task_time[:, None] * trace.demand[cls]).sum(axis=0) / trace.job_tasks.size


def workload(regime: tuple, seed: int, work: np.ndarray) -> tuple[Trace, np.ndarray]:
    """The trace and the servers of a regime and seed."""
    servers, jobs, load, scale, _ = regime
    if load is None:
        rate = 0.4
    else:
        counts, configs = table_i()
        server = (counts[:, None] * configs).sum(axis=0) / counts.sum()
        rate = load * servers * server[1] / (work[1] * scale)
    trace = google_like(jobs, seed, rate)
    trace.demand = trace.demand * scale
    return trace, draw_servers(servers, seed)


def measure(trace: Trace, capacity: np.ndarray, policy: str, **options) -> dict:
    """One run: its timeline, utilisation over [0, T] (the kernel's), mean JCT, CPU-s
    (``options``: the model's, e.g. ``slots_per_server``)."""
    end = float(trace.arrival[-1])
    model = trace_model(trace, capacity, policy, **options)
    t0 = time.process_time()
    run = run_jobs(model, trace.arrival, trace.job_class, trace.job_tasks,
                   window=(0.0, end), task_time=trace.task_time, timeline_dt=end / BINS)
    cpu = time.process_time() - t0
    full = run.busy / end / capacity.sum(axis=0)
    return {"line": run.timeline, "full": full, "cpu": cpu,
            "jct": float((run.finish - trace.arrival).mean())}


def window(bf: dict, ff: dict, end: float, warm: float) -> tuple[np.ndarray, ...]:
    """Both runs' utilisation per bin over [warm T, T], on common bins (a run outlasting
    1024 bins doubles its bin width), and their means."""
    dt = max(bf["line"].dt, ff["line"].dt)
    out = []
    for run in (bf, ff):
        line = run["line"].coarsen(dt) if run["line"].dt < dt else run["line"]
        n = int(round(end / dt))
        per_bin = line.utilisation[:n]
        assert np.allclose(per_bin.mean(axis=0), run["full"], rtol=1e-6)
        out.append(per_bin[int(round(warm * n)):])
    return out[0], out[1], out[0].mean(axis=0), out[1].mean(axis=0)


def regimes(names: list[str], seeds: int, first_seed: int = 1) -> None:
    work = _per_job_work()
    print(f"expected work per job (CPU, memory task-s x request): {work.round(1).tolist()}")
    print("paired differences Best-Fit - First-Fit over seeds: mean [min, max]; "
          "util in points, JCT in s; 'above' = share of bins with BF >= FF on both")
    for name in names:
        regime = REGIMES[name]
        rows = []
        for seed in range(first_seed, first_seed + seeds):
            trace, capacity = workload(regime, seed, work)
            bf = measure(trace, capacity, BF)
            ff = measure(trace, capacity, FF)
            b_bins, f_bins, b_util, f_util = window(bf, ff, float(trace.arrival[-1]),
                                                    regime[4])
            above = np.all(b_bins >= f_bins - 1e-12, axis=1).mean()
            rows.append((*(100 * (b_util - f_util)), bf["jct"] - ff["jct"], above,
                         *(100 * f_util), ff["jct"], bf["cpu"] + ff["cpu"]))
            print(f"  {name} seed {seed}: BF-FF CPU {rows[-1][0]:+.2f} mem "
                  f"{rows[-1][1]:+.2f} JCT {rows[-1][2]:+.1f} s above {above:.2f} | FF CPU "
                  f"{rows[-1][4]:.1f}% mem {rows[-1][5]:.1f}% JCT {rows[-1][6]:.0f} s "
                  f"({rows[-1][7]:.1f} CPU-s)", flush=True)
        a = np.array(rows)

        def cell(c, a=a, f="+.2f"):
            return f"{a[:, c].mean():{f}} [{a[:, c].min():{f}}, {a[:, c].max():{f}}]"
        def spread(c, a=a, f="+.2f"):  # mean ± 1.96 standard errors over the seeds
            half = 1.96 * a[:, c].std(ddof=1) / np.sqrt(len(a))
            return f"{a[:, c].mean():{f}} ± {half:{f[1:]}}"
        print(f"  {name}, seeds {first_seed}-{first_seed + seeds - 1}, mean ± 1.96 s.e.: "
              f"CPU {spread(0)}, memory {spread(1)}, JCT {spread(2, f='+.1f')} s")
        wins = int(np.sum((a[:, 0] >= 0) & (a[:, 1] >= 0) & (a[:, 2] <= 0)))
        print(f"| {name} | {cell(0)} | {cell(1)} | {cell(2, f='+.1f')} | "
              f"{cell(3, f='.2f')} | {wins}/{seeds} | FF {a[:, 4].mean():.1f}% / "
              f"{a[:, 5].mean():.1f}%, JCT {a[:, 6].mean():.0f} s |", flush=True)


#: slots per largest server tried for the slot scheduler: reproduction/drfh_utilisation's,
#: and finer ones, since utilisation there still rose at 80
SLOT_SIZES = (8, 14, 20, 28, 40, 56, 80, 160, 320, 640, 1280, 2560)


def windowed(run: dict, end: float, warm: float) -> np.ndarray:
    """A run's mean utilisation per resource over [warm T, T] from its own timeline."""
    line = run["line"]
    n = int(round(end / line.dt))
    return line.utilisation[:n][int(round(warm * n)):].mean(axis=0)


def with_slots(name: str, seeds: int, first_seed: int = 1) -> None:
    """DRFH's whole utilisation claim in one regime: Best-Fit, First-Fit and the slot
    scheduler at its best k per seed (the largest CPU + memory utilisation over the
    window, as reproduction/drfh_utilisation/run.py), on the same jobs and servers;
    utilisation over [warm T, T] and mean JCT, then the paired differences BF − FF and
    FF − best slots, mean ± 1.96 standard errors over the seeds."""
    work = _per_job_work()
    regime = REGIMES[name]
    rows = []
    for seed in range(first_seed, first_seed + seeds):
        trace, capacity = workload(regime, seed, work)
        end = float(trace.arrival[-1])
        runs = {"bf": measure(trace, capacity, BF), "ff": measure(trace, capacity, FF)}
        slots = {k: measure(trace, capacity, NAME.SLOTS, slots_per_server=k)
                 for k in SLOT_SIZES}
        best = max(slots, key=lambda k: windowed(slots[k], end, regime[4]).sum())
        runs["slots"] = slots[best]
        row = []
        for run in runs.values():
            row += [*(100 * windowed(run, end, regime[4])), run["jct"]]
        rows.append(row + [best])
        print(f"  seed {seed}: " + " | ".join(
            f"{who} CPU {row[3 * i]:.1f}% mem {row[3 * i + 1]:.1f}% JCT {row[3 * i + 2]:.0f} s"
            for i, who in enumerate(("BF", "FF", f"slots k={best}"))), flush=True)
    a = np.array(rows)

    def spread(x, f="+.2f"):
        half = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
        return f"{x.mean():{f}} ± {half:{f.lstrip('+')}}"
    print(f"{name}, seeds {first_seed}-{first_seed + seeds - 1}, mean ± 1.96 s.e.:")
    for i, who in enumerate(("Best-Fit", "First-Fit", "slots (best k)")):
        print(f"  {who}: CPU {spread(a[:, 3 * i], '.2f')}%, memory "
              f"{spread(a[:, 3 * i + 1], '.2f')}%, JCT {spread(a[:, 3 * i + 2], '.1f')} s")
    print("  best k: " + ", ".join(f"{k}: {int(np.sum(a[:, -1] == k))}" for k in SLOT_SIZES))
    for label, (x, y) in (("Best-Fit - First-Fit", (0, 1)),
                          ("First-Fit - slots", (1, 2))):
        d = a[:, 3 * x:3 * x + 3] - a[:, 3 * y:3 * y + 3]
        print(f"  {label}: CPU {spread(d[:, 0])}, memory {spread(d[:, 1])}, JCT "
              f"{spread(d[:, 2], '+.1f')} s; seeds ahead on all three "
              f"{int(np.sum((d[:, 0] >= 0) & (d[:, 1] >= 0) & (d[:, 2] <= 0)))}/{len(d)}")


@njit(cache=False)
def _server(mode, free, demand, total, k, salt=0):
    """(chosen, First-Fit's, Best-Fit's server, servers that fit) for a class-k task;
    chosen by ``mode``: 0 First-Fit, 1 Best-Fit (least eq. (9) score, the kernel's), 2 a
    diagnostic, not DRFH's: the tightest fit (least Σ_r (free − demand) / pool); 3 a
    uniformly random fitting server (a splitmix64 hash of ``salt``, the launch number)."""
    L, R = free.shape
    first = 0
    while demand[k, first] <= 0.0:
        first += 1
    best, best_h, first_fit, n, tight, tight_h = -1, np.inf, -1, 0, -1, np.inf
    for l in range(L):
        ok = True
        for r in range(R):
            if demand[k, r] > free[l, r] + EPS:
                ok = False
        if not ok:
            continue
        n += 1
        if first_fit < 0:
            first_fit = l
        left = 0.0
        for r in range(R):
            left += (free[l, r] - demand[k, r]) / total[r]
        if left < tight_h:
            tight, tight_h = l, left
        c1 = free[l, first] / total[first]
        if c1 <= 0.0:
            continue
        h = 0.0
        for r in range(R):
            h += abs((demand[k, r] / total[r]) / (demand[k, first] / total[first])
                     - (free[l, r] / total[r]) / c1)
        if h < best_h:
            best, best_h = l, h
    if mode == 3 and n > 0:  # a uniformly random fitting server (hash of salt)
        z = np.uint64(salt) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        pick = int(z % np.uint64(n))
        for l in range(L):
            ok = True
            for r in range(R):
                if demand[k, r] > free[l, r] + EPS:
                    ok = False
            if ok:
                if pick == 0:
                    return l, first_fit, best, n
                pick -= 1
    chosen = first_fit if mode == 0 else (best if mode == 1 else tight)
    return chosen, first_fit, best, n


@njit(cache=False)
def drfh_counted(mode, capacity, demand, arrival, job_class, job_tasks, task_time,
                 job_first, t0, t1):
    """DRFH (per job, work-conserving, unit weights) as the kernel runs it, the server by
    ``mode`` (:func:`_server`); returns the finish times, counts (launches, launches with
    > 1 fitting server, launches where First-Fit's and Best-Fit's server differ, launches
    on the server freed by this event, launches at completion events), ∫ resources in
    use dt over [t0, t1] and, summed over launches with > 1 fitting server, the chosen
    server's free fraction max_r free_lr / c_lr before the launch."""
    L, R = capacity.shape
    K, J = demand.shape[0], arrival.size
    total = capacity.sum(axis=0)
    delta = np.zeros(K)
    for k in range(K):
        for r in range(R):
            delta[k] = max(delta[k], demand[k, r] / total[r])
    most = 2 + L + int(R / delta.min())
    h_time, h_seq = np.empty(most), np.empty(most, dtype=np.int64)
    h_job, h_srv = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64)
    size, seq, nxt = 0, 0, 0
    free = capacity.copy()
    launched = np.zeros(J, dtype=np.int64)
    running = np.zeros(J, dtype=np.int64)
    done = np.zeros(J, dtype=np.int64)
    finish = np.full(J, np.nan)
    active = np.empty(J, dtype=np.int64)
    n_active = 0
    counts = np.zeros(5, dtype=np.int64)
    in_use, busy, roomy, now = np.zeros(R), np.zeros(R), 0.0, 0.0
    while nxt < J or size > 0:
        freed = -1
        t = h_time[0] if size > 0 and (nxt >= J or h_time[0] <= arrival[nxt]) else arrival[
            nxt]
        lo, hi = max(now, t0), min(t, t1)
        if hi > lo:
            busy += in_use * (hi - lo)
        now = t
        if size > 0 and (nxt >= J or h_time[0] <= arrival[nxt]):
            j, freed = h_job[0], h_srv[0]
            size = heap_pop(h_time, h_seq, h_job, h_srv, size)
            for r in range(R):
                free[freed, r] += demand[job_class[j], r]
                in_use[r] -= demand[job_class[j], r]
            running[j] -= 1
            done[j] += 1
            if done[j] == job_tasks[j]:
                finish[j] = t
                w = 0
                for i in range(n_active):
                    if active[i] != j:
                        active[w] = active[i]
                        w += 1
                n_active = w
        else:
            active[n_active] = nxt
            n_active += 1
            nxt += 1
        while True:
            pick, pick_s = -1, -np.inf
            for i in range(n_active):  # largest -x δ, ties: lowest class, earliest job
                j = active[i]
                k = job_class[j]
                if launched[j] >= job_tasks[j]:
                    continue
                s = -running[j] * delta[k]
                if pick >= 0 and (s < pick_s or (s == pick_s and (
                        k > job_class[pick] or (k == job_class[pick] and j > pick)))):
                    continue
                if _server(mode, free, demand, total, k)[0] < 0:
                    continue
                pick, pick_s = j, s
            if pick < 0:
                break
            k = job_class[pick]
            srv, ff, bf, n = _server(mode, free, demand, total, k, seq)
            if n > 1:
                room = 0.0
                for r in range(R):
                    room = max(room, free[srv, r] / capacity[srv, r])
                roomy += room
            counts[0] += 1
            counts[1] += n > 1
            counts[2] += ff != bf
            counts[3] += srv == freed
            counts[4] += freed >= 0
            for r in range(R):
                free[srv, r] -= demand[k, r]
                in_use[r] += demand[k, r]
            size = heap_push(h_time, h_seq, h_job, h_srv, size,
                             t + task_time[job_first[pick] + launched[pick]], seq, pick, srv)
            seq += 1
            launched[pick] += 1
            running[pick] += 1
    return finish, counts, busy, roomy


def mechanism(name: str, seeds: int) -> None:
    work = _per_job_work()
    regime = REGIMES[name]
    print(f"mechanism, {name}: fractions of all launches; 'room': mean free fraction of "
          "the chosen server where > 1 fits; util over [warm T, T]; tightest = diagnostic")
    diff = []
    for seed in range(1, seeds + 1):
        trace, capacity = workload(regime, seed, work)
        first = np.concatenate(([0], np.cumsum(trace.job_tasks)[:-1])).astype(np.int64)
        end = float(trace.arrival[-1])
        util, jct = [], []
        for mode, label in enumerate((FF, BF, "tightest fit", "random fit")):
            finish, c, busy, roomy = drfh_counted(
                mode, capacity, trace.demand, trace.arrival, trace.job_class,
                trace.job_tasks, trace.task_time, first, regime[4] * end, end)
            same = ""
            if mode < 2:
                model = trace_model(trace, capacity, label)
                kernel = run_jobs(model, trace.arrival, trace.job_class, trace.job_tasks,
                                  task_time=trace.task_time).finish
                same = f", kernel's finish times: {np.array_equal(finish, kernel)}"
            util.append(100 * busy / ((1 - regime[4]) * end) / capacity.sum(axis=0))
            jct.append((finish - trace.arrival).mean())
            print(f"  seed {seed} {label:16s} launches {c[0]}: >1 fits {c[1] / c[0]:.3f}, "
                  f"FF != BF {c[2] / c[0]:.3f}, on the freed server {c[3] / c[0]:.3f}, "
                  f"at completions {c[4] / c[0]:.3f}, room {roomy / max(c[1], 1):.3f}; "
                  f"util {util[-1].round(2).tolist()} JCT {jct[-1]:.0f}{same}", flush=True)
        diff.append([*(util[1] - util[0]), jct[1] - jct[0], *(util[2] - util[0]),
                     jct[2] - jct[0], *(util[1] - util[3]), jct[1] - jct[3]])
    d = np.array(diff)
    for label, cols in (("Best-Fit - First-Fit", (0, 1, 2)),
                        ("tightest fit - First-Fit", (3, 4, 5)),
                        ("Best-Fit - random fit", (6, 7, 8))):
        print(f"  {label}: " + ", ".join(
            f"{what} {d[:, c].mean():+.2f} [{d[:, c].min():+.2f}, {d[:, c].max():+.2f}]"
            for what, c in zip(("CPU", "mem", "JCT"), cols, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1,
                        help="the first seed (fresh seeds for a confirmation run)")
    parser.add_argument("--regimes", default="", help="comma-separated indices into "
                        "REGIMES (default all): " + "; ".join(
                            f"{i}: {n}" for i, n in enumerate(REGIMES)))
    parser.add_argument("--slots", type=int, default=None,
                        help="index of a regime in which to add the slot scheduler")
    parser.add_argument("--mechanism", type=int, default=None,
                        help="index of the regime whose placements to count")
    args = parser.parse_args()
    names = list(REGIMES)
    if args.slots is not None:
        with_slots(names[args.slots], args.seeds, args.first_seed)
        return
    if args.mechanism is not None:
        mechanism(names[args.mechanism], args.seeds)
        return
    chosen = [names[int(i)] for i in args.regimes.split(",")] if args.regimes else names
    regimes(chosen, args.seeds, args.first_seed)


if __name__ == "__main__":
    main()
