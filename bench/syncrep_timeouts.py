"""What ends a commit waiting for a synchronous standby that is gone, and what bounding it costs.

A throwaway PostgreSQL (as root) whose ``synchronous_standby_names`` names a standby that never
connects: every commit that wrote WAL waits in ``SyncRep``. For each server setting the service
could put on its connections (1 s each), one autocommit INSERT is sent and cancelled from the
client after 4 s if nothing ended it first; the answer, the wait and the notices are printed, and
then how many of those INSERTs committed on the primary alone. Then the cost of the service's
bound on a thread's write (:class:`tui.allocations.commit_guard.Watchdog`: one arm and one disarm
per write), per write.

    .venv/bin/python bench/syncrep_timeouts.py
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from tests.allocations.services import PgCluster  # noqa: E402
from tui.allocations.commit_guard import Watchdog  # noqa: E402

SETTINGS = ("statement_timeout", "idle_in_transaction_session_timeout", "lock_timeout", "transaction_timeout")
CANCEL_AFTER_S = 4.0


def one_insert(url: str, setting: str) -> str:
    try:
        conn = psycopg.connect(url, autocommit=True, options=f"-c {setting}=1000")
    except psycopg.Error as exc:
        return f"not known to this server ({str(exc).strip().splitlines()[-1]})"
    with conn:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        timer = threading.Timer(CANCEL_AFTER_S, conn.cancel_safe)
        timer.start()
        began = time.monotonic()
        try:
            conn.execute("INSERT INTO t VALUES (1)")
            outcome = "the INSERT returned success"
        except psycopg.Error as exc:
            outcome = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        timer.cancel()
        waited = time.monotonic() - began
    by = f"the client's cancel at {CANCEL_AFTER_S:g} s" if waited >= CANCEL_AFTER_S - 0.1 else "the setting"
    return f"{outcome} after {waited:.2f} s (ended by {by}); notices: {notices}"


def watchdog_cost(writes: int = 200_000) -> float:
    """Microseconds of one arm and one disarm (the thread's write answered well in time)."""
    dog = Watchdog()
    began = time.perf_counter()
    for _ in range(writes):
        dog.disarm(dog.arm(5.0, lambda: None))
    return (time.perf_counter() - began) / writes * 1e6


def main() -> int:
    pg = PgCluster().start("-c synchronous_standby_names=nobody")
    try:
        local = "-c synchronous_commit=local"  # the setup's own commits must not wait
        with psycopg.connect(pg.url, autocommit=True, options=local) as conn:
            conn.execute("CREATE TABLE t (x int)")
            print("PostgreSQL", conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        for setting in SETTINGS:
            print(f"{setting} = 1 s: {one_insert(pg.url, setting)}")
        with psycopg.connect(pg.url, autocommit=True, options=local) as conn:
            rows = conn.execute("SELECT count(*) FROM t").fetchone()[0]  # type: ignore[index]
        print(f"rows on the primary afterwards: {rows} (each INSERT that waited committed locally)")
    finally:
        pg.stop()
    print(f"watchdog: {watchdog_cost():.2f} us per write (arm + disarm)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
