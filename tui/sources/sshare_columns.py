"""Columns of well-formed ``sshare -P`` text, read with numpy over the raw bytes.

sshare prints 200k associations in 20 MB; splitting every line in Python costs half a second.
Here the ``|`` and newline positions of the whole text are found at once, each line's fields
are slices between them, the numbers are read digit by digit as arrays, and only the name
columns become Python strings. Anything this reader does not expect (non-ASCII, ``\\r``, a
line with the wrong field count, a number that is not plain digits) gives ``None``: the
line-by-line reader in :mod:`tui.sources.sshare` then reads the text and names the bad line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tui.model import MAX_SHARES, NO_VAL, USE_PARENT

__all__ = ["USAGE_DIGITS", "PlainColumns", "plain_columns", "tree_links"]

USAGE_DIGITS = 15
"""RawUsage cells of at most this many digits (below 2**53) are read as exact int64."""

CELLS_MAX_BYTES = 64 << 20
"""The most a column's ``<U`` array may take (4 bytes per character of its widest cell, per row)."""

_BAR, _NL, _SPACE, _ZERO = ord("|"), ord("\n"), ord(" "), ord("0")
_PARENT = np.frombuffer(b"parent", dtype=np.uint8)


@dataclass(frozen=True)
class PlainColumns:
    """The input columns of every data line, in order."""

    names: list[str]
    """Account cells without their indentation."""
    lead: np.ndarray
    """Spaces before each Account cell."""
    users: list[str]
    shares: np.ndarray
    """RawShares as integers; ``parent`` and the root's empty cell as the values given."""
    usage: np.ndarray
    """RawUsage (whole numbers) as int64."""
    partitions: list[str] | None
    lines: int
    text: str = field(repr=False, default="")
    buf: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.uint8))
    """``text`` as ASCII bytes."""
    first: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """Where field k of each line starts in ``text`` (``first[:, k]``) ..."""
    last: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """... and ends (exclusive)."""

    def column(self, k: int) -> list[str]:
        """Field ``k`` of every line as printed: slices of the text, no line split."""
        a, b = self.first[:, k], self.last[:, k]
        if not (b - a).any():  # e.g. GrpTRESMins where no association has a limit
            return [""] * self.lines
        return _texts(self.text, a, b)

    def cells(self, k: int) -> np.ndarray:
        """Field ``k`` of every line as one ``<U`` array (no Python string per cell): the bytes
        gathered into a lines x widest-cell matrix padded with NUL, which ``<U`` reads as the
        end of a cell (the text has no NUL: control characters are refused)."""
        a, b = self.first[:, k], self.last[:, k]
        size = b - a
        span = max(int(size.max(initial=0)), 1)
        if 4 * span * self.lines > CELLS_MAX_BYTES:  # one very long cell: Python strings take less
            return np.asarray(self.column(k), dtype=object)
        at = a[:, None] + np.arange(span)[None, :]
        codes = np.where(at < b[:, None], self.buf[np.minimum(at, self.buf.size - 1)], 0).astype(np.uint32)
        return codes.view(f"<U{span}").reshape(self.lines)


def _fields(buf: np.ndarray, body: int, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(line starts, the ``|`` positions as a lines x (width-1) matrix) when every line from byte
    ``body`` on has exactly ``width - 1`` bars and ends with a newline; else None."""
    rest = buf[body:]
    ends = np.flatnonzero(rest == _NL)
    if not ends.size or ends[-1] != rest.size - 1:
        return None
    bars = np.flatnonzero(rest == _BAR)
    starts = np.concatenate(([0], ends[:-1] + 1))
    per_line = np.diff(np.searchsorted(bars, np.concatenate((starts, [rest.size]))))
    if bars.size != ends.size * (width - 1) or (per_line != width - 1).any():
        return None
    return starts + body, bars.reshape(ends.size, width - 1) + body


def _whole_numbers(buf: np.ndarray, a: np.ndarray, b: np.ndarray, most: int) -> np.ndarray | None:
    """The integers in ``buf[a:b]`` of each row: 1 to ``most`` ASCII digits, else None."""
    size = b - a
    if size.size and (size.min() < 1 or size.max() > most):
        return None
    span = int(size.max(initial=1))
    at = a[:, None] + np.arange(span)[None, :]
    inside = at < b[:, None]
    digits = buf[np.where(inside, at, a[:, None])].astype(np.int64) - _ZERO
    if ((digits < 0) | (digits > 9))[inside].any():
        return None
    power = (size[:, None] - 1 - np.arange(span)[None, :]).clip(0)
    return (np.where(inside, digits, 0) * (10 ** power)).sum(axis=1)


def _texts(text: str, a: np.ndarray, b: np.ndarray) -> list[str]:
    return list(map(text.__getitem__, map(slice, a.tolist(), b.tolist())))


def plain_columns(text: str, body: int, width: int, trailing: bool, columns: tuple[int, int, int, int, int | None],
                  ) -> PlainColumns | None:
    """Account, User, RawShares, RawUsage (and Partition) of the lines from character ``body``
    on, with ``width`` fields each (``trailing``: the empty field after ``-p``'s last '|'
    counted). None unless the text is ASCII without control characters other than newlines (so
    lines are what ``str.splitlines`` makes them), every line is well formed and every number
    plain digits."""
    if not text.isascii():
        return None
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    if ((buf < _SPACE) & (buf != _NL)).any():
        return None
    found = _fields(buf, body, width)
    if found is None:
        return None
    starts, bars = found
    ends = np.concatenate((starts[1:] - 1, [buf.size - 1]))
    first = np.concatenate((starts[:, None], bars + 1), axis=1)  # field k of each line: first[:, k] ..
    last = np.concatenate((bars, ends[:, None]), axis=1)  # .. last[:, k] (exclusive)
    ia, iu, ish, ius, ip = columns
    if trailing and (first[:, -1] != last[:, -1]).any():  # -p: each line ends with '|'
        return None
    usage = _whole_numbers(buf, first[:, ius], last[:, ius], USAGE_DIGITS)
    if usage is None:
        return None
    a, b = first[:, ish], last[:, ish]
    parent = (b - a == _PARENT.size)
    parent[parent] = (buf[a[parent, None] + np.arange(_PARENT.size)] == _PARENT).all(axis=1)
    empty = b == a
    plain = ~parent & ~empty
    shares = np.full(a.size, USE_PARENT, dtype=np.int64)
    shares[empty] = NO_VAL
    got = _whole_numbers(buf, a[plain], b[plain], 10)
    if got is None or (got > MAX_SHARES).any() or (empty[1:]).any():
        return None
    shares[plain] = got
    a = first[:, ia]
    lead = np.zeros(a.size, dtype=np.int64)
    size = last[:, ia] - a
    while True:  # leading spaces, one column of bytes at a time (as deep as the tree)
        more = (lead < size) & (buf[np.minimum(a + lead, buf.size - 1)] == _SPACE)
        if not more.any():
            break
        lead += more
    return PlainColumns(
        names=_texts(text, a + lead, last[:, ia]), lead=lead,
        users=_texts(text, first[:, iu], last[:, iu]), shares=shares, usage=usage,
        partitions=None if ip is None else _texts(text, first[:, ip], last[:, ip]), lines=int(a.size),
        text=text, buf=buf, first=first, last=last)


def tree_links(lead: np.ndarray, names: list[str], is_user: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(parent, account names as an object array) of a well-formed sshare tree, or None if any
    row does not fit (the line-by-line walk then says which and why).

    A row indented ``L`` spaces belongs to the stack entry at depth ``L - 1`` of a line-by-line
    walk, which is the last account above it at depth <= L - 1 if that account's depth is L - 1
    (an account at depth d drops every entry deeper than d)."""
    n = lead.size
    if not n or lead[0] != 0 or is_user[0] or names[0] != "root" or not all(names):
        return None
    want = lead - 1  # the depth of the row's parent account
    if n > 1 and int(want[1:].min()) < 0:
        return None
    depth = np.where(is_user, np.iinfo(np.int64).max, lead)  # users are nobody's parent
    rows = np.arange(n)
    parent = np.full(n, -1, dtype=np.int64)
    for t in np.unique(want[1:]).tolist():
        last = np.maximum.accumulate(np.where(depth <= t, rows, -1))
        at = np.flatnonzero(want == t)
        at = at[at > 0]
        parent[at] = last[at - 1]
    if (parent[1:] < 0).any() or (depth[parent[1:]] != want[1:]).any():
        return None
    account = np.asarray(names, dtype=object)
    users = np.flatnonzero(is_user)
    if (account[parent[users]] != account[users]).any():
        return None
    return parent, account
