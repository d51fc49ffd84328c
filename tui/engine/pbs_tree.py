"""Shape of a PBS fairshare tree: where each entity lands and what its usage becomes on load.

Mirrors OpenPBS ``preload_tree``, ``parse_group``, ``add_child``, ``find_alloc_ginfo`` and
``read_usage_v2`` (``src/scheduler/fairshare.cpp``):

* ``TREEROOT`` (resgroup -1, cresgroup 0, shares -1) and its child ``unknown`` (resgroup 0,
  cresgroup 1, shares ``unknown_shares``, default 0) always exist.
* A new child is *prepended* to its parent's list, so siblings come out in reverse file order
  and ``unknown`` (added first) is the last child of ``TREEROOT``.
* A usage record for an entity not in ``resource_group`` creates it under ``unknown`` with
  shares 1, resgroup 1, cresgroup -1.
* Loading a record sets the node's usage and, for a leaf, *adds* it to every ancestor, so after a
  load an internal node holds ``1 + Σ leaf usages present``. Usage 1 means "no usage".

Pure functions: no I/O. Rows of the resulting :class:`~tui.model.PbsTree` are in pre-order with
siblings in OpenPBS child-list order, i.e. the order ``pbsfs`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from tui.model import PbsTree, depth_of, rows_by_depth

ROOT_NAME = "TREEROOT"
UNKNOWN_NAME = "unknown"
#: ``FAIRSHARE_MIN_USAGE``: every node starts here and decay never goes below it.
MIN_USAGE = 1.0
#: ``UNSPECIFIED`` in OpenPBS ``constant.h``: cresgroup of entities created under ``unknown``.
UNSPECIFIED = -1


@dataclass(frozen=True)
class GroupEntry:
    """One ``resource_group`` line: ``name cresgroup parent shares``.

    ``parent`` is an entity name; ``root`` (as in the file) and ``TREEROOT`` both mean the root.
    """

    name: str
    cresgroup: int
    parent: str
    shares: int


class TreeShapeError(ValueError):
    """An entry that cannot be placed; ``index`` is its position in the input sequence."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


@dataclass
class _Node:
    name: str
    resgroup: int
    cresgroup: int
    shares: int
    usage: float = MIN_USAGE
    parent: int = -1
    children: list[int] = field(default_factory=list)


def _add_child(nodes: list[_Node], node: _Node, parent: int) -> int:
    """``add_child``: prepend, and inherit the parent's cresgroup as resgroup."""
    nodes.append(node)
    idx = len(nodes) - 1
    node.parent = parent
    node.resgroup = nodes[parent].cresgroup
    nodes[parent].children.insert(0, idx)
    return idx


def _flatten(nodes: list[_Node], usage_res: str, last_decay: int | None) -> PbsTree:
    order: list[int] = []
    stack = [0]
    while stack:  # pre-order: node, its children (list order), then its next sibling
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(nodes[i].children))
    row = {old: new for new, old in enumerate(order)}
    return PbsTree(
        name=np.array([nodes[i].name for i in order], dtype=object),
        parent=np.array([row.get(nodes[i].parent, -1) for i in order], dtype=np.int64),
        resgroup=np.array([nodes[i].resgroup for i in order], dtype=np.int64),
        cresgroup=np.array([nodes[i].cresgroup for i in order], dtype=np.int64),
        shares=np.array([nodes[i].shares for i in order], dtype=np.int64),
        usage=np.array([nodes[i].usage for i in order], dtype=np.float64),
        usage_res=usage_res,
        last_decay=last_decay,
    )


def _nodes(tree: PbsTree) -> list[_Node]:
    nodes = [
        _Node(str(tree.name[i]), int(tree.resgroup[i]), int(tree.cresgroup[i]), int(tree.shares[i]),
              float(tree.usage[i]), int(tree.parent[i]))
        for i in range(len(tree.name))
    ]
    for i in range(1, len(nodes)):
        nodes[nodes[i].parent].children.append(i)  # row order is already child-list order
    return nodes


def build_tree(entries: Iterable[GroupEntry], unknown_shares: int = 0, usage_res: str = "cput") -> PbsTree:
    """The tree ``resource_group`` describes, before any usage is loaded (all usage 1).

    Parameters
    ----------
    entries : iterable of GroupEntry
        In file order. A parent must appear before its children.
    unknown_shares : int
        ``unknown_shares`` from ``sched_config`` (default 0: unknown entities get no share).
    usage_res : str
        ``fairshare_usage_res``, kept for display.

    Raises
    ------
    TreeShapeError
        Duplicate name (including ``TREEROOT``/``unknown``) or a parent not defined before.
    """
    nodes = [_Node(ROOT_NAME, -1, 0, -1)]
    _add_child(nodes, _Node(UNKNOWN_NAME, 0, 1, unknown_shares), 0)
    index = {ROOT_NAME: 0, UNKNOWN_NAME: 1}
    for k, e in enumerate(entries):
        if e.name in index:
            raise TreeShapeError(f"entity {e.name} is not unique", k)
        parent = 0 if e.parent == "root" else index.get(e.parent)
        if parent is None:
            raise TreeShapeError(f"parent {e.parent} of {e.name} is not defined before it", k)
        index[e.name] = _add_child(nodes, _Node(e.name, 0, e.cresgroup, e.shares), parent)
    return _flatten(nodes, usage_res, None)


def load_usage(
    tree: PbsTree,
    records: Iterable[tuple[str, float]],
    trim: bool = False,
    last_decay: int | None = None,
) -> PbsTree:
    """Apply usage-file records in order, as ``read_usage_v2`` does.

    Parameters
    ----------
    tree : PbsTree
        Usually fresh from :func:`build_tree` (all usage 1).
    records : iterable of (name, usage)
        Usage in usage units, >= 0, in file order.
    trim : bool
        ``pbsfs -e``: drop records for entities not already in the tree instead of creating them
        under ``unknown``.
    last_decay : int, optional
        Epoch seconds from the file header, kept on the result.

    Returns
    -------
    PbsTree
        Each record sets its node's usage; a leaf's value is also added to every ancestor.
    """
    nodes = _nodes(tree)
    index = {n.name: i for i, n in enumerate(nodes)}
    for name, value in records:
        i = index.get(name)
        if i is None:
            if trim or UNKNOWN_NAME not in index:
                continue
            i = _add_child(nodes, _Node(name, 0, UNSPECIFIED, 1), index[UNKNOWN_NAME])
            index[name] = i
        nodes[i].usage = float(value)
        if not nodes[i].children:
            p = nodes[i].parent
            while p >= 0:
                nodes[p].usage += float(value)
                p = nodes[p].parent
    return _flatten(nodes, tree.usage_res, tree.last_decay if last_decay is None else last_decay)


def set_usage(tree: PbsTree, values: Mapping[str, float]) -> PbsTree:
    """A copy of ``tree`` with the usage of the named nodes replaced (no propagation).

    Used for a ``pbsfs`` listing, which shows every node's usage as it stood.
    """
    usage = np.asarray(tree.usage, dtype=np.float64).copy()
    for i, name in enumerate(tree.name):
        if name in values:
            usage[i] = float(values[name])
    return replace(tree, usage=usage)


def file_records(tree: PbsTree) -> list[tuple[str, float]]:
    """The records ``write_usage`` would save, in its order.

    Only leaves whose usage is not exactly 1, never ``unknown``. ``rec_write_usage`` visits a
    node, then its *siblings*, then its children, which is not pre-order.
    """
    nodes = _nodes(tree)
    out: list[tuple[str, float]] = []

    def visit(chain: list[int]) -> None:
        for i in chain:  # the node and its siblings after it, before any child
            n = nodes[i]
            if n.usage != MIN_USAGE and not n.children and n.name != UNKNOWN_NAME:
                out.append((n.name, n.usage))
        for i in reversed(chain):  # recursion unwinds from the last sibling back
            visit(nodes[i].children)

    visit([0])
    return out


def depth_levels(parent: np.ndarray) -> list[np.ndarray]:
    """Rows grouped by depth: ``levels[d]`` holds the rows at depth ``d`` (root at 0), row order."""
    return rows_by_depth(depth_of(np.asarray(parent, dtype=np.int64)))


def path_rows(parent: np.ndarray, row: int) -> list[int]:
    """Rows from the root down to ``row`` (OpenPBS ``gpath``)."""
    out = [row]
    while parent[out[-1]] >= 0:
        out.append(int(parent[out[-1]]))
    return out[::-1]


def row_of(tree: PbsTree, entity: int | str) -> int:
    """Row of an entity given by row or name; ``KeyError`` with pbsfs's message if absent."""
    if isinstance(entity, (int, np.integer)):
        return int(entity)
    hits = np.flatnonzero(tree.name == entity)
    if len(hits) == 0:
        raise KeyError(f"Fairshare Entity {entity} does not exist.")
    return int(hits[0])

