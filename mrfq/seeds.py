"""The one rule that turns a scenario's seed into random streams.

Every random stream of mrfq is derived, never ``spawn()``ed (``SeedSequence.spawn``
mutates its parent, so a second user of the same sequence would get other numbers):

* a run (a packet replication, a flow-level run) of seed ``s`` and index ``r`` uses
  :func:`run_seed` = ``SeedSequence(s, spawn_key=(r,))``, independent of the policy and
  the load (common random numbers) and of how many workers compute the runs;
* each stream of a run is :func:`stream` ``(run_seed, tag)``: the run's entropy with the
  tag appended to its spawn key. The tags are fixed per use (:data:`PACKET_ARRIVALS` + i,
  :data:`FLOW_ARRIVALS` + i, :data:`INITIAL_STATE`), so adding a stream never changes
  another one.
"""

from __future__ import annotations

import numpy as np

#: spawn-key tags of the streams of one run: the packet engine's arrival streams
#: (1000: gaps, 1001: classes, 1002: geometric sizes, 1010 + k: class k's own size law),
#: the flow-level simulator's (2000: gaps, 2001: classes, 2010 + k: class k's sizes),
#: the packet model's steady-state start, and a cluster run's numbers of tasks for the
#: classes whose law is a size-law table (4000 + k: class k's; task durations are a hash
#: of (seed, job, task), not a stream)
PACKET_ARRIVALS = 1000
FLOW_ARRIVALS = 2000
INITIAL_STATE = 3000
CLUSTER_TASKS = 4000


def run_seed(seed: int | np.random.SeedSequence, run: int | None = None
             ) -> np.random.SeedSequence:
    """The seed sequence of run ``run`` of ``seed`` (``run=None``: the seed itself, as a
    sequence; a sequence passed in is returned as it is)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if run is None:
        return np.random.SeedSequence(seed)
    return np.random.SeedSequence(seed, spawn_key=(run,))


def stream(seed_seq: np.random.SeedSequence, tag: int) -> np.random.Generator:
    """The PCG64 generator of stream ``tag`` of a run (module doc)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        seed_seq.entropy, spawn_key=(*seed_seq.spawn_key, tag))))
