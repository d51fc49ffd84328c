"""The ledger's accounting rules, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import asyncio

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tui.allocations.ledger import (
    Conflict,
    Invalid,
    NotFound,
    Overdraft,
    Unavailable,
    minutes_from_seconds,
    minutes_from_su_hours,
    open_ledger,
    schema_sections,
)

from .services import ROOT, free_port

TODAY = "2026-06-15"


def _setup(ledger, credit: int = 30, gid: int = 7001, name: str = "chem") -> int:
    p = ledger.create_project(name, gid, name)
    a = ledger.create_allocation(p["id"], "cpu", "startup", "2026-01-01", "2026-12-31")
    if credit:
        ledger.credit(a["id"], credit)
    return a["id"]


def test_rounding_up_from_seconds_and_credits_in_su_hours() -> None:
    assert [minutes_from_seconds(s) for s in (0, 1, 55, 60, 61, 3600)] == [0, 1, 1, 1, 2, 60]
    assert minutes_from_su_hours(1) == 60
    assert minutes_from_su_hours(200000) == 12_000_000
    with pytest.raises(Invalid):
        minutes_from_seconds(-1)


def test_two_jobs_of_20_against_30_never_both_pass(ledger) -> None:
    """Seed 004's race, 25 times over, with both requests released together."""
    for round_ in range(25):
        alloc = _setup(ledger, 30, gid=8000 + round_, name=f"race{round_}")
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def job(n: int, barrier: threading.Barrier = barrier, round_: int = round_,
                outcomes: list[str] = outcomes) -> None:
            barrier.wait()
            try:
                ledger.predebit(f"r{round_}-{n}", 5001, 8000 + round_, "cpu", 20, today=TODAY)
                outcomes.append("ok")
            except Overdraft:
                outcomes.append("402")

        threads = [threading.Thread(target=job, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["402", "ok"]
        a = ledger.allocation(alloc)
        assert (a["predebits"], a["balance"], a["failures"]) == (20, 10, 1)
    assert ledger.audit() == []


def test_predebit_complete_returns_the_unused_part(ledger) -> None:
    alloc = _setup(ledger, 100)
    job = ledger.predebit("10", 5001, 7001, "cpu", 60, today=TODAY)
    assert (job["alloc_id"], job["status"], job["balance"]) == (alloc, "executing", 40)
    done = ledger.complete("10", "completed", minutes_from_seconds(601))  # 10 min 1 s -> 11 minutes
    assert (done["status"], done["actual"], done["billed"]) == ("completed", 11, 11)
    a = ledger.allocation(alloc)
    assert (a["credits"], a["predebits"], a["debits"], a["balance"]) == (100, 0, 11, 89)
    assert a["debits_by_uid"] == {"5001": 11}


def test_node_fail_is_not_billed_and_overrun_is_capped(ledger) -> None:
    alloc = _setup(ledger, 100)
    ledger.predebit("1", 5001, 7001, "cpu", 30, today=TODAY)
    ledger.predebit("2", 5002, 7001, "cpu", 30, today=TODAY)
    assert ledger.complete("1", "node_fail", 25)["billed"] == 0
    assert ledger.complete("2", "failed", 45)["billed"] == 30  # never more than was held
    a = ledger.allocation(alloc)
    assert (a["debits"], a["balance"], a["debits_by_uid"]) == (30, 70, {"5001": 0, "5002": 30})


def test_a_job_id_is_predebited_at_most_once(ledger) -> None:
    _setup(ledger, 100)
    ledger.predebit("7", 5001, 7001, "cpu", 10, today=TODAY)
    with pytest.raises(Conflict):
        ledger.predebit("7", 5001, 7001, "cpu", 10, today=TODAY)
    ledger.complete("7", "completed", 5)
    with pytest.raises(Conflict):
        ledger.predebit("7", 5001, 7001, "cpu", 10, today=TODAY)
    # the same completion again answers the stored record; another one is a conflict
    assert ledger.complete("7", "completed", 5)["billed"] == 5
    with pytest.raises(Conflict):
        ledger.complete("7", "completed", 6)
    with pytest.raises(NotFound):
        ledger.complete("8", "completed", 6)
    assert ledger.allocations()[0]["debits"] == 5


def test_overdraft_is_refused_and_recorded(ledger) -> None:
    alloc = _setup(ledger, 30)
    with pytest.raises(Overdraft) as err:
        ledger.predebit("9", 5001, 7001, "cpu", 31, today=TODAY)
    assert err.value.extra["balance"] == 30
    assert [(f["job_id"], f["minutes"], f["balance"]) for f in ledger.failures()] == [("9", 31, 30)]
    assert ledger.allocation(alloc)["balance"] == 30
    # a refused job id can come back once money is there (it was never pre-debited)
    ledger.credit(alloc, 1)
    assert ledger.predebit("9", 5001, 7001, "cpu", 31, today=TODAY)["balance"] == 0


def test_no_allocation_covers(ledger) -> None:
    _setup(ledger, 30)
    with pytest.raises(NotFound):
        ledger.predebit("1", 5001, 7001, "gpu", 1, today=TODAY)
    with pytest.raises(NotFound):
        ledger.predebit("1", 5001, 7001, "cpu", 1, today="2027-01-01")
    with pytest.raises(NotFound):
        ledger.predebit("1", 5001, 9999, "cpu", 1, today=TODAY)


def test_a_group_commit_answers_each_predebit_as_alone(tmp_path: Path) -> None:
    """SQLite's batch (the service's group commit): one transaction, each pre-debit in order with
    its own answer; the refused ones leave only their failure record."""
    ledger = open_ledger(str(tmp_path / "l.db"), migrate=True)
    alloc = _setup(ledger, 30)
    answers = ledger.predebit_batch([
        ("a", 5001, 7001, "cpu", 20),   # 30 -> 10
        ("a", 5001, 7001, "cpu", 1),    # the same job id again: 409
        ("b", 5001, 7001, "cpu", 20),   # 20 > 10: 402, recorded
        ("c", 5001, 7001, "gpu", 1),    # no gpu allocation: 404
        ("d", 5001, 7001, "cpu", 10),   # 10 -> 0
        ("e", 5001, 7001, "cpu", -1),   # 422
    ], today=TODAY)
    assert [a["balance"] if isinstance(a, dict) else type(a).__name__ for a in answers] == \
        [10, "Conflict", "Overdraft", "NotFound", 0, "Invalid"]
    assert answers[2].extra == {"allocation": alloc, "balance": 10, "minutes": 20}
    assert [(f["job_id"], f["minutes"], f["balance"]) for f in ledger.failures()] == [("b", 20, 10)]
    got = ledger.allocation(alloc)
    assert (got["predebits"], got["balance"], got["failures"]) == (30, 0, 1)
    assert sorted(j["job_id"] for j in ledger.jobs()) == ["a", "d"]
    assert ledger.audit() == []
    ledger.close()


def test_allocations_of_a_project_and_resource_never_overlap(ledger) -> None:
    p = ledger.create_project("phys", 7002, "phys")["id"]
    ledger.create_allocation(p, "cpu", "research", "2026-01-01", "2026-06-30")
    with pytest.raises(Conflict):
        ledger.create_allocation(p, "cpu", "research", "2026-06-30", "2026-12-31")
    with pytest.raises(Conflict):
        ledger.create_allocation(p, "cpu", "x", "2025-01-01", "2027-01-01")
    ledger.create_allocation(p, "cpu", "research", "2026-07-01", "2026-12-31")  # adjacent: fine
    ledger.create_allocation(p, "gpu", "research", "2026-01-01", "2026-12-31")  # other resource
    with pytest.raises(Invalid):
        ledger.create_allocation(p, "cpu", "x", "2028-02-01", "2028-01-01")
    with pytest.raises(NotFound):
        ledger.create_allocation(999, "cpu", "x", "2028-01-01", "2028-02-01")
    with pytest.raises(Conflict):
        ledger.create_project("phys", 7003, "phys")
    with pytest.raises(Conflict):
        ledger.create_project("other", 7002, "other")


def test_a_job_straddling_two_periods_is_billed_to_the_earlier(ledger) -> None:
    p = ledger.create_project("bio", 7004, "bio")["id"]
    first = ledger.create_allocation(p, "gpu", "research", "2026-01-01", "2026-06-30")["id"]
    second = ledger.create_allocation(p, "gpu", "research", "2026-07-01", "2026-12-31")["id"]
    ledger.credit(first, 100)
    ledger.credit(second, 100)
    assert ledger.predebit("s1", 5001, 7004, "gpu", 80, today="2026-06-30")["alloc_id"] == first
    # it ends on 1 July, in the second period: the debit still goes to the first
    assert ledger.complete("s1", "completed", 70)["alloc_id"] == first
    assert (ledger.allocation(first)["debits"], ledger.allocation(second)["debits"]) == (70, 0)
    assert ledger.predebit("s2", 5001, 7004, "gpu", 80, today="2026-07-01")["alloc_id"] == second


def test_standard_visibility_by_gid(ledger) -> None:
    a1 = _setup(ledger, 10, 7001, "chem")
    a2 = _setup(ledger, 10, 7002, "phys")
    ledger.predebit("1", 5001, 7001, "cpu", 1, today=TODAY)
    ledger.predebit("2", 5002, 7002, "cpu", 1, today=TODAY)
    mine = frozenset({7001})
    assert [p["name"] for p in ledger.projects(mine)] == ["chem"]
    assert [a["id"] for a in ledger.allocations(mine)] == [a1]
    assert [j["job_id"] for j in ledger.jobs(mine)] == ["1"]
    with pytest.raises(NotFound):
        ledger.allocation(a2, mine)
    with pytest.raises(NotFound):
        ledger.job("2", mine)
    assert ledger.projects(frozenset()) == []
    assert len(ledger.allocations()) == 2


def test_migration_from_version_1_keeps_the_data(db: str) -> None:
    from tui.allocations.ledger import Ledger, _PostgresStore, _SqliteStore

    store = _PostgresStore(db) if db.startswith("postgresql") else _SqliteStore(db)
    old = Ledger(store)
    assert old.migrate(target=1) == (0, 1)
    # version-1 data, written as a version-1 fairtop would
    pid = old.create_project("chem", 7001, "chem")["id"]
    with store.transaction(write=True) as tx:
        tx.run("INSERT INTO allocation (project_id, resource, category, start_date, end_date, credited)"
               " VALUES (?, 'cpu', 'startup', '2026-01-01', '2026-12-31', 50)", (pid,))
        tx.run("INSERT INTO credit (alloc_id, minutes, created) VALUES (1, 50, 'then')")
    with pytest.raises(Unavailable, match="--migrate"):
        open_ledger(db)
    assert old.migrate() == (1, len(schema_sections()))
    assert old.migrate() == (len(schema_sections()),) * 2  # idempotent
    new = open_ledger(db)
    assert new.allocation(1)["balance"] == 50
    new.predebit("1", 5001, 7001, "cpu", 20, today=TODAY)
    assert new.audit() == []
    old.close()
    new.close()


def test_cli_migrate_only(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    sqlite3.connect(path).close()
    run = subprocess.run([sys.executable, "-m", "tui.cli", "serve-allocations", "--db", str(path), "--auth",
                          "munge", "--migrate-only"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert f"version {len(schema_sections())}" in run.stdout
    not_migrated = tmp_path / "new.db"
    run = subprocess.run([sys.executable, "-m", "tui.cli", "balance", "--db", str(not_migrated)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "--migrate" in run.stderr


async def test_the_asyncio_predebit_never_reuses_a_connection_the_server_ended(pg_url: str) -> None:
    """The service's PostgreSQL hot path (a batch on an asyncio connection): a pooled connection
    the server ended (its socket says so) is not handed out again, the next batch reconnects and
    succeeds (it answered 503 once before, and a restart so left a 503 per pooled connection);
    refusals leave the connection pooled."""
    import psycopg

    ledger = open_ledger(pg_url, migrate=True)
    _setup(ledger, 30)
    assert ledger.predebits_async

    async def one(job_id: str, minutes: int) -> object:
        (answer,) = await ledger.predebit_many_async([(job_id, 5001, 7001, "cpu", minutes)], today=TODAY)
        return answer

    assert (await one("1", 10))["balance"] == 20  # type: ignore[index]
    assert isinstance(await one("2", 21), Overdraft)
    assert isinstance(await one("1", 1), Conflict)
    with psycopg.connect(pg_url, autocommit=True) as admin:  # end the pooled connections it used
        ended = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                              " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                              " AND query LIKE '%fairtop_predebit%'").fetchall()
    assert ended and all(ok for (ok,) in ended)
    await asyncio.sleep(0.5)  # the backend's last words reach the socket
    assert (await one("3", 1))["balance"] == 19  # type: ignore[index]
    assert ledger.allocations()[0]["failures"] == 1 and ledger.audit() == []
    ledger.close()


def _outcome(answer: object) -> tuple[str, int | None]:
    """A pre-debit's answer as (kind, balance after it): comparable across stores."""
    if isinstance(answer, dict):
        return "ok", answer["balance"]
    if isinstance(answer, Overdraft):
        return "overdraft", answer.extra["balance"]
    return type(answer).__name__, None


async def test_group_commit_batches_answer_as_one_by_one(pg_url: str, tmp_path: Path) -> None:
    """PostgreSQL's group commit (``fairtop_predebit_many``, the service's hot path) against
    SQLite's one-by-one pre-debit (the Python steps, an independent copy): 300 jobs in batches of
    1 to 64 over three allocations, one tight (overdrafts, each recorded), a gid without one,
    job ids repeated within a batch and across batches, a negative amount. Every answer and every
    balance equal, in the caller's order, and the ledger's totals add up."""
    import asyncio
    import random

    rng = random.Random(19)
    batched, alone = open_ledger(pg_url, migrate=True), open_ledger(str(tmp_path / "l.db"), migrate=True)
    for ledger in (batched, alone):
        for gid, credit in ((7001, 10**6), (7002, 40), (7003, 500)):
            _setup(ledger, credit, gid=gid, name=f"g{gid}")
    jobs = []
    for n in range(300):
        job_id = f"j{rng.randrange(n + 1)}" if rng.random() < 0.1 else f"j{n}"
        minutes = -1 if n == 150 else rng.randint(0, 12)
        jobs.append((job_id, 5000 + n % 7, rng.choice((7001, 7002, 7002, 7003, 7999)), "cpu", minutes))
    got: list[tuple[str, int | None]] = []
    at = 0
    while at < len(jobs):
        size = rng.choice((1, 2, 7, 32, 64))
        got += [_outcome(a) for a in await batched.predebit_many_async(jobs[at:at + size], today=TODAY)]
        at += size
    want = []
    for job in jobs:
        try:
            want.append(_outcome(alone.predebit(*job, today=TODAY)))
        except (Overdraft, Conflict, NotFound, Invalid) as exc:
            want.append(_outcome(exc))
    assert got == want
    kinds = {kind for kind, _ in want}
    assert kinds == {"ok", "overdraft", "Conflict", "NotFound", "Invalid"}  # every path was taken
    assert [(a["id"], a["balance"], a["failures"]) for a in batched.allocations()] == \
        [(a["id"], a["balance"], a["failures"]) for a in alone.allocations()]
    assert batched.audit() == [] and alone.audit() == []
    # the same batch from two tasks at once (two service instances): no deadlock, no job twice
    both = [(f"x{n}", 1, gid, "cpu", 1) for n in range(40) for gid in ((7001,) if n % 2 else (7003,))]
    first, second = await asyncio.gather(batched.predebit_many_async(both, today=TODAY),
                                         batched.predebit_many_async(list(reversed(both)), today=TODAY))
    landed = [isinstance(a, dict) for a in first] + [isinstance(a, dict) for a in reversed(second)]
    assert sum(landed) == len(both) and batched.audit() == []
    batched.close()
    alone.close()


def test_a_database_that_does_not_answer_is_unavailable_with_its_reason() -> None:
    """No server behind the DSN (both hosts of a multi-host conninfo): the pool waits its timeout
    for a connection, then the ledger says why none came (libpq's words), not only that it timed out."""
    from tui.allocations.ledger import Ledger, _PostgresStore

    ports = f"{free_port()},{free_port()}"
    store = _PostgresStore(f"host=127.0.0.1,127.0.0.1 port={ports} dbname=x target_session_attrs=read-write",
                           connect_timeout=1.0)
    try:
        with pytest.raises(Unavailable, match=r"^PostgreSQL: .*(refused|failed)"):
            Ledger(store).check_schema()
    finally:
        store.close()
