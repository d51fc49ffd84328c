"""The allocation ledger (seed 004, HADM): projects, allocations, credits, pre-debits, debits.

One schema (``schema.sql``) on two stores:

* embedded SQLite (the default; a path), where every change runs in ``BEGIN IMMEDIATE`` (one
  writer at a time across processes) under an in-process lock (so the service's threads queue in
  Python instead of spinning in SQLite's busy handler);
* PostgreSQL through psycopg 3 (a ``postgresql://`` URL) for a shared service, where a change to an
  allocation's balance first takes ``pg_advisory_xact_lock`` on that allocation (seed 004: plain
  table locks deadlocked HADM at scale; advisory locks did not).

Accounting rules:

* amounts are integer resource-minutes; the scheduler's seconds round *up*
  (:func:`minutes_from_seconds`); credits come in SU-hours (:func:`minutes_from_su_hours`);
* a pre-debit at job start holds its minutes against the allocation that covers ``today`` for the
  job's gid and resource; a pre-debit that would overdraw is refused (and recorded as a failure);
* at completion the actual minutes are debited (capped at the pre-debit) to the *same* allocation,
  so a job that straddles two periods is billed to the earlier one, and the rest is returned;
  a job that ended by node failure is not billed;
* a job id is pre-debited at most once (a UNIQUE column, checked under the lock);
* no overdraft, ever: checked under the lock, and a CHECK on the allocation's running totals.

Visibility (the service's roles) is a ``gids`` argument: ``None`` sees everything, a set sees only
projects with those gids. Dates are ``YYYY-MM-DD`` strings, inclusive at both ends.
"""

from __future__ import annotations

import asyncio
import math
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date, datetime, timezone
from importlib import resources
from typing import Any

from tui.allocations import commit_guard, pg_pool
from tui.allocations.errors import AllocationError
from tui.security.file_modes import PRIVATE, create_file

__all__ = [
    "Ledger", "LedgerError", "NotFound", "Conflict", "Overdraft", "Invalid", "Unavailable",
    "JOB_STATES", "RESOURCES", "MAX_MINUTES", "minutes_from_seconds", "minutes_from_su_hours",
    "schema_sections", "open_ledger", "is_postgresql",
]

RESOURCES = ("cpu", "gpu")
JOB_STATES = ("completed", "failed", "node_fail", "cancelled")
#: Largest amount one request may carry (minutes); totals stay far below 2**63.
MAX_MINUTES = 2**40
_MAX_TOTAL = 2**62
#: Advisory-lock class ids (the first int of ``pg_advisory_xact_lock(int, int)``).
_LOCK_ALLOC, _LOCK_PROJECT = 0x46540001, 0x46540002


class LedgerError(AllocationError):
    """A refused change or a missing record; ``status`` is the HTTP status the service answers."""

    status = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra


class NotFound(LedgerError):
    status = 404


class Conflict(LedgerError):
    status = 409


class Overdraft(LedgerError):
    status = 402


class Invalid(LedgerError):
    status = 422


class Unavailable(LedgerError):
    """The store did not answer (PostgreSQL down, SQLite file unreadable)."""

    status = 503


def minutes_from_seconds(seconds: int) -> int:
    """Resource-seconds -> resource-minutes, rounded up (seed 004: 55 s bill 1 minute)."""
    if seconds < 0:
        raise Invalid(f"seconds must be >= 0, got {seconds}")
    return -(-int(seconds) // 60)


def minutes_from_su_hours(hours: float) -> int:
    """A credit in SU-hours -> resource-minutes (whole minutes, rounded down: never over-credit)."""
    if not hours > 0 or math.isinf(hours):
        raise Invalid(f"SU-hours must be > 0, got {hours}")
    return int(math.floor(hours * 60 + 1e-9))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def schema_sections() -> list[tuple[int, str | None, str]]:
    """``schema.sql`` split into ``(version, dialect, sql)`` in order; ``dialect`` is None for a
    section of both stores, else the only store it applies to (the others just record it)."""
    text = resources.files("tui.allocations").joinpath("schema.sql").read_text(encoding="utf-8")
    parts = re.split(r"^-- version (\d+)(?: (sqlite|postgresql))?\s*$", text, flags=re.M)
    sections = [(int(parts[i]), parts[i + 1], parts[i + 2]) for i in range(1, len(parts), 3)]
    assert [v for v, _, _ in sections] == list(range(1, len(sections) + 1)), "schema versions out of order"
    return sections


def _statements(sql: str) -> list[str]:
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


# --------------------------------------------------------------------------------------------
# Stores: the same small interface over sqlite3 and psycopg.


class _Tx:
    """One open transaction: ``one``/``all``/``run`` with ``?`` placeholders, and ``lock``."""

    def __init__(self, cursor: Any, placeholder: str, lock: Callable[[int, int], None]) -> None:
        self._cur = cursor
        self._ph = placeholder
        self.lock = lock

    def _sql(self, sql: str) -> str:
        return sql if self._ph == "?" else sql.replace("?", self._ph)

    def run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self._cur.execute(self._sql(sql), tuple(params) if params or self._ph == "?" else None)
        return self._cur

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        return self.run(sql, params).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return list(self.run(sql, params).fetchall())


class _SqliteStore:
    dialect = "sqlite"
    id_type = "INTEGER PRIMARY KEY AUTOINCREMENT"

    def __init__(self, path: str) -> None:
        self.path = path
        if path != ":memory:":
            try:  # a new ledger is the service user's alone (0600, not the umask's 0644): it holds every
                create_file(path, PRIVATE)  # uid's debits. SQLite gives its -wal and -shm files this mode.
            except OSError:
                pass  # a missing folder or no right to write: sqlite3 says it in its own words below
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error as exc:
                raise Unavailable(f"{self.path}: {exc}") from None
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
            # The service's worker threads come and go (an idle one ends): its connection goes
            # with it, or each new thread would hold two more open files for ever.
            weakref.finalize(threading.current_thread(), self._drop, conn)
        return conn

    def _drop(self, conn: sqlite3.Connection) -> None:
        with self._conns_lock:
            if conn in self._conns:
                self._conns.remove(conn)
                conn.close()

    @contextmanager
    def transaction(self, write: bool, bounded: bool = True) -> Iterator[_Tx]:
        conn = self._conn()
        guard = self._write_lock if write else _NULL_LOCK
        with guard:
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as exc:
                raise Unavailable(f"{self.path}: {exc}") from None
            try:
                yield _Tx(conn.cursor(), "?", lambda _cls, _key: None)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def is_integrity_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError)

    def close(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()


class _NullLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NULL_LOCK = _NullLock()
_NULL_CONTEXT = nullcontext()


class _PostgresStore:
    """PostgreSQL through psycopg_pool (:mod:`tui.allocations.pg_pool`): a thread pool's
    connections for the blocking calls, an asyncio pool's for the hot path (made on first use, in
    the event loop that uses it). A connection that failed is dropped, never handed out again."""

    dialect = "postgresql"
    id_type = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 5.0,
                 commit_timeout: float = commit_guard.COMMIT_TIMEOUT_S) -> None:
        import psycopg

        self.psycopg = psycopg
        self.url = url
        self._size = pool_size
        self._timeout = connect_timeout
        self._last = pg_pool.LastError()
        self._pool = pg_pool.sync_pool(url, pool_size, connect_timeout, self._last)
        self._async_pool: Any = None
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._async_opening: asyncio.Lock | None = None
        self.guard = commit_guard.CommitGuard(self._probe_commit, commit_timeout)
        self._probing: Any = None  # the probe's connection while it waits

    def _unavailable(self, exc: BaseException) -> Unavailable:
        from psycopg_pool import PoolTimeout

        why = self._last.text if isinstance(exc, PoolTimeout) else pg_pool.first_line(exc)
        return Unavailable(f"PostgreSQL: {why}")

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        psycopg = self.psycopg
        try:
            with pg_pool.connection(self._pool, self._timeout) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise self._unavailable(exc) from None

    def _admit_write(self) -> None:
        try:
            self.guard.admit()
        except commit_guard.Stalled as exc:
            raise Unavailable(str(exc)) from None

    @contextmanager
    def _bounded(self, conn: Any) -> Iterator[None]:
        """A write on ``conn`` cancelled after the guard's timeout (:mod:`commit_guard`): then
        :class:`Unavailable`, whatever the cancelled statement or commit answered."""
        self._admit_write()
        token = commit_guard.WATCHDOG.arm(self.guard.timeout_s, lambda: conn.cancel_safe(timeout=2))
        try:
            yield
        except Exception:
            if not commit_guard.WATCHDOG.disarm(token):
                raise
        else:
            if not commit_guard.WATCHDOG.disarm(token):
                return
        # cancelled: the commit may have landed on the primary alone, and a cancel may also reach
        # the next statement sent on this connection, so it is never used again
        self.guard.timed_out()
        conn.close()
        raise Unavailable(self.guard.reason())

    @contextmanager
    def transaction(self, write: bool, bounded: bool = True) -> Iterator[_Tx]:
        """``bounded``: a write cancelled past the guard's timeout (not a migration's, which may
        rightly take longer on a large ledger)."""
        with self._connection() as conn, (self._bounded(conn) if write and bounded else _NULL_CONTEXT), \
                conn.transaction():
            cur = conn.cursor()

            def lock(cls: int, key: int) -> None:
                cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", (cls, key))

            yield _Tx(cur, "%s", lock)

    def single(self, sql: str, params: Sequence[Any]) -> tuple | None:
        """One write statement in its own (implicit) transaction: one round trip."""
        with self._connection() as conn, self._bounded(conn):
            return conn.execute(sql.replace("?", "%s"), tuple(params)).fetchone()

    async def _pool_of_this_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._async_loop is not loop:  # first use, or a new loop (a test's): a pool of its own
            self._async_loop, self._async_pool, self._async_opening = loop, None, asyncio.Lock()
        assert self._async_opening is not None
        async with self._async_opening:
            if self._async_pool is None:
                self._async_pool = await pg_pool.async_pool(self.url, self._size, self._timeout, self._last)
        return self._async_pool

    async def write_async(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """The rows of one write statement (its own transaction) on an asyncio connection (the
        event loop waits, no thread does), cancelled after the guard's timeout. At most
        ``pool_size`` at once, prepared on the server after a few calls (psycopg's threshold)."""
        psycopg = self.psycopg
        pool = await self._pool_of_this_loop()
        self._admit_write()
        try:
            async with pg_pool.connection_async(pool, self._timeout) as conn:
                try:
                    async with asyncio.timeout(self.guard.timeout_s):  # psycopg cancels the statement
                        cur = await conn.execute(sql.replace("?", "%s"), tuple(params))
                        return list(await cur.fetchall())
                except TimeoutError:
                    self.guard.timed_out()
                    await conn.close()
                    raise Unavailable(self.guard.reason()) from None
        except psycopg.errors.DeadlockDetected:  # rolled back whole, the connection is fine: the caller reruns
            raise
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise self._unavailable(exc) from None

    def is_integrity_error(self, exc: BaseException) -> bool:
        return isinstance(exc, self.psycopg.IntegrityError)

    def writes_refused(self) -> str | None:
        """Why writes are refused now (None: they are not), with what the server says of its
        synchronous standbys (``pg_monitor`` lets the service's role read their state)."""
        if self.guard.since is None:
            return None
        try:
            with self._connection() as conn:
                names, waiting, standbys = conn.execute(
                    "SELECT current_setting('synchronous_standby_names'),"
                    " (SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'),"
                    " (SELECT string_agg(application_name || ' ' || coalesce(sync_state, '?'), ', ')"
                    "  FROM pg_stat_replication)").fetchone() or ("?", 0, None)
        except Unavailable as exc:
            return f"{self.guard.reason()}; {exc.message}"
        return (f"{self.guard.reason()}; {waiting} commits wait for a synchronous standby (SyncRep), "
                f"synchronous_standby_names is '{names}', standbys connected: {standbys or 'none'}")

    def _probe_commit(self) -> None:
        """A commit that touches no ledger table, on a connection of its own (the pool's are
        bounded in time), and waits for a synchronous standby as a write does: a temporary
        table's catalog rows are WAL (an xid alone is not, and its commit waits for nothing)."""
        with self.psycopg.connect(self.url, connect_timeout=max(1, int(self._timeout))) as conn:
            self._probing = conn
            try:
                conn.execute("CREATE TEMPORARY TABLE fairtop_commit_probe () ON COMMIT DROP")
                conn.commit()
            finally:
                self._probing = None

    def close(self) -> None:
        self.guard.close()
        probing = self._probing
        if probing is not None:
            probing.cancel_safe(timeout=2)
        self._pool.close()
        pool, loop, self._async_pool = self._async_pool, self._async_loop, None
        if pool is None or loop is None or loop.is_closed():
            return  # a closed loop took the pool's tasks with it; its sockets close with it
        if loop.is_running():  # called from the loop (an async test) or beside it
            loop.call_soon_threadsafe(lambda: loop.create_task(pool.close()))
        else:
            loop.run_until_complete(pool.close())


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Refusal:
    """A refusal decided inside a transaction that must still commit (the failure record)."""

    error: LedgerError


def _alloc_dict(row: tuple, debits: dict[int, int] | None = None) -> dict[str, Any]:
    (aid, pid, pname, gid, account, resource, category, start, end, credited, held, debited, failures) = row
    out = {
        "id": aid, "project": pid, "project_name": pname, "gid": gid, "account": account,
        "resource": resource, "category": category, "start": start, "end": end,
        "credits": credited, "predebits": held, "debits": debited,
        "balance": credited - held - debited, "failures": failures,
    }
    if debits is not None:
        out["debits_by_uid"] = {str(uid): minutes for uid, minutes in sorted(debits.items())}
    return out


_ALLOC_SELECT = (
    "SELECT a.id, a.project_id, p.name, p.gid, p.account, a.resource, a.category, a.start_date, a.end_date,"
    " a.credited, a.held, a.debited, (SELECT COUNT(*) FROM failure f WHERE f.alloc_id = a.id)"
    " FROM allocation a JOIN project p ON p.id = a.project_id"
)
_JOB_COLS = ("job_id", "alloc_id", "uid", "gid", "minutes", "status", "actual", "billed", "created", "resolved")
_JOB_SELECT = "SELECT " + ", ".join(f"j.{c}" for c in _JOB_COLS) + " FROM predebit j"
_FAIL_COLS = ("id", "job_id", "alloc_id", "uid", "gid", "minutes", "balance", "created")


def _gid_filter(gids: frozenset[int] | None, column: str) -> tuple[str, list[Any]]:
    """A WHERE fragment limiting ``column`` to ``gids`` (``None``: no limit), and its parameters
    (a list the callers extend with other parameters, of any SQL type)."""
    if gids is None:
        return "1 = 1", []
    if not gids:
        return "1 = 0", []
    return f"{column} IN ({', '.join('?' * len(gids))})", sorted(gids)


_PG_PREDEBIT = "SELECT outcome, alloc, remaining FROM fairtop_predebit(?, ?, ?, ?, ?, ?, ?)"
_PG_PREDEBIT_MANY = ("SELECT idx, outcome, alloc, remaining FROM fairtop_predebit_many("
                     "?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?, ?)")


def _pg_predebit_outcome(row: tuple | None, job_id: str, uid: int, gid: int, resource: str, minutes: int,
                         day: str, now: str) -> dict[str, Any] | _Refusal:
    """What ``fairtop_predebit`` answered, as the pre-debit's record or a refusal."""
    outcome, alloc_id, remaining = row if row else ("none", None, None)
    if outcome == "none":
        raise NotFound(f"no {resource} allocation of gid {gid} covers {day}")
    if outcome == "duplicate":
        raise Conflict(f"job {job_id} was already pre-debited")
    if outcome == "overdraft":
        return _Refusal(Overdraft(
            f"job {job_id} needs {minutes} {resource}-minutes; allocation {alloc_id} has {remaining} left",
            allocation=alloc_id, balance=remaining, minutes=minutes))
    return {"job_id": job_id, "alloc_id": alloc_id, "uid": uid, "gid": gid, "minutes": minutes,
            "status": "executing", "actual": None, "billed": None, "created": now, "resolved": None,
            "balance": remaining}


class Ledger:
    """The ledger on one store. Thread-safe; open with :func:`open_ledger`."""

    def __init__(self, store: _SqliteStore | _PostgresStore) -> None:
        self._store = store

    @property
    def dialect(self) -> str:
        return self._store.dialect

    def close(self) -> None:
        self._store.close()

    def writes_refused(self) -> str | None:
        """Why the store refuses writes at once now, or None (:mod:`commit_guard`)."""
        return self._store.writes_refused() if isinstance(self._store, _PostgresStore) else None

    # -- schema ---------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._store.transaction(write=False) as tx:
            try:
                row = tx.one("SELECT MAX(version) FROM schema_version")
            except Exception as exc:  # no table yet: a new store
                if "schema_version" in str(exc):
                    return 0
                raise
        return int(row[0] or 0) if row else 0

    def migrate(self, target: int | None = None) -> tuple[int, int]:
        """Apply the schema sections above the stored version (up to ``target``); returns
        ``(before, after)``. Each section commits on its own with its version row."""
        sections = schema_sections()
        target = sections[-1][0] if target is None else target
        with self._store.transaction(write=True, bounded=False) as tx:
            tx.lock(_LOCK_PROJECT, 0)
            tx.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)")
        before = self.schema_version()
        for version, dialect, sql in sections:
            if before < version <= target:
                with self._store.transaction(write=True, bounded=False) as tx:
                    tx.lock(_LOCK_PROJECT, 0)
                    row = tx.one("SELECT MAX(version) FROM schema_version")
                    if row and row[0] is not None and row[0] >= version:
                        continue  # another process migrated meanwhile
                    if dialect is None:
                        for stmt in _statements(sql.replace("{id}", self._store.id_type)):
                            tx.run(stmt)
                    elif dialect == self.dialect:  # one statement (a function body has ';' in it)
                        tx.run("\n".join(ln for ln in sql.strip().splitlines() if not ln.startswith("--")))
                    tx.run("INSERT INTO schema_version (version, applied) VALUES (?, ?)", (version, _now()))
        return before, self.schema_version()

    def check_schema(self) -> None:
        """Raise :class:`Unavailable` unless the store is at the current schema version."""
        have, want = self.schema_version(), schema_sections()[-1][0]
        if have != want:
            raise Unavailable(f"ledger schema is version {have}, this fairtop needs {want}: "
                              "run 'fairtop serve-allocations --migrate'")

    # -- projects -------------------------------------------------------------------------

    def create_project(self, name: str, gid: int, account: str) -> dict[str, Any]:
        try:
            with self._store.transaction(write=True) as tx:
                tx.lock(_LOCK_PROJECT, gid % 2**31)
                if tx.one("SELECT 1 FROM project WHERE name = ? OR gid = ?", (name, gid)):
                    raise Conflict(f"a project with name {name!r} or gid {gid} exists")
                tx.run("INSERT INTO project (name, gid, account) VALUES (?, ?, ?)", (name, gid, account))
                row = tx.one("SELECT id FROM project WHERE name = ?", (name,))
        except Exception as exc:
            if self._store.is_integrity_error(exc):
                raise Conflict(f"a project with name {name!r} or gid {gid} exists") from None
            raise
        assert row is not None
        return {"id": row[0], "name": name, "gid": gid, "account": account}

    def projects(self, gids: frozenset[int] | None = None, gid: int | None = None) -> list[dict[str, Any]]:
        where, params = _gid_filter(gids, "gid")
        if gid is not None:
            where, params = where + " AND gid = ?", [*params, gid]
        with self._store.transaction(write=False) as tx:
            rows = tx.all(f"SELECT id, name, gid, account FROM project WHERE {where} ORDER BY id", params)
        return [{"id": r[0], "name": r[1], "gid": r[2], "account": r[3]} for r in rows]

    def project(self, project_id: int, gids: frozenset[int] | None = None) -> dict[str, Any]:
        where, params = _gid_filter(gids, "gid")
        with self._store.transaction(write=False) as tx:
            r = tx.one(f"SELECT id, name, gid, account FROM project WHERE id = ? AND {where}", [project_id, *params])
        if r is None:
            raise NotFound(f"no project {project_id}")
        return {"id": r[0], "name": r[1], "gid": r[2], "account": r[3]}

    # -- allocations ----------------------------------------------------------------------

    def create_allocation(self, project_id: int, resource: str, category: str, start: date | str,
                          end: date | str) -> dict[str, Any]:
        start_s, end_s = str(start), str(end)
        if resource not in RESOURCES:
            raise Invalid(f"resource must be one of {', '.join(RESOURCES)}, got {resource!r}")
        if end_s < start_s:
            raise Invalid(f"end {end_s} is before start {start_s}")
        with self._store.transaction(write=True) as tx:
            tx.lock(_LOCK_PROJECT, project_id % 2**31)
            if tx.one("SELECT 1 FROM project WHERE id = ?", (project_id,)) is None:
                raise NotFound(f"no project {project_id}")
            clash = tx.one(
                "SELECT id, start_date, end_date FROM allocation WHERE project_id = ? AND resource = ?"
                " AND start_date <= ? AND end_date >= ?", (project_id, resource, end_s, start_s))
            if clash:
                raise Conflict(f"overlaps allocation {clash[0]} ({clash[1]} to {clash[2]}) of project "
                               f"{project_id} for {resource}", allocation=clash[0])
            tx.run("INSERT INTO allocation (project_id, resource, category, start_date, end_date)"
                   " VALUES (?, ?, ?, ?, ?)", (project_id, resource, category, start_s, end_s))
            row = tx.one("SELECT id FROM allocation WHERE project_id = ? AND resource = ? AND start_date = ?",
                         (project_id, resource, start_s))
        assert row is not None
        return self.allocation(row[0])

    def credit(self, alloc_id: int, minutes: int) -> dict[str, Any]:
        """Add ``minutes`` (> 0) to an allocation; returns the allocation."""
        if not 0 < minutes <= MAX_MINUTES:
            raise Invalid(f"minutes must be in 1..{MAX_MINUTES}, got {minutes}")
        with self._store.transaction(write=True) as tx:
            tx.lock(_LOCK_ALLOC, alloc_id % 2**31)
            row = tx.one("SELECT credited FROM allocation WHERE id = ?", (alloc_id,))
            if row is None:
                raise NotFound(f"no allocation {alloc_id}")
            if row[0] + minutes > _MAX_TOTAL:
                raise Invalid("the credit would exceed the ledger's largest balance")
            tx.run("INSERT INTO credit (alloc_id, minutes, created) VALUES (?, ?, ?)", (alloc_id, minutes, _now()))
            tx.run("UPDATE allocation SET credited = credited + ? WHERE id = ?", (minutes, alloc_id))
        return self.allocation(alloc_id)

    def allocation(self, alloc_id: int, gids: frozenset[int] | None = None) -> dict[str, Any]:
        where, params = _gid_filter(gids, "p.gid")
        with self._store.transaction(write=False) as tx:
            row = tx.one(f"{_ALLOC_SELECT} WHERE a.id = ? AND {where}", [alloc_id, *params])
            if row is None:
                raise NotFound(f"no allocation {alloc_id}")
            debits = dict(tx.all("SELECT uid, minutes FROM debit WHERE alloc_id = ?", (alloc_id,)))
        return _alloc_dict(row, debits)

    def allocations(self, gids: frozenset[int] | None = None, *, project: int | None = None,
                    gid: int | None = None, active_on: str | None = None) -> list[dict[str, Any]]:
        where, params = _gid_filter(gids, "p.gid")
        for clause, value in (("a.project_id = ?", project), ("p.gid = ?", gid)):
            if value is not None:
                where, params = f"{where} AND {clause}", [*params, value]
        if active_on is not None:
            where, params = f"{where} AND a.start_date <= ? AND a.end_date >= ?", [*params, active_on, active_on]
        with self._store.transaction(write=False) as tx:
            rows = tx.all(f"{_ALLOC_SELECT} WHERE {where} ORDER BY a.id", params)
            debits: dict[int, dict[int, int]] = {}
            for aid, uid, minutes in tx.all(
                    "SELECT d.alloc_id, d.uid, d.minutes FROM debit d JOIN allocation a ON a.id = d.alloc_id"
                    f" JOIN project p ON p.id = a.project_id WHERE {where}", params):
                debits.setdefault(aid, {})[uid] = minutes
        return [_alloc_dict(r, debits.get(r[0], {})) for r in rows]

    # -- jobs -----------------------------------------------------------------------------

    def predebit(self, job_id: str, uid: int, gid: int, resource: str, minutes: int,
                 today: date | str | None = None) -> dict[str, Any]:
        """Hold ``minutes`` for a starting job against the allocation of ``gid`` and ``resource``
        that covers ``today``. Raises :class:`NotFound` (no allocation), :class:`Conflict` (job id
        already pre-debited) or :class:`Overdraft` (recorded in the failures)."""
        if not 0 <= minutes <= MAX_MINUTES:
            raise Invalid(f"minutes must be in 0..{MAX_MINUTES}, got {minutes}")
        day = str(today or date.today())
        try:
            if isinstance(self._store, _PostgresStore):
                outcome = self._predebit_pg(job_id, uid, gid, resource, minutes, day)
            else:
                outcome = self._predebit(job_id, uid, gid, resource, minutes, day)
        except Exception as exc:
            if self._store.is_integrity_error(exc):
                raise Conflict(f"job {job_id} was already pre-debited") from None
            raise
        if isinstance(outcome, _Refusal):
            raise outcome.error
        return outcome

    @property
    def predebits_async(self) -> bool:
        """Whether the service's batches run on its event loop (:meth:`predebit_many_async`,
        PostgreSQL); SQLite's block on its file, so they run in a thread (:meth:`predebit_batch`)."""
        return isinstance(self._store, _PostgresStore)

    async def predebit_many_async(self, jobs: Sequence[tuple[str, int, int, str, int]],
                                  today: date | str | None = None) -> list[dict[str, Any] | LedgerError]:
        """Several pre-debits ``(job_id, uid, gid, resource, minutes)`` on PostgreSQL in one
        statement of ``fairtop_predebit_many``: one transaction, one commit for all (group commit).
        Each runs as :meth:`predebit` would, one after the other; each answer is its record
        or its refusal, returned after the commit. The jobs run sorted by (gid, resource), so two
        batches (two service instances) take their allocations' locks in the same order and never
        deadlock; the answers come back in the caller's order."""
        store = self._store
        if not isinstance(store, _PostgresStore):
            raise TypeError("predebit_many_async needs PostgreSQL; SQLite has predebit_batch")
        day, now = str(today or date.today()), _now()
        out: list[dict[str, Any] | LedgerError | None] = [None] * len(jobs)
        order = []
        for i, job in enumerate(jobs):
            if 0 <= job[4] <= MAX_MINUTES:
                order.append(i)
            else:
                out[i] = Invalid(f"minutes must be in 0..{MAX_MINUTES}, got {job[4]}")
        order.sort(key=lambda i: (jobs[i][2], jobs[i][3]))
        if order:
            columns = [[jobs[i][k] for i in order] for k in range(5)]
            for attempt in range(3):
                try:
                    rows = await store.write_async(_PG_PREDEBIT_MANY, (*columns, day, now))
                    break
                except store.psycopg.errors.DeadlockDetected:  # rolled back whole: run it again
                    # (sorted batches never lock in opposite orders; a job id racing into two
                    # allocations from two instances at once still can)
                    if attempt == 2:
                        raise
            for idx, outcome, alloc, remaining in rows:
                i = order[idx - 1]
                job_id, uid, gid, resource, minutes = jobs[i]
                try:
                    answer = _pg_predebit_outcome((outcome, alloc, remaining), job_id, uid, gid, resource,
                                                  minutes, day, now)
                except LedgerError as exc:
                    out[i] = exc
                    continue
                out[i] = answer.error if isinstance(answer, _Refusal) else answer
        assert all(answer is not None for answer in out), "fairtop_predebit_many skipped a job"
        return out  # type: ignore[return-value]  # no None left (asserted)

    def _predebit_pg(self, job_id: str, uid: int, gid: int, resource: str, minutes: int,
                     day: str) -> dict[str, Any] | _Refusal:
        """The same steps as :meth:`_predebit` in the stored function ``fairtop_predebit``."""
        now = _now()
        store = self._store
        assert isinstance(store, _PostgresStore)  # the caller's dispatch: only PostgreSQL has the function
        row = store.single(_PG_PREDEBIT, (job_id, uid, gid, resource, minutes, day, now))
        return _pg_predebit_outcome(row, job_id, uid, gid, resource, minutes, day, now)

    def predebit_batch(self, jobs: Sequence[tuple[str, int, int, str, int]],
                       today: date | str | None = None) -> list[dict[str, Any] | LedgerError]:
        """Several pre-debits ``(job_id, uid, gid, resource, minutes)`` on SQLite in one
        transaction: one commit (one fsync) for all of them, i.e. group commit. Each runs as
        :meth:`predebit` would, one after the other under the write lock, in its own savepoint;
        each answer is its record or its refusal, and none is returned before the commit."""
        if not isinstance(self._store, _SqliteStore):
            raise TypeError("predebit_batch is SQLite's group commit; PostgreSQL groups commits itself")
        day = str(today or date.today())
        out: list[dict[str, Any] | LedgerError] = []
        with self._store.transaction(write=True) as tx:
            for job_id, uid, gid, resource, minutes in jobs:
                if not 0 <= minutes <= MAX_MINUTES:
                    out.append(Invalid(f"minutes must be in 0..{MAX_MINUTES}, got {minutes}"))
                    continue
                tx.run("SAVEPOINT predebit")
                outcome: dict[str, Any] | _Refusal | LedgerError
                try:
                    outcome = self._predebit_in(tx, job_id, uid, gid, resource, minutes, day)
                except LedgerError as exc:
                    tx.run("ROLLBACK TO predebit")
                    outcome = exc
                except sqlite3.IntegrityError:
                    tx.run("ROLLBACK TO predebit")
                    outcome = Conflict(f"job {job_id} was already pre-debited")
                tx.run("RELEASE predebit")
                out.append(outcome.error if isinstance(outcome, _Refusal) else outcome)
        return out

    def _predebit(self, job_id: str, uid: int, gid: int, resource: str, minutes: int,
                  day: str) -> dict[str, Any] | _Refusal:
        with self._store.transaction(write=True) as tx:
            return self._predebit_in(tx, job_id, uid, gid, resource, minutes, day)

    def _predebit_in(self, tx: _Tx, job_id: str, uid: int, gid: int, resource: str, minutes: int,
                     day: str) -> dict[str, Any] | _Refusal:
        """The pre-debit's steps inside the caller's write transaction (a refusal still commits
        its failure record)."""
        row = tx.one("SELECT a.id FROM allocation a JOIN project p ON p.id = a.project_id"
                     " WHERE p.gid = ? AND a.resource = ? AND a.start_date <= ? AND a.end_date >= ?",
                     (gid, resource, day, day))
        if row is None:
            raise NotFound(f"no {resource} allocation of gid {gid} covers {day}")
        alloc_id = row[0]
        tx.lock(_LOCK_ALLOC, alloc_id % 2**31)
        if tx.one("SELECT 1 FROM predebit WHERE job_id = ?", (job_id,)):
            raise Conflict(f"job {job_id} was already pre-debited")
        credited, held, debited = tx.one(
            "SELECT credited, held, debited FROM allocation WHERE id = ?", (alloc_id,)) or (0, 0, 0)
        balance = credited - held - debited
        now = _now()
        if minutes > balance:
            tx.run("INSERT INTO failure (job_id, alloc_id, uid, gid, minutes, balance, created)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)", (job_id, alloc_id, uid, gid, minutes, balance, now))
            return _Refusal(Overdraft(
                f"job {job_id} needs {minutes} {resource}-minutes; allocation {alloc_id} has {balance} left",
                allocation=alloc_id, balance=balance, minutes=minutes))
        tx.run("INSERT INTO predebit (job_id, alloc_id, uid, gid, minutes, status, created)"
               " VALUES (?, ?, ?, ?, ?, 'executing', ?)", (job_id, alloc_id, uid, gid, minutes, now))
        tx.run("UPDATE allocation SET held = held + ? WHERE id = ?", (minutes, alloc_id))
        return {"job_id": job_id, "alloc_id": alloc_id, "uid": uid, "gid": gid, "minutes": minutes,
                "status": "executing", "actual": None, "billed": None, "created": now, "resolved": None,
                "balance": balance - minutes}

    def complete(self, job_id: str, state: str, minutes: int) -> dict[str, Any]:
        """Resolve a pre-debit: debit ``minutes`` (capped at the pre-debit; 0 for ``node_fail``)
        to the allocation it was held against and return the rest. Repeating the same completion
        is answered with the stored record; a different one is a :class:`Conflict`."""
        if state not in JOB_STATES:
            raise Invalid(f"state must be one of {', '.join(JOB_STATES)}, got {state!r}")
        if not 0 <= minutes <= MAX_MINUTES:
            raise Invalid(f"minutes must be in 0..{MAX_MINUTES}, got {minutes}")
        with self._store.transaction(write=True) as tx:
            row = tx.one("SELECT alloc_id FROM predebit WHERE job_id = ?", (job_id,))
            if row is None:
                raise NotFound(f"no pre-debit for job {job_id}")
            alloc_id = row[0]
            tx.lock(_LOCK_ALLOC, alloc_id % 2**31)
            held_minutes, uid, status, actual = tx.one(
                "SELECT minutes, uid, status, actual FROM predebit WHERE job_id = ?", (job_id,)) or (0, 0, "", 0)
            if status != "executing":
                if status == state and actual == minutes:
                    return self._job(tx, job_id)
                raise Conflict(f"job {job_id} was already resolved as {status} ({actual} minutes)")
            billed = 0 if state == "node_fail" else min(minutes, held_minutes)
            tx.run("UPDATE predebit SET status = ?, actual = ?, billed = ?, resolved = ? WHERE job_id = ?",
                   (state, minutes, billed, _now(), job_id))
            tx.run("UPDATE allocation SET held = held - ?, debited = debited + ? WHERE id = ?",
                   (held_minutes, billed, alloc_id))
            tx.run("INSERT INTO debit (alloc_id, uid, minutes) VALUES (?, ?, ?) ON CONFLICT (alloc_id, uid)"
                   " DO UPDATE SET minutes = debit.minutes + excluded.minutes", (alloc_id, uid, billed))
            return self._job(tx, job_id)

    def _job(self, tx: _Tx, job_id: str) -> dict[str, Any]:
        row = tx.one(f"{_JOB_SELECT} WHERE j.job_id = ?", (job_id,))
        assert row is not None
        return dict(zip(_JOB_COLS, row))

    def job(self, job_id: str, gids: frozenset[int] | None = None) -> dict[str, Any]:
        where, params = _gid_filter(gids, "j.gid")
        with self._store.transaction(write=False) as tx:
            row = tx.one(f"{_JOB_SELECT} WHERE j.job_id = ? AND {where}", [job_id, *params])
        if row is None:
            raise NotFound(f"no pre-debit for job {job_id}")
        return dict(zip(_JOB_COLS, row))

    def jobs(self, gids: frozenset[int] | None = None, *, gid: int | None = None, uid: int | None = None,
             status: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        where, params = _gid_filter(gids, "j.gid")
        for clause, value in (("j.gid = ?", gid), ("j.uid = ?", uid), ("j.status = ?", status)):
            if value is not None:
                where, params = f"{where} AND {clause}", [*params, value]
        with self._store.transaction(write=False) as tx:
            rows = tx.all(f"{_JOB_SELECT} WHERE {where} ORDER BY j.id DESC LIMIT {int(limit)}", params)
        return [dict(zip(_JOB_COLS, r)) for r in rows]

    def failures(self, gids: frozenset[int] | None = None, *, gid: int | None = None,
                 limit: int = 1000) -> list[dict[str, Any]]:
        where, params = _gid_filter(gids, "f.gid")
        if gid is not None:
            where, params = f"{where} AND f.gid = ?", [*params, gid]
        cols = ", ".join(f"f.{c}" for c in _FAIL_COLS)
        with self._store.transaction(write=False) as tx:
            rows = tx.all(f"SELECT {cols} FROM failure f WHERE {where} ORDER BY f.id DESC LIMIT {int(limit)}",
                          params)
        return [dict(zip(_FAIL_COLS, r)) for r in rows]

    # -- audit ----------------------------------------------------------------------------

    def audit(self) -> list[dict[str, Any]]:
        """Allocations whose running totals differ from their recomputed activity (empty when
        consistent), or whose balance is negative."""
        with self._store.transaction(write=False) as tx:
            rows = tx.all("SELECT a.id, a.credited, a.held, a.debited, s.credited, s.held, s.debited, s.billed"
                          " FROM allocation a JOIN activity_sums s ON s.alloc_id = a.id ORDER BY a.id")
        bad = []
        for aid, cr, held, deb, s_cr, s_held, s_deb, s_billed in rows:
            if (cr, held, deb) != (s_cr, s_held, s_deb) or deb != s_billed or cr - held - deb < 0:
                bad.append({"id": aid, "totals": (cr, held, deb), "activity": (s_cr, s_held, s_deb, s_billed)})
        return bad


_CONNINFO_KEY = re.compile(r"^\s*(host|hostaddr|port|dbname|user|service|target_session_attrs)\s*=")


def is_postgresql(target: str) -> bool:
    """Whether ``target`` names PostgreSQL: a ``postgresql://`` URL or a libpq ``key=value``
    conninfo (``host=a,b port=p,q dbname=... target_session_attrs=read-write`` for a primary and
    its replica), rather than an SQLite path."""
    return target.startswith(("postgresql://", "postgres://")) or bool(_CONNINFO_KEY.match(target))


def open_ledger(target: str, *, migrate: bool = False, pool_size: int = 8,
                commit_timeout: float = commit_guard.COMMIT_TIMEOUT_S) -> Ledger:
    """A ledger on ``target``: PostgreSQL (a ``postgresql://`` URL or a libpq conninfo, either
    with several hosts) or an SQLite path. With ``migrate`` the schema is brought to the current
    version first; otherwise it must already be current. On PostgreSQL a write is refused after
    ``commit_timeout`` seconds (:mod:`tui.allocations.commit_guard`)."""
    if is_postgresql(target):
        try:
            store: _SqliteStore | _PostgresStore = _PostgresStore(target, pool_size=pool_size,
                                                                   commit_timeout=commit_timeout)
        except ImportError:
            raise Unavailable("PostgreSQL needs psycopg: pip install 'fairtop[allocations]'") from None
    else:
        store = _SqliteStore(target)
    ledger = Ledger(store)
    try:
        if migrate:
            ledger.migrate()
        else:
            ledger.check_schema()
    except BaseException:
        ledger.close()  # its pool's threads and connections
        raise
    return ledger
