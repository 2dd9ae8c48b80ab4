"""BR eq. 5 with two readings of "Q_ij", in a standalone simulator (no mrfq code; issue
23, reproduction/networks/README.md "Why packet pf misses fluid PF").

Every flow keeps W packets circulating along its route with no delay between a departure
and the next injection (the backlogged states of pf_windows.py); each resource serves,
without preemption, the flow head with the smallest start tag (ties: arrival order), and
V_j is the start tag of the last packet to begin service at j. A packet's tag is
S = max(V_j, S_prev + a_ij / Q_ij) (a flow's first packet at j: V_j), Q_ij = the flow's
packets waiting or in service at j, taken

* ``arrival``: when the packet arrives at j, counting itself (mrfq's reading; this
  script reproduces the kernel's rates, tests/test_network_packet.py);
* ``head``: when the packet becomes its flow's head at j (at its arrival if the flow has
  nothing waiting there, else when its predecessor begins service). Services of a flow
  happen at a rate proportional to its Q if the scheme works, so sampling Q at them is
  not biased towards the arrival process of the upstream resource.

Prints the long flow's steady packets per unit time on linear_network's state (long, 1, 2, 3)
(fluid PF: 0.3188).

    python reproduction/networks/sfq_q_sampling.py head 30 120 480
"""
import heapq
import itertools
import sys
from collections import deque


def simulate(A, W, mode, measured=0, size=100000):
    """Steady packets per unit time of flow ``measured``: its packets size + 1 … 2 size
    over the time they take (the first ``size`` cover the start-up, about W packets)."""
    R, J = len(A), len(A[0])
    routes = [[j for j in range(J) if A[r][j] > 0] for r in range(R)]
    V = [0.0] * J
    busy = [None] * J  # the flow whose packet is in service at j
    queue = [[deque() for _ in range(R)] for _ in range(J)]  # (arrival seq, tag or None)
    count = [[0] * R for _ in range(J)]   # waiting or in service
    last_S = [[None] * R for _ in range(J)]
    events = []  # (time, seq, j)
    seq = itertools.count()
    done = [0] * R

    def tag(j, r):
        q = count[j][r]
        if last_S[j][r] is None:
            s = V[j]
        else:
            s = max(V[j], last_S[j][r] + A[r][j] / q)
        last_S[j][r] = s
        return s

    def try_start(j, now):
        if busy[j] is not None:
            return
        best = None
        for r in range(R):
            if queue[j][r]:
                s_, a_seq = queue[j][r][0][1], queue[j][r][0][0]
                if best is None or (s_, a_seq) < best[0]:
                    best = ((s_, a_seq), r)
        if best is None:
            return
        (s_, _), r = best
        queue[j][r].popleft()
        busy[j] = r
        V[j] = s_
        heapq.heappush(events, (now + A[r][j], next(seq), j))
        if mode == "head" and queue[j][r]:
            p = queue[j][r][0]
            queue[j][r][0] = (p[0], tag(j, r))

    def arrive(j, r, now):
        count[j][r] += 1
        if mode == "arrival":
            queue[j][r].append((next(seq), tag(j, r)))
        else:
            # a packet becomes head at arrival when the flow has no packet waiting at j
            if not queue[j][r]:
                queue[j][r].append((next(seq), tag(j, r)))
            else:
                queue[j][r].append((next(seq), None))
        try_start(j, now)

    for r in range(R):
        for _ in range(W):
            arrive(routes[r][0], r, 0.0)
    while True:
        now, _, j = heapq.heappop(events)
        r = busy[j]
        busy[j] = None
        count[j][r] -= 1
        k = routes[r].index(j)
        if k + 1 < len(routes[r]):
            arrive(routes[r][k + 1], r, now)
        else:
            done[r] += 1
            if r == measured and done[r] == size:
                start = now
            if r == measured and done[r] == 2 * size:
                return size / (now - start)
            arrive(routes[r][0], r, now)
        try_start(j, now)

if __name__ == "__main__":
    A = [[1.0, 0.5, 0.8], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    mode = sys.argv[1]
    for W in [int(w) for w in sys.argv[2:]]:
        print(mode, W, round(simulate(A, W, mode, size=50000), 4), flush=True)
