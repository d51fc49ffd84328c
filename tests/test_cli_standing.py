"""``fairtop standing``: the app's summary line as a command, for banners, prompts and dashboards.

Real processes on the demo and on the saved captures under tests/fixtures (a 22.05 Fair Tree
sandbox capture, published the way ``fairtop capture --every`` publishes it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

CAPTURE = FIXTURES / "slurm" / "live" / "fair_tree"
#: la has two associations (grp first); 6 of the 8 users are ranked before grp's la; Fair Tree puts
#: lab last of root's 5 children; la's two pending jobs wait in the DOWN partition parked (the
#: capture's squeue -a prints "(PartitionDown)" for each)
LA = ("la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead of you · held back by lab (5th of 5 in root) "
      "· 2 pending jobs, the nearest: partition parked is down (PartitionDown)")


def _standing(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    return subprocess.run([sys.executable, "-m", "tui.cli", "standing", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**clean, "XDG_CONFIG_HOME": "/nonexistent", **(env or {})})


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """``DIR/current`` -> ``DIR/<UTC time>``, holding the capture, as the publisher leaves it."""
    stamp = tmp_path / "20261126T060000Z"
    stamp.symlink_to(CAPTURE)
    (tmp_path / "current").symlink_to(stamp.name)
    return tmp_path / "current"


def test_the_line_from_a_published_folder(published: Path) -> None:
    done = _standing("--from", str(published), "--user", "la")
    assert (done.returncode, done.stdout, done.stderr) == (0, LA + "\n", "")


def test_json_carries_the_line_and_its_values(published: Path) -> None:
    done = _standing("--from", str(published), "--user", "la", "--format", "json")
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    doc = json.loads(done.stdout)
    assert doc["text"] == LA and doc["parts"] == LA.split(" · ")
    assert {k: doc[k] for k in ("user", "account", "associations", "fairshare", "users", "users_ahead",
                                "pending_jobs", "top_priority", "found")} == {
        "user": "la", "account": "grp", "associations": 2, "fairshare": 0.25, "users": 8, "users_ahead": 6,
        "pending_jobs": 2, "top_priority": 10000, "found": True}
    assert doc["held_back_by"] == {"name": "lab", "within": "root", "place": 5, "of": 5, "own_usage": False}
    assert doc["taken_at"].startswith("20") and doc["source"]


def test_the_demo_as_the_app_shows_it() -> None:
    done = _standing("--demo", "--user", "alice")
    assert done.returncode == 0
    assert done.stdout.startswith("alice (demo user) · FairShare 0.349460 · 1,627 of 2,501 users ahead of you · "
                                  "held back by mech_vargas_lab (5th of 5 in mech) · 1 pending job, priority 8.6M · ")
    assert re.search(r" · allocation mech_vargas_lab \d+% left \(.*\d{4}-\d\d-\d\d\)\n\Z", done.stdout)
    doc = json.loads(_standing("--demo", "--user", "alice", "--format", "json").stdout)
    assert doc["allocation"]["project"] == "mech_vargas_lab" and doc["allocation"]["granted"] == 500_000
    assert (doc["users_ahead"], doc["users"], doc["top_priority"]) == (1627, 2501, 8_601_704)


def test_a_user_without_an_association_is_said_so(published: Path) -> None:
    done = _standing("--from", str(published), "--user", "nosuchuser")
    assert (done.returncode, done.stdout) == (0, "nosuchuser: no association in this snapshot\n")
    assert json.loads(_standing("--from", str(published), "--user", "nosuchuser", "--format", "json").stdout)[
        "found"] is False


def test_the_config_chooses_the_source_without_flags(published: Path, tmp_path: Path) -> None:
    conf = tmp_path / "config.toml"
    conf.write_text(f'source = "folder"\nfolder = "{published}"\nuser = "la"\n')
    done = _standing("--config", str(conf))
    assert (done.returncode, done.stdout) == (0, LA + "\n")


@pytest.mark.parametrize(("make", "says"), [
    (lambda tmp: tmp / "missing", "no such folder"),
    (lambda tmp: tmp, "holds neither sshare_a_l_P.psv (Slurm) nor resource_group (PBS)"),
])
def test_an_unreadable_source_exits_2_with_one_line(make, says: str, tmp_path: Path) -> None:
    done = _standing("--from", str(make(tmp_path)), "--user", "la")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("fairtop standing: ") and says in done.stderr


def test_a_bad_config_exits_2_with_one_line(tmp_path: Path) -> None:
    conf = tmp_path / "config.toml"
    conf.write_text("source = [\n")
    done = _standing("--config", str(conf))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1


def test_imports_no_ui_and_no_network_client(published: Path) -> None:
    """A banner pays only for what the line needs: no Textual, Rich, httpx or the allocation service."""
    code = ("import sys; from tui.cli import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('textual', 'rich', 'httpx', 'tui.app', 'tui.allocations.service', "
            "'tui.metrics') if m in sys.modules), rc, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, "standing", "--from", str(published), "--user", "la"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout == LA + "\n" and done.stderr.strip() == "[] 0"


def test_a_pbs_folder(tmp_path: Path) -> None:
    """The pbsfs(8B) man page's tree: pbsuser3's fairshare_tree_usage 0.832973 over its 24 % gives
    2^(-0.832973/0.24) = 0.090201; pbsuser, pbsuser1 and pbsuser2 have a higher factor, unknown does not."""
    shutil.copy(FIXTURES / "pbs" / "man_resource_group", tmp_path / "resource_group")
    shutil.copy(FIXTURES / "pbs" / "man_usage.txt", tmp_path / "usage.txt")
    done = _standing("--from", str(tmp_path), "--user", "pbsuser3")
    assert (done.returncode, done.stdout) == (0, "pbsuser3 · fairshare_factor 0.090201 · 3 of 5 entities have a higher "
                                                 "factor · pending jobs unknown (no qstat -f in this source: a capture "
                                                 "made before fairtop read it)\n")
    doc = json.loads(_standing("--from", str(tmp_path), "--user", "pbsuser3", "--format", "json").stdout)
    assert (doc["fairshare_factor"], doc["higher"], doc["entities"]) == (0.090201, 3, 5)
