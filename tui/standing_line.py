"""``fairtop standing``: where you stand, in the one line the app shows above the tree, without the app.

For a login banner (``/etc/profile.d``), a shell prompt, a job script, or a dashboard widget
(``--format json``). The source is chosen exactly as ``fairtop`` and ``fairtop report`` choose it
(the flags, else the config's source or first ``[[cluster]]``: :func:`tui.config.load` and
:func:`tui.config.make_sources`), so a site's published snapshot needs no flag at all.

From a capture ``fairtop capture --every`` published, the line is the one the publisher wrote
beside it (:mod:`tui.sources.standings_file`): read with the standard library alone, no numpy.
Otherwise (a folder saved by hand, a live source, the demo) it is computed. Only what the line
needs is imported: no Textual, no Rich, no HTTP client (unless ``coldfront_url`` is set: then a
second line gives the user's ColdFront allocations beside the snapshot's Slurm budgets, read
within ``allocation_timeout``). Exit status 0 with the line; 2 with one line on stderr when the
source or the config cannot be read.
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
    from tui.config import Settings
    from tui.model import Budget, Snapshot
    from tui.sources.registry import Source

__all__ = ["chosen_source", "published_json", "run", "standing_json"]


def chosen_source(args: argparse.Namespace) -> tuple[str, str, Source, Settings]:
    """(user, cluster name, source, the merged settings) that the flags or the config choose
    (``fairtop standing`` and ``fairtop jobs`` alike); the settings are read once, here, and
    passed on (:func:`coldfront`)."""
    from tui import config

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    me = config.viewer(settings)
    try:
        sources = config.make_sources(settings, me, getattr(args, "cluster", None), "source" in overrides)
    except ValueError as exc:
        raise InputError("fairtop standing", str(exc)) from None
    name, source = next(iter(sources.items()))
    return me, name or source.cluster, source, settings


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
        me, cluster, source, settings = chosen_source(args)
        got = _published(source, me)
        if got is not None:
            cold = coldfront(settings, ())
            if args.standing_format == "json":
                doc = published_json(me, cluster, got)
                sys.stdout.write(doc if cold is None else json.dumps({**json.loads(doc), "coldfront": cold[1]}) + "\n")
            else:
                sys.stdout.write(got[1]["text"] + "\n" + (cold[0] + "\n" if cold is not None else ""))
            return 0
        source.one_user = True  # the user's jobs as Job, the queue as columns (100,000 jobs: issue 35)
        source.check()
        snap = source.load()
    except (InputError, SourceUnavailable, OSError) as exc:
        print(f"fairtop standing: {exc}", file=sys.stderr)
        return 2
    from tui.analysis.standing import build_standing
    from tui.analysis.summary import user_summary

    summary = user_summary(build_standing(snap, me))
    cold = coldfront(settings, snap.budgets)
    if args.standing_format == "json":
        doc = standing_json(me, cluster, snap, summary)
        sys.stdout.write(doc if cold is None else json.dumps({**json.loads(doc), "coldfront": cold[1]}) + "\n")
    elif summary is None:
        sys.stdout.write(f"{me or 'no user'}: {snap.source} holds no fairshare tree\n")
    else:
        sys.stdout.write(summary.text + "\n")
    if cold is not None and args.standing_format != "json":
        sys.stdout.write(cold[0] + "\n")
    return 0


def coldfront(settings: Settings, budgets: tuple[Budget, ...]) -> tuple[str, dict[str, Any]] | None:
    """With ``coldfront_url`` configured in ``settings`` (:func:`chosen_source`'s): the user's
    ColdFront allocations as one line and as JSON, beside the snapshot's Slurm budgets (within
    ``allocation_timeout``); a ColdFront that does not answer is said in the line, the standing
    above it stands. None: not configured."""
    from tui import config

    try:
        access = config.coldfront_access(settings)
    except config.ConfigError as exc:
        return f"ColdFront: {exc}", {"error": str(exc)}
    if access is None:
        return None
    import asyncio

    from tui.allocations.coldfront import read_coldfront
    from tui.allocations.errors import AllocationError
    from tui.analysis.coldfront import coldfront_json, coldfront_summary, reconcile

    try:
        view = asyncio.run(read_coldfront(access.url, token=access.token, timeout=access.timeout,
                                          ca_file=access.ca_file, public=access.public,
                                          published=access.published, user=access.user))
    except AllocationError as exc:
        return f"ColdFront {access.url}: unavailable ({exc})", {"url": access.url, "error": str(exc)}
    reconciled = reconcile(view.allocations, budgets)
    return coldfront_summary(view, reconciled), coldfront_json(view, reconciled)
