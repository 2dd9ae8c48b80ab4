"""The ceiling of a network packet run (issue 23): a minimal Numba simulator of the
``random_network`` BMF run doing only the essential work, timed side by side with the
production kernel (:func:`mrfq.packet.engine.run_replication`).

Same model as the production network loop for one packet type per class, w = 1, rtt 0
(SPEC §3, §3.2): Poisson flow arrivals and geometric sizes (mean m packets) from the same
:class:`mrfq.packet.model.ArrivalStream` (so both simulators see the same flows); a flow
keeps min(W, its packets not yet sent) in the network, injecting its next packet when
one leaves its route's last resource; every resource is a non-preemptive server that
starts the backlogged flow head of least (start tag, arrival number), tags
S = max(V_j, F_ij), F_ij = S + s_ij / w, V_j = the tag of the packet started last at j
(BR eq. 7); a packet arriving at an idle resource with nothing waiting starts at once;
completions at equal times by resource index, then the flow arrival. It keeps only a
count of services, of completed flows, their sojourn sum, and each measured flow's
completion time (one store per flow, for the faithfulness check: with the same arrivals
and the same tie rules the completion times should be the production kernel's, bit for
bit).

Layout (why it is small): a flow's packets never overtake one another (one FIFO per flow
at every resource, non-preemptive servers), so the packets of a flow at one route
position are a contiguous run of its injection numbers, and a packet can be named by its
injection number mod RW (RW = the next power of two ≥ W) for its whole life. Per flow:
a header, per route position (≤ 8) the BMF finish tag F, the FIFO head and its length,
and a ring of RW packet entries (tag and arrival number, rewritten at every hop). The
next waiting packet after the head is head + 1 (mod RW): no links. Per resource: the
packet in service (slot, route index, ring entry) and a binary
heap of flow heads keyed (tag, arrival number·2^24 + position·2^20 + slot), so the
dequeue finds the flow's route position in the heap id itself (route index = class·16 +
position).

Variants (``--variants``, named event-layout-queue): ``scan`` (next completion by a scan
of the 12 resources, a chain of 11 dependent minima), ``pair`` (the same scan as a
depth-4 tournament in registers), ``ahead`` (``pair`` over every resource but the one
that completed, computed before that one's next start is known, then one comparison),
``tree`` (a tournament tree in memory, as the production kernel); layouts ``split`` (an int64
and a float64 record per flow, the tag ring apart from the arrival-number ring) and
``packed`` (one int64 record per flow, each packet's tag bits and arrival number
adjacent, each route position's F, head and length adjacent); queues ``heap`` (binary
heaps of flow heads per resource) and ``list`` (unsorted lists scanned without branches
at every start; ~2.8 flows backlogged on average at a start).

Usage: python benchmarks/network_ceiling.py [--services 2e7] [--runs 5] [--load 0.9]
       [--variants pair-split-heap,ahead-packed-heap] [--no-production]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit

from mrfq.packet.engine import run_replication
from mrfq.packet.model import ArrivalStream, PacketModel
from mrfq.scenario import load_scenario

MEAN_SIZE = 1000.0
WINDOW = 30
MAXPOS = 8  # route positions per class (routes of ≤ 8 resources)
STRIDE = 16  # route table stride per class (a power of two > MAXPOS: a −1 after the last)
SLOT_BITS = 20
POS_SHIFT = 20
SEQ_SHIFT = 24
CAPACITY = 1 << 14  # flows in the network at once
#: indices cast to unsigned: no negative-index wraparound code at every access (as the
#: production kernel's ``_U``)
_U = np.uint64


def _make_kernel(event: str, packed: bool, lists: bool):
    """One compiled simulator: ``event`` the event structure (``scan``, ``pair``,
    ``tree``), ``packed`` the flow-record layout, ``lists`` unsorted per-resource lists
    of flow heads scanned at every start instead of heaps (module doc)."""
    tree = event == "tree"
    pair = event == "pair"
    ahead = event == "ahead"
    RW = 32  # ring of packet entries (≥ W, a power of two)
    # split layout: int64 record [class·8, to inject, in system, sent, index, -, -, -,
    # head[8], length[8], seq ring[RW]]; float64 record [F[8], tag ring[RW]]
    NI = 24 + RW
    NF = MAXPOS + RW
    # packed layout: one int64 record, [class·8, to inject, in system, sent, index, -, -, -,
    # per position (F bits, head, length, -) × 8, per packet (tag bits, seq) × RW]
    NP = 8 + 4 * MAXPOS + 2 * RW
    mask = np.int64((1 << SLOT_BITS) - 1)

    def sim(arr_t, arr_k, arr_n, n_arr, flows, route, svc, W, completion, out):
        J = 12
        P = 16
        C = CAPACITY
        inf = np.inf
        rt = np.full(P, inf)  # completion time of the packet in service (∞: idle)
        rv = np.zeros(J)  # V_j
        rslot = np.zeros(J, np.int64)
        rri = np.zeros(J, np.int64)  # route index of the packet in service
        rpk = np.zeros(J, np.int64)
        hn = np.zeros(J, np.int64)
        hkey = np.zeros(J * C)
        hid = np.zeros(J * C, np.int64)
        ev_key = np.full(2 * P, inf)
        ev_id = np.zeros(2 * P, np.int64)
        if packed:
            rec = np.zeros(C * NP, np.int64)
            recf = rec.view(np.float64)
            fi = rec
            ff = recf
        else:
            fi = np.zeros(C * NI, np.int64)
            ff = np.zeros(C * NF)
        free = np.arange(C - 1, -1, -1).astype(np.int64)
        free_top = C
        nxt = 0
        t_arr = arr_t[0]
        outstanding = flows
        seq = 0
        services = 0
        completed = 0
        sojourn = 0.0
        t = 0.0
        status = 0
        tn, jn = _argmin12(rt)
        while outstanding > 0:
            # ---- the next event: the first completion (ties: lowest index), else arrival
            if ahead:
                tc = tn
                j = jn
            elif tree:
                tc = ev_key[1]
                j = ev_id[1]
            elif pair:
                tc, j = _argmin12(rt)
            else:
                j = 0
                tc = rt[0]
                for i in range(1, J):
                    if rt[_U(i)] < tc:
                        tc = rt[_U(i)]
                        j = i
            n_inject = 0
            slot = 0
            ib = 0
            ri = 0
            pk = 0
            d = 0
            if t_arr < tc:
                # ---- a flow arrival: a free slot, its record, its first window
                if nxt + 1 >= n_arr:
                    status = 2
                    break
                if free_top == 0:
                    status = 3
                    break
                t = t_arr
                free_top -= 1
                slot = free[_U(free_top)]
                k = arr_k[_U(nxt)]
                ib = slot * (NP if packed else NI)
                fi[_U(ib)] = k * STRIDE
                fi[_U(ib + 1)] = arr_n[_U(nxt)]
                fi[_U(ib + 2)] = 0
                fi[_U(ib + 3)] = 0
                fi[_U(ib + 4)] = nxt
                for q in range(MAXPOS):
                    if packed:
                        ff[_U(ib + 8 + 4 * q)] = -inf
                        fi[_U(ib + 8 + 4 * q + 2)] = 0
                    else:
                        ff[_U(slot * NF + q)] = -inf
                        fi[_U(ib + 16 + q)] = 0
                n_inject = min(W, arr_n[_U(nxt)])
                nxt += 1
                t_arr = arr_t[_U(nxt)]
                j = -1
            else:
                # ---- a completion at resource j
                t = tc
                services += 1
                rt[_U(j)] = inf  # (the moved packet never returns to j: routes do not repeat)
                slot = rslot[_U(j)]
                ri = rri[_U(j)] + 1
                pk = rpk[_U(j)]
                d = route[_U(ri)]
                ib = slot * (NP if packed else NI)
                if d >= 0:
                    n_inject = -1  # one arrival at d, below
                else:  # it leaves the network
                    fi[_U(ib + 2)] -= 1
                    if fi[_U(ib + 1)] > 0:
                        n_inject = 1
                    elif fi[_U(ib + 2)] == 0:
                        index = fi[_U(ib + 4)]
                        if index < flows:
                            completion[_U(index)] = t
                            sojourn += t - arr_t[_U(index)]
                            completed += 1
                            outstanding -= 1
                        free[_U(free_top)] = slot
                        free_top += 1
            # ---- packet arrivals at resources: a moved packet, or injections
            while n_inject != 0:
                if n_inject > 0:  # inject the flow's next packet at its first resource
                    n_inject -= 1
                    sent = fi[_U(ib + 3)]
                    fi[_U(ib + 3)] = sent + 1
                    fi[_U(ib + 1)] -= 1
                    fi[_U(ib + 2)] += 1
                    pk = sent & (RW - 1)
                    ri = fi[_U(ib)]
                    d = route[_U(ri)]
                else:
                    n_inject = 0
                q = ri & (STRIDE - 1)
                s = svc[_U(ri)]
                if packed:
                    at = ib + 8 + 4 * q
                    key = max(rv[_U(d)], ff[_U(at)])
                    ff[_U(at)] = key + s  # w = 1: s / w is s
                else:
                    at = slot * NF + q
                    key = max(rv[_U(d)], ff[_U(at)])
                    ff[_U(at)] = key + s
                if rt[_U(d)] == inf and hn[_U(d)] == 0:  # idle, nothing waiting: starts at once
                    rt[_U(d)] = t + s
                    rv[_U(d)] = key
                    rslot[_U(d)] = slot
                    rri[_U(d)] = ri
                    rpk[_U(d)] = pk
                    if tree:
                        _tree_set(ev_key, ev_id, d, t + s)
                else:
                    hidv = (seq << SEQ_SHIFT) | (q << POS_SHIFT) | slot
                    if packed:
                        n = fi[_U(at + 2)]
                        ff[_U(ib + 8 + 4 * MAXPOS + 2 * pk)] = key
                        fi[_U(ib + 8 + 4 * MAXPOS + 2 * pk + 1)] = hidv
                        if n == 0:
                            fi[_U(at + 1)] = pk
                        fi[_U(at + 2)] = n + 1
                    else:
                        n = fi[_U(ib + 16 + q)]
                        ff[_U(slot * NF + MAXPOS + pk)] = key
                        fi[_U(ib + 24 + pk)] = hidv
                        if n == 0:
                            fi[_U(ib + 8 + q)] = pk
                        fi[_U(ib + 16 + q)] = n + 1
                    if n == 0:
                        if lists:
                            hkey[_U(d * C + hn[_U(d)])] = key
                            hid[_U(d * C + hn[_U(d)])] = hidv
                        else:
                            _heap_push(hkey, hid, d * C, hn[_U(d)], key, hidv)
                        hn[_U(d)] += 1
                seq += 1
            if ahead:  # the next completion but j's, while j's start is still being found
                tn, jn = _argmin12(rt)
            # ---- the completed resource starts its least (tag, seq) flow head
            if j >= 0:
                n_heap = hn[_U(j)]
                if n_heap == 0:
                    if tree:
                        _tree_set(ev_key, ev_id, j, inf)
                else:
                    base = j * C
                    key = hkey[_U(base)]
                    top = hid[_U(base)]
                    m = 0
                    if lists:  # the least (tag, id), without branches
                        for i in range(1, n_heap):
                            ki = hkey[_U(base + i)]
                            ii = hid[_U(base + i)]
                            b = (ki < key) | ((ki == key) & (ii < top))
                            key = ki if b else key
                            top = ii if b else top
                            m = i if b else m
                    sl = top & mask
                    q = (top >> POS_SHIFT) & 15
                    sb = sl * (NP if packed else NI)
                    ri = fi[_U(sb)] + q
                    if packed:
                        at = sb + 8 + 4 * q
                        pk = fi[_U(at + 1)]
                        n = fi[_U(at + 2)] - 1
                        fi[_U(at + 2)] = n
                    else:
                        pk = fi[_U(sb + 8 + q)]
                        n = fi[_U(sb + 16 + q)] - 1
                        fi[_U(sb + 16 + q)] = n
                    tj = t + svc[_U(ri)]
                    rt[_U(j)] = tj
                    rv[_U(j)] = key
                    rslot[_U(j)] = sl
                    rri[_U(j)] = ri
                    rpk[_U(j)] = pk
                    if tree:
                        _tree_set(ev_key, ev_id, j, tj)
                    if ahead:
                        b = (tj < tn) | ((tj == tn) & (j < jn))
                        tn = tj if b else tn
                        jn = j if b else jn
                    if n > 0:  # the flow's next packet replaces it at the top
                        h = (pk + 1) & (RW - 1)
                        if packed:
                            fi[_U(at + 1)] = h
                            e = sb + 8 + 4 * MAXPOS + 2 * h
                            if lists:
                                hkey[_U(base + m)] = ff[_U(e)]
                                hid[_U(base + m)] = fi[_U(e + 1)]
                            else:
                                _sift_down(hkey, hid, base, n_heap, ff[_U(e)], fi[_U(e + 1)])
                        elif lists:
                            fi[_U(sb + 8 + q)] = h
                            hkey[_U(base + m)] = ff[_U(sl * NF + MAXPOS + h)]
                            hid[_U(base + m)] = fi[_U(sb + 24 + h)]
                        else:
                            fi[_U(sb + 8 + q)] = h
                            _sift_down(hkey, hid, base, n_heap, ff[_U(sl * NF + MAXPOS + h)],
                                       fi[_U(sb + 24 + h)])
                    else:
                        n_heap -= 1
                        hn[_U(j)] = n_heap
                        if lists:
                            hkey[_U(base + m)] = hkey[_U(base + n_heap)]
                            hid[_U(base + m)] = hid[_U(base + n_heap)]
                        elif n_heap > 0:
                            _sift_down(hkey, hid, base, n_heap, hkey[_U(base + n_heap)],
                                       hid[_U(base + n_heap)])
        out[0] = services
        out[1] = completed
        out[2] = sojourn
        out[3] = t
        return status

    sim.__name__ = sim.__qualname__ = (
        f"sim_{event}_{'packed' if packed else 'split'}_{'list' if lists else 'heap'}")
    return njit(cache=True, error_model="numpy", boundscheck=False)(sim)


@njit(cache=True, inline="always")
def _tree_set(ev_key, ev_id, j, key):
    """Tournament tree over the resources (leaf j at P + j), as the production kernel's
    ``_tree_set``: set leaf j and replay its path; ties go to the smaller index."""
    P = ev_key.shape[0] >> 1
    i = P + j
    ev_key[_U(i)] = key
    ev_id[_U(i)] = j
    win = j
    while i > 1:
        other = i ^ 1
        k_other = ev_key[_U(other)]
        id_other = ev_id[_U(other)]
        takes = k_other < key if (i & 1) == 0 else k_other <= key
        key = k_other if takes else key
        win = id_other if takes else win
        i >>= 1
        ev_key[_U(i)] = key
        ev_id[_U(i)] = win


@njit(cache=True, inline="always")
def _heap_push(hkey, hid, base, n, key, idv):
    """Insert (key, idv) into the heap of size n at hkey[_U(base:)], hid[_U(base:)]."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        pkey = hkey[_U(base + parent)]
        if key < pkey or (key == pkey and idv < hid[_U(base + parent)]):
            hkey[_U(base + i)] = pkey
            hid[_U(base + i)] = hid[_U(base + parent)]
            i = parent
        else:
            break
    hkey[_U(base + i)] = key
    hid[_U(base + i)] = idv


@njit(cache=True, inline="always")
def _sift_down(hkey, hid, base, n, key, idv):
    """Put (key, idv) at the root of the heap of size n and restore the order."""
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        ck = hkey[_U(base + c)]
        cid = hid[_U(base + c)]
        if c + 1 < n:
            k2 = hkey[_U(base + c + 1)]
            id2 = hid[_U(base + c + 1)]
            if k2 < ck or (k2 == ck and id2 < cid):
                c += 1
                ck = k2
                cid = id2
        if ck < key or (ck == key and cid < idv):
            hkey[_U(base + i)] = ck
            hid[_U(base + i)] = cid
            i = c
        else:
            break
    hkey[_U(base + i)] = key
    hid[_U(base + i)] = idv


@njit(cache=True, inline="always")
def _pick(ka, ia, kb, ib):
    """The smaller of (ka, ia), (kb, ib) by time; equal times keep a (the smaller index)."""
    b = kb < ka
    return (kb if b else ka), (ib if b else ia)


@njit(cache=True, inline="always")
def _argmin12(rt):
    """(time, resource) of the first completion among 12 resources: a tournament in
    registers, depth 4 instead of a chain of 11 dependent minima."""
    k0, i0 = _pick(rt[0], 0, rt[1], 1)
    k1, i1 = _pick(rt[2], 2, rt[3], 3)
    k2, i2 = _pick(rt[4], 4, rt[5], 5)
    k3, i3 = _pick(rt[6], 6, rt[7], 7)
    k4, i4 = _pick(rt[8], 8, rt[9], 9)
    k5, i5 = _pick(rt[10], 10, rt[11], 11)
    k0, i0 = _pick(k0, i0, k1, i1)
    k2, i2 = _pick(k2, i2, k3, i3)
    k4, i4 = _pick(k4, i4, k5, i5)
    k0, i0 = _pick(k0, i0, k2, i2)
    return _pick(k0, i0, k4, i4)


_KERNELS = {}
#: the variants timed by default
VARIANTS = ("scan-split-heap", "tree-split-heap", "pair-split-heap", "pair-packed-heap",
            "ahead-packed-heap", "pair-split-list")


def kernel(variant: str):
    """The compiled simulator of a variant ``event-layout-queue``, e.g. pair-split-heap."""
    if variant not in _KERNELS:
        event, layout, queue = variant.split("-")
        _KERNELS[variant] = _make_kernel(event, layout == "packed", queue == "list")
    return _KERNELS[variant]


def tables(model: PacketModel, routes) -> tuple[np.ndarray, np.ndarray]:
    """route[k·16 + q]: class k's q-th resource (−1 after the last); svc[k·16 + q] its
    service time there (one packet type per class)."""
    K = len(routes)
    route = np.full(K * STRIDE, -1, np.int64)
    svc = np.zeros(K * STRIDE)
    for k, r in enumerate(routes):
        used = [j for j in r if model.service[k, j] > 0]
        assert len(used) < MAXPOS + 1
        for q, j in enumerate(used):
            route[k * STRIDE + q] = j
            svc[k * STRIDE + q] = model.service[k, j]
    return route, svc


def arrivals(rho: np.ndarray, seed: int, count: int):
    """The production engine's arrival stream for this seed, at least ``count`` flows."""
    stream = ArrivalStream(np.random.SeedSequence(seed), rho, MEAN_SIZE)
    parts = [stream.next_block()]
    while sum(len(p[0]) for p in parts) < count:
        parts.append(stream.next_block())
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def run_ceiling(variant: str, arr, flows: int, route, svc):
    """One run of a variant; (services, completed, sojourn sum, end time, completion
    times, CPU seconds)."""
    completion = np.full(flows, np.nan)
    out = np.zeros(4)
    cpu0 = time.process_time()
    status = kernel(variant)(arr[0], arr[1], arr[2], len(arr[0]), flows, route, svc,
                              WINDOW, completion, out)
    cpu = time.process_time() - cpu0
    if status != 0:
        raise RuntimeError(f"status {status}: more arrivals or capacity needed")
    return int(out[0]), int(out[1]), out[2], out[3], completion, cpu


def run_production(model, rho, fq, seed: int, flows: int):
    """One production run (as benchmarks/bench_network.py); (services, completion, CPU
    seconds)."""
    cpu0 = time.process_time()
    run = run_replication(model, "bmf", rho, np.random.SeedSequence(seed), flows=flows,
                          mean_size=MEAN_SIZE, window=WINDOW, fq_resource=fq)
    cpu = time.process_time() - cpu0
    return run.services, run.completion, run.end_time, cpu


def per_class(arr, flows: int, completion: np.ndarray, K: int):
    """Per class: mean sojourn and flows completed per time unit (throughput) of the
    measured flows."""
    sojourn = completion - arr[0][:flows]
    k = arr[1][:flows]
    end = np.nanmax(completion)
    return ([float(np.mean(sojourn[k == c])) for c in range(K)],
            [float(np.sum(k == c) / end) for c in range(K)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--services", type=float, default=2e7)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--no-production", action="store_true")
    args = parser.parse_args()
    scenario = load_scenario("random_network")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(args.load)
    route, svc = tables(model, scenario.routes)
    hops = np.array([len(r) for r in scenario.routes], float)
    flows = int(args.services / (MEAN_SIZE * float(rho @ hops / rho.sum()))) + 1
    variants = args.variants.split(",")
    names = variants + ([] if args.no_production else ["production"])
    # compile / load the caches
    small = arrivals(rho, 0, 100)
    for v in variants:
        run_ceiling(v, small, 20, route, svc)
    if not args.no_production:
        run_production(model, rho, scenario.fq_resources, 0, 20)
    rates = {name: [] for name in names}
    for r in range(args.runs):
        seed = r + 1
        arr = arrivals(rho, seed, int(flows * 1.5) + 8192)
        order = names if r % 2 == 0 else names[::-1]  # alternate the order
        results = {}
        for name in order:
            if name == "production":
                services, completion, end, cpu = run_production(
                    model, rho, scenario.fq_resources, seed, flows)
            else:
                services, _, _, end, completion, cpu = run_ceiling(name, arr, flows, route,
                                                                   svc)
            results[name] = (services, completion, end)
            rates[name].append(services / cpu / 1e6)
            print(f"run {r + 1} {name}: {services:.4e} services in {cpu:.2f} CPU-s: "
                  f"{services / cpu / 1e6:.1f} M/CPU-s", flush=True)
        if "production" in results:
            ref = results["production"]
            for name in variants:
                same = np.array_equal(results[name][1], ref[1])
                print(f"  {name} vs production: services {results[name][0]} / {ref[0]}, "
                      f"completion times identical: {same}, end {results[name][2]:.6f} / "
                      f"{ref[2]:.6f}", flush=True)
        if r == 0:
            K = len(scenario.classes)
            for name in names:
                mean, thr = per_class(arr, flows, results[name][1], K)
                print(f"  {name} mean sojourn per class: "
                      + " ".join(f"{x:.0f}" for x in mean))
                print(f"  {name} throughput per class (flows per 1e6 time units): "
                      + " ".join(f"{1e6 * x:.1f}" for x in thr))
    for name in names:
        print(f"{name}: min / median / max {min(rates[name]):.1f} / "
              f"{statistics.median(rates[name]):.1f} / {max(rates[name]):.1f} M services "
              "per CPU-second", flush=True)


if __name__ == "__main__":
    main()
