"""``fairtop balance``: allocation balances without the UI (like HADM's ``sproject``).

Reads the embedded ledger (``--db PATH|postgresql://...``) or the service (``--url``), and prints
a table (SU = resource-hours, from the ledger's integer minutes) or JSON (the minutes as stored).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from datetime import date
from typing import Any

__all__ = ["from_ledger", "from_service", "format_balances"]

_COLUMNS = ("id", "project", "resource", "category", "start", "end", "credited SU", "used SU", "held SU",
            "balance SU", "used %", "failures")


def from_ledger(target: str, project: str | None = None) -> list[dict[str, Any]]:
    from tui.allocations.ledger import open_ledger

    ledger = open_ledger(target)
    try:
        return _select(ledger.allocations(), project)
    finally:
        ledger.close()


def from_service(url: str, project: str | None = None, *, token: str | None = None, munge: bool = False,
                 munge_socket: str | None = None, ca_file: str | None = None) -> list[dict[str, Any]]:
    from tui.allocations.client import AllocationClient

    async def fetch() -> list[dict[str, Any]]:
        async with AllocationClient(url, token=token, munge=munge, munge_socket=munge_socket,
                                    ca_file=ca_file) as api:
            return [asdict(a) for a in await api.allocations()]

    return _select(asyncio.run(fetch()), project)


def _select(rows: Iterable[Mapping[str, Any]], project: str | None) -> list[dict[str, Any]]:
    keep = [dict(r) for r in rows
            if project is None or project in (r["project_name"], r["account"], str(r["project"]))]
    return sorted(keep, key=lambda r: (r["project_name"], r["resource"], r["start"]))


def _su(minutes: int) -> str:
    return f"{minutes / 60:,.1f}"


def format_balances(rows: list[dict[str, Any]], fmt: str = "table", today: date | None = None) -> str:
    """``rows`` (ledger allocation dicts) as ``table`` or ``json``."""
    if fmt == "json":
        return json.dumps(rows, indent=2, default=dict) + "\n"
    if not rows:
        return "no allocations\n"
    day = str(today or date.today())
    table = [_COLUMNS]
    for r in rows:
        used = 100 * (r["debits"] + r["predebits"]) / r["credits"] if r["credits"] else 0.0
        mark = "" if r["start"] <= day <= r["end"] else " (inactive)"
        table.append((str(r["id"]), r["project_name"] + mark, r["resource"], r["category"], r["start"], r["end"],
                      _su(r["credits"]), _su(r["debits"]), _su(r["predebits"]), _su(r["balance"]),
                      f"{used:.1f}", str(r["failures"])))
    widths = [max(len(row[i]) for row in table) for i in range(len(_COLUMNS))]
    left = {1, 2, 3}
    lines = ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in table]
    return "\n".join(line.rstrip() for line in lines) + "\n"
