"""``publish-balances --by-group`` (issue 24: under PrivateData no user may read another project's
balance): one file per Unix gid in ``PATH.d/``, mode 0640, group that gid, the folder 0711; the real
cli_filter.lua (lua5.3) run as a real user of a real group reads only its own groups' files and
decides on them as it does on the single file. Creating the groups and the user (groupadd,
useradd -M) and running as them (runuser) needs root: those tests skip with one line otherwise."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.allocations.test_cli_filter_lua import _alloc, _lua
from tests.conftest import ROOT
from tests.needs import needs, program, root
from tui.allocations.balance_file import (by_group_folder, format_balances, retire_single_file, write_balances,
                                          write_by_group)
from tui.allocations.records import AllocationRecord

TODAY = date.today()
START, END = TODAY - timedelta(days=3), TODAY + timedelta(days=30)
USER, GROUP_A, GROUP_B, GROUP_C = "ftbal_u", "ftbal_a", "ftbal_b", "ftbal_c"  # USER: primary A, also in C
LUA = program("lua5.3", "apt-get install lua5.3; .ci/run does so as root")
AS_USERS = needs(root("creates test groups and a user (groupadd, useradd -M) and runs runuser"), LUA)


def _exists(getter: Callable[[str], object], name: str) -> bool:
    try:
        getter(name)
    except KeyError:
        return False
    return True


@pytest.fixture(scope="module")
def gids() -> Iterator[dict[str, int]]:
    """The three test groups' gids (made here, and removed afterwards, if the host lacks them)."""
    made: list[list[str]] = []
    for g in (GROUP_A, GROUP_B, GROUP_C):
        if not _exists(grp.getgrnam, g):
            subprocess.run(["groupadd", g], check=True, capture_output=True)
            made.append(["groupdel", g])
    if not _exists(pwd.getpwnam, USER):
        subprocess.run(["useradd", "-M", "-N", "-g", GROUP_A, "-G", GROUP_C, "-s", "/usr/sbin/nologin", USER],
                       check=True, capture_output=True)
        made.insert(0, ["userdel", USER])
    yield {g: grp.getgrnam(g).gr_gid for g in (GROUP_A, GROUP_B, GROUP_C)}
    for argv in made:
        subprocess.run(argv, check=False, capture_output=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may pass through (pytest's own tmp is root's 0700)."""
    where = Path(tempfile.mkdtemp(prefix="fairtop-bygroup-", dir="/tmp"))
    where.chmod(0o755)
    yield where
    shutil.rmtree(where, ignore_errors=True)


def _allocs(gids: dict[str, int]) -> list[AllocationRecord]:
    return [_alloc(1, "chem", gids[GROUP_A], "cpu", 11, START, END),
            _alloc(2, "bio", gids[GROUP_B], "cpu", 1_234_567, START, END),
            _alloc(3, "phys", gids[GROUP_C], "gpu", 100, START, END)]


def _as_user(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", USER, "--", *argv], capture_output=True, text=True, timeout=30)


@AS_USERS
def test_each_gid_gets_its_own_file_readable_by_that_group_only(gids: dict[str, int], shared: Path) -> None:
    allocs, now = _allocs(gids), time.time()
    folder = write_by_group(shared / "balances", allocs, now)
    assert folder == shared / "balances.d" and not (shared / "balances").exists()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o711
    assert sorted(p.name for p in folder.iterdir()) == sorted(str(g) for g in gids.values())  # no temporary left
    for alloc in allocs:
        path = folder / str(alloc.gid)
        st = path.stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, os.geteuid(), alloc.gid)
        assert path.read_text() == format_balances([alloc], now)  # that gid's lines, nothing else
    # what the user (group A, and C besides) can read: its groups' files, never B's, nor the list
    assert _as_user("cat", str(folder / str(gids[GROUP_A]))).stdout.splitlines()[1].startswith("chem\t")
    assert _as_user("cat", str(folder / str(gids[GROUP_C]))).stdout.splitlines()[1].startswith("phys\t")
    other = _as_user("cat", str(folder / str(gids[GROUP_B])))
    assert other.returncode == 1 and "Permission denied" in other.stderr and other.stdout == ""
    listing = _as_user("ls", str(folder))
    assert listing.returncode != 0 and "Permission denied" in listing.stderr
    # before: the single file, which the same user reads whole (every project's balance)
    write_balances(shared / "single", format_balances(allocs, now))
    assert "bio\t" in _as_user("cat", str(shared / "single")).stdout


@AS_USERS
def test_the_filter_decides_on_the_submitters_groups_files(gids: dict[str, int], shared: Path) -> None:
    folder = write_by_group(shared / "balances", _allocs(gids), time.time())
    def run(**options: str) -> tuple[int, str, str]:
        return _lua({"type": "sbatch", **options}, folder, user=USER)

    assert run(account="chem", ntasks="1", **{"cpus-per-task": "2"}, time="00:06:00") == (
        1, "fairtop: job refused: allocation 1 of chem (cpu) has 11 cpu-minutes left (0.2 SU); this job may use "
           "up to 12 (2 x 6 min). Ask for less time or fewer CPUs, or ask for a credit", "")
    assert run(account="chem", ntasks="1", time="5") == (0, "fairtop: job fits: 5 of 11 cpu-minutes left", "")
    # C is a supplementary group (the Groups: line): its file is read too
    assert run(account="phys", gpus="1", time="60") == (0, "fairtop: job fits: 60 of 100 gpu-minutes left", "")
    assert run(account="phys", gpus="2", time="60")[:2] == (
        1, "fairtop: job refused: allocation 3 of phys (gpu) has 100 gpu-minutes left (1.7 SU); this job may use "
           "up to 120 (2 x 60 min). Ask for less time or fewer CPUs, or ask for a credit")
    # no account: the submitter's own (real) group, A
    assert run(ntasks="1", time="5") == (0, "fairtop: job fits: 5 of 11 cpu-minutes left", "")
    # B's file is not the user's to read: the filter does not guess, fairtop decides
    assert run(account="bio", ntasks="1", time="5")[2].startswith("fairtop-started")
    # none of the user's groups has a file: as with no published file, fairtop decides
    write_by_group(shared / "balances", _allocs(gids)[1:2], time.time())
    assert run(account="chem", ntasks="1", time="5")[2].startswith("fairtop-started")


@AS_USERS
def test_a_gid_that_disappears_loses_its_file(gids: dict[str, int], shared: Path) -> None:
    allocs = _allocs(gids)
    folder = write_by_group(shared / "balances", allocs, time.time())
    (folder / "README").write_text("an administrator's note\n")
    write_by_group(shared / "balances", [a for a in allocs if a.gid != gids[GROUP_B]], time.time())
    assert sorted(p.name for p in folder.iterdir()) == sorted(["README", str(gids[GROUP_A]), str(gids[GROUP_C])])
    write_by_group(shared / "balances", [], time.time())
    assert [p.name for p in folder.iterdir()] == ["README"]


@AS_USERS
def test_switching_to_by_group_removes_the_single_file(gids: dict[str, int], shared: Path) -> None:
    single = shared / "balances"
    write_balances(single, format_balances(_allocs(gids), time.time()))
    (shared / "notes").write_text("not ours\n")
    assert retire_single_file(single) and not single.exists()
    assert not retire_single_file(shared / "notes") and (shared / "notes").exists()
    assert not retire_single_file(shared / "absent")


@needs(LUA)
def test_only_the_submitters_groups_files_are_opened(tmp_path: Path) -> None:
    """Without root: a readable file of a gid the submitter is not in is still not used."""
    folder, mine, theirs = tmp_path / "balances.d", os.getgid(), 4_242_424
    assert theirs not in os.getgroups()
    folder.mkdir()
    write_balances(folder / str(mine), format_balances([_alloc(1, "chem", mine, "cpu", 11, START, END)], time.time()))
    write_balances(folder / str(theirs), format_balances([_alloc(2, "bio", theirs, "cpu", 999, START, END)],
                                                          time.time()))
    assert _lua({"type": "sbatch", "account": "chem", "ntasks": "1", "time": "12"}, folder)[:2] == (
        1, "fairtop: job refused: allocation 1 of chem (cpu) has 11 cpu-minutes left (0.2 SU); this job may use "
           "up to 12 (1 x 12 min). Ask for less time or fewer CPUs, or ask for a credit")
    assert _lua({"type": "sbatch", "account": "bio", "ntasks": "1", "time": "12"}, folder)[2].startswith(
        "fairtop-started")
    # a trailing slash names the same folder; a stale file is no opinion, as with the single file
    write_balances(folder / str(mine), format_balances([_alloc(1, "chem", mine, "cpu", 11, START, END)],
                                                       time.time() - 600))
    code, err, out = _lua({"type": "sbatch", "account": "chem", "ntasks": "1", "time": "12"}, Path(f"{folder}/"))
    assert (code, out) == (0, "") and err.startswith("fairtop: balance not checked: the published balances are 6")


def _ledger(where: Path, gid: int) -> Path:
    """An SQLite ledger with one project of group ``gid``: 600 cpu-minutes."""
    from tui.allocations.ledger import open_ledger

    db = where / "ledger.sqlite"
    led = open_ledger(str(db), migrate=True)
    project = led.create_project("chem", gid, "chem")
    alloc = led.create_allocation(project["id"], "cpu", "startup", START, END)
    led.credit(alloc["id"], 600)
    led.close()
    return db


def _publish(out: Path, db: Path, home: Path, *before: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    env["XDG_CONFIG_HOME"] = str(home)
    return subprocess.run([*before, sys.executable, "-m", "tui.cli", "allocations", "publish-balances", str(out),
                           "--by-group", "--once", "--db", str(db)], env=env, capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


@AS_USERS
def test_the_command_publishes_by_group_and_retires_the_single_file(gids: dict[str, int], shared: Path,
                                                                     tmp_path: Path) -> None:
    out, gid = shared / "balances", gids[GROUP_A]
    write_balances(out, format_balances(_allocs(gids), time.time()))  # what was published before
    done = _publish(out, _ledger(tmp_path, gid), tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (
        0, f"fairtop: removed {out} (every user could read it); the balances are now in {out}.d/\n", "")
    assert not out.exists() and [p.name for p in by_group_folder(out).iterdir()] == [str(gid)]
    lines = (by_group_folder(out) / str(gid)).read_text().splitlines()
    assert lines[1].split("\t")[:6] == ["chem", str(gid), "cpu", str(START), str(END), "600"]


def test_a_group_it_cannot_set_stops_the_publisher_with_one_line(tmp_path: Path) -> None:
    """No root, or root without CAP_CHOWN (a unit's CapabilityBoundingSet=): exit 1, one line, and
    no file anyone could read instead."""
    gid = 4_242_424  # no group of ours
    drop = ["setpriv", "--bounding-set", "-chown"] if os.geteuid() == 0 else []
    if drop and not shutil.which("setpriv"):
        pytest.skip("no setpriv (util-linux) to run without CAP_CHOWN as root")
    out = tmp_path / "balances"
    done = _publish(out, _ledger(tmp_path, gid), tmp_path, *drop)
    assert (done.returncode, done.stderr, done.stdout) == (
        1, f"fairtop: balances not published: cannot give {out}.d/{gid} to group {gid} (not a member): run as "
           "root or with CAP_CHOWN\n", "")
    assert [p.name for p in by_group_folder(out).iterdir()] == [] and not out.exists()
