"""The ledger through a PostgreSQL fail-over, as a scenario the test and the bench both run: a
primary and its synchronous streaming replica on 127.0.0.1, the service on a multi-host DSN
(``target_session_attrs=read-write``), clients pre-debiting and debiting, the primary's machine
"dies" (every process of it SIGKILLed) and the replica is promoted; the service is not restarted.

What the clients saw acknowledged is then compared with the promoted database, and the time
clients were refused is measured.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from tui.allocations.client import AllocationClient, ApiError, ApiUnavailable
from tui.allocations.ledger import open_ledger

from .services import SUPER, PgCluster, Server

REPLICA = "fairtop_replica"
#: One allocation that runs out during the run (402s: the no-overdraft rule is exercised), one
#: that does not; clients alternate between them.
TIGHT, AMPLE = (7401, 400), (7402, 10**7)


@dataclass
class Pair:
    """A primary and its synchronous replica; ``dsn`` names both, for whichever takes writes."""

    primary: PgCluster
    replica: PgCluster
    dsn: str = ""
    url: str = ""  # the same as a URL (the code before psycopg_pool took only URLs)

    @classmethod
    def start(cls) -> Pair:
        primary = PgCluster().start(f"-c synchronous_standby_names={REPLICA}")
        replica = PgCluster()
        try:
            replica.start_standby_of(primary, REPLICA)
        except BaseException:
            primary.stop()
            replica.stop()
            raise
        pair = cls(primary, replica)
        pair.dsn = (f"host=127.0.0.1,127.0.0.1 port={primary.port},{replica.port} user=postgres dbname=ledger"
                    " target_session_attrs=read-write")
        pair.url = (f"postgresql://postgres@127.0.0.1:{primary.port},127.0.0.1:{replica.port}/ledger"
                    "?target_session_attrs=read-write")
        with psycopg.connect(primary.url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE ledger")
        pair.wait_in_sync()
        return pair

    def wait_in_sync(self, timeout: float = 30.0) -> None:
        """Until the replica is the primary's synchronous standby and has replayed all it wrote."""
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.primary.url, autocommit=True) as conn:
            while conn.execute("SELECT sync_state = 'sync' AND replay_lsn >= pg_current_wal_lsn()"
                               " FROM pg_stat_replication WHERE application_name = %s",
                               (REPLICA,)).fetchone() != (True,):
                assert time.monotonic() < deadline, "the replica never became synchronous"
                time.sleep(0.05)

    def stop(self) -> None:
        self.primary.stop()
        self.replica.stop()


@dataclass
class Seen:
    """What the clients saw."""

    predebits: dict[str, int] = field(default_factory=dict)  # acknowledged: job id -> minutes
    debits: dict[str, int] = field(default_factory=dict)  # acknowledged: job id -> billed minutes
    overdrafts: int = 0
    refused: list[float] = field(default_factory=list)  # when a client got 503 or no answer
    answered: list[tuple[float, float]] = field(default_factory=list)  # (sent, acknowledged)
    unsettled: int = 0  # debits still refused when the run ended
    crashed: float = 0.0  # when the fault began
    promoted: float = 0.0  # when the database could commit again
    events: tuple[str, str] = ("primary killed", "replica promoted")
    late: list[int] = field(default_factory=list)  # statuses of a burst of reads after the run

    def report(self) -> str:
        """The refusal window and the counts, in seconds from the primary's death."""
        def at(t: float) -> str:
            return f"{t - self.crashed:+.2f} s"

        after = [done for _, done in self.answered if done > self.promoted]
        spanning = [(done - sent, sent) for sent, done in self.answered if sent < self.crashed < done]
        slowest = max(spanning, default=(0.0, self.crashed))
        window = (f"refused from {at(min(self.refused))} to {at(max(self.refused))} "
                  f"({max(self.refused) - min(self.refused):.2f} s)" if self.refused else "none refused")
        return (f"{self.events[0]} at 0, {self.events[1]} at {at(self.promoted)}; {len(self.refused)} refusals, "
                f"{window}; first acknowledgement after that at {at(min(after)) if after else 'never'}; "
                f"the longest request across the kill waited {slowest[0]:.2f} s (sent at {at(slowest[1])}); "
                f"{len(self.predebits)} pre-debits and {len(self.debits)} debits acknowledged, "
                f"{self.overdrafts} refused as overdrafts")


def _is_refusal(exc: Exception) -> bool:
    return isinstance(exc, ApiUnavailable) or (isinstance(exc, ApiError) and exc.status == 503)


async def primary_dies(pair: Pair, seen: Seen) -> None:
    """The primary's machine dies; the replica is promoted at once."""
    seen.crashed = time.monotonic()
    pair.primary.crash()
    await asyncio.to_thread(pair.replica.promote)
    seen.promoted = time.monotonic()


Fault = Callable[[Pair, Seen], Awaitable[None]]


async def drive(url: str, pair: Pair, clients: int, before_s: float, after_s: float,
                fault: Fault = primary_dies, pause_s: float = 0.0) -> Seen:
    """``clients`` clients, each pre-debiting a job and then debiting it (a refused debit is sent
    again until acknowledged, as an epilog would); the ``fault`` comes after ``before_s`` seconds
    (by default the primary dies and the replica is promoted at once); the clients go on
    ``after_s`` seconds after the database commits again. A client refused waits ``pause_s``
    before its next request (as a hook sent back by Retry-After)."""
    seen = Seen()
    stop = asyncio.Event()

    async def debit(api: AllocationClient, job_id: str, actual: int) -> bool:
        sent = time.monotonic()
        try:
            rec = await api.complete(job_id, "completed", actual)
        except (ApiUnavailable, ApiError) as exc:
            if not _is_refusal(exc):
                raise
            seen.refused.append(time.monotonic())
            await asyncio.sleep(pause_s)
            return False
        seen.answered.append((sent, time.monotonic()))
        seen.debits[job_id] = rec.billed or 0
        return True

    async def client(n: int) -> None:
        gid = (TIGHT, AMPLE)[n % 2][0]
        pending: list[tuple[str, int]] = []  # debits not yet acknowledged
        i = 0
        async with AllocationClient(url, token=SUPER, timeout=10, max_retries=2) as api:
            while not stop.is_set():
                if pending:
                    if await debit(api, *pending[0]):
                        pending.pop(0)
                    continue
                job_id, minutes = f"f-{n}-{i}", 5 + (n + i) % 11
                i += 1
                sent = time.monotonic()
                try:
                    rec = await api.predebit(job_id, 6000 + n, gid, "cpu", minutes)
                except (ApiUnavailable, ApiError) as exc:
                    if _is_refusal(exc):
                        seen.refused.append(time.monotonic())
                        await asyncio.sleep(pause_s)
                    elif isinstance(exc, ApiError) and exc.status == 402:
                        seen.overdrafts += 1
                    else:
                        raise
                    continue
                assert rec.job_id == job_id and rec.minutes == minutes
                seen.answered.append((sent, time.monotonic()))
                seen.predebits[job_id] = minutes
                pending.append((job_id, minutes - i % 4))  # some jobs use less than they held
            deadline = time.monotonic() + 20
            while pending and time.monotonic() < deadline:
                if await debit(api, *pending[0]):
                    pending.pop(0)
            seen.unsettled += len(pending)

    tasks = [asyncio.create_task(client(n)) for n in range(clients)]
    await asyncio.sleep(before_s)
    await fault(pair, seen)
    await asyncio.sleep(after_s)
    stop.set()
    await asyncio.gather(*tasks)
    # a calm second first: the service lets a burst in whole again (its admission), so that a 503
    # here is a dead connection handed out, not a refusal of what it measured it cannot answer in time
    await asyncio.sleep(1.5)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {SUPER}"}, timeout=10) as http:
        seen.late = [r.status_code for r in await asyncio.gather(*(http.get("/alloc") for _ in range(clients)))]
    return seen


def allocate(url: str) -> list[int]:
    """The two allocations the clients use (their ids)."""
    async def go() -> list[int]:
        ids = []
        async with AllocationClient(url, token=SUPER) as api:
            for gid, credit in (TIGHT, AMPLE):
                project = await api.create_project(f"fo{gid}", gid)
                alloc = await api.create_allocation(project.id, "cpu", "startup", "2000-01-01", "2999-12-31")
                await api.credit(alloc.id, credit)
                ids.append(alloc.id)
        return ids

    return asyncio.run(go())


@dataclass
class Landed:
    """What the promoted database holds."""

    jobs: dict[str, tuple[int, str, int | None]]  # job id -> (minutes, status, billed)
    allocations: list[dict]
    audit: list[dict]


def landed(dsn: str) -> Landed:
    ledger = open_ledger(dsn)
    try:
        jobs = {j["job_id"]: (j["minutes"], j["status"], j["billed"]) for j in ledger.jobs(None, limit=10**7)}
        return Landed(jobs, ledger.allocations(None), ledger.audit())
    finally:
        ledger.close()


def run(tokens: Path, clients: int, before_s: float, after_s: float, code: Path | None = None,
        url_form: bool = False) -> tuple[Seen, Landed]:
    """Start the pair and the service (from the checkout ``code``; on the DSN as a URL with
    ``url_form``), drive the clients through the fail-over, read the result."""
    pair = Pair.start()
    try:
        server = Server(pair.url if url_form else pair.dsn, ["--auth", "token", "--tokens", str(tokens)],
                        **({"code": code} if code else {})).start()
        try:
            allocate(server.url)
            seen = asyncio.run(drive(server.url, pair, clients, before_s, after_s))
            assert server.proc is not None and server.proc.poll() is None, "the service died"
        finally:
            server.stop()
        return seen, landed(pair.dsn)
    finally:
        pair.stop()


def verdict(seen: Seen, db: Landed) -> dict[str, int]:
    """What went wrong, counted (all 0 when the fail-over lost nothing): acknowledged pre-debits
    missing or with other minutes, acknowledged debits missing or billed otherwise, allocations
    whose totals are not the sum of their jobs (a record twice) or overdrawn, debits never settled."""
    return {
        "lost pre-debits": sum(db.jobs.get(j, (None,))[0] != m for j, m in seen.predebits.items()),
        "lost debits": sum(db.jobs.get(j, (0, "", 0))[1:] != ("completed", b) for j, b in seen.debits.items()),
        "inconsistent allocations": len(db.audit),
        "overdrawn allocations": sum(a["balance"] < 0 for a in db.allocations),
        "debits never acknowledged": seen.unsettled,
        "debited minutes not from completed jobs": abs(
            sum(a["debits"] for a in db.allocations)
            - sum(b or 0 for _, status, b in db.jobs.values() if status == "completed")),
    }
