"""Fluid points by an explicit stationary law: balanced fairness's product form
π(n) ∝ Φ(n) ∏ ρ_k^{n_k} (Bonald & Proutière), summed on a truncated state space with a
truncation-error estimate (:mod:`mrfq.fluid.balanced`). The law is insensitive, so the
point is exact for every size law with the same means.

Such points are stored, keyed and summarised exactly as Markov points (``method``
``markov``: an exact method), with the law's own solver version in the key."""

from __future__ import annotations

from mrfq.kinds.markov import (  # noqa: F401 - the same face as a Markov point
    PRIORITY,
    REALISATION,
    RECORD_CLASS_KEYS,
    REPLICATED,
    check,
    compute,
    first_replications,
    key_parts,
    max_replications,
    prepare,
    size_bin_rows,
    stopping,
    summary_rows,
)

NAME = "explicit"
