"""What ``fairtop capture --every`` computes from each whole capture for its readers: every
user's ranking among all users (the PrivateData views' ``fairtop_view.json``) and every user's
summary line (``fairtop_standings.json``, which ``fairtop standing`` reads instead of running the
engine). :func:`tui.sources.private_publish.arrange` writes the files; this module runs the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tui.analysis.every_user import EveryUser
from tui.analysis.rank_path import RankShared
from tui.analysis.standing import Standing, build_standing
from tui.analysis.summary import UserSummary, ranking_parts
from tui.model import PrivateView
from tui.sources import standings_file
from tui.sources.saved import FILES, load_folder

__all__ = ["Answers"]


def entry(summary: UserSummary) -> standings_file.Entry:
    """One line as the standings file holds it (what ``standing --format json`` prints of it)."""
    return {"text": summary.text, "parts": list(summary.parts), "found": summary.row is not None,
            "facts": summary.facts}


class Answers:
    """The whole capture in ``folder``, loaded and run through the engine once
    (:class:`tui.sources.private_publish.Answers`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshot = load_folder(folder)
        self.standing = build_standing(self.snapshot)  # as the app and `standing` build it: the same lines

    @cached_property
    def _every(self) -> EveryUser:
        return EveryUser(self.standing)

    @cached_property
    def _lines(self) -> dict[str, UserSummary]:
        return self._every.summaries()

    def rankings(self) -> dict[str, dict[str, list[str]]]:
        """User -> account -> where that association ranks among all users, in words that name
        nobody else (the summary line's parts). Without the orders taken from the printed values,
        as before they were checked (``check_printed=False``): the same standing when none were."""
        ranked = self.standing if not self.standing.order_fixes else \
            build_standing(self.snapshot, check_printed=False)
        return _rankings(ranked)

    def whole(self, folder: Path) -> bytes | None:
        if self.snapshot.tree is None or self.standing.fairshare is None:
            return None
        absent = self._every.absent(standings_file.ABSENT)
        return standings_file.encode(folder, {u: entry(s) for u, s in self._lines.items()},
                                     entry(absent) if absent is not None else None, self._cluster,
                                     _iso(self.snapshot.taken_at))

    def view(self, folder: Path, reader: str, note: Mapping[str, Any], partial: bool) -> bytes | None:
        if self.snapshot.tree is None or self.standing.fairshare is None:
            return None
        if partial:
            private = PrivateView(frozenset(map(str, note["hides"])), reader, True,
                                  {str(a): tuple(map(str, p)) for a, p in note["ranking"].items()},
                                  str(note["withheld"]))
            line = self._every.view(reader, private)
        else:  # the whole tree (an administrator, or usage not private): the whole's line
            line = self._lines.get(reader)
        if line is None:
            return None
        return standings_file.encode(folder, {reader: entry(line)}, None, self._cluster, _iso(self._taken_at(folder)))

    @property
    def _cluster(self) -> str:
        """The cluster's configured name ("" when the capture names none: the reader uses its folder's)."""
        return self.snapshot.cluster if self.snapshot.cluster != self.folder.name else ""

    def _taken_at(self, folder: Path) -> datetime:
        """When the capture in ``folder`` was taken, as :func:`~tui.sources.saved.load_folder` finds it."""
        if (folder / FILES["captured_at"]).is_file():
            return self.snapshot.taken_at
        return datetime.fromtimestamp((folder / FILES["sshare"]).stat().st_mtime, timezone.utc)


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None


def _rankings(standing: Standing) -> dict[str, dict[str, list[str]]]:
    tree = standing.snapshot.tree
    out: dict[str, dict[str, list[str]]] = {}
    if tree is None or standing.fairshare is None:
        return out
    shared = RankShared.of(standing)  # each sibling group ordered once, not once per user
    for row in np.flatnonzero(tree.is_user).tolist():
        user = str(tree.user[row])
        mine = replace(standing, me=user, my_rows=np.asarray([row]))
        out.setdefault(user, {})[str(tree.account[row])] = ranking_parts(mine, row, shared=shared)
    return out
