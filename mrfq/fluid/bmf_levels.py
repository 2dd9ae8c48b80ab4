"""A fast bottleneck-max-fair allocation for many classes and resources: the fixed point of
local fair queueing (BR §3.3, BRV INFOCOM 2017), verified against the BMF conditions.

BMF (BR §2.4): every active class k has a saturated resource j (Σ_i n_i φ_i a_ij = 1)
on which its weighted share φ_k a_kj / w_k is the largest. BR realise it in a router by
weighted max-min fairness at every resource, separately, with weights 1 / a_kj (per-
resource fair queueing with end-to-end windows). This module computes the fluid fixed
point of exactly that: every resource j has a water level L_j (∞ while unsaturated) in
share units, a class's rate is the smallest of its limits, φ_k = min_j w_k L_j / a_kj,
and L_j is the max-min level of j given the rates the classes' other resources allow:
Σ_k n_k w_k min(c_kj, L_j) = 1 with c_kj = a_kj min_{i ≠ j} L_i / a_ki (∞ when the demand
fits). Gauss-Seidel sweeps over the resources, from the equal split L_j = 1 / Σ n_k w_k,
until no level changes by more than a relative 1e-13; undamped first, then damped
(DAMPINGS) when the sweeps cycle.

Then the classes' bottlenecks (the resource attaining each φ_k's minimum) give a mapping,
and :func:`mrfq.fluid.kernels.bmf_mapping_allocation` solves it exactly (BR §3.3's linear
system) and checks every BMF condition (capacity, saturation, maximal share). So the
allocation returned is BMF whenever it is returned: the iteration's convergence is not
proved (BRV prove it for 2 resources); when no damping converges to a mapping that passes
the check, the caller returns NaN. On 300 random problems (K ≤ 5, J ≤ 4) and
200 states of the packaged random network (15 classes, 12 resources) it converged in at
most 58 sweeps and always passed (tests/test_bmf_levels.py).

Which BMF, when it is not unique (J ≥ 3): the fixed point these sweeps reach from the
equal split, not necessarily the enumeration's choice (the largest PF objective,
:func:`mrfq.fluid.kernels.bmf`) nor the packet system's. On BR §2.4's example both fluid
choices are the end x = 1 of the continuum, (1/3, 4/9, 4/9), while packet ``bmf``
(backlogged flows, one router or three) settles at the other end, (2/5, 2/5, 2/5)
(reproduction/networks/bmf_nonunique.py).

Numba's disk cache keys a function by its own file: after editing this module, delete
the cached kernels.py and flowsim_kernel.py entries (``mrfq/fluid/__pycache__/kernels.*.nb*``,
``flowsim_kernel.*.nb*``), which compiled it in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Gauss-Seidel sweeps before giving up (with one damping; the caller tries smaller ones)
MAX_SWEEPS = 2_000
#: the dampings tried in turn: L_j moves this fraction of the way to its new water level
#: (undamped sweeps can cycle: a random-network state cycled for 10 000 sweeps, and
#: converged in 272 at 1/2)
DAMPINGS = (1.0, 0.5, 0.25)


@njit(cache=True)
def _water_level(caps, mass, m):
    """The level L with Σ_i mass_i min(caps_i, L) = 1 over the first m entries (∞ if
    Σ mass_i caps_i ≤ 1). Sorts ``caps`` and ``mass`` in place (insertion sort: m ≤ K)."""
    total = 0.0
    for i in range(m):
        if caps[i] < np.inf:
            total += mass[i] * caps[i]
        else:
            total = np.inf
    if total <= 1.0:
        return np.inf
    for i in range(1, m):
        c, w = caps[i], mass[i]
        p = i - 1
        while p >= 0 and caps[p] > c:
            caps[p + 1] = caps[p]
            mass[p + 1] = mass[p]
            p -= 1
        caps[p + 1] = c
        mass[p + 1] = w
    used = 0.0
    rest = 0.0
    for i in range(m):
        rest += mass[i]
    for i in range(m):
        level = (1.0 - used) / rest
        if level <= caps[i]:
            return level
        used += mass[i] * caps[i]
        rest -= mass[i]
    return np.inf


@njit(cache=True)
def bmf_levels(requirements, counts, weights, levels, damping=1.0):
    """Local fair queueing's fixed point (module docstring): fills ``levels`` (J, share
    units, ∞ = unsaturated) and returns the number of sweeps, or −1 without convergence.
    ``damping`` in (0, 1]: a finite level moves that fraction of the way to its new value
    (the fixed points are the same)."""
    K, J = requirements.shape
    caps = np.zeros(K)
    mass = np.zeros(K)
    for j in range(J):
        total = 0.0
        for k in range(K):
            if counts[k] > 0 and requirements[k, j] > 0.0:
                total += counts[k] * weights[k]
        levels[j] = 1.0 / total if total > 0.0 else np.inf
    for sweep in range(MAX_SWEEPS):
        changed = False
        for j in range(J):
            m = 0
            for k in range(K):
                if counts[k] > 0 and requirements[k, j] > 0.0:
                    other = np.inf  # the rate class k's other resources allow
                    for i in range(J):
                        if i != j and requirements[k, i] > 0.0 and levels[i] < np.inf:
                            other = min(other, weights[k] * levels[i] / requirements[k, i])
                    caps[m] = other * requirements[k, j] / weights[k]
                    mass[m] = counts[k] * weights[k]
                    m += 1
            if m == 0:
                continue
            level = _water_level(caps, mass, m)
            if level < np.inf and levels[j] < np.inf:
                level = levels[j] + damping * (level - levels[j])
            # converged to a relative 1e-13 (the last bits can cycle in floating
            # point; the exact solve of the mapping removes the rest)
            if level != levels[j] and not (level < np.inf and levels[j] < np.inf
                                           and abs(level - levels[j]) <= 1e-13 * level):
                changed = True
            levels[j] = level
        if not changed:
            return sweep + 1
    return -1


@njit(cache=True)
def bottleneck_mapping(requirements, counts, weights, levels, mapping):
    """Each active class's bottleneck under ``levels``: the resource attaining
    min_j w_k L_j / a_kj (the first of equal ones); False if a class has none (every
    resource it uses unsaturated)."""
    K, J = requirements.shape
    for k in range(K):
        mapping[k] = 0
        if counts[k] <= 0:
            continue
        best = np.inf
        for j in range(J):
            if requirements[k, j] > 0.0 and levels[j] < np.inf:
                limit = weights[k] * levels[j] / requirements[k, j]
                if limit < best:
                    best = limit
                    mapping[k] = j
        if best == np.inf:
            return False
    return True
