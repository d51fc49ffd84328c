"""The Jobs pane's answer, without the UI: one user's pending and running jobs as table lines, and
each line's whole explanation (:func:`~tui.analysis.jobs.explain_pending`'s).

Whose jobs: the user of the association selected in the tree, else the viewer (``standing.me``).
Under PrivateData=jobs the source holds the viewer's jobs only, and another user's view says so.
A source without a queue (a PBS capture without ``qstat -f``, the PBS demo, a capture without
squeue) gives one line saying what it lacks. No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone, tzinfo

import numpy as np

from tui.analysis.jobs.explain import PendingJob, _age, explain_pending, hidden_jobs, pending_summary
from tui.analysis.jobs.queue import Queue
from tui.analysis.jobs.reasons import IN_LINE
from tui.analysis.rank_path import ordinal
from tui.analysis.standing import Standing
from tui.model import Job, Snapshot

__all__ = ["COLUMNS", "JobsView", "jobs_lacks", "jobs_user", "jobs_view"]

COLUMNS = ("Job", "Partition", "State", "Reason", "Place", "Held back by", "Start estimate")
"""The table's header; the Reason column is Slurm's code, the words are in the detail."""


@dataclass(frozen=True)
class JobsView:
    """What the pane draws for one user."""

    user: str
    title: str
    """One line: whose jobs, how many, and the summary line's part."""
    header: str
    lines: list[str]
    """A line per job: pending first (Slurm's order, front first), then running."""
    details: list[str]
    """Each line's whole explanation (several lines of text)."""
    job_ids: list[str]


def jobs_lacks(snap: Snapshot) -> str | None:
    """Why this source shows no jobs at all (one line), or None when it has a queue."""
    caps = snap.capabilities
    if snap.tree is None and snap.pbs is not None and (caps is None or "jobs" not in caps):
        if snap.made_up:
            return "PBS demo: the demo cluster makes up no PBS queue, so there are no jobs to explain."
        return (f"{snap.source} holds no qstat -f output ('fairtop capture --pbs' saves it as qstat_f.json), "
                "so there are no jobs to explain.")
    if caps is not None and "jobs" not in caps:
        return (f"{snap.source} gives no queue (no squeue output, or a live squeue has not answered yet): "
                "no jobs to explain.")
    return None


def jobs_user(standing: Standing, row: int | None) -> str:
    """The user whose jobs the pane shows: the selected association's user, else the viewer."""
    tree = standing.snapshot.tree
    if tree is not None and row is not None and 0 < row < tree.size and bool(tree.is_user[row]):
        return str(tree.user[row])
    return standing.me


def _as_user(standing: Standing, user: str) -> Standing:
    if user == standing.me:
        return standing
    tree = standing.snapshot.tree
    rows = np.flatnonzero(tree.is_user & (tree.user == user)) if tree is not None else standing.my_rows[:0]
    return replace(standing, me=user, my_rows=rows)


def _place_cell(p: PendingJob) -> str:
    place = p.place
    if place is None:
        return "-"
    if place.ahead is None:
        return "unknown" if place.own_ahead is None else f"? ({place.own_ahead:,} yours ahead)"
    in_line = p.meaning is None or p.meaning.kind in IN_LINE
    text = "1st: first in line" if not place.ahead else \
        f"{ordinal(place.ahead + 1)}: {place.ahead:,} ahead, {place.own_ahead:,} yours"
    return text if in_line else f"after: {place.ahead:,} ahead"


def _estimate_cell(job: Job, p: PendingJob | None, read: datetime, now: datetime, zone: tzinfo | None) -> str:
    if p is not None and p.meaning is not None and p.meaning.kind == "begin":
        return "none (begin time)"
    at = job.start_time
    if at is None:
        return "none"
    age = _age(max((now - read).total_seconds(), 0.0))
    return f"{at.astimezone(zone):%m-%d %H:%M} ({age} old)"


def _line(widths: Sequence[int], cells: Sequence[str]) -> str:
    return " ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def _running_detail(job: Job, user: str, zone: tzinfo | None) -> str:
    started = f"started {job.start_time.astimezone(zone):%Y-%m-%d %H:%M:%S}" if job.start_time is not None else \
        "start time unknown"
    limit = f", time limit {job.time_limit_s // 3600}:{job.time_limit_s % 3600 // 60:02d}" if job.time_limit_s else ""
    tres = ", ".join(f"{k}={v:g}" for k, v in job.tres.items())
    return f"Job {job.job_id} ({job.partition}) of {user} runs: {started}{limit}" + (f"; {tres}" if tres else "") + "."


def jobs_view(standing: Standing, user: str, queue: Queue | None = None, now: datetime | None = None) -> JobsView:
    """``user``'s jobs in ``standing``'s snapshot: pending ones explained, then running ones.

    ``queue``: the snapshot's :class:`Queue` when the caller keeps it across users (built here
    otherwise, only if the user has a pending job); ``now``: for the estimates' age."""
    snap = standing.snapshot
    now = now or datetime.now(timezone.utc)
    own = [j for j in snap.jobs if j.user == user]
    explained = explain_pending(_as_user(standing, user), own, queue, now)
    running = [j for j in own if j.state == "RUNNING"]
    rows: list[list[str]] = []
    details: list[str] = []
    ids: list[str] = []
    for p in explained:
        j = p.job
        code = j.reason if j.reason is not None else "unknown"
        gap = p.held_back_by.words if p.held_back_by is not None else ""
        rows.append([j.job_id, j.partition, "pending", code, _place_cell(p), gap,
                     _estimate_cell(j, p, snap.taken_at, now, snap.zone)])
        details.append("\n".join(p.lines))
        ids.append(j.job_id)
    for j in running:
        started = f"running since {j.start_time.astimezone(snap.zone):%m-%d %H:%M}" if j.start_time is not None else ""
        rows.append([j.job_id, j.partition, "running", "", "", "", started])
        details.append(_running_detail(j, user, snap.zone))
        ids.append(j.job_id)
    widths = [max(len(c), *(len(r[k]) for r in rows)) if rows else len(c) for k, c in enumerate(COLUMNS)]
    who = f"{user} (demo user)" if snap.made_up else user or "no user"
    pending = pending_summary(explained) if explained else "no pending jobs"
    title = f"Jobs of {who}: {pending}; {len(running):,} running"
    if user != standing.me:
        hidden = hidden_jobs(snap, standing.me)
        if hidden and not own:
            title = f"Jobs of {who}: not in your view ({hidden})"
    return JobsView(user, title, _line(widths, COLUMNS), [_line(widths, r) for r in rows], details, ids)
