"""``[cluster]``: validating the cluster section of a scenario into its record."""

from __future__ import annotations

from typing import Any

from mrfq import fields, policies
from mrfq.scenario.checks import _choice, _policies, fail
from mrfq.scenario.config import CLUSTER_DURATION_LAWS, CLUSTER_TASK_LAWS, ClusterConfig

_KEYS = set(ClusterConfig.__dataclass_fields__)


def parse_cluster(raw: Any, source: str | None) -> ClusterConfig:
    """``[cluster]`` with its defaults filled in (``None``: no section, no cluster
    points). One InputError naming ``cluster.<field>`` on any bad value."""
    if raw is None:
        return ClusterConfig()
    raw = fields.check_keys(raw, _KEYS, "cluster", source)
    defaults = ClusterConfig()

    def value(key):
        return raw.get(key, getattr(defaults, key))

    def number(key, **options):
        return fields.number(value(key), f"cluster.{key}", source, **options)

    def integer(key, minimum):
        return fields.integer(value(key), f"cluster.{key}", source, minimum)

    chosen = raw.get("policies", list(policies.defaults(policies.CLUSTER)))
    config = ClusterConfig(
        policies=_policies(list(chosen) if isinstance(chosen, list) else chosen,
                           policies.CLUSTER, "cluster.policies", source),
        tasks_per_resource=number("tasks_per_resource", positive=True),
        mean_tasks=number("mean_tasks", positive=True),
        tasks=_choice(value("tasks"), CLUSTER_TASK_LAWS, "cluster.tasks", source),
        duration=number("duration", positive=True),
        duration_law=_choice(value("duration_law"), CLUSTER_DURATION_LAWS,
                             "cluster.duration_law", source),
        jobs=integer("jobs", 1),
        warmup=number("warmup", nonnegative=True),
        batches=integer("batches", 2),
        seed=integer("seed", 0),
        slots_per_server=integer("slots_per_server", 1),
    )
    if config.mean_tasks < 1:
        raise fail(f"must be >= 1 task, got {config.mean_tasks:g}", "cluster.mean_tasks",
                   source)
    if config.tasks_per_resource < 1:
        raise fail("a task's dominant requirement must fit the pool (>= 1), got "
                   f"{config.tasks_per_resource:g}", "cluster.tasks_per_resource", source)
    if config.warmup >= 1 or config.jobs - int(config.warmup * config.jobs) < 2 * config.batches:
        raise fail(f"leaves fewer than {2 * config.batches} jobs to measure",
                   "cluster.warmup", source)
    return config
