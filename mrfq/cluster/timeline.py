"""A cluster run over time (issue 24, DRFH Figs. 4–5): per-class running tasks integrated
over time bins by the kernel (:func:`mrfq.cluster.kernel.add_running`, plain arrays),
and what follows from them linearly (:class:`Timeline`): every class's share of every
resource of the pool, its dominant share, and the utilisation of every resource, each a
time average per bin.

Shares are of the pool C_r = Σ_l c_lr: a class running x tasks of demand D_k holds
x D_kr / C_r of resource r, and its dominant share x max_r D_kr / C_r is both DRF's
dominant share on a pooled cluster and DRFH's global dominant share on heterogeneous
servers (DRFH eq. (3) with Lemma 1: G_i = Σ_l g_il = N_i D_ir*, the tasks times the share
of the global dominant resource one task takes). Utilisation of r = Σ_k x_k D_kr / C_r.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Timeline:
    """Bins of width ``dt`` (time units of the run) from 0 to ``end`` (the makespan; the
    last bin is cut there); ``area[b, k]``: ∫ tasks of class k running dt over bin b;
    ``demand`` (K × R per task) and ``total`` (R: the pool) to turn tasks into shares."""

    dt: float
    end: float
    area: np.ndarray
    demand: np.ndarray
    total: np.ndarray

    @classmethod
    def from_kernel(cls, area: np.ndarray, dt: float, end: float, demand: np.ndarray,
                    total: np.ndarray) -> Timeline:
        """The bins of a run up to its makespan ``end`` (the kernel's trailing empty bins
        dropped; a run ending at 0 keeps one bin)."""
        used = max(1, min(area.shape[0], int(np.ceil(end / dt - 1e-9))))
        return cls(float(dt), float(end), area[:used], np.asarray(demand, float),
                   np.asarray(total, float))

    @property
    def start(self) -> np.ndarray:
        """Start time of every bin."""
        return np.arange(self.area.shape[0]) * self.dt

    @property
    def width(self) -> np.ndarray:
        """Length of every bin (the last one ends at the makespan)."""
        edges = np.minimum(np.arange(1, self.area.shape[0] + 1) * self.dt,
                           max(self.end, self.dt * 1e-12))
        return np.maximum(edges - self.start, 1e-300)

    @property
    def tasks(self) -> np.ndarray:
        """bins × K: time-average tasks running per class."""
        return self.area / self.width[:, None]

    @property
    def shares(self) -> np.ndarray:
        """bins × K × R: time-average share of the pool's resource r held by class k."""
        return self.tasks[:, :, None] * (self.demand / self.total)[None]

    @property
    def dominant(self) -> np.ndarray:
        """bins × K: time-average dominant (DRFH: global dominant) share per class."""
        return self.tasks * (self.demand / self.total).max(axis=1)[None]

    @property
    def utilisation(self) -> np.ndarray:
        """bins × R: time-average fraction of the pool's resource r in use."""
        return self.shares.sum(axis=1)

    def coarsen(self, dt: float) -> Timeline:
        """The same run in bins of width ``dt``, a power-of-two multiple of this width
        (bins summed in groups: exact), e.g. to put runs that doubled their bins a
        different number of times on common bins."""
        factor = int(round(dt / self.dt))
        if factor < 1 or factor & (factor - 1) or not np.isclose(factor * self.dt, dt):
            raise ValueError(f"{dt} is not a power-of-two multiple of {self.dt}")
        groups = -(-self.area.shape[0] // factor)
        padded = np.zeros((groups * factor, self.area.shape[1]))
        padded[:self.area.shape[0]] = self.area
        area = padded.reshape(groups, factor, -1).sum(axis=1)
        return Timeline(factor * self.dt, self.end, area, self.demand, self.total)

    def busy(self) -> np.ndarray:
        """R: ∫ resource in use dt over [0, end] (pool units × time)."""
        return (self.area @ self.demand).sum(axis=0)
