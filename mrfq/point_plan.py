"""The one driver of how many points a sweep computes: every (realisation, policy, load)
group starts with its kind's first replications and gets more, as they finish, while its
kind's stopping rule says so (:mod:`mrfq.kinds.replications` for packet points with a
precision target; one point for a fluid group). A sweep (:func:`mrfq.sweeps.run_sweep`)
and :func:`mrfq.simulate` (a one-group sweep) both run their points through this plan and
the one executor (:func:`mrfq.executor.execute`), so they compute the same replications.

While the rule says "more", replications are scheduled up to half-way between those
finished and the number the spread so far suggests, and at most half as many again as are
finished (the rule stops at the first n that qualifies, usually before that number, early
spreads are noisy, and what runs past the stopping point is wasted); the first
replications are scheduled at once. Which replications a group uses depends only on their
values, never on how many ran at once; a replication computed beyond the stopping point is
stored and ignored. Replications already stored (an interrupted sweep, another precision)
are read, not recomputed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from mrfq.kinds import Point, kind_of
from mrfq.scenario import Scenario

Group = tuple[str, str, float]  # (realisation, policy, load)


class Plan:
    """The points of some groups of a scenario and when each group is finished.

    ``stored(point)`` returns a point's stored record or ``None`` (a sweep reads its
    results directory; :func:`mrfq.simulate` stores nothing). ``ahead=False``: while the
    rule says "more", one replication at a time (for a single worker, which gains
    nothing from scheduling ahead). ``confidence``: the level of the intervals the
    stopping rule judges (a sweep's: 95%)."""

    def __init__(self, scenario: Scenario, groups: list[Group],
                 stored: Callable[[Point], dict | None], ahead: bool = True,
                 confidence: float = 0.95):
        self.scenario = scenario
        self.ahead = ahead
        self.confidence = confidence
        self.stored = stored
        self.kinds: dict[Group, ModuleType] = {g: kind_of(scenario, *g) for g in groups}
        self.records: dict[Group, dict[int, dict]] = {g: {} for g in groups}
        self.scheduled = dict.fromkeys(groups, 0)  # replications < this: stored or running
        self.checked = dict.fromkeys(groups, 0)  # the rule failed for every n < this
        self.decided: dict[Group, int] = {}
        self.wanted = dict.fromkeys(groups, 0)  # the total the rule suggested last
        self.read = 0  # stored records read instead of computed

    def start(self) -> list[Point]:
        """The points to compute first (what is stored is read)."""
        return [point for group in self.records for point in self._advance(group)]

    def finished(self, point: Point, record: dict) -> list[Point]:
        """Record a computed point; return the next ones to compute."""
        group = (point.kind, point.policy, point.load)
        self.records[group][point.replication] = record
        return [] if group in self.decided else self._advance(group)

    def used(self, group: Group) -> list[dict]:
        """The records a finished group uses, in replication order."""
        records = self.records[group]
        return [records[r] for r in range(self.decided[group])]

    def _advance(self, group: Group) -> list[Point]:
        kind = self.kinds[group]
        records = self.records[group]
        first = kind.first_replications(self.scenario)
        while True:
            prefix = 0
            while prefix in records:
                prefix += 1
            decision = kind.stopping(self.scenario, list(records.values()),
                                     start=self.checked[group], confidence=self.confidence)
            self.wanted[group] = decision.wanted
            if decision.replications is not None and prefix >= decision.replications:
                self.decided[group] = decision.replications
                return []
            if decision.replications is not None:  # a known number, not all finished
                target = decision.replications
            else:
                self.checked[group] = max(self.checked[group], prefix + 1)
                target = min(prefix + -(-(decision.wanted - prefix) // 2),
                             prefix + prefix // 2 + 1)
                if not self.ahead:
                    target = prefix + 1
                if prefix < first:
                    target = decision.wanted  # the first replications: all at once
            if self.scheduled[group] >= target:
                return []  # what is needed is running
            new = []
            for r in range(self.scheduled[group], target):
                if r in records:
                    continue
                point = Point(*group, r)
                record = self.stored(point)
                if record is not None:
                    records[r] = record
                    self.read += 1
                else:
                    new.append(point)
            self.scheduled[group] = target
            if new:
                return new
