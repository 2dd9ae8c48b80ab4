"""Server configurations: DRFH's Table I (the configurations of one of Google's clusters,
CPU and memory normalised to the largest server; ``mrfq/cluster/google_table1.csv``,
shipped with the package), a user's table in the same format, and clusters drawn from
one, as DRFH §VI does ("server configurations randomly drawn from the distribution of
Google cluster servers in Table I"). In the scenario layer because ``[cluster] servers =
{table, count, seed}`` draws its servers when the scenario is read;
:mod:`mrfq.cluster.servers` re-exports it.

A table file is CSV: a header ``servers,<resource>,...`` (``servers,cpu,memory`` for
Table I), then one row per configuration: how many servers have it (an integer ≥ 1, the
weight of the configuration in a draw) and its capacity of each resource (numbers in
[MIN_CAPACITY, MAX_CAPACITY], as a listed server's: :mod:`mrfq.scenario.limits`).
"""

from __future__ import annotations

import csv
import math
import numbers
from pathlib import Path

import numpy as np

from mrfq.errors import InputError
from mrfq.scenario.limits import MAX_CAPACITY, MAX_SERVERS, MIN_CAPACITY, SERVERS_WHY

TABLE_I_FILE = Path(__file__).resolve().parent.parent / "cluster" / "google_table1.csv"
#: the tables a scenario names without a path (``[cluster] servers = {table = "google"}``)
TABLES = {"google": TABLE_I_FILE}


def read_table(path: str | Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(servers per configuration K, configurations K×R, the R resource names of the
    header) of a table file (module doc). One InputError ``<file>: row <n>, <column>:
    <problem>`` on a malformed row (n counts the file's lines, the header is row 1):
    wrong number of columns, a count not an integer ≥ 1, a capacity not a number in
    [MIN_CAPACITY, MAX_CAPACITY]."""
    source = str(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [(n, row) for n, row in enumerate(csv.reader(f), start=1) if row]
    except FileNotFoundError:
        raise InputError("no such server table file", None, source) from None
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text", None, source) from None
    if not rows:
        raise InputError("is empty (a header servers,<resource>,... and rows)", None,
                         source)
    header = [name.strip() for name in rows[0][1]]
    if len(header) < 2 or header[0] != "servers" or not all(header[1:]) or len(
            set(header)) != len(header):
        raise InputError(f"the header must be servers,<resource>,... (distinct names), "
                         f"got {','.join(header)!r}", "row 1", source)
    if len(rows) == 1:
        raise InputError("has no server row", None, source)
    counts, configs = [], []
    for n, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(f"has {len(row)} columns, the header {len(header)}",
                             f"row {n}", source)
        text = row[0].strip()
        if not text.lstrip("-").isdigit():
            raise InputError(f"must be an integer >= 1, got {text!r}", f"row {n}, servers",
                             source)
        if int(text) < 1:
            raise InputError(f"must be >= 1, got {int(text)}", f"row {n}, servers", source)
        counts.append(int(text))
        config = []
        for name, cell in zip(header[1:], row[1:], strict=True):
            try:
                value = float(cell)
            except ValueError:
                raise InputError(f"must be a number, got {cell.strip()!r}",
                                 f"row {n}, {name}", source) from None
            if not math.isfinite(value) or value <= 0:
                raise InputError(f"must be a positive capacity, got {cell.strip()}",
                                 f"row {n}, {name}", source)
            if not MIN_CAPACITY <= value <= MAX_CAPACITY:  # (as a listed server's)
                raise InputError(f"must be between {MIN_CAPACITY:g} and {MAX_CAPACITY:g} "
                                 "(capacities are relative: scale them), got "
                                 f"{cell.strip()}", f"row {n}, {name}", source)
            config.append(value)
        configs.append(config)
    return np.array(counts), np.array(configs), tuple(header[1:])


def table_i(path: str | Path = TABLE_I_FILE) -> tuple[np.ndarray, np.ndarray]:
    """(number of servers per configuration, configurations K×R) of a table file; by
    default Table I, K×2 as (CPU, memory)."""
    counts, configs, _ = read_table(path)
    return counts, configs


def _whole(value, name: str, low: int) -> int:
    """An integer ≥ ``low`` (an int, a NumPy integer or a whole float; numpy's own errors
    would not name the argument), else InputError naming ``name``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InputError(f"must be an integer >= {low}, got {value!r}", name)
    return int(value)


def _servers(value) -> int:
    """A number of servers to draw: 1 … MAX_SERVERS (the draw is an array of them)."""
    n = _whole(value, "n", 1)
    if n > MAX_SERVERS:
        raise InputError(f"must be <= {MAX_SERVERS:,} servers ({SERVERS_WHY}), got {n:,}",
                         "n")
    return n


def draw_servers(n: int, seed: int, table: str | Path = TABLE_I_FILE) -> np.ndarray:
    """``n`` servers (1 … MAX_SERVERS; n×R capacities) drawn independently from a
    table's distribution (configuration i with probability count_i / Σ counts; ``seed``
    ≥ 0).
    ``table``: a name of :data:`TABLES` ("google": DRFH's Table I, the default) or a
    table file's path. InputError naming the argument otherwise."""
    n, seed = _servers(n), _whole(seed, "seed", 0)
    if isinstance(table, str) and table in TABLES:
        table = TABLES[table]
    elif isinstance(table, str) and Path(table).name == table and not Path(
            table).suffix and not Path(table).exists():
        raise InputError(f"unknown table {table!r} (names: {', '.join(TABLES)}; or a CSV "
                         "file's path)", "table")
    counts, configs = table_i(table)
    rng = np.random.default_rng(seed)
    return configs[rng.choice(counts.size, size=n, p=counts / counts.sum())]
