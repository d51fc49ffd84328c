"""The PBS folder source, ``capture --pbs`` (fake PBS_HOME and a fake ``pbsfs``), and the PBS demo."""

from __future__ import annotations

import os
import shutil
import stat
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from tui.cli import main
from tui.engine.pbs import compute
from tui.formats.pbsfs import listing, pbs_rows
from tui.sources import pbs_folder
from tui.sources.demo_pbs import GUESTS, UNKNOWN_SHARES, demo_pbs_snapshot, demo_pbs_texts
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.pbs import read_pbs
from tui.sources.pbs_folder import capture, date_u, is_pbs_folder, load_pbs_folder, pbs_home
from tui.sources.registry import DemoSource

FIX = Path(__file__).parent.parent / "fixtures" / "pbs"
SCHED_CONFIG = "round_robin: False all\nfair_share: true ALL\nunknown_shares: 10  # seed 002\n"


def seed_folder(folder: Path, sched_config: str | None = SCHED_CONFIG) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIX / "seed002_resource_group", folder / "resource_group")
    shutil.copyfile(FIX / "seed002_usage.txt", folder / "usage.txt")
    if sched_config is not None:
        (folder / "sched_config").write_text(sched_config)
    return folder


# --- load_pbs_folder ---------------------------------------------------------------------------


def test_seed002_folder_gives_the_published_values(tmp_path):
    folder = seed_folder(tmp_path / "site")
    assert is_pbs_folder(folder)
    snap = load_pbs_folder(folder)
    tree = snap.pbs
    assert snap.tree is None and snap.cluster == "site" and snap.warnings == ()
    rows = {r["name"]: r for r in pbs_rows(tree)}
    assert rows["unknown"]["shares"] == 10 and rows["unknown"]["percentage"] == 10.0
    assert (rows["B2"]["fairshare_tree_usage"], rows["B3"]["fairshare_tree_usage"],
            rows["L5"]["fairshare_tree_usage"]) == (0.500624, 0.438202, 0.333750)
    assert (rows["TREEROOT"]["usage"], rows["B2"]["usage"], rows["B3"]["usage"]) == (801, 401, 201)
    assert rows["L5"]["percentage"] == 10.000001 and rows["L5"]["usage_per_perc"] == pytest.approx(1000, abs=1e-3)


def test_folder_without_sched_config_warns_and_takes_unknown_shares_0(tmp_path):
    snap = load_pbs_folder(seed_folder(tmp_path / "f", sched_config=None))
    assert int(snap.pbs.shares[list(snap.pbs.name).index("unknown")]) == 0
    assert any("unknown_shares taken as 0" in w for w in snap.warnings)


def test_slurm_folder_is_not_a_pbs_folder(tmp_path):
    folder = seed_folder(tmp_path / "f")
    (folder / "sshare_a_l_P.psv").write_text("")
    assert not is_pbs_folder(folder)
    assert not is_pbs_folder(tmp_path / "nothing")


def test_captured_at_line_sets_the_time(tmp_path):
    folder = seed_folder(tmp_path / "f")
    (folder / "captured_at.txt").write_text("Sun Nov  2 20:03:04 UTC 2026\n")
    assert load_pbs_folder(folder).taken_at == datetime(2026, 11, 2, 20, 3, 4, tzinfo=timezone.utc)
    (folder / "captured_at.txt").write_text("yesterday\n")
    assert any("not a 'date -u' line" in w for w in load_pbs_folder(folder).warnings)


def test_bad_sched_config_names_the_line(tmp_path):
    folder = seed_folder(tmp_path / "f", sched_config="# c\nunknown_shares: ten\n")
    with pytest.raises(InputError, match=r"sched_config:2: unknown_shares 'ten'"):
        load_pbs_folder(folder)


def test_sched_config_values():
    text = ("# sched_config\nunknown_shares: 10 all\n"
            'fairshare_usage_res: "ncpus * pow(walltime, 0.85)"  # quoted: spaces kept\n')
    assert pbs_folder.sched_config_values(text, "c") == (10, "ncpus * pow(walltime, 0.85)")
    assert pbs_folder.sched_config_values("fairshare_usage_res: ncpus*walltime prime\n", "c") == (0, "ncpus*walltime")
    assert pbs_folder.sched_config_values("#unknown_shares: 5\n", "c") == (0, None)
    with pytest.raises(InputError, match="unknown_shares '-1'"):
        pbs_folder.sched_config_values("unknown_shares: -1\n", "c")
    with pytest.raises(InputError, match="unknown_shares '3000000000'"):
        pbs_folder.sched_config_values("unknown_shares: 3000000000\n", "c")


def test_sched_decay_values_as_pbs_sched_reads_them(tmp_path):
    # OpenPBS's default sched_config: 0.5 every 24:00:00
    text = "fairshare_decay_time: 24:00:00\nfairshare_decay_factor: 0.5\n"
    assert pbs_folder.sched_decay_values(text, "c") == (0.5, 86400)
    assert pbs_folder.sched_decay_values("fairshare_decay_time: 90\n#fairshare_decay_factor: 0.9\n", "c") == (None, 90)
    assert pbs_folder.sched_decay_values("fairshare_decay_time: 01:30\n", "c") == (None, 90)  # MM:SS
    assert pbs_folder.sched_decay_values("", "c") == (None, None)
    for bad, what in (("fairshare_decay_factor: 1\n", "fairshare_decay_factor '1'"),
                      ("fairshare_decay_factor: half\n", "fairshare_decay_factor 'half'"),
                      ("fairshare_decay_time: 0\n", "fairshare_decay_time '0'"),
                      ("fairshare_decay_time: 1d\n", "fairshare_decay_time '1d'")):
        with pytest.raises(InputError, match=f"c:1: {what}"):
            pbs_folder.sched_decay_values(bad, "c")
    folder = seed_folder(tmp_path / "f", sched_config="fairshare_decay_time: 00:00:20\nfairshare_decay_factor: 0.7\n")
    tree = load_pbs_folder(folder).pbs
    assert (tree.decay_factor, tree.decay_time_s) == (0.7, 20)
    tree = load_pbs_folder(seed_folder(tmp_path / "g", sched_config="unknown_shares: 0\n")).pbs
    assert (tree.decay_factor, tree.decay_time_s) == (None, None)  # unsaid: the planner's defaults apply


def test_date_u_matches_the_date_command_format():
    assert date_u(datetime(2026, 11, 2, 20, 3, 4, tzinfo=timezone.utc)) == "Mon Nov  2 20:03:04 UTC 2026"
    assert date_u(datetime(2026, 11, 22, 9, 0, 0, tzinfo=timezone.utc)) == "Sun Nov 22 09:00:00 UTC 2026"


# --- capture --pbs ---------------------------------------------------------------------------


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    """A PBS_HOME with the man page's resource_group and a sched_config, and a ``pbsfs`` on PATH
    that prints the man page's listing (spec 7.8 P1) and records its arguments."""
    home = tmp_path / "pbs_home"
    (home / "sched_priv").mkdir(parents=True)
    shutil.copyfile(FIX / "man_resource_group", home / "sched_priv" / "resource_group")
    (home / "sched_priv" / "sched_config").write_text("fair_share: true ALL\nunknown_shares: 0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "pbsfs"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'pbsfs_args'}\ncat {FIX / 'man_pbsfs.txt'}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PBS_HOME", str(home))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return home


def test_capture_writes_a_folder_that_loads_to_the_inputs(fake_server, tmp_path):
    out = tmp_path / "cap"
    summary = capture(out)
    assert summary.startswith(f"captured {fake_server / 'sched_priv'} into {out}")
    assert "(8 fairshare entities in pbsfs)" in summary
    assert (tmp_path / "pbsfs_args").read_text() == "\n"  # plain pbsfs, no arguments
    assert (out / "resource_group").read_bytes() == (FIX / "man_resource_group").read_bytes()
    assert (out / "sched_config").read_bytes() == (fake_server / "sched_priv" / "sched_config").read_bytes()
    assert (out / "pbsfs.txt").read_bytes() == (FIX / "man_pbsfs.txt").read_bytes()
    stamp = (out / "captured_at.txt").read_text()
    assert datetime.strptime(stamp.strip(), "%a %b %d %H:%M:%S %Z %Y")  # date -u format

    snap = load_pbs_folder(out)
    assert snap.warnings == ()
    tree = snap.pbs
    direct = read_pbs(FIX / "man_resource_group", FIX / "man_usage.txt")
    assert list(tree.name) == list(direct.name)
    for field in ("parent", "resgroup", "cresgroup", "shares", "usage"):
        assert np.array_equal(getattr(tree, field), getattr(direct, field)), field
    # the loaded folder prints the captured pbsfs listing back, cell for cell
    assert listing(tree).split() == (FIX / "man_pbsfs.txt").read_text().split()
    assert "%f" % compute(tree).tree_usage[list(tree.name).index("pbsuser3")] == "0.832973"


def test_capture_reads_pbs_home_from_pbs_conf(fake_server, tmp_path, monkeypatch):
    conf = tmp_path / "pbs.conf"
    conf.write_text(f"PBS_EXEC=/opt/pbs\nPBS_HOME={fake_server}\nPBS_SERVER=head\n")
    monkeypatch.delenv("PBS_HOME")
    assert pbs_home(conf) == fake_server
    assert pbs_home(tmp_path / "none.conf") == Path("/var/spool/pbs")
    monkeypatch.setenv("PBS_HOME", "/elsewhere")
    assert pbs_home(conf) == Path("/elsewhere")  # the environment wins, as for the PBS commands


def test_capture_finds_pbs_home_through_pbs_conf_file(fake_server, tmp_path, monkeypatch):
    """``PBS_CONF_FILE`` names the configuration as it does for every PBS command (a second server's
    tools, or a test server beside the real one)."""
    conf = tmp_path / "other.conf"
    conf.write_text(f"PBS_HOME={fake_server}\n")
    monkeypatch.delenv("PBS_HOME")
    monkeypatch.setenv("PBS_CONF_FILE", str(conf))
    assert pbs_home() == fake_server
    assert capture(tmp_path / "cap").startswith(f"captured {fake_server / 'sched_priv'}")


def test_capture_keeps_the_binary_usage_file_with_its_last_decay(fake_server, tmp_path):
    """The scheduler's own usage file is saved beside pbsfs's listing and read first: exact doubles
    and the time of the last decay, which the planner's PBS projection starts from."""
    from tests.sources.test_pbs_parsers import P1_BINARY, v2

    tree = read_pbs(FIX / "man_resource_group", FIX / "man_usage.txt")  # the same usage as P1_BINARY
    assert P1_BINARY == v2([(b"pbsuser1", 100.0), (b"pbsuser", 100.0), (b"pbsuser3", 1000.0)])
    (fake_server / "sched_priv" / "usage").write_bytes(v2([(b"pbsuser1", 100.0), (b"pbsuser", 100.0),
                                                           (b"pbsuser3", 1000.0)], last_decay=1_790_000_000))
    summary = capture(tmp_path / "cap")
    assert "sched_config, usage, pbsfs.txt" in summary
    assert (tmp_path / "cap" / "usage").read_bytes() == (fake_server / "sched_priv" / "usage").read_bytes()
    loaded = load_pbs_folder(tmp_path / "cap").pbs
    assert loaded.last_decay == 1_790_000_000
    assert np.array_equal(loaded.usage, tree.usage)


def test_cli_capture_pbs_every_publishes(fake_server, tmp_path, capsys):
    """``capture --pbs --every`` publishes as the Slurm capture does (it used to capture once)."""
    root = tmp_path / "pub"
    assert main(["capture", "--pbs", "--every", "10s", "--count", "1", "--keep", "2", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("current ")
    published = Path(out[0].split(" ", 1)[1])
    assert (root / "current").resolve() == published.resolve() and is_pbs_folder(published)


def test_capture_without_pbsfs_is_source_unavailable(tmp_path, monkeypatch, fake_server):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SourceUnavailable, match="pbsfs: command not found"):
        capture(tmp_path / "cap")
    assert not (tmp_path / "cap").exists()


def test_capture_without_resource_group_is_source_unavailable(tmp_path, monkeypatch, fake_server):
    (fake_server / "sched_priv" / "resource_group").unlink()
    with pytest.raises(SourceUnavailable, match=r"sched_priv/resource_group: no such file .*PBS_HOME"):
        capture(tmp_path / "cap")


def test_capture_failing_pbsfs_gives_its_message(tmp_path, fake_server):
    script = tmp_path / "bin" / "pbsfs"
    script.write_text("#!/bin/sh\necho 'Unable to open usage file' >&2\nexit 1\n")
    with pytest.raises(SourceUnavailable, match="pbsfs: exit status 1: Unable to open usage file"):
        capture(tmp_path / "cap")


def test_capture_kills_a_hung_pbsfs_with_its_children(tmp_path, fake_server):
    import random

    from tests.sources.test_publish_faults import _processes

    marker = str(random.randrange(10**8, 10**9))  # in the command line of each of its sleeps
    script = tmp_path / "bin" / "pbsfs"
    script.write_text(f"#!/bin/sh\n/bin/sleep 3601.{marker} &\n/bin/sleep 3602.{marker}\n")
    with pytest.raises(SourceUnavailable, match=r"pbsfs: no answer within 0.5 s"):
        capture(tmp_path / "cap", timeout=0.5)
    for _ in range(50):  # killed at once; gone from /proc a moment later on a loaded machine
        if not _processes(marker):
            break
        time.sleep(0.1)
    assert _processes(marker) == []


def test_cli_capture_pbs(fake_server, tmp_path, capsys):
    assert main(["capture", "--pbs", str(tmp_path / "cli")]) == 0
    assert "captured" in capsys.readouterr().out
    assert is_pbs_folder(tmp_path / "cli")
    (fake_server / "sched_priv" / "resource_group").unlink()
    assert main(["capture", "--pbs", str(tmp_path / "cli2")]) == 2  # no server: exit 2, no folder (issue 11)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fairtop capture: ") and "no such file" in err
    assert not (tmp_path / "cli2").exists()


# --- the demo ----------------------------------------------------------------------------------


def test_demo_pbs_is_deterministic_and_goes_through_the_parsers():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    a, b = demo_pbs_snapshot(now=now), demo_pbs_snapshot(now=now)
    assert (a.cluster, a.source, a.tree) == ("demo-pbs", "demo (PBS Professional)", None)
    assert list(a.pbs.name) == list(b.pbs.name) and np.array_equal(a.pbs.usage, b.pbs.usage)
    tree = a.pbs
    names = list(tree.name)
    assert tree.usage_res == "cput" and 40 <= len(names) <= 220
    # guests are not in resource_group: the load rule files them under unknown, 1 share each
    unknown = names.index("unknown")
    assert int(tree.shares[unknown]) == UNKNOWN_SHARES
    for g in GUESTS:
        assert int(tree.parent[names.index(g)]) == unknown and int(tree.shares[names.index(g)]) == 1
    # internal usage = 1 + the leaves below (the scheduler's load rule), root = 1 + every leaf
    leaves = np.ones(len(names), dtype=bool)
    leaves[tree.parent[1:]] = False
    assert tree.usage[0] == 1 + tree.usage[leaves & (tree.usage > 1)].sum()
    groups, _ = demo_pbs_texts()
    assert "physics\t100\troot\t30" in groups.splitlines()


def test_demo_pbs_texts_read_like_a_folder(tmp_path):
    groups, usage = demo_pbs_texts()
    (tmp_path / "resource_group").write_text(groups)
    (tmp_path / "usage.txt").write_text(usage)
    (tmp_path / "sched_config").write_text(f"unknown_shares: {UNKNOWN_SHARES}\n")
    folder = load_pbs_folder(tmp_path).pbs
    demo = demo_pbs_snapshot().pbs
    assert list(folder.name) == list(demo.name) and np.array_equal(folder.usage, demo.usage)


def test_demo_pbs_me_renames_one_user_only():
    plain, mine = demo_pbs_snapshot().pbs, demo_pbs_snapshot(me="alice").pbs
    changed = [(a, b) for a, b in zip(plain.name, mine.name) if a != b]
    assert len(changed) == 1 and changed[0][1] == "alice"
    assert np.array_equal(plain.usage, mine.usage) and np.array_equal(plain.shares, mine.shares)
    row = list(mine.name).index("alice")
    assert str(mine.name[mine.parent[row]]) == "quantchem" and mine.usage[row] > 1


def test_demo_source_pbs_choice():
    src = DemoSource("pbs", me="bob")
    snap = src.load()
    assert snap.pbs is not None and "bob" in set(snap.pbs.name)
    assert snap.capabilities == frozenset({"usage", "printed"})
