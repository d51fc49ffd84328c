"""Each pending job's place in its partition's queue, for 100,000 pending jobs at once.

Slurm's main scheduler orders its queue (``sort_job_queue2`` in ``src/slurmctld/job_scheduler.c``)
by reservation, partition PriorityTier, then priority (descending), submit time, job id (an array
task by its array's id, then its task id). Within one partition the tier is the same, so the order
here is priority, submit time, job id, task id. A job is "ahead" of another when it comes first in
that order *and* waits its turn for resources (Priority, Resources, no reason yet:
:data:`~tui.analysis.jobs.reasons.IN_LINE`); jobs before it that cannot start now (held, waiting
on a dependency, a begin time or a limit) are counted apart. A job pending in several partitions
(``burn,gpu``) is in line in each; its own place is given for the first.

The columns are gathered once per snapshot (one pass over the jobs), or taken as squeue's columns
(:meth:`Queue.of_columns`, :mod:`tui.sources.squeue_columns`: no ``Job`` per line, one made only
for a job found just ahead), sorted once with ``np.lexsort``; a place is then a few array lookups.
Both ways give the same places (tests/sources/test_squeue_columns.py). No Textual here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from tui.analysis.jobs.reasons import IN_LINE, describe
from tui.model import Job, QueueTable, Snapshot

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


def _id_columns(ids: Sequence[str]) -> np.ndarray:
    """(array or job id, task id or -1) of each id as an n x 2 array (:func:`_id_key`'s)."""
    out = np.full((len(ids), 2), -1, dtype=np.int64)
    if not ids:
        return out
    plain = [j if j.isdigit() and len(j) < 19 else "-1" for j in ids]
    out[:, 0] = np.asarray(plain).astype(np.int64)
    for i in np.flatnonzero(out[:, 0] < 0).tolist():
        out[i] = _id_key(ids[i])
    return out


class Queue:
    """The pending jobs of one snapshot, sorted per partition in Slurm's order.

    Built from ``Job`` objects (``Queue(snapshot.jobs)``) or from squeue's columns
    (:meth:`of_columns`, no ``Job`` per line: one is made only for a job found just ahead); both
    give the same places."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        pending = [j for j in jobs if j.state == "PENDING"]
        stamp: dict[datetime, float] = {}
        submit: list[float] = []
        for job in pending:
            t = job.submit_time
            if t is None:
                submit.append(math.inf)
            else:  # one timestamp per distinct time (squeue's parse shares them)
                got = stamp.get(t)
                submit.append(got if got is not None else stamp.setdefault(t, t.timestamp()))
        self._setup([j.job_id for j in pending], [j.partition for j in pending], [j.user for j in pending],
                    [j.reason for j in pending],
                    np.asarray([math.nan if j.priority is None else j.priority for j in pending], dtype=np.float64),
                    np.asarray(submit, dtype=np.float64), pending.__getitem__)

    @classmethod
    def of_snapshot(cls, snapshot: Snapshot) -> Queue:
        """The queue of ``snapshot``: its columns when it has them, else its jobs."""
        return cls(snapshot.jobs) if snapshot.queue is None else cls.of_columns(snapshot.queue)

    @classmethod
    def of_columns(cls, columns: QueueTable) -> Queue:
        """The queue of squeue's columns (:func:`tui.sources.squeue_columns.squeue_columns`)."""
        state = columns.state
        rows = [i for i, s in enumerate(state) if s == "PENDING"]
        if len(rows) == len(state):
            ids, parts, users, reasons = columns.job_id, columns.partition, columns.user, columns.reason
            prio, submit, key = columns.priority, columns.submit, columns.id_key
        else:
            def pick(values: list[str]) -> list[str]:
                return list(map(values.__getitem__, rows))
            ids, parts, users = pick(columns.job_id), pick(columns.partition), pick(columns.user)
            reasons = list(map(columns.reason.__getitem__, rows))
            prio, submit = columns.priority[rows], columns.submit[rows]
            key = None if columns.id_key is None else columns.id_key[rows]
        queue = cls.__new__(cls)
        queue._setup(ids, parts, users, reasons, prio, submit, lambda i: columns.jobs([rows[i]])[0], key)
        return queue

    def _setup(self, ids: Sequence[str], partitions: Sequence[str], users: Sequence[str],
               reasons: Sequence[str | None], prio_a: np.ndarray, submit_a: np.ndarray,
               job_at: Callable[[int], Job], id_key: np.ndarray | None = None) -> None:
        """The order of pending jobs given as columns (``job_at(i)``: the ``Job`` of row ``i``;
        ``id_key``: :func:`_id_columns` of ``ids`` when the caller read them)."""
        n = len(ids)
        self._count, self._job_at = n, job_at
        in_line_of: dict[str | None, bool] = {None: True}  # no Reason read: counted, and said so
        for reason in set(reasons):
            if reason is not None:
                in_line_of[reason] = describe(reason).kind in IN_LINE
        part_code: dict[str, int] = {}
        first_of = dict.fromkeys(partitions, 0)  # the few distinct cells, in order of first sight
        for partition in first_of:
            first_of[partition] = part_code.setdefault(partition.split(",")[0], len(part_code))
        parts = list(map(first_of.__getitem__, partitions))
        many = [i for i, partition in enumerate(partitions) if "," in partition] if any(
            "," in partition for partition in first_of) else []
        user_code = dict.fromkeys(users, 0)
        for code, user in enumerate(user_code):
            user_code[user] = code
        users_c = list(map(user_code.__getitem__, users))
        id_a = _id_columns(ids) if id_key is None else id_key
        # a job pending in several partitions (burn,gpu) has a row in each; its first (row i) is its own
        rows = list(range(n))
        for i in many:
            for name in partitions[i].split(",")[1:]:
                rows.append(i)
                parts.append(part_code.setdefault(name, len(part_code)))
        self._index = dict(zip(ids, range(n)))
        self._users, self.partitions = user_code, list(part_code)
        row_job = np.asarray(rows, dtype=np.int64)
        part = np.asarray(parts, dtype=np.int64)
        # Slurm's order within a partition (lexsort's last key is the primary one); unknown priorities last
        key_prio = np.where(np.isnan(prio_a), np.inf, -prio_a)
        order = np.lexsort((id_a[row_job, 1], id_a[row_job, 0], submit_a[row_job], key_prio[row_job], part))
        self._order_job = row_job[order]
        self._pos = np.empty(len(rows), dtype=np.int64)
        self._pos[order] = np.arange(len(rows))
        self._sorted_part = part[order]
        self._start = np.searchsorted(self._sorted_part, np.arange(len(part_code) + 1))
        line_sorted = np.fromiter(map(in_line_of.__getitem__, reasons), dtype=bool, count=n)[self._order_job]
        self._line_cum = np.concatenate(([0], np.cumsum(line_sorted)))
        self._line_at = np.flatnonzero(line_sorted)
        no_reason = np.fromiter((r is None for r in reasons), dtype=bool, count=n)
        self._no_reason_cum = np.concatenate(([0], np.cumsum(no_reason[self._order_job] & line_sorted)))
        self._unknown_prio_cum = np.concatenate(([0], np.cumsum(np.isnan(prio_a[self._order_job]))))
        self._user_sorted = np.asarray(users_c, dtype=np.int64)[self._order_job]

    @property
    def jobs(self) -> list[Job]:
        """Every pending job, as ``Job`` (made on asking when built from columns: all of them)."""
        return [self._job_at(i) for i in range(self._count)]

    def __len__(self) -> int:
        return self._count

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
        just = self._job_at(int(self._order_job[line_rows[-1]])) if ahead else None
        return QueuePlace(name, ahead, own, (k - s) - ahead, just,
                          reasons_unknown=int(self._no_reason_cum[k] - self._no_reason_cum[s]))
