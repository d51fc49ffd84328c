"""Every user's summary line, precomputed by the publisher beside the capture it comes from.

``fairtop standing`` runs at every login and every prompt, and computing one line from a capture
means numpy, the parsers and the engine (0.4-0.6 s a process). ``fairtop capture --every`` knows
the answer already: it writes ``fairtop_standings.json`` into each capture (into ``all/`` and into
each ``users/NAME/`` under PrivateData, with those folders' modes and owners), and ``standing``
reads the reader's line from it with the standard library alone.

The file says which capture it was computed from: the size and modification time (ns) of every
other file beside it. A file whose capture changed since (or was copied without its times) is not
used: the line is computed from the capture instead. Standard library only: the reader imports
this module and nothing heavier.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ABSENT", "FILE", "VERSION", "encode", "fingerprint", "read"]

FILE = "fairtop_standings.json"
VERSION = 1
"""Bumped when the entries change meaning; a reader uses only files of its own version."""
ABSENT = "\0user"
"""The user name in the line written for any user without an association (replaced on reading)."""

Entry = dict[str, Any]
"""One user's line: ``text``, ``parts``, ``found`` and ``facts`` (what ``--format json`` adds)."""


def fingerprint(folder: Path) -> dict[str, list[int]]:
    """File name -> [size, mtime_ns] of every file in ``folder`` (links followed) but this one."""
    out: dict[str, list[int]] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name == FILE:
                continue
            try:
                st = entry.stat()
            except OSError:
                continue  # a dangling link: no file to vouch for
            if not entry.is_dir():
                out[entry.name] = [st.st_size, st.st_mtime_ns]
    return out


def encode(folder: Path, users: Mapping[str, Entry], absent: Entry | None, cluster: str, taken_at: str | None) -> bytes:
    """The file for the capture in ``folder`` (whose other files are all written): ``users``' lines,
    ``absent`` the line of a user the capture has no association for (None: not known here, as
    in a user's own view), ``cluster`` the cluster's configured name ("" when it has none).

    One JSON object a line: first what the lines hold for all (version, capture, cluster, time,
    ``absent``), then one line a user starting ``{"user":NAME,``, so that a reader finds its own
    with one byte search and parses that line only (a 2,021-user file is 1.1 MB)."""
    head = {"version": VERSION, "capture": fingerprint(folder), "cluster": cluster, "taken_at": taken_at,
            "absent": absent}
    lines = [_dumps(head), *(_dumps({"user": user, **entry}) for user, entry in users.items())]
    return ("\n".join(lines) + "\n").encode()


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def read(folder: Path, user: str) -> tuple[Entry, str, str | None] | None:
    """``user``'s entry, the cluster's configured name and the capture's time, from the file in
    ``folder``; None when there is no such file, it is not this capture's, or it has no line
    for ``user`` (the caller then computes the line)."""
    try:
        data = (folder / FILE).read_bytes()
        head = json.loads(data[:data.index(b"\n")])
        if not user or not isinstance(head, dict) or head.get("version") != VERSION:
            return None
        if head["capture"] != fingerprint(folder):
            return None
        start = data.find(b'\n{"user":' + _dumps(user).encode() + b",")
        if start >= 0:
            entry = json.loads(data[start + 1:data.index(b"\n", start + 1)])
            del entry["user"]
        elif head["absent"] is not None:
            absent = head["absent"]
            entry = {**absent, "text": absent["text"].replace(ABSENT, user),
                     "parts": [p.replace(ABSENT, user) for p in absent["parts"]]}
        else:
            return None
        return entry, str(head["cluster"]), head["taken_at"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
