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
import re
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from tui.security.file_modes import PUBLIC_DIR, make_dir
from tui.sources.errors import InputError

__all__ = ["CURRENT", "prune", "publish_once", "publish_every", "sweep"]

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


_TEMP = re.compile(r"\.\d{8}T\d{6}Z(?:-\d+)?\.tmp$")
"""A capture being written (``.<UTC time>.tmp``): hidden, so :func:`_names` and readers skip it."""
_LINK_TEMP = f".{CURRENT}.tmp"


def sweep(root: Path) -> list[Path]:
    """Remove what a publisher killed mid-capture left in ``root`` (its hidden temporary folder and
    symlink). For a publisher starting on ``root``: one publisher per folder."""
    removed = []
    if root.is_dir():
        for path in root.iterdir():
            if path.name == _LINK_TEMP or _TEMP.match(path.name):
                if path.is_symlink() or not path.is_dir():
                    path.unlink(missing_ok=True)
                else:
                    shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def publish_once(root: str | Path, capture: Callable[[Path], str], keep: int = 12,
                 now: datetime | None = None, arrange: Callable[[Path], str] | None = None) -> tuple[Path, str]:
    """Capture into a temporary folder, publish it atomically, point ``current`` at it, prune.

    ``capture(folder)`` writes one capture (``tui.sources.slurm_cli.capture``); ``arrange(folder)``
    then lays it out for its readers (PrivateData: :func:`tui.sources.private_publish.arrange`) and
    says how in one line. The folder is 0700 until then: nobody reads a capture before it is laid
    out. Returns the published folder and that line. Whatever fails (the commands, a full disk, an
    interruption), the temporary folder is removed and ``current`` is left where it was. Raises
    :class:`InputError` when ``root`` cannot be written.
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
    link = base / _LINK_TEMP
    note = ""
    try:
        tmp.mkdir(mode=0o700)
        capture(tmp)
        if arrange is not None:
            note = arrange(tmp)
        else:
            os.chmod(tmp, 0o755)
        link.unlink(missing_ok=True)
        link.symlink_to(final.name)  # made before the capture is named: a full disk fails here, unpublished
        tmp.rename(final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        link.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(str(base), f"cannot publish: {exc.strerror or exc}") from None
        raise
    try:
        link.replace(base / CURRENT)
    except BaseException as exc:  # the capture is whole but not current: no reader ever saw it
        shutil.rmtree(final, ignore_errors=True)
        link.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(str(base), f"cannot publish: {exc.strerror or exc}") from None
        raise
    prune(base, keep)
    return final, note


def _reason(exc: BaseException) -> str:
    """What went wrong, the same words each time it goes wrong the same way: without the name of
    the round's temporary folder."""
    return re.sub(r"/\.\d{8}T\d{6}Z(?:-\d+)?\.tmp(?=/|:|\s|$)", "", " ".join(str(exc).split()))


def _span(seconds: float) -> str:
    minutes, sec = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {sec} s" if minutes else f"{sec} s"


def publish_every(root: str | Path, capture: Callable[[Path], str], every_s: float, keep: int = 12,
                  count: int | None = None, out: TextIO | None = None,
                  sleep: Callable[[float], None] = time.sleep,
                  clock: Callable[[], float] = time.monotonic, err: TextIO | None = None,
                  arrange: Callable[[Path], str] | None = None) -> int:
    """Publish every ``every_s`` seconds (``count`` times, or until interrupted); one line
    ``current PATH`` per capture to ``out`` (stdout). Returns the number published.

    A failed round (slurmctld down, a command that timed out, a full disk) leaves ``current`` on
    the last good capture and is retried at the next period. It is logged on ``err`` (stderr) once
    per change of state, not once per round: ``fairtop: capture failed: WHY`` when the failures
    start or their reason changes, and ``fairtop: capture recovered ...`` (how many rounds failed,
    for how long) at the first capture published after them. A ``root`` this call created stays
    only once a capture is published into it. ``arrange`` as in :func:`publish_once`; its line goes
    to ``err`` when it changes."""
    import sys

    out = out or sys.stdout
    err = err or sys.stderr
    fresh = not Path(root).exists()
    for path in sweep(Path(root)):
        print(f"fairtop: removed {path}, left by a publisher stopped mid-capture", file=err, flush=True)
    published = rounds = 0
    said = None  # the layout line last logged: said again only when it changes
    failing: str | None = None  # the reason last logged while rounds fail; None while they succeed
    failed_rounds, failing_since = 0, 0.0
    while count is None or rounds < count:
        start = clock()
        rounds += 1
        try:
            path, note = publish_once(root, capture, keep, arrange=arrange)
        except Exception as exc:  # keep the last good snapshot current; say so once per reason
            why = _reason(exc)
            if failing is None:
                failed_rounds, failing_since = 0, start
            failed_rounds += 1
            if why != failing:
                last = (Path(root) / CURRENT).resolve() if (Path(root) / CURRENT).is_symlink() else None
                stays = f"current stays on {last}" if last else "nothing published yet"
                print(f"fairtop: capture failed: {why} ({stays}; retried every {_span(every_s)}, said again "
                      "only when the reason changes)", file=err, flush=True)
                failing = why
            if fresh and not published:
                _remove_if_empty(Path(root))
        else:
            if failing is not None:
                print(f"fairtop: capture recovered after {failed_rounds} failed rounds in "
                      f"{_span(start - failing_since)}: current {path}", file=err, flush=True)
                failing = None
            if note != said and note:
                print(f"fairtop: {note}", file=err, flush=True)
            said = note
            print(f"{CURRENT} {path}", file=out, flush=True)
            published += 1
        if count is not None and rounds >= count:
            break
        sleep(max(0.0, every_s - (clock() - start)))
    return published
