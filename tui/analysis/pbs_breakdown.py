"""Why a PBS Professional entity has its fairshare: the path from TREEROOT, level by level.

:func:`explain_pbs` gives, for every node from ``TREEROOT`` down to one entity of a PBS
:class:`~tui.analysis.standing.Standing`, the formula and its numbers for

* the percentage (``tree_percentage``): ``shares / Σ sibling shares × parent's percentage``;
* ``fairshare_tree_usage``: ``usage / U_root`` for TREEROOT's children, deeper
  ``v + (uf(parent) − v) × shares / Σ sibling shares`` with ``v = usage / U_root``;
* ``usage / perc``, the quantity ``compare_path`` (``pbsfs -c``) compares at each level;

then ``fairshare_factor = 2^-(fairshare_tree_usage / percentage)``. Every number is the
engine's (:mod:`tui.engine.pbs`, C ``float`` arithmetic) printed as ``pbsfs -g`` prints it
(:mod:`tui.formats.pbsfs`), so the pane and ``pbsfs -g ENTITY`` agree digit for digit.

No Textual here: the breakdown pane only renders a :class:`PbsExplanation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.analysis.standing import Standing
from tui.engine.pbs_tree import path_rows, row_of
from tui.formats.pbsfs import entity, path_line, percent_text

__all__ = ["PbsStep", "PbsExplanation", "explain_pbs"]


@dataclass(frozen=True)
class PbsStep:
    """One node on the path from TREEROOT to the explained entity (numbers as ``pbsfs -g`` prints)."""

    row: int
    name: str
    depth: int
    """Depth in the fairshare tree (TREEROOT 0)."""
    shares: int
    """-1 for TREEROOT."""
    sibling_shares: int | None
    """Σ shares of the node and its siblings (None for TREEROOT)."""
    usage: float
    """Usage in ``fairshare_usage_res`` units (1 means none)."""
    percentage: str
    """Share of the machine in percent, ``%f`` (``10.000001``)."""
    percentage_formula: str
    tree_usage: str
    """``fairshare_tree_usage``, ``%f`` (``0.333750``); TREEROOT's is never computed."""
    tree_usage_formula: str
    usage_per_perc: str
    """``%.0f``; ``-1`` where the percentage is 0."""
    usage_per_perc_formula: str
    path_line: str
    """This node's ``Path from root`` line of ``pbsfs -g``."""


@dataclass(frozen=True)
class PbsExplanation:
    """The full breakdown of one PBS entity's fairshare."""

    row: int
    name: str
    usage_res: str
    steps: tuple[PbsStep, ...]
    """TREEROOT first, the explained entity last."""
    factor: float
    """``fairshare_factor``, 0..1 (0 where the percentage is 0)."""
    factor_text: str
    """``%f``, as ``job_sort_formula`` receives it."""
    factor_formula: str
    summary: str
    pbsfs_text: str
    """``pbsfs -g ENTITY``'s output for the same tree."""


def _f(x: float | np.float32) -> str:
    return "%f" % x


def _step(standing: Standing, row: int, depth: int) -> PbsStep:
    tree, fs = standing.snapshot.pbs, standing.pbs
    assert tree is not None and fs is not None
    parent = int(tree.parent[row])
    usage = float(tree.usage[row])
    perc = percent_text(fs.tree_percentage[row])
    per_perc = "%.0f" % fs.usage_per_perc[row]
    if parent < 0:
        return PbsStep(row, str(tree.name[row]), 0, int(tree.shares[row]), None, usage, perc,
                       "the whole machine: 100%", "", "not computed for TREEROOT (U_root = its usage)",
                       per_perc, "%.0f / %.3f = %s" % (usage, 1.0, per_perc), path_line(tree, fs, row))
    siblings = int(tree.shares[tree.parent == parent].sum())
    shares = int(tree.shares[row])
    group = float(fs.group_percentage[row])
    if group == 0:
        perc_formula = (f"{shares} / {siblings} × {percent_text(fs.tree_percentage[parent])}% = 0% "
                        "(no shares here: a zero percentage)")
    else:
        perc_formula = f"{shares} / {siblings} × {percent_text(fs.tree_percentage[parent])}% = {perc}%"
    root_usage = float(tree.usage[0])
    v = np.float32(usage / root_usage)
    uf = _f(fs.tree_usage[row])
    if int(tree.parent[parent]) < 0:
        uf_formula = "usage / U_root = %.0f / %.0f = %s" % (usage, root_usage, uf)
    else:
        uf_formula = ("v + (uf(%s) − v) × %d/%d, v = %.0f / %.0f = %s: %s + (%s − %s) × %s = %s"
                      % (tree.name[parent], shares, siblings, usage, root_usage, _f(v), _f(v),
                         _f(fs.tree_usage[parent]), _f(v), _f(group), uf))
    if fs.tree_percentage[row] == 0:
        pp_formula = "percentage 0: pbsfs prints -1 (always the least deserving)"
    else:
        pp_formula = "%.0f / %.3f = %s" % (usage, float(fs.tree_percentage[row]), per_perc)
    return PbsStep(row, str(tree.name[row]), depth, shares, siblings, usage, perc, perc_formula, uf, uf_formula,
                   per_perc, pp_formula, path_line(tree, fs, row))


def explain_pbs(standing: Standing, entity_row: int | str) -> PbsExplanation:
    """Explain the fairshare of one entity (a row of ``standing.snapshot.pbs`` or its name).

    Raises
    ------
    ValueError
        The standing is not a PBS one.
    KeyError
        No such entity (``Fairshare Entity NAME does not exist.``, as pbsfs says).
    """
    tree, fs = standing.snapshot.pbs, standing.pbs
    if tree is None or fs is None:
        raise ValueError("this snapshot has no PBS fairshare tree")
    row = row_of(tree, entity_row)
    steps = tuple(_step(standing, r, d) for d, r in enumerate(path_rows(tree.parent, row)))
    me = steps[-1]
    factor = float(fs.factor[row])
    perc = float(fs.tree_percentage[row])
    uf = float(fs.tree_usage[row])
    if row == 0:
        formula = "TREEROOT is the whole machine: it has no fairshare_factor of its own"
        summary = (f"TREEROOT holds everyone's usage: {tree.usage[0]:,.0f} {tree.usage_res} "
                   "(1 means none). Select an entity to see its path.")
    elif perc == 0:
        formula = "percentage 0: fairshare_factor = 0"
        summary = (f"{me.name} has no share of the machine (0 shares, or below a group with none): its "
                   "factor is 0 and, with fairshare_enforce_no_shares (the default), its jobs never run.")
    else:
        formula = (f"2^-(fairshare_tree_usage / percentage) = 2^-({_f(uf)} / {_f(float('%f' % perc))}) "
                   f"= {_f(factor)}")
        used = float(tree.usage[row]) / float(tree.usage[0])
        verdict = ("more than its share" if uf > perc else "less than its share" if uf < perc
                   else "exactly its share")
        summary = (f"{me.name} is entitled to {me.percentage}% of the machine and its usage is "
                   f"{tree.usage[row]:,.0f} {tree.usage_res} ({used:.2%} of TREEROOT's). Weighted up the "
                   f"tree, its fairshare_tree_usage {_f(uf)} is {verdict} ({_f(perc)}), so its "
                   f"fairshare_factor is {_f(factor)} (0.5 = exactly its share). Against another entity the "
                   "scheduler compares usage/perc at the first level where their paths differ.")
    return PbsExplanation(row, me.name, tree.usage_res, steps, factor, _f(factor), formula, summary,
                          entity(tree, row, fs))
