"""Server configurations: DRFH's Table I, a user's table in the same CSV format, and
clusters drawn from one (:mod:`mrfq.scenario.server_tables`, where a scenario's
``[cluster] servers = {table, count, seed}`` draws them; re-exported here, beside the
cluster it builds)."""

from __future__ import annotations

from mrfq.scenario.server_tables import (
    TABLE_I_FILE,
    TABLES,
    draw_servers,
    read_table,
    table_i,
)

__all__ = ["TABLES", "TABLE_I_FILE", "draw_servers", "read_table", "table_i"]
