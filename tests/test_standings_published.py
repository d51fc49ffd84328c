"""Every user's line that ``capture --every`` writes beside a capture (``fairtop_standings.json``)
is the line computed from that capture, byte for byte, and ``fairtop standing`` prints it without
importing numpy; a file that is not its capture's is not used.

The captures are the recorded ones under tests/fixtures (every release, every scenario), the
PrivateData scenario laid out per user, and the demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FIXTURES, ROOT
from tui.analysis.every_user import EveryUser
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.cli.capture import _arrange_private
from tui.model import Snapshot
from tui.publish_answers import Answers
from tui.sources import registry, standings_file
from tui.sources.private_publish import ALL, USERS, arrange
from tui.sources.saved import load_folder
from tui.standing_line import published_json, standing_json

CAPTURES = sorted(p.parent for p in FIXTURES.glob("slurm*/**/sshare_a_l_P.psv") if "private" not in p.parts)
BIG = 1000
"""Associations from which only a few users are compared (each computed line runs the engine)."""
SLOW_BIG = {"cycle3", "cycle4"}  # bulk_decay's later cycles: the same tree as cycle2, other usage
NOBODY = "nosuchuser"


def _computed_json(snap: Snapshot, user: str) -> str:
    return standing_json(user, "", snap, user_summary(build_standing(snap, user)))


def _published_json(folder: Path, user: str) -> str:
    got = standings_file.read(folder, user)
    assert got is not None, f"no published line for {user} in {folder}"
    return published_json(user, "", (folder, *got))


def _users(snap: Snapshot) -> list[str]:
    assert snap.tree is not None
    return sorted({str(u) for u in snap.tree.user[snap.tree.is_user]})


@pytest.mark.parametrize("capture", [c for c in CAPTURES if c.name not in SLOW_BIG],
                         ids=lambda c: c.relative_to(FIXTURES).as_posix())
def test_every_published_line_is_the_computed_one(capture: Path, tmp_path: Path) -> None:
    folder = tmp_path / "20261126T060000Z"
    shutil.copytree(capture, folder)
    _arrange_private(folder, None, False)
    snap = load_folder(folder)
    users = _users(snap)
    if snap.tree is not None and snap.tree.size > BIG:  # near_tie: u02144 sits among near ties
        users = [*users[:2], *users[-2:], *(u for u in ("u02144",) if u in users)]
    for user in [*users, NOBODY]:
        assert _published_json(folder, user) == _computed_json(snap, user), user


@pytest.mark.parametrize("fixture", ["slurm", "slurm-26.05"])
@pytest.mark.parametrize("hides", ["accounts,jobs,usage,users", "jobs"])
def test_each_private_view_carries_its_readers_line(fixture: str, hides: str, tmp_path: Path) -> None:
    """The whole (all/) has every user's line; users/NAME/ has NAME's line as NAME's view gives it:
    the publisher's ranking when usage is private, the whole tree's line when it is not; for
    la, lb, ld, le, lf, a coordinator (lc) and an administrator (root)."""
    folder = tmp_path / "cap"
    shutil.copytree(FIXTURES / fixture / "private" / "root", folder)
    config = folder / "scontrol_show_config.txt"
    config.write_text(config.read_text().replace("accounts,jobs,usage,users", hides))
    me = os.getuid()
    arrange(folder, Answers, uid_of=lambda name: me)  # views to this uid: no chown, no root needed
    whole = load_folder(folder / ALL)
    views = sorted((folder / USERS).iterdir())
    assert [v.name for v in views] == ["la", "lb", "lc", "ld", "le", "lf", "root"]
    for view in views:
        name = view.name
        snap = load_folder(view)
        assert _published_json(view, name) == _computed_json(snap, name), name
        assert _published_json(folder / ALL, name) == _computed_json(whole, name), name
        assert (view / standings_file.FILE).stat().st_mode & 0o777 == 0o400
    assert (folder / ALL / standings_file.FILE).stat().st_mode & 0o777 == 0o600
    la = standings_file.read(folder / USERS / "la", "la")
    assert la is not None and la[0]["text"] == (
        "la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead of you · held back by lab (5th of 5 in root) "
        "· 1 pending job, priority 2.5k")
    assert standings_file.read(folder / USERS / "la", "lb") is None  # another user in la's view: computed


def test_the_demos_lines_are_the_computed_ones() -> None:
    """The demo has what the recorded captures lack: allocations, made-up users, 2,501 users with
    several associations and many pending jobs."""
    snap = registry.make("demo", None, "alice").load()
    standing = build_standing(snap)
    lines = EveryUser(standing).summaries()
    tree = snap.tree
    assert tree is not None and tree.user_count == 2501 and len(lines) == len(_users(snap)) == 2401
    several = next(u for u in lines if np.count_nonzero(tree.is_user & (tree.user == u)) > 1)
    pending = next(j.user for j in snap.jobs if j.state == "PENDING")
    allocated = next(u for u, s in lines.items() if "allocation" in s.facts)
    for user in {"alice", several, pending, allocated, sorted(lines)[0], sorted(lines)[-1]}:
        computed = user_summary(build_standing(snap, user))
        assert computed is not None
        assert (lines[user].parts, lines[user].row, lines[user].facts) == (computed.parts, computed.row,
                                                                           computed.facts), user


def _standing(*args: str) -> subprocess.CompletedProcess[str]:
    """``fairtop standing`` in a new process that says which heavy modules it imported (stderr)."""
    code = ("import sys; from tui.cli import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('numpy', 'textual', 'rich', 'httpx') if m in sys.modules), rc, file=sys.stderr)")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    return subprocess.run([sys.executable, "-c", code, "standing", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**clean, "XDG_CONFIG_HOME": "/nonexistent"})


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """``DIR/current`` -> ``DIR/<UTC time>``, as ``capture --every`` leaves it, with every user's line."""
    stamp = tmp_path / "20261126T060000Z"
    shutil.copytree(FIXTURES / "slurm" / "live" / "fair_tree", stamp)
    _arrange_private(stamp, None, False)
    (tmp_path / "current").symlink_to(stamp.name)
    return tmp_path / "current"


def test_standing_prints_the_published_line_without_numpy(published: Path) -> None:
    """The same bytes as computed (the file removed: the same folder, computed with numpy)."""
    runs = {(user, fmt): _standing("--from", str(published), "--user", user, "--format", fmt)
            for user in ("la", NOBODY) for fmt in ("line", "json")}
    assert {k: d.stderr for k, d in runs.items()} == dict.fromkeys(runs, "[] 0\n")
    (published / standings_file.FILE).unlink()
    for (user, fmt), fast in runs.items():
        computed = _standing("--from", str(published), "--user", user, "--format", fmt)
        assert computed.stderr == "['numpy'] 0\n" and computed.stdout == fast.stdout, (user, fmt)
    assert runs[("la", "line")].stdout.startswith("la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead")


def test_a_file_from_another_capture_is_not_used(published: Path) -> None:
    """The line comes from the file while its capture is unchanged, and is computed once a file
    beside it changed (a size or a modification time)."""
    path = published / standings_file.FILE
    head, *lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 7 and {line["user"] for line in lines} >= {"la", "lb", "root"}

    def write() -> None:
        path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in (head, *lines)))

    next(line for line in lines if line["user"] == "la")["text"] = "la · what the file says"
    write()
    assert _standing("--from", str(published), "--user", "la").stdout == "la · what the file says\n"
    sshare = published / "sshare_a_l_P.psv"
    os.utime(sshare, ns=(sshare.stat().st_atime_ns, sshare.stat().st_mtime_ns + 1))
    done = _standing("--from", str(published), "--user", "la")
    assert done.stdout.startswith("la (grp, 1 of 2) · FairShare 0.250000") and done.stderr == "['numpy'] 0\n"
    head["capture"] = standings_file.fingerprint(published)  # vouches for the changed capture again
    write()
    assert standings_file.read(published, "la") is not None
    head["version"] = standings_file.VERSION + 1  # another fairtop's file: computed too
    write()
    assert standings_file.read(published, "la") is None


def test_a_capture_the_lines_cannot_be_made_from_is_published_without_them(tmp_path: Path) -> None:
    """The lines spare the readers the engine; a capture they cannot be computed from (here its
    time is unreadable) is still published, and the note says why it has none."""
    folder = tmp_path / "cap"
    shutil.copytree(FIXTURES / "slurm" / "live" / "fair_tree", folder)
    (folder / "captured_at.txt").write_text("yesterday\n")
    note = arrange(folder, Answers)
    assert note.startswith("no summary lines in this capture (") and "not a time like" in note
    assert note.endswith("): 'fairtop standing' computes them")
    assert not (folder / standings_file.FILE).exists() and (folder / "privacy.json").is_file()
