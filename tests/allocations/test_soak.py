"""Long runs without growth, short version (bench/soak.py service runs 1,000,000 requests):
~12,000 requests of everyday traffic (24-41 s per store at load average 9 here) against the real
service on 127.0.0.1; after the first fifth (warm-up: caches, pools, the interpreter's arenas),
its resident memory grows under 10 % and its open fds and child processes stay where they were."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import httpx

from tests.resources import flat, open_fds
from tui.allocations.ledger import open_ledger

from .services import SUPER, Server
from .soak import drive
from .test_concurrency import _allocation

REQUESTS, WARM_UP = 12_000, 4  # warm-up: the first 4 of 20 samples, 2,400 requests


def test_the_service_holds_no_more_after_12000_requests(db: str, tokens_file: Path) -> None:
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file)]).start()
    try:
        aid = _allocation(server.url, "soak", 7301, 10**9)
        assert server.proc is not None
        run = asyncio.run(drive(server.url, server.proc.pid, 7301, aid, REQUESTS))
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {SUPER}"}, timeout=10) as su:
            alloc = su.get(f"/alloc/{aid}").json()
    finally:
        server.stop()
    assert set(run.codes) == {200, 201}, run.codes
    assert sum(run.codes.values()) >= REQUESTS
    samples = [h for _, h in run.samples]
    assert len(samples) >= 20
    assert flat(samples[:WARM_UP], samples[WARM_UP:]) == [], [f"{n}: {h}" for n, h in run.samples]
    assert alloc["debits"] == run.debited and alloc["predebits"] == run.held, alloc


def test_a_thread_that_ended_leaves_no_store_connection_open(tmp_path: Path) -> None:
    """The service's worker threads come and go; each opens its own SQLite connection (two
    files: the ledger and its WAL). Before, the ledger kept every one open for ever."""
    ledger = open_ledger(str(tmp_path / "ledger.db"), migrate=True)
    try:
        ledger.schema_version()
        before = open_fds(os.getpid())
        for _ in range(20):
            thread = threading.Thread(target=ledger.schema_version)
            thread.start()
            thread.join()
        del thread
        # at most one connection's files more (the last thread's may not be collected yet), not 20's
        assert open_fds(os.getpid()) <= before + 2, "the 20 threads' connections stayed open"
        ledger.schema_version()  # this thread's connection still serves
    finally:
        ledger.close()
