"""A drawing of a network scenario (SPEC §3.2): its resources grouped by router and every
class's route through them, in order (``mrfq plot`` writes it as ``<name>_network``).

Drawn on a :class:`matplotlib.figure.Figure` (no pyplot), saved through
:func:`mrfq.plots._save` in the ``formats`` asked for (default PNG and PDF).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.colors import hsv_to_rgb, to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mrfq.plots import _colour, _save

#: a resource's disc: marker size (points); routes end at its rim and cross it
NODE_SIZE = 18
#: more resources than this: names along the radius, a larger figure (:func:`network_drawing`)
CROWDED = 16
#: points per unit of the circle's radius for each inch of the figure's side (the axes
#: span ±1.72 units beside the legend; 16.6–18.7 measured on drawings of 12–60 resources)
POINTS_PER_RADIUS = 16.5
#: the widest spread of the routes that share a hop (data units; the disc's radius is
#: about 0.09): side by side, all still inside the discs they join
SPREAD = 0.12


def _hops(routes: list[list[int]]) -> dict[frozenset, list[int]]:
    """The classes crossing each hop (a pair of resources, either way), in class order."""
    hops: dict[frozenset, list[int]] = {}
    for k, route in enumerate(routes):
        for a, b in zip(route[:-1], route[1:], strict=True):
            hops.setdefault(frozenset((a, b)), []).append(k)
    return hops


def route_segments(position: dict[int, np.ndarray], routes: list[list[int]],
                   spread: float = SPREAD) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(class, start, end) of every hop of every route, from resource to resource
    (``position``: the resources' centres): the classes sharing a hop are set side by
    side, shifted across it by at most ±``spread``/2 (:data:`SPREAD` for full-size discs),
    so that each stays visible and still starts and ends within the discs of the hop's
    two resources."""
    segments = []
    hops = _hops(routes)
    for k, route in enumerate(routes):
        for a, b in zip(route[:-1], route[1:], strict=True):
            sharing = hops[frozenset((a, b))]
            low, high = sorted((a, b))  # one direction per hop, whichever way it is crossed
            along = position[high] - position[low]
            across = np.array([-along[1], along[0]]) / np.hypot(*along)
            step = spread / max(len(sharing) - 1, 1)
            shift = across * step * (sharing.index(k) - (len(sharing) - 1) / 2)
            segments.append((k, position[a] + shift, position[b] + shift))
    return segments


#: pale fills, one per router (its label and its resources' discs; class colours are
#: the arrows')
ROUTER_FILLS = ("#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc", "#fff2cc", "#d0e0e3",
                "#f4cccc", "#e6e6e6")


def network_drawing(resources: list[str], routers: list[tuple[str, list[int]]],
                    routes: list[list[int]], class_names: list[str], path: str | Path,
                    title: str = "", formats: Sequence[str] | None = None) -> list[Path]:
    """The resources on a circle, grouped by router (each router's label and its
    resources' discs in one pale fill of :data:`ROUTER_FILLS`, names beside the discs), and
    every class's route (class colours as in the γ plots) as arrows from resource to
    resource, in route order, each ending at the rim of the resource it reaches; a square
    on the resource where the route starts (a one-resource route is its square). Routes
    sharing a hop are drawn side by side (:func:`route_segments`)."""
    J = len(resources)
    order = [j for _, members in routers for j in members] or list(range(J))
    angle = {j: np.pi / 2 - 2 * np.pi * i / J for i, j in enumerate(order)}
    position = {j: np.array([np.cos(angle[j]), np.sin(angle[j])]) for j in range(J)}
    # Beyond CROWDED resources the names beside the discs would run into each other: they
    # are written along the radius, and the figure grows (to 11 inches) so that the discs,
    # shrunk if they must be, keep apart.
    crowded = J > CROWDED
    side = min(5.2 * J / CROWDED, 11.0) if crowded else 5.2
    gap = 2 * np.pi * side * POINTS_PER_RADIUS / J  # points between neighbouring centres
    node = min(NODE_SIZE, 0.8 * gap)
    fig = Figure(figsize=(side, side), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    # beyond the palette, as many pale hues round the wheel (a repeated fill could
    # stand beside its twin where the circle closes)
    fills = (ROUTER_FILLS if len(routers) <= len(ROUTER_FILLS) else
             [to_hex(hsv_to_rgb((i / len(routers), 0.22, 0.96))) for i in range(len(routers))])
    for r, (name, members) in enumerate(routers or [("router", list(range(J)))]):
        centre = np.mean([np.exp(1j * angle[j]) for j in members])
        # a router around the whole circle has no side of its own: its label goes below
        out = 1.62 if crowded else 1.5  # (clear of the names along the radius)
        spot = (out * np.cos(np.angle(centre)), out * np.sin(np.angle(centre))) if abs(
            centre) > 0.2 else (0.0, -1.55)
        # the router's colour on its label and on its resources' discs: who is in which
        fill = fills[r] if routers else "0.85"
        ax.text(*spot, name, ha="center", va="center",
                fontsize=9, bbox={"boxstyle": "round", "fc": fill, "ec": "0.5"})
        for j in members:
            ax.plot(*position[j], "o", ms=node, color=fill, mec="0.3", zorder=3)
            x, y = position[j]  # the name beside the disc, on its outer side
            if crowded:  # along the radius, read left to right on either side
                right = x >= 0
                ax.text(1.1 * x, 1.1 * y, resources[j], fontsize=7,
                        rotation=np.degrees(angle[j]) + (0 if right else 180),
                        rotation_mode="anchor", ha="left" if right else "right",
                        va="center")
                continue
            ax.text(1.13 * x, 1.13 * y, resources[j], fontsize=8,
                    ha="left" if x > 0.3 else "right" if x < -0.3 else "center",
                    va="bottom" if y > 0.3 else "top" if y < -0.3 else "center")
    # smaller discs, and a larger figure (more points per data unit): routes sharing a
    # hop and the squares of routes starting together closer, to stay on their discs
    scale = node / NODE_SIZE
    shrink = scale * 5.2 / side
    for k, start, end in route_segments(position, routes, SPREAD * shrink):
        # from under the first disc to the rim of the second: the arrowhead touches it
        ax.annotate("", xy=end, xytext=start, zorder=2, arrowprops={
            "arrowstyle": "-|>", "color": _colour(k), "lw": 1.3, "shrinkA": 0,
            "shrinkB": node / 2, "mutation_scale": max(9 * scale, 4)})
    starts: dict[int, list[int]] = {}
    for k, route in enumerate(routes):
        starts.setdefault(route[0], []).append(k)
    for j, classes in starts.items():
        tangent = np.array([-position[j][1], position[j][0]])
        for i, k in enumerate(classes):
            spot = position[j] + tangent * 0.045 * shrink * (i - (len(classes) - 1) / 2)
            ax.plot(*spot, "s", color=_colour(k), ms=4.5 * scale, mec="black", mew=0.4,
                    zorder=4)
    handles = [Line2D([], [], color=_colour(k), label=name)
               for k, name in enumerate(class_names)]
    handles.append(Line2D([], [], color="0.4", marker="s", linestyle="none", ms=4.5,
                          label="route start"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_xlim(-1.72, 1.72)
    ax.set_ylim(-1.72, 1.72)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=8, wrap=True)
    return _save(fig, path, formats)
