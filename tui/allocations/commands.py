"""``fairtop allocations hook submit|prolog|epilog``, ``publish-balances`` and ``site-factor``.

Where the ledger is comes in as a :class:`Connection` (the CLI builds it from flags, the
environment and the config). Slurm's hooks give the job through the environment it sets
(``SLURM_JOB_ID``, ``SLURM_CLUSTER_NAME``; cli_filter: the options on stdin as ``key=value``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO

from tui.allocations import slurm_hooks as hooks
from tui.allocations.client import AllocationClient, ApiUnavailable
from tui.allocations.errors import AllocationError
from tui.allocations.records import AllocationRecord, build
from tui.engine.site_factor import SiteFactorParams
from tui.sources.commands import run

__all__ = ["Connection", "hook", "publish_balances", "site_factor"]


@dataclass(frozen=True)
class Connection:
    """The service (``url`` with a token or MUNGE) or the embedded ledger (``db``)."""

    url: str | None = None
    db: str | None = None
    token: str | None = None
    munge: bool = False
    timeout: float = 10.0
    ca_file: str | None = None
    """The CAs an https service is verified against (None: the system's)."""

    def records(self) -> list[AllocationRecord]:
        """Every allocation the caller may see."""
        if self.url:
            import asyncio

            async def fetch() -> list[AllocationRecord]:
                async with AllocationClient(self.url or "", token=self.token, munge=self.munge,
                                            timeout=self.timeout, ca_file=self.ca_file) as api:
                    return await api.allocations()

            return asyncio.run(fetch())
        if self.db:
            from tui.allocations.balance import from_ledger

            return [build(AllocationRecord, r) for r in from_ledger(self.db)]
        raise AllocationError("no allocation ledger configured: set allocation_url or ledger in the config "
                              "(or $FAIRTOP_ALLOC_URL / $FAIRTOP_ALLOC_DB)")


def _options(stream: IO[str]) -> dict[str, str]:
    out = {}
    for line in stream:
        key, sep, value = line.rstrip("\n").partition("=")
        if sep and key:
            out[key.strip()] = value.strip()
    return out


def hook(step: str, conn: Connection, env: Mapping[str, str] = os.environ, stdin: IO[str] = sys.stdin) -> int:
    """Run one Slurm hook; the exit status Slurm sees.

    submit: 1 refuses the submission (the reason is on stderr, the submitter's terminal). prolog:
    a refused job is cancelled (reason in its AdminComment) and 0 returned; 1 when the service did
    not answer, so slurmctld requeues the job and tries again later. epilog: 1 when the debit could
    not be recorded (the hold stays on the allocation until an administrator resolves the job).
    """
    if not conn.url:
        print("fairtop: the Slurm hooks need the allocation service (allocation_url or $FAIRTOP_ALLOC_URL)",
              file=sys.stderr)
        return 1
    cluster = env.get("SLURM_CLUSTER_NAME", "")
    try:
        if step == "submit":
            job = hooks.submitted_job(_options(stdin), os.getuid(), os.getgid(), hooks.partition_time_limit)
            note = hooks.run_hook(lambda api: hooks.submit_check(api, job), conn.url, conn.token, conn.munge,
                                  conn.timeout, conn.ca_file)
        else:
            job_id = env.get("SLURM_JOB_ID", "")
            if not job_id.isdigit():
                print(f"fairtop: {step}: no SLURM_JOB_ID in the environment (run by slurmctld?)", file=sys.stderr)
                return 1
            job = hooks.job_from_scontrol(job_id)
            fn = hooks.prolog if step == "prolog" else hooks.epilog
            note = hooks.run_hook(lambda api: fn(api, job, cluster), conn.url, conn.token, conn.munge, conn.timeout,
                                  conn.ca_file)
    except hooks.Refused as exc:
        if step == "submit":
            print(f"fairtop: job refused: {exc}", file=sys.stderr)
            return 1
        reason = f"fairtop: {exc}"
        print(reason, file=sys.stderr, flush=True)  # before scancel, which may end this script
        run(["scontrol", "update", f"job={job.job_id}", f"AdminComment={reason}"], check=False)
        run(["scancel", job.job_id], check=False)
        return 0
    except ApiUnavailable as exc:
        if step == "submit":  # the prolog still checks; do not block submissions on an outage
            print(f"fairtop: balance not checked: {exc}", file=sys.stderr)
            return 0
        print(f"fairtop: {step}: {exc}", file=sys.stderr)
        return 1
    print(note, file=sys.stderr if step == "submit" else sys.stdout)
    return 0


def publish_balances(conn: Connection, path: str, every_s: float, once: bool = False, by_group: bool = False) -> int:
    """``fairtop allocations publish-balances``: the balances file for cli_filter.lua (with
    ``by_group``, the folder ``PATH.d/`` of one file per gid), every ``every_s`` seconds (once with
    ``once``); exit 1 when a single write could not be made, or a file's group could not be set."""
    from tui.allocations.balance_file import GroupNotSettable, publish, publish_every, retire_single_file

    if every_s <= 0:
        print(f"fairtop: --every must be > 0, got {every_s:g}", file=sys.stderr)
        return 2
    if by_group and retire_single_file(path):
        print(f"fairtop: removed {path} (every user could read it); the balances are now in {path}.d/",
              file=sys.stderr)
    try:
        if once:
            publish(path, conn.records(), time.time(), by_group)
        else:
            publish_every(path, conn.records, every_s, log=lambda line: print(line, file=sys.stderr, flush=True),
                          by_group=by_group)
    except GroupNotSettable as exc:
        print(f"fairtop: balances not published: {exc}", file=sys.stderr)
        return 1
    except (AllocationError, ApiUnavailable, OSError) as exc:
        if not once:
            raise
        print(f"fairtop: balances not published: {exc}", file=sys.stderr)
        return 1
    return 0


def site_factor(conn: Connection, params: SiteFactorParams, apply_them: bool, now: datetime | None = None) -> str:
    """The pending jobs' site factors (and, with ``apply_them``, set them in Slurm)."""
    from tui.allocations import site_factor_jobs as sf

    now = now or datetime.now(timezone.utc)
    jobs = sf.job_factors(sf.pending_jobs(), conn.records(), now, params)
    if apply_them:
        sf.apply(j for j in jobs if j.factor is not None)
    return sf.format_factors(jobs, apply_them)

