"""Kinds of point: one module per way a point of a scenario is computed.

A **point** is one unit of work of a sweep: a realisation (``fluid``, ``packet`` or
``cluster``, the
scenario's table it is configured by and the prefix of its result file), a policy of that
realisation, a value on the load axis and a replication index. Which *kind* computes it
follows from the scenario, the policy and the load alone (so a point's key is known before
it is computed):

=================================  ==========================================================
:mod:`mrfq.kinds.markov`           fluid γ by the Markov demand model (BR §4.1)
:mod:`mrfq.kinds.explicit`         fluid γ by an explicit stationary law (balanced fairness)
:mod:`mrfq.kinds.flowlevel`        fluid γ by the flow-level simulator (any size law)
:mod:`mrfq.kinds.packet`           packet γ by a replication of the packet engine (SPEC §3)
:mod:`mrfq.kinds.cluster`          cluster γ by a run of the cluster simulator (SPEC §6)
=================================  ==========================================================

Every kind module has the same face, which is all the sweep (:mod:`mrfq.sweeps`), the
precision driver (:mod:`mrfq.point_plan`) and the summary use:

* ``NAME``, ``REALISATION``; ``REPLICATED`` (its points are replications ``-r<i>``) and
  ``PRIORITY`` (lower runs first: the expensive points, so parallel workers end together);
  ``RECORD_CLASS_KEYS``: what every class of its records holds (:func:`is_record`);
* ``check(scenario, policy, load)`` — InputError before any work if the point cannot be
  computed;
* ``key_parts(scenario, point) -> dict`` — everything that determines the point's numbers
  (and nothing else), versions of the code included; hashed into the file name;
* ``compute(scenario, point) -> dict`` — the JSON-serialisable record (runs in a worker);
* ``first_replications(scenario)``, ``stopping(scenario, records, start, confidence)`` and
  ``max_replications(scenario)`` — how many replications a (policy, load) starts with,
  how many of those finished it uses (a :class:`mrfq.kinds.replications.Stopping`) and
  at most (the precision rule of replicated kinds; 1, 1 and 1 for the others);
* ``prepare(policies, jobs)`` — once per sweep before the workers start (compile kernels,
  on up to ``jobs`` processes);
* ``summary_rows(scenario, records, fluid_records)`` — the summary rows of one (policy,
  load) from its records (``fluid_records``: the sweep's Markov fluid records by (fluid
  policy, load), which packet points take their γ intervals' variance from), and
  ``size_bin_rows(scenario, records)`` — its rows of ``size_bins.csv``.

Adding a kind is one module with this face plus its line in :data:`KINDS` (and, for a
fluid method, its case in :func:`fluid_kind`).
"""

from __future__ import annotations

import hashlib
import json
from types import ModuleType

from threadpoolctl import threadpool_limits

from mrfq import policies
from mrfq.fluid.method import fluid_method, record_method
from mrfq.kinds import cluster, explicit, flowlevel, markov, packet
from mrfq.kinds.point import Point
from mrfq.scenario import Scenario

#: every kind module, by name
KINDS: dict[str, ModuleType] = {m.NAME: m for m in (markov, explicit, flowlevel, packet,
                                                   cluster)}
#: the realisations, in the order their points are listed
REALISATIONS = (policies.FLUID, policies.PACKET, policies.CLUSTER)


#: the kind module of each fluid method (:func:`mrfq.fluid.method.fluid_method`) and
#: stationary law (the registry's ``law``)
_FLUID_KINDS = {("markov", policies.MARKOV_LAW): markov,
                ("markov", policies.EXPLICIT_LAW): explicit}


def fluid_kind(method: str, policy: str) -> ModuleType:
    """The kind module of a fluid point computed by ``method`` (markov or simulation)."""
    law = policies.get(policies.FLUID, policy).law
    return _FLUID_KINDS.get((method, law), flowlevel)


def kind_of(scenario: Scenario, realisation: str, policy: str, load: float) -> ModuleType:
    """The kind module that computes (``realisation``, ``policy``, ``load``) of a
    scenario (module doc)."""
    if realisation == policies.PACKET:
        return packet
    if realisation == policies.CLUSTER:
        return cluster
    return fluid_kind(fluid_method(scenario, policy, load), policy)


def kind_of_record(record: dict) -> ModuleType:
    """The kind module a stored record came from."""
    if record["kind"] == policies.PACKET:
        return packet
    if record["kind"] == policies.CLUSTER:
        return cluster
    return fluid_kind(record_method(record), record["policy"])


def is_record(scenario: Scenario, point: Point, record: object) -> bool:
    """Whether ``record`` (a stored file's JSON) is a whole record of ``point``: its kind,
    policy, load and replication, and one dict per scenario class (a trace's classes are
    its own) holding the kind's ``RECORD_CLASS_KEYS``. A file that is not was edited or
    damaged outside mrfq (which writes atomically)."""
    if not (isinstance(record, dict) and record.get("kind") == point.kind
            and record.get("policy") == point.policy and record.get("load") == point.load
            and record.get("replication", 0) == point.replication):
        return False
    classes = record.get("classes")
    keys = kind_of(scenario, point.kind, point.policy, point.load).RECORD_CLASS_KEYS
    return (isinstance(classes, list) and len(classes) > 0
            and (not scenario.classes or len(classes) == len(scenario.classes))
            and all(isinstance(c, dict) and all(k in c for k in keys) for c in classes))


def point_key(scenario: Scenario, point: Point) -> str:
    """Hash of everything that determines a point's stored numbers (the kind's
    ``key_parts``, the realisation and the policy) and nothing else."""
    kind = kind_of(scenario, point.kind, point.policy, point.load)
    parts = kind.key_parts(scenario, point)
    parts.update(kind=point.kind, policy=point.policy)
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def point_filename(scenario: Scenario, point: Point) -> str:
    """``<realisation>-<policy>-<load>[-r<replication>]-<key>.json``."""
    kind = kind_of(scenario, point.kind, point.policy, point.load)
    rep = f"-r{point.replication}" if kind.REPLICATED else ""
    return (f"{point.kind}-{point.policy}-{point.load:g}{rep}-"
            f"{point_key(scenario, point)}.json")


def compute_point(scenario: Scenario, point: Point) -> dict:
    """Compute one point with its kind (runs in a worker, or in the calling process with
    one job) with one BLAS thread wherever it runs: a BLAS reduction (a packet point's
    Σ x² of its flows' rates) sums in an order that depends on the thread count, so the
    calling process (all cores) and a worker (one) gave different last bits."""
    with threadpool_limits(limits=1):
        return kind_of(scenario, point.kind, point.policy, point.load).compute(scenario,
                                                                                point)
