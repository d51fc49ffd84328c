"""slurmrestd's tree, partitions and jobs with ``sshare``'s usage: one snapshot from both.

Slurm 22.05's REST API carries no usage (see :mod:`tui.sources.slurmrestd`). A site that runs
slurmrestd usually has the client commands too. The usage side is read as the live source reads
it (:class:`~tui.sources.slurm_cli.LiveSlurm`, limited to :data:`USAGE_COMMANDS`): ``sshare -a -l
-P`` for RawUsage and the printed columns, ``scontrol show assoc_mgr`` for the usage at two
decimals (sshare truncates), ``scontrol show config`` for the algorithm, dampening and weights.
:func:`combine` then matches the two sides by (account, user, partition):

- matched rows take the usage side's raw usage and sshare's printed NormShares, RawUsage,
  EffectvUsage, FairShare, LevelFS (shown as printed and reconciled with the engine, as for the
  live and saved sources);
- a row only slurmrestd lists keeps its place in the tree, with usage unknown
  (:attr:`~tui.model.Snapshot.usage_unknown`), and is named in a warning;
- an association only sshare lists cannot be placed in the REST tree and is named in a warning;
- RawShares sshare printed differently from slurmdbd's (a change slurmctld has not loaded) are
  taken from sshare, which is what the scheduler computes with, and named in a warning.

sshare's values change once per PriorityCalcPeriod, so sshare and assoc_mgr are asked once per
PriorityCalcPeriod (and on ``r``), the config every 10 minutes, slurmrestd every refresh.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from tui.model import AssocTree, PrintedColumn, Snapshot
from tui.sources import saved, slurmrestd
from tui.sources.slurm_cli import Cadence, LiveSlurm
from tui.sources.sshare import SshareTable

__all__ = ["USAGE_COMMANDS", "combine", "per_minute", "RestSshare"]

#: The outputs (capture file names) the usage side reads; the REST side replaces the rest.
USAGE_COMMANDS = (saved.FILES["sshare"], saved.FILES["assoc_mgr"], saved.FILES["config"])
#: Warnings of the usage side about outputs the REST side provides instead.
_PROVIDED = tuple(f"no {saved.FILES[k]}" for k in ("assoc", "partition", "sprio", "squeue"))
_SHOWN = 5


def _names(labels: list[str]) -> str:
    return ", ".join(labels[:_SHOWN]) + (f" and {len(labels) - _SHOWN} more" if len(labels) > _SHOWN else "")


def combine(rest: slurmrestd.RestRead, usage: Snapshot, table: SshareTable, sshare: str = "sshare") -> Snapshot:
    """The REST snapshot with the usage side's usage, settings and budgets and sshare's printed
    columns (see the module docstring).

    Parameters
    ----------
    rest : RestRead
        What slurmrestd gave (tree, partitions, jobs, each row's partition).
    usage : Snapshot
        The usage side as the live or saved source builds it from sshare (+ assoc_mgr, config);
        its tree rows are ``table``'s.
    table : SshareTable
        ``sshare -a -l -P`` parsed (for each row's partition).
    sshare : str
        Names sshare in warnings.

    Returns
    -------
    Snapshot
        Timed when sshare was asked (its numbers are that old). Capabilities are not set here
        (the registry's source states them).
    """
    snap = rest.snapshot
    tree, theirs = snap.tree, usage.tree
    assert tree is not None and theirs is not None  # both sources always build one
    by_key: dict[tuple[str, str, str], deque[int]] = defaultdict(deque)
    for j in range(theirs.size):
        by_key[(str(theirs.account[j]), str(theirs.user[j]), table.partitions[j])].append(j)
    match = np.full(tree.size, -1, dtype=np.int64)
    for i in range(tree.size):
        queue = by_key.get((str(tree.account[i]), str(tree.user[i]), rest.row_partitions[i]))
        if queue:
            match[i] = queue.popleft()
    matched = match >= 0
    warnings = [w for w in snap.warnings if not w.startswith(("usage unknown", "priority settings unknown"))]
    warnings += [w for w in usage.warnings if not w.startswith(_PROVIDED)]

    unknown = [int(i) for i in np.flatnonzero(~matched)]
    if unknown:
        warnings.append(f"{len(unknown)} association(s) slurmrestd lists are not in {sshare}: "
                        f"{_names([tree.label(i) for i in unknown])}; their usage and fairshare are unknown")
    used = np.zeros(theirs.size, dtype=bool)
    used[match[matched]] = True
    only_sshare = [theirs.label(int(j)) for j in np.flatnonzero(~used)]
    if only_sshare:
        warnings.append(f"{len(only_sshare)} association(s) {sshare} lists are not in slurmrestd's tree "
                        f"and are not shown: {_names(only_sshare)}")
    moved = [tree.label(int(i)) for i in np.flatnonzero(matched[1:]) + 1
             if match[tree.parent[i]] >= 0 and match[tree.parent[i]] != theirs.parent[match[i]]]
    if moved:
        warnings.append(f"{len(moved)} association(s) have another parent in {sshare} than in slurmrestd "
                        f"(read at different times?): {_names(moved)}")

    raw_usage = np.zeros(tree.size, dtype=np.longdouble)
    raw_usage[matched] = theirs.usage_raw[match[matched]]
    shares = tree.shares_raw.copy()
    differ = [int(i) for i in np.flatnonzero(matched[1:]) + 1 if shares[i] != theirs.shares_raw[match[i]]]
    if differ:
        warnings.append(f"RawShares of {len(differ)} association(s) differ between slurmdbd (slurmrestd) and "
                        f"{sshare}, which is what the scheduler uses: {_names([tree.label(i) for i in differ])}")
        shares[differ] = theirs.shares_raw[match[differ]]
    # slurmctld's children order (assoc_mgr's Lft) where every row has one; else sshare's (names)
    order = theirs.sibling_order[match] if theirs.sibling_order is not None and matched.all() else None
    combined = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, shares, raw_usage, order)
    if order is not None:
        warnings = [w for w in warnings if not w.startswith("slurmrestd gives no association lft")]

    printed: dict[str, Sequence[str]] = {
        header: (cells.take(match) if isinstance(cells, PrintedColumn)
                 else tuple(cells[j] if j >= 0 else "" for j in match.tolist()))
        for header, cells in (usage.printed or {}).items()}
    return replace(snap, tree=combined, source=f"{snap.source} + {sshare}", taken_at=usage.taken_at,
                   settings=usage.settings, budgets=usage.budgets, printed=printed,
                   usage_unknown=tuple(unknown), warnings=tuple(warnings))


def per_minute(cadence: Cadence, rest_slow_s: float = 600.0, with_sshare: bool = True) -> dict[str, float]:
    """Requests and commands a minute a session sends to slurmctld and to slurmdbd: slurmrestd's
    jobs every refresh (slurmctld), its associations (slurmdbd) and partitions (slurmctld) every
    ``rest_slow_s``; with sshare, sshare and assoc_mgr per PriorityCalcPeriod and the config
    every ``cadence.slow_s`` (all slurmctld)."""
    ctld = 60.0 / cadence.jobs_s + 60.0 / rest_slow_s
    if with_sshare:
        ctld += sum(60.0 / cadence.period(name) for name in USAGE_COMMANDS)
    return {"slurmctld": ctld, "slurmdbd": 60.0 / rest_slow_s}


class RestSshare:
    """slurmrestd on its cadence (:class:`~tui.sources.slurmrestd.LiveRest`: jobs every read, the
    tree every 10 minutes) and the usage side on the live source's (sshare and assoc_mgr once per
    PriorityCalcPeriod, the config every 10 minutes); :meth:`refresh_now` asks everything again.

    ``usage`` (its runner and clock) is replaceable for tests.
    """

    def __init__(self, rest: slurmrestd.LiveRest, usage: LiveSlurm | None = None, refresh_s: float = 30.0) -> None:
        self.rest = rest
        self.usage = usage or LiveSlurm(Cadence(jobs_s=refresh_s), only=USAGE_COMMANDS)
        """The usage side: the live source's commands, limited to :data:`USAGE_COMMANDS`."""

    def refresh_now(self) -> None:
        """Ask both sides for everything at the next read (``r``)."""
        self.rest.refresh_now()
        self.usage.refresh_usage_now()

    def read(self) -> Snapshot:
        """Both sides combined.

        Raises
        ------
        SourceUnavailable
            slurmrestd or sshare does not answer (an old sshare output is never reused after
            sshare failed).
        InputError
            A response fairtop cannot read.
        """
        rest = self.rest.read()
        usage = self.usage.read()
        assert self.usage.table is not None  # set by every successful read
        return combine(rest, usage, self.usage.table)
