"""PBS Professional / OpenPBS fairshare (spec section 7), bit for bit as the scheduler computes it.

OpenPBS keeps ``tree_percentage``, ``group_percentage`` and ``usage_factor`` as C ``float`` and
usage as ``double`` (``src/scheduler/fairshare.cpp``); every function here does the same
arithmetic in ``numpy.float32`` / ``float64`` so printed values (``24.000000%``,
``10.000001%``, ``0.832973``) match ``pbsfs`` to the last digit.

Functions take a :class:`tui.model.PbsTree` (rows in pre-order, row 0 ``TREEROOT``, siblings in
OpenPBS child-list order) and work level by level. Building the tree from ``resource_group``
lines and loading usage records also live here (:mod:`tui.engine.pbs_tree`), because where a
node lands and what an internal node's usage becomes are part of the algorithm.

Usage is in ``fairshare_usage_res`` units (``cput``: CPU-seconds by default); 1 means zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.engine.pbs_tree import MIN_USAGE, depth_levels, path_rows, row_of
from tui.model import PbsTree

#: ``fairshare_decay_factor`` default (``parse.cpp``).
DEFAULT_DECAY_FACTOR = 0.5
#: ``fairshare_decay_time`` default in seconds (``parse.cpp``).
DEFAULT_DECAY_TIME_S = 86400


@dataclass(frozen=True, eq=False)
class PbsFairshare:
    """Everything ``pbsfs`` derives from a tree, one value per row.

    Attributes
    ----------
    group_percentage : float32 array
        ``shares / Σ sibling shares`` (fraction, 0..1); 0 for ``TREEROOT``.
    tree_percentage : float32 array
        Fraction of the machine (``fairshare_perc``, "Perc"); 1 for ``TREEROOT``.
    tree_usage : float32 array
        ``fairshare_tree_usage`` (``usage_factor``), dimensionless; 0 for ``TREEROOT``.
    usage_per_perc : float64 array
        ``usage / tree_percentage`` in usage units; -1 where the percentage is 0.
    factor : float64 array
        ``fairshare_factor = 2^(-tree_usage/tree_percentage)``, 0..1; 0 where the percentage is 0.
    """

    group_percentage: np.ndarray
    tree_percentage: np.ndarray
    tree_usage: np.ndarray
    usage_per_perc: np.ndarray
    factor: np.ndarray


def _sibling_share_sums(tree: PbsTree) -> np.ndarray:
    """``count_shares`` of every row's sibling group, per row (int64; 0 for TREEROOT)."""
    parent = np.asarray(tree.parent, dtype=np.int64)
    # float64 sums are exact for int shares (< 2**53)
    totals = np.bincount(parent[1:], weights=np.asarray(tree.shares, dtype=np.float64)[1:],
                         minlength=len(parent)).astype(np.int64)
    out = np.zeros(len(parent), dtype=np.int64)
    out[1:] = totals[parent[1:]]
    return out


def percentages(tree: PbsTree, levels: list[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Group and tree percentages as OpenPBS ``calc_fair_share_perc`` computes them.

    Parameters
    ----------
    tree : PbsTree
        Entities in pre-order; ``shares`` integers, sibling sums must fit a C ``int``.

    Returns
    -------
    group_percentage, tree_percentage : float32 arrays
        Fractions (not percent). ``group = (float)shares / T`` and ``tree = group * tree(parent)``
        in float arithmetic, both 0 when ``T * tree(parent) == 0`` (a zero-share group, or
        anything below a zero-percentage node). ``TREEROOT`` has group 0, tree 1.
    """
    n = len(tree.parent)
    parent = np.asarray(tree.parent, dtype=np.int64)
    shares = np.asarray(tree.shares, dtype=np.float32)  # C converts int -> float for the division
    total = _sibling_share_sums(tree).astype(np.float32)
    group = np.zeros(n, dtype=np.float32)
    perc = np.zeros(n, dtype=np.float32)
    perc[0] = np.float32(1.0)
    for rows in (levels if levels is not None else depth_levels(parent))[1:]:
        pp = perc[parent[rows]]
        live = total[rows] * pp != 0  # the test is on the float product, as in C
        g = np.zeros(len(rows), dtype=np.float32)
        g[live] = shares[rows][live] / total[rows][live]
        group[rows] = g
        perc[rows] = np.where(live, g * pp, np.float32(0))
    return group, perc


def group_percentage(tree: PbsTree) -> np.ndarray:
    """Fraction of its sibling group's shares each row holds (float32; see :func:`percentages`)."""
    return percentages(tree)[0]


def tree_percentage(tree: PbsTree) -> np.ndarray:
    """Fraction of the whole machine each row is entitled to (float32, ``fairshare_perc``)."""
    return percentages(tree)[1]


def fairshare_tree_usage(tree: PbsTree, group: np.ndarray | None = None,
                         levels: list[np.ndarray] | None = None) -> np.ndarray:
    """``fairshare_tree_usage`` of every row, as OpenPBS ``calc_usage_factor``.

    Parameters
    ----------
    tree : PbsTree
        Entities with ``usage`` in usage units (>= 1).
    group : float32 array, optional
        Group percentages; computed with :func:`percentages` when omitted.

    Returns
    -------
    float32 array
        Dimensionless. For ``TREEROOT``'s children ``(float)(usage / U_root)``; deeper
        ``v + (uf(parent) - v) * group`` with ``v = (float)(usage / U_root)``, all in float.
        ``TREEROOT`` itself is never computed and stays 0.
    """
    if group is None:
        group = percentages(tree)[0]
    parent = np.asarray(tree.parent, dtype=np.int64)
    usage = np.asarray(tree.usage, dtype=np.float64)
    v = (usage / usage[0]).astype(np.float32)  # double division, stored in a float
    uf = np.zeros(len(parent), dtype=np.float32)
    levels = levels if levels is not None else depth_levels(parent)
    if len(levels) > 1:
        uf[levels[1]] = v[levels[1]]
    for rows in levels[2:]:
        uf[rows] = v[rows] + (uf[parent[rows]] - v[rows]) * group[rows]
    return uf


def usage_per_perc(usage: np.ndarray, perc: np.ndarray) -> np.ndarray:
    """``usage / tree_percentage`` in usage units (double / float), -1 where the percentage is 0."""
    usage = np.asarray(usage, dtype=np.float64)
    perc64 = np.asarray(perc, dtype=np.float32).astype(np.float64)
    out = np.full(len(usage), -1.0)
    nz = perc64 != 0
    out[nz] = usage[nz] / perc64[nz]
    return out


def fairshare_factor(uf: np.ndarray, perc: np.ndarray) -> np.ndarray:
    """``fairshare_factor = pow(2, -(uf / perc))``, 0 where ``perc`` is 0 (``job_info.cpp``).

    The quotient is a float (both operands are), the power is taken in double.

    Parameters
    ----------
    uf : float32 array
        ``fairshare_tree_usage``, dimensionless.
    perc : float32 array
        ``tree_percentage`` as a fraction.

    Returns
    -------
    float64 array
        In [0, 1]; 0.5 means the entity uses exactly its share.
    """
    uf = np.asarray(uf, dtype=np.float32)
    perc = np.asarray(perc, dtype=np.float32)
    out = np.zeros(len(uf))
    nz = perc != 0
    out[nz] = np.power(2.0, -(uf[nz] / perc[nz]).astype(np.float64))
    return out


def compute(tree: PbsTree) -> PbsFairshare:
    """All derived per-row values of ``tree`` (see :class:`PbsFairshare`)."""
    levels = depth_levels(np.asarray(tree.parent, dtype=np.int64))
    group, perc = percentages(tree, levels)
    uf = fairshare_tree_usage(tree, group, levels)
    return PbsFairshare(
        group_percentage=group,
        tree_percentage=perc,
        tree_usage=uf,
        usage_per_perc=usage_per_perc(tree.usage, perc),
        factor=fairshare_factor(uf, perc),
    )


def formula_keywords(fs: PbsFairshare, row: int) -> dict[str, float]:
    """The fairshare values ``job_sort_formula`` sees for an entity.

    ``job_info.cpp`` writes them into the Python environment with ``%f``, so the formula gets
    them rounded to six decimals (``fairshare_perc`` 0.24, ``fairshare_tree_usage`` 0.832973).

    Returns
    -------
    dict
        ``fairshare_perc`` (fraction), ``fair_share_perc`` (its deprecated alias),
        ``fairshare_tree_usage`` (dimensionless) and ``fairshare_factor`` (0..1).
    """
    perc = float("%f" % fs.tree_percentage[row])
    return {
        "fairshare_perc": perc,
        "fair_share_perc": perc,
        "fairshare_tree_usage": float("%f" % fs.tree_usage[row]),
        "fairshare_factor": float("%f" % fs.factor[row]),
    }


def compare_path(
    tree: PbsTree,
    first: int | str,
    second: int | str,
    perc: np.ndarray | None = None,
    temp_usage: np.ndarray | None = None,
) -> int:
    """Which of two entities is more deserving (OpenPBS ``compare_path``, ``pbsfs -c``).

    The root-to-entity paths are walked together; at every depth where the nodes differ,
    ``temp_usage / tree_percentage`` (double / float) decides, and an exact tie moves on to the
    next depth. A node with percentage <= 0 loses to one with a positive percentage; two such
    nodes are equal. If one path is a prefix of the other the result is 0.

    Parameters
    ----------
    tree : PbsTree
    first, second : int or str
        Rows or entity names.
    perc : float32 array, optional
        Tree percentages (computed when omitted).
    temp_usage : array, optional
        Usage including jobs started this cycle, in usage units; ``tree.usage`` when omitted
        (``pbsfs`` has no running jobs).

    Returns
    -------
    int
        -1 if ``first`` is more deserving, 1 if ``second`` is, 0 if equal.
    """
    if perc is None:
        perc = percentages(tree)[1]
    usage = np.asarray(tree.usage if temp_usage is None else temp_usage, dtype=np.float64)
    p1 = path_rows(tree.parent, row_of(tree, first))
    p2 = path_rows(tree.parent, row_of(tree, second))
    for a, b in zip(p1, p2):
        if a == b:
            continue
        pa, pb = float(perc[a]), float(perc[b])
        if pa <= 0 < pb:
            return 1
        if pb <= 0 < pa:
            return -1
        if pa <= 0 and pb <= 0:
            return 0
        ra, rb = usage[a] / pa, usage[b] / pb
        if ra < rb:
            return -1
        if rb < ra:
            return 1
    return 0


def decay_multiplier(factor: float) -> float:
    """The multiplier one decay applies: ``fairshare_decay_factor`` stored as a C float.

    ``decay_fairshare_tree`` does ``usage *= conf.fairshare_decay_factor`` with a ``float``
    factor, so 0.9 becomes 0.8999999761581421.
    """
    return float(np.float32(factor))


def decay_usage(usage: np.ndarray, factor: float = DEFAULT_DECAY_FACTOR, times: int = 1) -> np.ndarray:
    """Usage of every node after ``times`` decays (``decay_fairshare_tree``).

    Parameters
    ----------
    usage : array
        Usage of every node (TREEROOT, internal, leaves, unknown alike), usage units.
    factor : float
        ``fairshare_decay_factor``, 0 < factor < 1.
    times : int
        Number of decays.

    Returns
    -------
    float64 array
        Each decay multiplies by the float factor (in double) and floors at 1. Internal
        nodes are decayed on their own, so afterwards they are no longer ``1 + Σ leaves``.
    """
    out = np.asarray(usage, dtype=np.float64).copy()
    mult = decay_multiplier(factor)
    for _ in range(times):
        out = np.maximum(out * mult, MIN_USAGE)
    return out


def decays_due(last_decay: int, now: int, decay_time: int = DEFAULT_DECAY_TIME_S) -> tuple[int, int]:
    """How many decays a scheduling cycle at ``now`` performs, and the new ``last_decay``.

    ``fifo.cpp`` loops ``while (now - last_decay) > decay_time`` (strict), then sets
    ``last_decay = now - (now - last_decay) % decay_time`` if it decayed at all.

    Parameters
    ----------
    last_decay, now : int
        Epoch seconds.
    decay_time : int
        ``fairshare_decay_time`` in seconds (> 0).

    Returns
    -------
    (int, int)
        Number of decays, and ``last_decay`` afterwards (unchanged if 0 decays).
    """
    if decay_time <= 0:
        raise ValueError("decay_time must be positive")
    elapsed = now - last_decay
    if elapsed <= decay_time:
        return 0, last_decay
    return (elapsed - 1) // decay_time, now - elapsed % decay_time
