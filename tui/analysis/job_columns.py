"""Accounting records as columns on an association tree: the jobs the usage law replays, kept once
(:class:`tui.sources.sacct.SacctColumns` plus each job's association row) and billed again under
any policy. Shared by the RawUsage cross-check (:mod:`tui.analysis.history`) and the policy
replay (:mod:`tui.analysis.replay`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tui.engine.billing import BillingMode, billable_tres
from tui.engine.usage_law import JobTable, UsagePolicy
from tui.model import AssocTree
from tui.sources.sacct import AccountedJob, SacctColumns

__all__ = ["JobColumns", "association_rows", "job_columns"]


def association_rows(tree: AssocTree) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """(account, user) -> its user association's row, and account -> its row (first of each)."""
    user_row: dict[tuple[str, str], int] = {}
    acct_row: dict[str, int] = {}
    for i in range(tree.size):
        if tree.is_user[i]:
            user_row.setdefault((str(tree.account[i]), str(tree.user[i])), i)
        else:
            acct_row.setdefault(str(tree.account[i]), i)
    return user_row, acct_row


@dataclass(frozen=True, eq=False)
class JobColumns:
    """Jobs (one row per run) as columns, kept once and billed again under any policy.

    Attributes
    ----------
    row : int64 array (J,)
        Association charged (-1: none in the tree).
    jobs : SacctColumns
        Their times, QOS, partition and shape (AllocTRES) codes.
    """

    row: NDArray[np.int64]
    jobs: SacctColumns

    @property
    def size(self) -> int:
        return int(self.row.size)

    def billed(self, tres_weights: Mapping[str, Mapping[str, float]], mode: BillingMode) -> NDArray[np.float64]:
        """Each job's billable TRES (a double) where its partition has weights, else sacct's
        ``billing=`` (computed once per distinct shape and partition, not per job)."""
        j = self.jobs
        out: NDArray[np.float64] = np.asarray(j.shape_billing, dtype=np.float64)[j.shape]
        weighted = [(code, tres_weights[name]) for code, name in enumerate(j.partitions) if tres_weights.get(name)]
        if not weighted:
            return out
        names = sorted({k for shape in j.shapes for k in shape})
        counts = {k: np.asarray([shape.get(k, 0.0) for shape in j.shapes], dtype=np.float64) for k in names}
        known = np.asarray([bool(shape) for shape in j.shapes], dtype=bool)
        for code, weights in weighted:
            per_shape = np.where(known, billable_tres(counts, weights, mode), j.shape_billing)
            on = j.partition == code
            out[on] = per_shape[j.shape[on]]
        return out

    def table(self, policy: UsagePolicy, since: float) -> JobTable:
        """The law's table under ``policy``: jobs that ran after ``since``, started no earlier."""
        j = self.jobs
        keep = j.end > since
        return JobTable.coded(self.row[keep], np.maximum(j.start[keep], since), j.end[keep],
                              self.billed(policy.tres_weights, policy.billing_mode)[keep], j.qos[keep], j.qos_names)


def job_columns(jobs: SacctColumns | Sequence[AccountedJob], tree: AssocTree) -> JobColumns:
    """Accounting records as columns: each job on its (account, user) association, or, when that
    was deleted, its account (Slurm keeps a deleted association's usage in its parent). The
    lookup runs once per distinct (account, user), not per job."""
    cols = jobs if isinstance(jobs, SacctColumns) else SacctColumns.of_jobs(jobs)
    user_row, acct_row = association_rows(tree)
    nu = max(len(cols.users), 1)
    pairs, inverse = np.unique(cols.account.astype(np.int64) * nu + cols.user, return_inverse=True)
    rows = np.asarray([user_row.get((cols.accounts[k // nu], cols.users[k % nu]), acct_row.get(cols.accounts[k // nu],
                                                                                                  -1))
                       for k in pairs.tolist()], dtype=np.int64)
    return JobColumns(rows[inverse.reshape(-1)] if rows.size else np.zeros(0, np.int64), cols)
