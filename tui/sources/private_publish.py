"""Lay out a fresh capture for publishing when the cluster sets PrivateData.

A capture made by root or SlurmUser holds every user's usage and jobs. Published as it is, every
user could read what their own ``sshare``, ``squeue``, ``sprio`` and ``sacct`` refuse them. So:

``privacy.json`` (0644)
    The cluster's PrivateData and how this capture is laid out; the readers' fairtop reads it first.
``all/`` (0700; 0750 with a group named by ``--share-with``)
    The whole capture, for root, the publisher and that group only.
``common/`` (0755)
    What every user's commands show whole (the config, partitions, nodes where not private): one
    copy, which each view links to.
``users/`` (0711: it cannot be listed, so it does not give away who has a view)
    ``users/NAME/`` holds what NAME's own commands would show them (:mod:`tui.sources.private_data`)
    plus ``fairtop_view.json`` (their ranking among all users, computed from the whole tree, in
    words that name nobody else) and ``fairtop_standings.json`` (their summary line, for
    ``fairtop standing``: :mod:`tui.sources.standings_file`); each file mode 0400 and owned by
    NAME. Giving files away needs root or CAP_CHOWN (systemd: ``AmbientCapabilities=CAP_CHOWN``
    for a publisher running as SlurmUser).

Without PrivateData (or with ``--public``, an administrator's explicit choice) the capture stays as
it is, every file 0644, plus every user's summary line in ``fairtop_standings.json``; under
PrivateData that file is in ``all/``, with its modes. Modes are set explicitly, whatever the umask.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from tui.sources.errors import InputError
from tui.sources.standings_file import FILE as STANDINGS_FILE

__all__ = ["PRIVACY_FILE", "ALL", "USERS", "Answers", "arrange", "login_name", "my_folder", "view_folder"]

PRIVACY_FILE = "privacy.json"
ALL = "all"
USERS = "users"
COMMON = "common"
VIEW_FILE = "fairtop_view.json"
SSHARE = "sshare_a_l_P.psv"


class Answers(Protocol):
    """What the publisher computes from the whole capture for its readers (the engine's work:
    :class:`tui.publish_answers.Answers` does it; sources only lay out files)."""

    def rankings(self) -> Mapping[str, Mapping[str, list[str]]]:
        """User -> account -> their ranking among all users, in nameless words."""

    def whole(self, folder: Path) -> bytes | None:
        """The standings file of the whole capture in ``folder`` (None: nothing to summarise)."""

    def view(self, folder: Path, reader: str, note: Mapping[str, Any], partial: bool) -> bytes | None:
        """The standings file of ``reader``'s view in ``folder``: ``note`` is its ``fairtop_view.json``,
        ``partial`` whether its sshare lists only some associations (None: no line for them)."""


def _write(path: Path, data: bytes, mode: int, uid: int = -1, gid: int = -1) -> None:
    """A new file with exactly ``mode`` (no umask), given to ``uid``/``gid`` before any byte is in it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        if uid != -1 or gid != -1:
            os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
        os.write(fd, data)
    finally:
        os.close(fd)


def _mkdir(path: Path, mode: int, gid: int = -1) -> None:
    path.mkdir(mode=0o700)
    if gid != -1:
        os.chown(path, -1, gid)
    os.chmod(path, mode)


def _group_id(group: str) -> int:
    import grp

    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise InputError("--share-with", f"no such group {group!r}") from None


def _uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def arrange(folder: Path, answers: Callable[[Path], Answers] | None = None, share_with: str | None = None,
            public: bool = False, uid_of: Callable[[str], int | None] = _uid) -> str:
    """Lay out the capture in ``folder`` (flat files, as :func:`tui.sources.slurm_cli.capture`
    wrote them) for publishing, and say in one line what each reader can see. ``answers``
    computes the rankings and summary lines from the whole capture's folder (None: neither is
    written). ``uid_of``: a Slurm user's Unix uid (None: no account here, no view)."""
    # the publisher's side, imported here: every reader imports this module for view_folder()
    from tui.sources.partial_sshare import is_partial
    from tui.sources.private_data import DBD_CONFIG_FILE, HIDES, USERS_FILE, Capture, private_data, readers

    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    hides = private_data(files.get("scontrol_show_config.txt"), files.get(DBD_CONFIG_FILE)) & set(HIDES)
    if not hides or public:
        for name in files:
            os.chmod(folder / name, 0o644)
        os.chmod(folder, 0o755)
        _write(folder / PRIVACY_FILE, _json({"hides": sorted(hides), "layout": "whole"}), 0o644)
        unsummed = ""
        try:  # the lines only spare the readers the engine: a capture they cannot be made from is published
            lines = answers(folder).whole(folder) if answers is not None else None
        except InputError as exc:
            lines, unsummed = None, f"no summary lines in this capture ({exc}): 'fairtop standing' computes them"
        if lines is not None:
            _write(folder / STANDINGS_FILE, lines, 0o644)
        if hides:
            return "; ".join(filter(None, (f"PrivateData={','.join(sorted(hides))} but --public: every user can "
                                           "read every user's usage and jobs in this capture", unsummed)))
        return unsummed
    gid = _group_id(share_with) if share_with else -1
    whole = folder / ALL
    _mkdir(whole, 0o750 if share_with else 0o700, gid)
    for name in files:
        os.rename(folder / name, whole / name)
        if gid != -1:
            os.chown(whole / name, -1, gid)
        os.chmod(whole / name, 0o640 if share_with else 0o600)
    people = folder / USERS
    _mkdir(people, 0o711)
    note = f"PrivateData={','.join(sorted(hides))}: the whole capture is readable by the publisher only" + (
        f" and group {share_with}" if share_with else "")
    users_text = files.get(USERS_FILE)
    if not users_text:
        _write(folder / PRIVACY_FILE, _json({"hides": sorted(hides), "layout": "per-user", "views": False}), 0o644)
        return note + f"; no per-user views ({USERS_FILE} is missing: sacctmgr show user failed)"
    everyone = readers(users_text, files.get("sacctmgr_assoc_hdr.psv", b""))
    computed = answers(whole) if answers is not None else None
    ranks = computed.rankings() if computed is not None else {}
    lines = computed.whole(whole) if computed is not None else None
    if lines is not None:
        _write(whole / STANDINGS_FILE, lines, 0o640 if share_with else 0o600, gid=gid)
    capture = Capture(files, hides)
    common = folder / COMMON  # what every user sees whole (the config, partitions...): once, not per user
    _mkdir(common, 0o755)
    shared = capture.shared
    for file, data in shared.items():
        _write(common / file, data, 0o644)
    made, homeless = 0, 0
    for name, reader in sorted(everyone.items()):
        uid = uid_of(name)
        if uid is None:
            homeless += 1  # a Slurm user without a Unix account here reads nothing anyway
            continue
        view, left = capture.view(reader)
        withheld = (f"PrivateData={','.join(sorted(hides))}: this is {name}'s view, what their own sshare, "
                    "sacctmgr, squeue, sprio and sacct show them")
        if left:
            withheld += f" ({', '.join(left)} left out)"
        note_doc = {"reader": name, "hides": sorted(hides), "withheld": withheld,
                    "ranking": {a: list(p) for a, p in ranks.get(name, {}).items()}}
        view[VIEW_FILE] = _json(note_doc)
        mine = people / name
        _mkdir(mine, 0o755)
        try:
            for file, data in view.items():
                _write(mine / file, data, 0o400, uid)
        except PermissionError:
            raise InputError(str(folder), "cannot give the per-user views to their users: run the publisher "
                                          "as root, or as SlurmUser with CAP_CHOWN (systemd: "
                                          "AmbientCapabilities=CAP_CHOWN)") from None
        for file in shared:
            if file not in view:
                os.symlink(f"../../{COMMON}/{file}", mine / file)
        line = computed.view(mine, name, note_doc, is_partial(view.get(SSHARE, b""))) \
            if computed is not None and SSHARE in view else None
        if line is not None:  # last: it vouches for the files beside it
            _write(mine / STANDINGS_FILE, line, 0o400, uid)
        made += 1
    _write(folder / PRIVACY_FILE, _json({"hides": sorted(hides), "layout": "per-user", "views": True}), 0o644)
    os.chmod(folder, 0o755)
    note += f"; {made} users get their own view"
    if homeless:
        note += f" ({homeless} Slurm users have no Unix account here: no view)"
    return note


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def view_folder(folder: Path, reader: str) -> tuple[Path, str]:
    """Which folder of a published capture ``reader`` reads, and a line saying why ("" when the
    capture is not split). Raises InputError when the capture is split and there is no view for
    them."""
    privacy = folder / PRIVACY_FILE
    if not privacy.is_file():
        return folder, ""
    try:
        layout = json.loads(privacy.read_text())
    except (OSError, ValueError):
        raise InputError(str(privacy), "unreadable: not what a fairtop publisher writes") from None
    if layout.get("layout") != "per-user":
        return folder, ""
    hides = ",".join(layout.get("hides", [])) or "usage"
    if os.access(folder / ALL, os.R_OK | os.X_OK):
        return folder / ALL, f"PrivateData={hides}: you may read the whole capture ({ALL}/)"
    mine = folder / USERS / reader
    if os.access(mine / VIEW_FILE, os.R_OK):
        return mine, f"PrivateData={hides}: your own view ({USERS}/{reader}/)"
    raise InputError(str(folder), f"PrivateData={hides}: this capture has no view for {reader} (no Slurm "
                                  "association of that name when it was taken, or no view could be given)")


def login_name() -> str:
    """The Unix user this process runs as (by uid: ``--user`` and ``$USER`` choose no view)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def my_folder(folder: str | Path) -> tuple[Path, str]:
    """:func:`view_folder` for this process's own Unix user."""
    return view_folder(Path(folder), login_name())
