"""The ledger through a PostgreSQL restart: ``pg_ctl restart -m fast`` under 16 clients
pre-debiting one allocation, the service left running.

Every acknowledged pre-debit is in the ledger once with its minutes, nothing is overdrawn, and once
the database is up again the service answers: a connection that died with the restart is never
handed out again (it was: ``GET /alloc/ID`` answered 503 "terminating connection due to
administrator command" seconds later). The window in which clients were refused is measured
(printed with ``-s``; the README quotes it).
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tui.allocations.client import AllocationClient, ApiError, ApiUnavailable
from tui.allocations.ledger import open_ledger

from .services import SUPER, PgCluster, Server, create_database
from .test_concurrency import _allocation

CLIENTS = 16
CREDIT = 40_000  # about 2/3 of what the clients ask for before the run ends: 402s too


@pytest.fixture()
def own_pg() -> PgCluster:
    """A cluster of this test's own: it is restarted (a shared server must not be)."""
    try:
        cluster = PgCluster().start()
    except Exception as exc:  # noqa: BLE001 - not root, not installed
        pytest.skip(f"needs a PostgreSQL of its own to restart (root and Debian's postgresql): {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


def _restart(cluster: PgCluster) -> tuple[float, float]:
    """``pg_ctl restart -m fast``: when it began and when the server was up again."""
    began = time.monotonic()
    subprocess.run(["runuser", "-u", "postgres", "--", str(cluster.bindir / "pg_ctl"), "-D",
                    str(cluster.dir / "data"), "-l", str(cluster.dir / "log"), "-m", "fast", "-w", "-t", "60",
                    "restart"], check=True, capture_output=True, cwd="/")
    return began, time.monotonic()


async def _run(url: str, cluster: PgCluster, aid: int) -> dict:
    acked: dict[str, int] = {}
    refused: list[float] = []  # when a client got no answer (503 or ApiUnavailable)
    stop = asyncio.Event()

    async def client(n: int) -> None:
        i = 0
        async with AllocationClient(url, token=SUPER, timeout=10, max_retries=2) as api:
            while not stop.is_set():
                job_id, minutes = f"r-{n}-{i}", 5 + (n + i) % 11
                i += 1
                try:
                    rec = await api.predebit(job_id, 6000 + n, 7301, "cpu", minutes)
                except ApiUnavailable:
                    refused.append(time.monotonic())
                    continue
                except ApiError as exc:
                    if exc.status == 503:
                        refused.append(time.monotonic())
                        continue
                    assert exc.status == 402, exc
                    continue
                assert rec.job_id == job_id and rec.minutes == minutes
                acked[job_id] = minutes
                await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(client(n)) for n in range(CLIENTS)]
    await asyncio.sleep(1.5)
    began, up = await asyncio.to_thread(_restart, cluster)
    await asyncio.sleep(3.0)
    stop.set()
    await asyncio.gather(*tasks)
    # every pooled connection in use, a restart while idle, then every one used again: none may be
    # a connection that died with the restart
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {SUPER}"}, timeout=10) as http:
        async def burst() -> list[int]:
            return [r.status_code for r in await asyncio.gather(*(http.get(f"/alloc/{aid}") for _ in range(CLIENTS)))]

        await burst()
        await asyncio.to_thread(_restart, cluster)
        late = [code for _ in range(3) for code in await burst()]
    return {"acked": acked, "refused": refused, "began": began, "up": up, "late": late}


def test_pg_restart_under_load_loses_nothing_and_recovers(own_pg: PgCluster, tokens_file: Path) -> None:
    db = create_database(own_pg.url)
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file)]).start()
    try:
        aid = _allocation(server.url, "restart", 7301, CREDIT)
        got = asyncio.run(_run(server.url, own_pg, aid))
    finally:
        server.stop()
    ledger = open_ledger(db)
    try:
        jobs = {j["job_id"]: j["minutes"] for j in ledger.jobs(None, limit=10**6)}
        alloc = ledger.allocation(aid, None)
        audit = ledger.audit()
    finally:
        ledger.close()
    acked, refused = got["acked"], got["refused"]
    window = (max(refused) - min(refused)) if refused else 0.0
    after_up = [t - got["up"] for t in refused if t > got["up"]]
    when = (f"from {min(refused) - got['began']:+.2f} s to {max(refused) - got['began']:+.2f} s of its start "
            f"({window:.2f} s), the last {max(after_up, default=0):.2f} s after the server was up" if refused else "")
    print(f"\n{len(acked)} acknowledged, {len(refused)} clients refused {when}; the restart took "
          f"{got['up'] - got['began']:.2f} s; {len(jobs) - len(acked)} landed unacknowledged")
    assert len(acked) > 100
    assert {j: jobs.get(j) for j in acked} == acked  # every acknowledged pre-debit, with its minutes
    assert alloc["predebits"] == sum(jobs.values())  # none twice (a job id is taken once)
    assert alloc["predebits"] <= CREDIT and alloc["balance"] >= 0 and not audit
    assert all(s == 200 for s in got["late"]), got["late"]  # no dead connection handed out again
    assert max(after_up, default=0) < 2.0, f"clients refused {max(after_up):.1f} s after the server was up"
