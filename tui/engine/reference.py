"""Plain recursive pure-Python reference of Slurm's classic and Fair Tree algorithms.

Written from the definitions (spec sections 1-3, ``fair_tree.c``) one association at a time,
the way Slurm's C code walks its lists. It is slow; it exists so the
vectorised engine can be checked against something obviously shaped like Slurm, in tests and in
``bench/engine.py``. Same precision rules: shares in double, usage in long double.
"""

from __future__ import annotations

import math

import numpy as np

from tui.model import NO_VAL, USE_PARENT, AssocTree, PbsTree

LD = np.longdouble


class Node:
    __slots__ = ("row", "parent", "user", "shares", "usage", "key", "children", "fs_parent",
                 "level_shares", "s", "e", "n", "lf", "fs", "rank")

    def __init__(self, row: int, parent: Node | None, user: bool, shares: int, usage: np.longdouble, key: int) -> None:
        self.row, self.parent, self.user, self.shares, self.usage, self.key = row, parent, user, shares, usage, key
        self.children: list[Node] = []  # fairshare children (children_list)
        self.fs_parent: Node | None = None
        self.level_shares = NO_VAL
        self.s = 0.0
        self.e = LD(0)
        self.n = LD(0)
        self.lf = LD(0)
        self.fs = math.nan
        self.rank = 0


def _build(tree: AssocTree) -> list[Node]:
    keys = tree.sibling_order if tree.sibling_order is not None else range(tree.size)
    nodes: list[Node] = []
    for i in range(tree.size):
        p = nodes[tree.parent[i]] if tree.parent[i] >= 0 else None
        nodes.append(Node(i, p, bool(tree.is_user[i]), int(tree.shares_raw[i]), tree.usage_raw[i], int(keys[i])))
    for node in nodes[1:]:
        f = node.parent
        assert f is not None  # nodes[0] is the only root
        while f.parent is not None and f.shares == USE_PARENT:
            f = f.parent
        node.fs_parent = f
        f.children.append(node)
    for node in nodes:
        node.children.sort(key=lambda c: c.key)
        total = sum(c.shares for c in node.children if c.shares != USE_PARENT) & 0xFFFFFFFF
        for c in node.children:
            c.level_shares = total
    root_usage = nodes[0].usage
    for node in nodes:
        node.n = LD(0) if root_usage == 0 else min(node.usage / root_usage, LD(1))
    return nodes


def classic_reference(tree: AssocTree, dampening: float = 1) -> list[tuple[float, object, float]]:
    """``(norm_shares, effective_usage, fairshare)`` per row, classic algorithm."""
    nodes = _build(tree)
    root = nodes[0]

    def norm_shares(a: Node) -> float:
        if a.shares == USE_PARENT:
            assert a.fs_parent is not None  # set by _build for every row but the root
            return norm_shares(a.fs_parent)
        s, x = 1.0, a
        while x.parent is not None:
            if x.shares != USE_PARENT:
                s = 0.0 if x.level_shares == 0 else s * (float(x.shares) / float(x.level_shares))
            x = x.parent
        return s

    def visit(a: Node) -> None:
        for c in a.children:
            if c.fs_parent is root:
                c.e = c.n
            elif c.shares == USE_PARENT or c.level_shares == 0:
                c.e = a.e
            else:
                c.e = c.n + (a.e - c.n) * (LD(c.shares) / LD(c.level_shares))
            visit(c)

    root.e = LD(1)
    visit(root)
    out: list[tuple[float, object, float]] = []
    for a in nodes:
        s = norm_shares(a)
        fs = 0.0 if s <= 0 else float(2.0 ** float(-(a.e / LD(s)) / LD(dampening)))
        out.append((s, a.e, fs))
    return out


def fair_tree_reference(tree: AssocTree) -> list[tuple[float, object, object, float, int]]:
    """``(norm_shares, effective_usage, level_fs, fairshare, rank)`` per row, Fair Tree."""
    nodes = _build(tree)
    total = sum(1 for a in nodes if a.user)
    state = {"rank": total, "rnt": total}

    def calc(a: Node) -> None:
        assert a.fs_parent is not None  # only children of the root and below are visited
        f = a.fs_parent if a.shares == USE_PARENT else a
        if f.parent is None:  # the root: shares_raw (taken as 1) / NO_VAL
            a.s = 1.0 / NO_VAL
        else:
            a.s = 0.0 if f.level_shares == 0 else float(f.shares) / float(f.level_shares)
        a.e = LD(0) if a.fs_parent.usage == 0 else a.usage / a.fs_parent.usage
        if a.shares == USE_PARENT:
            a.lf = LD(math.inf) if a.user else LD(NO_VAL)
        elif a.s == 0:
            a.lf = LD(0)
        else:
            a.lf = LD(math.inf) if a.e == 0 else LD(a.s) / a.e

    def walk(siblings: list[Node], account_tied: bool) -> None:
        for a in siblings:
            calc(a)
        # stable sort: LF descending, users before accounts
        ordered = sorted(siblings, key=lambda a: (-a.lf, not a.user))
        prev = LD(NO_VAL)
        for i, a in enumerate(ordered):
            tied = True if (i == 0 and account_tied) else bool(prev == a.lf)
            if a.user:
                if not tied:
                    state["rank"] = state["rnt"]
                a.rank = state["rank"]
                a.fs = state["rank"] / float(total)
                state["rnt"] -= 1
            else:
                walk(a.children, tied)
            prev = a.lf

    walk(nodes[0].children, False)
    root = nodes[0]
    root.s, root.e, root.lf = 1.0 / NO_VAL, LD(1), LD(NO_VAL)
    return [(a.s, a.e, a.lf, a.fs, a.rank) for a in nodes]


def pbs_reference(tree: PbsTree) -> list[tuple[np.float32, np.float32, float]]:
    """``(tree_percentage, fairshare_tree_usage, fairshare_factor)`` per row of a PbsTree,
    walking children recursively as OpenPBS ``calc_fair_share_perc``/``calc_usage_factor`` do
    (float32 percentages and usage factors, double usage)."""
    f32 = np.float32
    n = len(tree.parent)
    children: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        children[int(tree.parent[i])].append(i)
    perc = [f32(0)] * n
    uf = [f32(0)] * n
    perc[0] = f32(1)
    root_usage = float(tree.usage[0])

    def visit(p: int, depth: int) -> None:
        total = f32(sum(int(tree.shares[c]) for c in children[p]))
        for c in children[p]:
            if total * perc[p] == 0:
                group = f32(0)
                perc[c] = f32(0)
            else:
                group = f32(tree.shares[c]) / total
                perc[c] = group * perc[p]
            v = f32(float(tree.usage[c]) / root_usage)
            uf[c] = v if depth == 0 else v + (uf[p] - v) * group
            visit(c, depth + 1)

    visit(0, 0)
    out: list[tuple[np.float32, np.float32, float]] = []
    for i in range(n):
        factor = 0.0 if perc[i] == 0 else 2.0 ** float(-(uf[i] / perc[i]))
        out.append((perc[i], uf[i], factor))
    return out
