"""Integration: the site-wide snapshot on real Slurm. One ``fairtop capture --every`` publisher
asks the sandbox's commands; two separate fairtop processes follow its ``current`` symlink and
must each read both snapshots it publishes, each equal to what sshare printed into that capture.

CI (``.ci/run``, as root) starts the sandbox and sets ``FAIRTOP_SANDBOX``; elsewhere this is
skipped. Nothing on the cluster changes. Takes about 20 s (two captures 10 s apart).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.sandbox._sandbox import SKIP, on_release, release_env
from tui.sources.saved import FILES, printed_columns
from tui.sources.sshare import parse_sshare

pytestmark = [pytest.mark.sandbox, SKIP]

#: A follower: a fairtop source on the symlink, read on the app's refresh until it has seen
#: ``n`` different snapshots; prints, per snapshot, the folder it came from and its sshare cells.
FOLLOWER = r"""
import json, sys, time
from pathlib import Path
from tui.sources import registry
link, n = Path(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 60
while not link.exists() and time.monotonic() < deadline:
    time.sleep(0.2)
source = registry.make("folder", str(link))
assert source.is_live(), "a symlink is followed"
seen, last = [], None
while len(seen) < n and time.monotonic() < deadline:
    snap = source.load()  # what the app's refresh worker calls
    if snap is not last:
        seen.append({"folder": str(link.resolve()), "taken_at": snap.taken_at.isoformat(),
                     "printed": {k: list(v) for k, v in (snap.printed or {}).items()}})
        last = snap
    time.sleep(0.2)
print(json.dumps(seen))
"""


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


@pytest.mark.parametrize("release", [pytest.param(r, marks=on_release(r)) for r in ("22.05", "24.11", "26.05")])
def test_two_followers_read_every_snapshot_one_publisher_writes(tmp_path: Path, release: str) -> None:
    env = release_env(release)
    env["PYTHONPATH"] = str(ROOT)
    root = tmp_path / "pub"
    followers = [subprocess.Popen(_python("-c", FOLLOWER, str(root / "current"), "2"), env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        publisher = subprocess.run(
            _python("-c", "from tui.cli import main; raise SystemExit(main())", "capture", "--every", "10s",
                    "--count", "2", "--keep", "3", str(root)),
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert publisher.returncode == 0, publisher.stderr
        published = [line.split(" ", 1)[1] for line in publisher.stdout.splitlines() if line.startswith("current ")]
        assert len(published) == 2 and published[0] != published[1]
        outs = [f.communicate(timeout=90) for f in followers]
    finally:
        for f in followers:
            if f.poll() is None:
                f.kill()
    for out, err in outs:
        seen = json.loads(out or "[]")
        assert [s["folder"] for s in seen] == published, err  # each snapshot, in order, none missed
        for s in seen:
            table = parse_sshare((Path(s["folder"]) / FILES["sshare"]).read_bytes(), "sshare")
            assert s["printed"] == {k: list(v) for k, v in printed_columns(table).items()}
        assert seen[0]["taken_at"] < seen[1]["taken_at"]
    for folder in published:  # sacctmgr asked for the fields this release has (no LFT from 23.11)
        commands = (Path(folder) / "commands.txt").read_text().splitlines()
        assoc = [line for line in commands if f"\t{FILES['assoc']}\t" in line]
        assert len(assoc) == 1 and assoc[0].startswith("0\t"), assoc
        assert ("LFT" in assoc[0]) == (release == "22.05")  # 23.11 dropped it
