"""The commit guard: its parts without a database (the watchdog calls at its deadline unless
disarmed first; a stall lasts until its probe commits, and only the probe ends it), then a
thread's write on a real primary whose synchronous standby never connects. The service against a
standby that dies: test_replica_loss.py."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.needs import needs, program, root
from tui.allocations.commit_guard import CommitGuard, Stalled, Watchdog
from tui.allocations.ledger import Unavailable, open_ledger

from .services import PgCluster, pg_bindir


def test_watchdog_fires_at_its_deadline_and_not_once_disarmed() -> None:
    dog = Watchdog()
    fired: list[tuple[str, float]] = []
    began = time.monotonic()
    late = dog.arm(0.2, lambda: fired.append(("late", time.monotonic() - began)))
    early = dog.arm(0.05, lambda: fired.append(("early", time.monotonic() - began)))
    spared = dog.arm(0.1, lambda: fired.append(("spared", 0.0)))
    assert dog.disarm(spared) is False  # disarmed in time: never called
    time.sleep(0.3)
    assert dog.disarm(early) is True and dog.disarm(late) is True
    assert [name for name, _ in fired] == ["early", "late"]
    assert 0.05 <= fired[0][1] < 0.15 and 0.2 <= fired[1][1] < 0.3, fired


def test_disarm_of_a_call_under_way_returns_once_it_returned() -> None:
    dog = Watchdog()
    inside, leave = threading.Event(), threading.Event()
    done: list[bool] = []

    def slow() -> None:
        inside.set()
        leave.wait(5)
        done.append(True)

    token = dog.arm(0.0, slow)
    assert inside.wait(5)
    threading.Timer(0.1, leave.set).start()
    assert dog.disarm(token) is True and done == [True]  # the caller may now close the connection


def test_a_stall_refuses_writes_until_its_probe_commits() -> None:
    outcomes = [RuntimeError("server down"), None]  # the probe fails once, then commits
    standby_back = threading.Event()

    def probe() -> None:
        standby_back.wait(5)
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    guard = CommitGuard(probe, timeout_s=5)
    guard.admit()  # not stalled: let in
    guard.timed_out()
    with pytest.raises(Stalled, match="no write committed within 5 s"):
        guard.admit()
    time.sleep(0.1)
    with pytest.raises(Stalled):  # still waiting on the probe
        guard.admit()
    standby_back.set()
    deadline = time.monotonic() + 5
    while guard.since is not None:  # one failed probe, a second after it one that commits
        assert time.monotonic() < deadline, "the stall never ended"
        time.sleep(0.02)
    assert not outcomes
    guard.admit()


def standby_named(names: str, url: str) -> None:
    """``synchronous_standby_names`` set on a running server (a reload), once in effect."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'")  # a literal of ours
        conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 10
    while True:
        with psycopg.connect(url, autocommit=True) as conn:
            if conn.execute("SHOW synchronous_standby_names").fetchone() == (names,):
                return
        assert time.monotonic() < deadline, "the reload did not take"
        time.sleep(0.05)


@needs(root("the throwaway PostgreSQL runs as 'postgres'"),
       None if pg_bindir() else "no PostgreSQL (apt-get install postgresql)", program("runuser", "util-linux"))
def test_a_threads_write_waiting_for_a_missing_standby_is_refused_and_lands_once() -> None:
    pg = PgCluster().start()
    ledger = None
    try:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE ledger")
        standby_named("nobody", pg.url)  # a standby that never connects
        local = "options='-c synchronous_commit=local'"  # the setup's commits do not wait
        dsn = f"host=127.0.0.1 port={pg.port} user=postgres dbname=ledger"
        setup = open_ledger(f"{dsn} {local}", migrate=True)
        try:
            project = setup.create_project("sync", 7501, "sync")
            aid = setup.create_allocation(project["id"], "cpu", "startup", "2000-01-01", "2999-12-31")["id"]
            setup.credit(aid, 1000)
            setup.predebit("j1", 6001, 7501, "cpu", 10)
        finally:
            setup.close()
        ledger = open_ledger(dsn, commit_timeout=1.0)
        began = time.monotonic()
        with pytest.raises(Unavailable, match="no write committed within 1 s"):
            ledger.complete("j1", "completed", 5)  # a debit, in this thread: the watchdog cancels it
        assert 1.0 <= time.monotonic() - began < 2.5
        assert ledger.job("j1")["status"] == "completed"  # it committed on the primary alone
        began = time.monotonic()
        with pytest.raises(Unavailable, match="send it again"):
            ledger.credit(aid, 10)
        assert time.monotonic() - began < 0.5  # stalled: refused at once
        why = ledger.writes_refused() or ""
        assert "synchronous_standby_names is 'nobody', standbys connected: none" in why, why
        standby_named("", pg.url)  # the site gives up the guarantee
        deadline = time.monotonic() + 10
        while ledger.writes_refused() is not None:  # the probe's commit went through
            assert time.monotonic() < deadline, "the stall never ended"
            time.sleep(0.05)
        assert ledger.complete("j1", "completed", 5)["billed"] == 5  # the retry: its stored record
        alloc = ledger.allocation(aid)
        assert (alloc["credits"], alloc["predebits"], alloc["debits"]) == (1000, 0, 5) and not ledger.audit()
    finally:
        if ledger is not None:
            ledger.close()
        pg.stop()
