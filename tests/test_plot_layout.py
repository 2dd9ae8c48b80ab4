"""Figures that stay readable as they grow: a colour per class up to 20 classes, a legend
and a title that fit the figure, at most four panels to a row with time or load ticks
under every panel, shares drawn whatever their size, network routes that reach their
resources, and cluster points drawn beside the packet ones (or alone)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex, to_rgb
from matplotlib.text import Annotation

from mrfq import plot_flows, plot_network, plots, policies
from mrfq.pipeline import plot
from mrfq.scenario import load_scenario, scenario_from_dict
from mrfq.sweeps import run_sweep


def _gamma(policy_names, classes, kind=None, loads=(0.3, 0.6, 0.9)):
    rows = [{"policy": p, "load": load, "class": c, "gamma": 0.9 - 0.8 * load,
             "ci_low": 0.85 - 0.8 * load, "ci_high": 0.95 - 0.8 * load}
            for p in policy_names for load in loads for c in classes]
    table = pd.DataFrame(rows)
    if kind is not None:
        table.insert(0, "kind", kind)
    return table


def _class_colours(fig) -> list[str]:
    return [to_hex(h.get_color()) for h in fig.legends[0].legend_handles
            if h.get_label().startswith("class ")]


def test_six_classes_keep_their_colours_and_twenty_are_distinct():
    # the first six as every committed figure of up to six classes has them
    assert [plots._colour(i) for i in range(6)] == [
        "tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]
    assert len({to_hex(plots._colour(i)) for i in range(20)}) == 20


def test_fifteen_classes_have_fifteen_colours_in_the_gamma_plot_and_the_drawing(captured):
    classes = [f"c{i}" for i in range(15)]
    plots.packet_vs_fluid(_gamma(["bmf"], classes), _gamma(["bmf"], classes), "x")
    assert len(set(_class_colours(captured[0]))) == 15
    s = load_scenario("random_network")
    plot_network.network_drawing(list(s.resources), [(n, list(m)) for n, m in s.routers],
                                 [list(r) for r in s.routes], s.class_names, "x", s.name)
    legend = captured[1].axes[0].get_legend()
    colours = [to_hex(h.get_color()) for h in legend.legend_handles
               if h.get_label() in s.class_names]
    assert len(colours) == 15 and len(set(colours)) == 15


def test_a_legend_of_many_classes_and_a_long_title_fit_the_figure(captured):
    """The random network's γ figure: one panel, 15 classes, a 300-character title."""
    classes = [f"c{i}" for i in range(15)]
    title = ("random_network with BMF only, flow-level fluid reference at reduced size "
             "(reproduction/networks/README.md): 6 routers (CPU + link each) on a ring, "
             "15 classes on random routes of 1-4 routers (reproduction/networks/"
             "make_random_network.py, seed 2017)")
    plots.packet_vs_fluid(_gamma(["bmf"], classes), _gamma(["bmf"], classes), "x", title)
    fig = captured[0]
    fig.draw_without_rendering()
    legend = fig.legends[0].get_window_extent()
    assert 0 <= legend.x0 and legend.x1 <= fig.bbox.width
    assert len(fig.legends[0].get_texts()) == 17  # every entry, none dropped
    suptitle = next(t for t in fig.texts if t.get_text() == fig.get_suptitle())
    assert suptitle.get_window_extent().height < 0.2 * fig.bbox.height
    panel = fig.axes[0].get_window_extent()
    assert panel.width > 0.6 * fig.bbox.width and panel.height > 0.4 * fig.bbox.height


def _ticks_and_columns(fig) -> tuple[list[bool], int]:
    """Whether each visible panel shows x tick labels (as drawn), and the grid's columns."""
    fig.draw_without_rendering()
    shown = [ax for ax in fig.axes if ax.get_visible()]
    labelled = [any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())
                for ax in shown]
    return labelled, shown[0].get_subplotspec().get_gridspec().ncols


def test_seven_packet_policies_make_a_grid_with_load_ticks_under_every_panel(captured):
    every = policies.names(policies.PACKET)
    assert len(every) == 7
    plots.packet_vs_fluid(_gamma(["drf", "pf", "bmf"], ["1", "2", "3"]),
                          _gamma(every, ["1", "2", "3"]), "x")
    labelled, columns = _ticks_and_columns(captured[0])
    assert labelled == [True] * 7 and columns == 4
    assert all(ax.get_xlabel() for ax in captured[0].axes if ax.get_visible())


def _timeline(policy_names, top=1.0):
    rows = [{"policy": p, "flow": f, "resource": "dominant", "time": 10.0 * t,
             "share": top if (f, t) == ("B", 3) else 0.3, "fair_share": 0.25}
            for p in policy_names for f in ("A", "B") for t in range(8)]
    return pd.DataFrame(rows)


def test_seven_timelines_make_a_grid_with_time_ticks_under_every_column(captured):
    """The panels share their time axis: the lowest panel of every column shows it (with
    seven panels in a 4 + 3 grid, the fourth is on the first row)."""
    plot_flows.dominant_share_over_time(_timeline(policies.names(policies.PACKET)), "x")
    labelled, columns = _ticks_and_columns(captured[0])
    assert labelled == [False, False, False, True, True, True, True] and columns == 4
    shown = [ax for ax in captured[0].axes if ax.get_visible()]
    assert [ax.get_xlabel() for ax in shown] == [""] * 3 + ["time (time units)"] * 4


def test_a_share_above_one_is_drawn_not_clipped(captured):
    """A timeline written before services were split over intervals (2026-11-28) could
    hold more than an interval's length of service: 1.14 must stay on the axes."""
    plot_flows.dominant_share_over_time(_timeline(["fifo"], top=1.14), "x")
    assert captured[0].axes[0].get_ylim()[1] >= 1.14
    captured.clear()
    plot_flows.dominant_share_over_time(_timeline(["fifo"]), "x")
    assert captured[0].axes[0].get_ylim() == (0.0, 1.05)  # as before when nothing exceeds 1


@pytest.mark.parametrize("name", ["triangle", "nfv_chain", "random_network"])
def test_every_route_goes_from_resource_to_resource_in_order(captured, name):
    """Read back from the drawing: every arrow of a class starts inside the disc of one
    resource of its route and ends at the rim of the next one, hop after hop."""
    s = load_scenario(name)
    plot_network.network_drawing(list(s.resources), [(n, list(m)) for n, m in s.routers],
                                 [list(r) for r in s.routes], s.class_names, "x", s.name)
    ax = captured[0].axes[0]
    labels = {t.get_text(): np.array(t.get_position()) for t in ax.texts
              if t.get_text() in s.resources}
    discs = [np.array(line.get_xydata()[0]) for line in ax.get_lines()
             if line.get_marker() == "o" and line.get_markersize() == plot_network.NODE_SIZE]
    # each resource's disc: the one its label sits beside
    centre = {r: min(discs, key=lambda d, p=p: np.hypot(*(d - p))) for r, p in labels.items()}
    arrows = [a for a in ax.texts if isinstance(a, Annotation) and a.arrow_patch]
    radius = 0.1  # the disc (18 pt across, about 0.09 data units) and a little
    for k, route in enumerate(s.routes):
        mine = [a for a in arrows
                if to_hex(a.arrow_patch.get_edgecolor()) == to_hex(plots._colour(k))]
        assert len(mine) == len(route) - 1
        for arrow, a, b in zip(mine, route[:-1], route[1:], strict=True):
            start, end = np.array(arrow.xyann), np.array(arrow.xy)
            assert np.hypot(*(start - centre[s.resources[a]])) < radius, (name, k, a)
            assert np.hypot(*(end - centre[s.resources[b]])) < radius, (name, k, b)


def test_a_resource_disc_wears_its_router_colour(captured):
    """Router names floated beside the circle and every disc was grey: which resource
    belonged to which router was not readable. Each router's label and discs now share
    a fill, distinct between routers (nfv_chain: edge = cpu1, link1; core = cpu2, link2)."""
    s = load_scenario("nfv_chain")
    plot_network.network_drawing(list(s.resources), [(n, list(m)) for n, m in s.routers],
                                 [list(r) for r in s.routes], s.class_names, "x", s.name)
    ax = captured[0].axes[0]
    box = {t.get_text(): to_hex(t.get_bbox_patch().get_facecolor()) for t in ax.texts
           if t.get_bbox_patch() is not None}
    labels = {t.get_text(): np.array(t.get_position()) for t in ax.texts
              if t.get_text() in s.resources}
    discs = [line for line in ax.get_lines()
             if line.get_marker() == "o" and line.get_markersize() == plot_network.NODE_SIZE]
    for name, members in s.routers:
        for j in members:
            disc = min(discs, key=lambda d, p=labels[s.resources[j]]:
                       np.hypot(*(np.array(d.get_xydata()[0]) - p)))
            assert to_hex(disc.get_markerfacecolor()) == box[name], (name, s.resources[j])
    assert len({box[name] for name, _ in s.routers}) == len(s.routers)


def test_cluster_points_go_beside_the_packet_points_or_on_a_panel_of_their_own(captured):
    classes = ["1", "2"]
    fluid = _gamma(["drf", "pf", "bmf"], classes)
    cluster = _gamma(["drf", "fifo"], classes)
    failed = pd.DataFrame({"policy": ["drf"], "load": [0.6], "class": ["2"],
                           "kind": [policies.CLUSTER]})
    plots.packet_vs_fluid(fluid, _gamma(["drfq", "bmf"], classes), "x", failed=failed,
                          cluster=cluster)
    fig = captured[0]
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == ["DRFQ; cluster DRF", "BMF", "cluster FIFO"]
    drfq = fig.axes[0]
    diamonds = [line for line in drfq.get_lines() if line.get_marker() == "D"]
    crosses = [line for line in drfq.get_lines() if line.get_marker() == "x"]
    assert len(diamonds) == len(crosses) == 2  # one per class
    # side by side at each load: cluster 0.01 to the right, packet 0.01 to the left
    np.testing.assert_allclose(np.asarray(diamonds[0].get_xdata(), float), [0.31, 0.61, 0.91])
    np.testing.assert_allclose(np.asarray(crosses[0].get_xdata(), float), [0.29, 0.59, 0.89])
    rings = [line for line in drfq.get_lines() if line.get_color() == "red"
             and len(line.get_xdata())]
    assert [list(np.asarray(r.get_xdata(), float)) for r in rings] == [[0.61]]  # cluster
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "cluster (95% CI)" in labels and "packet (95% CI)" in labels


def test_a_results_directory_with_only_cluster_points_gets_its_figure(tmp_path):
    """What ``mrfq cluster`` leaves (fluid DRF and cluster points, no packet points, no
    pair of fluid policies to compare): ``mrfq plot`` drew nothing and said nothing."""
    raw = {"name": "c", "resources": ["cpu", "link"],
           "classes": [{"name": "1", "requirements": [0.1, 1.0], "load_share": 4},
                       {"name": "2", "requirements": [1.0, 0.1], "load_share": 1}],
           "load": {"values": [0.3]}, "fluid": {"policies": ["drf"]},
           "cluster": {"policies": ["drf"], "jobs": 400, "mean_tasks": 20,
                       "tasks_per_resource": 5}}
    results = tmp_path / "r"
    run_sweep(scenario_from_dict(raw), results, jobs=1,
              kinds=(policies.FLUID, policies.CLUSTER))
    written = plot(results, formats=["png"])
    # (and, since 2026-11-28, the fluid figure: a policy in no pair gets a panel of its own)
    assert [p.name for p in written] == ["c.png", "c_fluid.png"]
    assert written[0].stat().st_size > 1000

    fluid_only = {**raw, "name": "f"}
    del fluid_only["cluster"]
    run_sweep(scenario_from_dict(fluid_only), tmp_path / "f", jobs=1,
              kinds=(policies.FLUID,))
    # fluid points alone: their figure (it said "nothing to draw" while a pair was needed)
    assert [p.name for p in plot(tmp_path / "f", formats=["png"])] == ["f.png"]


def test_routers_beyond_the_palette_get_fills_of_their_own(captured):
    """With 9 routers the palette of 8 wrapped: router 8 wore router 0's fill, beside it
    where the circle closes."""
    res = [f"{k}{i}" for i in range(9) for k in ("cpu", "link")]
    routers = [(f"r{i}", [2 * i, 2 * i + 1]) for i in range(9)]
    plot_network.network_drawing(res, routers, [[2 * i, 2 * i + 1] for i in range(9)],
                                 [f"c{i}" for i in range(9)], "x")
    ax = captured[0].axes[0]
    fills = {to_hex(t.get_bbox_patch().get_facecolor()) for t in ax.texts
             if t.get_bbox_patch() is not None}
    assert len(fills) == 9


@pytest.mark.parametrize("routers", [8, 12, 24, 30])
def test_names_and_discs_of_a_large_network_keep_apart(captured, routers):
    """A line of 24 routers (48 resources) drew its names on top of one another, and of
    30 its discs overlapping too; beyond 16 resources the names now run
    along the radius, the figure grows and the discs shrink to fit. Read back from the
    rendered figure: no two names and no two discs overlap, and every arrow still joins
    the discs of its hop."""
    res = [f"{k}{i}" for i in range(routers) for k in ("cpu", "link")]
    members = [(f"r{i}", [2 * i, 2 * i + 1]) for i in range(routers)]
    routes = [list(range(2 * routers))] + [[2 * i, 2 * i + 1] for i in range(routers)]
    plot_network.network_drawing(res, members, routes,
                                 ["long"] + [str(i) for i in range(routers)], "x")
    fig = captured[0]
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # the layout, as saving does
    ax = fig.axes[0]
    boxes = [_text_corners(t, renderer) for t in ax.texts if t.get_text() in res]
    assert len(boxes) == len(res)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not _rectangles_overlap(a, b), (routers, a, b)
    discs = [line for line in ax.get_lines() if line.get_marker() == "o"]
    centres = ax.transData.transform(np.array([d.get_xydata()[0] for d in discs]))
    diameter = discs[0].get_markersize() * fig.dpi / 72  # pixels
    gaps = np.hypot(*(centres[:, None, :] - centres[None, :, :]).transpose(2, 0, 1))
    assert gaps[~np.eye(len(discs), dtype=bool)].min() > diameter
    # the long route's arrows: from inside one disc to the rim of the next, in order
    radius = diameter / 2 * 1.1
    position = dict(zip(range(len(res)), centres, strict=True))
    arrows = [a for a in ax.texts if isinstance(a, Annotation) and a.arrow_patch
              and to_hex(a.arrow_patch.get_edgecolor()) == to_hex(plots._colour(0))]
    # (drawn class by class: the long class's come first; beyond 20 classes colours repeat)
    assert len(arrows) >= len(routes[0]) - 1
    for arrow, a, b in zip(arrows, routes[0][:-1], routes[0][1:], strict=False):
        start, end = ax.transData.transform([arrow.xyann, arrow.xy])
        assert np.hypot(*(start - position[a])) < radius
        assert np.hypot(*(end - position[b])) < radius


def _text_corners(text, renderer) -> np.ndarray:
    """The four corners (pixels) of a text's own box, turned with it: the extent of the
    text unrotated, about its anchor (rotation_mode "anchor")."""
    angle = text.get_rotation()
    text.set_rotation(0)
    box = text.get_window_extent(renderer)
    text.set_rotation(angle)
    anchor = text.get_transform().transform(text.get_position())
    corners = np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1],
                        [box.x0, box.y1]]) - anchor
    turn = np.radians(angle)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    return corners @ rotation.T + anchor


def _rectangles_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating axes: two convex quadrilaterals overlap unless one of their edges'
    normals separates their projections."""
    for quad in (a, b):
        for i in range(4):
            edge = quad[(i + 1) % 4] - quad[i]
            normal = np.array([-edge[1], edge[0]])
            pa, pb = a @ normal, b @ normal
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


def test_an_output_name_with_an_inner_dot_keeps_every_figure(tmp_path):
    """``mrfq plot DIR -o a.v2.png``: the stem's ``.v2`` was taken for a suffix and
    replaced, so the main figure and ``_fluid`` were both written to ``a.png``."""
    from matplotlib.figure import Figure

    from mrfq.io import figure_stem

    assert figure_stem("out/a.v2.png") == figure_stem("out/a.v2") == Path("out/a.v2")
    assert figure_stem("results/fig3.PDF") == Path("results/fig3")
    written = plots._save(Figure(), tmp_path / "a.v2", ["png", "pdf"])
    written += plots._save(Figure(), tmp_path / "a.v2_fluid", ["png"])
    written += plots._save(Figure(), tmp_path / "b.svg")
    assert [p.name for p in written] == ["a.v2.png", "a.v2.pdf", "a.v2_fluid.png", "b.svg"]
    assert all(p.is_file() for p in written)


def _nearest_colours(fig, ax, y: float, colours: list[str]) -> np.ndarray:
    """How many of the coloured pixels within two pixels of the panel's horizontal line at
    data height ``y`` are nearest to each of ``colours`` (antialiased, partly transparent
    lines: near a colour, not at it; the grey grid and white background left out)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba())[..., :3] / 255.0
    (x0, row), (x1, _) = ax.transData.transform([(ax.get_xlim()[0], y),
                                                 (ax.get_xlim()[1], y)])
    top = image.shape[0] - int(round(row))
    band = image[top - 2:top + 3, int(x0) + 5:int(x1) - 5].reshape(-1, 3)
    band = band[band.max(axis=1) - band.min(axis=1) > 0.15]
    targets = np.array([to_rgb(c) for c in colours])
    nearest = np.linalg.norm(band[:, None, :] - targets[None], axis=2).argmin(axis=1)
    return np.bincount(nearest, minlength=len(colours))


@pytest.mark.parametrize("flows", [2, 3])
def test_equal_fair_shares_show_every_flows_colour(captured, flows):
    """Flows with the same fair share throughout (DRF often gives one share to several)
    drew their dashed lines on top of each other, so only the last flow's colour showed;
    their dashes now take turns along the one line (``fair_share_dashes``)."""
    names = "ABC"[:flows]
    rows = pd.DataFrame([{"policy": "drfq", "flow": f, "resource": "dominant",
                          "time": 10.0 * t, "share": 0.9, "fair_share": 0.25}
                         for f in names for t in range(8)])
    plot_flows.dominant_share_over_time(rows, "x")
    fig = captured[0]
    counts = _nearest_colours(fig, fig.axes[0], 0.25, [plots._colour(i) for i in range(flows)])
    assert counts.min() >= 0.5 * counts.max() > 0, counts


def test_fair_share_dashes_group_only_equal_series():
    """Two flows share a line only where their fair shares are equal in every interval
    (to 12 digits), absences (NaN) included; a flow alone gets a plain dash."""
    nan = np.nan
    styles = plot_flows.fair_share_dashes({"A": np.array([0.5, 0.5]),
                                           "B": np.array([0.5, 0.5]),
                                           "C": np.array([nan, 0.5]),
                                           "D": np.array([nan, 0.5]),
                                           "E": np.array([0.5, 0.4]),
                                           "F": np.array([0.606060606060606, 0.1]),
                                           "G": np.array([0.6060606060606061, 0.1])})
    d = plot_flows.DASH
    assert styles["A"] == (0.0, (d, 3 * d)) and styles["B"] == (2 * d, (d, 3 * d))
    assert styles["C"] == (0.0, (d, 3 * d)) and styles["D"] == (2 * d, (d, 3 * d))
    assert styles["E"] == (0.0, (d, d))
    # one bit apart (PF's fair shares of two flows in the packaged backlogged mix)
    assert styles["F"] == (0.0, (d, 3 * d)) and styles["G"] == (2 * d, (d, 3 * d))


def _delays(policy_names, missing=()):
    """A delays table: every interval known but those of the (policy, load) in
    ``missing``, whose p99 interval is NaN (flagged, or an old record)."""
    rows = []
    for p in policy_names:
        for load in (0.3, 0.6, 0.9):
            gone = (p, load) in missing
            rows.append({"policy": p, "load": load, "class": "1", "p99_sojourn": 100 * load,
                         "p99_sojourn_low": np.nan if gone else 90 * load,
                         "p99_sojourn_high": np.nan if gone else 110 * load,
                         "mean_packet_sojourn": 30 * load, "packet_sojourn_low": 28 * load,
                         "packet_sojourn_high": 32 * load})
    return pd.DataFrame(rows)


def _legend_styles(fig) -> dict[str, tuple[str, str]]:
    return {h.get_label(): (to_hex(h.get_color()), h.get_marker())
            for h in fig.legends[0].legend_handles}


def test_a_policy_keeps_its_colour_and_marker_in_every_delays_figure(captured):
    """A policy's colour was its position in the scenario's list (DRFQ blue, PF red in
    one figure, PF orange in another; from the seventh on, black): it is now the
    policy's own (registry order), whatever the list."""
    plots.packet_delays(_delays(["drfq", "pf", "bmf"]), "x")
    plots.packet_delays(_delays(["bmf", "pf"]), "x")
    plots.packet_delays(_delays(list(policies.names(policies.PACKET))), "x")
    first, second, every = (_legend_styles(f) for f in captured)
    assert second["PF"] == first["PF"] == every["PF"]
    assert second["BMF"] == first["BMF"] == every["BMF"]
    assert len(set(every.values())) == len(every) == 7  # seven distinct, none black
    assert "#000000" not in {colour for colour, _ in every.values()}


def test_a_point_without_an_interval_is_drawn_hollow(captured):
    """A p99 without an interval looked exactly like one with a tight interval (a bar of
    length 0): its marker is now hollow, and the legend says what hollow means."""
    plots.packet_delays(_delays(["pf"], missing={("pf", 0.9)}), "x")
    fig = captured[0]
    marked = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "None"]
    hollow = [line for line in marked if line.get_fillstyle() == "none" and
              len(line.get_xdata())]
    assert [list(line.get_xdata()) for line in hollow] == [[0.9]]
    caps = [x for line in fig.axes[0].get_lines() if line.get_marker() == "_"
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
            if np.isfinite(y) and y > 50]  # (the p99's: the means are below 30)
    assert 0.9 not in caps and 0.6 in caps  # no cap drawn through the hollow marker
    assert "hollow: no interval (see the CSV)" in _legend_styles(fig)
    captured.clear()
    plots.packet_delays(_delays(["pf"]), "x")  # every interval known: no such entry
    assert "hollow: no interval (see the CSV)" not in _legend_styles(captured[0])


def test_a_sweeps_fluid_figure_says_it_shows_the_fluid_model_alone(captured):
    """Beside the packet figures the fluid figure took the scenario's description as its
    title ("... packet simulation against fluid"), which it does not show."""
    plot(Path(__file__).parents[1] / "reproduction" / "fig3_precise", "x.png")
    titles = [fig._suptitle.get_text().replace("\n", " ") for fig in captured]
    assert titles[-1].startswith("The fluid model alone; the scenario: BR Figure 3")
    assert not titles[0].startswith("The fluid model alone")


def test_the_fluid_figure_of_a_scenario_without_a_description(captured, tmp_path):
    """Its title is "The fluid model alone", not one ending in "the scenario: "."""
    from mrfq.sweeps import run_sweep as sweep

    raw = load_scenario("quickstart").to_dict()
    raw["description"] = ""
    raw["load"]["values"] = [0.5]
    raw["packet"].update(flows=200, replications=2)
    raw.pop("cluster", None)
    sweep(scenario_from_dict(raw), tmp_path / "r", jobs=1)
    plot(tmp_path / "r", "x.png")
    assert captured[-1]._suptitle.get_text() == "The fluid model alone"


def test_schedulers_that_choose_alike_all_show_in_the_cluster_figures(captured):
    """On the packaged trace three schedulers give the same utilisation and completion
    times: the last drawn hid the other two (a review, 2026-11-29). Equal lines now take
    turns (interleaved dashes); the legend keeps solid entries."""
    from mrfq import plot_cluster

    time = np.arange(4.0)
    rows = [{"policy": p, "time": t, "utilisation_cpu": u, "utilisation_memory": u / 2}
            for p, values in (("drfh-first-fit", [0.2, 0.4, 0.6, 0.5]),
                              ("drf-online", [0.2, 0.4, 0.6, 0.5]),
                              ("slots", [0.1, 0.2, 0.3, 0.3]))
            for t, u in zip(time, values, strict=True)]
    rows[4]["utilisation_memory"] = 0.3  # drf-online's memory differs from first-fit's
    plot_cluster.utilisation_over_time(pd.DataFrame(rows), "x")
    lines = captured[0].axes[0].get_lines()  # cpu: first-fit and drf-online equal
    first, second, third = (line.get_linestyle() for line in lines)
    assert first == second == "--" and third == "-"  # (matplotlib names any dash "--")
    offsets = [line._unscaled_dash_pattern[0] for line in lines[:2]]
    assert offsets[0] != offsets[1]
    assert [line.get_linestyle() for line in captured[0].axes[1].get_lines()] == ["-"] * 3
    assert all(h.get_linestyle() == "-" for h in captured[0].legends[0].legend_handles)
    jobs = pd.DataFrame({"policy": ["drfh-first-fit", "drf-online", "slots"] * 2,
                         "jct": [5.0, 5.0, 7.0, 9.0, 9.0, 8.0]})
    jct = pd.DataFrame({"policy": ["drfh-first-fit", "drf-online", "slots"],
                        "tasks": "1", "jobs": 2, "jct_mean": [7.0, 7.0, 7.5]})
    plot_cluster.completion_times(jobs, jct, "x")
    lines = captured[1].axes[0].get_lines()
    assert [line.get_linestyle() for line in lines] == ["--", "--", "-"]
    assert lines[0]._unscaled_dash_pattern[0] != lines[1]._unscaled_dash_pattern[0]


def test_a_cdf_of_one_job_rises_from_zero(captured):
    """One job (or all jobs of one completion time): the step from 0 to 1 was never
    drawn, and panel (a) stayed empty."""
    from mrfq import plot_cluster

    jobs = pd.DataFrame({"policy": ["slots"], "jct": [60.0]})
    jct = pd.DataFrame({"policy": ["slots"], "tasks": ["1"], "jobs": [1],
                        "jct_mean": [60.0]})
    plot_cluster.completion_times(jobs, jct, "x")
    line = captured[0].axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [60.0, 60.0] and list(line.get_ydata()) == [0.0, 1.0]
    # a time of 0 s on the log axis: at half the smallest positive one
    jobs = pd.DataFrame({"policy": ["slots"] * 2, "jct": [0.0, 4.0]})
    plot_cluster.completion_times(jobs, jct, "x")
    assert list(captured[1].axes[0].get_lines()[0].get_xdata()) == [2.0, 2.0, 4.0]
