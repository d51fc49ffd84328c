"""``fairtop standing``: where you stand, in the one line the app shows above the tree, without the app.

For a login banner (``/etc/profile.d``), a shell prompt, a job script, or a dashboard widget
(``--format json``). The source is chosen exactly as ``fairtop`` and ``fairtop report`` choose it
(the flags, else the config's source or first ``[[cluster]]``: :func:`tui.config.load` and
:func:`tui.config.make_sources`), so a site's published snapshot needs no flag at all.

Only what the line needs is imported: no Textual, no Rich, no HTTP client. Exit status 0 with the
line; 2 with one line on stderr when the source or the config cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys

from tui.analysis.standing import build_standing
from tui.analysis.summary import UserSummary, user_summary
from tui.model import Snapshot
from tui.sources.errors import InputError, SourceUnavailable

__all__ = ["run", "standing_json"]


def _snapshot(args: argparse.Namespace) -> tuple[str, str, Snapshot]:
    """(user, cluster name, snapshot) of the source the flags or the config choose."""
    from tui import config

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    me = config.viewer(settings)
    try:
        sources = config.make_sources(settings, me, getattr(args, "cluster", None), "source" in overrides)
    except ValueError as exc:
        raise InputError("fairtop standing", str(exc)) from None
    name, source = next(iter(sources.items()))
    source.check()
    return me, name or source.cluster, source.load()


def standing_json(me: str, cluster: str, snap: Snapshot, summary: UserSummary | None) -> str:
    """``--format json``: the line, its parts and its values, and where they come from."""
    doc: dict[str, object] = {"user": me, "cluster": cluster or snap.cluster or None, "source": snap.source,
                              "taken_at": snap.taken_at.isoformat() if snap.taken_at else None}
    if summary is not None:
        doc.update(text=summary.text, parts=list(summary.parts), found=summary.row is not None, **summary.facts)
    else:
        doc.update(text=None, parts=[], found=False)
    return json.dumps(doc) + "\n"


def run(args: argparse.Namespace) -> int:
    """Print the line (or its JSON); 2 with one line when the source cannot be read."""
    try:
        me, cluster, snap = _snapshot(args)
    except (InputError, SourceUnavailable, OSError) as exc:
        print(f"fairtop standing: {exc}", file=sys.stderr)
        return 2
    summary = user_summary(build_standing(snap, me))
    if args.standing_format == "json":
        sys.stdout.write(standing_json(me, cluster, snap, summary))
    elif summary is None:
        sys.stdout.write(f"{me or 'no user'}: {snap.source} holds no fairshare tree\n")
    else:
        sys.stdout.write(summary.text + "\n")
    return 0
