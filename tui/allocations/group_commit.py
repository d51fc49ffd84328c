"""Group commit of SQLite pre-debits: the requests that arrive while one commit is under way share
the next one.

SQLite has one writer at a time and each commit waits for its fsync (``synchronous=FULL``), so one
commit per pre-debit caps the service at one fsync per request. Here one writer thread takes
every pre-debit waiting, runs them in one transaction (:meth:`Ledger.predebit_batch`: each in
order, each in its own savepoint) and commits once; each request is answered only after that
commit, so an acknowledged pre-debit is as durable as before. PostgreSQL needs none of this: its
backends share WAL flushes by themselves.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio

from tui.allocations.ledger import Ledger

__all__ = ["GroupCommit"]

#: The most pre-debits one commit carries (bounds the latency of the first in a batch).
MAX_BATCH = 64


class GroupCommit:
    """Pre-debits on an SQLite ledger, batched by arrival; use from one event loop."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._waiting: list[tuple[tuple[str, int, int, str, int], asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._thread = anyio.CapacityLimiter(1)

    async def predebit(self, job_id: str, uid: int, gid: int, resource: str, minutes: int) -> dict[str, Any]:
        """The pre-debit's record once committed; raises its refusal (a ``LedgerError``) or
        the store's error."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append(((job_id, uid, gid, resource, minutes), future))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())
        result: dict[str, Any] = await future
        return result

    async def _write(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting[:MAX_BATCH], self._waiting[MAX_BATCH:]
                try:
                    answers: list[Any] = await anyio.to_thread.run_sync(
                        self._ledger.predebit_batch, [job for job, _ in batch], limiter=self._thread)
                except Exception as exc:  # the store failed: nothing in the batch was committed
                    answers = [exc] * len(batch)
                for (_, future), answer in zip(batch, answers):
                    if future.done():  # the request was cancelled meanwhile
                        continue
                    if isinstance(answer, BaseException):
                        future.set_exception(answer)
                    else:
                        future.set_result(answer)
        finally:
            self._writer = None
