"""The per-flow figure of ``mrfq flows`` (the DRFQ and MR3 papers' dominant share over
time), from the timeline table of :func:`mrfq.pipeline.flows` (or its CSV file).

Drawn on a :class:`matplotlib.figure.Figure` (no pyplot), saved through
:func:`mrfq.plots._save` in the ``formats`` asked for (default PNG and PDF).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mrfq.plots import (
    _bottom_row_labels,
    _colour,
    _grid,
    _legend,
    _save,
    _title,
    interleaved_dashes,
)
from mrfq.policies import label

#: the length of one dash of a fair-share line, in points; flows whose fair shares are
#: equal throughout take turns along one dashed line (each its own colour)
DASH = 4.0


def fair_share_dashes(fair: dict[str, np.ndarray]) -> dict[str, tuple[float, tuple]]:
    """The line style of each flow's fair-share line: a plain dash, or, where flows have
    the same fair share in every interval (a DRF allocation often gives several flows one
    share), dashes of :data:`DASH` points taking turns (:func:`mrfq.plots.
    interleaved_dashes`), so that every flow's colour shows on the one line instead of the
    last flow's hiding the others'. Equal to 12 significant digits (two routes to one
    share differ in the last bit: 0.606060606060606 and 0.6060606060606061); NaN (the
    flow absent) counts as a value: flows are grouped only where absent together."""
    return interleaved_dashes(fair, (0.0, (DASH, DASH)), DASH)


def dominant_share_over_time(timeline: pd.DataFrame, path: str | Path,
                             title: str = "", formats: Sequence[str] | None = None
                             ) -> list[Path]:
    """The DRFQ/MR3 papers' figure: one panel per packet policy (at most
    :data:`mrfq.plots.MOST_COLUMNS` to a row, time ticks under every bottom panel), each
    flow's dominant share (its share of its dominant resource) per interval, and, dashed
    in the flow's colour, its fair share (``fair_share``: the fluid allocation the policy
    realises; absent for a baseline; flows with equal fair shares share one line,
    :func:`fair_share_dashes`). One legend. A packet's service is split over the
    intervals it spans, so no share exceeds 1; the y axis reaches 1.05, or the largest
    share of a table written before that rule (drawn, not clipped)."""
    rows = timeline[timeline["resource"] == "dominant"]
    policies, flows = list(dict.fromkeys(rows["policy"])), list(dict.fromkeys(rows["flow"]))
    grid, columns = _grid(len(policies))
    fig = Figure(figsize=(4.2 * columns, 3.2 * grid + 0.6), layout="constrained")
    axes = fig.subplots(grid, columns, sharex=True, sharey=True, squeeze=False)
    top = np.nanmax(rows[[c for c in ("share", "fair_share") if c in rows]].to_numpy(),
                    initial=0.0)
    starts = np.unique(rows["time"].to_numpy(float))  # (the intervals' starts)
    # one interval: its width is a resource row's service / share (share = service / width)
    served = timeline[(timeline["resource"] != "dominant") & (timeline["share"] > 0)]
    width = (np.diff(starts).min() if starts.size > 1 else float(np.median(
        served["service"] / served["share"])) if "service" in served and len(served) else 1.0)
    end = starts[-1] + width
    for ax, policy in zip(axes.ravel(), policies, strict=False):
        part = rows[rows["policy"] == policy]
        lines = {flow: part[part["flow"] == flow].sort_values("time") for flow in flows}
        fair = {flow: line["fair_share"].to_numpy(float) for flow, line in lines.items()
                if "fair_share" in line and line["fair_share"].notna().any()}
        dashes = fair_share_dashes(fair)
        for i, (flow, line) in enumerate(lines.items()):
            # each value holds over its interval, the last one to the end too
            times, share = np.append(line["time"], end), line["share"].to_numpy(float)
            ax.step(times, np.append(share, share[-1:]), where="post", color=_colour(i),
                    label=flow)
            if flow in fair:
                ax.step(times, np.append(fair[flow], fair[flow][-1:]), where="post",
                        color=_colour(i), linestyle=dashes[flow], linewidth=1.2, alpha=0.9)
        ax.set_title(label(policy))
        ax.set_ylim(0, max(1.05, 1.03 * top))
        ax.grid(alpha=0.3)
    _bottom_row_labels(axes, len(policies), "time (time units)")
    for ax in axes[:, 0]:
        ax.set_ylabel("dominant share")
    handles = [Line2D([], [], color=_colour(i), label=flow) for i, flow in enumerate(flows)]
    handles.append(Line2D([], [], color="grey", linestyle="--", label="fair share (fluid)"))
    _legend(fig, handles)
    _title(fig, title)
    return _save(fig, path, formats)
