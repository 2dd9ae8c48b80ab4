"""Explicit flows of a scenario (``[[flows]]`` and ``[timeline]``, SPEC §3.1): backlogged
and scheduled flows, and open-loop "rogue" flows, instead of Poisson arrivals.

Only field checks here (the shared ones of :mod:`mrfq.fields`); the packet engine runs
them (:mod:`mrfq.packet.flows`). This module imports nothing else from mrfq.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mrfq import fields
from mrfq.errors import InputError

_FLOW_KEYS = {"class", "start", "stop", "window", "rate", "name"}
_TIMELINE_KEYS = {"duration", "interval"}


@dataclass(frozen=True)
class ExplicitFlow:
    """One flow: of class ``class_name`` (its requirements, packet mix and weight), from
    ``start`` to ``stop`` (time units: one dominant packet service). Windowed (``window``
    packets in the router at most, injecting a packet at each departure, nothing at a
    departure at or after ``stop``), or, with ``rate`` > 0, open loop: one packet offered
    every 1/rate from ``start`` while before ``stop``, dropped when the flow already has
    ``window`` packets in the router (its buffer), whatever the router does."""

    name: str
    class_name: str
    start: float
    stop: float
    window: int
    rate: float = 0.0


@dataclass(frozen=True)
class Timeline:
    """``duration``: the default stop of every flow; ``interval``: the width of the bins
    of the service timeline (same time unit)."""

    duration: float
    interval: float


def parse_flows(raw_flows: Any, raw_timeline: Any, class_names: list[str], window: int,
                source: str) -> tuple[tuple[ExplicitFlow, ...], Timeline | None]:
    """Validate ``[[flows]]`` and ``[timeline]`` (both or neither); InputError naming the
    field, e.g. ``flows[1].class: unknown class 'x'``."""
    if raw_flows is None and raw_timeline is None:
        return (), None
    if raw_timeline is None:
        raise InputError("missing: explicit flows need [timeline] duration and interval",
                         "timeline", source)
    timeline_raw = fields.check_keys(raw_timeline, _TIMELINE_KEYS, "timeline", source)
    for key in _TIMELINE_KEYS:
        if key not in timeline_raw:
            raise InputError("missing", f"timeline.{key}", source)
    timeline = Timeline(
        duration=fields.number(timeline_raw["duration"], "timeline.duration", source,
                               positive=True),
        interval=fields.number(timeline_raw["interval"], "timeline.interval", source,
                               positive=True))
    if timeline.duration > 1e9:  # (1e308 ran without end: windowed flows send until then)
        raise InputError("must be <= 1e9 time units (a windowed flow keeps a resource busy "
                         f"until it stops: ~10^9 packet services each), got "
                         f"{timeline.duration:g}", "timeline.duration", source)
    if timeline.duration / timeline.interval > 1e6:
        raise InputError("more than 10^6 intervals in the duration", "timeline.interval",
                         source)
    count = timeline.duration / timeline.interval
    if abs(count - round(count)) > 1e-9 * count:  # a last bin past the end: half empty
        raise InputError(f"must divide the duration ({timeline.duration:g} / "
                         f"{timeline.interval:g} = {count:g} intervals): the last one "
                         "would run past the duration, its shares over time not run",
                         "timeline.interval", source)
    if not isinstance(raw_flows, list) or not raw_flows:
        raise InputError("must list at least one [[flows]] table", "flows", source)
    flows = []
    for i, raw in enumerate(raw_flows):
        where = f"flows[{i}]"
        raw = fields.check_keys(raw, _FLOW_KEYS, where, source)
        if "class" not in raw:
            raise InputError(f"missing (one of {', '.join(class_names)})", f"{where}.class",
                             source)
        name = fields.text(raw["class"], f"{where}.class", source)
        if name not in class_names:
            raise InputError(f"unknown class '{name}' (choose from {', '.join(class_names)})",
                             f"{where}.class", source)
        start = fields.number(raw.get("start", 0.0), f"{where}.start", source,
                              nonnegative=True)
        stop = fields.number(raw.get("stop", timeline.duration), f"{where}.stop", source,
                             positive=True)
        if start >= timeline.duration:  # (its service would be in no interval; said first:
            # a stop left out is the duration, so "stop must be after start" would blame it)
            raise InputError(f"must be before timeline.duration ({timeline.duration:g}), "
                             f"where the timeline ends, got {start:g}", f"{where}.start", source)
        if not start < stop:
            raise InputError(f"must be after start ({start:g})", f"{where}.stop", source)
        rate = fields.number(raw.get("rate", 0.0), f"{where}.rate", source, nonnegative=True)
        # (compared as a float: (stop − start) · rate may be infinite, which math.ceil
        # turned into a traceback)
        if rate > 0 and (stop - start) * rate > 10**9:
            raise InputError("offers more than 10^9 packets", f"{where}.rate", source)
        flows.append(ExplicitFlow(
            name=fields.text(raw.get("name", f"{name}#{i}"), f"{where}.name", source, name=True),
            class_name=name, start=start, stop=stop,
            window=fields.integer(raw.get("window", window), f"{where}.window", source, 1),
            rate=rate))
    if len({f.name for f in flows}) != len(flows):
        raise InputError("flow names must be distinct", "flows", source)
    return tuple(flows), timeline
