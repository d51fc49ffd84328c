"""Which association rows the tree pane shows, and in which order: numpy only, no Textual.

A Slurm standing shows sshare's columns (:data:`COLUMNS`); a PBS Professional standing shows
the ``fairtop report`` PBS table's (:data:`PBS_COLUMNS`), one row per fairshare entity in
``pbsfs`` order. The sort keys are the same letters in both: each PBS column takes the key of
the Slurm column it corresponds to.

The pane never holds a widget per association. It keeps an array ``visible`` of tree rows in
display order and draws only the slice that fits on screen, so a 100k-association tree costs a
few array passes per expand/collapse, filter or sort, and nothing per frame.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias
from functools import cached_property

import numpy as np

from tui.analysis.standing import Standing
from tui.formats.pbsfs import TABLE_COLUMNS, pbs_cells, pbs_rows
from tui.formats.sshare import PARENT_LEVEL_FS, printed_fairshare, sshare_cells, wire
from tui.model import NO_VAL, USE_PARENT, PrintedColumn, depth_of
from tui.slurm_releases import release


@dataclass(frozen=True)
class Column:
    """One column of the tree pane."""

    id: str
    """Sort key name, also used in ``:sort ID``."""
    title: str
    """Header text, as sshare's ``-l`` header names it."""
    width: int
    """Cells are right-aligned in this many characters (0: the flexible name column)."""
    key: str
    """Shift+letter that sorts by this column."""
    priority: int = 9
    """When the terminal is too narrow for every column, the lower numbers are shown first and
    the rest are reached by scrolling sideways (the name column always stays)."""


COLUMNS: tuple[Column, ...] = (
    Column("name", "Account / User", 0, "N", 0),
    Column("raw_shares", "RawShares", 10, "R", 6),
    Column("norm_shares", "NormShares", 11, "O", 5),
    Column("raw_usage", "RawUsage", 12, "U", 7),
    Column("eff_usage", "EffectvUsage", 13, "E", 4),
    Column("fairshare", "FairShare", 10, "F", 1),
    Column("level_fs", "LevelFS", 10, "L", 2),
    Column("rank", "Rank", 6, "K", 3),
)
COLUMN_IDS = tuple(c.id for c in COLUMNS)
_PBS_WIDTHS = {"shares": 8, "percentage": 11, "usage": 12, "fairshare_tree_usage": 10, "usage_per_perc": 12,
               "fairshare_factor": 9}
_PBS_KEYS = {"shares": "R", "percentage": "O", "usage": "U", "fairshare_tree_usage": "E", "usage_per_perc": "L",
             "fairshare_factor": "F"}
_PBS_PRIORITY = {"fairshare_factor": 1, "usage_per_perc": 2, "fairshare_tree_usage": 3, "percentage": 4,
                 "shares": 5, "usage": 6}
PBS_COLUMNS: tuple[Column, ...] = (
    Column("name", "Entity", 0, "N", 0),
    *(Column(key, title, _PBS_WIDTHS[key], _PBS_KEYS[key], _PBS_PRIORITY[key]) for key, title, _ in TABLE_COLUMNS),
)
"""PBS columns: ids are :func:`tui.formats.pbsfs.pbs_rows` keys, titles the report table's."""


def column_id(columns: tuple[Column, ...], name: str) -> str | None:
    """The id of the column of ``columns`` that ``name`` means, or None.

    ``name`` is an id or a title (any case), an unambiguous prefix of one, or the exact id of a
    column of the other column set, which means the column with the same sort key (``raw_usage``
    is ``usage`` on a PBS tree, so the key bindings work on both).
    """
    by_name = {c.id: c.id for c in columns} | {c.title.lower(): c.id for c in columns}
    key = name.strip().lower()
    if key in by_name:
        return by_name[key]
    starts = {v for k, v in by_name.items() if k.startswith(key)} if key else set()
    if len(starts) == 1:
        return starts.pop()
    by_key = {c.key: c.id for c in columns}
    other = next((c for c in (*COLUMNS, *PBS_COLUMNS) if c.id == key), None)
    return by_key.get(other.key) if other is not None else None


def column_names(columns: tuple[Column, ...]) -> list[str]:
    """Everything :func:`column_id` accepts in full (for "did you mean")."""
    return [c.id for c in columns] + [c.title.lower() for c in columns]


#: sshare's printed column -> the tree's column id.
PRINTED_COLUMNS = {"NormShares": "norm_shares", "RawUsage": "raw_usage", "EffectvUsage": "eff_usage",
                   "FairShare": "fairshare", "LevelFS": "level_fs"}
#: Columns computed from usage: "unknown" when the source has none.
NEEDS_USAGE = ("raw_usage", "eff_usage", "fairshare", "level_fs", "rank")
UNKNOWN = "unknown"
#: Marks a printed cell the engine computes differently (an engine defect, never hidden).
DIFFERS = "≠"


def _as_printed(out: dict[str, Cells], standing: Standing) -> None:
    """Show what the scheduler printed where it printed it (rule one), marking any cell the
    engine disagrees with."""
    printed = standing.snapshot.printed
    if not printed:
        return
    for header, col in PRINTED_COLUMNS.items():
        cells = printed.get(header)
        if cells is not None and len(cells) == len(out[col]):
            out[col] = printed_cells(cells)
    rec = standing.reconciliation
    copied: dict[str, np.ndarray] = {}
    for d in rec.disagreements if rec is not None else ():
        marked = PRINTED_COLUMNS.get(d.column)
        if marked is not None:
            if marked not in copied:  # a copy: the snapshot's cells stay as printed
                out[marked] = copied[marked] = cell_array(out[marked]).astype(object)
            copied[marked][d.row] = f"{d.printed}{DIFFERS}"


Cells: TypeAlias = "np.ndarray | PrintedColumn"
"""A column's display strings: an object array, or sshare's printed column as it is (a cell
becomes a string when its row is drawn)."""


def printed_cells(cells: Sequence[str]) -> Cells:
    """A printed column as the table holds it: sshare's :class:`PrintedColumn` as it is, another
    source's as an object array."""
    return cells if isinstance(cells, PrintedColumn) else np.asarray(cells, dtype=object)


def cell_array(cells: Cells) -> np.ndarray:
    """``cells`` as an array (a printed column's own, made on first use: do not write to it)."""
    return cells.cells if isinstance(cells, PrintedColumn) else cells


def blank_cells(cells: Cells) -> np.ndarray:
    """True where the cell is empty (a printed column's from its slices, without strings)."""
    return cells.blank() if isinstance(cells, PrintedColumn) else cells == ""


class SortKeys(Mapping[str, np.ndarray]):
    """Column id -> sort key, each made by its function when first read (the UI thread's first
    sort by that column: a few ms) and then kept; a key set directly is kept as given."""

    def __init__(self, make: dict[str, Callable[[], np.ndarray]]) -> None:
        self._make = dict(make)
        self._made: dict[str, np.ndarray] = {}

    def make(self, column: str, make: Callable[[], np.ndarray]) -> None:
        self._make[column] = make
        self._made.pop(column, None)

    def __setitem__(self, column: str, key: np.ndarray) -> None:
        self._make[column] = lambda: key
        self._made[column] = key

    def __getitem__(self, column: str) -> np.ndarray:
        if column not in self._made:
            self._made[column] = self._make[column]()
        return self._made[column]

    def __iter__(self) -> Iterator[str]:
        return iter(self._make)

    def __len__(self) -> int:
        return len(self._make)


@dataclass(frozen=True, eq=False)
class TreeTable:
    """Display strings and sort keys of every association, built once per standing (off the UI thread)."""

    parent: np.ndarray
    depth: np.ndarray
    is_user: np.ndarray
    has_children: np.ndarray
    names: np.ndarray
    """What the name column shows: the account for account rows, the user for user rows."""
    users: np.ndarray
    cells: dict[str, Cells]
    """Column id -> display strings (sshare's exact text): read a cell as ``cells[id][row]``, which
    may be a ``numpy.str_`` (a ``str``)."""
    keys: Mapping[str, np.ndarray]
    """Column id -> float array (NaN = empty cell) or, for ``name``, an int rank of the name."""
    fairshare: np.ndarray
    """Fairshare factor for the bar; NaN where sshare prints nothing."""
    by_depth: tuple[np.ndarray, ...]
    """Rows at depth 1, 2, ...: lets visibility propagate one level per array pass."""
    names_lower: np.ndarray | None = None
    """``names`` lower-cased as a fixed-width unicode array: lower-case plain-text filters search
    it with ``np.char.find`` (a few ms at 100k rows instead of ~30 ms of ``re.search`` calls).
    None when the names would take too much memory that way (see :func:`lower_names`)."""
    columns: tuple[Column, ...] = COLUMNS
    """The columns shown (:data:`COLUMNS` for Slurm, :data:`PBS_COLUMNS` for PBS)."""
    noun: str = "associations"
    """What a row is, for the status line."""

    @property
    def size(self) -> int:
        return len(self.parent)

    @cached_property
    def name_width(self) -> int:
        """Cells the widest name needs, with its indentation and marker (``  `` per depth, ``▸ ``)."""
        if not self.size:
            return 0
        if self.names_lower is not None:  # vectorised (100k rows): the code points that are not padding
            codes = self.names_lower.view(np.uint32).reshape(self.size, -1)
            lengths = np.count_nonzero(codes, axis=1)
        else:
            lengths = np.fromiter((len(str(n)) for n in self.names), dtype=np.int64, count=self.size)
        return int((2 * self.depth + 2 + lengths).max())

    @classmethod
    def from_standing(cls, standing: Standing) -> TreeTable:
        """Turn a standing's tree (Slurm or PBS) and engine results into strings and keys."""
        if standing.algorithm == "pbs":
            return cls.from_pbs(standing)
        tree, res = standing.snapshot.tree, standing.fairshare
        if tree is None or res is None:
            raise ValueError("this snapshot has no Slurm association tree")
        n = tree.size
        # What the source printed is shown as printed (_as_printed): format only the rest (at 20k
        # rows formatting every cell in Python is most of the first frame's cost).
        printed = {h: c for h, c in (standing.snapshot.printed or {}).items() if len(c) == n}
        need = [h for h in ("NormShares", "EffectvUsage", "FairShare", "LevelFS") if h not in printed]
        printer = release(standing.snapshot.scheduler_version)  # blank where that release prints none
        cells: dict[str, Cells] = {k: np.asarray(v, dtype=object)
                 for k, v in sshare_cells(tree, res, standing.snapshot.settings.dampening, columns=need,
                                          release=printer).items()}
        cells.update((h, printed_cells(printed[h])) for h in printed if h not in cells)
        raw = tree.shares_raw
        special = (raw == USE_PARENT) | (raw == NO_VAL)  # not numbers: their 10 digits would widen every cell
        out: dict[str, Cells] = {
            "raw_shares": np.where(raw == USE_PARENT, "parent",
                                   np.where(raw == NO_VAL, "", decimal_cells(np.where(special, 0, raw)))),
            "norm_shares": cells["NormShares"],
            "raw_usage": (printed_cells(printed["RawUsage"]) if "RawUsage" in printed
                          else np.asarray([str(int(u)) for u in tree.usage_raw], dtype=object)),
            "eff_usage": cells["EffectvUsage"],
            "fairshare": cells["FairShare"],
            "level_fs": cells.get("LevelFS", np.full(n, "", dtype=object)),
        }
        if res.rank is not None:
            out["rank"] = np.where(tree.is_user, decimal_cells(res.rank), "")
        else:
            out["rank"] = np.full(n, "", dtype=object)
        names = np.where(tree.is_user, tree.user, tree.account).astype(object)
        out["name"] = names
        _as_printed(out, standing)
        if res.level_fs is not None:  # sshare prints nothing for a `parent` row: it has no level of its own
            parent_rows = res.structure.use_parent & blank_cells(out["level_fs"])
            if parent_rows.any():
                out["level_fs"] = np.where(parent_rows, PARENT_LEVEL_FS, cell_array(out["level_fs"]))

        # Sort keys from the same doubles sshare prints (no string parsing: 100k rows), each made
        # when first sorted by: the first frame sorts by none (~8 ms of its worker at 20k rows).
        level_blank = blank_cells(out["level_fs"])
        text = names.astype(str)  # one <U array for the name sort and the filter's lower-cased names
        fair = fair_key = np.asarray(printed_fairshare(tree, res, standing.snapshot.settings.dampening, printer),
                                     dtype=float)  # `fair` is masked below for the bar, the key is not
        keys = SortKeys({
            "raw_shares": lambda: np.where(special, np.nan, raw.astype(float)),
            "norm_shares": lambda: wire(res.norm_shares),
            "raw_usage": lambda: tree.usage_raw.astype(float),
            "eff_usage": lambda: wire(res.effective_usage),
            "fairshare": lambda: fair_key,
            "level_fs": lambda: np.where(level_blank, np.nan, np.full(n, np.nan) if res.level_fs is None
                                         else wire(res.level_fs)),
            "rank": lambda: np.where(tree.is_user, res.rank, np.nan) if res.rank is not None else np.full(n, np.nan),
            "name": lambda: name_order(text),
        })
        depth = tree.depth()
        has_children = np.zeros(n, dtype=bool)
        has_children[tree.parent[1:]] = True
        by_depth = tuple(np.flatnonzero(depth == d) for d in range(1, int(depth.max()) + 1))
        if res.algorithm == "fair_tree":
            keys.make("fairshare", lambda: best_below(fair_key, tree.parent, by_depth))
        caps = standing.snapshot.capabilities
        if caps is not None and "usage" not in caps:
            # Rule two: a source without usage (slurmrestd 22.05) gets no fabricated fairshare.
            for col in NEEDS_USAGE:
                out[col] = np.where(blank_cells(out[col]), "", UNKNOWN).astype(object)
                keys[col] = np.full(n, np.nan)
            fair = np.full(n, np.nan)
        elif standing.snapshot.usage_unknown:
            # Rows the usage source does not list (slurmrestd has them, sshare not): unknown too.
            rows = np.asarray(standing.snapshot.usage_unknown, dtype=np.int64)
            for col in NEEDS_USAGE:
                if col == "level_fs" and "LevelFS" not in cells:
                    continue  # classic: no LevelFS column at all
                shown = rows[tree.is_user[rows]] if col == "rank" else rows
                out[col] = unknown = cell_array(out[col]).astype(object)  # a copy: the snapshot's stay as printed
                unknown[shown] = UNKNOWN
                keys[col] = keys[col].copy()
                keys[col][rows] = np.nan
            fair = fair.copy()
            fair[rows] = np.nan
            if standing.partial:  # PrivateData: siblings missing, so shares and rank are not ours to tell
                out["norm_shares"] = shares = cell_array(out["norm_shares"]).astype(object)
                shares[rows] = UNKNOWN
                out["rank"] = np.where(tree.is_user, UNKNOWN, "").astype(object)
                keys["rank"] = np.full(n, np.nan)
        return cls(tree.parent, depth, tree.is_user, has_children, names, tree.user.astype(object),
                   out, keys, fair, by_depth, lower_names(names, text))

    @classmethod
    def from_pbs(cls, standing: Standing) -> TreeTable:
        """The PBS entities in ``pbsfs`` pre-order, cells exactly as ``fairtop report`` prints them.

        Leaves count as users (``m``, ``:user``, the user style); TREEROOT has no bar.
        """
        tree, fs = standing.snapshot.pbs, standing.pbs
        if tree is None or fs is None:
            raise ValueError("this snapshot has no PBS fairshare tree")
        rows = pbs_rows(tree, fs)
        n = len(rows)
        parent = np.asarray(tree.parent, dtype=np.int64)
        names = np.asarray([r["name"] for r in rows], dtype=object)
        printed = [pbs_cells(r) for r in rows]
        cells: dict[str, Cells] = {"name": names}
        keys = {"name": name_order(names.astype(str))}
        for k, (key, _, _) in enumerate(TABLE_COLUMNS):
            cells[key] = np.asarray([p[k] for p in printed], dtype=object)
            keys[key] = np.asarray([r[key] for r in rows], dtype=float)
        depth = depth_of(parent)
        has_children = np.zeros(n, dtype=bool)
        has_children[parent[1:]] = True
        is_user = ~has_children
        is_user[0] = False
        by_depth = tuple(np.flatnonzero(depth == d) for d in range(1, int(depth.max()) + 1))
        fair = keys["fairshare_factor"].copy()
        fair[0] = np.nan
        return cls(parent, depth, is_user, has_children, names, names, cells, keys, fair, by_depth,
                   lower_names(names), PBS_COLUMNS, "entities")


def name_order(text: np.ndarray) -> np.ndarray:
    """The name column's sort key: each name's place among all of them (ties in row order)."""
    return np.argsort(np.argsort(text, kind="stable"), kind="stable").astype(float)


def best_below(values: np.ndarray, parent: np.ndarray, by_depth: tuple[np.ndarray, ...]) -> np.ndarray:
    """``values`` with each NaN row (a Fair Tree account, which has no FairShare) given the
    largest value below it: sorting by FairShare then orders accounts by their best user, which
    under Fair Tree is the order it ranks them in (depth-first, the best subtree first)."""
    best = values.copy()
    for rows in reversed(by_depth):  # deepest first; NaN-ignoring max
        np.fmax.at(best, parent[rows], best[rows])
    return np.where(np.isnan(values), best, values)


LOWER_NAMES_MAX_BYTES = 32 << 20


def lower_names(names: np.ndarray, text: np.ndarray | None = None) -> np.ndarray | None:
    """``names`` as a lower-cased ``<U`` array, or None if one long name would make it exceed
    :data:`LOWER_NAMES_MAX_BYTES` (4 bytes per character of the longest name, per row). ``text``:
    ``names.astype(str)`` if the caller has it."""
    if text is None:
        longest = max(map(len, names), default=0)
        if 4 * max(longest, 1) * len(names) > LOWER_NAMES_MAX_BYTES:
            return None
        text = names.astype(str)
    elif text.dtype.itemsize * len(text) > LOWER_NAMES_MAX_BYTES:
        return None
    codes = text.view(np.uint32)
    if codes.size and int(codes.max()) < 128:  # ASCII: A-Z as array arithmetic (np.char.lower: 10x slower)
        upper = (codes >= ord("A")) & (codes <= ord("Z"))
        return (codes + np.uint32(32) * upper).view(text.dtype)
    return np.char.lower(text)


def decimal_cells(values: np.ndarray) -> np.ndarray:
    """``values.astype(str)`` of integers in 0 .. 2**32 - 1, as array arithmetic on the digits,
    one character position at a time (numpy formats each integer alone: ~6 ms at 20k rows). The
    temporaries are 32- and 8-bit: at 20k rows each stays under glibc's mmap threshold (128 kB),
    so it reuses the heap's pages instead of faulting in fresh ones (allocator.py)."""
    values = np.asarray(values)
    if not values.size or int(values.min()) < 0 or int(values.max()) > 0xFFFFFFFF:
        return values.astype(str)
    digits = len(str(int(values.max())))
    number = values.astype(np.uint32)
    count = np.ones(values.size, dtype=np.int8)  # digits of each value (0 has one)
    for k in range(1, digits):
        count += number >= 10 ** k
    power = 10 ** np.arange(digits, dtype=np.uint32)
    codes = np.zeros((values.size, digits), dtype=np.uint32)  # NUL after the last digit: <U ends there
    for i in range(digits):  # character i of each value: its digit at power count - 1 - i
        place = count - np.int8(1 + i)
        has = place >= 0
        codes[has, i] = (number[has] // power[place[has]]) % 10 + ord("0")
    return codes.view(f"<U{digits}").reshape(values.size)


def sorted_preorder(table: TreeTable, column: str | None, descending: bool = False) -> np.ndarray:
    """All rows in pre-order with siblings ordered by ``column`` (None: sshare's order).

    Empty cells (NaN) sort last in both directions; ties keep sshare's order.
    """
    n = table.size
    if column is None:
        return np.arange(n)
    key = table.keys[column].astype(float)
    key = -key if descending else key.copy()
    key[np.isnan(key)] = np.inf
    rows = np.arange(1, n)
    kids = rows[np.lexsort((rows, key[rows], table.parent[rows]))]
    parents = table.parent[kids]
    start = np.searchsorted(parents, np.arange(n), side="left")
    end = np.searchsorted(parents, np.arange(n), side="right")
    order = np.empty(n, dtype=np.int64)
    stack, i = [0], 0
    kid_list = kids.tolist()
    start_l, end_l = start.tolist(), end.tolist()
    while stack:  # iterative DFS: O(n) Python steps, once per sort change
        r = stack.pop()
        order[i] = r
        i += 1
        if start_l[r] != end_l[r]:
            stack.extend(reversed(kid_list[start_l[r]:end_l[r]]))
    return order


def ancestors_mask(table: TreeTable, rows: np.ndarray) -> np.ndarray:
    """True for every proper ancestor of ``rows``."""
    # No np.unique: numpy 2.4's asks np.ma.is_masked, and the first call imports numpy.ma on the
    # UI thread before the first data frame (25 file calls, 57-97 ms on the loaded 2-core box).
    # A row already marked stops its walk, so each level is at most len(rows) long.
    mark = np.zeros(table.size, dtype=bool)
    up = table.parent[rows]
    while True:
        up = up[up >= 0]
        up = up[~mark[up]]
        if not up.size:
            return mark
        mark[up] = True
        up = table.parent[up]


_REGEX_CHARS = frozenset(".^$*+?{}[]\\|()")


def filter_mask(table: TreeTable, pattern: str) -> np.ndarray:
    """Rows whose name matches ``pattern`` (``re.search``, case-insensitive unless it has capitals).

    A pattern without regex metacharacters is a plain substring: it is searched vectorised
    (same result, the filter's common case while typing). Raises :class:`re.error` for an
    invalid pattern.
    """
    case_sensitive = any(ch.isupper() for ch in pattern)
    rx = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)  # validates every pattern
    plain = pattern.isascii() and not _REGEX_CHARS.intersection(pattern)
    if plain and not case_sensitive and table.names_lower is not None:
        return np.char.find(table.names_lower, pattern) >= 0
    return np.fromiter((rx.search(s) is not None for s in table.names), dtype=bool, count=table.size)


def visible_rows(table: TreeTable, order: np.ndarray, expanded: np.ndarray,
                 keep: np.ndarray | None = None) -> np.ndarray:
    """Rows of ``order`` whose ancestors are all expanded (and, with ``keep``, that are kept)."""
    shown = np.ones(table.size, dtype=bool)
    for rows in table.by_depth:  # one vectorised pass per tree level
        p = table.parent[rows]
        shown[rows] = shown[p] & expanded[p]
    if keep is not None:
        shown &= keep
    return order[shown[order]]


def carry_expanded(old: TreeTable, old_expanded: np.ndarray, new: TreeTable,
                   default: np.ndarray) -> np.ndarray:
    """``new``'s expansion after a refresh: accounts present before keep their state (matched
    by account name, unique in Slurm); new accounts take ``default``."""
    old_acc, new_acc = ~old.is_user, np.flatnonzero(~new.is_user)
    names = new.names[new_acc]
    known = np.isin(names, old.names[old_acc])
    opened = np.isin(names, old.names[old_acc & old_expanded])
    out = default.copy()
    out[new_acc[known]] = opened[known]
    return out


def same_row(old: TreeTable, row: int, new: TreeTable) -> int | None:
    """The row of ``new`` holding ``old``'s association ``row`` (same name, kind and parent name)."""
    parent = int(old.parent[row])
    for hit in np.flatnonzero(new.names == old.names[row]).tolist():
        new_parent = int(new.parent[hit])
        if new.is_user[hit] == old.is_user[row] and (
                (parent < 0 and new_parent < 0)
                or (parent >= 0 and new_parent >= 0 and new.names[new_parent] == old.names[parent])):
            return hit
    return None


def descendants_mask(table: TreeTable, rows_mask: np.ndarray) -> np.ndarray:
    """True for every proper descendant of a row in ``rows_mask``."""
    below = np.zeros(table.size, dtype=bool)
    for rows in table.by_depth:
        p = table.parent[rows]
        below[rows] = rows_mask[p] | below[p]
    return below
