"""PrivateData kept (issue 24): what a publisher gives each user equals what that user's own
commands showed them on a real Slurm 22.05 with PrivateData=usage,jobs,users,accounts.

The fixture (tests/fixtures/slurm/private, see its README) holds one capture taken as root and,
seconds later, one taken by each user with their own sshare, sacctmgr, scontrol, squeue, sprio and
sacct: the truth of what Slurm lets them read (lc coordinates grp; la has two associations).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.sources import private_data as pd
from tui.sources.partial_sshare import complete, is_partial
from tui.sources.private_publish import ALL, PRIVACY_FILE, USERS, VIEW_FILE, arrange, view_folder
from tui.sources.standings_file import FILE as STANDINGS_FILE
from tui.sources.saved import load_folder

HERE = FIXTURES / "slurm" / "private"
#: The same scenario recorded on each release: 26.05's sacctmgr no longer lists a user's ancestors.
RECORDED = {"22.05": HERE, "26.05": FIXTURES / "slurm-26.05" / "private"}
USERS_SEEN = ("la", "lb", "lc", "ld", "lf")
#: Files a user view is compared on (the publisher's own inputs are never in a view).
COMPARED = ("sshare_a_l_P.psv", "sacctmgr_assoc_hdr.psv", "assoc_mgr.txt", "squeue.txt", "sprio_l.txt",
            "sacct_a_P.psv")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _root_view(user: str, here: Path = HERE) -> dict[str, bytes]:
    files = _files(here / "root")
    readers = pd.readers(files[pd.USERS_FILE], files["sacctmgr_assoc_hdr.psv"])
    hides = pd.private_data(files["scontrol_show_config.txt"], files[pd.DBD_CONFIG_FILE])
    view, left = pd.user_view(files, readers[user], hides)
    assert left == []  # every file of a capture is one the rules know
    return view


def test_private_data_is_read_from_both_configs() -> None:
    files = _files(HERE / "root")
    assert pd.private_data(files["scontrol_show_config.txt"]) == {"accounts", "jobs", "usage", "users"}
    assert pd.private_data(files[pd.DBD_CONFIG_FILE]) == {"accounts", "jobs", "usage", "users"}
    assert pd.private_data(b"PrivateData = none\n", None) == frozenset()
    assert pd.private_data(b"PrivateData = jobs\n", b"PrivateData            = usage,users\n") == {"jobs", "usage",
                                                                                                   "users"}


def test_coordinators_and_admins() -> None:
    files = _files(HERE / "root")
    readers = pd.readers(files[pd.USERS_FILE], files["sacctmgr_assoc_hdr.psv"])
    assert readers["lc"].coord == {"grp"} and not readers["lc"].admin
    assert readers["la"].coord == frozenset() and readers["root"].admin
    # coordinating an account covers its sub-accounts (Slurm: "To Account(s) and all sub-accounts")
    tree = "Account|User|ParentName\nroot||\nlab||root\ngrp||lab\nsub||grp\n"
    assert pd.readers("User|Admin|Coord Accounts\npi|None|LAB\n", tree)["pi"].coord == {"lab", "grp", "sub"}


@pytest.mark.parametrize("release", RECORDED)
@pytest.mark.parametrize("user", USERS_SEEN)
def test_each_users_view_shows_exactly_what_their_own_commands_showed(user: str, release: str) -> None:
    view = _root_view(user, RECORDED[release])
    mine = _files(RECORDED[release] / user)
    for name in COMPARED:
        got, want = pd.visible_names({name: view[name]}), pd.visible_names({name: mine[name]})
        assert got == want, (name, sorted(got - want), sorted(want - got))
    # sshare's rows, with the indentation the user's own sshare printed
    shape = [line.split("|")[:2] for line in view["sshare_a_l_P.psv"].decode().splitlines()]
    assert shape == [line.split("|")[:2] for line in mine["sshare_a_l_P.psv"].decode().splitlines()]
    assert pd.USERS_FILE not in view and pd.DBD_CONFIG_FILE not in view


def test_the_coordinator_sees_their_accounts_users_and_jobs_only() -> None:
    names = pd.visible_names(_root_view("lc"))
    assert {"user:la", "user:lb", "user:lc", "account:grp", "job:4", "job:5", "job:2"} <= names
    assert not {"user:ld", "user:lf", "user:le", "job:6", "job:3"} & names  # others' rows and jobs
    la = pd.visible_names(_root_view("la"))
    assert not {"user:lb", "user:lc", "job:5", "job:2"} & la


def test_an_admin_and_a_cluster_without_private_data_get_everything() -> None:
    files = _files(HERE / "root")
    view, _ = pd.user_view(files, pd.Reader("root", admin=True), {"usage", "jobs"})
    assert view["sshare_a_l_P.psv"] == files["sshare_a_l_P.psv"]
    view, _ = pd.user_view(files, pd.Reader("la"), frozenset())
    assert view["squeue.txt"] == files["squeue.txt"] and pd.USERS_FILE not in view


def test_a_file_the_rules_do_not_know_is_left_out() -> None:
    view, left = pd.user_view({"mystery.txt": b"la lb lc\n", "squeue.txt": b"no header we know\n"},
                              pd.Reader("la"), {"jobs"})
    assert left == ["mystery.txt", "squeue.txt"] and view == {}


def test_partial_sshare_is_completed_from_the_lineage() -> None:
    own = (HERE / "lc" / "sshare_a_l_P.psv").read_bytes()
    assert is_partial(own) and not is_partial((HERE / "root" / "sshare_a_l_P.psv").read_bytes())
    whole = complete(own, (HERE / "lc" / "sacctmgr_assoc_hdr.psv").read_bytes())
    rows = [line.split("|")[:3] for line in whole.text.splitlines()[1:]]
    assert rows == [["root", "", ""], [" lab", "", "3"], ["  grp", "", "2"], ["   grp", "la", "1"],
                    ["   grp", "lb", "0"], ["  lsub", "", "parent"], ["   lsub", "lc", "parent"]]
    assert whole.added == (0, 1, 5)  # root, lab and lsub were put back; grp lc may see


def test_a_users_own_commands_load_as_a_private_view() -> None:
    snap = load_folder(HERE / "la")
    assert snap.private is not None and snap.private.partial and snap.private.hides == {
        "accounts", "jobs", "usage", "users"}
    tree = snap.tree
    assert tree is not None
    assert [tree.label(i) for i in range(tree.size)] == ["root", "lab", "grp", "grp/la", "quiet", "qsub", "qsub/la"]
    assert set(snap.usage_unknown) == {0, 1, 2, 4, 5}
    standing = build_standing(snap, "la")
    assert standing.reconciliation is None  # nothing to compare: the siblings are missing
    assert standing.usage_unknown(1) == "PrivateData=accounts,jobs,usage,users hides it from you"
    assert user_summary(standing).text == (  # type: ignore[union-attr]
        "la (grp, 1 of 2) · FairShare 0.250000 · users ahead unknown (PrivateData=accounts,jobs,usage,users "
        "hides the other users' usage) · 1 pending job, priority 2.5k")


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving each user their view needs root (chown)")


@needs_root
def test_arrange_splits_the_capture_and_each_view_reads_as_its_owner(tmp_path: Path) -> None:
    from tui.publish_answers import Answers

    folder = tmp_path / "cap"
    shutil.copytree(HERE / "root", folder)
    note = arrange(folder, Answers)
    assert note == "PrivateData=accounts,jobs,usage,users: the whole capture is readable by the publisher only; " \
                   "7 users get their own view"
    mode = {p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*")}
    assert mode[ALL] == 0o700 and mode[USERS] == 0o711 and mode[PRIVACY_FILE] == 0o644
    assert all(m == 0o600 for k, m in mode.items() if k.startswith(ALL + "/"))
    la = folder / USERS / "la"
    own = {p.name for p in la.iterdir() if not p.is_symlink()}
    assert own == {"sshare_a_l_P.psv", "sacctmgr_assoc_hdr.psv", "assoc_mgr.txt", "squeue.txt", "sprio_l.txt",
                   "sacct_a_P.psv", VIEW_FILE, STANDINGS_FILE}  # what PrivateData cuts; the rest links to
    # common/, once for all
    assert all(p.stat().st_uid == pwd.getpwnam("la").pw_uid and stat.S_IMODE(p.stat().st_mode) == 0o400
               for p in la.iterdir() if p.name in own)
    assert {p.name: os.readlink(p) for p in la.iterdir() if p.is_symlink()}["scontrol_show_config.txt"] == \
        "../../common/scontrol_show_config.txt"
    assert mode["common"] == 0o755 and mode["common/scontrol_show_config.txt"] == 0o644
    assert json.loads((folder / PRIVACY_FILE).read_text()) == {
        "hides": ["accounts", "jobs", "usage", "users"], "layout": "per-user", "views": True}
    note_la = json.loads((la / VIEW_FILE).read_text())
    whole = build_standing(load_folder(folder / ALL), "la")
    full_line = user_summary(whole).text  # type: ignore[union-attr]
    # the ranking the view carries is the one the whole tree gives, word for word
    assert note_la["ranking"]["grp"] == ["6 of 8 users ahead of you", "held back by lab (5th of 5 in root)"]
    assert " · ".join(note_la["ranking"]["grp"]) in full_line
    view = build_standing(load_folder(la), "la")
    assert user_summary(view).text == (  # type: ignore[union-attr]
        "la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead of you · held back by lab (5th of 5 in root) "
        "· 1 pending job, priority 2.5k")
    # root (this test's user) may read all/: it reads the whole capture
    assert view_folder(folder, "root")[0] == folder / ALL


def test_arrange_keeps_a_capture_without_private_data_whole(tmp_path: Path) -> None:
    folder = tmp_path / "cap"
    shutil.copytree(FIXTURES / "slurm" / "live" / "fair_tree", folder)
    before = sorted(p.name for p in folder.iterdir())
    assert arrange(folder) == ""
    assert sorted(p.name for p in folder.iterdir()) == sorted([*before, PRIVACY_FILE])
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in folder.iterdir() if p.is_file())
    assert view_folder(folder, "anyone") == (folder, "")


def test_a_reader_without_a_view_is_told_so(tmp_path: Path) -> None:
    from tui.sources.errors import InputError

    (tmp_path / PRIVACY_FILE).write_text('{"hides": ["usage"], "layout": "per-user", "views": true}')
    (tmp_path / ALL).mkdir(mode=0o000)
    (tmp_path / USERS).mkdir()
    if os.access(tmp_path / ALL, os.R_OK):  # root reads anything: nothing to refuse
        pytest.skip("root may read every folder")
    with pytest.raises(InputError, match="no view for nobody"):
        view_folder(tmp_path, "nobody")


def test_serve_metrics_refuses_a_private_cluster_without_basic_auth(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import main

    assert main(["serve-metrics", "--from", str(HERE / "root"), "--listen", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sets PrivateData=accounts,jobs,usage,users: the metrics carry every " \
                                   "user's usage, so set metrics_basic_auth_users" in err
    assert load_folder(FIXTURES / "slurm" / "live" / "fair_tree").private_data == frozenset()  # served as before
