"""Why each of a user's pending jobs waits: the scheduler's reason in words with this job's own
numbers, its place in its partition's queue, its priority parts against the job just ahead, the
scheduler's start estimate, and what would move it.

Trust: what the scheduler printed (its Reason, its StartTime and SchedNodes, sprio's parts) is
shown as printed and called the scheduler's; what fairtop works out (a top-up, the day fairshare
recovers enough) is called fairtop's, with what it assumes. A number the source does not have is
"unknown", with the reason. No Textual here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING

import numpy as np

from tui.analysis.jobs.pbs_comments import describe_pbs
from tui.analysis.jobs.queue import Queue, QueuePlace
from tui.analysis.jobs.reasons import IN_LINE, Meaning, describe
from tui.analysis.rank_path import ordinal
from tui.analysis.standing import Standing
from tui.model import AssocLimit, Budget, Job, Snapshot, path_to

if TYPE_CHECKING:  # the planner's face is imported when a Priority job asks for its recovery
    from tui.analysis.planner import Recovery

__all__ = ["FactorGap", "PendingJob", "explain_pending", "hidden_jobs", "pending_summary"]

#: sprio's headers in words.
FACTOR_WORDS = {"AGE": "age", "ASSOC": "association", "FAIRSHARE": "fairshare", "JOBSIZE": "job size",
                "PARTITION": "partition", "QOS": "QOS", "SITE": "site factor", "NICE": "nice"}
#: Dependency types (``sbatch --dependency``) in words.
_DEPENDS = {"after": "start", "afterany": "end", "afterok": "end successfully", "afternotok": "fail",
            "afterburstbuffer": "finish its burst buffer stage-out", "aftercorr": "have its matching task end "
            "successfully", "singleton": "end (singleton: one job of this name and user at a time)"}


@dataclass(frozen=True)
class FactorGap:
    """The priority part that holds a job back most against the job just ahead (sprio's values)."""

    factor: str
    """sprio's header (``FAIRSHARE``, ``AGE``...)."""
    mine: float
    theirs: float

    @property
    def words(self) -> str:
        return FACTOR_WORDS.get(self.factor, self.factor.lower())


@dataclass(frozen=True)
class PendingJob:
    """One pending job explained."""

    job: Job
    meaning: Meaning | None
    """Its printed reason taken apart (None: the source gives no Reason)."""
    why: str
    """The reason in words with this job's specifics (one or two sentences)."""
    place: QueuePlace | None
    held_back_by: FactorGap | None
    """Against the job just ahead; None when first, unknown, or no part is lower."""
    factors_note: str
    """The priority parts in words (or why there are none)."""
    estimate: str
    """The scheduler's start estimate with its age, or why there is none."""
    moves: tuple[str, ...]
    """What would move it, each a sentence; the scheduler's facts and fairtop's reckoning kept apart."""
    zone: tzinfo | None = None
    """The zone its times are shown in: the cluster's, as squeue printed them (the snapshot's
    :attr:`~tui.model.Snapshot.zone`); None: this machine's."""

    @property
    def lines(self) -> list[str]:
        """The whole explanation, a line each."""
        out = [f"Job {self.job.job_id} ({self.job.partition or 'partition unknown'}): {self.why}"]
        if self.place is not None:
            out.append(_place_text(self.place, self.meaning is None or self.meaning.kind in IN_LINE))
        if self.factors_note:
            out.append(self.factors_note)
        out.append(self.estimate)
        out += [f"What would move it: {m}" for m in self.moves]
        return out

    def short(self) -> str:
        """A few words for the summary line: "37th in burn, held back by fairshare; the scheduler
        estimates 14:20", "held by its user (JobHeldUser)"."""
        m, place = self.meaning, self.place
        if m is None:
            return "reason unknown"
        if m.kind == "queue" and place is not None:
            text = (f"{ordinal(place.ahead + 1)} in {place.partition}" if place.ahead is not None
                    else f"place in {place.partition} unknown")
            if self.held_back_by is not None and m.code == "Priority":
                text += f", held back by {self.held_back_by.words}"
        else:
            text = _SHORT.get(m.code, _SHORT.get(m.kind, "{code}")).format(code=m.code, partition=self.job.partition)
        at = self.job.start_time
        if at is not None and m.kind not in ("begin", "hold", "dependency"):
            text += f"; the scheduler estimates {at.astimezone(self.zone):%H:%M}"
        return text


_SHORT = {"hold": "held ({code})", "dependency": "waiting on a dependency ({code})",
          "begin": "not before its begin time ({code})", "limit": "blocked by a limit ({code})",
          "partition": "partition {partition}: {code}", "PartitionDown": "partition {partition} is down ({code})",
          "PartitionInactive": "partition {partition} is inactive ({code})",
          "nodes": "its nodes are unavailable ({code})",
          "invalid": "it cannot start as submitted ({code})", "unknown": "{code}"}


def _place_text(place: QueuePlace, in_line: bool = True) -> str:
    if place.ahead is None:
        own = "" if place.own_ahead is None else f"; {place.own_ahead:,} of your own jobs are ahead of it"
        return f"Place in {place.partition}: unknown ({place.unknown}){own}."
    if not in_line:
        return (f"Place in {place.partition}: not in line until its reason clears; then {place.ahead:,} job"
                f"{'s' if place.ahead != 1 else ''} now in line would be ahead of it ({place.own_ahead:,} yours).")
    if place.ahead == 0:
        text = f"Place in {place.partition}: first in line"
    else:
        text = (f"Place in {place.partition}: {ordinal(place.ahead + 1)}; {place.ahead:,} job"
                f"{'s' if place.ahead != 1 else ''} ahead of it, {place.own_ahead:,} of them yours")
    if place.blocked_ahead:
        text += (f" (and {place.blocked_ahead:,} of higher priority that cannot start now: held, waiting on a "
                 "dependency, a begin time or a limit)")
    if place.reasons_unknown:
        text += f" ({place.reasons_unknown:,} of those ahead have no reason in the source: some may be held)"
    return text + "."


def hidden_jobs(snapshot: Snapshot, me: str) -> str:
    """Why other users' pending jobs cannot be counted ("" when they can): PrivateData=jobs shows
    a user their own jobs only."""
    private = snapshot.private
    if private is not None and "jobs" in private.hides:
        return "PrivateData=jobs: your view holds only your own jobs, so the jobs of others ahead cannot be counted"
    users = (j.user for j in snapshot.jobs) if snapshot.queue is None else iter(snapshot.queue.user)
    if "jobs" in snapshot.private_data and all(u == me for u in users):
        return "PrivateData=jobs: squeue shows you only your own jobs, so the jobs of others ahead cannot be counted"
    return ""


def _assoc_row(standing: Standing, job: Job) -> int | None:
    tree = standing.snapshot.tree
    if tree is None:
        return None
    for row in standing.my_rows.tolist():
        if str(tree.account[row]) == job.account and str(tree.user[row]) == job.user:
            return int(row)
    return None


def _path(standing: Standing, job: Job) -> list[tuple[str, str]]:
    """(account, user) of the job's association and every account above it, bottom first."""
    tree, row = standing.snapshot.tree, _assoc_row(standing, job)
    if tree is None or row is None:
        return [(job.account, job.user), (job.account, "")]
    return [(str(tree.account[r]), str(tree.user[r])) for r in reversed(path_to(tree, row))]


def _whose(account: str, user: str) -> str:
    return f"user {user}'s association in account {account}" if user else f"account {account}"


def _tres_match(name: str, tres: str) -> bool:
    """``gres`` in a reason code stands for every ``gres/...``; the others are exact."""
    return name == tres or (tres in ("gres", "license", "bb") and name.startswith(tres + "/"))


def _job_tres(job: Job, tres: str) -> float | None:
    if tres in job.tres:
        return job.tres[tres]
    got = [v for k, v in job.tres.items() if _tres_match(k, tres)]
    return sum(got) if got else None


def _unit(tres: str) -> str:
    return {"cpu": "CPUs", "mem": "MB of memory", "node": "nodes"}.get(tres, tres)


class _Explainer:
    def __init__(self, standing: Standing, queue: Queue, now: datetime, own: Sequence[Job]) -> None:
        self.standing, self.snap, self.queue, self.now, self.own = standing, standing.snapshot, queue, now, own
        self.zone = self.snap.zone  # times as the cluster printed them (None: this machine's zone)
        self.hidden = hidden_jobs(self.snap, standing.me)
        self._recovery: dict[int, Recovery] = {}

    def explain(self, job: Job) -> PendingJob:
        if self.standing.algorithm == "pbs":
            return self._pbs(job)
        m = describe(job.reason) if job.reason is not None else None
        place = self.queue.place(job, self.hidden)
        why, moves = self._why(job, m)
        gap = _held_back_by(job, place.just_ahead if place is not None else None)
        if m is not None and m.code == "Priority" and place is not None:
            moves += self._priority_moves(job, place, gap)
        caps = self.snap.capabilities
        note = _factors_note(job, place, gap, caps is None or "factors" in caps, self.snap.source)
        return PendingJob(job, m, why, place, gap, note, self._estimate(job, m), moves, self.zone)

    # -- the reason with this job's numbers --------------------------------------------------

    def _why(self, job: Job, m: Meaning | None) -> tuple[str, tuple[str, ...]]:
        if m is None:
            if self.snap.made_up:
                return "reason unknown (the demo cluster makes up no scheduler reasons)", ()
            return ("reason unknown (the source's squeue has no Reason column: a capture made before fairtop "
                    "asked for it, or slurmrestd)"), ()
        if m.kind == "unknown":
            return f"Slurm's reason is {job.reason!r} (a reason fairtop does not know; shown as printed).", ()
        text = f"{m.code}: {m.sentence}"
        moves = [m.move] if m.move else []
        if m.kind == "hold":
            text += f" (a held job has priority {job.priority if job.priority is not None else 'unknown'})"
            if m.code == "JobHeldUser":
                moves = [f"releasing it: scontrol release {job.job_id}"]
        elif m.kind == "dependency" and job.dependency:
            text += f": {_dependency_words(job.dependency)}"
        elif m.kind == "begin":
            at = job.eligible_time or job.start_time
            text += f": it may start from {at.astimezone(self.zone):%Y-%m-%d %H:%M}" if at is not None else \
                " (its begin time is not in the source)"
            moves = [f"its begin time coming, or scontrol update jobid={job.job_id} starttime=now"]
        elif m.kind == "partition":
            text += f" (partition {job.partition})"
        elif m.kind == "nodes" and m.detail:
            text += f" ({m.detail.replace('UnavailableNodes:', 'unavailable nodes: ')})"
        elif m.kind == "queue" and m.detail:
            text += f" (Slurm's words: {m.detail!r})"
        if job.req_nodes:
            text += f"; it asks for nodes {job.req_nodes} by name"
        if m.kind == "limit":
            specific, more, alone = self._limit(job, m)
            if specific:  # the job's own numbers say it better than the general sentence
                text = f"{m.code}: {specific}" if alone else f"{text}: {specific}"
            moves = more or moves
        return text + ".", tuple(moves)

    def _limit(self, job: Job, m: Meaning) -> tuple[str, list[str], bool]:
        """The limit's own numbers in words, the moves they give, and whether the words stand
        alone (True) or follow the general sentence."""
        parts = m.limit
        if m.code.startswith("QOS") or (parts is not None and parts.scope == "qos") or "PerAccount" in m.code:
            running = sum(1 for j in self.own if j.state == "RUNNING" and j.qos is not None and j.qos == job.qos)
            qos = f"QOS {job.qos}" if job.qos else "its QOS"
            counted = f"you run {running:,} job{'s' if running != 1 else ''} in {qos}; " if job.qos else ""
            return f"{counted}fairtop does not read the QOS's limits (sacctmgr show qos shows them)", [], False
        if parts is not None and parts.limit == "GrpTRESMins":
            return self._budget(job, parts.tres)
        name = parts.limit if parts is not None else _COUNT_LIMITS.get(m.code)
        if name is None:
            return "", [], False
        tres = parts.tres if parts is not None else ""
        found = self._limit_on_path(job, name, tres)
        if found is None:
            return self._no_limit(name), [], False
        if not tres:
            jobs = "job" if found.used == 1 else "jobs"
            return (f"{_whose(found.account, found.user)} has {found.used:,} {jobs} counted against its "
                    f"{name}={found.limit:,}"), [], True
        need = _job_tres(job, tres)
        asks = f"; this job asks for {need:,.0f} more" if need is not None else ""
        return (f"{_whose(found.account, found.user)} has {found.used:,} of its {found.limit:,} {_unit(found.tres)} "
                f"in use by running jobs ({name}={found.tres}={found.limit:,}){asks}"), [], True

    def _no_limit(self, name: str) -> str:
        if not self.snap.limits and not self.snap.budgets:
            return "the limit and its use are unknown (the source has no scontrol show assoc_mgr output)"
        return f"fairtop sees no {name} on its association's path (it may be set on a partition's association)"

    def _limit_on_path(self, job: Job, name: str, tres: str) -> AssocLimit | None:
        for account, user in _path(self.standing, job):
            for lim in self.snap.limits:
                if (lim.account, lim.user, lim.name) == (account, user, name) and \
                        (not tres or _tres_match(lim.tres, tres)) and lim.partition in ("", job.partition):
                    return lim
        return None

    def _budget(self, job: Job, tres: str) -> tuple[str, list[str], bool]:
        found: list[Budget] = []
        for account, user in _path(self.standing, job):
            found += [b for b in self.snap.budgets
                      if (b.account, b.user) == (account, user) and _tres_match(b.tres, tres)]
        if not found:
            return self._no_limit("GrpTRESMins"), [], False
        spent = [b for b in found if b.remaining_minutes is not None and b.remaining_minutes <= 0]
        b = spent[0] if spent else found[0]
        whose = _whose(b.account, b.user)
        if b.used_minutes is None:
            return (f"{whose}'s GrpTRESMins is {b.limit_minutes:,} {b.tres}-minutes; its use is unknown (sshare "
                    "prints only the limit; scontrol show assoc_mgr has the use)"), [], False
        left = max(b.limit_minutes - b.used_minutes, 0)
        text = (f"{whose}'s allocation is spent: {left:,} of {b.limit_minutes:,} {b.tres}-minutes left "
                f"(GrpTRESMins={b.tres}={b.limit_minutes:,}, {b.used_minutes:,} used)")
        top_up = b.used_minutes - b.limit_minutes + 1
        if top_up <= 0:
            return text, [], True
        moves = [f"a top-up: GrpTRESMins raised by at least {top_up:,} {b.tres}-minutes, above the {b.used_minutes:,} "
                 "used (Slurm holds jobs while the use is at or over the limit)"]
        per_s, limit_s = _job_tres(job, b.tres), job.time_limit_s
        if per_s is not None and limit_s:
            need = math.ceil(per_s * limit_s / 60)
            moves[0] += (f"; with AccountingStorageEnforce=safe, {top_up + need:,}, so this job's {need:,} "
                         f"{b.tres}-minutes (its {per_s:,.0f} {b.tres} x its time limit) fit too")
        hl = self.snap.settings.decay_half_life_s
        if hl > 0:
            when = self.snap.taken_at + timedelta(seconds=hl * math.log2(b.used_minutes / b.limit_minutes))
            on = when.astimezone(self.zone)
            moves.append(f"without a top-up, decay: the {b.used_minutes:,} used fall below {b.limit_minutes:,} around "
                         f"{on:%Y-%m-%d %H:%M} (fairtop's reckoning from PriorityDecayHalfLife, "
                         "if nothing more is charged and the QOS has no NoDecay)")
        return text, moves, True

    # -- Priority: the job ahead and fairshare's recovery ------------------------------------

    def _priority_moves(self, job: Job, place: QueuePlace, gap: FactorGap | None) -> tuple[str, ...]:
        ahead = place.just_ahead
        if ahead is None or job.priority is None or ahead.priority is None:
            return ()
        if ahead.user == job.user:
            return (f"the job just ahead ({ahead.job_id}) is your own: your fairshare moves both alike",)
        need = ahead.priority - job.priority + 1  # a tie keeps the job ahead in front (earlier submit or id)
        weight = self.snap.settings.weight_fairshare
        row = _assoc_row(self.standing, job)
        res = self.standing.fairshare
        if not weight or row is None or res is None:
            return ()
        now_fs = float(res.fairshare[row])
        target = now_fs + need / weight
        head = (f"passing job {ahead.job_id} (priority {ahead.priority:,}, {need:,} above this job's "
                f"{job.priority:,} counting the tie) takes a fairshare factor of {target:.4f} (now {now_fs:.4f}, "
                f"PriorityWeightFairshare={weight:,})")
        if not math.isfinite(now_fs) or target > 1:
            return (head + ": more than fairshare alone can give",)
        from tui.analysis.planner import day_reached, recovery  # the planner's recovery, only when asked

        rec = self._recovery.get(row)
        if rec is None:  # one curve per association, whatever the target
            rec = self._recovery[row] = recovery(self.standing, row, half_lives=8, points=65)
        day = day_reached(rec, target)
        if day is None or rec.start is None:
            return (head + f": not reached within {rec.days[-1]:.0f} days if you run nothing more",)
        return (head + f": around {rec.date_at(day).astimezone(self.zone):%Y-%m-%d %H:%M} if you run nothing more and "
                f"job {ahead.job_id} keeps its priority (fairtop's projection, not the scheduler's)",)

    # -- PBS Professional: its comment and estimated.start_time -------------------------------

    def _pbs(self, job: Job) -> PendingJob:
        """A PBS job: its ``comment`` as PBS printed it, with words where it is a known message;
        no place in line (PBS sorts by its own job_sort_key/formula, which fairtop does not read)."""
        read = self.snap.taken_at
        as_of = f"read {read.astimezone(self.zone):%H:%M:%S}, {_age(max((self.now - read).total_seconds(), 0.0))} ago"
        moves: tuple[str, ...]
        if job.reason is None:
            m, moves = None, ()
            why = ("PBS printed no comment for it (the scheduler writes one when it considers the job; a job "
                   "submitted held, qsub -h, gets none).")
        else:
            m = describe_pbs(job.reason)
            why = f"PBS says: {job.reason!r}"
            unknown = " (a comment fairtop does not know; shown as printed)."
            why += f": {m.sentence}." if m.kind != "unknown" else unknown
            moves = (f"releasing it: qrls {job.job_id}",) if m.kind == "hold" else ((m.move,) if m.move else ())
        at = job.start_time
        if at is None:
            estimate = ("Start estimate: unknown: PBS printed no estimated.start_time (pbs_sched sets one only for "
                        f"the jobs it plans ahead: strict_ordering, or backfill of starving jobs; {as_of}).")
        else:
            nodes = f" on {job.sched_nodes}" if job.sched_nodes else ""
            at = at.astimezone(self.zone)
            estimate = (f"Start estimate (PBS's, qstat -f estimated.start_time): {at:%Y-%m-%d %H:%M:%S}"
                        f"{nodes} ({as_of}).")
        note = "Place in line: not shown (PBS orders jobs by its own job_sort_key or job_sort_formula)."
        return PendingJob(job, m, why, None, None, note, estimate, moves, self.zone)

    # -- the scheduler's estimate -----------------------------------------------------------

    def _estimate(self, job: Job, m: Meaning | None) -> str:
        read = self.snap.taken_at
        age = max((self.now - read).total_seconds(), 0.0)
        as_of = f"read {read.astimezone(self.zone):%H:%M:%S}, {_age(age)} ago"
        if m is not None and m.kind == "begin":
            return f"Start estimate: none yet (squeue's StartTime is its begin time until it is eligible; {as_of})."
        at = job.start_time
        if at is None:
            return ("Start estimate: the scheduler gives none (backfill has not planned it: it cannot start before "
                    f"its reason clears, or lies beyond bf_window; {as_of}).")
        nodes = f" on {job.sched_nodes}" if job.sched_nodes else ""
        stale = " (already past: the estimate is older than it looks, or the job is about to start)" \
            if at < read else ""
        shown = at.astimezone(self.zone)
        return (f"Start estimate (the scheduler's, squeue --start): {shown:%Y-%m-%d %H:%M:%S}{nodes}{stale} "
                f"({as_of}).")


_COUNT_LIMITS = {"AssocGrpJobsLimit": "GrpJobs", "AssocGrpSubmitJobsLimit": "GrpSubmitJobs",
                 "AssocMaxJobsLimit": "MaxJobs", "AssocMaxSubmitJobLimit": "MaxSubmitJobs",
                 "AssociationJobLimit": "MaxJobs"}


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _dependency_words(dep: str) -> str:
    """``afterok:12(unfulfilled),afterany:13(unfulfilled)`` -> "job 12 must end successfully
    (not yet), job 13 must end (not yet)"; anything else as printed."""
    out = []
    for item in dep.replace("?", ",").split(","):
        kind, _, rest = item.partition(":")
        state = ""
        if rest.endswith(")") and "(" in rest:
            rest, _, state = rest[:-1].partition("(")
        words = _DEPENDS.get(kind)
        if words is None:
            return f"its dependency is {dep!r}"
        if kind == "singleton":
            out.append(f"other jobs of the same name must {words}")
            continue
        jobs = " and ".join(f"job {j.split('+')[0]}" for j in rest.split(":") if j)
        out.append(f"{jobs} must {words}" + {"unfulfilled": " (not yet)", "failed": " (it cannot now)"}.get(state, ""))
    sep = " or " if "?" in dep else ", "
    return sep.join(out) + f" (squeue: {dep})"


def _held_back_by(job: Job, ahead: Job | None) -> FactorGap | None:
    """The part that gives the job ahead the most over this one (NICE counts against its owner)."""
    if ahead is None or not job.factors or not ahead.factors:
        return None
    best: FactorGap | None = None
    best_gap = 0.0
    for name in sorted(set(job.factors) | set(ahead.factors)):
        mine, theirs = job.factors.get(name, 0.0), ahead.factors.get(name, 0.0)
        gap = (mine - theirs) if name == "NICE" else (theirs - mine)
        if gap > best_gap:
            best, best_gap = FactorGap(name, mine, theirs), gap
    return best


def _factors_note(job: Job, place: QueuePlace | None, gap: FactorGap | None, read: bool = True,
                  source: str = "") -> str:
    if not read:  # slurmrestd's jobs carry the priority but not its parts
        prio = f"Priority {job.priority:,}" if job.priority is not None else "Priority unknown"
        return f"{prio}; its parts: unknown ({source or 'this source'} gives no sprio parts)."
    if not job.factors:
        return ("Priority parts: unknown (sprio lists no line for it: sprio shows only jobs that may start, "
                "not held ones, nor those before their begin time or dependency).")
    parts = ", ".join(f"{FACTOR_WORDS.get(k, k.lower())} {v:,.0f}" for k, v in job.factors.items() if v)
    text = f"Priority {job.priority:,} (sprio: {parts or 'all parts 0'})" if job.priority is not None else \
        f"Priority parts (sprio): {parts or 'all 0'}"
    ahead = place.just_ahead if place is not None else None
    if gap is not None and ahead is not None:
        text += (f"; against job {ahead.job_id} just ahead (priority {ahead.priority:,}), {gap.words} holds it "
                 f"back most: {gap.mine:,.0f} against {gap.theirs:,.0f}" if ahead.priority is not None else "")
    elif ahead is not None and not ahead.factors:
        text += f"; the parts of job {ahead.job_id} just ahead are unknown (sprio does not list it)"
    return text + "."


def explain_pending(standing: Standing, jobs: Sequence[Job] | None = None, queue: Queue | None = None,
                    now: datetime | None = None) -> list[PendingJob]:
    """Every pending job of ``standing.me`` explained, in Slurm's queue order (place first).

    ``jobs``: the user's own jobs when the caller grouped them (None: read from the snapshot);
    ``queue``: the snapshot's :class:`Queue` when the caller explains many users (built here
    otherwise, only if the user has a pending job); ``now``: for the estimate's age.
    """
    me = standing.me
    own = [j for j in (standing.snapshot.jobs if jobs is None else jobs) if j.user == me]
    mine = [j for j in own if j.state == "PENDING"]
    if not mine:
        return []
    queue = queue if queue is not None else Queue.of_snapshot(standing.snapshot)
    ex = _Explainer(standing, queue, now or datetime.now(timezone.utc), own)
    out = [ex.explain(j) for j in mine]
    big = np.iinfo(np.int64).max
    never = datetime.max.replace(tzinfo=timezone.utc)
    out.sort(key=lambda p: (p.meaning is None or p.meaning.kind != "queue",  # in line first, front first
                            p.place.ahead if p.place is not None and p.place.ahead is not None else big,
                            p.job.start_time or never, -(p.job.priority or 0)))
    return out


def pending_summary(explained: Sequence[PendingJob]) -> str:
    """The summary line's part: "1 pending job: 37th in burn, held back by fairshare; the
    scheduler estimates 14:20"; with several, the one nearest the front."""
    if not explained:
        return "no pending jobs"
    if len(explained) == 1:
        return f"1 pending job: {explained[0].short()}"
    return f"{len(explained):,} pending jobs, the nearest: {explained[0].short()}"
