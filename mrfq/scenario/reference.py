"""The scenario-file reference, built from what the validator accepts.

:data:`SECTIONS` describes every table of a scenario file and every key in it; the keys of
each table are the validator's own key sets (``_TOP_KEYS`` … ``_FLOW_KEYS``), and a test
(``tests/test_docs.py``) fails when a key is accepted but not described or described but
not accepted. Defaults of ``[fluid]`` and ``[packet]`` are read from their records
(:class:`FluidConfig`, :class:`PacketConfig`), so the reference cannot drift from the code.
:func:`reference_markdown` renders the page of the documentation site.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields

from mrfq import explicit, sizes
from mrfq.scenario import checks
from mrfq.scenario import cluster as cluster_section
from mrfq.scenario import files as scenario_files
from mrfq.scenario.config import (
    FLUID_METHODS,
    PACKET_INITS,
    VIRTUAL_TIMES,
    ClusterConfig,
    FluidConfig,
    PacketConfig,
)
from mrfq.sizes import DISTRIBUTIONS
from mrfq.workloads import BUNDLED


@dataclass(frozen=True)
class Section:
    """One table of a scenario file: its TOML name, the keys the validator accepts there,
    the description of each key (type and meaning) and where defaults come from."""

    table: str
    about: str
    accepted: frozenset[str]
    keys: dict[str, str]
    defaults: type | None = None
    #: for ``[classes.size]``: key → the laws that take it (a column of the page)
    laws: dict[str, list[str]] | None = None


SECTIONS = (
    Section("(top level)", "The scenario's name and resources, and its tables.",
            frozenset(scenario_files._TOP_KEYS), {
                "name": "string, a file name (no `/`, `\\`, not `..`). The scenario's name "
                "(results go to `results/<name>`).",
                "description": "string. One line, used as the figures' title.",
                "resources": "list of strings, required. The resources J, in the order "
                             "packets visit them (a CPU, then a link, ...) unless "
                             "their class names a `route`.",
                "classes": "array of tables `[[classes]]`, required. The traffic classes.",
                "load": "table `[load]`. The load axis and values.",
                "fluid": "table `[fluid]`. The fluid model's settings.",
                "packet": "table `[packet]`. The packet simulator's settings.",
                "flows": "array of tables `[[flows]]`. Explicit flows (`mrfq flows`) "
                         "instead of Poisson arrivals; needs `[timeline]`.",
                "cluster": "table `[cluster]`. The classes as jobs of tasks on a pooled "
                           "cluster (`mrfq cluster`).",
                "routers": "table `[routers]`: router name = list of its resources. Every "
                           "resource in exactly one router (default: one router holding "
                           "all, the tandem).",
                "timeline": "table `[timeline]`. Duration and bin width of explicit flows.",
            }),
    Section("[[classes]]", "One class of flows (BR §2.1).",
            frozenset(checks._CLASS_KEYS), {
                "name": "string, required. The class's name in tables and plots.",
                "requirements": "list of J numbers ≥ 0, not all 0, required. The fluid "
                                "requirement vector a_k, normalised so max_j a_kj = 1 (time "
                                "per packet at each resource, in dominant packet services).",
                "load_share": "number ≥ 0, required (at least one class > 0; default 1 "
                              "in a scenario with `[[flows]]`, which run without it). Relative "
                              "load ρ_k; the `[load]` values scale them (BR eq. 8). 0 or in "
                              "[1e-300, 1e300], and a positive one at least 1e-6 of the "
                              "largest (the solvers cannot resolve a smaller class); 0 "
                              "leaves the class out.",
                "weight": "number in [1e-6, 1e6], default 1. The class's weight in "
                          "weighted DRF, PF and BMF and their schedulers (relative: scale "
                          "them).",
                "rtt": "number ≥ 0, default 0. Round-trip time added to each packet's "
                       "acknowledgement (time units). Refused at a load where the round "
                       "trips alone would keep more flows in progress than the packet "
                       "engine holds (2^20; Little's law).",
                "packets": "array of tables `{requirements, probability}`. A per-packet "
                           "mix instead of one requirement vector.",
                "packet_order": "\"random\" (default) or \"cycle\". How packets of the mix "
                                "are drawn.",
                "route": "list of resource names, each at most once. The order in which "
                         "its packets visit resources (default: the resources with a "
                         "nonzero requirement, in `resources` order); exactly the "
                         "resources where its requirement is nonzero.",
                "size": "table. The flow-size law (default exponential): its keys are "
                        "under `[classes.size]` below.",
            }),
    Section("[classes.size]", "A class's flow-size law (`size = {distribution = ...}` "
            "or a `[classes.size]` table). Sizes are in units of the class's mean: every "
            "law is scaled to mean 1 (unless `rescale = false`), the packet simulator "
            "then makes a flow of size x into about m·x packets.",
            frozenset({"distribution"}.union(*sizes._PARAMETERS.values())), {
                "distribution": "one of " + ", ".join(f"\"{d}\"" for d in DISTRIBUTIONS)
                                + ". Required in a size table (a class without `size` is "
                                "exponential).",
                "scv": "number in [1, 1e12], required. Squared coefficient of variation of the "
                       "two-phase hyperexponential (balanced means).",
                "sigma": "number in [0, 8], required. σ of the underlying normal (mean 1).",
                "shape": "number > 1, required. The Pareto tail index α (mean 1: "
                         "minimum (α − 1)/α); α ≤ 2 has infinite variance, and the "
                         "intervals say so.",
                "max": "number > (α − 1)/α, ≤ 1e100. Truncate the Pareto law there (then "
                       "rescaled to mean 1); default none.",
                "file": "path, relative to the scenario file. `empirical` (required): a "
                        "CSV file of positive sizes, one flow per row in the first column (an "
                        "optional header; drawn uniformly with replacement). `cdf`: a "
                        "two-column CSV table (size, cdf) with the rules of `points`.",
                "points": "list of at least two `[size, cdf]` pairs: sizes positive "
                          "and strictly increasing, cdf values in [0, 1], non-decreasing, "
                          "the last 1. The law is linear between points, with an atom of "
                          "the first cdf value at the first size. Give exactly one of "
                          "`points`, `file`, `workload`.",
                "workload": "one of " + ", ".join(f"\"{w}\"" for w in BUNDLED)
                            + ". A bundled published flow-size CDF (`mrfq list` names "
                              "them; their sources: the Python guide).",
                "rescale": "true or false, default true. Divide the sizes by the law's "
                           "mean (mean 1 = m packets); false takes them as work units as "
                           "given, and the law's mean is the table's. Either way the "
                           "sizes as used lie in [1e-100, 1e100].",
            }, laws={key: [d for d, keys in sizes._PARAMETERS.items() if key in keys]
                     for key in set().union(*sizes._PARAMETERS.values())}),
    Section("[load]", "The x-axis of every figure.", frozenset(scenario_files._LOAD_KEYS), {
        "axis": "a resource name or \"max\" (the most loaded resource), default \"max\". "
                "A resource some class with a positive `load_share` uses.",
        "values": "list of numbers in (0, 1), distinct. The loads of that resource.",
    }),
    Section("[fluid]", "The fluid model (exact Markov solution or flow-level simulation).",
            frozenset(checks._FLUID_KEYS), {
                "policies": "list of fluid policy names (`mrfq list`).",
                "tolerance": "number in [1e-9, 1). Relative truncation error of the Markov solver "
                             "(below 1e-9 its linear solves' own error would exceed it).",
                "method": "one of " + ", ".join(f"\"{m}\"" for m in FLUID_METHODS)
                          + ". How a point is computed (auto: Markov where it applies).",
                "flows": "integer ≤ 3·10^8. Flows per replication of the flow-level "
                         "simulator.",
                "replications": "integer in [1, 10^6]. Replications of the flow-level "
                                "simulator.",
                "seed": "integer. Seed of the flow-level simulator.",
            }, FluidConfig),
    Section("[packet]", "The packet simulator.", frozenset(checks._PACKET_KEYS), {
        "policies": "list of packet policy names (`mrfq list`).",
        "mean_size": "number ≥ 1. Mean packets per flow m (flows × mean_size × "
                     "resources < 2^43, the engine's count of packet arrivals).",
        "window": "integer ≥ 1. Window W: packets of a flow in the router (in a network: "
                  "anywhere on its route) at most.",
        "flows": "integer. Flow arrivals per replication (`1e4` allowed).",
        "warmup": "\"auto\" or a fraction in [0, 1). Flows left out of γ at the start.",
        "replications": "integer in [1, 10^6]. Independent replications per point.",
        "seed": "integer. The seed of every stream.",
        "delta": "number ≥ 0 or inf. Dovetailing DRFQ's bound Δ (time units); default: "
                 "one window's worth, W.",
        "virtual_time": "one of " + ", ".join(f"\"{v}\"" for v in VIRTUAL_TIMES)
                        + ". DRFQ's virtual time rule.",
        "batches": "integer ≥ 2, at most the flows measured after a fixed warm-up. "
                   "Batches per replication for the intervals.",
        "precision": "number in [10^-6, 1). Target relative 95% half-width of every "
                     "class's γ: replications are added until it holds.",
        "max_replications": "integer in [1, 10^6]. The replication budget with "
                            "`precision`.",
        "fq_resource": "a resource name, or a list of distinct names. The resource(s) "
                       "bottleneck FQ schedules, FIFO elsewhere (default the last; with "
                       "routers, the last of every router).",
        "init": "one of " + ", ".join(f"\"{v}\"" for v in PACKET_INITS)
                + ". How a replication starts (fluid: flows in progress drawn from the "
                  "Markov model's stationary law).",
    }, PacketConfig),
    Section("[cluster]", "The cluster model: jobs of tasks on a pooled cluster.",
            frozenset(cluster_section._KEYS), {
                "policies": "list of cluster scheduler names (`mrfq list`); default, when "
                            "the section is present, the registry's cluster defaults.",
                "tasks_per_resource": "number > 0. C: the pool holds C dominant tasks of "
                                      "every resource.",
                "mean_tasks": "number ≥ 1, or table class name → number ≥ 1. E[N], tasks "
                              "per job (every class, or the classes named; the others "
                              "keep the default).",
                "tasks": "\"geometric\", \"fixed\", a size-law table as a class's "
                         "`size` (N = 1 + ⌊x/θ⌋, θ = −ln(1 − 1/E[N]), as a flow's packets), "
                         "or table class name → one of these (the others keep the "
                         "default). The law of N.",
                "duration": "number in [1e-100, 1e100], or table class name → such a "
                            "number. d, a task's mean duration (every class, or the "
                            "classes named; the others keep the default); time is in its "
                            "unit, so durations are relative: scale them.",
                "duration_law": "\"exponential\", \"fixed\", a size-law table as a "
                                "class's `size` (duration d·x), or table class name → one "
                                "of these (the others keep the default). The law of a "
                                "task's duration.",
                "jobs": "integer. Job arrivals per run.",
                "warmup": "fraction in [0, 1). Jobs left out at the start.",
                "batches": "integer ≥ 2, at most jobs / 2. Batches for the intervals.",
                "seed": "integer. The seed of the run.",
                "slots_per_server": "integer ≥ 1. The slot scheduler's k.",
                "servers": "list of capacity vectors (one number per resource, each 0 "
                           "or in [1e-6, 1e9]) or tables "
                           "`{capacity, count = 1, type = \"name\"}`; or one table "
                           "`{table, count, seed = 1}` drawing `count` servers "
                           "independently from a table of configurations weighted by "
                           "their server counts: `\"google\"` (DRFH's Table I, CPU and "
                           "memory) or a CSV file in its format (`servers,<resource>,...`, "
                           "capacities in [1e-6, 1e9]; path relative to the scenario "
                           "file), its columns taken as "
                           "the scenario's resources in order. Default (or `[]`, "
                           "as a stored scenario writes it), the pool. A "
                           "class-k task then needs a_k · (Σ servers) / "
                           "tasks_per_resource.",
                "placement": "table class name → list of server indices (from 0, in "
                             "the expanded `servers` list) or type names: the servers "
                             "the class may use (every scheduler; `tsf`). Naming no "
                             "server is an error.",
                "max_parallel": "integer ≥ 1, or table class name → integer ≥ 1. The "
                                "most tasks one job runs at once (every class, or the "
                                "classes named); a job at its cap is passed over by every "
                                "scheduler. Default: no cap. With a `trace`, one integer "
                                "only.",
                "trace": "path of a Google 2011 `task_events` file (`.csv` or `.csv.gz`), "
                         "relative to the scenario file: a trace scenario (no classes, "
                         "load axis or other model section; resources = the trace's CPU "
                         "and memory; `servers` required, normalised as the requests). "
                         "`mrfq cluster` runs it once per policy into "
                         "`trace_summary.csv`. The fields a trace run does not read "
                         "(`mean_tasks`, `tasks`, `duration`, `duration_law`, "
                         "`tasks_per_resource`, `jobs`, `warmup`, `seed`) are refused "
                         "unless left at their defaults.",
            }, ClusterConfig),
    Section("[[flows]]", "An explicit flow.", frozenset(explicit._FLOW_KEYS), {
        "class": "string, required. The class whose requirements and weight it has.",
        "name": "string. Its name in the timeline (default: class and index).",
        "start": "number ≥ 0, default 0. When it starts.",
        "stop": "number > start, default the timeline's duration. When it stops.",
        "window": "integer ≥ 1. Its window (windowed flow) or buffer (open loop).",
        "rate": "number ≥ 0, default 0. Packets offered per time unit (open loop); 0 for "
                "a windowed, backlogged flow.",
    }),
    Section("[timeline]", "Explicit flows' clock.", frozenset(explicit._TIMELINE_KEYS), {
        "duration": "number in (0, 1e9], required. The run's length (time units).",
        "interval": "number > 0 dividing the duration, required. Width of the timeline's bins.",
    }),
)


def _default(record: type | None, key: str) -> str:
    if record is None:
        return ""
    for item in fields(record):
        if item.name == key:
            value = item.default if item.default is not MISSING else item.default_factory()
            if isinstance(value, tuple):
                value = list(value)
            return "none" if value is None else f"`{value}`"
    return ""


def reference_markdown() -> str:
    """The scenario-file reference as a Markdown page: one table per section."""
    lines = ["# Scenario file reference", "",
             "Generated from the validator's key sets (`mrfq/scenario/reference.py`): every "
             "key listed here is accepted, and every accepted key is listed. Any other key is "
             "an error (`error: <file>: <field>: unknown key`).", ""]
    for section in SECTIONS:
        if section.laws is not None:
            lines += [f"## {section.table}", "", section.about, "",
                      "| key | laws | meaning |", "|---|---|---|"]
            for key in sorted(section.keys):
                laws = ", ".join(f"`{d}`" for d in section.laws.get(key, ["all"]))
                lines.append(f"| `{key}` | {laws} | {section.keys[key]} |")
            lines.append("")
            continue
        lines += [f"## {section.table}", "", section.about, "",
                  "| key | default | meaning |", "|---|---|---|"]
        for key in sorted(section.keys):
            lines.append(f"| `{key}` | {_default(section.defaults, key)} | "
                         f"{section.keys[key]} |")
        lines.append("")
    return "\n".join(lines)
