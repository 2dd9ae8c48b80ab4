"""What the console says after a table of results, so that no number is read at face
value when it should not be: unreliable intervals (heavy tails) and precision targets a
point did not reach. Shared by the command line and the Python API's pipeline."""

from __future__ import annotations

import pandas as pd


def interval_warnings(table: pd.DataFrame) -> list[str]:
    """One line per distinct ``ci_warning`` of a table that has one (the summary,
    ``mrfq fluid``'s or ``simulate``'s table, validation): ``warning: <n> points (classes
    …; loads …): <the warning>`` — what the console prints after the table, so that an
    unreliable interval (heavy tails, :func:`mrfq.sizes.interval_warning`) is never read
    at face value; first, the :func:`precision_warnings`. Empty when no row has one."""
    lines = precision_warnings(table) + missing_intervals(table)
    if "ci_warning" not in table:
        return lines
    texts = table["ci_warning"].fillna("").astype(str)
    for text in dict.fromkeys(t for t in texts if t):
        lines.append(f"warning: {_points(table[texts == text])}: {text}")
    return lines


def _points(rows: pd.DataFrame) -> str:
    """``<n> points (class a, b; load 0.3, 0.9)``: which rows a warning line is about."""
    classes = ", ".join(dict.fromkeys(rows["class"].astype(str)))
    loads = ", ".join(f"{v:.12g}" for v in sorted(set(rows["load"])))
    return f"{count(len(rows), 'point')} (class {classes}; load {loads})"


def count(n: int, noun: str) -> str:
    """``1 point``, ``2 points``: a number and its noun, in the singular for one."""
    return f"{n} {noun}{'s' * (n != 1)}"


def missing_intervals(table: pd.DataFrame) -> list[str]:
    """One line per distinct reason (``ci_problem``) why simulated rows of a table have no
    95% interval of γ (NaN bounds: e.g. a class with fewer measured flows than batches),
    so that a NaN interval is never printed without its reason."""
    if "ci_problem" not in table or "ci_low" not in table:
        return []
    problems = table["ci_problem"].astype(object).fillna("").astype(str)
    missing = table["ci_low"].isna() & (problems != "")
    lines = []
    for text in dict.fromkeys(problems[missing]):
        rows = table[missing & (problems == text)]
        lines.append(f"warning: {_points(rows)} {'has' if len(rows) == 1 else 'have'} no "
                     f"95% interval: {text}")
    return lines


def precision_warnings(table: pd.DataFrame) -> list[str]:
    """Lines for the packet points of a table (a summary, ``simulate``'s classes) that
    did not reach their target precision (column ``precision_reached`` False): those whose
    interval is withheld (a ``ci_problem``: the stopping rule ends there, and more
    replications of the same length would not help), then those that spent their
    replication budget: how many, where, and the widest half-width reached."""
    if "precision_reached" not in table:
        return []
    missed = table[table["precision_reached"].astype(str) == "False"]  # (NaN: no target)
    problem = (missed["ci_problem"].fillna("").astype(str) if "ci_problem" in missed
               else pd.Series("", index=missed.index))
    point = list(zip(missed["policy"], missed["load"], strict=True))
    withheld = {p for p, text in zip(point, problem, strict=True) if text}  # (any class)
    in_withheld = pd.Series([p in withheld for p in point], index=missed.index, dtype=bool)
    problem = problem[problem != ""]
    lines = []
    for rows, flagged in ((missed[in_withheld], True), (missed[~in_withheld], False)):
        if rows.empty:
            continue
        points = rows.drop_duplicates(["policy", "load"])
        where = ", ".join(f"{p} {v:g}" for p, v in zip(points["policy"], points["load"],
                                                       strict=True))
        target = f"±{rows['target_precision'].iloc[0]:.12g}"
        these = f"{count(len(points), 'packet point')} ({where})"
        if flagged:
            lines.append(f"warning: {these} stopped short of "
                         f"the target precision {target}: their interval is withheld "
                         f"({problem.iloc[0]}); more replications of the same "
                         "length would not help: longer ones ([packet] flows)")
        else:
            lines.append(f"warning: {these} did not reach the "
                         f"target precision {target} within their replication budget "
                         f"(widest ±{rows['achieved_precision'].max():.3g} of gamma, in "
                         "the intervals reported): raise max_replications "
                         "(--max-replications)")
    return lines
