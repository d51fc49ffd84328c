"""The command line as a newcomer meets it: help for everything, ``capture`` without a cluster,
``info`` on a broken config."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.app.conftest import isolated_paths  # noqa: F401 - fixture, used by name
from tui import config
from tui.cli import build_parser, main


def _parsers(parser: argparse.ArgumentParser, name: str = "fairtop"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_subcommand_has_a_description_and_every_option_help() -> None:
    missing = []
    for name, parser in _parsers(build_parser()):
        if not parser.description:
            missing.append(f"{name}: no description")
        for action in parser._actions:
            if action.help is None and not isinstance(action, argparse._SubParsersAction):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}: no help")
    assert not missing, "\n".join(missing)
    assert len(list(_parsers(build_parser()))) >= 9  # fairtop and its eight subcommands at least


@pytest.mark.parametrize("sub", ["report", "whatif", "info", "capture", "history", "serve", "balance",
                                 "serve-allocations"])
def test_sub_help_exits_0_and_describes(sub: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([sub, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: fairtop {sub}") and "options:" in out


@pytest.fixture
def no_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Slurm commands that cannot reach a cluster: a slurm.conf that does not exist (the real
    sshare then fails; where Slurm is not installed, the command is not found: both unreachable)."""
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-such-slurm.conf"))
    monkeypatch.setenv("PBS_HOME", str(tmp_path / "no-pbs-home"))


def test_capture_without_a_cluster_is_one_line_exit_2_and_no_folder(no_cluster, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "site" / "capture"
    assert main(["capture", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("fairtop capture: sshare")
    assert not (tmp_path / "site").exists()  # not even the parent


def test_capture_into_an_existing_folder_without_a_cluster_leaves_it_as_it_was(
        no_cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "sshare_a_l_P.psv").write_text("an earlier capture\n")
    assert main(["capture", str(folder)]) == 2
    assert [p.name for p in folder.iterdir()] == ["sshare_a_l_P.psv"]
    assert (folder / "sshare_a_l_P.psv").read_text() == "an earlier capture\n"


def test_capture_every_without_a_cluster(no_cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "published"
    assert main(["capture", "--every", "10s", "--count", "1", str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("fairtop: capture failed: sshare")
    assert not root.exists()


def test_capture_pbs_without_a_server(no_cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "--pbs", str(tmp_path / "pbs")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    missing = tmp_path / "no-pbs-home" / "sched_priv" / "resource_group"
    assert err.startswith(f"fairtop capture: {missing}: no such file")
    assert not (tmp_path / "pbs").exists()


def test_capture_under_a_file_fails_before_any_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("x")
    assert main(["capture", str(tmp_path / "a-file" / "capture")]) == 2
    err = capsys.readouterr().err
    assert err == f"fairtop: {tmp_path / 'a-file' / 'capture'}: cannot create the folder: {tmp_path / 'a-file'} " \
                  "is not a folder\n"


def test_info_marks_an_invalid_config_and_exits_2(isolated_paths: Path,  # noqa: F811 - the fixture
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    user = config.user_file()
    user.parent.mkdir(parents=True)
    user.write_text('thme = "dark"\n')
    assert main(["info"]) == 2
    out, err = capsys.readouterr()
    assert f"  user       {user}  (INVALID: unknown key 'thme'; did you mean 'theme'?)" in out.splitlines()
    assert "(found)" not in out and "(valid)" not in out
    assert err == f"fairtop: the configuration is invalid: {user}: unknown key 'thme'; did you mean 'theme'?\n"
    user.write_text('theme = "dark"\n')
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"  user       {user}  (valid)" in out.splitlines() and "commands a minute to slurmctld" in out


def test_info_names_the_users_theme_folder_and_the_example(isolated_paths: Path,  # noqa: F811 - the fixture
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    mine = isolated_paths / "config" / "fairtop" / "themes"
    assert f"  {mine}  (yours, not created yet: add NAME.toml files there, as themes/dark.toml)" in out
    example = config.example_config()
    assert example is not None and example.name == "config.example.toml" and f"example:      {example}" in out
    mine.mkdir(parents=True)
    assert main(["info"]) == 0
    assert f"  {mine}  (yours)" in capsys.readouterr().out.splitlines()


def test_the_wheel_ships_the_example_config_the_licence_and_a_description_without_relative_images() -> None:
    """What pyproject.toml puts in the wheel (built and listed by hand: ``pip wheel --no-deps .``
    gives tui/config.example.toml, tui/themes/*.toml and dist-info/licenses/LICENSE)."""
    import re
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    include = project["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert include["config.example.toml"] == "tui/config.example.toml" and (root / "config.example.toml").is_file()
    assert include["themes"] == "tui/themes" and (root / "themes" / "dark.toml").is_file()
    assert project["project"]["license-files"] == ["LICENSE"]
    assert (root / "LICENSE").read_text().startswith("MIT License\n")
    description = (root / project["project"]["readme"]).read_text()
    links = re.findall(r"!?\[[^\]]*\]\(([^)]+)\)", description)
    assert not [u for u in links if not u.startswith(("https://", "http://"))], links


def test_demo_right_before_a_command_is_the_slurm_demo(capsys: pytest.CaptureFixture[str]) -> None:
    """``--demo``'s optional KIND used to take the command's name and refuse it: "invalid choice: 'jobs'"."""
    assert main(["--demo", "jobs"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("alice: 1 pending job: reason unknown\n")
    assert main(["--demo", "pbs", "report", "--format", "json"]) == 0  # a KIND is still a KIND
    assert '"fairshare_factor"' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--demo", "lsf", "jobs"])
    assert "invalid choice: 'lsf'" in capsys.readouterr().err
