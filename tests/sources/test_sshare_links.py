"""The sshare parser's array reading of the tree (indentation -> parents) against its
line-by-line walk: same tree whenever the walk finds none wrong, and no tree when it does."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.sources import sshare
from tui.sources.errors import InputError
from tui.sources.partial_sshare import is_partial
from tui.sources.sshare import _links_checked, _links_fast, parse_sshare


def _sshare_cells(rnd: random.Random, accounts: int, users: int) -> tuple[list[str], list[str]]:
    """Account and User cells of a random tree in sshare's layout (preorder, one space per depth,
    users one space deeper than their account, printed before sub-accounts)."""
    parent = [-1] + [rnd.randrange(k) for k in range(1, accounts)]
    members: dict[int, list[str]] = {a: [] for a in range(accounts)}
    for u in range(users):
        members[rnd.randrange(accounts)].append(f"u{u}")
    kids: dict[int, list[int]] = {a: [] for a in range(accounts)}
    for a in range(1, accounts):
        kids[parent[a]].append(a)
    acct, user = [], []

    def walk(a: int, depth: int) -> None:
        name = "root" if a == 0 else f"a{a}"
        acct.append(" " * depth + name)
        user.append("")
        for u in members[a]:
            acct.append(" " * (depth + 1) + name)
            user.append(u)
        for k in kids[a]:
            walk(k, depth + 1)

    walk(0, 0)
    return acct, user


def _same_as_walk(acct: list[str], user: list[str]) -> None:
    errors: list[tuple[int, int, str]] = []
    slow = _links_checked(acct, user, errors)
    fast = _links_fast(acct, user)
    if errors:
        assert fast is None, errors
        return
    assert fast is not None
    for got, want in zip(fast, slow):
        assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), accounts=st.integers(1, 40), users=st.integers(0, 80),
       edits=st.integers(0, 3))
def test_arrays_agree_with_the_walk(seed: int, accounts: int, users: int, edits: int) -> None:
    rnd = random.Random(seed)
    acct, user = _sshare_cells(rnd, accounts, users)
    for _ in range(edits):  # indentation off by one, a user moved, a line swapped, a name emptied
        k = rnd.randrange(len(acct))
        op = rnd.randrange(5)
        if op == 0:
            acct[k] = " " + acct[k]
        elif op == 1:
            acct[k] = acct[k][1:]
        elif op == 2:
            user[k] = user[k] or "x"
        elif op == 3:
            j = rnd.randrange(len(acct))
            acct[k], acct[j], user[k], user[j] = acct[j], acct[k], user[j], user[k]
        else:
            acct[k] = " " * (len(acct[k]) - len(acct[k].lstrip(" ")))
    _same_as_walk(acct, user)


def test_a_deep_chain_and_a_return_to_the_top() -> None:
    """Depth 6 then back to depth 1: the entries deeper than 1 are gone for the next user."""
    acct = ["root", " a", "  b", "   c", "    d", "     e", "      f", "       f", " g", "  g"]
    user = ["", "", "", "", "", "", "", "u1", "", "u2"]
    _same_as_walk(acct, user)
    parent = _links_fast(acct, user)
    assert parent is not None and parent[0].tolist() == [-1, 0, 1, 2, 3, 4, 5, 6, 0, 8]
    # a user of f after g: f is no longer on the path (the walk says so, the arrays give none)
    _same_as_walk([*acct, "       f"], [*user, "u3"])
    assert _links_fast([*acct, "       f"], [*user, "u3"]) is None


@pytest.mark.parametrize(("text", "message", "line"), [
    ("Account|User|RawShares|RawUsage\nroot|||0\n a||1|0\n   a|u|1|0\n", "indentation of 'a'", 4),
    ("Account|User|RawShares|RawUsage\nroot|||0\n a||1|0\n  b|u|1|0\n", "listed under 'b' but follows account 'a'", 4),
    ("Account|User|RawShares|RawUsage\nroot|||0\n a||1|0\n a|u|1\n", "expected 4 fields as in the header, got 3", 4),
    ("Account|User|RawShares|RawUsage\nroot|||0\n a||x|0\n  |u|1|0\n", "RawShares must be", 3),
    ("Account|User|RawShares|RawUsage|\nroot|||0|\n a||1|0\n", "expected a '|' after the last field", 3),
])
def test_errors_name_the_first_bad_line(text: str, message: str, line: int) -> None:
    with pytest.raises(InputError, match=message) as err:
        parse_sshare(text, "f")
    assert err.value.line == line


def test_blank_and_cluster_lines_keep_their_numbers() -> None:
    """The slow path (a blank line, a CLUSTER: line) numbers rows by their line in the file."""
    table = parse_sshare("CLUSTER: c\nAccount|User|RawShares|RawUsage\nroot|||0\n\n a||1|7\n  a|u|1|7\n", "f")
    assert table.line_numbers == [3, 5, 6]
    assert table.tree.parent.tolist() == [-1, 0, 1]
    assert table.column("RawUsage") == ["0", "7", "7"]
    fast = parse_sshare("Account|User|RawShares|RawUsage\nroot|||0\n a||1|7\n  a|u|1|7\n", "f")
    assert fast.line_numbers == [2, 3, 4] and fast.column("User") == ["", "", "u"]


def _fixtures() -> list[Path]:
    root = Path(__file__).resolve().parents[1] / "fixtures"
    return sorted(p for p in root.rglob("sshare*") if p.suffix in (".psv", ".txt") and p.name != "sshare_a_l.txt"
                  and not p.read_bytes().startswith(b"CLUSTER:")  # sshare -M output is split first
                  and not is_partial(p.read_bytes()))  # a PrivateData user's: completed first (test_private_data)


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: str(p.parent.name) + "/" + p.name)
def test_byte_columns_read_every_capture_as_the_line_reader_does(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every real sshare capture is read by the byte-column reader, to the same table."""
    data = path.read_bytes()
    fast = parse_sshare(data, str(path))
    assert sshare._parse_plain(sshare.decode(data, "x"), data.decode().split("\n", 1)[0],
                               data.index(b"\n") + 1, "x") is not None
    monkeypatch.setattr(sshare, "_parse_plain", lambda *a: None)
    slow = parse_sshare(data, str(path))
    for name in ("parent", "is_user", "account", "user", "shares_raw", "usage_raw"):
        got, want = getattr(fast.tree, name), getattr(slow.tree, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert (fast.header, fast.line_numbers, fast.partitions, fast.lines) == (
        slow.header, slow.line_numbers, slow.partitions, slow.lines)


@pytest.mark.parametrize("text", [
    "Account|User|RawShares|RawUsage\nroot|||5\n a||parent|7\n  a|u|4294967295|123456789012345\n",
    "Account|User|RawShares|RawUsage|\nroot|||5|\n a||2|0|\n",
    "Account|User|RawShares|RawUsage|Partition\nroot|||5|\n a||2|0|\n  a|u|1|3|gpu\n",
])
def test_byte_columns_edge_cells(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """parent shares, the largest shares and usage, -p's trailing bar, a Partition column."""
    fast = parse_sshare(text)
    monkeypatch.setattr(sshare, "_parse_plain", lambda *a: None)
    slow = parse_sshare(text)
    assert fast.tree.shares_raw.tolist() == slow.tree.shares_raw.tolist()
    assert fast.tree.usage_raw.tolist() == slow.tree.usage_raw.tolist()
    assert fast.tree.parent.tolist() == slow.tree.parent.tolist() and fast.partitions == slow.partitions


@pytest.mark.parametrize("text", [
    "Account|User|RawShares|RawUsage\nroot|||5\n a||1|7",  # no final newline
    "Account|User|RawShares|RawUsage\r\nroot|||5\r\n a||1|7\r\n",  # CRLF
    "Account|User|RawShares|RawUsage\nroot|||5\n é||1|7\n",  # not ASCII
    "Account|User|RawShares|RawUsage\nroot|||5\n a||1|7.5\n",  # usage with decimals (assoc_mgr)
    "Account|User|RawShares|RawUsage\nroot|||5\n a||1|1e3\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n a||01x|7\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n a|||7\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n a||4294967296|7\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n\n a||1|7\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n a||1|7|\n",
    "Account|User|RawShares|RawUsage\nroot|||5\n\ta||1|7\n",
])
def test_byte_columns_leave_the_odd_to_the_line_reader(text: str) -> None:
    """Text the byte reader does not take gives None, so the line reader reads it (or says why not)."""
    head, _, _ = text.partition("\n")
    assert sshare._parse_plain(text, head.rstrip("\r"), text.index("\n") + 1, "x") is None
