"""Validate one section of a scenario (SPEC §5) and build its record.

A ``[[classes]]`` table becomes a :class:`~mrfq.scenario.config.TrafficClass`, ``[fluid]`` a
:class:`~mrfq.scenario.config.FluidConfig`, ``[packet]`` (or command-line overrides of
it) a :class:`~mrfq.scenario.config.PacketConfig`. Every problem raises
:class:`InputError` naming the field, e.g. ``classes[2].requirements[1]: must be
non-negative, got -0.5``. The field checks are shared with problem files
(:mod:`mrfq.fields`). The whole file is assembled in :mod:`mrfq.scenario.files`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mrfq import fields, policies
from mrfq.counts import mean_count
from mrfq.errors import InputError
from mrfq.scenario.config import (
    FLUID_METHODS,
    PACKET_INITS,
    VIRTUAL_TIMES,
    FluidConfig,
    PacketConfig,
    TrafficClass,
)
from mrfq.sizes import parse_size

_CLASS_KEYS = {"name", "requirements", "load_share", "weight", "rtt", "packets", "packet_order",
               "size", "route"}
_MIX_KEYS = {"requirements", "probability"}
#: replications of a point: a sweep plans one point per replication before it starts (10⁹
#: asked for ran for minutes without a first progress line, a review); longer runs per
#: replication, not more of them, are the way to a narrower interval
MAX_REPLICATIONS = 10**6
REPLICATIONS_WHY = "a sweep plans every replication as a point of its own"
#: flows per replication: the packet engine numbers at most 2^43 packet arrivals at
#: resources in one replication (mrfq.packet.kernel.MAX_SEQ), and every flow makes one
MAX_FLOWS = 2**43
#: flows of one flow-level replication: its arrival and completion records take ~40 bytes
#: each (four 8-byte arrays, grown by a quarter), ~12 GB at this bound (10^12 asked for
#: 7 TiB: a MemoryError traceback)
MAX_FLUID_FLOWS = 3 * 10**8
_FLUID_KEYS = {"policies", "tolerance", "method", "flows", "replications", "seed"}
_PACKET_KEYS = {
    "policies", "mean_size", "window", "flows", "warmup", "replications", "seed", "delta",
    "batches", "precision", "max_replications", "fq_resource", "init", "virtual_time",
}


def fail(problem: str, field_name: str, source: str | None) -> InputError:
    """The InputError of a scenario field (``source``: the file; None for an option)."""
    return InputError(problem, field_name, source)


def check_init(packet: PacketConfig, classes: tuple[TrafficClass, ...], field_name: str,
               source: str | None, check_policies: bool = True) -> None:
    """InputError unless ``init = "fluid"`` can be honoured as far as the scenario alone
    tells: every class has exponential sizes (the Markov model's assumption, BR §4.1) and
    every packet policy has a fluid counterpart (:mod:`mrfq.policies`). The state budget,
    which depends on the load, is checked per point (:func:`mrfq.kinds.packet.check`)."""
    if packet.init != "fluid":
        return
    other = [c for c in classes if c.size.distribution != "exponential"]
    if other:
        raise fail(f"'fluid' needs the Markov model, which assumes exponential sizes, but "
                   f"class '{other[0].name}' has {other[0].size.distribution} sizes",
                   field_name, source)
    if check_policies:
        for name in packet.policies:
            if policies.fluid_counterpart(name) is None:
                raise fail(f"'fluid' needs a fluid counterpart of every packet policy, and "
                           f"{name} has none", field_name, source)


def _policies(value: Any, kind: str, field_name: str, source: str | None) -> tuple:
    return fields.name_list(value, field_name, source, allowed=policies.names(kind),
                            what="policy", lower=True)


def _warmup(value: Any, field_name: str, source: str | None) -> float | str:
    """A warm-up fraction in [0, 1), or "auto" (MSER-5 on the run's own data,
    :func:`mrfq.stats.warmup_cut`)."""
    if isinstance(value, str):
        if value.strip().lower() == "auto":
            return "auto"
        try:
            value = float(value)  # from the command line
        except ValueError:
            raise fail(f"must be 'auto' or a fraction in [0, 1), got {value!r}",
                       field_name, source) from None
    fraction = fields.number(value, field_name, source, nonnegative=True)
    if fraction >= 1:
        raise fail(f"must be 'auto' or a fraction in [0, 1), got {fraction:g}", field_name,
                   source)
    return fraction


def _precision(value: Any, field_name: str, source: str | None) -> float | None:
    """A relative half-width target in [:data:`MIN_PRECISION`, 1), or None (no target:
    JSON null in a stored scenario; TOML has no null, so a file simply leaves the key
    out)."""
    if value is None:
        return None
    target = fields.number(value, field_name, source, positive=True)
    if not MIN_PRECISION <= target < 1:
        raise fail(f"must be a fraction in [{MIN_PRECISION:g}, 1) of gamma, got {target:g}",
                   field_name, source)
    return target


#: the smallest precision target: ±10⁻⁶ of γ takes ~10¹² times a ±1 run's flows, beyond any
#: budget; below it the run-length arithmetic overflowed (a review: 10⁻³²⁰ ended a sweep
#: in a traceback after its work had begun)
MIN_PRECISION = 1e-6


def _choice(value: Any, choices: tuple[str, ...], field_name: str, source: str | None) -> str:
    """One of ``choices`` (case-insensitive)."""
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise fail(f"must be one of {', '.join(choices)}, got {fields.shown(value)}", field_name,
                   source)
    return value.strip().lower()


#: the smallest positive load_share (and class load ρ_k in the fluid solvers,
#: :func:`mrfq.fluid.problem.stable_loads`), relative to the largest: below it the Markov
#: solver's γ for that class drifts without its error estimate showing it (measured on
#: two classes at load 0.5: −0.4% at a ratio of 1e-8, −18% at 1e-10, within 2e-7 at
#: 1e-6). (A packet run of usual length sees no flow of such a class anyway: γ NaN.)
MIN_LOAD_SHARE_RATIO = 1e-6
#: a resource load at or above this is unstable: 1 itself, but the loads of an axis value
#: of 1 are sums of rounded shares (Figure 1 at load 1.0 gave 0.9999999999999999, which
#: passed as stable and was solved)
STABLE_BELOW = 1.0 - 1e-12
#: the smallest relative truncation error the Markov solver of DRF, PF and BMF accepts
#: (and a scenario, for all its fluid policies): its linear solves stop at a relative
#: residual of 1e-12, which leaves γ off by up to ~1e-10 (a review: 5e-10 at tolerance
#: 1e-10, 1e-10 at 1e-14, against estimates of 5e-11 and 1e-17), so the truncation
#: estimate would no longer bound the error below this
MIN_TOLERANCE = 1e-9
TOLERANCE_FLOOR = ("must be >= 1e-9, got {:g}: below it the Markov solver's linear solves "
                   "(up to ~1e-10 off) would exceed it, unseen by its truncation estimate")
#: the range of a load_share: ρ_k = load_share_k · load / Σ_k load_share_k a_kj must
#: neither overflow (a_kj ≤ 1) nor lose its digits in subnormal numbers
MAX_LOAD_SHARE = 1e300
MIN_LOAD_SHARE = 1e-300


def check_load_shares(classes: tuple[TrafficClass, ...], source: str | None) -> None:
    """Every load_share 0 or in [MIN_LOAD_SHARE, MAX_LOAD_SHARE], and every positive one
    at least MIN_LOAD_SHARE_RATIO of the largest (a smaller class is left out with 0)."""
    largest = max(c.load_share for c in classes)
    for i, c in enumerate(classes):
        if c.load_share > MAX_LOAD_SHARE or 0 < c.load_share < MIN_LOAD_SHARE:
            raise fail(f"must be 0 or between {MIN_LOAD_SHARE:g} and {MAX_LOAD_SHARE:g} "
                       f"(load shares are relative: scale them), got {c.load_share:g}",
                       f"classes[{i}].load_share", source)
        if 0 < c.load_share < MIN_LOAD_SHARE_RATIO * largest:
            raise fail(f"{c.load_share:g} is less than {MIN_LOAD_SHARE_RATIO:g} of the largest "
                       f"load_share ({largest:g}): too small a class for the fluid solvers to "
                       "resolve (use 0 to leave it out)", f"classes[{i}].load_share", source)


def parse_class(raw: Any, index: int, num_resources: int, source: str,
                default_load_share: float | None = None) -> TrafficClass:
    """The ``index``-th ``[[classes]]`` table: requirement vector (or packet mix) over
    ``num_resources`` resources, normalised so the mean vector's largest entry is 1
    (BR §2.1), relative load, weight, RTT and flow-size law (its ``route`` is read by
    :func:`mrfq.scenario.network.parse_route`). ``default_load_share``: the load_share of
    a class that gives none (None: it must give one)."""
    where = f"classes[{index}]"
    raw = fields.check_keys(raw, _CLASS_KEYS, where, source)
    name = fields.text(raw.get("name", str(index + 1)), f"{where}.name", source, name=True)
    if "load_share" not in raw and default_load_share is None:
        raise fail("missing (relative load of the class)", f"{where}.load_share", source)
    load_share = fields.number(raw.get("load_share", default_load_share),
                               f"{where}.load_share", source, nonnegative=True)
    weight = fields.number(raw.get("weight", 1.0), f"{where}.weight", source, positive=True)
    fields.check_weights(weight, f"{where}.weight", source)
    rtt = fields.number(raw.get("rtt", 0.0), f"{where}.rtt", source, nonnegative=True)
    order = raw.get("packet_order", "random")
    if order not in ("random", "cycle"):
        raise fail(f"must be 'random' or 'cycle', got {fields.shown(order)}",
                   f"{where}.packet_order", source)
    has_req, has_mix = "requirements" in raw, "packets" in raw
    if has_req == has_mix:
        raise fail("give exactly one of 'requirements' or 'packets'", where, source)
    if has_req:
        vectors = fields.vector(raw["requirements"], num_resources, f"{where}.requirements",
                                source)[None, :]
        probabilities = np.ones(1)
    else:
        mix = raw["packets"]
        if not isinstance(mix, list) or not mix:
            raise fail("must be a non-empty list of {requirements, probability} tables",
                       f"{where}.packets", source)
        rows, probs = [], []
        for p, entry in enumerate(mix):
            entry_where = f"{where}.packets[{p}]"
            entry = fields.check_keys(entry, _MIX_KEYS, entry_where, source)
            if "requirements" not in entry:
                raise fail("missing", f"{entry_where}.requirements", source)
            rows.append(fields.vector(entry["requirements"], num_resources,
                                      f"{entry_where}.requirements", source))
            default_p = 1.0 / len(mix)
            probs.append(fields.number(entry.get("probability", default_p),
                                       f"{entry_where}.probability", source, positive=True))
        vectors = np.array(rows)
        probabilities = np.array(probs)
        if order == "random" and abs(probabilities.sum() - 1.0) > 1e-9:
            raise fail(f"probabilities sum to {probabilities.sum():g}, expected 1",
                       f"{where}.packets", source)
        if order == "cycle":
            # the types in turn, 1/n each: other probabilities were dropped silently (a
            # stored scenario writes 1/n, which reads back)
            given = [p for p, e in enumerate(mix) if "probability" in e
                     and abs(probs[p] - 1.0 / len(mix)) > 1e-12]
            if given:
                raise fail(f"packet_order = \"cycle\" sends the {len(mix)} packet types "
                           f"in turn, 1/{len(mix)} each: leave out the probabilities, or "
                           "use packet_order = \"random\" to draw them",
                           f"{where}.packets[{given[0]}].probability", source)
            probabilities = np.full(len(rows), 1.0 / len(rows))
    scale = (probabilities @ vectors).max()
    if scale < MIN_LOAD_SHARE:  # (all subnormal: [1.4e-323, 1e-323] became [1, 0.667])
        raise fail(f"the largest mean requirement is {scale:g}: requirements are relative, "
                   f"scale them to at least {MIN_LOAD_SHARE:g}", where, source)
    # Normalised so that the mean packet's largest requirement is 1. A mix already
    # normalised (a stored scenario read back) is kept as it is: dividing again by a
    # scale one rounding away from 1 would move its last bits at every round trip.
    if abs(scale - 1.0) > 1e-12:
        vectors = vectors / scale
    mean = probabilities @ vectors
    # an empirical file is found relative to the scenario's folder
    base = Path(source).parent if not source.startswith("<") else None
    size = parse_size(raw.get("size"), f"{where}.size", source, base_dir=base)
    return TrafficClass(
        name=name,
        requirements=mean / mean.max(),
        load_share=load_share,
        weight=weight,
        rtt=rtt,
        packet_requirements=vectors,
        packet_probabilities=probabilities,
        packet_order=order,
        size=size,
    )


def _field(where: str, key: str) -> str:
    """The field an error names: ``packet.window`` in a file, ``window`` for an override
    (the Python keyword; the CLI names its option, ``--window``)."""
    return key if where == "keyword" else f"{where}.{key}"


def _fq_resource(value, field: str, source: str | None) -> str | tuple[str, ...] | None:
    """``fq_resource``: one resource name, or a non-empty list of distinct names (the
    resources bottleneck FQ schedules, e.g. one per router); names are checked against
    ``resources`` by the scenario loader."""
    if value is None or isinstance(value, str):
        return None if value is None else fields.text(value, field, source)
    if not isinstance(value, list | tuple) or not value:  # (a tuple: a Scenario's own)
        raise InputError(f"must be a resource name or a non-empty list of them, got "
                         f"{fields.shown(value)}", field, source)
    names = tuple(fields.text(v, f"{field}[{i}]", source) for i, v in enumerate(value))
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"names a resource twice: {', '.join(twice)}", field, source)
    return names


def parse_packet(raw: dict, source: str | None, where: str = "packet") -> PacketConfig:
    """``[packet]`` with its defaults filled in; ``where = "keyword"`` for overrides
    (errors then name the keyword, ``mean_size``, and no file; the CLI turns it into its
    option, ``--mean-size``)."""
    if where == "keyword":  # overrides (Python keywords, command-line options): no file
        source = None
    raw = fields.check_keys(raw, _PACKET_KEYS, "" if where == "keyword" else where, source)
    defaults = PacketConfig()
    get = raw.get
    def value(key):
        return get(key, getattr(defaults, key))

    def integer(key, minimum, maximum=None, why=""):
        return fields.integer(value(key), _field(where, key), source, minimum, maximum, why)

    packet = PacketConfig(
        policies=_policies(value("policies"), policies.PACKET, _field(where, "policies"),
                           source),
        mean_size=fields.number(value("mean_size"), _field(where, "mean_size"), source),
        window=integer("window", 1),
        flows=integer("flows", 1, MAX_FLOWS, "2^43, the engine's limit per replication"),
        warmup=_warmup(value("warmup"), _field(where, "warmup"), source),
        replications=integer("replications", 1, MAX_REPLICATIONS, REPLICATIONS_WHY),
        seed=integer("seed", 0),
        delta=None if value("delta") is None else fields.number(
            value("delta"), _field(where, "delta"), source, nonnegative=True, allow_inf=True),
        batches=integer("batches", 2),
        precision=_precision(value("precision"), _field(where, "precision"), source),
        max_replications=integer("max_replications", 1, MAX_REPLICATIONS, REPLICATIONS_WHY),
        fq_resource=_fq_resource(value("fq_resource"), _field(where, "fq_resource"), source),
        init=_choice(value("init"), PACKET_INITS, _field(where, "init"), source),
        virtual_time=_choice(value("virtual_time"), VIRTUAL_TIMES,
                             _field(where, "virtual_time"), source),
    )
    if packet.precision is not None and packet.max_replications < packet.replications:
        raise fail(f"must be >= replications ({packet.replications}), got "
                   f"{packet.max_replications}", _field(where, "max_replications"), source)
    if packet.mean_size < 1:
        raise fail(f"must be >= 1 packet, got {packet.mean_size:g}", _field(where, "mean_size"),
                   source)
    fixed = packet.warmup if packet.warmup != "auto" else 0.0
    measured = packet.flows - int(fixed * packet.flows)
    if measured < 1:
        raise fail("no flow left to measure after the warm-up", _field(where, "flows"), source)
    # batches set above the flows (every interval withheld, a review); the default 20
    # with fewer flows stays a run whose intervals say why they are missing. (Keywords:
    # every field is in ``raw``; a set value is one other than the default.)
    given = "batches" in raw if where != "keyword" else packet.batches != defaults.batches
    if given and packet.batches > measured:
        raise fail(f"must be <= {measured:,}, the flows measured after the warm-up (a "
                   f"batch needs flows), got {packet.batches:,}", _field(where, "batches"),
                   source)
    return packet



def check_packet_budget(packet: PacketConfig, n_resources: int, field: str,
                        source: str | None, classes: Sequence = ()) -> None:
    """InputError when a replication's expected packet arrivals at resources, flows ×
    packets per flow × resources, reach the engine's limit (MAX_FLOWS = 2^43): the run
    would stop there after hours (mean_size = 1e308 overflowed and hung). Packets per
    flow: mean_size, or with ``classes`` their mix, Σ ρ_k / Σ (ρ_k / E[N_k]) (flow rates
    ρ_k / E[N_k], :func:`mrfq.counts.mean_count`: an un-rescaled table of sizes 10^6
    times the mean makes 10^6 times more packets)."""
    per_flow = packet.mean_size
    shares = [c.load_share for c in classes]
    if classes and sum(shares) > 0:
        try:  # (E[N] of m near 1e308 overflows: then it is surely over the limit)
            with np.errstate(all="ignore"):
                rates = sum(share / mean_count(c.size, packet.mean_size)
                            for share, c in zip(shares, classes, strict=True))
            per_flow = sum(shares) / rates
        except (OverflowError, ZeroDivisionError):
            per_flow = math.nan
    expected = packet.flows * per_flow * n_resources
    if not math.isfinite(per_flow):  # (said with m, counted as over the limit)
        per_flow, expected = packet.mean_size, math.inf
    if not expected < MAX_FLOWS:
        raise fail(f"{packet.flows:,} flows × {per_flow:.6g} packets × {n_resources} "
                   f"resources = {expected:.3g} packet arrivals per replication, more than "
                   "2^43 (the engine's limit): fewer or shorter flows", field, source)


def check_fq_names(packet: PacketConfig, resources: tuple[str, ...], field: str,
                   source: str | None) -> None:
    """InputError unless every resource ``fq_resource`` names is one of ``resources``."""
    names = ((packet.fq_resource,) if isinstance(packet.fq_resource, str)
             else packet.fq_resource or ())
    for name in names:
        if name not in resources:
            raise fail(f"unknown resource '{name}' (choose from {', '.join(resources)})",
                       field, source)


#: max_replications without a precision target: the run would use `replications` as is
UNUSED_BUDGET = ("is the replication budget of a precision target, and no precision is "
                  "set (packet.precision, or --precision): nothing would read it")


def check_parameters_read(packet: PacketConfig, running: Iterable[str],
                          source: str | None) -> None:
    """InputError (field ``packet.<name>``) for a ``[packet]`` parameter that only some
    policies read (Δ, DRFQ's clock, bottleneck FQ's resource), set away from its default,
    that neither the packet policies this run simulates (``running``) nor the file's
    ``packet.policies`` read: the run would ignore it. Checked where a run starts
    (:func:`mrfq.kinds.packet.check`, :func:`mrfq.packet.flows.run_flows`), not when a
    file is read, so a file may carry Δ for a policy chosen on the command line."""
    defaults = PacketConfig()
    if packet.precision is None and packet.max_replications != defaults.max_replications:
        raise fail(UNUSED_BUDGET, "packet.max_replications", source)
    run = list(dict.fromkeys([*running, *packet.policies]))
    for name in (policies.DELTA, policies.FQ_RESOURCE, policies.VIRTUAL_TIME):
        who = policies.readers(name)
        if getattr(packet, name) != getattr(defaults, name) and not set(who) & set(run):
            raise fail(f"no policy run or listed in packet.policies ({', '.join(run)}) reads "
                       f"it; {' and '.join(who)} {'does' if len(who) == 1 else 'do'}",
                       f"packet.{name}", source)


def parse_fluid(raw: Any, source: str, classes: tuple[TrafficClass, ...]) -> FluidConfig:
    """``[fluid]`` with its defaults filled in. The Markov method
    is refused when a class's sizes are not exponential, unless every listed policy is
    insensitive (its law, hence γ, depends on the size law only through the mean,
    :mod:`mrfq.policies`)."""
    raw = fields.check_keys(raw, _FLUID_KEYS, "fluid", source)
    defaults = FluidConfig()
    method = raw.get("method", defaults.method)
    if not isinstance(method, str) or method.lower() not in FLUID_METHODS:
        raise fail(f"must be one of {', '.join(FLUID_METHODS)}, got {fields.shown(method)}",
                   "fluid.method", source)
    fluid = FluidConfig(
        policies=_policies(raw.get("policies", list(defaults.policies)), policies.FLUID,
                           "fluid.policies", source),
        tolerance=fields.number(raw.get("tolerance", defaults.tolerance), "fluid.tolerance",
                                source, positive=True),
        method=method.lower(),
        flows=fields.integer(raw.get("flows", defaults.flows), "fluid.flows", source, 1,
                             MAX_FLUID_FLOWS, "the flow-level simulator keeps ~40 bytes of "
                             "memory per flow"),
        replications=fields.integer(raw.get("replications", defaults.replications),
                                    "fluid.replications", source, 1, MAX_REPLICATIONS,
                                    REPLICATIONS_WHY),
        seed=fields.integer(raw.get("seed", defaults.seed), "fluid.seed", source, 0),
    )
    if not fluid.tolerance < 1:  # a relative error of 100% or more bounds nothing (a review)
        raise fail(f"must be < 1 (a relative truncation error), got {fluid.tolerance:g}",
                   "fluid.tolerance", source)
    if fluid.tolerance < MIN_TOLERANCE:
        raise fail(TOLERANCE_FLOOR.format(fluid.tolerance), "fluid.tolerance", source)
    other = [c for c in classes if c.size.distribution != "exponential"]
    sensitive = [p for p in fluid.policies if not policies.get(policies.FLUID, p).insensitive]
    if fluid.method == "markov" and other and sensitive:
        exact = ", ".join(p.name for p in policies.entries(policies.FLUID) if p.insensitive)
        raise fail(f"the Markov solver assumes exponential sizes, but class '{other[0].name}'"
                   f" has {other[0].size.distribution} sizes (use 'simulation' or 'auto'; "
                   f"only {exact} is exact for every law)", "fluid.method", source)
    return fluid
