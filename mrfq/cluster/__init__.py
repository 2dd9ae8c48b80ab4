"""Cluster model (SPEC §6): jobs of tasks on servers, scheduled by the seed papers' rules.

Modules: ``kernel`` (the Numba event loop, plain arrays), ``model`` (the model, its
workloads and one run's measures: job service rates γ_k comparable with the fluid γ),
``servers`` (DRFH's Table I), ``trace`` (the Google 2011 task_events schema: loader,
writer, a synthetic Google-like workload, a trace run on given servers).
"""

from mrfq.cluster.model import ClusterModel, ClusterRun, pooled_model, run_cluster, workload

__all__ = ["ClusterModel", "ClusterRun", "pooled_model", "run_cluster", "workload"]
