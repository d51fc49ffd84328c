"""The Slurm side of the ledger: hooks that Slurm runs at submission, job start and job end.

* ``submit`` (a ``cli_filter/lua`` pre_submit hook, run inside ``sbatch``/``salloc``/``srun`` as
  the submitter): a read-only check. A job whose request (CPUs or GPUs x time limit) exceeds what
  is left of its project's active allocation is refused before it reaches slurmctld, with a
  message the submitter reads on their terminal.
* ``prolog`` (``PrologSlurmctld``, run by slurmctld as SlurmUser when a job is allocated): the
  pre-debit, the one race-free check (the ledger serialises pre-debits per allocation). A job
  refused there (402 would overdraw, 404 no allocation) gets the reason in its AdminComment and is
  cancelled before its script starts.
* ``epilog`` (``EpilogSlurmctld``, at the end): the debit of the actual use (elapsed seconds x
  CPUs or GPUs, rounded up to minutes by the ledger); nothing for a node failure.

Why these three and not ``job_submit/lua``: job_submit runs inside slurmctld holding its job
write lock, so an HTTP round trip there stalls every submission on the cluster, and a check at
submission cannot hold credit anyway (jobs wait in the queue for hours). The prolog runs in its
own thread at the moment the credit is really committed; cli_filter gives the submitter the
early, clear refusal. The hooks read the job from ``scontrol show job`` (argument lists, no shell)
and talk to ``fairtop serve-allocations`` with the async client.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import date

from tui.allocations.client import AllocationClient, ApiError, ApiUnavailable, TlsRefused
from tui.allocations.records import AllocationRecord
from tui.sources.commands import run
from tui.sources.slurm_text import parse_tres_counts
from tui.sources.slurm_units import parse_slurm_minutes, parse_slurm_time

__all__ = ["HookJob", "Refused", "job_from_scontrol", "parse_job", "requested_minutes", "ledger_state",
           "submit_check", "prolog", "epilog", "submitted_job", "limit_minutes", "partition_time_limit",
           "NO_LIMIT_MINUTES"]

#: Slurm's job states -> the ledger's end states (anything else that ended counts as failed).
_END_STATES = {"COMPLETED": "completed", "NODE_FAIL": "node_fail", "CANCELLED": "cancelled",
               "PREEMPTED": "cancelled", "DEADLINE": "cancelled"}


class Refused(Exception):
    """The job may not run: the message is for the submitter."""


@dataclass(frozen=True)
class HookJob:
    """What the ledger needs of one Slurm job."""

    job_id: str
    uid: int
    gid: int
    account: str
    cpus: int
    gpus: int
    time_limit_min: int | None
    """None: no limit (UNLIMITED), so the request cannot be bounded."""
    run_seconds: int = 0
    state: str = ""
    exit_code: str = "0:0"
    """``exit:signal`` as scontrol prints it."""
    reason: str = ""

    @property
    def resource(self) -> str:
        return "gpu" if self.gpus > 0 else "cpu"

    @property
    def units(self) -> int:
        """CPUs, or GPUs for a GPU job (the resource its allocation counts)."""
        return self.gpus if self.gpus > 0 else self.cpus


def _id_of(text: str) -> int:
    """``alice(1001)`` -> 1001 (scontrol's UserId/GroupId)."""
    inner = text.rpartition("(")[2].rstrip(")")
    return int(inner)


def parse_job(text: str) -> HookJob:
    """One job of ``scontrol show job -o ID``."""
    fields: dict[str, str] = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep:
            fields.setdefault(key, value)
    if "JobId" not in fields:
        raise ValueError(f"not scontrol show job output: {text[:80]!r}")
    tres = parse_tres_counts(fields.get("TRES", "") or fields.get("ReqTRES", "")) \
        if fields.get("TRES", "(null)") not in ("", "(null)") else {}
    gpus = int(tres.get("gres/gpu", 0))
    minutes = limit_minutes(fields.get("TimeLimit", "UNLIMITED"))
    run_s = parse_slurm_time(fields.get("RunTime", "0")) or 0
    return HookJob(job_id=fields["JobId"], uid=_id_of(fields.get("UserId", "(0)")),
                   gid=_id_of(fields.get("GroupId", "(0)")), account=fields.get("Account", ""),
                   cpus=int(fields.get("NumCPUs", "1") or 1), gpus=gpus, time_limit_min=minutes,
                   run_seconds=run_s, state=fields.get("JobState", ""), exit_code=fields.get("ExitCode", "0:0"),
                   reason=fields.get("Reason", ""))


def job_from_scontrol(job_id: str) -> HookJob:
    out = run(["scontrol", "show", "job", "-o", job_id])
    return parse_job(out.stdout.decode("utf-8", "replace"))


def requested_minutes(job: HookJob) -> int:
    """Resource-minutes a job may use at most: units x time limit (what the prolog holds)."""
    if job.time_limit_min is None:
        raise Refused(f"job {job.job_id} has no time limit (nor does its partition give one): give one "
                      "(sbatch -t) so its cost can be held")
    return job.units * job.time_limit_min


def actual_minutes(job: HookJob) -> int:
    """Resource-minutes used: units x elapsed seconds, rounded up (the ledger's rule)."""
    return math.ceil(job.units * job.run_seconds / 60)


def ledger_state(job: HookJob) -> str:
    """The ledger's end state. During EpilogSlurmctld scontrol prints the job as COMPLETING; then
    the reason and exit code tell: a node failure, a clean exit, a signal (scancel, time limit)."""
    state = job.state.upper()
    if state != "COMPLETING":
        return _END_STATES.get(state, "failed")
    if job.reason in ("NodeDown", "NodeFail", "Node_Fail"):
        return "node_fail"
    status, _, signal = job.exit_code.partition(":")
    if status == "0" and signal in ("", "0"):
        return "completed"
    return "cancelled" if status == "0" else "failed"


def ledger_job_id(cluster: str, job_id: str) -> str:
    """Job ids restart on a new slurmctld state; the cluster name keeps ledger ids unique."""
    return f"{cluster}.{job_id}" if cluster else job_id


def _covering(allocs: list[AllocationRecord], account: str, gid: int, resource: str,
              today: str) -> AllocationRecord | None:
    mine = [a for a in allocs if a.resource == resource and a.start <= today <= a.end]
    by_account = [a for a in mine if a.account == account]
    chosen = by_account or [a for a in mine if a.gid == gid]
    return chosen[0] if chosen else None


async def _project_gid(api: AllocationClient, job: HookJob) -> int:
    """The gid the ledger knows the job's Slurm account by (else the job's own group)."""
    for p in await api.projects():
        if p.account == job.account:
            return p.gid
    return job.gid


async def submit_check(api: AllocationClient, job: HookJob, today: date | None = None) -> str:
    """The submission check: raises :class:`Refused` when the job would overdraw; returns a note."""
    need = requested_minutes(job)
    day = str(today or date.today())
    alloc = _covering(await api.allocations(), job.account, job.gid, job.resource, day)
    if alloc is None:
        raise Refused(f"no active {job.resource} allocation for account {job.account or '?'}: "
                      "ask your project's PI or the allocation office")
    if need > alloc.balance:
        raise Refused(f"allocation {alloc.id} of {alloc.project_name} ({job.resource}) has "
                      f"{alloc.balance:,} {job.resource}-minutes left ({alloc.balance / 60:,.1f} SU); this job may "
                      f"use up to {need:,} ({job.units} x {job.time_limit_min} min). Ask for less time or "
                      "fewer CPUs, or ask for a credit")
    return f"fairtop: job fits: {need:,} of {alloc.balance:,} {job.resource}-minutes left"


async def prolog(api: AllocationClient, job: HookJob, cluster: str = "") -> str:
    """Pre-debit the starting job; :class:`Refused` when the ledger says no."""
    need = requested_minutes(job)
    gid = await _project_gid(api, job)
    try:
        rec = await api.predebit(ledger_job_id(cluster, job.job_id), job.uid, gid, job.resource, need)
    except ApiError as exc:
        if exc.status == 409:  # a requeued job keeps its id: the hold is already there
            return f"job {job.job_id} already pre-debited"
        if exc.status in (402, 404):
            raise Refused(f"refused by the allocation ledger: {exc.message}") from exc
        raise
    return f"job {job.job_id}: pre-debited {need} {job.resource}-minutes, balance {rec.balance}"


async def epilog(api: AllocationClient, job: HookJob, cluster: str = "") -> str:
    """Debit the actual use of the ended job (a job refused at start had no pre-debit: nothing)."""
    state, minutes = ledger_state(job), actual_minutes(job)
    try:
        rec = await api.complete(ledger_job_id(cluster, job.job_id), state, minutes)
    except ApiError as exc:
        if exc.status == 404:
            return f"job {job.job_id}: no pre-debit, nothing to debit"
        raise
    return (f"job {job.job_id}: {state} (Slurm: {job.state}, exit {job.exit_code}, {job.run_seconds} s), "
            f"debited {rec.billed} of {rec.minutes} held {job.resource}-minutes")


#: Slurm's time limits that are no limit: NO_VAL (0xfffffffe minutes, what a job step's options
#: hold: ``2982616-04:14:00``) and INFINITE (0xffffffff).
NO_LIMIT_MINUTES = 0xFFFFFFFE


def limit_minutes(text: str | None) -> int | None:
    """A time limit as Slurm prints or takes it, in minutes; None for none (unset, UNLIMITED,
    NONE, Partition_Limit, NO_VAL, INFINITE)."""
    if not text or text in ("nil", "(null)", "NONE", "Partition_Limit"):
        return None
    minutes = parse_slurm_minutes(text)
    return None if minutes is None or minutes >= NO_LIMIT_MINUTES else minutes


def partition_time_limit(partition: str | None) -> int | None:
    """Minutes a job without ``-t`` gets in ``partition`` (the default partition when None):
    its DefaultTime, else its MaxTime; None when both are unlimited (``scontrol show partition``)."""
    wanted = (partition or "").split(",")[0]
    out = run(["scontrol", "show", "partition", "-o", *([wanted] if wanted else [])], check=False)
    for line in out.stdout.decode("utf-8", "replace").splitlines():
        fields = dict(t.partition("=")[::2] for t in line.split())
        if wanted or fields.get("Default") == "YES":
            return limit_minutes(fields.get("DefaultTime")) or limit_minutes(fields.get("MaxTime"))
    return None


def submitted_job(options: Mapping[str, str], uid: int, gid: int,
                  default_limit: Callable[[str | None], int | None] | None = None) -> HookJob:
    """A job as ``sbatch`` options describe it (cli_filter's ``options`` table, as key=value lines).

    CPUs = ntasks (or nodes, at least 1) x cpus-per-task; GPUs from ``gpus`` or ``gres=gpu:N``.
    Without a time limit of its own the job is judged by what its partition gives it
    (``default_limit(partition)``, e.g. :func:`partition_time_limit`), never by Slurm's NO_VAL."""
    def count(key: str, default: int) -> int:
        text = options.get(key, "")
        return int(text) if text.isdigit() and int(text) > 0 else default

    nodes = count("nodes", 1) if options.get("nodes", "").isdigit() else 1
    cpus = max(count("ntasks", nodes), 1) * count("cpus-per-task", 1)
    gpus = count("gpus", 0)
    for part in options.get("gres", "").split(","):
        bits = part.split(":")
        if bits[0] == "gpu" and bits[-1].isdigit():
            gpus = max(gpus, int(bits[-1]))
    minutes = limit_minutes(options.get("time"))
    if minutes is None and default_limit is not None:
        minutes = default_limit(options.get("partition") or None)
    return HookJob(job_id="(new)", uid=uid, gid=gid, account=options.get("account", ""), cpus=cpus, gpus=gpus,
                   time_limit_min=minutes)


def run_hook(step: Callable[[AllocationClient], Awaitable[str]], url: str, token: str | None, munge: bool,
             timeout: float = 10.0, ca_file: str | None = None) -> str:
    """Run one hook step with a client (sync entry point for the CLI)."""
    async def go() -> str:
        async with AllocationClient(url, token=token, munge=munge, timeout=timeout, max_retries=2,
                                    ca_file=ca_file) as api:
            return await step(api)

    try:
        return asyncio.run(go())
    except TlsRefused:
        raise  # already one line naming the URL and why
    except ApiUnavailable as exc:
        raise ApiUnavailable(f"the allocation service at {url} did not answer: {exc}") from exc
