"""``[cluster]``: validating the cluster section of a scenario into its record, and the
servers and placement constraints it names as arrays (:func:`cluster_arrays`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mrfq import fields, policies
from mrfq.io import is_path
from mrfq.scenario import limits  # (the Python API's bounds too: one definition)
from mrfq.scenario.checks import _policies, fail
from mrfq.scenario.config import CLUSTER_DURATION_LAWS, CLUSTER_TASK_LAWS, ClusterConfig
from mrfq.scenario.server_tables import TABLES, draw_servers, read_table
from mrfq.scenario.slots import check_running, fits, slot_shortfall
from mrfq.sizes import SizeLaw, parse_size

_KEYS = set(ClusterConfig.__dataclass_fields__)
#: the fields a trace run does not read, and why (:func:`mrfq.kinds.cluster.trace_tables`)
_TRACE_IGNORES = {
    "mean_tasks": "the trace gives every job's tasks",
    "tasks": "the trace gives every job's tasks",
    "duration": "the trace gives every task's duration",
    "duration_law": "the trace gives every task's duration",
    "tasks_per_resource": "it runs on the listed servers",
    "jobs": "every job of the trace runs",
    "warmup": "every job of the trace is measured",
    "seed": "nothing is drawn: the trace gives the jobs",
}


def parse_cluster(raw: Any, source: str | None, classes: tuple = (),
                  n_resources: int | None = None,
                  resources: tuple[str, ...] = ()) -> ClusterConfig:
    """``[cluster]`` with its defaults filled in (``None``: no section, no cluster
    points); ``resources``: the scenario's resource names (servers drawn from a table
    are matched to them, :func:`_drawn_servers`). One InputError naming
    ``cluster.<field>`` on any bad value; with the
    scenario's ``classes``, also a placement naming no server and a task larger than
    every server its class may use; with a ``trace``, a missing file, no servers or a
    placement (its rows are read by :func:`mrfq.cluster.trace.load_task_events`)."""
    if raw is None:
        return ClusterConfig()
    raw = fields.check_keys(raw, _KEYS, "cluster", source)
    defaults = ClusterConfig()

    def value(key):
        return raw.get(key, getattr(defaults, key))

    def number(key, **options):
        return fields.number(value(key), f"cluster.{key}", source, **options)

    def integer(key, minimum, maximum=None, why=""):
        return fields.integer(value(key), f"cluster.{key}", source, minimum, maximum, why)

    names = [c.name for c in classes]
    chosen = raw.get("policies", list(policies.defaults(policies.CLUSTER)))
    config = ClusterConfig(
        policies=_policies(chosen, policies.CLUSTER, "cluster.policies", source),
        tasks_per_resource=number("tasks_per_resource", positive=True),
        mean_tasks=_per_class(value("mean_tasks"), "mean_tasks", names, source,
                              limits.check_mean_tasks),
        tasks=_law(value("tasks"), "tasks", CLUSTER_TASK_LAWS, names, source),
        duration=_per_class(value("duration"), "duration", names, source,
                            limits.check_duration),
        duration_law=_law(value("duration_law"), "duration_law", CLUSTER_DURATION_LAWS,
                          names, source),
        jobs=integer("jobs", 1, limits.MAX_JOBS, "about 120 bytes of memory each"),
        warmup=number("warmup", nonnegative=True),
        batches=integer("batches", 2),
        seed=integer("seed", 0, limits.MAX_SEED, "a 64-bit signed integer"),
        slots_per_server=integer("slots_per_server", 1, limits.MAX_RUNNING,
                                 limits.SLOTS_WHY),
        servers=_servers(raw["servers"], len(classes[0].requirements)
                         if classes else n_resources, source, resources)
        if "servers" in raw else (),  # (none: the pooled cluster)
        placement=_placement(raw.get("placement", {}), [c.name for c in classes], source),
        trace=trace_path(raw["trace"], source) if "trace" in raw else "",
        max_parallel=_max_parallel(raw.get("max_parallel", ()), [c.name for c in classes],
                                   source),
    )
    if config.trace and not config.servers:
        raise fail("a trace runs on listed servers (capacities normalised as its "
                   "requests: the largest machine is 1)", "cluster.servers", source)
    for key in ("placement", "max_parallel", "mean_tasks", "duration"):
        if config.trace and isinstance(getattr(config, key), tuple) and getattr(config, key):
            raise fail("names scenario classes; a trace's classes are its distinct demands"
                       + (" (one number caps every job)" if key == "max_parallel" else ""),
                       f"cluster.{key}", source)
    for key in ("tasks", "duration_law"):
        if config.trace and not isinstance(getattr(config, key), str):
            raise fail("a trace gives every job's tasks and every task's duration; no law "
                       "applies", f"cluster.{key}", source)
    for key, why in _TRACE_IGNORES.items():
        # a value the trace run would silently ignore; its default is what a stored trace
        # scenario holds (cluster_dict writes every field), so that one reads back
        if config.trace and key in raw and getattr(config, key) != getattr(defaults, key):
            raise fail(f"a trace run does not use it ({why}); remove it",
                       f"cluster.{key}", source)
    slots = policies.named(policies.CLUSTER).SLOTS  # (k is the slot scheduler's alone)
    if config.slots_per_server != defaults.slots_per_server and slots not in config.policies:
        raise fail(f"only {slots} reads it, and cluster.policies ({', '.join(config.policies)})"
                   " does not list it; remove it", "cluster.slots_per_server", source)
    if config.servers:  # (a pool always has every resource)
        total = np.sum([np.multiply(cap, count) for cap, count, _ in config.servers], axis=0)
        for r in np.flatnonzero(total <= 0):
            name = resources[r] if r < len(resources) else f"resource {r}"
            raise fail(f"no server has any {name}: every resource needs some capacity",
                       "cluster.servers", source)
    if config.tasks_per_resource < 1:
        raise fail("a task's dominant requirement must fit the pool (>= 1), got "
                   f"{config.tasks_per_resource:g}", "cluster.tasks_per_resource", source)
    check_running(config, len(classes[0].requirements) if classes else n_resources or len(
        resources), source)
    if not config.trace:  # (a trace measures all its jobs)
        limits.check_batches(config.jobs, config.warmup, config.batches, set(raw), source)
    if classes:
        means = per_class_values(config, "mean_tasks", names)
        limits.check_task_budget(config.jobs, means, source)
        for name, law, mean in zip(names, per_class_laws(config, "tasks", names), means,
                                   strict=True):
            if law == "fixed" and not float(mean).is_integer():
                where = ("cluster.mean_tasks" if not isinstance(config.mean_tasks, tuple)
                         else f"cluster.mean_tasks.{name}")
                raise fail(f"fixed tasks need a whole number of tasks per job, got {mean:g} "
                           f"(class {name})", where, source)
        limits.check_task_times(per_class_values(config, "duration", names), per_class_laws(
            config, "duration_law", names), names, isinstance(config.duration_law, tuple),
            source)
        _check_fit(config, classes, source)
    return config


def _law(raw: Any, key: str, builtins: tuple[str, ...], names: list[str],
         source: str | None) -> str | SizeLaw | tuple:
    """``tasks`` / ``duration_law``: a built-in law's name (``builtins``), a size-law
    table as a class's ``size`` (:func:`mrfq.sizes.parse_size`; a ``file`` relative to
    the scenario's folder), or a table from class name to either (the classes not named
    keep the default; a table with a ``distribution`` key is one law). Stored as the
    name or the SizeLaw, or (class, law) pairs; an exponential or deterministic table as
    the built-in name it is."""
    base = Path(source).parent if source and not source.startswith("<") else None

    def one(value: Any, where: str) -> str | SizeLaw:
        if isinstance(value, dict):
            law = parse_size(value, where, source, base_dir=base)
            if key == "tasks" and law.unscaled:  # its mean: the table's, not 1
                raise fail("a tasks law keeps mean 1 (rescale = true): the mean number of "
                           "tasks is mean_tasks", f"{where}.rescale", source)
            if law.distribution in ("exponential", "deterministic"):  # a built-in law
                return builtins[0] if law.distribution == "exponential" else "fixed"
            return law
        if not isinstance(value, str) or value.strip().lower() not in builtins:
            raise fail(f"must be {' or '.join(repr(b) for b in builtins)}, or a size-law "
                       f"table such as {{distribution = \"lognormal\", sigma = 1}}, got "
                       f"{fields.shown(value)}", where, source)
        return value.strip().lower()

    if isinstance(raw, dict) and "distribution" not in raw:
        known = set(names) if names else set(raw)
        raw = fields.check_keys(raw, known, f"cluster.{key}", source)
        return tuple((name, one(v, f"cluster.{key}.{name}")) for name, v in raw.items())
    return one(raw, f"cluster.{key}")


def per_class_laws(config: ClusterConfig, key: str, names: list[str]) -> list:
    """Per class (in ``names`` order), the ``tasks`` or ``duration_law`` law of a
    ``[cluster]`` section: its one law, or its table over the default."""
    value = getattr(config, key)
    if not isinstance(value, tuple):
        return [value] * len(names)
    out = [getattr(ClusterConfig(), key)] * len(names)
    for name, law in value:
        out[names.index(name)] = law
    return out


def trace_path(raw: Any, source: str | None) -> str:
    """``trace``: a path relative to the scenario file's folder (the working directory
    for a scenario given as a dict), stored resolved; the file must exist (a scenario
    with no trace leaves the key out: an empty one names no file)."""
    name = fields.text(raw, "cluster.trace", source)
    if not name.strip():
        raise fail("names no file: give a task_events file (.csv or .csv.gz), or leave "
                   "trace out for a scenario of classes", "cluster.trace", source)
    path = _resolve(name, source)
    if is_path(path, "cluster.trace", source, directory=True):
        raise fail(f"is a directory, not a task_events file: {name} ({path})",
                   "cluster.trace", source)
    if not is_path(path, "cluster.trace", source):
        raise fail(f"no such trace file: {name} (looked for {path})", "cluster.trace",
                   source)
    return str(path)


def _resolve(name: str, source: str | None) -> Path:
    """A file named in a scenario: relative to the scenario file's folder (the working
    directory for a scenario given as a dict), resolved."""
    base = Path(source).parent if source and Path(source).is_file() else Path.cwd()
    return (base / name).resolve()


def _servers(raw: Any, n_resources: int | None, source: str | None,
             resources: tuple[str, ...] = ()) -> tuple:
    """``servers``: a list whose items are capacity vectors or tables ``{capacity,
    count = 1, type = ""}``, or one table ``{table, count, seed = 1}`` drawing them
    (:func:`_drawn_servers`); stored as (capacity, count, type) entries."""
    if isinstance(raw, dict):
        return _drawn_servers(raw, n_resources, source, resources)
    if not isinstance(raw, list):
        raise fail("must be a list of capacity vectors or {capacity, count, type} tables, "
                   "or a table {table, count, seed} drawing them", "cluster.servers",
                   source)
    if not raw:  # (leave the key out for the pooled cluster)
        raise fail("must list at least one server", "cluster.servers", source)
    out = []
    for i, item in enumerate(raw):
        where = f"cluster.servers[{i}]"
        item = {"capacity": item} if isinstance(item, list) else item
        item = fields.check_keys(item, {"capacity", "count", "type"}, where, source)
        if "capacity" not in item:
            raise fail("needs a capacity vector", where, source)
        cap = fields.vector(item["capacity"], n_resources or len(item["capacity"]),
                            f"{where}.capacity", source)
        limits.check_capacity(cap, f"{where}.capacity", source)
        count = fields.integer(item.get("count", 1), f"{where}.count", source, 1,
                               limits.MAX_SERVERS, limits.SERVERS_WHY)
        kind = fields.text(item.get("type", ""), f"{where}.type", source)
        out.append((tuple(float(c) for c in cap), count, kind))
    total = sum(count for _, count, _ in out)
    if total > limits.MAX_SERVERS:  # (before the list is expanded, one entry per server)
        raise fail(f"lists {total:,} servers, more than {limits.MAX_SERVERS:,} "
                   f"({limits.SERVERS_WHY})", "cluster.servers", source)
    return tuple(out)


def _drawn_servers(raw: dict, n_resources: int | None, source: str | None,
                   resources: tuple[str, ...]) -> tuple:
    """``servers = {table, count, seed = 1}``: ``count`` servers drawn independently
    from a table (:func:`mrfq.cluster.servers.draw_servers`; ``table``: a name of
    :data:`~mrfq.cluster.servers.TABLES`, "google" for DRFH's Table I, or a table file
    relative to the scenario's folder). The table's capacity columns are the scenario's
    resources in order (by position); their number must match, and a column named as a
    scenario resource must sit at that resource's place (case aside). Stored as the
    drawn list, one (capacity, 1, "") entry per server in the order drawn."""
    raw = fields.check_keys(raw, {"table", "count", "seed"}, "cluster.servers", source)
    for key in ("table", "count"):
        if key not in raw:
            raise fail("drawing servers needs a table and a count ({table = \"google\", "
                       "count = 100, seed = 1})", f"cluster.servers.{key}", source)
    name = fields.text(raw["table"], "cluster.servers.table", source)
    count = fields.integer(raw["count"], "cluster.servers.count", source, 1,
                           limits.MAX_SERVERS, limits.SERVERS_WHY)
    seed = fields.integer(raw.get("seed", 1), "cluster.servers.seed", source, 0)
    if name in TABLES:
        path = TABLES[name]
    else:
        path = _resolve(name, source)
        if not is_path(path, "cluster.servers.table", source):
            if "/" not in name and "\\" not in name and not Path(name).suffix:
                raise fail(f"unknown table {name!r} (names: {', '.join(TABLES)}; or a "
                           "CSV file's path)", "cluster.servers.table", source)
            raise fail(f"no such server table file: {name} (looked for {path})",
                       "cluster.servers.table", source)
    _, _, columns = read_table(path)
    names = tuple(resources) or columns
    n_resources = n_resources or len(names)
    if len(columns) != n_resources:
        raise fail(f"table {name} has {len(columns)} resources ({', '.join(columns)}), "
                   f"the scenario {n_resources} ({', '.join(names)})",
                   "cluster.servers.table", source)
    lower = [r.lower() for r in names]
    for j, column in enumerate(columns):
        if column.lower() in lower and lower.index(column.lower()) != j:
            raise fail(f"column {j + 1} of table {name} is {column}, the scenario's "
                       f"resource {lower.index(column.lower()) + 1} ({', '.join(names)}): "
                       "columns are matched to resources by position, list them in the "
                       "same order", "cluster.servers.table", source)
    return tuple((tuple(float(c) for c in cap), 1, "")
                 for cap in draw_servers(count, seed, path))


def _placement(raw: Any, names: list[str], source: str | None) -> tuple:
    """``placement``: a table from class name to the servers it may use (indices from 0
    in the expanded server list, or type names); stored as (class, servers) pairs."""
    known = set(names) if names else set(raw) if isinstance(raw, dict) else set()
    raw = fields.check_keys(raw, known, "cluster.placement", source)
    out = []
    for name, where_ok in raw.items():
        field = f"cluster.placement.{name}"
        items = where_ok if isinstance(where_ok, list) else [where_ok]
        if not items:
            raise fail("names no server (an empty list)", field, source)
        for item in items:
            if isinstance(item, bool) or not isinstance(item, int | str):
                raise fail(f"must list server indices or type names, got "
                           f"{fields.shown(item)}", field, source)
        out.append((name, tuple(items)))
    return tuple(out)


def _max_parallel(raw: Any, names: list[str], source: str | None) -> int | tuple:
    """``max_parallel``: an integer ≥ 1 capping every class's jobs, or a table from class
    name to its cap (classes not named: no cap); stored as the int, or (class, cap)
    pairs; () when absent."""
    if isinstance(raw, dict):
        known = set(names) if names else set(raw)
        raw = fields.check_keys(raw, known, "cluster.max_parallel", source)
        return tuple((name, fields.integer(cap, f"cluster.max_parallel.{name}", source, 1,
                                           limits.MAX_TASKS, "tasks at once"))
                     for name, cap in raw.items())
    if raw == ():
        return ()
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise fail(f"must be an integer >= 1 (every class) or a table of class name = "
                   f"integer, got {fields.shown(raw)}", "cluster.max_parallel", source)
    return fields.integer(raw, "cluster.max_parallel", source, 1, limits.MAX_TASKS,
                          "tasks at once")


def _per_class(raw: Any, key: str, names: list[str], source: str | None,
               check) -> float | tuple:
    """``mean_tasks`` / ``duration``: a number for every class (``check``ed), or a table
    from class name to its value (the classes not named keep the default); stored as the
    number, or (class, value) pairs."""
    if isinstance(raw, dict):
        known = set(names) if names else set(raw)
        raw = fields.check_keys(raw, known, f"cluster.{key}", source)
        return tuple((name, check(v, f"cluster.{key}.{name}", source))
                     for name, v in raw.items())
    return check(raw, f"cluster.{key}", source)


def per_class_values(config: ClusterConfig, key: str, names: list[str]) -> np.ndarray:
    """Per class (in ``names`` order), ``mean_tasks`` E[N_k] or ``duration`` d_k of a
    ``[cluster]`` section: its number, or its table over the default."""
    value = getattr(config, key)
    if not isinstance(value, tuple):
        return np.full(len(names), float(value))
    out = np.full(len(names), float(getattr(ClusterConfig(), key)))
    for name, v in value:
        out[names.index(name)] = v
    return out


def max_parallel_caps(config: ClusterConfig, names: list[str]) -> np.ndarray:
    """Per class (in ``names`` order), the most tasks one of its jobs runs at once
    (``[cluster] max_parallel``; inf: no cap)."""
    caps = np.full(len(names), np.inf)
    if isinstance(config.max_parallel, int):
        caps[:] = config.max_parallel
    else:
        for name, cap in config.max_parallel:
            caps[names.index(name)] = cap
    return caps


def cluster_arrays(config: ClusterConfig, names: list[str], requirements: np.ndarray,
                   source: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(capacity L×R, per-task demand K×R, allowed K×L) of a ``[cluster]`` section: the
    pool of C = ``tasks_per_resource`` units of every resource with demand a_k, or the
    listed servers with demand a_k · (Σ_l c_l) / C (a dominant task holds 1/C of the
    pool either way). InputError if a placement names no server."""
    a = np.asarray(requirements, dtype=float)
    C = config.tasks_per_resource
    if not config.servers:
        capacity, demand = np.full((1, a.shape[1]), C), a
        types = [""]
    else:
        capacity = np.array([cap for cap, count, _ in config.servers for _ in range(count)])
        types = [kind for _, count, kind in config.servers for _ in range(count)]
        demand = a * capacity.sum(axis=0) / C
    allowed = np.ones((len(names), capacity.shape[0]), dtype=bool)
    for name, items in config.placement:
        field = f"cluster.placement.{name}"
        row = np.zeros(capacity.shape[0], dtype=bool)
        for item in items:
            if isinstance(item, str):
                hit = [t == item for t in types]
                if not any(hit):
                    known = sorted({t for t in types if t})
                    raise fail(f"server type {item!r} names no server (types: "
                               f"{', '.join(known) or 'none'})", field, source)
                row |= np.array(hit)
            elif not 0 <= item < capacity.shape[0]:
                raise fail(f"server index {item} names no server (0 to "
                           f"{capacity.shape[0] - 1})", field, source)
            else:
                row[item] = True
        allowed[names.index(name)] = row
    return capacity, demand, allowed


def _check_fit(config: ClusterConfig, classes: tuple, source: str | None) -> None:
    names = [c.name for c in classes]
    capacity, demand, allowed = cluster_arrays(
        config, names, np.array([c.requirements for c in classes]), source)
    for k, name in enumerate(names):
        usable = capacity[allowed[k]]
        if not fits(demand[k], usable).any():  # (as the kernel)
            field = (f"cluster.placement.{name}" if not allowed[k].all()
                     else "cluster.tasks_per_resource")
            needs = demand[k] > 0
            if not np.any(np.all(usable[:, needs] > 0, axis=1)):  # no task size would fit
                field = field if not allowed[k].all() else "cluster.servers"
                raise fail(f"no server class {name} may use has every resource its tasks "
                           "need", field, source)
            raise fail(f"a task of class {name} is larger than every server it may use "
                       f"(demand {np.round(demand[k], 6).tolist()})", field, source)
    if policies.named(policies.CLUSTER).SLOTS in config.policies:
        short = slot_shortfall(capacity, demand, allowed, config.slots_per_server)
        if short:
            k, need, most = short
            raise fail(f"with {config.slots_per_server} slots per largest server a task of "
                       f"class {names[k]} takes {need} slot(s) and no server it may use "
                       f"holds more than {most}: raise it, or leave slots out",
                       "cluster.slots_per_server", source)



def cluster_dict(config: ClusterConfig) -> dict:
    """The section as a TOML/JSON table that :func:`parse_cluster` reads back."""
    out = {**config.__dict__, "policies": list(config.policies)}
    out["servers"] = [{"capacity": list(cap), "count": count, **({"type": kind} if kind
                                                                  else {})}
                      for cap, count, kind in config.servers]
    if not out["servers"]:  # (absent: the pooled cluster; an empty list is refused)
        del out["servers"]
    out["placement"] = {name: list(items) for name, items in config.placement}
    if not config.trace:  # absent = no trace, so older stored scenarios read the same
        out.pop("trace")
    for key in ("mean_tasks", "duration"):  # a table per class; a number stays one
        if isinstance(config.__dict__[key], tuple):
            out[key] = dict(config.__dict__[key])
    for key in ("tasks", "duration_law"):  # a name stays one; a law becomes its table
        value = config.__dict__[key]
        if isinstance(value, tuple):
            out[key] = {name: law.spec() if isinstance(law, SizeLaw) else law
                        for name, law in value}
        elif isinstance(value, SizeLaw):
            out[key] = value.spec()
    if isinstance(config.max_parallel, tuple):  # absent = no cap, as for the trace
        out["max_parallel"] = dict(config.max_parallel)
        if not config.max_parallel:
            out.pop("max_parallel")
    return out
