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
    in a user's own view), ``cluster`` the cluster's configured name ("" when it has none)."""
    doc = {"version": VERSION, "capture": fingerprint(folder), "cluster": cluster, "taken_at": taken_at,
           "users": dict(users), "absent": absent}
    return (json.dumps(doc, separators=(",", ":")) + "\n").encode()


def read(folder: Path, user: str) -> tuple[Entry, str, str | None] | None:
    """``user``'s entry, the cluster's configured name and the capture's time, from the file in
    ``folder``; None when there is no such file, it is not this capture's, or it has no line
    for ``user`` (the caller then computes the line)."""
    try:
        doc = json.loads((folder / FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not user:
        return None
    try:
        if doc["capture"] != fingerprint(folder):
            return None
        entry = doc["users"].get(user)
        if entry is None and doc["absent"] is not None:
            absent = doc["absent"]
            entry = {**absent, "text": absent["text"].replace(ABSENT, user),
                     "parts": [p.replace(ABSENT, user) for p in absent["parts"]]}
        if entry is None:
            return None
        return entry, str(doc["cluster"]), doc["taken_at"]
    except (OSError, KeyError, TypeError, AttributeError):
        return None
