"""The queue of well-formed ``squeue -O ...:|`` text as columns, read with numpy over the raw bytes.

A busy site's squeue prints 100,000 pending jobs; :func:`~tui.sources.slurm_text.parse_squeue`
makes a :class:`~tui.model.Job` of each line (~2 s). Ordering the queue and counting the jobs
ahead (:class:`tui.analysis.jobs.Queue`) needs only a few columns of every line: job id,
partition, user, state, priority, submit time, reason. This reader follows
:mod:`tui.sources.sshare_columns`: the ``|`` and newline positions of the whole text are found at
once (its ``_fields``), each line's fields are slices between them, the priorities are read digit by
digit as arrays, the submit times by numpy's ISO parser, and only those name columns become Python
strings. A ``Job`` is made only for the rows asked for (:meth:`QueueColumns.jobs`: the user's own
jobs, the job just ahead of each), by the line-by-line reader's own code on that row's cells, so
it is the very ``Job`` :func:`parse_squeue` makes.

Anything this reader does not expect (not the ``|`` layout, non-ASCII, ``\\r``, a line with the
wrong field count, no REASON column, an unknown state, a submit time not like
``2026-11-18T10:00:00``, local time changing its UTC offset within the queue's times) gives
``None``: the caller then reads the text with :func:`parse_squeue`, which names the bad line. The
columns it does not read (TRES, limits, dependencies...) are checked only for the rows made into
jobs: a bad cell in another user's TRES is not an error here, as it is for ``parse_squeue``.

Snapshot design: :class:`~tui.model.Snapshot` keeps ``jobs`` (a tuple of ``Job``) and gains an
optional ``queue`` (these columns: :class:`QueueColumns` is the model's :class:`~tui.model.QueueTable`).
With ``queue`` set, ``jobs`` holds the jobs the source made (a user's own) and what needs the whole
queue reads ``queue``: :meth:`Queue.of_snapshot <tui.analysis.jobs.Queue.of_snapshot>` (explain,
every user's lines) and :func:`~tui.analysis.jobs.hidden_jobs`. Without it nothing changes. A lazy
``Sequence[Job]`` in ``jobs`` was the other way: it keeps the type, but the summary, the planner,
the allocations, the metrics and the panes all iterate every job, so the first of them would make
the 100,000 ``Job`` anyway, and later than now, where no bench sees it; a separate field says what
was made and what was not. The cost of the choice: code that walks ``jobs`` for *other* users'
jobs sees only what the source made, so a source sets ``queue`` only where one user is served.
A saved folder and the live refresh make every ``Job`` for the app; for a caller that serves one
user (``fairtop jobs``, ``fairtop standing``: ``Source.one_user``) they set ``queue`` and make that
user's jobs only, with their sprio factors, which :attr:`QueueColumns.attach` adds to any other
``Job`` made from these columns (the job just ahead), parsing its sprio line then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

import numpy as np

from tui.model import Job, QueueTable
from tui.sources import slurm_text
from tui.sources.sshare_columns import _fields, _has_control, _texts, _whole_numbers

__all__ = ["QueueColumns", "squeue_columns"]

_NL = ord("\n")
_NO_TIME = frozenset((*slurm_text._NULL, "Unknown", "NONE"))


@dataclass(frozen=True)
class QueueColumns(QueueTable):
    """What ordering the queue needs of every squeue line, in the text's order, and where each
    line's cells are (to make its ``Job``)."""

    source: str = "squeue"
    names: list[str] = field(repr=False, default_factory=list)
    """The header's column names."""
    text: str = field(repr=False, default="")
    first: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """Where field k of each line starts in ``text`` ..."""
    last: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    """... and ends (exclusive)."""
    line_no: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Each row's line number in the text (1-based), for errors."""
    zone: tzinfo | None = field(repr=False, compare=False, default=None)
    """The zone of the printed times (None: this machine's)."""
    attach: Callable[[Job], Job] | None = field(repr=False, compare=False, default=None)
    """What the source adds to each ``Job`` made (its sprio factors: :mod:`tui.sources.saved`)."""

    def jobs(self, rows: Iterable[int]) -> list[Job]:
        """The :class:`~tui.model.Job` of each of ``rows``, as :func:`parse_squeue` makes it.

        Raises
        ------
        InputError
            A cell of one of these rows that ``parse_squeue`` refuses (a bad TRES, time limit...).
        """
        rows = list(rows)
        if not rows:
            return []
        k = len(self.names)  # without -O's empty field after the last '|'
        a, b = self.first[rows, :k].tolist(), self.last[rows, :k].tolist()
        lines = [(int(self.line_no[r]), list(map(self.text.__getitem__, map(slice, a[i], b[i]))))
                 for i, r in enumerate(rows)]
        made = slurm_text._squeue_jobs(self.names, lines, "STATE", self.source, self.zone)
        return made if self.attach is None else list(map(self.attach, made))

    def rows_of(self, user: str) -> list[int]:
        """The rows of ``user``'s jobs."""
        return [i for i, u in enumerate(self.user) if u == user]


def squeue_columns(data: bytes | str, source: str = "squeue", tz: tzinfo | None = None) -> QueueColumns | None:
    """The queue columns of ``squeue -O ...:|`` (or ``-o`` with ``|``) output with JOBID, PARTITION,
    USER, STATE, PRIORITY, SUBMIT_TIME and REASON; None when the text is anything else or not
    well formed (read it with :func:`~tui.sources.slurm_text.parse_squeue` then). Times are
    wall-clock times in ``tz`` (default: this machine's zone)."""
    if isinstance(data, bytes):
        if not data.isascii():
            return None
        text = data.decode("ascii")
    else:
        text = data
        if not text.isascii():
            return None
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    if not buf.size or _has_control(buf) or buf[-1] != _NL:
        return None
    head_end = text.find("\n")
    if head_end <= 0 or text[0] in " \n":  # a leading blank line or indentation: the line reader's
        return None
    header = text[:head_end].split("|")
    trailing = len(header) > 1 and header[-1] == ""
    names = [n.strip() for n in (header[:-1] if trailing else header)]
    need = ("JOBID", "PARTITION", "USER", "STATE", "PRIORITY", "SUBMIT_TIME", "REASON")
    if any(n not in names for n in need) or "ST" in names:
        return None
    col = {n: i for i, n in enumerate(names)}
    width = len(header)
    body = head_end + 1
    if body == buf.size:
        return QueueColumns([], [], [], [], np.zeros(0), np.zeros(0), [], np.zeros((0, 2), dtype=np.int64),
                            source=source, names=names, text=text, zone=tz)
    found = _fields(buf, body, width)
    if found is None:
        return None
    first, last = found
    if trailing and (first[:, -1] != last[:, -1]).any():
        return None
    if (last == first)[:, [col["JOBID"], col["USER"]]].any():  # an empty line or id: the line reader's error
        return None
    n = first.shape[0]

    def cells(name: str) -> list[str]:
        return _texts(text, first[:, col[name]], last[:, col[name]])

    def categories(name: str) -> list[str]:
        return _categories(buf, text, first[:, col[name]], last[:, col[name]])

    states: dict[str, str] = {}
    state = categories("STATE")
    for cell in set(state):
        s = cell.strip().upper()
        got = slurm_text._STATES.get(s) or (s if s in slurm_text._STATES.values() else None)
        if got is None:
            return None
        states[cell] = got
    state = list(map(states.__getitem__, state))
    priority = _priorities(buf, text, first[:, col["PRIORITY"]], last[:, col["PRIORITY"]])
    submit = _times(buf, text, first[:, col["SUBMIT_TIME"]], last[:, col["SUBMIT_TIME"]], tz)
    if priority is None or submit is None:
        return None
    job_id = cells("JOBID")
    id_key = _id_keys(buf, first[:, col["JOBID"]], last[:, col["JOBID"]], job_id)
    reasons: dict[str, str | None] = {}
    reason = cells("REASON")
    for cell in set(reason):
        reasons[cell] = cell.strip() or None
    return QueueColumns(
        job_id=job_id, partition=categories("PARTITION"), user=cells("USER"), state=state, priority=priority,
        submit=submit, reason=list(map(reasons.__getitem__, reason)), id_key=id_key, source=source, names=names,
        text=text, first=first, last=last, line_no=np.arange(2, n + 2, dtype=np.int64), zone=tz)


_SHORT = 32
"""Cells of at most this many bytes are read as categories (state, partition)."""


def _categories(buf: np.ndarray, text: str, a: np.ndarray, b: np.ndarray) -> list[str]:
    """The cells of a column with few distinct values (states, partitions): each row keyed
    by its length and end bytes, the key's first cell checked against every row of the key byte by
    byte; a column that does not fit is sliced cell by cell."""
    size = b - a
    if not size.size or size.max() > _SHORT:
        return _texts(text, a, b)
    span = int(max(size.max(), 1))
    col = np.arange(span)[None, :]
    inside = col < size[:, None]
    mat = np.where(inside, buf[np.where(inside, a[:, None] + col, a[:, None])], 0)
    last = np.maximum(size - 1, 0)
    key = (size.astype(np.int64) << 40) | (mat[:, 0].astype(np.int64) << 32) | (
        mat[:, min(1, span - 1)].astype(np.int64) << 24) | (buf[a + last].astype(np.int64) << 16) | (
        buf[a + np.maximum(size - 2, 0)].astype(np.int64) << 8) | buf[a + size // 2].astype(np.int64)
    keys, first, codes = np.unique(key, return_index=True, return_inverse=True)
    if keys.size > 256 or not (mat == mat[first][codes]).all():
        return _texts(text, a, b)
    values = _texts(text, a[first], b[first])
    return list(map(values.__getitem__, codes.ravel().tolist()))


def _priorities(buf: np.ndarray, text: str, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """PRIORITY cells as float64, NaN for squeue's empty/N/A; None for anything else."""
    got = _whole_numbers(buf, a, b, 10)
    if got is not None:
        return got.astype(np.float64)
    out = np.empty(a.size, dtype=np.float64)
    seen: dict[str, float] = {}
    for i, cell in enumerate(_texts(text, a, b)):
        v = seen.get(cell)
        if v is None:
            if cell.isdigit() and len(cell) < 20:
                v = float(int(cell))
            elif cell in slurm_text._NULLS:
                v = np.nan
            else:
                return None
            seen[cell] = v
        out[i] = v
    return out


def _id_keys(buf: np.ndarray, a: np.ndarray, b: np.ndarray, ids: list[str]) -> np.ndarray | None:
    """(job or array id, task id or -1) of ``123`` and ``123_4`` ids read digit by digit; another
    id (``123_[1-5]``) by :func:`tui.analysis.jobs.queue`'s rule, given here as ``id_key``."""
    size = b - a
    if not size.size or size.max() > 18:
        return None
    span = int(size.max())
    col = np.arange(span)[None, :]
    inside = col < size[:, None]
    ch = buf[np.where(inside, a[:, None] + col, a[:, None])]
    bar = (ch == ord("_")) & inside
    digit = (ch >= ord("0")) & (ch <= ord("9")) & inside
    bars = bar.sum(axis=1)
    at = np.where(bars == 1, bar.argmax(axis=1), size)[:, None]  # the '_' or the end
    ok = (digit | bar | ~inside).all(axis=1) & (bars <= 1) & (at[:, 0] >= 1) & ((bars == 0) | (at[:, 0] < size - 1))
    d = np.where(digit, ch.astype(np.int64) - ord("0"), 0)
    out = np.empty((size.size, 2), dtype=np.int64)
    out[:, 0] = (np.where(col < at, d * 10 ** (at - 1 - col).clip(0), 0)).sum(axis=1)
    task = np.where(col > at, d * 10 ** (size[:, None] - 1 - col).clip(0), 0).sum(axis=1)
    out[:, 1] = np.where(bars == 1, task, -1)
    for i in np.flatnonzero(~ok).tolist():
        m = _ID.match(ids[i])
        out[i] = (2**62, -1) if m is None else (int(m.group(1)), int(m.group(2)) if m.group(2) else -1)
    return out


_ID = re.compile(r"([0-9]+)(?:_([0-9]+))?")
"""A job id as :mod:`tui.analysis.jobs.queue` reads it."""

_ISO_LEN = 19


def _times(buf: np.ndarray, text: str, a: np.ndarray, b: np.ndarray, tz: tzinfo | None = None) -> np.ndarray | None:
    """SUBMIT_TIME cells (local ISO times) as epoch seconds, inf where none; None when a cell is
    no such time or the local UTC offset is not one across them (the line reader decides then)."""
    out = np.full(a.size, np.inf)
    full = (b - a) == _ISO_LEN
    if not full.all():
        for cell in set(_texts(text, a[~full], b[~full])):
            if cell.strip() not in _NO_TIME:
                return None
    if not full.any():
        return out
    at = a[full][:, None] + np.arange(_ISO_LEN)[None, :]
    chars = buf[at]
    digit = np.ones(_ISO_LEN, dtype=bool)
    digit[[4, 7, 10, 13, 16]] = False
    d = chars[:, digit].astype(np.int64) - ord("0")
    if ((d < 0) | (d > 9)).any():
        return None
    if not ((chars[:, [4, 7]] == ord("-")).all() and (chars[:, 10] == ord("T")).all()
            and (chars[:, [13, 16]] == ord(":")).all()):
        return None
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    month, day = d[:, 4] * 10 + d[:, 5], d[:, 6] * 10 + d[:, 7]
    hour, minute, second = d[:, 8] * 10 + d[:, 9], d[:, 10] * 10 + d[:, 11], d[:, 12] * 10 + d[:, 13]
    if (year < 1971).any() or (year > 9998).any() or (month < 1).any() or (month > 12).any() or (day < 1).any() \
            or (hour > 23).any() or (minute > 59).any() or (second > 59).any():
        return None  # the line reader's words (or its own rules) for those
    start = (year - 1970).astype("datetime64[Y]").astype("datetime64[M]") + (month - 1)
    days = (start + 1).astype("datetime64[D]") - start.astype("datetime64[D]")
    if (day > days.astype(np.int64)).any():
        return None
    naive = (start.astype("datetime64[D]").astype(np.int64) + day - 1) * 86400 + hour * 3600 + minute * 60 + second
    # local time -> UTC: one offset when the zone keeps it across the queue's times (checked at
    # both ends and every day between); else None, and the line reader converts each time
    lo, hi = int(naive.min()), int(naive.max())
    if hi - lo > 400 * 86400:
        return None
    offsets = {_offset(t, tz) for t in range(lo, hi + 86400, 86400)} | {_offset(hi, tz)}
    if len(offsets) != 1:
        return None
    out[full] = (naive - offsets.pop()).astype(np.float64)
    return out


def _offset(naive: int, tz: tzinfo | None = None) -> int:
    """The UTC offset (seconds) of ``tz`` (default this machine's zone) at the naive wall-clock
    time ``naive`` (as if UTC), as ``datetime.astimezone`` (or ``replace(tzinfo=tz)``) takes it."""
    wall = datetime(1970, 1, 1) + timedelta(seconds=naive)
    got = (wall.replace(tzinfo=tz) if tz is not None else wall.astimezone()).utcoffset()
    assert got is not None
    return int(got.total_seconds())
