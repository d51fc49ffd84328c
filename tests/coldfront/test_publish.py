"""A ColdFront site's publisher against the real ColdFront: a staff token reads every allocation,
each user's own go to a file only they can read, with what their own token would show them and
no private attribute, no other user's name. Runs as root in CI (the files are given away)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.coldfront.site import Site
from tests.coldfront.test_client import view
from tests.conftest import ROOT
from tests.needs import needs, root
from tui.allocations.client import ApiError
from tui.allocations.coldfront import ColdFrontView, published_view
from tui.allocations.coldfront_publish import publish, read_site

pytestmark = needs(root("the publisher gives each user's file to them (chown)"))

UIDS = {"cgray": 61001, "sfoster": 61002, "pmanager": 61003, "staffer": 61004, "nobody": 61005}


def shape(v: ColdFrontView) -> list[tuple]:
    return sorted((a.id, a.project, a.resource, a.status, a.slurm_account,
                   tuple((u.name, u.budget, u.usage) for u in a.usage if u.public)) for a in v.allocations)


@pytest.fixture(scope="module")
def published(coldfront: Site, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("published") / "coldfront"
    site, allocations, projects = asyncio.run(read_site(coldfront.url, token=coldfront.tokens["staffer"], timeout=20))
    written, skipped = publish(folder, site, allocations, projects, uid_of=UIDS.get)
    assert written == 4  # cgray, sfoster, pmanager, staffer: nobody sees nothing, so has no file
    return folder, skipped


@pytest.mark.parametrize("user", ["cgray", "sfoster", "pmanager", "staffer"])
def test_each_user_gets_what_their_own_token_shows_them(coldfront: Site, published: tuple[Path, list[str]],
                                                        user: str) -> None:
    folder, _ = published
    mine = published_view(folder, user)
    assert shape(mine) == shape(view(coldfront, user)) and mine.allocations
    path = folder / "users" / user / "coldfront.json"
    st = path.stat()
    assert (stat.S_IMODE(st.st_mode), st.st_uid) == (0o400, UIDS[user])
    assert stat.S_IMODE((folder / "users").stat().st_mode) == 0o711
    text = path.read_text()
    others = [u for u in UIDS if u != user and (user, u) not in {("cgray", "pmanager"), ("pmanager", "cgray")}]
    assert not any(f'"{u}"' in text for u in others)  # no other user's name, not even an allocation user's
    assert "slurm_specs" not in text and "Paid Cloud Support" not in text  # staff's own too: never published


def test_a_user_without_a_unix_account_is_skipped_and_one_with_nothing_has_no_file(
        published: tuple[Path, list[str]]) -> None:
    folder, skipped = published
    assert "admin" not in skipped  # ColdFront's superuser leads no project
    assert not (folder / "users" / "nobody").exists()
    with pytest.raises(ApiError, match="no ColdFront allocations published for nobody"):
        published_view(folder, "nobody")


def test_a_user_token_cannot_publish(coldfront: Site) -> None:
    with pytest.raises(ApiError, match="the publisher needs a staff token"):
        asyncio.run(read_site(coldfront.url, token=coldfront.tokens["cgray"], timeout=20))


def test_a_user_who_lost_access_gets_an_empty_list_not_stale_numbers(coldfront: Site, tmp_path: Path) -> None:
    site, allocations, projects = asyncio.run(read_site(coldfront.url, token=coldfront.tokens["staffer"], timeout=20))
    publish(tmp_path, site, allocations, projects, uid_of=UIDS.get)
    assert published_view(tmp_path, "pmanager").allocations
    gone = [{**p, "project_users": [u for u in p["project_users"] if u["user"] != "pmanager"]} for p in projects]
    publish(tmp_path, site, allocations, gone, uid_of=UIDS.get)
    assert published_view(tmp_path, "pmanager").allocations == ()
    assert published_view(tmp_path, "cgray").allocations


def test_fairtop_balance_reads_the_published_file_without_a_token(coldfront: Site, published: tuple[Path, list[str]],
                                                                  tmp_path: Path) -> None:
    folder, _ = published
    (tmp_path / "config.toml").write_text(f'source = "demo"\nuser = "sfoster"\ncoldfront_published = "{folder}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "tui.cli", "balance", "--config", str(tmp_path / "config.toml"),
                           "--format", "json"], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["coldfront"] == coldfront.url and doc["published_at"]
    assert sorted(a["id"] for a in doc["allocations"]) == sorted(a.id for a in view(coldfront, "sfoster").allocations)
