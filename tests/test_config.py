"""Config precedence, strict validation, and the state file."""

from __future__ import annotations

from pathlib import Path

import pytest
import re
import tomllib

from tests.app.conftest import isolated_paths  # noqa: F401 - autouse fixture
from tui import config
from tui.cli import build_parser
from tui.config import ConfigError, Settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def paths(isolated_paths: Path) -> Path:  # noqa: F811 - the imported fixture, by name
    """A temporary home: XDG config and state dirs, no /etc file, no $FAIRTOP_CONFIG."""
    return isolated_paths


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults() -> None:
    assert config.load() == Settings()
    assert Settings().read_only is True and Settings().source == "demo"


def test_precedence(paths: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(config.SYSTEM_FILE, 'theme = "light"\nrefresh_rate = 10\nuser = "site"\n[keymap]\nme = "x"\n')
    write(config.user_file(), 'theme = "ansi16"\n[keymap]\nquit = "ctrl+q"\n')
    env = write(paths / "env.toml", 'refresh_rate = 3\n')
    monkeypatch.setenv(config.ENV_VAR, str(env))
    arg = write(paths / "arg.toml", 'user = "fromfile"\n')
    s = config.load(str(arg), {"theme": "dark", "user": None})
    assert s.theme == "dark"  # CLI beats every file
    assert s.refresh_rate == 3  # env beats system
    assert s.user == "fromfile"  # --config beats system
    assert s.keymap == {"me": "x", "quit": "ctrl+q"}  # keymaps merge key by key
    assert config.load(None, {}).theme == "ansi16"  # user beats system


def test_cli_overrides() -> None:
    args = build_parser().parse_args(["--user", "bob", "--from", "/data/x"])
    assert config.load(None, config.cli_overrides(args)) == Settings(user="bob", source="folder", folder="/data/x")
    pbs = build_parser().parse_args(["--demo", "pbs"])
    assert config.load(None, config.cli_overrides(pbs)) == Settings(source="demo", demo="pbs")
    plain = build_parser().parse_args(["--demo"])
    assert config.load(None, config.cli_overrides(plain)) == Settings(source="demo", demo="slurm")


@pytest.mark.parametrize("text, message", [
    ('theem = "dark"', "did you mean 'theme'"),
    ('refresh_rate = 1', "refresh_rate must be >= 2"),
    ('refresh_rate = "fast"', "refresh_rate must be a int or float"),
    ('read_only = "yes"', "read_only must be a bool"),
    ('source = "slrum"', "did you mean 'slurm'"),
    ('source = "folder"', 'needs folder'),
    ('[keymap]\nme = ""', "keymap.me"),
    ('theme = ', "not valid TOML"),
])
def test_bad_values(paths: Path, text: str, message: str) -> None:
    path = write(paths / "bad.toml", text + "\n")
    with pytest.raises(ConfigError, match=message) as info:
        config.load(str(path))
    assert "bad.toml" in str(info.value) or "config" in str(info.value)


def test_named_file_must_exist(paths: Path) -> None:
    with pytest.raises(ConfigError, match="missing.toml"):
        config.load(str(paths / "missing.toml"))


def test_example_config_is_valid() -> None:
    text = (ROOT / "config.example.toml").read_text()
    data = tomllib.loads(text)
    assert config.validate(data, "example") == data
    commented = set(re.findall(r"^# ?(\w+) = ", text, re.M))
    assert set(Settings.__dataclass_fields__) <= set(data) | commented


def test_state_written_with_tomli_w_and_config_untouched(paths: Path) -> None:
    user = write(config.user_file(), '# my comments\ntheme = "light"  # keep me\n')
    before = user.read_bytes()
    state = config.State(last_theme="ansi16", last_source="demo", scenarios=[{"name": "a", "cpus": 8}])
    path = config.save_state(state)
    assert path == config.state_file() and path.parent.name == "fairtop"
    assert str(path).startswith(str(paths / "state"))
    assert tomllib.loads(path.read_text()) == {"last_theme": "ansi16", "last_source": "demo",
                                               "scenarios": [{"name": "a", "cpus": 8}]}
    assert config.load_state() == state
    assert user.read_bytes() == before


def test_damaged_state_is_ignored(paths: Path) -> None:
    write(config.state_file(), "last_theme = [")
    assert config.load_state() == config.State()


def test_describe_paths(paths: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(config.user_file(), "")
    monkeypatch.setenv(config.ENV_VAR, str(paths / "env.toml"))
    text = config.describe_paths("/tmp/x.toml")
    assert str(config.user_file()) + "  (valid)" in text  # an empty file: all defaults
    assert "$FAIRTOP_CONFIG" in text and "--config" in text and "state file" in text
    assert "themes" in text


def test_source_shorthand_for_a_site_snapshot(paths: Path) -> None:
    write(config.SYSTEM_FILE, 'source = "folder:/var/cache/fairtop/current"\n')
    s = config.load()
    assert (s.source, s.folder) == ("folder", "/var/cache/fairtop/current")
    assert config.make_source(s).describe() == "folder:/var/cache/fairtop/current"
