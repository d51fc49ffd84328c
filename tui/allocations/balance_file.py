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

That one file is world-readable (0644): every user can read every project's balance. Under Slurm's
PrivateData, where a user's own commands show them only their own, ``--by-group`` writes the folder
``PATH.d/`` instead (0711: others may pass through it, not list it), one file per Unix gid,
``PATH.d/<gid>``, holding only that gid's allocations in the same format: mode 0640, group that
gid, owner the publisher. A submitter's filter opens the files of its own groups only; the kernel
refuses it the others. Setting a file's group needs root, CAP_CHOWN or membership of the group:
without it the publisher stops with one line (:class:`GroupNotSettable`), never writing a
world-readable file instead.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from tui.allocations.records import AllocationRecord
from tui.security.file_modes import GROUP, PUBLIC, TRAVERSE_DIR, make_dir, write_atomic

__all__ = ["HEADER", "GroupNotSettable", "by_group_folder", "format_balances", "publish", "publish_every",
           "retire_single_file", "write_balances", "write_by_group"]

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


class GroupNotSettable(PermissionError):
    """A gid's file could not be given to its group (one line: which file, which gid, the fix)."""


def by_group_folder(path: str | Path) -> Path:
    """The folder ``--by-group`` writes for ``path``: ``PATH.d`` (what cli_filter.lua's BALANCES names)."""
    return Path(f"{path}.d")


def write_by_group(path: str | Path, allocs: Iterable[AllocationRecord], now: float) -> Path:
    """One file per gid in ``PATH.d/`` (see the module's docstring), each replaced atomically with
    its group and mode set before its first byte; the files of gids no allocation has any more are
    removed. Returns the folder. :class:`GroupNotSettable` when a group cannot be set."""
    folder = make_dir(by_group_folder(path), TRAVERSE_DIR)
    by_gid: dict[int, list[AllocationRecord]] = {}
    for a in allocs:
        if a.gid >= 0:
            by_gid.setdefault(a.gid, []).append(a)
    for gid, mine in sorted(by_gid.items()):
        target = folder / str(gid)
        try:
            write_atomic(target, format_balances(mine, now), GROUP, group=gid)
        except PermissionError as exc:
            if exc.errno != errno.EPERM:  # EACCES: the folder itself is not ours to write
                raise
            raise GroupNotSettable(f"cannot give {target} to group {gid} (not a member): run as root or with "
                                   "CAP_CHOWN") from None
    for entry in folder.iterdir():
        if entry.name.isdigit() and int(entry.name) not in by_gid:
            entry.unlink(missing_ok=True)  # that gid has no allocation any more
    return folder


def retire_single_file(path: str | Path) -> bool:
    """Remove the world-readable single file at ``path`` if it is one of ours (its first line is
    the header): switching to ``--by-group`` must not leave every balance readable. True if removed."""
    try:
        with open(path, "rb") as f:
            first = f.readline(100)
    except OSError:
        return False
    if not first.startswith(HEADER.encode() + b" "):
        return False
    Path(path).unlink(missing_ok=True)
    return True


def publish(path: str | Path, allocs: list[AllocationRecord], now: float, by_group: bool = False) -> None:
    """One round: the single file ``path``, or with ``by_group`` the folder ``PATH.d/``."""
    if by_group:
        write_by_group(path, allocs, now)
    else:
        write_balances(path, format_balances(allocs, now))


def publish_every(path: str | Path, records: Callable[[], list[AllocationRecord]], every_s: float,
                  times: int | None = None, log: Callable[[str], None] = print, by_group: bool = False) -> None:
    """Write the balances every ``every_s`` seconds (``times`` rounds, or forever). A round whose
    read fails writes nothing: the file ages, and the filters stop trusting it after STALE_S. A
    failed write (:class:`GroupNotSettable` among them) ends the loop by raising."""
    done = 0
    while times is None or done < times:
        started = time.monotonic()
        try:
            allocs = records()
        except Exception as exc:  # noqa: BLE001 - any failure of the source: keep going, say why
            log(f"fairtop: balances not published: {exc}")
        else:
            publish(path, allocs, time.time(), by_group)
        done += 1
        if times is None or done < times:
            time.sleep(max(0.0, every_s - (time.monotonic() - started)))
