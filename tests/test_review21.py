"""Fixes of the twenty-first session (2026-11-28): each test failed on the code before."""

import numpy as np
import pandas as pd


def test_a_single_interval_timeline_is_drawn_to_the_end_of_its_interval(monkeypatch):
    """One interval of width 500: the step lines ended at 1.0 (the width of one interval
    could not be read from the starts); it is each resource row's service / share."""
    from mrfq import plots

    rows = pd.DataFrame({"policy": "drfq", "flow": np.repeat(["A", "B"], 3),
                         "resource": ["cpu", "link", "dominant"] * 2, "time": 0.0,
                         "service": [100.0, 250.0, np.nan, 300.0, 200.0, np.nan],
                         "share": [0.2, 0.5, 0.5, 0.6, 0.4, 0.6]})
    drawn = {}
    monkeypatch.setattr(plots, "_save", lambda fig, path, formats: drawn.setdefault("f", fig))
    plots.dominant_share_over_time(rows, "unused")
    lines = [line for ax in drawn["f"].axes for line in ax.get_lines()]
    assert lines and all(max(line.get_xdata()) == 500.0 for line in lines)
