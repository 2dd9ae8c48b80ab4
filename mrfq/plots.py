"""Figures in the paper's layout (BR Figures 1–3): γ_k against load.

Figures 1–2: two panels, "BMF v DRF" and "BMF v PF", one line style per policy and one
colour per class (distinct up to 20 classes). Figure 3: one panel per packet policy (at
most four to a row), fluid lines and packet and cluster points with confidence-interval
error bars.

Figures are drawn on :class:`matplotlib.figure.Figure` objects, not through pyplot, so
importing or using this module never changes the matplotlib backend of a notebook. Every
figure has a constrained layout, markers at the computed points and one legend for the
whole figure; ``formats`` (default PNG and PDF) are the files written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mrfq.errors import InputError
from mrfq.io import KNOWN_FIGURE_FORMATS, atomic_path
from mrfq.io import check_figure_formats as check_formats
from mrfq.policies import (
    CLUSTER,
    FLUID,
    PACKET,
    REGISTRY,
    comparison_panels,
    fluid_counterpart,
    label,
    names,
)

CLASS_COLOURS = ["tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]
#: the classes after the sixth: the rest of matplotlib's tab20, saturated first, the greys
#: last (grey is also the legend's "any class"); 20 distinct colours in all, then repeated
MORE_CLASS_COLOURS = ["tab:pink", "tab:olive", "tab:cyan", "#aec7e8", "#ff9896", "#98df8a",
                      "#ffbb78", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
                      "tab:gray", "#c7c7c7"]
POLICY_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]
#: the packet policies' markers and colours in the delay figures, in registry order
#: (markers that can be hollow: a hollow one marks a point without an interval; colours
#: from ColorBrewer's Dark2, other hues than the classes' tab10)
PACKET_MARKERS = ["o", "s", "^", "v", "D", "P", "X", "p"]
POLICY_COLOURS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
                  "#a6761d", "#666666"]
#: panels per row of a figure with one panel per policy (or class)
MOST_COLUMNS = 4


def _title(fig, title: str) -> None:
    """The figure's title, wrapped to its width (a scenario's description can be long);
    one that would take more than three lines is set at 9 pt instead of 12, more words to
    a line, so that it leaves the panels their room."""
    if title:
        import textwrap  # only where a title is drawn

        lines = textwrap.wrap(title, int(fig.get_figwidth() * 10.5))
        if len(lines) <= 3:
            fig.suptitle("\n".join(lines))
            return
        lines = textwrap.wrap(title, int(fig.get_figwidth() * 10.5 * 12 / 9))
        fig.suptitle("\n".join(lines), fontsize=9)


def _colour(index: int) -> str:
    """Class ``index``'s colour: the six of :data:`CLASS_COLOURS` (every figure of up to
    six classes as it always was), then :data:`MORE_CLASS_COLOURS`."""
    colours = CLASS_COLOURS + MORE_CLASS_COLOURS
    return colours[index % len(colours)]


def _grid(panels: int) -> tuple[int, int]:
    """(rows, columns) of a figure of ``panels`` panels: at most :data:`MOST_COLUMNS` to a
    row, the rows filled evenly (5 → 3 + 2, 7 → 4 + 3)."""
    rows = -(-panels // MOST_COLUMNS)
    return rows, -(-panels // rows)


def _legend(fig, handles: list, fontsize: float = 8, most: int | None = None) -> None:
    """The figure's one legend below the panels: in one row (of at most ``most``
    entries) when the figure is wide enough, else in as many columns as fit — measured,
    not guessed — with the figure made taller by the added rows, so that the panels keep
    their size and no entry is cut off."""
    first = columns = min(len(handles), most or len(handles))
    room = fig.get_figwidth() - 0.1  # inches
    while True:
        legend = fig.legend(handles=handles, loc="outside lower center", ncols=columns,
                            fontsize=fontsize)
        width = legend.get_window_extent().width / fig.dpi  # inches
        if columns == 1 or width <= room:
            break
        legend.remove()
        columns = max(1, min(columns - 1, int(columns * room / width)))
    added = math.ceil(len(handles) / columns) - math.ceil(len(handles) / first)  # rows
    fig.set_figheight(fig.get_figheight() + added * 1.7 * fontsize / 72)


def _bottom_row_labels(axes: np.ndarray, used: int, xlabel: str) -> None:
    """Hide the unused panels of a grid (all but the first ``used``) and give every panel
    with no panel below it its x label and tick labels (a shared x axis shows them on the
    last row only, which an unused panel leaves empty)."""
    columns = axes.shape[1]
    for index, ax in enumerate(axes.ravel()):
        if index >= used:
            ax.set_visible(False)
        elif index + columns >= used:  # nothing drawn below it
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(xlabel)


def _save(fig, path: str | Path, formats: Sequence[str] | None = None) -> list[Path]:
    """Save the figure as ``path`` in each of ``formats``; without ``formats``, in the
    format its suffix names, or in all of :data:`FORMATS` when it has none. A suffix
    that names no figure format is part of the name (``fig.v2`` → ``fig.v2.png``; it
    was replaced, and ``fig.v2`` and ``fig.v2_fluid`` both became ``fig.png``)."""
    path = Path(path)
    written = []
    named = path.suffix.lower().lstrip(".") in KNOWN_FIGURE_FORMATS
    if formats is None and named:
        formats = (path.suffix,)
    targets = [path.with_suffix(f".{fmt}") if named else path.with_name(f"{path.name}.{fmt}")
               for fmt in check_formats(formats)]
    for target in targets:
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=target.suffix.lstrip("."), dpi=130)
        written.append(target)
    return written


def interleaved_dashes(series: dict[str, np.ndarray], single, dash: float = 4.0
                       ) -> dict[str, object]:
    """A line style per named series, so that series drawn on top of each other all show:
    ``single`` for a series equal to no other; where n series are equal throughout (to
    12 significant digits, NaN included), dashes of ``dash`` points taking turns —
    series k of the n drawn from offset 2k · dash, then a gap of (2n − 1) · dash — so
    that each one's colour shows along the one line (a DRF allocation gives several flows
    one fair share; schedulers that make the same choices give one utilisation)."""
    groups: dict[bytes, list[str]] = {}
    for name, values in series.items():
        rounded = np.array([float(f"{v:.12g}") for v in np.asarray(values, float).ravel()])
        key = np.where(np.isnan(rounded), np.inf, rounded).tobytes()
        groups.setdefault(key, []).append(name)
    styles: dict[str, object] = {}
    for members in groups.values():
        n = len(members)
        for k, name in enumerate(members):
            styles[name] = (2 * k * dash, (dash, (2 * n - 1) * dash)) if n > 1 else single
    return styles


def _policy_marker(policy: str) -> str:
    """A fluid policy's marker (registry order), so that coinciding curves stay apart."""
    return POLICY_MARKERS[names(FLUID).index(policy) % len(POLICY_MARKERS)]


def fluid_comparison(fluid: pd.DataFrame, path: str | Path, title: str = "",
                     xlabel: str = "load", formats: Sequence[str] | None = None
                     ) -> list[Path]:
    """BR Figures 1–2: one panel per comparison of the registry ("BMF v DRF", "BMF v PF":
    :func:`mrfq.policies.comparison_panels`) whose policies the fluid table holds, then a
    panel of its own for each policy in no pair (BF, a table of one policy). A pair's
    first policy is wide and pale, the second narrow on top, each with its own marker."""
    classes = list(dict.fromkeys(fluid["class"]))
    policies = list(dict.fromkeys(fluid["policy"]))
    panels = comparison_panels(policies)
    panels += [(p,) for p in policies if all(p not in pair for pair in panels)]
    if not panels:
        raise InputError("holds no fluid rows to draw")
    fig = Figure(figsize=(5 * len(panels), 4.4), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    drawn: dict[str, None] = {}
    for ax, pair in zip(axes, panels, strict=True):
        for order, policy in enumerate(pair):
            part = fluid[fluid["policy"] == policy]
            for i, name in enumerate(classes):
                rows = part[part["class"] == name].sort_values("load")
                if rows.empty:
                    continue
                ax.plot(rows["load"], rows["gamma"], REGISTRY[(FLUID, policy)].style,
                        color=_colour(i), marker=_policy_marker(policy), markersize=4,
                        linewidth=3.0 if order < len(pair) - 1 else 1.2,
                        alpha=0.45 if order < len(pair) - 1 else 1.0, zorder=2 + order)
            drawn[policy] = None
        ax.set_title(" v ".join(label(p) for p in pair))
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"service rate $\gamma_k$")
    handles = [Line2D([], [], color="black", linestyle=REGISTRY[(FLUID, p)].style,
                      marker=_policy_marker(p), markersize=4, label=label(p)) for p in drawn]
    handles += [Line2D([], [], color=_colour(i), label=f"class {name}")
                for i, name in enumerate(classes)]
    _legend(fig, handles)
    _title(fig, title)
    return _save(fig, path, formats)


def _panels(packet: pd.DataFrame, cluster: pd.DataFrame) -> list[tuple[str | None, str | None]]:
    """The panels of the γ figure as (packet policy, cluster policy): one per packet
    policy in its order; a cluster policy shares the panel of the first packet policy
    that realises the same fluid policy (its points beside the packet ones), else it has
    a panel of its own."""
    panels: list[list[str | None]] = [[p, None] for p in dict.fromkeys(packet["policy"])]
    for policy in dict.fromkeys(cluster["policy"]):
        target = REGISTRY[(CLUSTER, policy)].realises
        free = [pair for pair in panels if pair[1] is None and pair[0] is not None
                and target is not None and fluid_counterpart(pair[0]) == target]
        if free:
            free[0][1] = policy
        else:
            panels.append([None, policy])
    return [(a, b) for a, b in panels]


def _panel_title(packet_policy: str | None, cluster_policy: str | None) -> str:
    parts = [label(packet_policy)] if packet_policy else []
    if cluster_policy:
        parts.append(f"cluster {REGISTRY[(CLUSTER, cluster_policy)].label}")
    return "; ".join(parts)


def _known(failed: pd.DataFrame) -> pd.Series:
    """Which failed points validation explains by a known limitation of their policy
    (``validation.csv``'s ``known_limitation``; a table without the column: none)."""
    if "known_limitation" not in failed:
        return pd.Series(False, index=failed.index)
    reason = failed["known_limitation"]  # (all NaN, read from a CSV: float)
    return reason.notna() & (reason.astype(str) != "")


def _failed_of(failed: pd.DataFrame | None, kind: str) -> pd.DataFrame | None:
    """The failures of one kind (a validation table without ``kind`` is packet only)."""
    if failed is None or failed.empty:
        return None
    if "kind" in failed:
        return failed[failed["kind"] == kind]
    return failed if kind == PACKET else None


def packet_vs_fluid(fluid: pd.DataFrame, packet: pd.DataFrame, path: str | Path,
                    title: str = "", xlabel: str = "load",
                    failed: pd.DataFrame | None = None,
                    formats: Sequence[str] | None = None,
                    cluster: pd.DataFrame | None = None) -> list[Path]:
    """BR Figure 3: one panel per packet policy (at most :data:`MOST_COLUMNS` to a row);
    fluid lines (dots at the computed loads), packet points (×) with their 95%
    intervals, and a red ring around every point of ``failed`` (rows policy, load,
    class and, when there, kind: the validation's failures). ``cluster`` points (◇, with
    their intervals) go on the panel of a packet policy realising the same fluid policy,
    0.01 to the right of the packet points (which move 0.01 to the left), or on a panel
    of their own against the fluid policy they realise (:func:`_panels`)."""
    cluster = packet.iloc[:0] if cluster is None else cluster
    panels = _panels(packet, cluster)
    classes = list(dict.fromkeys([*packet["class"], *cluster["class"]]))
    rows, columns = _grid(len(panels))
    fig = Figure(figsize=(4.2 * columns, 4.4 if rows == 1 else 3.6 * rows + 0.8),
                 layout="constrained")
    axes = fig.subplots(rows, columns, sharey=True, squeeze=False)
    for ax, (packet_policy, cluster_policy) in zip(axes.ravel(), panels, strict=False):
        fluid_policy = (fluid_counterpart(packet_policy) if packet_policy
                        else REGISTRY[(CLUSTER, cluster_policy)].realises)
        dodge = 0.01 if packet_policy and cluster_policy else 0.0  # side by side
        for i, name in enumerate(classes):
            line = fluid[(fluid["policy"] == fluid_policy) & (fluid["class"] == name)]
            line = line.sort_values("load")
            if not line.empty:
                ax.plot(line["load"], line["gamma"], "-", color=_colour(i), marker=".",
                        markersize=4)
            for kind, points, policy, shift, marker in (
                    (PACKET, packet, packet_policy, -dodge, {"fmt": "x"}),
                    (CLUSTER, cluster, cluster_policy, dodge,
                     {"fmt": "D", "fillstyle": "none", "markersize": 5})):
                pts = points[(points["policy"] == policy) & (points["class"] == name)]
                if pts.empty:
                    continue
                pts = pts.sort_values("load")
                err = [pts["gamma"] - pts["ci_low"], pts["ci_high"] - pts["gamma"]]
                ax.errorbar(pts["load"] + shift, pts["gamma"], yerr=err, color=_colour(i),
                            capsize=2, **marker)
                bad = _failed_of(failed, kind)
                if bad is not None:
                    bad = bad[(bad["policy"] == policy) & (bad["class"] == name)]
                    for limited, colour in ((False, "red"), (True, "darkorange")):
                        rows = bad[_known(bad) == limited]
                        hits = pts[pts["load"].isin(rows["load"])]
                        ax.plot(hits["load"] + shift, hits["gamma"], "o", markersize=11,
                                fillstyle="none", color=colour, markeredgewidth=1.5,
                                linestyle="none")
        ax.set_title(_panel_title(packet_policy, cluster_policy))
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(r"service rate $\gamma_k$")
    handles = [Line2D([], [], color=_colour(i), label=f"class {name}")
               for i, name in enumerate(classes)]
    handles.append(Line2D([], [], color="grey", marker=".", label="fluid"))
    if not packet.empty:
        handles.append(Line2D([], [], color="grey", marker="x", linestyle="none",
                              label="packet (95% CI)"))
    if not cluster.empty:
        handles.append(Line2D([], [], color="grey", marker="D", fillstyle="none",
                              linestyle="none", label="cluster (95% CI)"))
    if failed is not None and not failed.empty:
        if (~_known(failed)).any():
            handles.append(Line2D([], [], color="red", marker="o", fillstyle="none",
                                  linestyle="none", label="fails validation"))
        if _known(failed).any():
            handles.append(Line2D([], [], color="darkorange", marker="o", fillstyle="none",
                                  linestyle="none", label="fails: a known limitation"))
    _legend(fig, handles)
    _title(fig, title)
    return _save(fig, path, formats)


def _interval_bars(rows: pd.DataFrame, point: str, stem: str) -> np.ndarray | None:
    """Error-bar lengths (below, above) of ``point`` from ``<stem>_low``/``_high``: NaN
    where the interval is missing (flagged, NaN bounds: no bar, no caps drawn); None
    without the columns."""
    if f"{stem}_low" not in rows or f"{stem}_high" not in rows:
        return None
    below = (rows[point] - rows[f"{stem}_low"]).to_numpy(dtype=np.float64)
    above = (rows[f"{stem}_high"] - rows[point]).to_numpy(dtype=np.float64)
    return np.vstack([below, above]).clip(min=0.0)


def _packet_policy_style(policy: str) -> tuple[str, str]:
    """A packet policy's colour and marker, the same in every figure (registry order;
    colours from :data:`POLICY_COLOURS`, apart from the class colours of the γ figures)."""
    index = names(PACKET).index(policy) if policy in names(PACKET) else len(names(PACKET))
    return (POLICY_COLOURS[index % len(POLICY_COLOURS)],
            PACKET_MARKERS[index % len(PACKET_MARKERS)])


def packet_delays(packet: pd.DataFrame, path: str | Path, title: str = "",
                  xlabel: str = "load", formats: Sequence[str] | None = None) -> list[Path]:
    """Per-packet delay against load: one panel per class, one line per packet policy
    (its colour and marker the same in every figure), the 99th percentile of the sojourn
    through the router (solid) and its mean (dotted), in time units on a log scale
    (columns ``p99_sojourn``, ``mean_packet_sojourn``), with their confidence intervals
    as error bars (``p99_sojourn_low``/``_high``, ``packet_sojourn_low``/``_high``). A
    point whose interval is missing (flagged, or a record from before the interval was
    kept) has a hollow marker and no bar, so that it does not pass for a precise one."""
    policies = list(dict.fromkeys(packet["policy"]))
    classes = list(dict.fromkeys(packet["class"]))
    grid, columns = _grid(len(classes))
    fig = Figure(figsize=(4.2 * columns, 4.4 if grid == 1 else 3.6 * grid + 0.8),
                 layout="constrained")
    axes = fig.subplots(grid, columns, sharey=True, squeeze=False)
    hollow_drawn = False
    for ax, name in zip(axes.ravel(), classes, strict=False):
        for policy in policies:
            rows = packet[(packet["policy"] == policy) & (packet["class"] == name)]
            rows = rows.sort_values("load")
            colour, marker = _packet_policy_style(policy)
            for point, stem, line, size in (("p99_sojourn", "p99_sojourn", "-", 4),
                                            ("mean_packet_sojourn", "packet_sojourn", ":", 3)):
                bars = _interval_bars(rows, point, stem)
                ax.errorbar(rows["load"], rows[point], yerr=bars, fmt=line, capsize=2,
                            color=colour)
                known = (~np.isnan(bars).any(axis=0) if bars is not None
                         else np.zeros(len(rows), bool))
                for inside, fill in ((known, "full"), (~known, "none")):
                    ax.plot(rows["load"][inside], rows[point][inside], linestyle="none",
                            marker=marker, markersize=size, fillstyle=fill, color=colour)
                hollow_drawn |= bool((~known & rows[point].notna().to_numpy()).any())
        ax.set_title(f"class {name}")
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
    for ax in axes.ravel()[len(classes):]:
        ax.set_visible(False)
    what = "packet sojourn (time units): p99 solid, mean dotted"
    if grid == 1:
        axes[0][0].set_ylabel(what)
    else:  # one label for the rows, longer than any one of them
        fig.supylabel(what, fontsize=10)
    handles = [Line2D([], [], color=_packet_policy_style(p)[0],
                      marker=_packet_policy_style(p)[1], markersize=4, label=label(p))
               for p in policies]
    if hollow_drawn:
        handles.append(Line2D([], [], color="grey", marker="o", fillstyle="none",
                              linestyle="none", label="hollow: no interval (see the CSV)"))
    _legend(fig, handles)
    _title(fig, title)
    return _save(fig, path, formats)


LAW_STYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1))]


def insensitivity(fluid: pd.DataFrame, path: str | Path, title: str = "",
                  xlabel: str = "load", packet: pd.DataFrame | None = None,
                  packet_law: str = "", formats: Sequence[str] | None = None) -> list[Path]:
    """The insensitivity study (issue 14) in Figure 2's style: one panel per fluid policy,
    one colour per class, one line style per size law (``fluid`` has a ``law`` column,
    as :func:`mrfq.pipeline.insensitivity` returns it); optional packet points with their
    intervals (a sweep summary's packet rows) on the panel of the policy they realise,
    labelled with ``packet_law``."""
    policies = list(dict.fromkeys(fluid["policy"]))
    laws = list(dict.fromkeys(fluid["law"]))
    classes = list(dict.fromkeys(fluid["class"]))
    fig = Figure(figsize=(4.2 * len(policies), 4.8), layout="constrained")
    axes = fig.subplots(1, len(policies), sharey=True, squeeze=False)[0]
    for ax, policy in zip(axes, policies, strict=True):
        for law, style in zip(laws, LAW_STYLES * len(laws), strict=False):
            part = fluid[(fluid["policy"] == policy) & (fluid["law"] == law)]
            for i, name in enumerate(classes):
                rows = part[part["class"] == name].sort_values("load")
                ax.plot(rows["load"], rows["gamma"], linestyle=style, color=_colour(i),
                        linewidth=1.2, marker=".", markersize=3)
        if packet is not None:
            mine = packet[packet["policy"].map(fluid_counterpart) == policy]
            for i, name in enumerate(classes):
                pts = mine[mine["class"] == name].sort_values("load")
                if pts.empty:
                    continue
                err = [pts["gamma"] - pts["ci_low"], pts["ci_high"] - pts["gamma"]]
                ax.errorbar(pts["load"], pts["gamma"], yerr=err, fmt="x", color=_colour(i),
                            capsize=2)
        ax.set(title=label(policy), xlabel=xlabel, xlim=(0, 1), ylim=(0, 1))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"service rate $\gamma_k$")
    # one legend: line styles for the laws (black), colours for the classes
    handles = [Line2D([], [], color="black", linestyle=style, label=law)
               for law, style in zip(laws, LAW_STYLES * len(laws), strict=False)]
    handles += [Line2D([], [], color=_colour(i), label=f"class {name}")
                for i, name in enumerate(classes)]
    if packet is not None:
        handles.append(Line2D([], [], color="grey", marker="x", linestyle="none",
                              label=f"packet, {packet_law} (95% CI)"))
    _legend(fig, handles, fontsize=7, most=6)
    _title(fig, title)
    return _save(fig, path, formats)
