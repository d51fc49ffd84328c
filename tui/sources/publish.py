"""A site-wide snapshot: one capture every few minutes that every user's fairtop reads.

``fairtop capture --every 5m --keep 12 DIR`` writes each capture into a hidden temporary folder,
renames it to ``DIR/<UTC time>`` (a rename within one file system is atomic) and then points the
symlink ``DIR/current`` at it (a new symlink renamed over the old one: atomic too), so a reader
never sees a half-written capture. Older captures beyond ``keep`` are removed. After each
capture one line ``current DIR/<name>`` goes to stdout.

A site config (``/etc/fairtop/config.toml``: ``source = "folder:/var/cache/fairtop/current"``)
makes every user's fairtop follow ``current``; the whole site then costs slurmctld one capture
per period instead of one set of commands per user.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from tui.file_modes import PUBLIC_DIR, make_dir
from tui.sources.errors import InputError

__all__ = ["CURRENT", "prune", "publish_once", "publish_every"]

CURRENT = "current"
"""The symlink readers follow."""
_STAMP = "%Y%m%dT%H%M%SZ"


def _names(root: Path) -> list[Path]:
    """Published captures, oldest first (their names are UTC times)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


def prune(root: Path, keep: int) -> list[Path]:
    """Remove all but the newest ``keep`` captures (never the one ``current`` points at)."""
    current = (root / CURRENT).resolve() if (root / CURRENT).is_symlink() else None
    old = _names(root)[:-keep] if keep > 0 else []
    removed = []
    for path in old:
        if path.resolve() != current:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # not empty, or gone: leave it


def publish_once(root: str | Path, capture: Callable[[Path], str], keep: int = 12,
                 now: datetime | None = None, arrange: Callable[[Path], str] | None = None) -> tuple[Path, str]:
    """Capture into a temporary folder, publish it atomically, point ``current`` at it, prune.

    ``capture(folder)`` writes one capture (``tui.sources.slurm_cli.capture``); ``arrange(folder)``
    then lays it out for its readers (PrivateData: :func:`tui.sources.private_publish.arrange`) and
    says how in one line. The folder is 0700 until then: nobody reads a capture before it is laid
    out. Returns the published folder and that line. Raises :class:`InputError` when ``root``
    cannot be written.
    """
    base = Path(root)
    try:
        make_dir(base, PUBLIC_DIR)  # 0755 whatever the umask (each capture's own modes: its capture())
    except OSError as exc:
        raise InputError(str(root), f"cannot create the folder: {exc.strerror or exc}") from None
    name = (now or datetime.now(timezone.utc)).strftime(_STAMP)
    final = base / name
    k = 1
    while final.exists():  # two captures in one second
        final = base / f"{name}-{k}"
        k += 1
    tmp = base / f".{final.name}.tmp"
    note = ""
    try:
        tmp.mkdir(mode=0o700)
        capture(tmp)
        if arrange is not None:
            note = arrange(tmp)
        else:
            os.chmod(tmp, 0o755)
        tmp.rename(final)
        link = base / f".{CURRENT}.tmp"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(final.name)
        link.replace(base / CURRENT)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(str(base), f"cannot publish: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    prune(base, keep)
    return final, note


def publish_every(root: str | Path, capture: Callable[[Path], str], every_s: float, keep: int = 12,
                  count: int | None = None, out: TextIO | None = None,
                  sleep: Callable[[float], None] = time.sleep,
                  clock: Callable[[], float] = time.monotonic, err: TextIO | None = None,
                  arrange: Callable[[Path], str] | None = None) -> int:
    """Publish every ``every_s`` seconds (``count`` times, or until interrupted); one line
    ``current PATH`` per capture to ``out`` (stdout). A failed capture is one line
    ``fairtop: capture failed: ...`` on ``err`` (stderr) and is retried at the next period,
    leaving ``current`` on the last good one; a ``root`` this call created stays only once a
    capture is published into it. ``arrange`` as in :func:`publish_once`; its line goes to ``err``
    when it changes. Returns the number published."""
    import sys

    out = out or sys.stdout
    err = err or sys.stderr
    fresh = not Path(root).exists()
    published = rounds = 0
    said = None  # the layout line last logged: said again only when it changes
    while count is None or rounds < count:
        start = clock()
        rounds += 1
        try:
            path, note = publish_once(root, capture, keep, arrange=arrange)
            if note != said and note:
                print(f"fairtop: {note}", file=err, flush=True)
            said = note
            print(f"{CURRENT} {path}", file=out, flush=True)
            published += 1
        except Exception as exc:  # the controller was down: keep the last good snapshot current
            print(f"fairtop: capture failed: {exc}", file=err, flush=True)
            if fresh and not published:
                _remove_if_empty(Path(root))
        if count is not None and rounds >= count:
            break
        sleep(max(0.0, every_s - (clock() - start)))
    return published
