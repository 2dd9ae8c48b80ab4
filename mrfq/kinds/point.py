"""The unit of work of a sweep (:class:`Point`), in a module of its own so that the kind
modules can name it in their signatures (:mod:`mrfq.kinds` imports them; they cannot
import it back)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    """One unit of work: a ``kind`` (the realisation: fluid or packet), a policy of it,
    a value on the load axis and a replication index (0 for unreplicated kinds)."""

    kind: str
    policy: str
    load: float
    replication: int = 0
