"""Every ``--help`` text stays as it was (tests/cli_help.py; refresh with ``python -m tests.cli_help``)."""

from __future__ import annotations

import pytest

from tests.cli_help import (
    FOLDER,
    VERSION_FILE,
    command_paths,
    fixture_file,
    help_text,
    parser_help,
    python_version,
)

PATHS = list(command_paths())


def test_every_command_has_a_fixture_and_every_fixture_a_command() -> None:
    assert len(PATHS) > 10 and ("allocations", "hook") in PATHS  # the walk reaches nested commands
    expected = {fixture_file(path) for path in PATHS}
    present = set(FOLDER.glob("fairtop*.txt"))
    assert sorted(p.name for p in expected - present) == [], "new commands: run python -m tests.cli_help"
    assert sorted(p.name for p in present - expected) == [], "fixtures of commands that are gone"


def same_python() -> None:
    written_by = VERSION_FILE.read_text(encoding="utf-8").strip()
    if written_by != python_version():
        pytest.skip(f"the fixtures hold Python {written_by}'s argparse layout, this is {python_version()}")


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(("fairtop", *path)))
def test_help_text_is_unchanged(path: tuple[str, ...]) -> None:
    same_python()
    assert help_text(path) == fixture_file(path).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(("fairtop", *path)))
def test_the_whole_parser_prints_the_same_help(path: tuple[str, ...]) -> None:
    # `fairtop standing --help` comes from the command's own fast parser, `fairtop --slurm standing
    # --help` from the whole one: both as the fixture.
    same_python()
    assert parser_help(path) == fixture_file(path).read_text(encoding="utf-8")
