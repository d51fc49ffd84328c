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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import itemgetter

import numpy as np

from tui.model import MAX_SHARES, NO_VAL, USE_PARENT, AssocTree, ModelError, PrintedColumn
from tui.sources.errors import InputError
from tui.sources.sshare_columns import USAGE_DIGITS, PlainColumns, plain_columns, tree_links

REQUIRED = ("Account", "User", "RawShares", "RawUsage")
# ASCII only: str.isdigit/int/float also accept '²', '١٢' or '1_0', which numpy then refuses.
_DIGITS = re.compile(r"[0-9]{1,10}")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True, eq=False)
class SshareTable:
    """A parsed sshare file: the tree plus every cell as printed (for comparison)."""

    tree: AssocTree
    header: list[str]
    line_numbers: list[int]
    """1-based line number in the file of each tree row."""
    partitions: list[str]
    """The Partition cell of each row ("" when absent or not set)."""
    data_lines: Callable[[], list[str]] = field(repr=False)
    """Makes :attr:`lines` when first asked (a report never asks)."""
    added: tuple[int, ...] = ()
    """Rows fairtop put back (the root and accounts a PrivateData sshare did not list,
    :mod:`tui.sources.partial_sshare`): no printed values, usage unknown."""
    columns: PlainColumns | None = field(default=None, repr=False)
    """The column-wise reader's fields of every row, read without splitting the lines, if it read them."""

    @cached_property
    def lines(self) -> list[str]:
        """Row-aligned with the tree: each data line as printed."""
        return self.data_lines()

    @cached_property
    def cells(self) -> list[list[str]]:
        """The fields of each data line. Split on first use: a report needs only the four
        input columns, and splitting every field of 200k lines costs a quarter second."""
        return [line.split("|") for line in self.lines]

    def column(self, name: str) -> list[str]:
        """Every row's printed value of column ``name``."""
        i = self.header.index(name)
        if (reader := self._reader()) is not None:
            return reader.column(i)  # 20k rows: ~3 ms a column instead of ~20 ms, and no split of every line
        return [row[i] for row in self.cells]

    def printed(self, name: str) -> PrintedColumn:
        """Column ``name`` as printed: where the column-wise reader read the text, slices of it
        made into strings only when read (at 20k rows ~5 ms a column less)."""
        if (reader := self._reader()) is not None:
            return reader.printed(self.header.index(name))
        return PrintedColumn(self.column(name))

    def _reader(self) -> PlainColumns | None:
        """The column-wise reader's fields, unless the lines were split anyway."""
        return None if "cells" in self.__dict__ else self.columns


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
    out = list(map(values.__getitem__, col[1:]))
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
    head_end = text.find("\n")
    head = text[:head_end] if head_end > 0 else ""
    if head.strip() and not head.startswith("CLUSTER:") and "\r" not in head:  # the header on line 1
        table = _parse_plain(text, head, head_end + 1, source)
        if table is not None:
            return table
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith("CLUSTER:")), None)
    if start is None:
        raise InputError(source, "empty: no sshare header or rows")
    header, trailing = _header(lines[start])
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(source, f"not sshare -P output: no column {', '.join(missing)} in the header", start + 1)
    ia, iu, ish, ius, ip = _input_columns(header)
    width = len(header) + trailing

    # Column-wise for speed (200k rows in ~0.6 s): every check finds its first bad row; the
    # earliest (row, check) is reported, so errors are those of a line-by-line reading.
    body = lines[start + 1:]
    used = max(ia, iu, ish, ius, -1 if ip is None else ip) + 1
    if body and set(map(str.count, body, repeat("|"))) == {width - 1} and (
            not trailing or all(map(str.endswith, body, repeat("|")))):
        # Every line has the header's fields (so none is blank or a CLUSTER: line): split off
        # only the fields used; the others stay in the line until someone asks for them.
        numbers = list(range(start + 2, start + 2 + len(body)))
        rows = [line.split("|", used) for line in body]
    else:
        numbers, rows = _checked_rows(lines, start, width, trailing, header, source)
    errors: list[tuple[int, int, str]] = []  # (row, check order, message)
    if len(rows) < len(numbers):  # rows after a line with the wrong field count were dropped
        errors.append((len(rows), -1, _field_count_message(lines[numbers[len(rows)] - 1], width, trailing, header)))
    acct_cells = list(map(itemgetter(ia), rows))
    user_cells = list(map(itemgetter(iu), rows))
    usage = list(map(itemgetter(ius), rows))
    shares = _shares_column(list(map(itemgetter(ish), rows)), source, numbers, errors)
    digits = _digits_only(usage)
    if not digits:
        _usage_column(usage, source, numbers, errors)

    links = None if errors else _links_fast(acct_cells, user_cells)
    if links is None:
        links = _links_checked(acct_cells, user_cells, errors)
    if errors:
        k, _, message = min(errors)
        raise InputError(source, message, numbers[k])
    parent, is_user, account = links
    parts = [f[ip] for f in rows] if ip is not None else [""] * len(rows)
    usage_raw = np.array(list(map(int, usage)), dtype=np.int64) if digits else np.asarray(usage, dtype=str)
    tree = _tree(source, parent, is_user, account, user_cells, np.asarray(shares, dtype=np.int64), usage_raw)
    return SshareTable(tree, header, numbers, parts, lambda: [lines[no - 1] for no in numbers])


def _header(line: str) -> tuple[list[str], bool]:
    """The header's column names, and whether lines end with a '|' (``-p`` prints one after the
    last field)."""
    header = line.split("|")
    trailing = header[-1] == ""
    return (header[:-1] if trailing else header), trailing


def _tree(source: str, parent: np.ndarray, is_user: np.ndarray, account: np.ndarray, users: list[str],
          shares: np.ndarray, usage: np.ndarray) -> AssocTree:
    """The tree of the parsed columns (usage as long doubles: uint64 exceeds a double)."""
    try:
        return AssocTree(parent=parent, is_user=is_user, account=account, user=np.asarray(users, dtype=object),
                         shares_raw=shares, usage_raw=usage.astype(np.longdouble))
    except ModelError as exc:
        raise InputError(source, str(exc)) from None


def _input_columns(header: list[str]) -> tuple[int, int, int, int, int | None]:
    """Where Account, User, RawShares, RawUsage and Partition (None: absent) are."""
    ia, iu, ish, ius = (header.index(c) for c in REQUIRED)
    return ia, iu, ish, ius, header.index("Partition") if "Partition" in header else None


def _parse_plain(text: str, head: str, body: int, source: str) -> SshareTable | None:
    """The table of well-formed plain sshare text read column-wise over its bytes
    (:mod:`tui.sources.sshare_columns`: 200k rows in ~0.2 s); None for anything else."""
    header, trailing = _header(head)
    if any(c not in header for c in REQUIRED):
        return None
    columns = _input_columns(header)
    got = plain_columns(text, body, len(header) + trailing, trailing, columns)
    if got is None:
        return None
    is_user = got.last[:, columns[1]] > got.first[:, columns[1]]  # the User cell is not empty
    links = tree_links(got.lead, got.names, is_user)
    if links is None:
        return None
    tree = _tree(source, links[0], is_user, links[1], got.users, got.shares, got.usage)
    return SshareTable(tree, header, list(range(2, 2 + got.lines)),
                       got.partitions if got.partitions is not None else [""] * got.lines,
                       lambda: text.splitlines()[1:], columns=got)


def _field_count_message(line: str, width: int, trailing: bool, header: list[str]) -> str:
    f = line.split("|")
    if trailing and f[-1] != "":
        return "expected a '|' after the last field (sshare -p)"
    return f"expected {len(header)} fields as in the header, got {len(f) - trailing}"


def _checked_rows(lines: list[str], start: int, width: int, trailing: bool, header: list[str],
                  source: str) -> tuple[list[int], list[list[str]]]:
    """Line numbers of the data lines (blank and ``CLUSTER:`` lines skipped) and the fields of
    those before the first with the wrong field count (the caller reports it)."""
    numbers = [i + 1 for i in range(start + 1, len(lines))
               if lines[i] and not lines[i].isspace() and not lines[i].startswith("CLUSTER:")]
    if not numbers:
        raise InputError(source, "no association rows after the header")
    rows = [lines[no - 1].split("|") for no in numbers]
    bad = next((k for k, f in enumerate(rows) if len(f) != width or (trailing and f[-1] != "")), None)
    if bad == 0:
        raise InputError(source, _field_count_message(lines[numbers[0] - 1], width, trailing, header), numbers[0])
    return numbers, rows if bad is None else rows[:bad]


def _digits_only(col: list[str]) -> bool:
    """Every cell a whole number below 2**53 (sshare's ``%llu``): int64 holds it exactly, and
    int64 -> long double is three times faster than numpy's long double string parsing."""
    joined = "".join(col)  # ASCII isdigit() is 0-9 only ('²' and '١' are not ASCII)
    return joined.isascii() and joined.isdigit() and all(col) and max(map(len, col)) <= USAGE_DIGITS


def _links_fast(acct_cells: list[str], user_cells: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(parent, is_user, account) of a well-formed tree by :func:`tree_links`; None if anything
    is off (:func:`_links_checked` then finds the first bad row and says why)."""
    n = len(acct_cells)
    names = [c.lstrip(" ") for c in acct_cells]
    lead = np.fromiter(map(len, acct_cells), np.int64, n) - np.fromiter(map(len, names), np.int64, n)
    is_user = np.fromiter(map(bool, user_cells), bool, n)
    links = tree_links(lead, names, is_user)
    return None if links is None else (links[0], is_user, links[1])


def _links_checked(acct_cells: list[str], user_cells: list[str], errors: list[tuple[int, int, str]],
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(parent, is_user, account) by a line-by-line walk that records the first row whose
    indentation or account does not fit the tree (the arrays are then not to be used)."""
    n = len(acct_cells)
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
    return (np.asarray(parent, dtype=np.int64), np.asarray(is_user, dtype=bool),
            np.asarray(account, dtype=object))
