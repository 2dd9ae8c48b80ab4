"""Figures of cluster trace runs in DRFH's layouts (§VI), from the tables of
:func:`mrfq.kinds.cluster.trace_tables` (or the CSV files ``mrfq cluster`` writes):

* :func:`shares_over_time` — DRFH Fig. 4: per policy (columns), every resource's share
  and the global dominant share (rows) of the classes over time;
* :func:`utilisation_over_time` — DRFH Fig. 5: utilisation of every resource over time,
  one line per policy;
* :func:`completion_times` — DRFH Fig. 6: the CDF of job completion times per policy,
  and the mean completion time by job size (tasks).

Drawn on :class:`matplotlib.figure.Figure` objects (no pyplot), saved through
:func:`mrfq.plots._save` in the ``formats`` asked for (default PNG and PDF).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mrfq.io import figure_stem, read_table
from mrfq.kinds.cluster import TRACE_FILE, TRACE_TABLES
from mrfq.plots import _colour, _save, _title, interleaved_dashes
from mrfq.policies import label

#: classes drawn one by one in the shares figure; the rest are summed in one grey line
TOP_CLASSES = 6
POLICY_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
                  "tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan"]


def _policy_colour(i: int) -> str:
    return POLICY_COLOURS[i % len(POLICY_COLOURS)]


def _policies(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["policy"]))


def _solid_handles(policies) -> list[Line2D]:
    """Legend entries of solid lines in the policies' colours (a line drawn in turns with
    another's keeps its own colour, not the dashes, in the legend)."""
    return [Line2D([], [], color=_policy_colour(i), linewidth=1.2, label=label(p))
            for i, p in enumerate(policies)]


def _step(ax, time: np.ndarray, values: np.ndarray, **style) -> None:
    """A time-average per bin drawn as steps, held to the end of the last bin."""
    if len(time) == 0:
        return
    end = time[-1] + (time[-1] - time[-2] if len(time) > 1 else 1.0)
    ax.step(np.append(time, end), np.append(values, values[-1]), where="post", **style)


def utilisation_over_time(timeline: pd.DataFrame, path: str | Path, title: str = "",
                          formats: Sequence[str] | None = None) -> list[Path]:
    """DRFH Fig. 5: one panel per resource (``utilisation_<resource>`` columns), the
    utilisation per time bin of every policy."""
    resources = [c.removeprefix("utilisation_") for c in timeline.columns
                 if c.startswith("utilisation_")]
    fig = Figure(figsize=(6.5, 2.4 * len(resources) + 0.8), layout="constrained")
    axes = fig.subplots(len(resources), 1, sharex=True, squeeze=False)[:, 0]
    parts = {policy: timeline[timeline["policy"] == policy].sort_values("time")
             for policy in _policies(timeline)}
    for ax, name in zip(axes, resources, strict=True):
        column = f"utilisation_{name}"
        # (schedulers that use this resource alike: one line, by turns, in this panel)
        styles = interleaved_dashes({p: part[[column, "time"]].to_numpy()
                                     for p, part in parts.items()}, "-")
        for i, (policy, part) in enumerate(parts.items()):
            _step(ax, part["time"].to_numpy(), part[column].to_numpy(),
                  color=_policy_colour(i), label=label(policy), linewidth=1.2,
                  linestyle=styles[policy])
    for ax, name in zip(axes, resources, strict=True):
        ax.set_ylabel(f"{name} utilisation")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    fig.legend(handles=_solid_handles(parts), loc="outside lower center",
               ncols=min(6, len(parts)), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def _top_classes(shares: pd.DataFrame, top: int) -> list[str]:
    """The ``top`` classes of the largest dominant share × time over all policies."""
    weight = (shares.groupby("class", sort=False)["dominant_share"].sum()
              .sort_values(ascending=False, kind="stable"))
    return list(weight.index[:top])


def shares_over_time(shares: pd.DataFrame, timeline: pd.DataFrame, path: str | Path,
                     title: str = "", formats: Sequence[str] | None = None,
                     top: int = TOP_CLASSES) -> list[Path]:
    """DRFH Fig. 4: one column per policy, one row per resource share (``share_<r>``) and
    one for the global dominant share; a line per class for the ``top`` classes of the
    largest dominant share × time, the others summed ("other classes", grey). Bins where
    a class is absent from ``shares`` are zero (the bins are ``timeline``'s)."""
    rows = [c for c in shares.columns if c.startswith("share_")] + ["dominant_share"]
    names = [c.removeprefix("share_") + " share" for c in rows[:-1]]
    names.append("global dominant share")
    chosen = _top_classes(shares, top)
    policies = _policies(timeline)
    fig = Figure(figsize=(4.0 * len(policies) + 0.8, 2.1 * len(rows) + 1.0),
                 layout="constrained")
    axes = fig.subplots(len(rows), len(policies), sharex=True, sharey=True, squeeze=False)
    for p, policy in enumerate(policies):
        time = np.sort(timeline.loc[timeline["policy"] == policy, "time"].to_numpy())
        part = shares[shares["policy"] == policy]
        for r, column in enumerate(rows):
            grid = (part.pivot_table(index="time", columns="class", values=column,
                                     aggfunc="sum").reindex(time).fillna(0.0))
            ax = axes[r, p]
            for i, name in enumerate(chosen):
                values = grid[name].to_numpy() if name in grid else np.zeros(time.size)
                _step(ax, time, values, color=_colour(i), label=name, linewidth=1.1)
            rest = grid.drop(columns=[c for c in chosen if c in grid]).sum(axis=1)
            if len(grid.columns) > len([c for c in chosen if c in grid]):
                _step(ax, time, rest.to_numpy(), color="grey", linewidth=0.9,
                      label="other classes")
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            if p == 0:
                ax.set_ylabel(names[r])
        axes[0, p].set_title(label(policy))
        axes[-1, p].set_xlabel("time (s)")
    handles, labels = {}, {}
    for ax in axes.ravel():
        for h, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, h)
            labels.setdefault(name, name)
    fig.legend(list(handles.values()), list(labels.values()), loc="outside lower center",
               ncols=min(7, len(handles)), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def completion_times(jobs: pd.DataFrame, jct: pd.DataFrame, path: str | Path,
                     title: str = "", formats: Sequence[str] | None = None) -> list[Path]:
    """DRFH Fig. 6: (a) the empirical CDF of job completion times (``jobs``: one row per
    job and policy, column ``jct``; log time axis), one line per policy; (b) the mean
    completion time by job size (``jct``: :func:`mrfq.cluster.metrics.jct_by_tasks`
    rows), grouped bars per policy (empty sizes left out)."""
    policies = _policies(jobs)
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    cdf, bars = fig.subplots(1, 2)
    times = {p: np.sort(jobs.loc[jobs["policy"] == p, "jct"].to_numpy()) for p in policies}
    positive = jobs.loc[jobs["jct"] > 0, "jct"]
    floor = positive.min() / 2 if len(positive) else 1.0  # (0 s on the log axis: drawn here)
    styles = interleaved_dashes(times, "-")  # (schedulers that choose alike: by turns)
    for i, (policy, values) in enumerate(times.items()):
        if values.size == 0:
            continue
        values = np.maximum(values, floor)
        # from 0 at the first completion: one job, or equal times, is still a step
        cdf.step(np.r_[values[0], values], np.r_[0.0, np.arange(1, values.size + 1)
                                                 / values.size], where="post",
                 color=_policy_colour(i), label=label(policy), linestyle=styles[policy])
    cdf.set_xscale("log")
    cdf.set_xlabel("job completion time (s)")
    cdf.set_ylabel("fraction of jobs")
    cdf.set_ylim(0, 1.02)
    cdf.grid(alpha=0.3)
    cdf.set_title("(a) CDF of job completion times")
    sizes = [s for s in dict.fromkeys(jct["tasks"]) if s != "all"
             and (jct.loc[jct["tasks"] == s, "jobs"] > 0).any()]
    width = 0.8 / max(len(policies), 1)
    for i, policy in enumerate(policies):
        part = jct[jct["policy"] == policy].set_index("tasks")
        means = [part.loc[s, "jct_mean"] if s in part.index else np.nan for s in sizes]
        bars.bar(np.arange(len(sizes)) + (i - (len(policies) - 1) / 2) * width, means,
                 width, color=_policy_colour(i), label=label(policy))
    bars.set_xticks(np.arange(len(sizes)), sizes)
    bars.set_xlabel("tasks per job")
    bars.set_ylabel("mean job completion time (s)")
    bars.grid(alpha=0.3, axis="y")
    bars.set_title("(b) by job size")
    fig.legend(handles=_solid_handles(times), loc="outside lower center",
               ncols=min(6, len(policies)), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def trace_figures(tables: dict[str, pd.DataFrame], results_dir: str | Path,
                  title: str = "", formats: Sequence[str] | None = None,
                  prefix: str = "") -> list[Path]:
    """The three figures of a trace run into ``results_dir``: ``<prefix>shares``,
    ``<prefix>utilisation`` and ``<prefix>completion_times`` (each in every format)."""
    results = Path(results_dir)
    return [*shares_over_time(tables["shares"], tables["timeline"],
                              results / f"{prefix}shares", title, formats),
            *utilisation_over_time(tables["timeline"], results / f"{prefix}utilisation",
                                   title, formats),
            *completion_times(tables["jobs"], tables["jct"],
                              results / f"{prefix}completion_times", title, formats)]


def replot_trace(results_dir: str | Path, output: str | Path | None = None,
                 formats: Sequence[str] | None = None) -> list[Path]:
    """The figures of a trace run (:func:`trace_figures`) redrawn from the tables it wrote
    in ``results_dir`` (``mrfq plot DIR``): into that directory, or with ``output`` =
    ``dir/name`` as ``dir/name_shares`` and so on."""
    results = Path(results_dir)
    text = {"policy": str, "class": str, "user": str}
    tables = {name: read_table(results / file, dtype={**text, "tasks": str} if name == "jct"
                               else text)
              for name, file in TRACE_TABLES.items()}
    summary = read_table(results / TRACE_FILE, ("trace", "jobs", "tasks", "servers")).iloc[0]
    title = (f"Trace run: {summary['trace']} ({summary['jobs']} jobs, {summary['tasks']} "
             f"tasks) on {summary['servers']} servers, one run per scheduler")
    if output is None:
        return trace_figures(tables, results, title, formats)
    output = figure_stem(output)  # (a suffix naming no figure format is the name's)
    return trace_figures(tables, output.parent, title, formats, f"{output.name}_")
