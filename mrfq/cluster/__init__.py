"""Cluster model (SPEC §6): jobs of tasks on servers, scheduled by the seed papers' rules.

Modules: ``kernel`` (the Numba event loop, plain arrays), ``model`` (the model, its
workloads and one run's measures: job service rates γ_k comparable with the fluid γ).
"""

from mrfq.cluster.model import ClusterModel, ClusterRun, pooled_model, run_cluster, workload

__all__ = ["ClusterModel", "ClusterRun", "pooled_model", "run_cluster", "workload"]
