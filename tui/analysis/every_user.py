"""Every user's summary line at once: what a publisher writes beside each capture so that
``fairtop standing`` reads a line instead of computing it (:mod:`tui.sources.standings_file`).

Each line is :func:`~tui.analysis.summary.user_summary` of the same standing with that user as
``me``, so it is the line the app and ``standing`` compute, word for word; the engine runs once,
each sibling group is ordered once (:class:`~tui.analysis.rank_path.RankShared`) and the jobs are
grouped by user once, so a user costs their own path only. No files here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from tui.analysis.jobs import Queue
from tui.analysis.rank_path import RankShared
from tui.analysis.standing import Standing
from tui.analysis.summary import UserSummary, user_summary
from tui.model import Job, PrivateView

__all__ = ["EveryUser"]


def _rows_by_user(standing: Standing) -> dict[str, list[int]]:
    tree = standing.snapshot.tree
    assert tree is not None
    out: dict[str, list[int]] = {}
    for row in np.flatnonzero(tree.is_user).tolist():
        out.setdefault(str(tree.user[row]), []).append(row)
    return out


def _jobs_by_user(jobs: Iterable[Job]) -> dict[str, list[Job]]:
    out: dict[str, list[Job]] = {}
    for job in jobs:
        out.setdefault(job.user, []).append(job)
    return out


def _as(standing: Standing, user: str, rows: Sequence[int], private: PrivateView | None = None) -> Standing:
    """``standing`` with ``user`` as ``me`` (and, for a view, its PrivateData note)."""
    if private is not None:
        standing = replace(standing, snapshot=replace(standing.snapshot, private=private))
    return replace(standing, me=user, my_rows=np.asarray(rows, dtype=np.int64))


class EveryUser:
    """One standing's lines for each of its users; what every line shares is found once."""

    def __init__(self, standing: Standing) -> None:
        self.standing = standing
        whole = standing.snapshot.tree is not None and standing.fairshare is not None
        self._rows = _rows_by_user(standing) if whole else {}
        self._jobs = _jobs_by_user(standing.snapshot.jobs)
        self._shared = RankShared.of(standing) if whole else None
        self._queue: Queue | None = None

    @property
    def queue(self) -> Queue:
        """The snapshot's pending jobs in Slurm's order, ordered once for every user."""
        if self._queue is None:
            self._queue = Queue.of_snapshot(self.standing.snapshot)
        return self._queue

    def summaries(self) -> dict[str, UserSummary]:
        """User -> their line, for every user with an association (empty without a Slurm tree)."""
        out: dict[str, UserSummary] = {}
        for user, rows in self._rows.items():
            got = user_summary(_as(self.standing, user, rows), shared=self._shared, jobs=self._jobs.get(user, ()),
                               queue=self.queue)
            if got is not None:
                out[user] = got
        return out

    def absent(self, user: str) -> UserSummary | None:
        """The line of ``user``, who has no association in this snapshot."""
        return user_summary(replace(self.standing, me=user, my_rows=np.zeros(0, dtype=np.int64)))

    def view(self, user: str, private: PrivateView) -> UserSummary | None:
        """The line ``user`` gets from their PrivateData view (``private``: what the view's
        ``fairtop_view.json`` says), from the whole capture: their view lists the same printed
        values and jobs for them, and the publisher's ranking. None without an association."""
        rows = self._rows.get(user)
        if not rows:
            return None
        return user_summary(_as(self.standing, user, rows, private), jobs=self._jobs.get(user, ()), queue=self.queue)
