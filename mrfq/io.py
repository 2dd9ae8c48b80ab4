"""Atomic file output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path; on success it replaces ``path``, on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame as CSV atomically (no partial file is ever left at ``path``)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
