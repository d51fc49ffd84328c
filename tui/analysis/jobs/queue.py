"""Each pending job's place in its partition's queue, for 100,000 pending jobs at once.

Slurm's main scheduler orders its queue (``sort_job_queue2`` in ``src/slurmctld/job_scheduler.c``)
by reservation, partition PriorityTier, then priority (descending), submit time, job id (an array
task by its array's id, then its task id). Within one partition the tier is the same, so the order
here is priority, submit time, job id, task id. A job is "ahead" of another when it comes first in
that order *and* waits its turn for resources (Priority, Resources, no reason yet:
:data:`~tui.analysis.jobs.reasons.IN_LINE`); jobs before it that cannot start now (held, waiting
on a dependency, a begin time or a limit) are counted apart. A job pending in several partitions
(``burn,gpu``) is in line in each; its own place is given for the first.

The columns are gathered once per snapshot (one pass over the jobs), sorted once with
``np.lexsort``; a place is then a few array lookups. No Textual here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tui.analysis.jobs.reasons import IN_LINE, describe
from tui.model import Job

__all__ = ["Queue", "QueuePlace"]

_ID = re.compile(r"([0-9]+)(?:_([0-9]+))?")


@dataclass(frozen=True)
class QueuePlace:
    """Where one pending job stands in its partition."""

    partition: str
    ahead: int | None
    """Jobs in line before it (None: cannot be counted, :attr:`unknown` says why)."""
    own_ahead: int | None
    """How many of :attr:`ahead` are the same user's."""
    blocked_ahead: int | None
    """Jobs before it in Slurm's order that cannot start now (held, dependency, begin time, limits)."""
    just_ahead: Job | None = None
    """The job in line right before it (None when first, or not known)."""
    unknown: str = ""
    """Why the place is not known ("" when it is)."""
    reasons_unknown: int = 0
    """Jobs counted ahead whose reason the source does not give (they may be held or limited)."""


def _id_key(job_id: str) -> tuple[int, int]:
    """(array or job id, task id or -1) as Slurm compares them; unparseable ids sort last."""
    m = _ID.match(job_id)
    if m is None:
        return (2**62, -1)
    return (int(m.group(1)), int(m.group(2)) if m.group(2) else -1)


class Queue:
    """The pending jobs of one snapshot, sorted per partition in Slurm's order."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        pending = [j for j in jobs if j.state == "PENDING"]
        self.jobs = pending
        kind_of: dict[str | None, bool] = {None: True}  # no Reason read: counted, and said so
        index: dict[str, int] = {}
        rows: list[int] = []
        parts: list[str] = []
        first_row: dict[int, int] = {}  # pending index -> its row for its first partition
        for i, job in enumerate(pending):
            listed = job.partition.split(",") if "," in job.partition else (job.partition,)
            for name in listed:
                if i not in first_row:
                    first_row[i] = len(rows)
                rows.append(i)
                parts.append(name)
            index[job.job_id] = i
        self._index = index
        self._first_row = np.array([first_row[i] for i in range(len(pending))], dtype=np.int64)
        n = len(rows)
        row_job = np.asarray(rows, dtype=np.int64)
        names, part = np.unique(np.asarray(parts, dtype=object).astype(str), return_inverse=True) \
            if n else (np.zeros(0, dtype=str), np.zeros(0, dtype=np.int64))
        self.partitions = [str(p) for p in names]
        prio = np.array([-1 if j.priority is None else j.priority for j in pending], dtype=np.int64)
        submit = np.array([j.submit_time.timestamp() if j.submit_time is not None else np.inf for j in pending])
        ids = np.array([_id_key(j.job_id) for j in pending], dtype=np.int64).reshape(-1, 2)
        for job in pending:
            if job.reason not in kind_of:
                kind_of[job.reason] = describe(job.reason or "").kind in IN_LINE
        in_line = np.array([kind_of[j.reason] for j in pending], dtype=bool)
        no_reason = np.array([j.reason is None for j in pending], dtype=bool)
        users, user = np.unique(np.array([j.user for j in pending], dtype=object).astype(str), return_inverse=True) \
            if pending else (np.zeros(0, dtype=str), np.zeros(0, dtype=np.int64))
        self._users = {str(u): k for k, u in enumerate(users)}
        # lexsort: the last key is the primary one
        order = np.lexsort((ids[row_job, 1], ids[row_job, 0], submit[row_job], -prio[row_job], part)) \
            if n else np.zeros(0, dtype=np.int64)
        self._order_job = row_job[order]
        self._pos = np.empty(n, dtype=np.int64)
        self._pos[order] = np.arange(n)
        sorted_part = part[order]
        self._start = np.searchsorted(sorted_part, np.arange(len(names) + 1))
        self._sorted_part = sorted_part
        line = in_line[self._order_job]
        self._line_cum = np.concatenate(([0], np.cumsum(line)))
        self._line_at = np.flatnonzero(line)
        self._no_reason_cum = np.concatenate(([0], np.cumsum(no_reason[self._order_job] & line)))
        self._unknown_prio_cum = np.concatenate(([0], np.cumsum(prio[self._order_job] < 0)))
        self._user_sorted = user[self._order_job]
        self._prio = prio

    def __len__(self) -> int:
        return len(self.jobs)

    def place(self, job: Job, hidden: str = "") -> QueuePlace | None:
        """The place of ``job`` (a pending job of this queue; None if it is not one). ``hidden``:
        why other users' jobs cannot be counted (PrivateData), given by the caller."""
        i = self._index.get(job.job_id)
        if i is None:
            return None
        k = int(self._pos[self._first_row[i]])
        p = int(self._sorted_part[k])
        s = int(self._start[p])
        name = self.partitions[p]
        e = int(self._start[p + 1])
        if self._unknown_prio_cum[e] - self._unknown_prio_cum[s]:  # anywhere in the partition: no order
            return QueuePlace(name, None, None, None, unknown="the source gives no priority for some of these jobs")
        lo, hi = int(self._line_cum[s]), int(self._line_cum[k])
        ahead = hi - lo
        me = self._users.get(job.user, -1)
        line_rows = self._line_at[lo:hi]  # the in-line rows before it in its partition, in order
        own = int(np.count_nonzero(self._user_sorted[line_rows] == me))
        if hidden:
            return QueuePlace(name, None, own, None, unknown=hidden)
        just = self.jobs[int(self._order_job[line_rows[-1]])] if ahead else None
        return QueuePlace(name, ahead, own, (k - s) - ahead, just,
                          reasons_unknown=int(self._no_reason_cum[k] - self._no_reason_cum[s]))
