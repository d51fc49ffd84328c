"""Text exactly as OpenPBS ``pbsfs`` prints it (``src/scheduler/pbsfs.cpp``), from a tree.

C ``printf`` and Python ``%`` both round the exact binary value half to even, so the
``%.0f`` usage columns agree (10.5 prints 10). Floats are widened the way C promotes them:
``tree_percentage * 100`` is a float product before ``printf`` sees it.

Every function returns the lines joined by ``\\n`` with a final newline, like the command.
"""

from __future__ import annotations

import numpy as np

from tui.engine.pbs import PbsFairshare, compare_path, compute
from tui.engine.pbs_tree import depth_levels, path_rows, row_of
from tui.model import PbsTree


def _percent(perc: np.float32) -> float:
    """``tree_percentage * 100`` in float, as ``pbsfs`` passes it to ``printf``."""
    return float(np.float32(perc) * np.float32(100))


def listing(tree: PbsTree, fs: PbsFairshare | None = None) -> str:
    """``pbsfs`` / ``pbsfs -p``: the units line, then one line per node in pre-order."""
    fs = fs or compute(tree)
    lines = [f"Fairshare usage units are in: {tree.usage_res}"]
    for i in range(len(tree.name)):
        lines.append(
            "%-10s: Grp: %-5d  cgrp: %-5dShares: %-6d Usage: %-6.0f Perc: %6.3f%%"
            % (tree.name[i], tree.resgroup[i], tree.cresgroup[i], tree.shares[i], tree.usage[i],
               _percent(fs.tree_percentage[i]))
        )
    return "\n".join(lines) + "\n"


def tree_text(tree: PbsTree) -> str:
    """``pbsfs -t``: ``%*s%s(%d)`` with width 5·depth and the string ``" "``.

    ``%*s`` never prints less than its string, so the root (width 0) still gets one space.
    """
    depth = np.zeros(len(tree.name), dtype=np.int64)
    for d, rows in enumerate(depth_levels(tree.parent)):
        depth[rows] = d
    return "".join("%*s%s(%d)\n" % (5 * int(depth[i]), " ", tree.name[i], tree.cresgroup[i])
                   for i in range(len(tree.name)))


def entity(tree: PbsTree, name: str | int, fs: PbsFairshare | None = None) -> str:
    """``pbsfs -g ENTITY``: the entity's values, then its path from the root.

    Raises
    ------
    KeyError
        ``Fairshare Entity NAME does not exist.``
    """
    fs = fs or compute(tree)
    i = row_of(tree, name)
    out = (
        "fairshare entity: %s\n"
        "Resgroup\t\t: %d\n"
        "cresgroup\t\t: %d\n"
        "Shares\t\t\t: %d\n"
        "Percentage\t\t: %f%%\n"
        "fairshare_tree_usage\t: %f\n"
        "usage\t\t\t: %.0f (%s)\n"
        "usage/perc\t\t: %.0f\n"
        % (tree.name[i], tree.resgroup[i], tree.cresgroup[i], tree.shares[i], _percent(fs.tree_percentage[i]),
           float(fs.tree_usage[i]), tree.usage[i], tree.usage_res, fs.usage_per_perc[i])
    )
    out += "Path from root: \n"
    for g in path_rows(tree.parent, i):
        out += "%-10s: %5d %10.0f / %5.3f = %.0f\n" % (
            tree.name[g], tree.cresgroup[g], tree.usage[g], float(fs.tree_percentage[g]),
            fs.usage_per_perc[g])
    return out


def compare(tree: PbsTree, first: str, second: str, fs: PbsFairshare | None = None) -> str:
    """``pbsfs -c E1 E2``: the more deserving entity's name, or ``E1 == E2``.

    Raises
    ------
    KeyError
        ``Fairshare Entity NAME does not exist.`` (the first missing one, as pbsfs checks).
    """
    fs = fs or compute(tree)
    a, b = row_of(tree, first), row_of(tree, second)
    rc = compare_path(tree, a, b, perc=fs.tree_percentage)
    if rc == 0:
        return f"{tree.name[a]} == {tree.name[b]}\n"
    return f"{tree.name[a if rc < 0 else b]}\n"
