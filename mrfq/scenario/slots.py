"""The kernel's sizes (:mod:`mrfq.cluster.kernel`), for the checks made before a run: a
class whose tasks fit no server in slots would never run, and the event heap is allocated
for every task that can run at once (:data:`mrfq.scenario.limits.MAX_RUNNING`)."""

from __future__ import annotations

import numpy as np

from mrfq import policies
from mrfq.scenario import limits
from mrfq.scenario.checks import fail
from mrfq.scenario.config import ClusterConfig

#: the cluster kernel's relative fit slack (:data:`mrfq.cluster.kernel.EPS`)
FIT_SLACK = 1e-9


def fits(demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per server (rows of ``capacity``), whether one task of ``demand`` (R) fits it
    empty, as the kernel decides: demand ≤ c + FIT_SLACK · c on every resource."""
    return np.all(demand <= capacity + FIT_SLACK * capacity, axis=1)


def slots_held(capacity: np.ndarray, slots_per_server: int) -> np.ndarray:
    """Per server, the slots it holds under the slot scheduler (as the kernel: a slot is
    the componentwise largest server / k, server l holds ⌊min_r c_lr / s_r⌋), as
    floats."""
    eps = 1e-9  # as the kernel's
    slot = capacity.max(axis=0) / max(slots_per_server, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor(np.min(np.where(slot > 0, capacity / slot, np.inf), axis=1) + eps)


def most_running(capacity: np.ndarray, demand: np.ndarray, slots: bool,
                 slots_per_server: int) -> float:
    """The most tasks that can run at once, as the kernel sizes its event heap (beyond
    its one entry per server): under the slot scheduler (``slots``) the slots of every
    server, else R / min_k δ_k (a task holds δ_k = max_r D_kr / Σ_l c_lr of the pool), at
    most. A float, so a tiny demand gives a large number (or inf), not an overflow."""
    if slots:
        return float(slots_held(capacity, slots_per_server).sum())
    with np.errstate(divide="ignore", over="ignore"):
        delta = (demand / capacity.sum(axis=0)).max(axis=1)
        return float(np.floor(capacity.shape[1] / delta.min()))


def slot_shortfall(capacity: np.ndarray, demand: np.ndarray, allowed: np.ndarray,
                   slots_per_server: int) -> tuple[int, int, int] | None:
    """The slot scheduler's sizes (:mod:`mrfq.cluster.kernel`: a slot is the
    componentwise largest server / k; server l holds ⌊min_r c_lr / s_r⌋ slots, a class-k
    task takes ⌈max_r D_kr / s_r⌉ ≥ 1): the first class (index, slots a task takes, the
    most slots a server it may use holds) whose tasks fit no server, None if every class
    has one."""
    eps = 1e-9  # as the kernel's
    slot = capacity.max(axis=0) / max(slots_per_server, 1)
    held = slots_held(capacity, slots_per_server)
    with np.errstate(divide="ignore", invalid="ignore"):
        takes = np.maximum(1, np.ceil(np.max(np.where(slot > 0, demand / slot, 0.0),
                                             axis=1) - eps))
    for k in range(demand.shape[0]):
        most = held[allowed[k]].max() if allowed[k].any() else 0
        if takes[k] > most:
            return k, int(takes[k]), int(most)
    return None


def check_running(config: ClusterConfig, n_resources: int | None,
                  source: str | None) -> None:
    """A ``[cluster]`` section's tasks that can run at once, for which the kernel's event
    heap is allocated (:func:`most_running`): R · C in a pool or on listed servers (a
    task holds 1/C of its dominant resource; ``n_resources``: R), the servers' slots
    under the slot scheduler. InputError naming ``cluster.tasks_per_resource`` or
    ``cluster.slots_per_server`` if that is more than MAX_RUNNING."""
    most = limits.MAX_RUNNING
    if n_resources and config.tasks_per_resource * n_resources > most:
        raise fail(f"must be <= {most / n_resources:,.0f} ({limits.pool_why(n_resources)}"
                   f"), got {config.tasks_per_resource:g}", "cluster.tasks_per_resource",
                   source)
    if config.servers and policies.named(policies.CLUSTER).SLOTS in config.policies:
        capacity = np.array([cap for cap, _, _ in config.servers])
        counts = np.array([count for _, count, _ in config.servers])
        held = float(slots_held(capacity, config.slots_per_server) @ counts)
        if held > most:
            raise fail(f"with {config.slots_per_server:,} slots per largest server the "
                       f"{counts.sum():,} servers hold {limits.count_text(held)} slots in "
                       f"all, more than {most:,} tasks at once ({limits.RUNNING_WHY}): "
                       "lower it, or leave slots out",
                       "cluster.slots_per_server", source)
