"""File modes that say what they mean (issue 24, item 4), checked under a umask that would give
other modes: the state file and a new ledger private, the published balances and captures
readable by all, and a token file that others may read refused in one line, as ssh refuses a key."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui import config
from tui.allocations.auth import load_tokens
from tui.allocations.balance_file import write_balances
from tui.allocations.ledger import open_ledger
from tui.cli import main
from tui.security.file_modes import PRIVATE, SecretFileError, read_secret, write_atomic
from tui.sources.publish import CURRENT


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o077], ids=["umask000", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The umask of a careless unit (000) and of a strict one (077): neither changes a mode."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_write_atomic_sets_the_mode_and_leaves_nothing_behind(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "f"
    target.write_text("old")
    os.chmod(target, 0o666)
    write_atomic(target, "new", 0o640)
    assert (target.read_text(), _mode(target), sorted(p.name for p in tmp_path.iterdir())) == ("new", 0o640, ["f"])


def test_the_state_file_is_private(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "state" / "fairtop" / "state.toml"
    config.save_state(config.State(last_theme="nord"), path)
    assert (_mode(path), _mode(path.parent)) == (0o600, 0o700)
    assert config.load_state(path).last_theme == "nord"


def test_a_new_ledger_and_its_wal_are_private(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "ledger.db"
    led = open_ledger(str(path), migrate=True)
    try:
        led.create_project("chem", 7001, "chem")
        files = {p.name: _mode(p) for p in tmp_path.iterdir()}
    finally:
        led.close()
    assert files == {"ledger.db": 0o600, "ledger.db-wal": 0o600, "ledger.db-shm": 0o600}


def test_an_existing_ledger_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "ledger.db"
    open_ledger(str(path), migrate=True).close()
    os.chmod(path, 0o640)  # the administrator let a group read it
    open_ledger(str(path)).close()
    assert _mode(path) == 0o640


def test_published_balances_are_readable_by_all(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "balances"
    write_balances(path, "# fairtop balances 1 0\n")
    assert _mode(path) == 0o644


def test_a_capture_has_todays_modes_stated(tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sshare = bin_dir / "sshare"
    sshare.write_text(f"#!/bin/sh\n/bin/cat '{FIXTURES / 'slurm/live/fair_tree/sshare_a_l_P.psv'}'\n")
    os.chmod(sshare, 0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["capture", "--every", "5m", "--count", "1", str(tmp_path / "pub")]) == 0
    capsys.readouterr()
    root = tmp_path / "pub"
    capture = (root / CURRENT).resolve()
    assert (_mode(root), _mode(capture)) == (0o755, 0o755)
    files = {p.name: _mode(p) for p in capture.iterdir()}
    assert "sshare_a_l_P.psv" in files and set(files.values()) == {0o644}


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_token_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    token = tmp_path / "alloc-token"
    token.write_text("s3cret-token-value\n")
    os.chmod(token, mode)
    settings = config.Settings(allocation_auth="token", allocation_token_file=str(token))
    with pytest.raises(config.ConfigError) as err:
        config.allocation_access(settings, {})
    assert str(err.value) == (f"allocation_token_file: token file {token} is readable by others (mode 0{mode:o}); "
                              f"chmod 600 {token}")
    assert "s3cret" not in str(err.value)
    os.chmod(token, PRIVATE)
    assert config.allocation_access(settings, {}).token == "s3cret-token-value"


def test_the_services_tokens_file_and_a_missing_one(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[[token]]\ntoken = "0123456789"\nuid = 0\ngids = [0]\nrole = "superuser"\n')
    os.chmod(tokens, 0o640)
    with pytest.raises(SecretFileError, match=r"^tokens file .* is readable by others \(mode 0640\); chmod 600 "):
        load_tokens(tokens)
    os.chmod(tokens, 0o600)
    assert load_tokens(tokens)["0123456789"].role == "superuser"
    with pytest.raises(SecretFileError, match=r"^token file .*/nope: No such file or directory$"):
        read_secret(tmp_path / "nope")


def test_the_cli_refuses_an_open_tokens_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[[token]]\ntoken = "0123456789"\nuid = 0\ngids = [0]\nrole = "superuser"\n')
    os.chmod(tokens, 0o644)
    code = main(["serve-allocations", "--db", str(tmp_path / "l.db"), "--auth", "token", "--tokens", str(tokens)])
    assert code == 2
    assert capsys.readouterr().err == (f"fairtop: serve-allocations: tokens file {tokens} is readable by others "
                                       f"(mode 0644); chmod 600 {tokens}\n")
