"""The published balances that ``cli_filter.lua`` reads itself, so that a submission starts no Python.

``fairtop allocations publish-balances PATH --every S`` (beside the service, or on the ledger's
host) writes every allocation's free balance to ``PATH`` each ``S`` seconds, atomically (a temporary
file in the same folder, then a rename: a reader sees the old file or the new one, never half of
one). The Lua filter refuses a job that would overdraw with the same words as
``fairtop allocations hook submit``; a file older than its ``STALE_S`` is no opinion (the prolog's
pre-debit decides). Format, version 1 (tab-separated, one allocation a line, names as the ledger
holds them: no tab or newline can be in one)::

    # fairtop balances 1 <unix seconds when written>
    <account> <gid> <resource> <start YYYY-MM-DD> <end YYYY-MM-DD> <balance minutes> <id> <project>
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from tui.allocations.records import AllocationRecord
from tui.file_modes import PUBLIC, write_atomic

__all__ = ["HEADER", "format_balances", "write_balances", "publish_every"]

HEADER = "# fairtop balances 1"


def format_balances(allocs: Iterable[AllocationRecord], now: float) -> str:
    """The file's text for ``allocs`` written at ``now`` (unix seconds)."""
    lines = [f"{HEADER} {int(now)}"]
    for a in sorted(allocs, key=lambda a: a.id):
        cells = (a.account, str(a.gid), a.resource, a.start, a.end, str(a.balance), str(a.id), a.project_name)
        if any("\t" in c or "\n" in c for c in cells):
            continue  # the ledger's names never hold these; a line must stay one record
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def write_balances(path: str | Path, text: str, mode: int = PUBLIC) -> None:
    """Replace ``path`` with ``text`` atomically, with ``mode`` whatever the umask (0644 by
    default: the submitters' filters read it as themselves)."""
    write_atomic(path, text, mode)


def publish_every(path: str | Path, records: Callable[[], list[AllocationRecord]], every_s: float,
                  times: int | None = None, log: Callable[[str], None] = print) -> None:
    """Write the balances every ``every_s`` seconds (``times`` rounds, or forever). A round whose
    read fails writes nothing: the file ages, and the filters stop trusting it after STALE_S."""
    done = 0
    while times is None or done < times:
        started = time.monotonic()
        try:
            allocs = records()
        except Exception as exc:  # noqa: BLE001 - any failure of the source: keep going, say why
            log(f"fairtop: balances not published: {exc}")
        else:
            write_balances(path, format_balances(allocs, time.time()))
        done += 1
        if times is None or done < times:
            time.sleep(max(0.0, every_s - (time.monotonic() - started)))
