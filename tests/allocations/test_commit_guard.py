"""The commit guard's parts without a database: the watchdog calls at its deadline unless
disarmed first, and a stall lasts until its probe commits (and only the probe ends it). The
guard against a real standby that dies: test_replica_loss.py."""

from __future__ import annotations

import threading
import time

import pytest

from tui.allocations.commit_guard import CommitGuard, Stalled, Watchdog


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
