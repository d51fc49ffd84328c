"""The live Slurm source against the real sandbox, and its failure messages (no sandbox needed)."""

from __future__ import annotations

from dataclasses import replace

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from tests.sandbox._sandbox import on_release, release_env
from tui.cli import main
from tui.model import Snapshot
from tui.sources.ctld_log import CYCLES_FILE
from tui.sources import saved, slurm_cli
from tui.sources.errors import SourceUnavailable

sandbox = pytest.mark.skipif(
    not os.environ.get("FAIRTOP_SANDBOX"),
    reason="needs the running Slurm sandbox: set FAIRTOP_SANDBOX=1 (CI does, after shared/slurm-sandbox/up.sh)",
)


def _same_cluster(a: Snapshot, b: Snapshot, usage: bool) -> None:
    assert a.tree is not None and b.tree is not None
    for name in ("parent", "is_user", "account", "user", "shares_raw", "sibling_order"):
        assert np.array_equal(getattr(a.tree, name), getattr(b.tree, name)), name
    if usage:
        assert np.array_equal(a.tree.usage_raw, b.tree.usage_raw)
    # the QOS table (UsageFactor, NoDecay: the usage law) is saved by a capture only
    assert replace(a.settings, qos_usage_factors=b.settings.qos_usage_factors,
                   qos_no_decay=b.settings.qos_no_decay) == b.settings
    assert a.cluster == b.cluster
    assert a.partitions == b.partitions
    assert [(j.job_id, j.user, j.account, j.partition, j.state) for j in a.jobs] == [
        (j.job_id, j.user, j.account, j.partition, j.state) for j in b.jobs]


RELEASES = [pytest.param(r, marks=on_release(r)) for r in ("22.05", "24.11", "26.05")]


def _on(release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Talk to that release's sandbox: its slurm.conf, its commands first on PATH."""
    env = release_env(release)
    monkeypatch.setenv("SLURM_CONF", env["SLURM_CONF"])
    monkeypatch.setenv("PATH", env["PATH"])


@pytest.mark.sandbox
@sandbox
@pytest.mark.parametrize("release", RELEASES)
def test_live_equals_capture(tmp_path: Path, release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command of the release answers (no non-zero exit, no warning), and the live source
    equals what `fairtop capture` saved."""
    _on(release, monkeypatch)
    for _ in range(3):  # usage decays once a minute: retry when a cycle fell between the reads
        before = slurm_cli.live_snapshot(timeout=30)
        line = slurm_cli.capture(tmp_path / "cap", timeout=30)
        after = slurm_cli.live_snapshot(timeout=30)
        folder = saved.load_folder(tmp_path / "cap")
        # + sacct, qos, ... and slurmctld's log (its cycles: the sandbox's controller runs here)
        assert line.startswith(f"captured into {tmp_path / 'cap'} (14 commands, 0 non-zero exits)"), line
        assert (tmp_path / "cap" / CYCLES_FILE).is_file()
        assert not before.warnings and not folder.warnings
        assert (before.scheduler_version or "").startswith(release + ".")
        _same_cluster(before, folder, usage=False)
        if np.array_equal(before.tree.usage_raw, after.tree.usage_raw):
            _same_cluster(before, folder, usage=True)
            break
    else:
        pytest.fail("raw usage changed during every attempt")


@pytest.mark.sandbox
@sandbox
@pytest.mark.parametrize("release", RELEASES)
def test_cli_capture_then_report(tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _on(release, monkeypatch)
    assert main(["capture", str(tmp_path)]) == 0
    assert capsys.readouterr().out.count("\n") == 1
    assert main(["report", "--from", str(tmp_path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("account,user,")


# --- failures, with fake commands on PATH -----------------------------------------------------


def _fake(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_missing_command(fake_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="sshare: command not found"):
        slurm_cli.live_snapshot(timeout=5)


def test_non_zero_exit_gives_stderr(fake_path: Path) -> None:
    _fake(fake_path, "sshare", "echo 'sshare: error: Invalid user' >&2; echo more >&2; exit 1")
    with pytest.raises(SourceUnavailable, match=r"sshare -a -l -P: exit status 1: sshare: error: Invalid user$"):
        slurm_cli.live_snapshot(timeout=5)


def test_controller_does_not_answer(fake_path: Path) -> None:
    _fake(fake_path, "sshare", "echo 'sshare: error: Unable to contact slurm controller (connect failure)' >&2;"
                               " exit 1")
    with pytest.raises(SourceUnavailable, match="controller does not answer"):
        slurm_cli.live_snapshot(timeout=5)


def test_timeout(fake_path: Path) -> None:
    _fake(fake_path, "sshare", "exec /bin/sleep 5")
    with pytest.raises(SourceUnavailable, match=r"no answer within 0.3 s"):
        slurm_cli.live_snapshot(timeout=0.3)


def test_only_sshare_available(fake_path: Path, tmp_path: Path) -> None:
    """Other commands missing or refused: a snapshot with warnings, and a capture that reads back."""
    import _samples

    psv = tmp_path / "s.psv"
    psv.write_text(_samples.SSHARE)
    _fake(fake_path, "sshare", f"/bin/cat '{psv}'")
    _fake(fake_path, "sprio", "echo 'sprio: error: Access/permission denied' >&2; exit 1")
    snap = slurm_cli.live_snapshot(timeout=5)
    assert snap.tree is not None and snap.tree.size == 8
    assert any("sprio -l: exit status 1: sprio: error: Access/permission denied" in w for w in snap.warnings)
    assert any("scontrol: command not found" in w for w in snap.warnings)
    sacct_psv = Path(__file__).parents[1] / "fixtures" / "slurm" / "live" / "fair_tree" / "sacct_a_P.psv"
    _fake(fake_path, "sacct", f"/bin/cat '{sacct_psv}'")
    line = slurm_cli.capture(tmp_path / "cap", timeout=5)
    assert line == f"captured into {tmp_path / 'cap'} (12 commands, 10 non-zero exits)\n"
    from tui.sources.sacct import load_saved_history

    assert len(load_saved_history(tmp_path / "cap")[0]) == 3  # saved for fairtop history
    back = saved.load_folder(tmp_path / "cap")
    assert np.array_equal(back.tree.usage_raw, snap.tree.usage_raw)
    assert (tmp_path / "cap" / "sprio_l.txt.err").read_text().startswith("sprio: error")


def test_user_input_is_never_a_shell_string() -> None:
    """Cluster names go in as one argument: no shell sees them."""
    args = slurm_cli.commands("x; rm -rf /")["sacctmgr_assoc_hdr.psv"]
    assert "cluster=x; rm -rf /" in args and all(isinstance(a, str) for a in args)


def test_cli_capture_errors(fake_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No sshare: exit 2, one line, no folder (issue 11); a folder that cannot be made: exit 2 and one line."""
    assert main(["capture", str(tmp_path / "cap")]) == 2
    err = capsys.readouterr().err
    assert err == "fairtop capture: sshare: command not found (is the Slurm client installed and on PATH?)\n"
    assert not (tmp_path / "cap").exists()
    (tmp_path / "file").write_text("")
    assert main(["capture", str(tmp_path / "file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create the folder" in err
