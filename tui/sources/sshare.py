"""Parse saved ``sshare -a -l -P`` (or ``-p``) output into an :class:`~tui.model.AssocTree`.

Header-driven: only Account, User, RawShares and RawUsage are inputs; every computed column
(NormShares, EffectvUsage, FairShare, LevelFS, ...) is kept as text for comparison but never used.
The tree comes from the row order and the Account column's indentation, as sshare prints it:
an account row is indented one space per depth, a user row one space more than its account.
Anything else is an :class:`~tui.sources.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from tui.model import NO_VAL, USE_PARENT, AssocTree, ModelError
from tui.sources.errors import InputError

REQUIRED = ("Account", "User", "RawShares", "RawUsage")
MAX_SHARES = 0xFFFFFFFF
# ASCII only: str.isdigit/int/float also accept '²', '١٢' or '1_0', which numpy then refuses.
_DIGITS = re.compile(r"[0-9]{1,10}")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True, eq=False)
class SshareTable:
    """A parsed sshare file: the tree plus every cell as printed (for comparison)."""

    tree: AssocTree
    header: list[str]
    cells: list[list[str]]
    """Row-aligned with the tree: the fields of each data line as printed."""
    line_numbers: list[int]
    """1-based line number in the file of each tree row."""
    partitions: list[str]
    """The Partition cell of each row ("" when absent or not set)."""

    def column(self, name: str) -> list[str]:
        """Every row's printed value of column ``name``."""
        i = self.header.index(name)
        return [row[i] for row in self.cells]


def decode(data: bytes | str, source: str) -> str:
    """Text of ``data``, or an InputError for binary junk or invalid UTF-8."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InputError(source, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line) from None
    if "\x00" in text:
        raise InputError(source, "binary data (NUL byte)", text[: text.index("\x00")].count("\n") + 1)
    return text


def _shares(cell: str, source: str, line: int, root: bool) -> int:
    if cell == "parent":
        return USE_PARENT
    if cell == "" and root:
        return NO_VAL
    if not _DIGITS.fullmatch(cell) or int(cell) > MAX_SHARES:
        raise InputError(source, f"RawShares must be a whole number or 'parent', got {cell!r}", line)
    return int(cell)


def _usage(cell: str, source: str, line: int) -> str:
    """The RawUsage cell, checked; converted to long double later (uint64 exceeds a double)."""
    if not _NUMBER.fullmatch(cell):
        raise InputError(source, f"RawUsage must be a number, got {cell!r}", line)
    value = float(cell)
    if not np.isfinite(value) or value < 0:
        raise InputError(source, f"RawUsage must be a finite number >= 0, got {cell!r}", line)
    return cell


def _shares_column(col: list[str], source: str, numbers: list[int],
                   errors: list[tuple[int, int, str]]) -> list[int]:
    """RawShares of every row; each distinct cell is checked once (a column has few)."""
    values: dict[str, int] = {}
    for cell in set(col[1:]):
        try:
            values[cell] = _shares(cell, source, 0, False)
        except InputError as exc:
            k = col.index(cell, 1)
            errors.append((k, 2, exc.message))
            values[cell] = 0
    out = [values[c] for c in col[1:]]
    try:
        out.insert(0, _shares(col[0], source, numbers[0], True))
    except InputError as exc:
        errors.append((0, 2, exc.message))
        out.insert(0, 0)
    return out


_USAGE_COLUMN = re.compile(r"(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\n)*")


def _usage_column(col: list[str], source: str, numbers: list[int],
                  errors: list[tuple[int, int, str]]) -> None:
    """Check every RawUsage cell: one regex over the column, cell by cell only if it fails."""
    joined = "\n".join(col) + "\n"
    if max(map(len, col)) < 300 and "e" not in joined and "E" not in joined and _USAGE_COLUMN.fullmatch(joined):
        return  # plain decimals shorter than 300 characters: finite and >= 0 by their syntax
    for k, cell in enumerate(col):
        try:
            _usage(cell, source, numbers[k])
        except InputError as exc:
            errors.append((k, 3, exc.message))
            return


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic GC: parsing makes ~10 lists per row, none cyclic, and the collector's
    passes over them cost a fifth of the time on 100k rows."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _usage_array(col: list[str]) -> np.ndarray:
    """Checked RawUsage cells as long doubles. sshare prints ``%llu``: whole numbers below 2**53
    go through int64 exactly and three times faster than numpy's long double string parsing."""
    if max(map(len, col)) <= 15 and _DIGITS_COLUMN.fullmatch("\n".join(col) + "\n"):
        return np.array(list(map(int, col)), dtype=np.int64).astype(np.longdouble)
    return np.asarray(col, dtype=str).astype(np.longdouble)


_DIGITS_COLUMN = re.compile(r"(?:[0-9]+\n)*")


def parse_sshare(data: bytes | str, source: str = "sshare output") -> SshareTable:
    """Parse ``sshare -a -l -P`` text.

    Parameters
    ----------
    data : bytes or str
        The file's content.
    source : str
        Name used in error messages (usually the path).

    Raises
    ------
    InputError
        Empty input, no header, a missing column, a wrong field count, bad numbers, a row whose
        indentation or account does not fit the tree.
    """
    with _no_gc():
        return _parse(data, source)


def _parse(data: bytes | str, source: str) -> SshareTable:
    text = decode(data, source)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith("CLUSTER:")), None)
    if start is None:
        raise InputError(source, "empty: no sshare header or rows")
    header = lines[start].split("|")
    trailing = header[-1] == ""  # -p prints a '|' after the last field
    if trailing:
        header = header[:-1]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(source, f"not sshare -P output: no column {', '.join(missing)} in the header", start + 1)
    ia, iu, ish, ius = (header.index(c) for c in REQUIRED)
    ip = header.index("Partition") if "Partition" in header else None
    width = len(header) + trailing

    # Column-wise for speed (100k rows in well under 0.3 s): every check finds its first bad row;
    # the earliest (row, check) is reported, so errors are those of a line-by-line reading.
    numbers = [i + 1 for i in range(start + 1, len(lines))
               if lines[i] and not lines[i].isspace() and not lines[i].startswith("CLUSTER:")]
    rows = [lines[no - 1].split("|") for no in numbers]
    if not rows:
        raise InputError(source, "no association rows after the header")
    errors: list[tuple[int, int, str]] = []  # (row, check order, message)
    bad = next((k for k, f in enumerate(rows) if len(f) != width or (trailing and f[-1] != "")), None)
    if bad is not None:  # rows before it are still checked: an earlier line's error comes first
        f = rows[bad]
        message = ("expected a '|' after the last field (sshare -p)" if trailing and f[-1] != ""
                   else f"expected {len(header)} fields as in the header, got {len(f) - trailing}")
        if bad == 0:
            raise InputError(source, message, numbers[0])
        errors.append((bad, -1, message))
        rows = rows[:bad]
    if trailing:
        rows = [f[:-1] for f in rows]
    acct_cells = [f[ia] for f in rows]  # only the columns used: cheaper than zip(*rows)
    user_cells = [f[iu] for f in rows]
    usage = [f[ius] for f in rows]
    shares = _shares_column([f[ish] for f in rows], source, numbers, errors)
    _usage_column(usage, source, numbers, errors)

    n = len(rows)
    parent = [0] * n
    is_user = [False] * n
    account = [""] * n
    stack: list[int] = []  # row of the account at each depth on the current path
    for k in range(n):
        acct_cell = acct_cells[k]
        name = acct_cell.lstrip(" ")
        uname = user_cells[k]
        account[k] = name
        if not name:
            errors.append((k, 0, "empty Account"))
            break
        lead = len(acct_cell) - len(name)
        if k == 0:
            if lead != 0 or uname or name != "root":
                errors.append((k, 1, "the first row must be the root account ('root' with no user)"))
                break
            parent[0] = -1
            stack.append(0)
            continue
        # a user row is indented one more than its account; an account one per depth
        up = lead - 1
        if up < 0 or up >= len(stack):
            errors.append((k, 1, f"indentation of {name!r} does not fit the tree above it"))
            break
        row_parent = stack[up]
        parent[k] = row_parent
        if uname:
            is_user[k] = True
            if account[row_parent] != name:
                errors.append((k, 1, f"user {uname!r} is listed under {name!r} but follows account "
                               f"{account[row_parent]!r}"))
                break
        else:
            del stack[lead:]
            stack.append(k)
    if errors:
        k, _, message = min(errors)
        raise InputError(source, message, numbers[k])
    user = user_cells
    cells = rows
    parts = [f[ip] for f in rows] if ip is not None else [""] * n
    try:
        tree = AssocTree(
            parent=np.asarray(parent, dtype=np.int64),
            is_user=np.asarray(is_user, dtype=bool),
            account=np.asarray(account, dtype=object),
            user=np.asarray(user, dtype=object),
            shares_raw=np.asarray(shares, dtype=np.int64),
            usage_raw=_usage_array(usage),
        )
    except ModelError as exc:
        raise InputError(source, str(exc)) from None
    return SshareTable(tree, header, cells, numbers, parts)
