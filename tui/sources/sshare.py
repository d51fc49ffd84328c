"""Parse saved ``sshare -a -l -P`` (or ``-p``) output into an :class:`~tui.model.AssocTree`.

Header-driven: only Account, User, RawShares and RawUsage are inputs; every computed column
(NormShares, EffectvUsage, FairShare, LevelFS, ...) is kept as text for comparison but never used.
The tree comes from the row order and the Account column's indentation, as sshare prints it:
an account row is indented one space per depth, a user row one space more than its account.
Anything else is an :class:`~tui.sources.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tui.model import NO_VAL, USE_PARENT, AssocTree, ModelError
from tui.sources.errors import InputError

REQUIRED = ("Account", "User", "RawShares", "RawUsage")
MAX_SHARES = 0xFFFFFFFF
# ASCII only: str.isdigit/int/float also accept '²', '١٢' or '1_0', which numpy then refuses.
_DIGITS = re.compile(r"[0-9]{1,10}")
_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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
    width = len(header)

    parent: list[int] = []
    is_user: list[bool] = []
    account: list[str] = []
    user: list[str] = []
    shares: list[int] = []
    usage: list[str] = []
    cells: list[list[str]] = []
    numbers: list[int] = []
    parts: list[str] = []
    stack: list[int] = []  # row of the account at each depth on the current path
    for i in range(start + 1, len(lines)):
        raw_line = lines[i]
        if not raw_line.strip() or raw_line.startswith("CLUSTER:"):
            continue
        no = i + 1
        fields = raw_line.split("|")
        if trailing:
            if fields[-1] != "":
                raise InputError(source, "expected a '|' after the last field (sshare -p)", no)
            fields = fields[:-1]
        if len(fields) != width:
            raise InputError(source, f"expected {width} fields as in the header, got {len(fields)}", no)
        acct_cell = fields[ia]
        name = acct_cell.lstrip(" ")
        lead = len(acct_cell) - len(name)
        uname = fields[iu]
        if not name:
            raise InputError(source, "empty Account", no)
        if not parent:
            if lead != 0 or uname or name != "root":
                raise InputError(source, "the first row must be the root account ('root' with no user)", no)
            row_parent = -1
        else:
            # a user row is indented one more than its account; an account one per depth
            up = lead - 1
            if up < 0 or up >= len(stack):
                raise InputError(source, f"indentation of {name!r} does not fit the tree above it", no)
            row_parent = stack[up]
            if uname and account[row_parent] != name:
                raise InputError(source, f"user {uname!r} is listed under {name!r} but follows account "
                                 f"{account[row_parent]!r}", no)
        is_root = not parent
        shares.append(_shares(fields[ish], source, no, is_root))
        usage.append(_usage(fields[ius], source, no))
        if not uname:
            del stack[lead:]
            stack.append(len(parent))
        parent.append(row_parent)
        is_user.append(bool(uname))
        account.append(name)
        user.append(uname)
        cells.append(fields)
        numbers.append(no)
        parts.append(fields[ip] if ip is not None else "")
    if not parent:
        raise InputError(source, "no association rows after the header")
    try:
        tree = AssocTree(
            parent=np.asarray(parent, dtype=np.int64),
            is_user=np.asarray(is_user, dtype=bool),
            account=np.asarray(account, dtype=object),
            user=np.asarray(user, dtype=object),
            shares_raw=np.asarray(shares, dtype=np.int64),
            usage_raw=np.asarray(usage, dtype=str).astype(np.longdouble),
        )
    except ModelError as exc:
        raise InputError(source, str(exc)) from None
    return SshareTable(tree, header, cells, numbers, parts)
