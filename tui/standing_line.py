"""``fairtop standing``: where you stand, in the one line the app shows above the tree, without the app.

For a login banner (``/etc/profile.d``), a shell prompt, a job script, or a dashboard widget
(``--format json``). The source is chosen exactly as ``fairtop`` and ``fairtop report`` choose it
(the flags, else the config's source or first ``[[cluster]]``: :func:`tui.config.load` and
:func:`tui.config.make_sources`), so a site's published snapshot needs no flag at all.

From a capture ``fairtop capture --every`` published, the line is the one the publisher wrote
beside it (:mod:`tui.sources.standings_file`): read with the standard library alone, no numpy.
Otherwise (a folder saved by hand, a live source, the demo) it is computed. Only what the line
needs is imported: no Textual, no Rich, no HTTP client. Exit status 0 with the line; 2 with one
line on stderr when the source or the config cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.sources.errors import InputError, SourceUnavailable

if TYPE_CHECKING:  # the engine's side (numpy) is imported only when the line must be computed
    from tui.analysis.summary import UserSummary
    from tui.model import Snapshot
    from tui.sources.registry import Source

__all__ = ["chosen_source", "published_json", "run", "standing_json"]


def chosen_source(args: argparse.Namespace) -> tuple[str, str, Source]:
    """(user, cluster name, source) that the flags or the config choose (``fairtop standing`` and
    ``fairtop jobs`` alike)."""
    from tui import config

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    me = config.viewer(settings)
    try:
        sources = config.make_sources(settings, me, getattr(args, "cluster", None), "source" in overrides)
    except ValueError as exc:
        raise InputError("fairtop standing", str(exc)) from None
    name, source = next(iter(sources.items()))
    return me, name or source.cluster, source


def _published(source: Source, me: str) -> tuple[Path, dict[str, Any], str, str | None] | None:
    """The line the publisher wrote for ``me`` beside this very capture (folder, entry, the
    capture's cluster name, its time); None when the source is not such a folder, or the file is
    missing, stale or has no line for ``me``."""
    from tui.sources import standings_file
    from tui.sources.registry import FolderSource

    if not isinstance(source, FolderSource):
        return None
    folder = Path(source.folder())  # under PrivateData: all/ or the reader's own view, as load() reads
    got = standings_file.read(folder, me)
    if got is None:
        return None
    entry, cluster, taken_at = got
    return folder, entry, cluster, taken_at


def _doc(me: str, cluster: str | None, source: str, taken_at: str | None, text: str | None, parts: list[str],
         found: bool, facts: dict[str, object]) -> str:
    doc: dict[str, object] = {"user": me, "cluster": cluster, "source": source, "taken_at": taken_at}
    doc.update(text=text, parts=parts, found=found, **facts)
    return json.dumps(doc) + "\n"


def standing_json(me: str, cluster: str, snap: Snapshot, summary: UserSummary | None) -> str:
    """``--format json``: the line, its parts and its values, and where they come from."""
    when = snap.taken_at.isoformat() if snap.taken_at else None
    if summary is None:
        return _doc(me, cluster or snap.cluster or None, snap.source, when, None, [], False, {})
    return _doc(me, cluster or snap.cluster or None, snap.source, when, summary.text, list(summary.parts),
                summary.row is not None, summary.facts)


def published_json(me: str, cluster: str, got: tuple[Path, dict[str, Any], str, str | None]) -> str:
    """``--format json`` of a published line: what :func:`standing_json` prints of the computed one
    (the cluster: a ``[[cluster]]`` name, else the capture's ClusterName, else its folder's name)."""
    folder, entry, named, taken_at = got
    return _doc(me, cluster or named or folder.name or None, str(folder), taken_at, entry["text"], entry["parts"],
                entry["found"], entry["facts"])


def run(args: argparse.Namespace) -> int:
    """Print the line (or its JSON): the publisher's when it wrote one for this capture, else
    computed; 2 with one line when the source cannot be read."""
    try:
        me, cluster, source = chosen_source(args)
        got = _published(source, me)
        if got is not None:
            sys.stdout.write(published_json(me, cluster, got) if args.standing_format == "json"
                             else got[1]["text"] + "\n")
            return 0
        source.check()
        snap = source.load()
    except (InputError, SourceUnavailable, OSError) as exc:
        print(f"fairtop standing: {exc}", file=sys.stderr)
        return 2
    from tui.analysis.standing import build_standing
    from tui.analysis.summary import user_summary

    summary = user_summary(build_standing(snap, me))
    if args.standing_format == "json":
        sys.stdout.write(standing_json(me, cluster, snap, summary))
    elif summary is None:
        sys.stdout.write(f"{me or 'no user'}: {snap.source} holds no fairshare tree\n")
    else:
        sys.stdout.write(summary.text + "\n")
    return 0
