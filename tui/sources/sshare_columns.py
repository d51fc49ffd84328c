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

from tui.model import MAX_SHARES, NO_VAL, USE_PARENT, PrintedColumn

__all__ = ["USAGE_DIGITS", "PlainColumns", "plain_columns", "tree_links"]

USAGE_DIGITS = 15
"""RawUsage cells of at most this many digits (below 2**53) are read as exact int64."""

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
    first: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """Where field k of each line starts in ``text`` (``first[:, k]``; 32-bit below 2 GB) ..."""
    last: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """... and ends (exclusive)."""

    def column(self, k: int) -> list[str]:
        """Field ``k`` of every line as printed: slices of the text, no line split."""
        a, b = self.first[:, k], self.last[:, k]
        if not (b - a).any():  # e.g. GrpTRESMins where no association has a limit
            return [""] * self.lines
        return _texts(self.text, a, b)

    def printed(self, k: int) -> PrintedColumn:
        """Field ``k`` of every line as printed, as slices of the text made on reading."""
        return PrintedColumn.sliced(self.text, self.first[:, k], self.last[:, k])


_CHUNK = 1 << 16
"""Bytes compared at a time: the masks and positions of a chunk stay under glibc's mmap
threshold (128 kB), so they reuse the heap's pages; whole-text masks (2.4 MB each at 20k rows)
were fresh pages every time, ~4 us a page fault on the 2-core box (allocator.py fixes the
threshold)."""


def _offset_type(buf: np.ndarray) -> type[np.signedinteger]:
    """32-bit offsets where the text allows: half the pages of 64-bit ones."""
    return np.int32 if buf.size < 2**31 else np.int64


def _positions(buf: np.ndarray, start: int, byte: int) -> np.ndarray:
    """Where ``byte`` is in ``buf`` from ``start`` on (``np.flatnonzero`` a chunk at a time)."""
    kind = _offset_type(buf)
    parts = [(np.flatnonzero(buf[at:at + _CHUNK] == byte) + at).astype(kind) for at in range(start, buf.size, _CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=kind)


def _has_control(buf: np.ndarray) -> bool:
    """A byte below space other than a newline, a chunk at a time."""
    for at in range(0, buf.size, _CHUNK):
        part = buf[at:at + _CHUNK]
        if ((part < _SPACE) & (part != _NL)).any():
            return True
    return False


def _fields(buf: np.ndarray, body: int, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(where field k of each line starts, and ends: two lines x ``width`` matrices) when every
    line from byte ``body`` on has exactly ``width - 1`` bars and ends with a newline; else None."""
    ends = _positions(buf, body, _NL)
    if not ends.size or ends[-1] != buf.size - 1:
        return None
    bars = _positions(buf, body, _BAR)
    if bars.size != ends.size * (width - 1):
        return None
    bars = bars.reshape(ends.size, width - 1)
    # Sorted, as many as the lines need: each line has exactly width - 1 when each group of
    # width - 1 lies between the line's start and its newline.
    if width > 1 and ((bars[:, -1] > ends).any() or (bars[1:, 0] < ends[:-1]).any()):
        return None
    first = np.empty((ends.size, width), dtype=ends.dtype)  # filled in place: no whole-size temporaries
    first[0, 0], first[1:, 0] = body, ends[:-1]
    first[1:, 0] += 1
    first[:, 1:] = bars
    first[:, 1:] += 1
    last = np.empty((ends.size, width), dtype=ends.dtype)
    last[:, :-1], last[:, -1] = bars, ends
    return first, last


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
    if _has_control(buf):
        return None
    found = _fields(buf, body, width)
    if found is None:
        return None
    first, last = found  # field k of each line is text[first[:, k]:last[:, k]]
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
    # 32-bit offsets: at 20k rows each temporary stays under the mmap threshold
    size, lead = last[:, ia] - a, np.zeros(a.size, dtype=a.dtype)
    while True:  # leading spaces, one column of bytes at a time (as deep as the tree)
        more = (lead < size) & (buf[np.minimum(a + lead, buf.size - 1)] == _SPACE)
        if not more.any():
            break
        lead += more
    lead = lead.astype(np.int64)
    return PlainColumns(
        names=_texts(text, a + lead, last[:, ia]), lead=lead,
        users=_texts(text, first[:, iu], last[:, iu]), shares=shares, usage=usage,
        partitions=None if ip is None else _texts(text, first[:, ip], last[:, ip]), lines=int(a.size),
        text=text, first=first, last=last)


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
    # The depths present, without np.unique: its first call imports numpy.ma (numpy 2.4 asks
    # np.ma.is_masked), 35 ms of the live first frame's worker at 20k rows.
    for t in np.flatnonzero(np.bincount(want[1:])).tolist():
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
