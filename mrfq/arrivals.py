"""Poisson flow arrivals of superposed classes, drawn in fixed blocks (shared by the
packet engine's and the flow-level simulator's arrival streams).

Inter-arrival times are standard exponentials divided by the total flow rate Λ, so every
load shares the same underlying draws (common random numbers); a flow's class is a
uniform draw against the cumulative class probabilities λ_k / Λ. Each stream has a fixed
block size, so its sequence depends only on the generators, not on how it is consumed.
"""

from __future__ import annotations

import numpy as np


class PoissonArrivals:
    """Times and classes of Poisson arrivals with per-class rates ``rates`` (flows per
    time unit), from the generators ``gaps`` and ``classes``, ``block`` flows at a time."""

    def __init__(self, gaps: np.random.Generator, classes: np.random.Generator,
                 rates: np.ndarray, block: int):
        self._gaps, self._classes = gaps, classes
        self.block = block
        rates = np.asarray(rates, dtype=np.float64)
        self.total_rate = float(rates.sum())
        self._cdf = np.cumsum(rates / self.total_rate)
        self._cdf[np.flatnonzero(rates > 0)[-1]:] = 1.0  # no draw lands on an idle class
        self._clock = 0.0

    def times_and_classes(self) -> tuple[np.ndarray, np.ndarray]:
        """The next block: arrival times (increasing) and class indices (int64)."""
        gaps = self._gaps.standard_exponential(self.block) / self.total_rate
        gaps[0] += self._clock
        times = np.cumsum(gaps)
        self._clock = float(times[-1])
        classes = np.searchsorted(self._cdf, self._classes.random(self.block),
                                  side="right").astype(np.int64)
        return times, classes
