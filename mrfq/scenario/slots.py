"""The slot scheduler's sizes (``slots``, :mod:`mrfq.cluster.kernel`), for the checks
made before a run: a class whose tasks fit no server in slots would never run."""

from __future__ import annotations

import numpy as np


def slot_shortfall(capacity: np.ndarray, demand: np.ndarray, allowed: np.ndarray,
                   slots_per_server: int) -> tuple[int, int, int] | None:
    """The slot scheduler's sizes (:mod:`mrfq.cluster.kernel`: a slot is the
    componentwise largest server / k; server l holds ⌊min_r c_lr / s_r⌋ slots, a class-k
    task takes ⌈max_r D_kr / s_r⌉ ≥ 1): the first class (index, slots a task takes, the
    most slots a server it may use holds) whose tasks fit no server, None if every class
    has one."""
    eps = 1e-9  # as the kernel's
    slot = capacity.max(axis=0) / max(slots_per_server, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        held = np.floor(np.min(np.where(slot > 0, capacity / slot, np.inf), axis=1) + eps)
        takes = np.maximum(1, np.ceil(np.max(np.where(slot > 0, demand / slot, 0.0),
                                             axis=1) - eps))
    for k in range(demand.shape[0]):
        most = held[allowed[k]].max() if allowed[k].any() else 0
        if takes[k] > most:
            return k, int(takes[k]), int(most)
    return None
