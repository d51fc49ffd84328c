"""Tree structure shared by Slurm's classic and Fair Tree algorithms (spec section 1.1).

Slurm links every association to its *fairshare parent* ``F(a)``: the nearest proper ancestor
whose shares are not ``parent``. A ``parent`` account is therefore transparent: its children sit
in its fairshare parent's ``children_list``, beside it. ``level_shares`` of an association is the
sum of raw shares over that list (``parent`` members count 0), kept as a ``uint32`` as in Slurm.

All functions take the arrays of :class:`tui.model.AssocTree` and work level by level, so the
cost is O(n · depth) array operations with no per-row Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.model import NO_VAL, USE_PARENT, AssocTree, depth_of, rows_by_depth


@dataclass(frozen=True, eq=False)
class Structure:
    """Derived links of an association tree.

    Attributes
    ----------
    fs_parent : int64 array
        Fairshare parent ``F(a)`` of every row; -1 for the root.
    level_shares : int64 array
        ``level_shares`` of every row (uint32 arithmetic); :data:`NO_VAL` for the root.
    fs_depth : int64 array
        Depth in the fairshare tree (root 0, the root's fairshare children 1, ...).
    levels : list of int64 arrays
        ``levels[k]`` holds the rows with ``fs_depth == k + 1``, in row order.
    use_parent : bool array
        Rows whose raw shares are ``parent``.
    """

    fs_parent: np.ndarray
    level_shares: np.ndarray
    fs_depth: np.ndarray
    levels: list[np.ndarray]
    use_parent: np.ndarray


def structure(tree: AssocTree) -> Structure:
    """Compute fairshare parents, level shares and fairshare-tree levels of ``tree``."""
    parent = tree.parent
    use_parent = tree.shares_raw == USE_PARENT
    use_parent[0] = False  # the root is never "parent", whatever a source says

    # F(a): walk up while the candidate is a ``parent`` association.
    fs_parent = parent.copy()
    while True:
        up = fs_parent >= 0
        up[up] = use_parent[fs_parent[up]]
        if not up.any():
            break
        fs_parent[up] = parent[fs_parent[up]]

    # level_shares: uint32 sum of the raw shares of each fairshare-children list.
    own = np.where(use_parent, 0, tree.shares_raw).astype(np.int64)
    own[0] = 0
    child = np.arange(1, tree.size)
    # float64 sums are exact here (< 2**53); Slurm's uint32 then wraps.
    sums = np.bincount(fs_parent[child], weights=own[child], minlength=tree.size).astype(np.int64)
    sums &= 0xFFFFFFFF
    level_shares = np.empty(tree.size, dtype=np.int64)
    level_shares[child] = sums[fs_parent[child]]
    level_shares[0] = NO_VAL

    fs_depth = depth_of(fs_parent)
    levels = rows_by_depth(fs_depth)[1:]  # the root's level is never computed
    return Structure(fs_parent, level_shares, fs_depth, levels, use_parent)


def norm_usage(tree: AssocTree) -> np.ndarray:
    """Slurm's ``usage_norm``: raw usage over the root's, capped at 1 (long double).

    The root's own value is never computed by Slurm (sshare prints it empty): NaN here.
    """
    root = tree.usage_raw[0]
    if root == 0:
        out = np.zeros(tree.size, dtype=np.longdouble)
    else:
        out = np.minimum(tree.usage_raw / root, np.longdouble(1))
    out[0] = np.nan
    return out
