"""BR §3.3's BMF in a cluster (:mod:`mrfq.cluster.kernel`, module doc): the bottleneck
resources of every class under the fluid BMF allocation, and every job's status (its
minimum rank over them), with weighted shares as the fluid BMF's (φ_k a_kj / w_k).

Numba's disk cache keys :func:`mrfq.cluster.kernel.simulate` by its own file: after
editing this module, delete the cached kernel entries
(``mrfq/cluster/__pycache__/kernel.*.nb*``), which compiled it in.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def bottlenecks(a, counts, phi, weights, out):
    """out[k, j]: resource j is a bottleneck of class k under the fluid allocation φ —
    saturated, and class k's weighted share φ_k a_kj / w_k is the largest there (BMF); a
    class with no such resource gets every resource it uses."""
    K, R = a.shape
    for k in range(K):
        for j in range(R):
            out[k, j] = False
    for j in range(R):
        used, top = 0.0, 0.0
        for k in range(K):
            used += counts[k] * phi[k] * a[k, j]
            if counts[k] > 0:
                top = max(top, phi[k] * a[k, j] / weights[k])
        if used < 1.0 - 1e-9:
            continue
        for k in range(K):
            if counts[k] > 0 and a[k, j] > 0 and phi[k] * a[k, j] / weights[k] >= top * (
                    1 - 1e-9):
                out[k, j] = True
    for k in range(K):
        some = False
        for j in range(R):
            some = some or out[k, j]
        if not some:
            for j in range(R):
                out[k, j] = a[k, j] > 0


@njit(cache=True)
def bmf_status(active, n_active, job_class, running, demand, total, weights, bottleneck,
               share, status):
    """status[j] = min over job j's bottleneck resources of its rank there (BR §3.3), the
    shares weighted: x D_kr / (C_r w_k)."""
    R = demand.shape[1]
    for i in range(n_active):
        status[active[i]] = np.inf
    for r in range(R):
        # (divided by w_k only where it is not 1: the division cost the pooled runs 6%)
        for i in range(n_active):
            j = active[i]
            k = job_class[j]
            share[j] = running[j] * demand[k, r] / total[r]
            if weights[k] != 1.0:
                share[j] /= weights[k]
        for i in range(n_active):
            j = active[i]
            k = job_class[j]
            if not bottleneck[k, r]:
                continue
            # ranks at task granularity: i' is ahead of j if it stays ahead after j
            # launches one more task
            step = demand[k, r] / total[r]
            ahead = share[j] + (step if weights[k] == 1.0 else step / weights[k]) * (
                1.0 + 1e-9)
            rank = 1.0
            for i2 in range(n_active):
                if share[active[i2]] > ahead:
                    rank += 1.0
            status[j] = min(status[j], rank)
