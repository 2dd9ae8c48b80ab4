"""An unreachable Dask scheduler is one line before anything else (nineteenth session):
the sweep announced "12 points, 0 already done, 12 to compute" and drew its progress
line, then failed when the first point was sent. Red on the code before."""

import pytest

import mrfq
from mrfq import executor
from mrfq.errors import InputError


def test_an_unreachable_scheduler_is_refused_before_the_sweep_says_anything(
        tmp_path, monkeypatch):
    tried = []

    def unreachable(address):
        tried.append(address)
        raise InputError("cannot reach the Dask scheduler: timed out", "scheduler")

    monkeypatch.setattr(executor, "_connect", unreachable)
    said, progress = [], []
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        mrfq.sweep("quickstart", tmp_path / "r", scheduler="tcp://127.0.0.1:9",
                   log=said.append, progress=lambda done, total: progress.append(done))
    assert tried == ["tcp://127.0.0.1:9"]
    assert said == [] and progress == []
    assert not (tmp_path / "r" / "points").exists() or not any(
        (tmp_path / "r" / "points").iterdir())
