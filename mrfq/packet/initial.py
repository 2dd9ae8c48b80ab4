"""A steady-state start for the packet model (``[packet] init = "fluid"``).

The initial number of flows in progress per class, n(0) = (n_1 … n_K), is drawn from a
stationary law π(n) given as plain arrays (the fluid Markov model's, BR §4.1,
:func:`mrfq.fluid.markov.stationary_distribution`, which the point level passes in: the
packet layer does not import the fluid layer). Sizes are exponential in the Markov model
(geometric in packets here), hence memoryless: a flow in progress has a residual size of
the same law, so every initial flow gets a fresh geometric packet count of mean m, exactly
as an arriving flow does (:class:`mrfq.packet.model.ArrivalStream`).
"""

from __future__ import annotations

import numpy as np

from mrfq import seeds


def initial_stream(seed_seq: np.random.SeedSequence) -> np.random.Generator:
    """The replication's own generator for its initial state: stream
    :data:`mrfq.seeds.INITIAL_STATE` of ``seed_seq`` (:func:`mrfq.seeds.stream`, derived
    like :class:`~mrfq.packet.model.ArrivalStream`'s, not ``spawn()``ed, which mutates
    it), so the arrival streams are the same with or without it."""
    return seeds.stream(seed_seq, seeds.INITIAL_STATE)


def draw_occupancy(rng: np.random.Generator, states: np.ndarray,
                   probabilities: np.ndarray) -> np.ndarray:
    """One draw n ~ π: ``states`` (S×K, flows in progress per class), ``probabilities``
    (S, π(n), summing to 1 up to rounding). Inverse CDF of one uniform."""
    cdf = np.cumsum(np.asarray(probabilities, dtype=np.float64))
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return np.asarray(states[min(index, len(cdf) - 1)], dtype=np.int64).copy()


def draw_initial_flows(seed_seq: np.random.SeedSequence, states: np.ndarray,
                       probabilities: np.ndarray, mean_size: float
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The flows in progress at t = 0 of one replication: (class indices, sizes in
    packets), in a random order (their order at t = 0 is their tie-break order).

    n(0) ~ π (:func:`draw_occupancy`), then n_k flows of class k, each with a geometric
    number of packets N ≥ 1 of mean ``mean_size`` (P(N = i) = (1 − 1/m)^{i−1} / m), from
    :func:`initial_stream`: the same seed and replication give the same flows.
    """
    rng = initial_stream(seed_seq)
    counts = draw_occupancy(rng, states, probabilities)
    classes = rng.permutation(np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts))
    sizes = rng.geometric(1.0 / mean_size, classes.shape[0]).astype(np.int64)
    return classes.astype(np.int64), sizes
