"""Group commit of pre-debits: the requests that arrive while one commit is under way share the
next one.

Every commit waits for its flush to disk, and a pre-debit holds its allocation's lock until its
commit is on disk (SQLite: the one writer lock; PostgreSQL: the allocation's advisory lock), so one
commit per pre-debit caps one allocation at one flush per request (~190/s at 5 ms a flush). Here
one writer task takes every pre-debit waiting and runs them as one batch in one transaction
(SQLite: :meth:`Ledger.predebit_batch` in a thread, each in its own savepoint; PostgreSQL:
:meth:`Ledger.predebit_many_async`, one statement) and commits
once; each request is answered only after that commit, so an acknowledged pre-debit is as durable
as before, and each outcome is the one it would have had alone in the batch's order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from tui.allocations.ledger import Ledger

__all__ = ["GroupCommit", "MAX_BATCH"]

#: The most pre-debits one commit carries: bounds the latency of the first in a batch, and on
#: PostgreSQL bounds how long one statement holds the locks of its allocations.
MAX_BATCH = 64

#: After a batch of several with nobody waiting, how long to let the requests answered send their
#: next ones before the next batch starts (else it starts with the first one back, and the rest wait
#: a cycle). Requests already waiting start at once: a pause would let newcomers into their batch,
#: and a batch commits in a time that grows with its size (on PostgreSQL ~2.2 ms a pre-debit at the
#: bench's bound), so those that waited through one batch would wait through a second one as long
#: (bench/README.md: the p99 under overload).
GATHER_S = 0.001

Job = tuple[str, int, int, str, int]
RunBatch = Callable[[Sequence[Job]], Awaitable[list[Any]]]


def batch_runner(ledger: Ledger) -> RunBatch:
    """How ``ledger`` runs a batch: on the event loop (PostgreSQL) or in one thread (SQLite)."""
    if ledger.predebits_async:
        return ledger.predebit_many_async
    thread = anyio.CapacityLimiter(1)

    async def in_thread(jobs: Sequence[Job]) -> list[Any]:
        return await anyio.to_thread.run_sync(ledger.predebit_batch, list(jobs), limiter=thread)

    return in_thread


class GroupCommit:
    """Pre-debits batched by arrival; use from one event loop."""

    def __init__(self, ledger: Ledger) -> None:
        self._run = batch_runner(ledger)
        self._waiting: list[tuple[Job, asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None

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
                    answers: list[Any] = await self._run([job for job, _ in batch])
                except Exception as exc:  # the store failed: nothing in the batch was committed
                    answers = [exc] * len(batch)
                for (_, future), answer in zip(batch, answers):
                    if future.done():  # the request was cancelled meanwhile
                        continue
                    if isinstance(answer, BaseException):
                        future.set_exception(answer)
                    else:
                        future.set_result(answer)
                if len(batch) > 1 and not self._waiting:  # let the answers go out and the next requests in
                    await asyncio.sleep(GATHER_S)
        finally:
            self._writer = None
