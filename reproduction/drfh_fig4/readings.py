"""DRFH Fig. 4 (issue 24): readings of the paper's setup that it leaves open, measured.

A study, not the library: a compact event simulator of the Fig. 4 scenario (three users,
one queue of tasks each, 100 servers from Table I) whose scheduling rule can be switched
between readings of DRFH §V-B, plus the whole-task bound — the largest global dominant
share all three users can hold at once on the drawn pool (a MILP over per-server packings,
any scheduler, any durations). Reading ``ours`` is the library's Best-Fit DRFH and is
checked against it (same durations, same ties: the phases must agree exactly).

    cd <repo> && PYTHONPATH=. nice -n 10 python reproduction/drfh_fig4/readings.py \
        [draws] [--paper-pool] [-v] [reading ...]
    ... readings.py --totals    # the bound over all pools with the paper's totals

Readings (the paper's sentence behind each: docs/guide/clusters.md, "DRFH Fig. 4:
readings of the setup"): ``ours``; ``wait`` (the lowest-share user's task fits nowhere:
launch nothing); ``fixed`` (deterministic 10 s tasks; ``fixed-batch``: the tasks ending at
one instant all free their resources before the scheduling); ``heartbeat`` (a freed server is
offered to the users, lowest share first: the server picks the user); ``relative`` (eq. 9
with c̄ the fraction of the server's own capacity still free); ``random-ties`` (equal
eq. 9 scores broken at random, not by index); ``n7000`` (user 1 brings 7000 tasks,
the N·T the paper's own shares and 1080 s imply at 10 s tasks); ``long`` (exponential
60 s tasks, a sixth of the tasks: same work, trace-like lengths); ``any-server`` and
``any-server-wait`` (eq. 9's least score over every server with free memory, the task
launched only if it fits there; else the next user, or nobody); ``static`` (progressive
filling from an empty cluster at each join: no task ends); ``period3`` (the scheduler
runs every 3 s, Hadoop's heartbeat, not at each event).
"""

import argparse

import numpy as np
from numba import njit
from scipy.optimize import Bounds, LinearConstraint, milp

from mrfq import policies
from mrfq.cluster import ClusterModel
from mrfq.cluster.kernel import uniform
from mrfq.cluster.model import run_jobs
from mrfq.cluster.servers import draw_servers

DEMAND = np.array([[0.2, 0.3], [0.5, 0.1], [0.1, 0.3]])
JOIN = np.array([0.0, 200.0, 500.0])
TASKS = np.array([6000, 12000, 8000])
PAPER_POOL = np.array([52.75, 51.32])
DT, BINS, EPS = 5.0, 400, 1e-9
READINGS = ("ours", "wait", "fixed", "fixed-batch", "heartbeat", "relative",
            "random-ties", "any-server", "any-server-wait", "n7000", "long", "static", "period3")


@njit(cache=False)
def _best(free, cap, total, demand, k, relative, tie_seed, tie_key, any_server):
    """Best-Fit server of user k (DRFH eq. 9), -1 if none fits; ties: lowest index, or
    (tie_seed > 0) the least hash of (tie_seed, tie_key, server). ``any_server``: the
    least score over every server with free resources, -1 if the task does not fit
    there."""
    best, best_h, best_u = -1, np.inf, 2.0
    for l in range(free.shape[0]):
        fits = demand[k, 0] <= free[l, 0] + EPS and demand[k, 1] <= free[l, 1] + EPS
        if not fits and not (any_server and free[l, 1] > EPS):
            continue
        if relative:  # fraction of this server's own capacity still free
            c0, c1 = free[l, 0] / cap[l, 0], free[l, 1] / cap[l, 1]
        else:  # shares of the pool (ours)
            c0, c1 = free[l, 0] / total[0], free[l, 1] / total[1]
        if c0 <= 0.0:
            continue
        h = abs(1.0 - c0 / c0) + abs((demand[k, 1] / total[1]) / (demand[k, 0] / total[0])
                                     - c1 / c0)
        u = uniform(tie_seed, tie_key, l) if tie_seed > 0 else 0.0
        if h < best_h - 1e-12 or (abs(h - best_h) <= 1e-12 and u < best_u):
            best, best_h, best_u = l, h, u
    if best >= 0 and any_server and (demand[k, 0] > free[best, 0] + EPS
                                     or demand[k, 1] > free[best, 1] + EPS):
        return -1
    return best


@njit(cache=False)
def _release(slot, f_user, f_srv, f_time, free, demand, running, done, tasks, finish, t):
    """The task in ``slot`` ends at t: its server gets its demand back; returns the server."""
    k, server = f_user[slot], f_srv[slot]
    f_time[slot] = np.inf
    free[server, 0] += demand[k, 0]
    free[server, 1] += demand[k, 1]
    running[k] -= 1
    done[k] += 1
    if done[k] == tasks[k]:
        finish[k] = t
    return server


@njit(cache=False)
def simulate(cap, demand, join, tasks, seed, mean, exponential, wait, heartbeat, relative,
             random_ties, any_server, batch, period, dt, bins):
    """Three users, one task queue each, joining at ``join``; returns (bins × 3 running
    tasks × time per bin, user finish times)."""
    L = cap.shape[0]
    total = cap.sum(axis=0)
    delta = np.zeros(3)
    for k in range(3):
        delta[k] = max(demand[k, 0] / total[0], demand[k, 1] / total[1])
    free = cap.copy()
    most = 4 * L
    f_time = np.full(most, np.inf)
    f_seq = np.zeros(most, dtype=np.int64)
    f_user = np.zeros(most, dtype=np.int64)
    f_srv = np.zeros(most, dtype=np.int64)
    launched = np.zeros(3, dtype=np.int64)
    running = np.zeros(3, dtype=np.int64)
    done = np.zeros(3, dtype=np.int64)
    finish = np.full(3, np.nan)
    timeline = np.zeros((bins, 3))
    joined = 0
    seq = 0
    now = 0.0
    next_tick = period
    while True:
        slot = -1
        for s in range(most):
            if f_time[s] < np.inf and (slot < 0 or f_time[s] < f_time[slot] or (
                    f_time[s] == f_time[slot] and f_seq[s] < f_seq[slot])):
                slot = s
        t_end = f_time[slot] if slot >= 0 else np.inf
        t_join = join[joined] if joined < 3 else np.inf
        if t_end == np.inf and t_join == np.inf and (
                period <= 0 or launched.sum() == tasks.sum()):
            break
        tick = period > 0 and next_tick < min(t_end, t_join)
        if tick:
            t = next_tick
            next_tick += period
        elif t_end <= t_join:
            t = t_end
        else:
            t = t_join
        a = now  # integrate the running tasks over [now, t) into the bins
        while a < t and int(a / dt) < bins:
            b = int(a / dt)
            e = min(t, (b + 1) * dt)
            for k in range(3):
                timeline[b, k] += running[k] * (e - a)
            a = e
        now = t
        offer = -1  # heartbeat: the freed server
        if tick:
            pass
        elif t_end <= t_join:
            offer = _release(slot, f_user, f_srv, f_time, free, demand, running, done,
                             tasks, finish, t)
            while batch:  # the other tasks ending at this instant (fixed durations)
                more = -1
                for s2 in range(most):
                    if f_time[s2] == t and (more < 0 or f_seq[s2] < f_seq[more]):
                        more = s2
                if more < 0:
                    break
                _release(more, f_user, f_srv, f_time, free, demand, running, done, tasks,
                         finish, t)
        else:
            joined += 1
        if (joined < 3 and join[joined] == t) or (period > 0 and not tick):
            # events of one instant (users joining together; with fixed durations, a
            # task ending at 500 s as user 3 joins) all happen before the scheduling
            continue
        lo, hi = 0, 1  # one scheduling pass; heartbeat: the freed server, or all
        if heartbeat:
            lo, hi = (offer, offer + 1) if offer >= 0 else (0, L)
        for srv in range(lo, hi):  # a join: every server in turn (heartbeat), or once
            while True:
                order = np.argsort(running * delta + np.arange(3) * 1e-12)
                pick, where = -1, -1
                for k in order:
                    if k >= joined or launched[k] >= tasks[k]:
                        continue
                    if heartbeat:
                        ok = (demand[k, 0] <= free[srv, 0] + EPS
                              and demand[k, 1] <= free[srv, 1] + EPS)
                        where = srv if ok else -1
                    else:
                        where = _best(free, cap, total, demand, k, relative,
                                      seed if random_ties else 0, seq, any_server)
                    if where >= 0:
                        pick = k
                        break
                    if wait:
                        break
                if pick < 0:
                    break
                free[where, 0] -= demand[pick, 0]
                free[where, 1] -= demand[pick, 1]
                u = uniform(seed, pick, launched[pick])
                d = -mean[pick] * np.log(u) if exponential else mean[pick]
                s = 0
                while f_time[s] < np.inf:
                    s += 1
                f_time[s], f_seq[s], f_user[s], f_srv[s] = t + d, seq, pick, where
                seq += 1
                launched[pick] += 1
                running[pick] += 1
    return timeline, finish


def static(capacity, seed):
    """Progressive filling from an empty cluster for each set of users (no task ends):
    the allocation rebuilt from scratch at every join, as a timeline of the phases."""
    delta = np.max(DEMAND / capacity.sum(axis=0), axis=1)
    dominant = np.zeros((BINS, 3))
    t = np.arange(BINS) * DT
    for users, a, b in ((1, 0, 200), (2, 200, 500), (3, 500, 1e9)):
        join = np.array([0.0] * users + [np.inf] * (3 - users))
        tl, _ = simulate(capacity, DEMAND, join, TASKS, seed, np.full(3, 1e6), False, False,
                         False, False, False, False, False, 0.0, DT, 1)
        dominant[(t >= a) & (t < b)] = tl[0] / DT * delta
    return dominant, np.array([1e9, 1e9, 1e9])


def run(capacity, seed, reading):
    if reading == "static":
        return static(capacity, seed)
    tasks, mean = TASKS.copy(), np.full(3, 10.0)
    if reading == "n7000":
        tasks[0] = 7000
    if reading == "long":
        tasks, mean = tasks // 6, np.full(3, 60.0)
    timeline, finish = simulate(
        capacity, DEMAND, JOIN, tasks, seed, mean, not reading.startswith("fixed"),
        reading in ("wait", "any-server-wait"),
        reading == "heartbeat", reading == "relative", reading == "random-ties",
        reading.startswith("any-server"), reading == "fixed-batch",
        3.0 if reading == "period3" else 0.0, DT, BINS)
    delta = np.max(DEMAND / capacity.sum(axis=0), axis=1)
    return timeline / DT * delta, finish  # bins × user: mean global dominant share


def library(capacity, seed):
    """The library's Best-Fit DRFH on the same scenario (the check of reading ``ours``)."""
    model = ClusterModel(capacity=capacity, demand=DEMAND,
                         policy=policies.named(policies.CLUSTER).DRFH_BEST_FIT,
                         rates=[1.0] * 3, durations=[10.0] * 3)
    r = run_jobs(model, JOIN, [0, 1, 2], TASKS, seed, timeline_dt=DT)
    dominant = np.zeros((BINS, 3))
    part = r.timeline.shares[:BINS].max(axis=2)
    dominant[:len(part)] = part
    return dominant, r.finish


def phases(dominant, finish):
    t = np.arange(BINS) * DT

    def mean(a, b):
        return dominant[(t >= a) & (t < b)].mean(axis=0)

    return mean(100, 200)[0], mean(300, 500)[:2], mean(600, min(1000, finish[0] - 60))


def bound(capacity, users: int = 3) -> float:
    """The largest g such that the first ``users`` users all hold ≥ g global dominant
    share at once with whole tasks on ``capacity`` (MILP over each server type's
    packings)."""
    delta = np.max(DEMAND / capacity.sum(axis=0), axis=1)
    types, n = np.unique(capacity, axis=0, return_counts=True)
    var = []  # (server type, tasks per user)
    for t, c in enumerate(types):
        packs = [(a, b, d) for a in range(6) for b in range(3) for d in range(11)
                 if np.all(a * DEMAND[0] + b * DEMAND[1] + d * DEMAND[2] <= c + EPS)]
        var += [(t, p) for p in packs]
    rows, lo, hi = [], [], []
    for t in range(len(types)):
        rows.append([1.0 if v[0] == t else 0.0 for v in var] + [0.0])
        lo.append(n[t])
        hi.append(n[t])
    for u in range(users):
        rows.append([v[1][u] * delta[u] for v in var] + [-1.0])
        lo.append(0.0)
        hi.append(np.inf)
    c = np.zeros(len(var) + 1)
    c[-1] = -1.0
    res = milp(c, constraints=LinearConstraint(np.array(rows), lo, hi),
               integrality=np.r_[np.ones(len(var)), 0.0], bounds=Bounds(0, np.inf))
    return -res.fun


def totals() -> None:
    """The bound over every pool of 100 Table-I servers with the paper's totals (52.75
    CPU, 51.32 memory, each ± 0.13: Table I prints two decimals), weighted by the
    multinomial probability of the pool; rare types bounded (≤ 11 (1, 1), ≤ 4 (0.25,
    0.25), ≤ 1 of the others)."""
    import itertools  # only for this enumeration
    from math import lgamma, log

    from mrfq.cluster.servers import table_i

    counts, configs = table_i()
    p = counts / counts.sum()
    pools = []
    for rare in itertools.product(range(12), range(5), *[range(2)] * 5):
        rest = 100 - sum(rare)
        for n_b in range(rest + 1):
            for n_c in range(rest - n_b + 1):
                n = np.array([rest - n_b - n_c, n_b, n_c, *rare])
                if np.any(np.abs(n @ configs - PAPER_POOL) > 0.13):
                    continue
                logp = (lgamma(101) - sum(lgamma(k + 1) for k in n)
                        + sum(k * log(q) for k, q in zip(n, p, strict=True)))
                pools.append((logp, n))
    logp = np.array([q for q, _ in pools])
    w = np.exp(logp - logp.max())
    keep = w / w.sum() > 1e-4
    mass = w[keep].sum() / w.sum()
    w = w[keep] / w[keep].sum()
    b = np.array([bound(np.repeat(configs, n, axis=0))
                  for (_, n), k in zip(pools, keep, strict=True) if k])
    order = np.argsort(b)
    cdf = np.cumsum(w[order])
    q = [b[order][np.searchsorted(cdf, x)] for x in (0.05, 0.5, 0.95)]
    print(f"{len(pools)} pools with the paper's totals; the {keep.sum()} likeliest (mass "
          f"{mass:.3f}): bound {b.min():.1%} … {b.max():.1%}, quantiles 5/50/95% "
          f"{q[0]:.1%} / {q[1]:.1%} / {q[2]:.1%}, P(bound ≤ 29%) = {w[b <= 0.29].sum():.2f}")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (module doc), checked before any work: ``--help`` prints the
    usage, and an argument neither a number of draws nor a reading's name is an error
    (exit 2) — it used to be ignored, and the whole study ran. Adds ``draws`` (default 5)
    and ``readings`` (default: every one) to the options."""
    parser = argparse.ArgumentParser(
        prog="readings.py", description=__doc__.split("\n\n")[0],
        epilog=f"readings: {', '.join(READINGS)} (docs/guide/clusters.md, \"DRFH Fig. 4: "
               "readings of the setup\")")
    parser.add_argument("items", nargs="*", metavar="draws|reading",
                        help="the number of pools drawn (default 5) and the readings to run "
                             "(default: every one)")
    parser.add_argument("--paper-pool", action="store_true",
                        help="keep only pools within 1 of the paper's totals (CPU, memory)")
    parser.add_argument("-v", dest="verbose", action="store_true",
                        help="also each draw's three-user shares")
    parser.add_argument("--totals", action="store_true",
                        help="the bound over all pools with the paper's totals, nothing else")
    args = parser.parse_intermixed_args(argv)  # options among the readings, as documented
    draws = [a for a in args.items if a.isdigit()]
    unknown = [a for a in args.items if not a.isdigit() and a not in READINGS]
    if unknown:
        parser.error(f"unknown reading {unknown[0]!r} (readings: {', '.join(READINGS)})")
    if len(draws) > 1 or (draws and int(draws[0]) < 1):
        parser.error(f"give one number of draws, at least 1 (got {', '.join(draws)})")
    args.draws = int(draws[0]) if draws else 5
    args.readings = [a for a in args.items if a in READINGS] or list(READINGS)
    return args


def main() -> None:
    args = arguments()
    if args.totals:
        return totals()
    draws, paper_pool, readings = args.draws, args.paper_pool, args.readings
    pools, seed = [], 0
    while len(pools) < draws:
        seed += 1
        capacity = draw_servers(100, seed)
        if paper_pool and np.any(np.abs(capacity.sum(axis=0) - PAPER_POOL) > 1):
            continue
        pools.append((seed, capacity))
    print("pools (bounds for one / two / three users): " + ", ".join(
        f"draw {s} ({c.sum(0)[0]:.2f}, {c.sum(0)[1]:.2f}) {bound(c, 1):.1%} / "
        f"{bound(c, 2):.1%} / {bound(c):.1%}" for s, c in pools))
    for s, c in pools[:1]:  # reading 'ours' is the library's rule, exactly
        mine, lib = phases(*run(c, s, "ours")), phases(*library(c, s))
        assert all(np.allclose(a, b) for a, b in zip(mine, lib, strict=True)), (mine, lib)
    for reading in readings:
        rows = [(phases(*run(c, s, reading)), run(c, s, reading)[1][0]) for s, c in pools]
        alone = [r[0][0] for r in rows]
        two = [v for r in rows for v in r[0][1]]
        three = [v for r in rows for v in r[0][2]]
        gap = max(max(r[0][2]) - min(r[0][2]) for r in rows)
        print(f"{reading:11s} alone {min(alone):.1%}…{max(alone):.1%} | two "
              f"{min(two):.1%}…{max(two):.1%} | three {min(three):.1%}…{max(three):.1%} "
              f"(mean {np.mean(three):.1%}, users within {100 * gap:.1f} pt) | user 1 "
              f"leaves {min(r[1] for r in rows):.0f}…{max(r[1] for r in rows):.0f} s")
        if args.verbose:
            print("            three users per draw: " + "; ".join(
                " / ".join(f"{100 * v:.1f}" for v in r[0][2]) for r in rows))


if __name__ == "__main__":
    main()
