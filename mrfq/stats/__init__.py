"""Output analysis of packet runs (SPEC §3 Measurement): per-class service rates and CIs.

Eight modules, in import order (each imports only those before it):

* :mod:`mrfq.stats.estimators` — general estimators on series and sums: MSER-5 warm-up
  detection, lag-1 autocorrelation and batch merging, correlation-checked and lugsail
  batch ratio intervals, the relaxation time of a load, the relative-precision stopping
  rule, Jain's index.
* :mod:`mrfq.stats.runlength` — the run-length advisor's arithmetic: relative variance
  per flow from a pilot's batches, flows for a precision.
* :mod:`mrfq.stats.startup` — which flows a replication leaves out: the record's warm-up
  cut and the relaxation-time start-up cut of ``warmup = "auto"``.
* :mod:`mrfq.stats.metric_intervals` — intervals of statistics that are not means:
  sectioning (quantiles) over replications or batches, Jain's index by the delta method.
* :mod:`mrfq.stats.sums` — what one replication keeps of the packet kernel's output:
  flow-metric sums, per-packet sojourn histograms and batches, utilisation.
* :mod:`mrfq.stats.metric_columns` — the ``_low``/``_high``/``_problem`` columns of every
  reported statistic other than γ.
* :mod:`mrfq.stats.tables` — the per-class tables: :func:`replication_table` (one
  replication's flow records after the warm-up cut) and :func:`combine_replications`
  (γ_k = Σ N / Σ T pooled over replications, with its interval).
* :mod:`mrfq.stats.model_variance` — :func:`with_fluid_variance`: that interval rebuilt
  on the fluid model's variance of γ̂_k where the Markov model gives it (issue 25); for
  the run-length advisor, the chance a run keeps it and where the precision rule stops.

The intervals over independent units (:func:`t_interval`, :func:`ratio_interval`) and
:func:`histogram_quantile` live in the leaf :mod:`mrfq.intervals` and are re-exported
here, as is every public name of the eight modules: import them from ``mrfq.stats``.
:data:`STATS_VERSION` is defined here, once for the whole package.
"""

from __future__ import annotations

from mrfq.intervals import (
    RatioInterval,
    histogram_quantile,
    ratio_interval,
    t_interval,
    tin_factor,
)
from mrfq.stats.estimators import (
    LUGSAIL_BATCHES,
    MAX_LAG1,
    MIN_BATCHES,
    MIN_REPLICATIONS_FOR_T,
    MSER_BATCH,
    RELAXATIONS,
    Truncation,
    batch_means_interval,
    batch_ratio_interval,
    jain_index,
    lag1_autocorrelation,
    lugsail_scale,
    merge_batches,
    mser5,
    mser_statistic,
    mser_truncation,
    relative_half_widths,
    relaxation_flows,
    replications_for_precision,
)
from mrfq.stats.metric_columns import (
    flow_interval_columns,
    interval_columns,
    jain_overall_columns,
    quantile_columns,
    utilisation_columns,
)
from mrfq.stats.metric_intervals import (
    QUANTILES,
    batch_unit_interval,
    jain_interval,
    round_outward,
    sectioning_interval,
)
from mrfq.stats.model_variance import (
    FLUID_VARIANCE,
    RULE_HORIZON,
    RuleClass,
    model_kept_probability,
    replication_units,
    rule_replications,
    with_fluid_variance,
)
from mrfq.stats.startup import WARMUP_LIMIT_PROBLEM, relaxation_cut, warmup_cut
from mrfq.stats.sums import (
    SIZE_DECADES,
    batch_quantile_levels,
    first_full_bucket,
    flow_metric_sums,
    packet_delay_sums,
    utilisation,
    utilisation_batches,
)
from mrfq.stats.tables import (
    combine_replications,
    in_progress_average,
    merged_histogram,
    replication_table,
    withhold,
)

#: bump when the per-class estimates a stored packet point holds change (part of its key;
#: read from here by :func:`mrfq.kinds.point_key`). Not bumped for the per-batch sums and
#: quantiles the metric intervals read (issue 25): they are added beside unchanged
#: estimates, and a record from before them gives those intervals NaN bounds with a
#: "records from before" problem, so every committed point keeps its key
STATS_VERSION = "3"

__all__ = [
    "STATS_VERSION",
    # mrfq.stats.model_variance
    "FLUID_VARIANCE", "with_fluid_variance", "RULE_HORIZON", "RuleClass",
    "model_kept_probability", "replication_units", "rule_replications",
    # mrfq.intervals
    "RatioInterval", "histogram_quantile", "ratio_interval", "t_interval", "tin_factor",
    # mrfq.stats.estimators
    "MAX_LAG1", "MIN_BATCHES", "MIN_REPLICATIONS_FOR_T", "MSER_BATCH", "RELAXATIONS",
    "Truncation", "batch_means_interval", "batch_ratio_interval", "jain_index",
    "lag1_autocorrelation", "lugsail_scale", "merge_batches", "mser5", "mser_statistic",
    "mser_truncation", "relative_half_widths", "relaxation_flows",
    "replications_for_precision",
    # mrfq.stats.sums
    "SIZE_DECADES", "batch_quantile_levels", "first_full_bucket", "flow_metric_sums",
    "packet_delay_sums", "utilisation", "utilisation_batches",
    # mrfq.stats.metric_columns, mrfq.stats.metric_intervals
    "QUANTILES", "batch_unit_interval", "flow_interval_columns", "interval_columns",
    "jain_interval", "jain_overall_columns", "quantile_columns", "round_outward",
    "sectioning_interval",
    "utilisation_columns",
    # mrfq.stats.tables
    "LUGSAIL_BATCHES", "WARMUP_LIMIT_PROBLEM", "combine_replications", "in_progress_average",
    "merged_histogram", "relaxation_cut", "replication_table", "warmup_cut", "withhold",
]
