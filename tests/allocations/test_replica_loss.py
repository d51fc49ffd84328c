"""The ledger when its synchronous standby dies and the primary lives (issue 26): with
``synchronous_standby_names`` naming the only standby, every commit on the primary then waits
until it is back, for ever. 32 clients pre-debit and debit through the real service; the replica's
every process is SIGKILLed, and started again 8 s later.

Meanwhile a write is answered within the service's commit timeout (the first ones, waiting in
SyncRep, are cancelled and answered 503; then the service refuses writes at once, 503 with
Retry-After) and ``/health`` answers 503 saying the standby is missing. Once the replica is back
the service serves by itself. A write refused after it committed on the primary alone is not
acknowledged, and its retry does not land twice: 0 lost, 0 doubled, 0 overdrawn, on the primary
and on the replica once it caught up. The figures are printed (``-s``; the docs quote them).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.needs import needs, program, root
from tui.allocations.commit_guard import COMMIT_TIMEOUT_S

from .failover import REPLICA, AMPLE, Pair, Seen, allocate, drive, landed, verdict
from .services import SUPER, Server, pg_bindir

CLIENTS = 32
DOWN_S = 8.0  # how long the replica stays dead

pytestmark = needs(root("the PostgreSQL primary and replica run as 'postgres'"),
                   None if pg_bindir() else "no PostgreSQL (apt-get install postgresql)",
                   program("runuser", "util-linux"))


@dataclass
class Answer:
    status: int
    seconds: float
    retry_after: str | None
    body: dict


@dataclass
class Outage:
    """Single requests sent while the replica was dead, as the hooks and a monitor send them."""

    url: str
    answers: dict[str, Answer] = field(default_factory=dict)  # the last of each name
    slowest: float = 0.0  # the longest any request waited
    healthy_after_s: float = -1.0  # from the replica's start to the first /health 200

    async def ask(self, name: str, method: str, path: str, body: dict | None = None) -> None:
        async with httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {SUPER}"},
                                     timeout=30) as http:
            began = time.monotonic()
            resp = await http.request(method, path, json=body)
            self.answers[name] = Answer(resp.status_code, time.monotonic() - began,
                                        resp.headers.get("retry-after"), resp.json())
            self.slowest = max(self.slowest, self.answers[name].seconds)

    async def predebit(self, name: str) -> None:
        """A pre-debit sent again while the service refuses it as overloaded (its admission,
        which the clients' load may trip): the answer timed is the ledger's."""
        body = {"job_id": name, "uid": 6999, "gid": AMPLE[0], "resource": "cpu", "minutes": 1}
        while True:
            await self.ask(name, "POST", "/job", body)
            if "overloaded" not in self.answers[name].body.get("error", ""):
                return
            await asyncio.sleep(0.05)

    async def replica_dies(self, pair: Pair, seen: Seen) -> None:
        """The fault: the replica killed, asked meanwhile, started again after ``DOWN_S``."""
        seen.events = ("replica killed", "replica started again")
        seen.crashed = time.monotonic()
        pair.replica.crash()
        first = asyncio.create_task(self.predebit("first"))  # waits in SyncRep until the commit timeout
        await asyncio.sleep(COMMIT_TIMEOUT_S + 1.5)
        await self.ask("health", "GET", "/health")
        await self.predebit("stalled")
        await first
        await asyncio.sleep(max(0.0, seen.crashed + DOWN_S - time.monotonic()))
        await asyncio.to_thread(pair.replica.start_again)
        seen.promoted = time.monotonic()
        while time.monotonic() < seen.promoted + 10:
            await self.ask("health again", "GET", "/health")
            if self.answers["health again"].status == 200:
                self.healthy_after_s = time.monotonic() - seen.promoted
                break
            await asyncio.sleep(0.05)


def test_replica_death_refuses_writes_in_seconds_and_loses_nothing(tokens_file: Path) -> None:
    pair = Pair.start()
    try:
        server = Server(pair.dsn, ["--auth", "token", "--tokens", str(tokens_file)]).start()
        try:
            allocate(server.url)
            outage = Outage(server.url)
            seen = asyncio.run(drive(server.url, pair, CLIENTS, before_s=2.0, after_s=5.0,
                                     fault=outage.replica_dies, pause_s=0.5))
            health_after = httpx.get(server.url + "/health", timeout=10)
            assert server.proc is not None and server.proc.poll() is None, "the service died"
        finally:
            server.stop()
        on_primary = landed(pair.dsn)
        pair.wait_in_sync()
        on_replica = landed(f"host=127.0.0.1 port={pair.replica.port} user=postgres dbname=ledger")
    finally:
        pair.stop()
    answers = outage.answers
    print("\n" + seen.report() + f"; {len(on_primary.jobs) - len(seen.predebits)} landed unacknowledged; "
          + "; ".join(f"{name}: {a.status} in {a.seconds:.2f} s" for name, a in answers.items())
          + f"; the slowest of these {outage.slowest:.2f} s; /health 200 again {outage.healthy_after_s:.2f} s"
            " after the replica was started again")
    assert len(seen.predebits) > 100 and len(seen.debits) > 50 and seen.overdrafts > 0
    for db in (on_primary, on_replica):  # 0 lost, 0 twice, 0 overdrawn; the replica caught up
        assert verdict(seen, db) == dict.fromkeys(verdict(seen, db), 0)
    assert on_replica.jobs == on_primary.jobs
    # the write waiting in SyncRep is answered at the commit timeout, the next ones at once
    first, stalled, health = answers["first"], answers["stalled"], answers["health"]
    assert first.status == 503 and outage.slowest < COMMIT_TIMEOUT_S + 1.5, (first, outage.slowest)
    assert stalled.status == 503 and stalled.seconds < 0.5 and stalled.retry_after, stalled
    assert "send it again" in stalled.body["error"], stalled
    assert health.status == 503 and health.seconds < 1.0, health
    assert f"synchronous_standby_names is '{REPLICA}', standbys connected: none" in health.body["error"], health
    # served again by itself, at once (the clients' load still trips the admission now and then)
    assert 0 <= outage.healthy_after_s < 3.0 and health_after.status_code == 200, health_after.text
    assert min(done for _, done in seen.answered if done > seen.promoted) - seen.promoted < 3.0, seen.report()
    assert all(code == 200 for code in seen.late), seen.late
