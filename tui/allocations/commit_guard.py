"""A bound on how long a PostgreSQL write may take, for a primary whose synchronous standby is gone.

With ``synchronous_standby_names`` naming standbys of which none is connected, every commit on
the primary waits (``wait_event`` ``SyncRep`` in ``pg_stat_activity``) until one is back: for ever.
No server setting bounds that wait: ``statement_timeout`` is disarmed before the commit, and
neither ``lock_timeout`` nor ``idle_in_transaction_session_timeout`` ends it (bench/syncrep_timeouts.py
measured the three on PostgreSQL 15). Only a
cancel ends it, and PostgreSQL then answers the commit with a WARNING "canceling wait for
synchronous replication ... The transaction has already committed locally": the write is on the
primary but on no standby, and the client was not told it landed.

So each write gets ``timeout_s``; past it the caller cancels its statement (psycopg does on an
asyncio timeout; :class:`Watchdog` does for a thread) and answers 503: not acknowledged, retry.
A retried pre-debit or debit cannot land twice: a job id is taken once, and a repeated completion
is answered with its stored record (the client reads ``GET /job/ID`` first for a pre-debit).

After one such timeout the store is *stalled*: further writes are refused at once rather than
each holding a connection and its client for ``timeout_s``, while a thread of the guard makes a
tiny commit of its own (no ledger table touched), which waits as long as the standby is gone and
ends the stall the moment it is confirmed: the service serves again by itself.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable

__all__ = ["CommitGuard", "Stalled", "Watchdog", "WATCHDOG", "COMMIT_TIMEOUT_S"]

#: Seconds a write (its statements and its commit) may take before it is cancelled and refused.
COMMIT_TIMEOUT_S = 5.0


class Stalled(Exception):
    """A write refused at once: a write timed out, and no commit went through since."""


class CommitGuard:
    """The stall state of one store's writes; thread-safe.

    ``probe`` makes one tiny commit (blocking, without a timeout) and raises if it failed: while
    stalled a thread runs it again and again, and its first commit ends the stall (the standby is
    back; or the write that timed out waited on something else, which is over). Only the probe
    does: a write that ends meanwhile may have written nothing (a repeated debit), and such a
    commit waits for no standby."""

    def __init__(self, probe: Callable[[], None], timeout_s: float = COMMIT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self.since: float | None = None
        """``time.monotonic()`` of the first write that timed out, while stalled."""
        self._probe = probe
        self._lock = threading.Lock()
        self._closed = False

    def admit(self) -> None:
        """Let a write start, or raise :class:`Stalled`."""
        if self.since is not None:
            raise Stalled(self.reason())

    def timed_out(self) -> None:
        """A write timed out: the stall starts (if it had not), and its probe."""
        with self._lock:
            if self.since is None and not self._closed:
                self.since = time.monotonic()
                threading.Thread(target=self._probing, name="fairtop-commit-probe", daemon=True).start()

    def close(self) -> None:
        """No further probe (a probe waiting now ends when its store closes its connection)."""
        with self._lock:
            self._closed = True

    def _probing(self) -> None:
        while self.since is not None and not self._closed:
            try:
                self._probe()
            except Exception:  # noqa: BLE001 - the server is down too: try again in a while
                time.sleep(1.0)
                continue
            self.since = None

    def reason(self) -> str:
        """Why writes are refused (stalled), as one line."""
        since = self.since
        ago = f"{time.monotonic() - since:.0f} s" if since is not None else "0 s"
        return (f"PostgreSQL: no write committed within {self.timeout_s:g} s for {ago} (a synchronous standby "
                "missing? GET /health says); a refused write may have committed on the primary: send it again")


class Watchdog:
    """Calls a function at a deadline unless disarmed first; one thread for all armed calls (a
    thread blocked in psycopg cannot time itself out)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Callable[[], None]]] = {}
        self._firing: dict[int, threading.Event] = {}  # set once the call returned
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None
        self._wakes_at = math.inf  # when the thread wakes next by itself

    def arm(self, after_s: float, fire: Callable[[], None]) -> int:
        """Call ``fire`` in ``after_s`` seconds; returns the token for :meth:`disarm`."""
        with self._cond:
            token = next(self._tokens)
            at = time.monotonic() + after_s
            self._armed[token] = (at, fire)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fairtop-commit-watchdog", daemon=True)
                self._thread.start()
            if at < self._wakes_at:  # else it wakes in time anyway: no thread switch per write
                self._cond.notify()
        return token

    def disarm(self, token: int) -> bool:
        """Cancel the call; False if it was not made, True if it was (once it has returned)."""
        with self._cond:
            if self._armed.pop(token, None) is not None:
                return False
            finished = self._firing.pop(token)
        finished.wait(10)  # a cancel takes a round trip; the connection is closed only after it
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [(token, fire) for token, (at, fire) in self._armed.items() if at <= now]
                if not due:
                    self._wakes_at = min((at for at, _ in self._armed.values()), default=math.inf)
                    self._cond.wait(None if self._wakes_at == math.inf else self._wakes_at - now)
                    self._wakes_at = -math.inf  # awake: it sees every deadline armed meanwhile
                    continue
                for token, _ in due:
                    del self._armed[token]
                    self._firing[token] = threading.Event()
                events = [(fire, self._firing[token]) for token, fire in due]
            for fire, finished in events:
                try:
                    fire()
                except Exception:  # noqa: BLE001, S110 - a failed cancel: the write's own end decides
                    pass
                finished.set()


#: The one watchdog of the process (its thread starts with the first write).
WATCHDOG = Watchdog()
