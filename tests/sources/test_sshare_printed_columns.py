"""sshare's printed columns read as slices of the column-wise reader equal the split lines,
on every real sshare output the fixtures hold (several Slurm releases, GrpTRESMins set or not)."""

from __future__ import annotations

from pathlib import Path

import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tui.model import Budget, PrintedColumn
from tui.sources.errors import InputError
from tui.sources.partial_sshare import is_partial
from tui.sources.saved import PRINTED, _budgets, printed_columns
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
    read = {p: parse_sshare(p.read_text(), str(p)) for p in OUTPUTS}
    tables = list(read.values())
    assert len(tables) >= 10
    assert sum(t.columns is not None for t in tables) >= len(tables) - 2  # the column-wise reader took them
    # none set but in the pending-jobs capture, where account wqspent's budget is spent on purpose
    limited = {p.relative_to(FIXTURES).parts[:2]: [c for c in t.column("GrpTRESMins") if c]
               for p, t in read.items() if "GrpTRESMins" in t.header and any(t.column("GrpTRESMins"))}
    assert limited == {("pending_jobs", "capture"): ["billing=1000"]}


def test_a_limit_reads_its_running_minutes() -> None:
    text = ("Account|User|RawShares|NormShares|RawUsage|GrpTRESMins|TRESRunMins\n"
            "root|||0.000000|60||cpu=0,billing=0\n"
            " a||1|1.000000|60||cpu=0,billing=7\n"
            "  a|u|1|1.000000|60|billing=500|cpu=2,billing=9\n")
    table = parse_sshare(text)
    assert table.columns is not None
    assert table.column("GrpTRESMins") == ["", "", "billing=500"]
    assert table.column("TRESRunMins") == ["cpu=0,billing=0", "cpu=0,billing=7", "cpu=2,billing=9"]
    assert _budgets(table, []) == (Budget("a", "u", "billing", 500, None, 9),)


def test_is_partial_reads_the_first_rows_only() -> None:
    head = "Account|User|RawShares|RawUsage\n"
    assert not is_partial(head + "root|||0\n" + " a||1|0\n" * 1000)
    assert is_partial(head + " a|u|1|0\n" + "root|||0\n")
    assert not is_partial("CLUSTER: c\n\n" + head + "\nroot|||0\n a||1|0\n")
    assert is_partial("CLUSTER: c\n" + head + "  \n a|u|1|0")


@pytest.mark.parametrize("path", OUTPUTS[:4], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_snapshots_printed_columns_read_as_the_split_lines(path: Path) -> None:
    text = path.read_text()
    table = parse_sshare(text, str(path))
    lines = [line.split("|") for line in text.splitlines()[1:] if line and not line.startswith("CLUSTER:")]
    printed = printed_columns(table)
    assert set(printed) == {c for c in PRINTED if c in table.header}
    for name, column in printed.items():
        want = [fields[table.header.index(name)] for fields in lines]
        assert isinstance(column, PrintedColumn)
        assert column == want and column == tuple(want) and list(column) == want and column.tolist() == want
        assert [column[i] for i in range(len(want))] == want and column[1:3] == tuple(want[1:3])
        assert column.blank().tolist() == [c == "" for c in want]
        assert column.take(np.array([2, -1, 0])) == [want[2], "", want[0]]


def test_a_line_with_a_bar_of_the_next_is_not_read_column_wise() -> None:
    # As many bars in all as the lines need, but one line has one too many and the next one too few.
    text = "Account|User|RawShares|RawUsage\nroot|||0\n a||1|0|\n  a|u|1\n"
    with pytest.raises(InputError, match="expected 4 fields as in the header, got 5"):
        parse_sshare(text)


def test_the_first_stage_does_not_import_numpy_ma() -> None:
    # np.unique's first call imports numpy.ma (numpy 2.4): 35 ms of the live first frame at 20k.
    code = ("import sys; from tui.sources.saved import load_folder; from tui.analysis.standing import "
            "build_standing; from tui.app.tree_rows import TreeTable; "
            f"TreeTable.from_standing(build_standing(load_folder({str(FIXTURES / 'slurm/deep4/fair_tree')!r}), "
            "check_printed=False)); print('numpy.ma' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.stdout.split() == ["False"]
