"""Cluster metrics as tables (issue 24; DRFH §VI): job completion time overall and by the
number of tasks of the job (DRFH Fig. 6), the task completion ratio per user (DRFH
Fig. 7), and a run's timeline (:class:`~mrfq.cluster.timeline.Timeline`) as utilisation
per resource and shares per class over time (DRFH Figs. 4–5). Plain functions of a run's
arrays; times in the run's unit (seconds for a trace)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mrfq.cluster.timeline import Timeline

#: job sizes (tasks) of the completion-time breakdown: DRFH Fig. 6b has five categories
#: by the number of tasks and does not give their bounds; these are decades
TASK_CATEGORIES = ((1, 1), (2, 10), (11, 100), (101, 1000), (1001, None))
PERCENTILES = (50, 90, 95, 99)


def _jct_row(jct: np.ndarray) -> dict:
    if jct.size == 0:
        return {"jobs": 0, "jct_mean": np.nan,
                **{f"jct_p{p}": np.nan for p in PERCENTILES}}
    return {"jobs": int(jct.size), "jct_mean": float(jct.mean()),
            **{f"jct_p{p}": float(np.percentile(jct, p)) for p in PERCENTILES}}


def jct_by_tasks(jct: ArrayLike, job_tasks: ArrayLike,
                 categories: Sequence = TASK_CATEGORIES) -> pd.DataFrame:
    """Job completion time JCT = finish − arrival: one row for every job (``tasks`` =
    "all") and one per category of job size (``tasks`` = "2-10", "1001+", …) with the
    jobs, the mean and the percentiles :data:`PERCENTILES` (linear interpolation, numpy's
    default); an empty category has NaN statistics."""
    jct = np.asarray(jct, float)
    job_tasks = np.asarray(job_tasks)
    rows = [{"tasks": "all", "tasks_min": int(job_tasks.min(initial=1)),
             "tasks_max": int(job_tasks.max(initial=1)), **_jct_row(jct)}]
    for low, high in categories:
        inside = (job_tasks >= low) & (job_tasks <= (np.inf if high is None else high))
        name = f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")
        rows.append({"tasks": name, "tasks_min": low, "tasks_max": high,
                     **_jct_row(jct[inside])})
    frame = pd.DataFrame(rows)
    frame["tasks_max"] = frame["tasks_max"].astype("Int64")  # the last size has no bound
    return frame


def completion_ratio(user: ArrayLike, arrival: ArrayLike, job_tasks: ArrayLike,
                     done_by_end: ArrayLike, horizon: float) -> pd.DataFrame:
    """DRFH's task completion ratio (§VI: "the number of tasks completed over the number
    of tasks submitted") per user at ``horizon``: the jobs arriving by then submit all
    their tasks; ``done_by_end[j]``: job j's tasks completed by then (the kernel's window
    end). One row per user (first-arrival order): ``jobs``, ``tasks_submitted``,
    ``tasks_completed``, ``ratio``."""
    user = np.asarray(user)
    arrival = np.asarray(arrival, float)
    job_tasks = np.asarray(job_tasks, np.int64)
    done_by_end = np.asarray(done_by_end, np.int64)
    seen = arrival <= horizon
    rows = []
    for name in dict.fromkeys(user[seen].tolist()):
        mine = seen & (user == name)
        submitted, completed = int(job_tasks[mine].sum()), int(done_by_end[mine].sum())
        rows.append({"user": name, "jobs": int(mine.sum()), "tasks_submitted": submitted,
                     "tasks_completed": completed, "ratio": completed / submitted})
    return pd.DataFrame(rows, columns=["user", "jobs", "tasks_submitted",
                                       "tasks_completed", "ratio"])


def utilisation_frame(timeline: Timeline, resources: Sequence[str]) -> pd.DataFrame:
    """One row per bin: ``time`` (its start), ``dt`` (its length) and
    ``utilisation_<resource>`` (time average over the bin)."""
    frame = pd.DataFrame({"time": timeline.start, "dt": timeline.width})
    for r, name in enumerate(resources):
        frame[f"utilisation_{name}"] = timeline.utilisation[:, r]
    return frame


def shares_frame(timeline: Timeline, resources: Sequence[str],
                 classes: Sequence[str]) -> pd.DataFrame:
    """One row per (bin, class) in which the class runs tasks (absent rows are zero):
    ``time``, ``class``, ``tasks`` (time-average running), ``share_<resource>`` (of the
    pool) and ``dominant_share`` (the largest share; DRFH's global dominant share)."""
    tasks = timeline.tasks
    b, k = np.nonzero(tasks > 0)
    shares = timeline.shares
    frame = pd.DataFrame({"time": timeline.start[b], "class": np.asarray(classes)[k],
                          "tasks": tasks[b, k]})
    for r, name in enumerate(resources):
        frame[f"share_{name}"] = shares[b, k, r]
    frame["dominant_share"] = timeline.dominant[b, k]
    return frame
