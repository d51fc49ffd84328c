"""sshare's printed columns read as slices of the column-wise reader equal the split lines,
on every real sshare output the fixtures hold (several Slurm releases, GrpTRESMins set or not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.model import Budget
from tui.sources.partial_sshare import is_partial
from tui.sources.saved import _budgets
from tui.sources.sshare import parse_sshare

OUTPUTS = [p for p in sorted(FIXTURES.rglob("sshare_a_l_P.psv")) if not is_partial(p.read_text())]
"""Whole outputs: a PrivateData one has its rows put back before parsing (test_private_data.py)."""


@pytest.mark.parametrize("path", OUTPUTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_column_is_the_split_lines(path: Path) -> None:
    text = path.read_text()
    table = parse_sshare(text, str(path))
    lines = [line for line in text.splitlines()[1:] if line and not line.startswith("CLUSTER:")]
    for i, name in enumerate(table.header):
        assert table.column(name) == [line.split("|")[i] for line in lines], name


def test_the_fixtures_read_column_wise_and_some_print_limits() -> None:
    tables = [parse_sshare(p.read_text(), str(p)) for p in OUTPUTS]
    assert len(tables) >= 10
    assert sum(t.column_at is not None for t in tables) >= len(tables) - 2  # the column-wise reader took them
    assert all(not any(t.column("GrpTRESMins")) for t in tables if "GrpTRESMins" in t.header)  # none set


def test_a_limit_reads_its_running_minutes() -> None:
    text = ("Account|User|RawShares|NormShares|RawUsage|GrpTRESMins|TRESRunMins\n"
            "root|||0.000000|60||cpu=0,billing=0\n"
            " a||1|1.000000|60||cpu=0,billing=7\n"
            "  a|u|1|1.000000|60|billing=500|cpu=2,billing=9\n")
    table = parse_sshare(text)
    assert table.column_at is not None
    assert table.column("GrpTRESMins") == ["", "", "billing=500"]
    assert table.column("TRESRunMins") == ["cpu=0,billing=0", "cpu=0,billing=7", "cpu=2,billing=9"]
    assert _budgets(table, []) == (Budget("a", "u", "billing", 500, None, 9),)


def test_is_partial_reads_the_first_rows_only() -> None:
    head = "Account|User|RawShares|RawUsage\n"
    assert not is_partial(head + "root|||0\n" + " a||1|0\n" * 1000)
    assert is_partial(head + " a|u|1|0\n" + "root|||0\n")
    assert not is_partial("CLUSTER: c\n\n" + head + "\nroot|||0\n a||1|0\n")
    assert is_partial("CLUSTER: c\n" + head + "  \n a|u|1|0")
