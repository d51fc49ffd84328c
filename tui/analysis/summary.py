"""Where you stand, in one line: the first thing the app shows above the tree.

"alice · FairShare 0.349 · 1,627 of 2,501 users ahead of you · held back by mech_vargas_lab
(5th of 5 in mech) · 1 pending job, priority 8.6M · allocation cannon_mech 56% left (runs out
2027-02-03)". A part the source cannot give is "unknown" with the reason, or left out when it
does not apply (no jobs, no allocation). No Textual here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tui.analysis.allocations import allocations_for
from tui.analysis.jobs import Queue, explain_pending, pending_summary
from tui.analysis.jobs.rows import pending_facts
from tui.analysis.rank_path import RankShared, rank_path
from tui.analysis.standing import Standing
from tui.formats.sshare import sshare_cells
from tui.model import Job
from tui.slurm_releases import release

__all__ = ["UserSummary", "compact_number", "ranking_parts", "user_summary"]


def compact_number(value: float) -> str:
    """``8_612_345`` -> ``8.6M``, ``12_400`` -> ``12.4k``, ``950`` -> ``950``."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:,.0f}"


@dataclass(frozen=True)
class UserSummary:
    """The parts of the summary line, in the order shown."""

    parts: tuple[str, ...]
    row: int | None
    """The association the line is about (the user's first), None if the user has none."""
    facts: dict[str, object] = field(default_factory=dict)
    """The line's values for a program (``fairtop standing --format json``): user, account,
    fairshare, users_ahead, users, held_back_by, pending_jobs, top_priority, allocation, ... as far
    as the source gives them."""

    @property
    def text(self) -> str:
        return " · ".join(self.parts)


def _jobs_part(standing: Standing, user: str, facts: dict[str, object],
               jobs: Sequence[Job] | None = None, queue: Queue | None = None) -> str | None:
    caps = standing.snapshot.capabilities
    if caps is not None and "jobs" not in caps:
        return "pending jobs unknown (the source gives no queue)"
    pending = [j for j in (standing.snapshot.jobs if jobs is None else jobs) if j.user == user and j.state == "PENDING"]
    facts["pending_jobs"] = len(pending)
    if not pending:
        return "no pending jobs"
    known = [j.priority for j in pending if j.priority is not None]
    facts["top_priority"] = max(known) if known else None
    if any(j.reason is not None for j in pending):  # the source read squeue's Reason: say why they wait
        explained = explain_pending(standing, pending, queue)
        facts["pending"] = [pending_facts(p) for p in explained]
        return pending_summary(explained)
    s = "" if len(pending) == 1 else "s"
    if not known:
        return f"{len(pending):,} pending job{s}, priority unknown"
    top = "priority" if len(pending) == 1 else "top priority"
    return f"{len(pending):,} pending job{s}, {top} {compact_number(max(known))}"


def _allocation_part(standing: Standing, row: int, facts: dict[str, object]) -> str | None:
    snap = standing.snapshot
    statuses = allocations_for(snap.allocations, snap.tree, row, snap.taken_at)
    statuses = [s for s in statuses if s.granted > 0]
    if not statuses:
        return None
    tight = min(statuses, key=lambda s: s.remaining / s.granted)  # the one that runs out first matters
    left = max(tight.remaining, 0.0) / tight.granted
    facts["allocation"] = {"project": tight.project, "left": round(left, 6), "granted": tight.granted,
                           "remaining": tight.remaining,
                           "runs_out": tight.exhaustion.isoformat() if tight.exhaustion is not None else None}
    text = f"allocation {tight.project} {left:.0%} left"
    if tight.exhausted:
        return text + " (used up)"
    if tight.exhaustion is not None:
        return text + f" (runs out {tight.exhaustion:%Y-%m-%d} at the current rate)"
    end = tight.allocation.end
    if end is not None and tight.burn_per_day:
        return text + f" (lasts to its end, {end:%Y-%m-%d})"
    return text


def _who(standing: Standing, name: str) -> str:
    """Whose numbers these are: on the demo, a made-up user's, and the line says so."""
    return f"{name} (demo user)" if standing.snapshot.made_up else name


def _pbs_summary(standing: Standing) -> UserSummary:
    """PBS: the entity's fairshare_factor (``%.6f`` as the report prints it) and how many leaf
    entities have a higher one (PBS orders by the factor; there is no rank)."""
    pbs, fs, me = standing.snapshot.pbs, standing.pbs, standing.me
    assert pbs is not None and fs is not None
    if not len(standing.my_rows):
        return UserSummary((f"{me}: no entity of that name in this snapshot",), None)
    row = int(standing.my_rows[0])
    leaves = np.ones(len(pbs.parent), dtype=bool)
    leaves[np.asarray(pbs.parent)[np.asarray(pbs.parent) >= 0]] = False
    leaves[0] = False
    higher = int(np.count_nonzero(fs.factor[leaves] > fs.factor[row]))
    facts = {"user": me, "fairshare_factor": float(f"{fs.factor[row]:.6f}"), "higher": higher,
             "entities": int(leaves.sum()), "made_up": standing.snapshot.made_up}
    caps = standing.snapshot.capabilities
    if caps is not None and "jobs" in caps:  # qstat -f was read: PBS's comment and estimate
        pending = [j for j in standing.snapshot.jobs if j.user == me and j.state == "PENDING"]
        facts["pending_jobs"] = len(pending)
        explained = explain_pending(standing, pending)
        facts["pending"] = [pending_facts(p) for p in explained]
        jobs = pending_summary(explained)
    elif standing.snapshot.made_up:
        jobs = "pending jobs unknown (the PBS demo makes up no queue)"
    else:
        jobs = "pending jobs unknown (no qstat -f in this source: a capture made before fairtop read it)"
    return UserSummary((_who(standing, me), f"fairshare_factor {fs.factor[row]:.6f}",
                        f"{higher:,} of {int(leaves.sum()):,} entities have a higher factor", jobs), row, facts)


def ranking_parts(standing: Standing, row: int, facts: dict[str, object] | None = None,
                  shared: RankShared | None = None) -> list[str]:
    """Where association ``row`` ranks among all users, in words without other users' names:
    "1,627 of 2,501 users ahead of you" and, under Fair Tree, the level that holds it back (an
    account on its own path). A publisher computes these for each user of a PrivateData cluster.
    ``facts`` (``fairtop standing --format json``) gets the same as numbers; ``shared`` is for a
    caller ranking many rows (:class:`~tui.analysis.rank_path.RankShared`)."""
    tree, res = standing.snapshot.tree, standing.fairshare
    assert tree is not None and res is not None
    facts = facts if facts is not None else {}
    users = tree.user_count
    path = rank_path(standing, row, shared=shared)
    if path is not None:
        parts = [f"{path.ahead:,} of {users:,} users ahead of you"]
        facts["users_ahead"] = path.ahead
        worst = path.held_back_by()
        if worst is not None:
            who = "your own usage" if worst.row == row else worst.name
            parts.append(f"held back by {who} ({worst.place_text})")
            facts["held_back_by"] = {"name": worst.name, "within": worst.within, "place": worst.place,
                                     "of": worst.count, "own_usage": worst.row == row}
        return parts
    if not math.isnan(float(res.fairshare[row])):
        higher = int(np.count_nonzero(res.fairshare[tree.is_user] > res.fairshare[row]))
        facts["users_higher"] = higher
        return [f"{higher:,} of {users:,} users have a higher FairShare"]
    return []


def _private_ranking(standing: Standing, row: int) -> list[str]:
    """Under PrivateData: the publisher's ranking of this association, or why there is none."""
    private, tree = standing.snapshot.private, standing.snapshot.tree
    assert private is not None and tree is not None
    got = private.ranking.get(str(tree.account[row]))
    if got is not None:
        return list(got)
    hides = ",".join(sorted(private.hides)) or "usage"
    return [f"users ahead unknown (PrivateData={hides} hides the other users' usage)"]


def user_summary(standing: Standing, shared: RankShared | None = None,
                 jobs: Sequence[Job] | None = None, queue: Queue | None = None) -> UserSummary | None:
    """The summary line for ``standing.me`` (None without a user or a Slurm tree).

    Under Fair Tree it names the level that puts the most users ahead ("held back by"); under
    classic it counts the users with a higher factor. With several associations it is about the
    first (``m`` cycles through them). ``shared`` as in :func:`ranking_parts`; ``jobs``: the
    user's own jobs, for a caller that grouped the snapshot's by user (None: all of them are read);
    ``queue``: the snapshot's pending jobs in order, for a caller summing up many users (None:
    ordered here when the user has a pending job).
    """
    tree, res, me = standing.snapshot.tree, standing.fairshare, standing.me
    if me and standing.pbs is not None and standing.snapshot.pbs is not None:
        return _pbs_summary(standing)
    if not me or tree is None or res is None:
        return None
    if not len(standing.my_rows):
        return UserSummary((f"{me}: no association in this snapshot",), None)
    row = int(standing.my_rows[0])
    facts: dict[str, object] = {"user": me, "account": str(tree.account[row]), "associations": len(standing.my_rows),
                                "made_up": standing.snapshot.made_up}
    parts = [_who(standing, me if len(standing.my_rows) == 1
                  else f"{me} ({tree.account[row]}, 1 of {len(standing.my_rows)})")]
    caps = standing.snapshot.capabilities
    if caps is not None and "usage" not in caps:
        parts.append(f"FairShare unknown ({standing.snapshot.source} gives no usage)")
    else:
        printed = standing.snapshot.printed
        cells = printed.get("FairShare") if printed else None
        text = cells[row] if cells is not None and len(cells) == tree.size else \
            sshare_cells(tree, res, standing.snapshot.settings.dampening, rows=[row],
                         release=release(standing.snapshot.scheduler_version))["FairShare"][row]
        parts.append(f"FairShare {text}")
        facts["fairshare"] = _number(text)
        if standing.partial:  # PrivateData: the tree here is only what this user may see
            parts += _private_ranking(standing, row)
        else:
            facts["users"] = tree.user_count
            parts += ranking_parts(standing, row, facts, shared=shared)
    waiting = _jobs_part(standing, me, facts, jobs, queue)
    if waiting is not None:
        parts.append(waiting)
    alloc = _allocation_part(standing, row, facts)
    if alloc is not None:
        parts.append(alloc)
    return UserSummary(tuple(parts), row, facts)


def _number(cell: str) -> float | None:
    """A printed cell as a number (None for a blank or a word)."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
