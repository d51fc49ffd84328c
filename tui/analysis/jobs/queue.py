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

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

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
        in_line_of: dict[str | None, bool] = {None: True}  # no Reason read: counted, and said so
        part_code: dict[str, int] = {}
        user_code: dict[str, int] = {}
        stamp: dict[datetime, float] = {}
        index: dict[str, int] = {}
        rows: list[int] = []
        parts: list[int] = []
        prio: list[float] = []
        submit: list[float] = []
        ids: list[tuple[int, int]] = []
        in_line: list[bool] = []
        no_reason: list[bool] = []
        users: list[int] = []
        many: list[int] = []
        for i, job in enumerate(pending):  # one pass: 100,000 jobs, a few dict lookups each
            index[job.job_id] = i
            if "," in job.partition:
                many.append(i)
            parts.append(part_code.setdefault(job.partition.split(",")[0], len(part_code)))
            prio.append(math.nan if job.priority is None else job.priority)
            t = job.submit_time
            if t is None:
                submit.append(math.inf)
            else:  # one timestamp per distinct time (squeue's parse shares them)
                got = stamp.get(t)
                submit.append(got if got is not None else stamp.setdefault(t, t.timestamp()))
            ids.append((int(job.job_id), -1) if job.job_id.isdigit() else _id_key(job.job_id))
            line = in_line_of.get(job.reason)
            if line is None:
                line = in_line_of[job.reason] = describe(job.reason or "").kind in IN_LINE
            in_line.append(line)
            no_reason.append(job.reason is None)
            users.append(user_code.setdefault(job.user, len(user_code)))
        # a job pending in several partitions (burn,gpu) has a row in each; its first (row i) is its own
        rows = list(range(len(pending)))
        for i in many:
            for name in pending[i].partition.split(",")[1:]:
                rows.append(i)
                parts.append(part_code.setdefault(name, len(part_code)))
        self._index, self._users, self.partitions = index, user_code, list(part_code)
        row_job = np.asarray(rows, dtype=np.int64)
        part = np.asarray(parts, dtype=np.int64)
        prio_a = np.asarray(prio, dtype=np.float64)  # priorities are uint32: exact in a float64; NaN: unknown
        id_a = np.asarray(ids, dtype=np.int64).reshape(-1, 2)
        # Slurm's order within a partition (lexsort's last key is the primary one); unknown priorities last
        key_prio = np.where(np.isnan(prio_a), np.inf, -prio_a)
        order = np.lexsort((id_a[row_job, 1], id_a[row_job, 0], np.asarray(submit)[row_job], key_prio[row_job], part))
        self._order_job = row_job[order]
        self._pos = np.empty(len(rows), dtype=np.int64)
        self._pos[order] = np.arange(len(rows))
        self._sorted_part = part[order]
        self._start = np.searchsorted(self._sorted_part, np.arange(len(part_code) + 1))
        line_sorted = np.asarray(in_line, dtype=bool)[self._order_job]
        self._line_cum = np.concatenate(([0], np.cumsum(line_sorted)))
        self._line_at = np.flatnonzero(line_sorted)
        self._no_reason_cum = np.concatenate(([0], np.cumsum(np.asarray(no_reason, dtype=bool)[self._order_job]
                                                              & line_sorted)))
        self._unknown_prio_cum = np.concatenate(([0], np.cumsum(np.isnan(prio_a[self._order_job]))))
        self._user_sorted = np.asarray(users, dtype=np.int64)[self._order_job]

    def __len__(self) -> int:
        return len(self.jobs)

    def place(self, job: Job, hidden: str = "") -> QueuePlace | None:
        """The place of ``job`` (a pending job of this queue; None if it is not one). ``hidden``:
        why other users' jobs cannot be counted (PrivateData), given by the caller."""
        i = self._index.get(job.job_id)
        if i is None:
            return None
        k = int(self._pos[i])  # row i: its first partition
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
