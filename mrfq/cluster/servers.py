"""Server configurations: DRFH's Table I (the configurations of one of Google's clusters,
CPU and memory normalised to the largest server; ``google_table1.csv``, shipped with the
package) and clusters drawn from it, as DRFH §VI does ("server configurations randomly
drawn from the distribution of Google cluster servers in Table I")."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

TABLE_I_FILE = Path(__file__).resolve().parent / "google_table1.csv"


def table_i() -> tuple[np.ndarray, np.ndarray]:
    """(number of servers per configuration, configurations K×2 as (CPU, memory))."""
    with TABLE_I_FILE.open() as f:
        rows = list(csv.DictReader(f))
    counts = np.array([int(r["servers"]) for r in rows])
    configs = np.array([[float(r["cpu"]), float(r["memory"])] for r in rows])
    return counts, configs


def draw_servers(n: int, seed: int) -> np.ndarray:
    """``n`` servers (n×2 capacities) drawn independently from Table I's distribution."""
    counts, configs = table_i()
    rng = np.random.default_rng(seed)
    return configs[rng.choice(counts.size, size=n, p=counts / counts.sum())]
