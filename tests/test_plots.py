"""Figures a reader would put in a paper: one legend per figure, markers at the computed
points, failed validation points marked, the title and axis kept from a fluid table, the
formats asked for (and a one-line error for one matplotlib cannot write)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mrfq import plots
from mrfq.errors import InputError
from mrfq.pipeline import plot_fluid_frame


def _fluid(policies=("drf", "bmf", "pf")):
    rows = [{"policy": p, "load": load, "class": c, "gamma": 1 - load}
            for p in policies for load in (0.2, 0.5, 0.8) for c in ("1", "2")]
    return pd.DataFrame(rows)


def test_fluid_comparison_has_one_legend_and_markers_on_coinciding_curves(captured):
    plots.fluid_comparison(_fluid(), "x")
    fig = captured[0]
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"DRF", "BMF", "PF", "class 1", "class 2"} <= set(labels)
    # DRF and BMF coincide here: their lines differ in marker and width
    lines = fig.axes[0].get_lines()
    assert len({line.get_marker() for line in lines}) == 2
    assert len({line.get_linewidth() for line in lines}) == 2


@pytest.mark.parametrize("policies, titles", [
    (("drf", "pf", "bmf", "bf"), ["BMF v DRF", "BMF v PF", "BF"]),
    (("bf",), ["BF"]), (("pf",), ["PF"]), (("drf", "pf"), ["DRF", "PF"])])
def test_every_fluid_policy_of_a_table_is_drawn(captured, policies, titles):
    """BF (in no comparison pair) was dropped without a word, and a table of one policy,
    say ``mrfq fluid --policies bf``, could not be plotted at all."""
    plots.fluid_comparison(_fluid(policies), "x")
    axes = captured[0].axes
    assert [ax.get_title() for ax in axes] == titles
    assert all(len(ax.get_lines()) == 2 * len(title.split(" v ")) for ax, title in
               zip(axes, titles, strict=True))  # each policy: one line per class


def test_an_empty_fluid_csv_is_named_in_its_error(tmp_path):
    csv = tmp_path / "empty.csv"
    csv.write_text("policy,load,class,gamma\n")
    with pytest.raises(InputError, match="holds no fluid rows") as err:
        plot_fluid_frame(pd.read_csv(csv), tmp_path / "f", source=str(csv))
    assert err.value.source == str(csv)


def test_a_fluid_table_keeps_its_title_and_axis(captured):
    table = _fluid()
    table["description"] = "BR Figure 2"
    table["load_axis"] = "link"
    plot_fluid_frame(table, "x")
    fig = captured[0]
    assert fig.get_suptitle() == "BR Figure 2"
    assert fig.axes[0].get_xlabel() == "load of resource 'link'"


def test_the_fluid_verbs_csv_keeps_its_title_and_axis_when_plotted(tmp_path, captured):
    """The round trip a user makes: ``mrfq fluid`` writes the table, ``mrfq plot`` reads
    it back; the scenario's description and load axis travel in the CSV."""
    import subprocess
    import sys

    csv = tmp_path / "fig2.csv"
    done = subprocess.run([sys.executable, "-m", "mrfq.cli", "fluid", "fig2_unbalanced",
                           "--loads", "0.3,0.6", "--policies", "drf,bmf", "-o", str(csv)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    plot_fluid_frame(pd.read_csv(csv), tmp_path / "fig2.png")
    fig = captured[0]
    assert fig.get_suptitle().startswith("BR Figure 2"), fig.get_suptitle()
    assert fig.axes[0].get_xlabel() == "load of resource 'link'"


def test_long_titles_are_wrapped_in_a_constrained_layout(captured):
    """Titles must not collide with the panels or run off the figure: every figure has a
    constrained layout, and a long description is wrapped to the figure's width."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    long_title = "BR Figure 2: unbalanced load " + "and a long description " * 6
    fluid = _fluid(("bmf",))
    packet = fluid.assign(policy="bmf", ci_low=fluid["gamma"] - 0.05,
                          ci_high=fluid["gamma"] + 0.05)
    plots.fluid_comparison(_fluid(), "x", title=long_title)
    plots.packet_vs_fluid(fluid, packet, "x", title=long_title)
    for fig in captured:
        assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
        lines = fig.get_suptitle().splitlines()
        assert len(lines) > 1 and " ".join(lines) == long_title.strip()
        fig.draw_without_rendering()
        title = next(t for t in fig.texts if t.get_text() == fig.get_suptitle())
        box = title.get_window_extent()
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width  # within the figure, as drawn


def test_failed_points_are_ringed(captured):
    fluid = _fluid(("bmf",))
    packet = fluid.assign(policy="bmf", ci_low=fluid["gamma"] - 0.05,
                          ci_high=fluid["gamma"] + 0.05)
    failed = pd.DataFrame({"policy": ["bmf"], "load": [0.5], "class": ["2"]})
    plots.packet_vs_fluid(fluid, packet, "x", failed=failed)
    fig = captured[0]
    rings = [line for ax in fig.axes for line in ax.get_lines()
             if line.get_color() == "red" and len(line.get_xdata())]
    assert [list(r.get_xdata()) for r in rings] == [[0.5]]
    assert "fails validation" in [t.get_text() for t in fig.legends[0].get_texts()]
    captured.clear()
    plots.packet_vs_fluid(fluid, packet, "x")
    assert "fails validation" not in [t.get_text() for t in captured[0].legends[0].get_texts()]


def test_a_failure_with_a_known_limitation_is_ringed_apart(captured):
    """fig3_weighted.png ringed DRFQ's named departures (validation.csv's
    known_limitation) as it rings plain failures; they are orange, with their legend."""
    fluid = _fluid(("bmf",))
    packet = fluid.assign(policy="bmf", ci_low=fluid["gamma"] - 0.05,
                          ci_high=fluid["gamma"] + 0.05)
    failed = pd.DataFrame({"policy": ["bmf", "bmf"], "load": [0.5, 0.5], "class": ["1", "2"],
                           "known_limitation": [np.nan, "DRFQ itself"]})
    plots.packet_vs_fluid(fluid, packet, "x", failed=failed)
    fig = captured[0]
    rings = {colour: [line.get_ydata()[0] for ax in fig.axes for line in ax.get_lines()
                      if line.get_color() == colour and len(line.get_xdata())]
             for colour in ("red", "darkorange")}
    gamma = packet.set_index(["class", "load"])["gamma"]
    assert rings == {"red": [gamma["1", 0.5]], "darkorange": [gamma["2", 0.5]]}
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "fails validation" in labels and "fails: a known limitation" in labels


def test_formats(tmp_path):
    written = plots.fluid_comparison(_fluid(), tmp_path / "f", formats="svg,png")
    assert [p.name for p in written] == ["f.svg", "f.png"]
    assert all(p.stat().st_size > 0 for p in written)
    assert [p.name for p in plots.fluid_comparison(_fluid(), tmp_path / "g.pdf")] == ["g.pdf"]
    with pytest.raises(InputError, match="unknown figure format 'gif'"):
        plots.fluid_comparison(_fluid(), tmp_path / "h", formats=["gif"])
