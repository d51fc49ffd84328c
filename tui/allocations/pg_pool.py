"""The ledger's PostgreSQL connections: psycopg_pool's pools, set up for a server that restarts
or fails over to its replica.

* A connection handed out is alive (:func:`connection`). psycopg_pool's ``check_connection``
  costs a round trip per checkout; a ``select`` costs none (bench/README.md measured both): the server has
  nothing to say to an idle connection (fairtop never LISTENs), so a readable socket means it
  closed it or said why it is closing it (a restart's "terminating connection due to
  administrator command"). A server gone without a word (a cut cable) is found by the statement,
  which fails once and drops its connection.
* ``reconnect_timeout``: psycopg_pool retries a failed connection in the background after 1, 2,
  4, ... s. Giving up after half a second instead leaves the reconnecting to the requests: each
  that finds no connection starts an attempt at once (one at a time), so the pool finds the
  promoted replica (or the restarted server) as soon as it takes connections, not after a backoff
  that grew during the outage (test_failover: served again 0.03-0.09 s after the promotion,
  against 0.75-0.79 s with 3 s). For the same reason ``min_size`` is 1: connections the pool
  keeps by itself are reconnected only in the background, with that backoff.
* ``max_lifetime``: connections are renewed, so none outlives a switch of the server behind a name.
* A multi-host conninfo (``host=a,b port=p,q target_session_attrs=read-write``) is libpq's: each
  new connection goes to whichever host takes writes now.

The last connection error is kept (:attr:`LastError.text`), so that a refusal says why (refused,
read-only, timed out) rather than only that no connection came within the timeout. psycopg_pool's
own warnings (several lines per failed attempt, and the requests make an attempt each during an
outage) are silenced for that reason: the 503's message carries the error.
"""

from __future__ import annotations

import logging
import select
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

__all__ = ["LastError", "connection", "connection_async", "sync_pool", "async_pool", "first_line"]

#: Seconds psycopg_pool keeps retrying a connection in the background before it gives up (and
#: the next request that needs one tries at once).
RECONNECT_S = 0.5
#: Seconds a connection lives before the pool replaces it (with jitter; psycopg_pool's default).
MAX_LIFETIME_S = 3600.0


def first_line(exc: BaseException) -> str:
    """An exception's message without libpq's continuation lines (or its repr if it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)


class LastError:
    """The last connection attempt's failure, as one line."""

    text = "no connection yet"


def _looks_alive(conn: Any) -> bool:
    if conn.closed:
        return False
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except Exception:  # noqa: BLE001 - OSError, or psycopg.OperationalError: no socket any more
        return False
    return not readable


@contextmanager
def connection(pool: Any, timeout: float) -> Iterator[Any]:
    """A live connection of the ``ConnectionPool`` ``pool`` (waiting up to ``timeout`` seconds).
    A dead idle one (one ``select`` of no time) is closed and given back, which drops it, and the
    next is taken at once: psycopg_pool's own ``check`` sleeps 1, 2, 4 s between tries, which kept
    a request 3.5 s across a fail-over."""
    deadline = time.monotonic() + timeout
    while True:
        conn = pool.getconn(max(deadline - time.monotonic(), 0.001))
        if _looks_alive(conn):
            break
        conn.close()
        pool.putconn(conn)
    try:
        yield conn
    finally:
        pool.putconn(conn)


@asynccontextmanager
async def connection_async(pool: Any, timeout: float) -> AsyncIterator[Any]:
    """:func:`connection` of an ``AsyncConnectionPool``."""
    deadline = time.monotonic() + timeout
    while True:
        conn = await pool.getconn(max(deadline - time.monotonic(), 0.001))
        if _looks_alive(conn):
            break
        await conn.close()
        await pool.putconn(conn)
    try:
        yield conn
    finally:
        await pool.putconn(conn)


def _options(conninfo: str, size: int, timeout: float) -> dict[str, Any]:
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)  # the reason reaches the caller instead
    return {"conninfo": conninfo, "kwargs": {"autocommit": True, "connect_timeout": max(1, int(timeout))},
            "min_size": 1, "max_size": size, "timeout": timeout, "max_lifetime": MAX_LIFETIME_S,
            "reconnect_timeout": RECONNECT_S, "name": "fairtop-ledger", "open": False}


def sync_pool(conninfo: str, size: int, timeout: float, last: LastError) -> Any:
    """An open ``ConnectionPool`` of autocommit connections (up to ``size``; a request waits up
    to ``timeout`` seconds for one)."""
    import psycopg
    from psycopg_pool import ConnectionPool

    class Remembering(psycopg.Connection):
        @classmethod
        def connect(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().connect(*args, **kwargs)
            except psycopg.Error as exc:
                last.text = first_line(exc)
                raise

    pool: Any = ConnectionPool(connection_class=Remembering,
                               **_options(conninfo, size, timeout))
    pool.open()
    return pool


async def async_pool(conninfo: str, size: int, timeout: float, last: LastError) -> Any:
    """An ``AsyncConnectionPool`` like :func:`sync_pool`, opened in the running event loop."""
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    class Remembering(psycopg.AsyncConnection):
        @classmethod
        async def connect(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                return await super().connect(*args, **kwargs)
            except psycopg.Error as exc:
                last.text = first_line(exc)
                raise

    pool: Any = AsyncConnectionPool(connection_class=Remembering,
                                    **_options(conninfo, size, timeout))
    await pool.open()
    return pool
