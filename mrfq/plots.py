"""Figures in the paper's layout (BR Figures 1–3): γ_k against load.

Figures 1–2: two panels, "BMF v DRF" and "BMF v PF", one line style per policy and one
colour per class. Figure 3: one panel per packet policy, fluid lines and packet points
with confidence-interval error bars.

Figures are drawn on :class:`matplotlib.figure.Figure` objects, not through pyplot, so
importing or using this module never changes the matplotlib backend of a notebook. Every
figure has a constrained layout, markers at the computed points and one legend for the
whole figure; ``formats`` (default PNG and PDF) are the files written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mrfq.errors import InputError
from mrfq.io import atomic_path
from mrfq.io import check_figure_formats as check_formats
from mrfq.policies import FLUID, REGISTRY, comparison_panels, fluid_counterpart, label, names

CLASS_COLOURS = ["tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]
POLICY_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]


def _title(fig, title: str) -> None:
    """The figure's title, wrapped to its width (a scenario's description can be long)."""
    if title:
        import textwrap  # only where a title is drawn

        fig.suptitle("\n".join(textwrap.wrap(title, int(fig.get_figwidth() * 10.5))))


def _colour(index: int) -> str:
    return CLASS_COLOURS[index % len(CLASS_COLOURS)]


def _save(fig, path: str | Path, formats: Sequence[str] | None = None) -> list[Path]:
    """Save the figure as ``path`` in each of ``formats``; without ``formats``, in the
    format its suffix names, or in all of :data:`FORMATS` when it has none."""
    path = Path(path)
    written = []
    if formats is None and path.suffix:
        formats = (path.suffix,)
    targets = [path.with_suffix(f".{fmt}") for fmt in check_formats(formats)]
    for target in targets:
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=target.suffix.lstrip("."), dpi=130)
        written.append(target)
    return written


def _policy_marker(policy: str) -> str:
    """A fluid policy's marker (registry order), so that coinciding curves stay apart."""
    return POLICY_MARKERS[names(FLUID).index(policy) % len(POLICY_MARKERS)]


def fluid_comparison(fluid: pd.DataFrame, path: str | Path, title: str = "",
                     xlabel: str = "load", formats: Sequence[str] | None = None
                     ) -> list[Path]:
    """BR Figures 1–2: one panel per comparison of the registry ("BMF v DRF", "BMF v PF":
    :func:`mrfq.policies.comparison_panels`) whose policies the fluid table holds. The
    first policy of a pair is drawn wide and pale, the second narrow on top, each with
    its own marker at the computed loads: where two curves coincide both stay visible."""
    classes = list(dict.fromkeys(fluid["class"]))
    panels = comparison_panels(fluid["policy"].unique())
    if not panels:
        raise InputError("holds no pair of fluid policies to compare (the panels are "
                         + ", ".join(f"{label(a)} v {label(b)}" for a, b in
                                     comparison_panels(names(FLUID))) + ")")
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
                        linewidth=3.0 if order == 0 else 1.2,
                        alpha=0.45 if order == 0 else 1.0, zorder=2 + order)
            drawn[policy] = None
        ax.set_title(f"{label(pair[0])} v {label(pair[1])}")
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"service rate $\gamma_k$")
    handles = [Line2D([], [], color="black", linestyle=REGISTRY[(FLUID, p)].style,
                      marker=_policy_marker(p), markersize=4, label=label(p)) for p in drawn]
    handles += [Line2D([], [], color=_colour(i), label=f"class {name}")
                for i, name in enumerate(classes)]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def packet_vs_fluid(fluid: pd.DataFrame, packet: pd.DataFrame, path: str | Path,
                    title: str = "", xlabel: str = "load",
                    failed: pd.DataFrame | None = None,
                    formats: Sequence[str] | None = None) -> list[Path]:
    """BR Figure 3: one panel per packet policy; fluid lines (dots at the computed loads),
    packet points with their 95% intervals, and a red ring around every point of
    ``failed`` (rows policy, load, class: the validation's failures)."""
    policies = list(dict.fromkeys(packet["policy"]))
    classes = list(dict.fromkeys(packet["class"]))
    fig = Figure(figsize=(4.2 * len(policies), 4.4), layout="constrained")
    axes = fig.subplots(1, len(policies), sharey=True, squeeze=False)
    for ax, policy in zip(axes[0], policies, strict=True):
        fluid_policy = fluid_counterpart(policy)
        for i, name in enumerate(classes):
            line = fluid[(fluid["policy"] == fluid_policy) & (fluid["class"] == name)]
            line = line.sort_values("load")
            if not line.empty:
                ax.plot(line["load"], line["gamma"], "-", color=_colour(i), marker=".",
                        markersize=4)
            pts = packet[(packet["policy"] == policy) & (packet["class"] == name)]
            pts = pts.sort_values("load")
            err = [pts["gamma"] - pts["ci_low"], pts["ci_high"] - pts["gamma"]]
            ax.errorbar(pts["load"], pts["gamma"], yerr=err, fmt="x", color=_colour(i),
                        capsize=2)
            if failed is not None and not failed.empty:
                bad = failed[(failed["policy"] == policy) & (failed["class"] == name)]
                hits = pts[pts["load"].isin(bad["load"])]
                ax.plot(hits["load"], hits["gamma"], "o", markersize=11, fillstyle="none",
                        color="red", markeredgewidth=1.5)
        ax.set_title(label(policy))
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(r"service rate $\gamma_k$")
    handles = [Line2D([], [], color=_colour(i), label=f"class {name}")
               for i, name in enumerate(classes)]
    handles += [Line2D([], [], color="grey", marker=".", label="fluid"),
                Line2D([], [], color="grey", marker="x", linestyle="none",
                       label="packet (95% CI)")]
    if failed is not None and not failed.empty:
        handles.append(Line2D([], [], color="red", marker="o", fillstyle="none",
                              linestyle="none", label="fails validation"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def _interval_bars(rows: pd.DataFrame, point: str, stem: str) -> np.ndarray | None:
    """Error-bar lengths (below, above) of ``point`` from ``<stem>_low``/``_high``: none
    where the interval is missing (flagged, NaN bounds); None without the columns."""
    if f"{stem}_low" not in rows or f"{stem}_high" not in rows:
        return None
    below = (rows[point] - rows[f"{stem}_low"]).to_numpy(dtype=np.float64)
    above = (rows[f"{stem}_high"] - rows[point]).to_numpy(dtype=np.float64)
    return np.nan_to_num(np.vstack([below, above]).clip(min=0.0), nan=0.0)


def packet_delays(packet: pd.DataFrame, path: str | Path, title: str = "",
                  xlabel: str = "load", formats: Sequence[str] | None = None) -> list[Path]:
    """Per-packet delay against load: one panel per class, one line per packet policy,
    the 99th percentile of the sojourn through the router (solid) and its mean (dotted),
    in time units on a log scale (columns ``p99_sojourn``, ``mean_packet_sojourn``), with
    their confidence intervals as error bars (``p99_sojourn_low``/``_high``,
    ``packet_sojourn_low``/``_high``; none where an interval is flagged)."""
    policies = list(dict.fromkeys(packet["policy"]))
    classes = list(dict.fromkeys(packet["class"]))
    fig = Figure(figsize=(4.2 * len(classes), 4.4), layout="constrained")
    axes = fig.subplots(1, len(classes), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], classes, strict=True):
        for i, policy in enumerate(policies):
            rows = packet[(packet["policy"] == policy) & (packet["class"] == name)]
            rows = rows.sort_values("load")
            colour = CLASS_COLOURS[i % len(CLASS_COLOURS)] if i < len(CLASS_COLOURS) \
                else "black"
            ax.errorbar(rows["load"], rows["p99_sojourn"],
                        yerr=_interval_bars(rows, "p99_sojourn", "p99_sojourn"), fmt="-",
                        marker=POLICY_MARKERS[i % len(POLICY_MARKERS)], markersize=4,
                        capsize=2, color=colour)
            ax.errorbar(rows["load"], rows["mean_packet_sojourn"],
                        yerr=_interval_bars(rows, "mean_packet_sojourn", "packet_sojourn"),
                        fmt=":", marker=POLICY_MARKERS[i % len(POLICY_MARKERS)],
                        markersize=3, capsize=2, color=colour)
        ax.set_title(f"class {name}")
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("packet sojourn (time units): p99 solid, mean dotted")
    handles = [Line2D([], [], color=CLASS_COLOURS[i % len(CLASS_COLOURS)]
                      if i < len(CLASS_COLOURS) else "black",
                      marker=POLICY_MARKERS[i % len(POLICY_MARKERS)], markersize=4,
                      label=label(policy)) for i, policy in enumerate(policies)]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
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
        ax.set_title(label(policy))
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
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
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6),
               fontsize=7)
    _title(fig, title)
    return _save(fig, path, formats)


def dominant_share_over_time(timeline: pd.DataFrame, path: str | Path,
                             title: str = "", formats: Sequence[str] | None = None
                             ) -> list[Path]:
    """The DRFQ/MR3 papers' figure: one panel per packet policy (a grid of up to three
    columns), each flow's dominant share (its share of its dominant resource) per
    interval, and, dashed in the flow's colour, its fair share (``fair_share``: the fluid
    allocation the policy realises; absent for a baseline). One legend for the figure."""
    rows = timeline[timeline["resource"] == "dominant"]
    policies = list(dict.fromkeys(rows["policy"]))
    flows = list(dict.fromkeys(rows["flow"]))
    columns = min(3, len(policies))
    grid = -(-len(policies) // columns)
    fig = Figure(figsize=(4.2 * columns, 3.2 * grid + 0.6), layout="constrained")
    axes = fig.subplots(grid, columns, sharex=True, sharey=True, squeeze=False)
    for ax, policy in zip(axes.ravel(), policies, strict=False):
        part = rows[rows["policy"] == policy]
        for i, flow in enumerate(flows):
            line = part[part["flow"] == flow].sort_values("time")
            ax.step(line["time"], line["share"], where="post", color=_colour(i), label=flow)
            if "fair_share" in line and line["fair_share"].notna().any():
                ax.step(line["time"], line["fair_share"], where="post", color=_colour(i),
                        linestyle="--", linewidth=1.0, alpha=0.8)
        ax.set_title(label(policy))
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(policies):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time")
    for ax in axes[:, 0]:
        ax.set_ylabel("dominant share")
    handles = [Line2D([], [], color=_colour(i), label=flow) for i, flow in enumerate(flows)]
    handles.append(Line2D([], [], color="grey", linestyle="--", label="fair share (fluid)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    _title(fig, title)
    return _save(fig, path, formats)


def network_drawing(resources: list[str], routers: list[tuple[str, list[int]]],
                    routes: list[list[int]], class_names: list[str], path: str | Path,
                    title: str = "", formats: Sequence[str] | None = None) -> list[Path]:
    """A small drawing of a network (SPEC §3.2): the resources on a circle, grouped by
    router (one shaded label per router), and every class's route as an arrowed path
    drawn on a circle of its own inside (class colours as in the γ plots)."""
    J = len(resources)
    order = [j for _, members in routers for j in members] or list(range(J))
    angle = {j: np.pi / 2 - 2 * np.pi * i / J for i, j in enumerate(order)}
    fig = Figure(figsize=(5.2, 5.2), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for name, members in routers or [("router", list(range(J)))]:
        mean = np.angle(np.mean([np.exp(1j * angle[j]) for j in members]))
        ax.text(1.42 * np.cos(mean), 1.42 * np.sin(mean), name, ha="center", va="center",
                fontsize=9, bbox={"boxstyle": "round", "fc": "0.9", "ec": "0.5"})
        for j in members:
            ax.plot(np.cos(angle[j]), np.sin(angle[j]), "o", ms=16, color="0.85", mec="0.3")
            ax.text(1.18 * np.cos(angle[j]), 1.18 * np.sin(angle[j]), resources[j],
                    ha="center", va="center", fontsize=8)
    K = len(routes)
    for k, route in enumerate(routes):
        radius = 0.9 - 0.55 * k / max(K, 1)
        points = [(radius * np.cos(angle[j]), radius * np.sin(angle[j])) for j in route]
        ax.plot(*points[0], "s", color=_colour(k), ms=5)
        for a, b in zip(points[:-1], points[1:], strict=True):
            ax.annotate("", xy=b, xytext=a, arrowprops={"arrowstyle": "->",
                                                        "color": _colour(k), "lw": 1.4})
    ax.legend(handles=[Line2D([], [], color=_colour(k), label=name)
                       for k, name in enumerate(class_names)], fontsize=7, loc="upper left",
              bbox_to_anchor=(1.02, 1.0))
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.6, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=8, wrap=True)
    return _save(fig, path, formats)
