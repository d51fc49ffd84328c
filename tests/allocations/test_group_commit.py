"""The service's group commit: which pre-debits share a commit, on a real SQLite ledger."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui.allocations.group_commit import GroupCommit, Job
from tui.allocations.ledger import open_ledger


async def test_requests_that_waited_through_a_batch_are_not_made_to_wait_for_newcomers(tmp_path: Path) -> None:
    """Two pre-debits start a batch whose commit is held; two more arrive meanwhile and wait. When
    the batch ends, the two waiting start the next one at once: a job sent on the first answer goes
    to the batch after. (A pause to gather it would have put it into theirs, and a batch's commit
    grows with its size: under overload those that waited through one batch waited through a
    second as long, the p99 of bench/README.md's overload runs.) Each is answered as if alone."""
    ledger = open_ledger(str(tmp_path / "ledger.db"), migrate=True)
    project = ledger.create_project("chem", 7001, "chem")
    alloc = ledger.create_allocation(project["id"], "cpu", "startup", "2000-01-01", "2099-12-31")
    ledger.credit(alloc["id"], 100)
    batches: list[list[str]] = []
    first_may_commit = threading.Event()
    commit = ledger.predebit_batch

    def held_first(jobs: Sequence[Job], today: Any = None) -> list[Any]:
        batches.append([job[0] for job in jobs])
        if len(batches) == 1:
            assert first_may_commit.wait(10)
        return commit(jobs, today)

    ledger.predebit_batch = held_first  # type: ignore[method-assign]
    group = GroupCommit(ledger)

    async def one_then_another() -> dict[str, Any]:
        await group.predebit("a1", 5001, 7001, "cpu", 10)
        return await group.predebit("d", 5001, 7001, "cpu", 1)

    first = [asyncio.create_task(one_then_another()), asyncio.create_task(group.predebit("a2", 5002, 7001, "cpu", 20))]
    while not batches:
        await asyncio.sleep(0.005)
    waiting = [asyncio.create_task(group.predebit(job, 5003, 7001, "cpu", minutes))
               for job, minutes in (("b", 30), ("c", 5))]
    await asyncio.sleep(0.05)
    first_may_commit.set()
    answers = await asyncio.gather(*first, *waiting)
    assert batches == [["a1", "a2"], ["b", "c"], ["d"]]
    assert [(a["job_id"], a["balance"]) for a in answers] == [("d", 34), ("a2", 70), ("b", 40), ("c", 35)]
    assert ledger.allocation(alloc["id"])["balance"] == 34
    assert ledger.audit() == []
    ledger.close()
