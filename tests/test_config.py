"""Config precedence, strict validation, and the state file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

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
    assert config.load(detect_source=False) == Settings()
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
    ('allocation_auth = "kerberos"', "allocation_auth must be munge or token"),
    ('allocation_timeout = 0', "allocation_timeout must be in"),
    ('[site_factor]\nrul = "power"', "did you mean 'rule'"),
    ('[site_factor]\nrule = "linear"', "site_factor.rule must be power or sigmoid"),
    ('[site_factor]\nsigmoid_credit = [5]', "must be \\[l, x0\\]"),
    ('cluster = "alpha"', "cluster must be a list"),
    ('[[cluster]]\nsource = "slurm"', "name must be a cluster name"),
    ('[[cluster]]\nname = "all"\nsource = "slurm"', "not 'all'"),
    ('[[cluster]]\nname = "a b"\nsource = "slurm"', "name must be a cluster name"),
    ('[[cluster]]\nname = "a"', 'needs a source, e.g. source = "slurm"'),
    ('[[cluster]]\nname = "a"\nsource = "slurm"\n[[cluster]]\nname = "a"\nsource = "demo"', "'a' is listed twice"),
    ('[[cluster]]\nname = "a"\nsorce = "slurm"', "unknown key 'sorce'; did you mean 'source'"),
    ('[[cluster]]\nname = "a"\nsource = "slrum"', "\\[\\[cluster\\]\\] 'a': .*did you mean 'slurm'"),
    ('[[cluster]]\nname = "a"\nsource = "folder"', "\\[\\[cluster\\]\\] 'a': .*needs folder"),
    ('[[cluster]]\nname = "a"\nsource = "slurm"\nfolder = "/x"', "folder is not used by source = 'slurm'"),
    ('[[cluster]]\nname = 3\nsource = "slurm"', "name must be a string"),
])
def test_bad_values(paths: Path, text: str, message: str) -> None:
    path = write(paths / "bad.toml", text + "\n")
    with pytest.raises(ConfigError, match=message) as info:
        config.load(str(path))
    assert "bad.toml" in str(info.value) or "config" in str(info.value)


def test_site_factor_table_merges_and_becomes_engine_parameters(paths: Path) -> None:
    write(config.SYSTEM_FILE, '[site_factor]\nrule = "sigmoid"\nscale = 500\n')
    write(config.user_file(), '[site_factor]\nsigmoid_temporal = [40, 0.5]\n')
    params = config.site_factor_params(config.load())
    assert (params.rule, params.scale, params.sigmoid_temporal) == ("sigmoid", 500, (40.0, 0.5))
    assert params.sigmoid_credit == (5.0, 0.25) and params.n_credit == 0.5  # seed 004's defaults


def test_named_file_must_exist(paths: Path) -> None:
    with pytest.raises(ConfigError, match="missing.toml"):
        config.load(str(paths / "missing.toml"))


def test_example_config_is_valid() -> None:
    text = (ROOT / "config.example.toml").read_text()
    data = tomllib.loads(text)
    assert config.validate(data, "example") == data
    commented = set(re.findall(r"^# ?(\w+) = ", text, re.M)) | set(re.findall(r"^# \[\[(\w+)\]\]$", text, re.M))
    assert set(Settings.__dataclass_fields__) - {"source_why"} <= set(data) | commented


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


# --- several clusters: [[cluster]] tables ----------------------------------------------------

TWO = ROOT / "tests" / "fixtures" / "clusters" / "two_clusters"


def test_cluster_tables_each_with_its_own_source(paths: Path) -> None:
    path = write(paths / "c.toml", f'[[cluster]]\nname = "alpha"\nsource = "slurm"\n\n'
                                   f'[[cluster]]\nname = "beta"\nsource = "folder:{TWO / "beta"}"\n\n'
                                   f'[[cluster]]\nname = "pbs-site"\nsource = "demo"\ndemo = "pbs"\n')
    s = config.load(str(path))
    assert s.cluster == (config.ClusterEntry("alpha", "slurm"),
                         config.ClusterEntry("beta", "folder", str(TWO / "beta")),
                         config.ClusterEntry("pbs-site", "demo", "pbs"))
    sources = config.make_sources(s)
    assert list(sources) == ["alpha", "beta", "pbs-site"]
    assert (sources["alpha"].name, sources["alpha"].cluster) == ("slurm", "alpha")  # asked with -M alpha
    assert (sources["beta"].name, sources["beta"].value) == ("folder", str(TWO / "beta"))
    assert list(config.make_sources(s, pick="beta")) == ["beta", "alpha", "pbs-site"]  # --cluster beta first
    with pytest.raises(ConfigError, match="no \\[\\[cluster\\]\\] named 'betta'.*did you mean 'beta'"):
        config.make_sources(s, pick="betta")
    # a source on the command line replaces the tables; --slurm --cluster a,b asks both with -M
    flag = config.load(str(path), {"source": "slurm"})
    both = config.make_sources(flag, pick="alpha,beta", source_flag=True)
    assert [(n, x.name, x.cluster) for n, x in both.items()] == [("alpha", "slurm", "alpha"), ("beta", "slurm", "beta")]


def test_a_later_file_replaces_the_cluster_list(paths: Path) -> None:
    write(config.SYSTEM_FILE, '[[cluster]]\nname = "a"\nsource = "slurm"\n[[cluster]]\nname = "b"\nsource = "slurm"\n')
    write(config.user_file(), '[[cluster]]\nname = "mine"\nsource = "demo"\n')
    assert [c.name for c in config.load().cluster] == ["mine"]


def test_example_cluster_tables_are_valid() -> None:
    text = (ROOT / "config.example.toml").read_text()
    block = text[text.index("# [[cluster]]"):text.index("# Rebind keys")]
    data = tomllib.loads("\n".join(line.removeprefix("# ").removeprefix("#") for line in block.splitlines()))
    entries = config.validate(data, "example")["cluster"]
    assert [(c.name, c.source, c.value) for c in entries] == [
        ("alpha", "slurm", None), ("beta", "folder", "/var/cache/fairtop/beta/current")]


def test_no_source_anywhere_opens_the_cluster_fairtop_runs_on(tmp_path: Path) -> None:
    """Issue 24: without a flag or a `source` in any file, live Slurm where sshare answers, PBS
    where its commands or files are, else the demo saying so; `fairtop info` says which and why."""
    from tui.sources.detect import detect

    def which(*present: str):
        return lambda cmd: f"/usr/bin/{cmd}" if cmd in present else None

    up = detect(which("sshare", "scontrol"), lambda: (True, "Slurmctld(primary) at ctl1 is UP"), ())
    assert (up.source, up.why) == ("slurm", "sshare is on PATH and scontrol ping says: "
                                            "Slurmctld(primary) at ctl1 is UP")
    down = detect(which("sshare", "scontrol"), lambda: (True, "Slurmctld(primary) at ctl1 is DOWN"), ())
    assert down.source == "slurm"  # this cluster's controller is down: said by the live source, no demo
    lone = detect(which("sshare", "scontrol"), lambda: (False, "scontrol: fatal: Could not establish a "
                                                               "configuration source"), ())
    assert lone.source == "demo" and lone.why.startswith("the built-in demo, made-up numbers: sshare is on PATH but "
                                                         "no Slurm controller is configured here (scontrol: fatal")
    pbs = detect(which("qstat"), lambda: (False, ""), (tmp_path / "absent",))
    assert (pbs.source, pbs.why) == ("pbs", "PBS Professional is here (qstat)")
    (tmp_path / "pbs.conf").write_text("PBS_HOME=/var/spool/pbs\n")
    assert detect(which(), lambda: (False, ""), (tmp_path / "pbs.conf",)).source == "pbs"
    none = detect(which(), lambda: (False, ""), (tmp_path / "absent",))
    assert none.source == "demo" and "no scheduler found here" in none.why


def test_a_named_source_is_never_second_guessed(paths: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.sources.detect as detect_module

    monkeypatch.setattr(detect_module, "detect", lambda: pytest.fail("detection ran"))
    write(config.user_file(), 'source = "demo"\n')
    assert config.load().source_why == ""
    args = build_parser().parse_args(["--slurm"])
    monkeypatch.setattr(config, "user_file", lambda: paths / "none.toml")
    assert config.load(cli=config.cli_overrides(args)).source == "slurm"
