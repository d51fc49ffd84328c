"""Many clients at once against the real service, on SQLite and PostgreSQL: no overdraft, every
balance equals the sum of its activity, and a SIGKILL loses no acknowledged activity.

Scaled to finish in seconds (32 clients x 25 pre-debits); ``bench/allocations.py`` runs the full
32 x 1,000 and checks the same invariants.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from tui.allocations.ledger import open_ledger

from .services import SUPER, Server

CLIENTS, PER_CLIENT = 32, 25
#: These test the ledger's correctness under many writers, not admission (test_overload.py): on a
#: loaded machine 32-64 requests in progress wait longer than the default lets in, so all are let in
#: (the floor at 64, not counted in time).
ALL_IN = ["--admit-floor", str(2 * CLIENTS), "--admit-wait-ms", "0"]
HEADERS = {"Authorization": f"Bearer {SUPER}"}


def _allocation(url: str, name: str, gid: int, minutes: int) -> int:
    year = date.today().year
    with httpx.Client(base_url=url, headers=HEADERS, timeout=10) as su:
        pid = su.post("/project", json={"name": name, "gid": gid, "account": name}).json()["id"]
        aid = su.post("/alloc", json={"project": pid, "resource": "cpu", "category": "load",
                                      "start": f"{year}-01-01", "end": f"{year}-12-31"}).json()["id"]
        assert su.post(f"/alloc/{aid}/credit", json={"minutes": minutes}).status_code == 201
    return aid


async def _client(url: str, n: int, gid: int, ledger_log: dict) -> None:
    rng = random.Random(n)
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=30) as http:
        for i in range(PER_CLIENT):
            job_id, minutes = f"{gid}-{n}-{i}", rng.randint(1, 10)
            r = await http.post("/job", json={"job_id": job_id, "uid": 6000 + n, "gid": gid, "resource": "cpu",
                                              "minutes": minutes})
            ledger_log["status"][r.status_code] += 1
            if r.status_code != 201:
                continue
            if rng.random() < 0.5:
                state = rng.choice(["completed", "completed", "failed", "cancelled", "node_fail"])
                actual = rng.randint(0, minutes + 2)
                r = await http.put(f"/job/{job_id}", json={"state": state, "minutes": actual})
                assert r.status_code == 200, r.text
                ledger_log["billed"] += r.json()["billed"]
            else:
                ledger_log["held"] += minutes


@pytest.fixture()
def service(db: str, tokens_file: Path) -> Iterator[Server]:
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file), *ALL_IN]).start()
    try:
        yield server
    finally:
        server.stop()


def test_32_clients_no_overdraft_and_balances_add_up(service, db) -> None:
    credit = 3000  # about 3,000 of the ~4,400 minutes asked for fit
    aid = _allocation(service.url, "load", 7101, credit)
    tight = _allocation(service.url, "tight", 7102, 30)
    log = {"status": Counter(), "billed": 0, "held": 0}

    async def race_20_of_30() -> list[int]:
        async with httpx.AsyncClient(base_url=service.url, headers=HEADERS, timeout=30) as http:
            answers = await asyncio.gather(*(
                http.post("/job", json={"job_id": f"t{n}", "uid": 1, "gid": 7102, "resource": "cpu", "minutes": 20})
                for n in range(CLIENTS)))
        return [r.status_code for r in answers]

    async def main() -> list[int]:
        tight_codes, *_ = await asyncio.gather(race_20_of_30(),
                                               *(_client(service.url, n, 7101, log) for n in range(CLIENTS)))
        return tight_codes

    tight_codes = asyncio.run(main())
    assert sorted(Counter(tight_codes).items()) == [(201, 1), (402, CLIENTS - 1)]
    assert set(log["status"]) <= {201, 402}, log["status"]
    assert log["status"][402] > 0 and log["status"][201] > 0
    with httpx.Client(base_url=service.url, headers=HEADERS) as su:
        a = su.get(f"/alloc/{aid}").json()
        t = su.get(f"/alloc/{tight}").json()
    assert (a["credits"], a["predebits"], a["debits"]) == (credit, log["held"], log["billed"])
    assert a["balance"] == credit - log["held"] - log["billed"] >= 0
    assert a["failures"] == log["status"][402]
    assert (t["balance"], t["failures"]) == (10, CLIENTS - 1)
    ledger = open_ledger(db)
    try:
        assert ledger.audit() == []
    finally:
        ledger.close()


def test_sigkill_mid_load_loses_no_acknowledged_activity(db, tokens_file) -> None:
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file), *ALL_IN]).start()
    try:
        aid = _allocation(server.url, "kill", 7201, 10**9)
        acked: list[tuple[str, int]] = []
        lost: list[str] = []

        async def client(n: int) -> None:
            async with httpx.AsyncClient(base_url=server.url, headers=HEADERS, timeout=10) as http:
                for i in range(100_000):
                    job_id = f"k{n}-{i}"
                    try:
                        r = await http.post("/job", json={"job_id": job_id, "uid": 1, "gid": 7201,
                                                          "resource": "cpu", "minutes": n + 1})
                    except httpx.TransportError:
                        lost.append(job_id)  # unknown: it may or may not have landed
                        return
                    assert r.status_code == 201, r.text
                    acked.append((job_id, n + 1))

        async def main() -> None:
            tasks = [asyncio.create_task(client(n)) for n in range(16)]
            while len(acked) < 300:
                await asyncio.sleep(0.05)
            await asyncio.to_thread(server.kill)
            await asyncio.gather(*tasks)

        asyncio.run(main())
        assert server.proc is not None and server.proc.returncode == -9
        server.stop()
        server = Server(db, ["--auth", "token", "--tokens", str(tokens_file), *ALL_IN]).start(migrate=False)
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=10) as su:
            a = su.get(f"/alloc/{aid}").json()
            jobs = {j["job_id"]: j for j in su.get("/job", params={"gid": 7201}).json()}
        assert len(jobs) < 1000  # the listing is capped at 1,000; the check below needs all
        missing = [job_id for job_id, _ in acked if job_id not in jobs]
        assert missing == []
        assert all(jobs[job_id]["minutes"] == m and jobs[job_id]["status"] == "executing" for job_id, m in acked)
        assert set(jobs) - {j for j, _ in acked} <= set(lost)
        assert a["predebits"] == sum(j["minutes"] for j in jobs.values())
        ledger = open_ledger(db)
        try:
            assert ledger.audit() == []
        finally:
            ledger.close()
    finally:
        server.stop()


def test_two_worker_processes_on_postgresql_never_overdraw(pg_url, tokens_file) -> None:
    """``--workers 2``: two processes, two connection pools, one advisory lock per allocation."""
    server = Server(pg_url, ["--auth", "token", "--tokens", str(tokens_file), "--workers", "2", *ALL_IN]).start()
    try:
        aid = _allocation(server.url, "two", 7301, 30)

        async def race() -> list[int]:
            limits = httpx.Limits(max_keepalive_connections=0)  # new connections: both workers serve
            async with httpx.AsyncClient(base_url=server.url, headers=HEADERS, timeout=30, limits=limits) as http:
                answers = await asyncio.gather(*(
                    http.post("/job", json={"job_id": f"w{n}", "uid": 1, "gid": 7301, "resource": "cpu",
                                            "minutes": 20}) for n in range(CLIENTS)))
            return [r.status_code for r in answers]

        assert sorted(Counter(asyncio.run(race())).items()) == [(201, 1), (402, CLIENTS - 1)]
        with httpx.Client(base_url=server.url, headers=HEADERS) as su:
            assert su.get(f"/alloc/{aid}").json()["balance"] == 10
    finally:
        server.stop()


def test_two_instances_one_killed_mid_load(pg_url, tokens_file) -> None:
    """Two ``serve-allocations`` on one PostgreSQL; 32 clients (the real client, both URLs) pre-debit
    one tight allocation; the instance they all use is SIGKILLed mid-load. Zero overdraft, every
    acknowledged pre-debit kept, nothing held that no client was told of, no job id twice, and
    every client carries on with the other instance within a second."""
    import time

    from tui.allocations.client import AllocationClient, ApiError

    first = Server(pg_url, ["--auth", "token", "--tokens", str(tokens_file), *ALL_IN]).start()
    second = Server(pg_url, ["--auth", "token", "--tokens", str(tokens_file), *ALL_IN]).start(migrate=False)
    try:
        credit = 4000  # about 4,000 of the ~5,600 minutes asked for fit: refusals near the end
        aid = _allocation(first.url, "pair", 7401, credit)
        acked: dict[str, int] = {}
        refused: list[str] = []
        killed_at: list[float] = []
        gaps: list[float] = []

        async def client(n: int) -> None:
            rng = random.Random(n)
            last_ok = 0.0
            async with AllocationClient([first.url, second.url], token=SUPER, timeout=5) as api:
                for i in range(CLIENTS):
                    job_id, minutes = f"p{n}-{i}", rng.randint(1, 10)
                    try:
                        rec = await api.predebit(job_id, 6000 + n, 7401, "cpu", minutes)
                    except ApiError as exc:
                        assert exc.status == 402, exc
                        refused.append(job_id)
                        continue
                    assert rec.minutes == minutes
                    acked[job_id] = minutes
                    now = time.monotonic()
                    if killed_at and last_ok < killed_at[0]:
                        gaps.append(now - killed_at[0])  # first answer after the kill
                    last_ok = now

        async def main() -> None:
            tasks = [asyncio.create_task(client(n)) for n in range(CLIENTS)]
            while len(acked) < 300:
                await asyncio.sleep(0.01)
            killed_at.append(time.monotonic())
            await asyncio.to_thread(first.kill)
            await asyncio.gather(*tasks)

        asyncio.run(main())
        assert first.proc is not None and first.proc.returncode == -9
        assert len(acked) + len(refused) == CLIENTS * CLIENTS and refused  # every job answered, some refused
        print(f"\nfail-over: {len(gaps)} clients resumed, slowest {max(gaps, default=9):.3f} s after the kill; "
              f"{len(acked)} acknowledged, {len(refused)} refused")
        # Resumed on the connection error, not after the client's 5 s timeout (measured 0.1-0.5 s;
        # 1.22-1.49 s at load 9-14, so the bound is the timeout's, not a speed target).
        assert gaps and max(gaps) < 3.0, f"slowest client resumed {max(gaps):.2f} s after the kill"
        ledger = open_ledger(pg_url)
        try:
            jobs = {j["job_id"]: j for j in ledger.jobs(gid=7401, limit=10_000)}
            assert {k: j["minutes"] for k, j in jobs.items()} == acked  # kept, and nothing untold
            alloc = ledger.allocation(aid)
            assert alloc["balance"] == credit - sum(acked.values()) >= 0
            assert ledger.audit() == []
        finally:
            ledger.close()
    finally:
        first.stop()
        second.stop()
