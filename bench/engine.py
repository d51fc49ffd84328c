"""Benchmark: full fairshare recompute on random trees vs the plain recursive reference.

    .venv/bin/python bench/engine.py [--sizes 10000,100000,1000000] [--repeat 3]

For each size: a random association tree (accounts on random levels up to depth 6, users under
random accounts, Pareto usage, some ``parent`` and zero shares); times classic, Fair Tree (the
shared structure pass split between them) and PBS on the same shape, as the fastest of
``--repeat`` runs, and the recursive pure-Python reference (``tui.engine.reference``) likewise up to
100k associations; checks the answers are equal. Prints a Markdown table for bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.engine import (  # noqa: E402
    classic,
    fair_tree,
    pbs,  # noqa: E402
)
from tui.engine.reference import classic_reference, fair_tree_reference, pbs_reference  # noqa: E402
from tui.engine.tree import structure  # noqa: E402
from tui.model import NO_VAL, USE_PARENT, AssocTree, PbsTree  # noqa: E402

REFERENCE_LIMIT = 100_000


def random_tree(n: int, seed: int = 1, max_depth: int = 6) -> AssocTree:
    """A random tree of ``n`` associations, parents first: about one account per 10 users.

    Accounts get a random level 1..``max_depth``-1 (real clusters are 3-6 deep) and hang under a
    random account one level up; users hang under random accounts.
    """
    rng = np.random.default_rng(seed)
    n_acc = max(2, n // 10)
    parent = np.empty(n, dtype=np.int64)
    parent[0] = -1
    level = np.sort(rng.integers(1, max_depth, n_acc - 1))  # accounts sorted by level: parents first
    acc = np.arange(1, n_acc)
    start = np.searchsorted(level, level - 1)  # first account of the level above
    stop = np.searchsorted(level, level)       # one past its last
    pick = start + (rng.random(n_acc - 1) * (stop - start)).astype(np.int64)
    parent[1:n_acc] = np.where(level == 1, 0, acc[np.minimum(pick, n_acc - 2)])
    parent[n_acc:] = rng.integers(1 if n_acc > 1 else 0, n_acc, n - n_acc)
    is_user = np.zeros(n, dtype=bool)
    is_user[n_acc:] = True
    shares = rng.integers(0, 100, n)
    shares[rng.random(n) < 0.15] = USE_PARENT
    shares[rng.random(n) < 0.02] = 0
    shares[0] = NO_VAL
    own = np.where(is_user, np.floor((rng.pareto(1.2, n)) * 1e6) * (rng.random(n) < 0.6), 0)
    usage = own.astype(np.longdouble)
    depth = np.zeros(n, dtype=np.int64)
    for i in range(1, n_acc):  # accounts only: parents come first
        depth[i] = depth[parent[i]] + 1
    depth[n_acc:] = depth[parent[n_acc:]] + 1
    for d in range(int(depth.max()), 0, -1):  # usage flows up every ancestor
        rows = np.flatnonzero(depth == d)
        usage += np.bincount(parent[rows], weights=usage[rows].astype(np.float64), minlength=n)
    names = np.array([f"n{i}" for i in range(n)], dtype=object)
    return AssocTree(parent, is_user, names, np.where(is_user, names, ""), shares, usage)


def as_pbs(tree: AssocTree) -> PbsTree:
    """The same shape as a PBS fairshare tree: ``parent`` shares become 1, usage 1 + raw/1e6."""
    shares = np.where(tree.shares_raw == USE_PARENT, 1, tree.shares_raw)
    shares[0] = -1
    usage = 1.0 + tree.usage_raw.astype(np.float64) / 1e6
    ids = np.arange(tree.size)
    return PbsTree(name=tree.account.copy(), parent=tree.parent, resgroup=ids, cresgroup=ids,
                   shares=shares, usage=usage)


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out  # the least-disturbed run: this machine is shared and noisy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| associations | classic (s) | Fair Tree (s) | PBS (s) | reference classic+FT+PBS (s) | speed-up | equal |")
    print("|---:|---:|---:|---:|---:|---:|:---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        tree = random_tree(n)
        t_struct, st = timed(lambda: structure(tree), args.repeat)
        t_classic, res_c = timed(lambda: classic(tree, 1, st), args.repeat)
        t_ft, res_f = timed(lambda: fair_tree(tree, st), args.repeat)
        t_classic += t_struct / 2  # both algorithms share one structure pass
        t_ft += t_struct / 2
        ptree = as_pbs(tree)
        t_pbs, res_p = timed(lambda: pbs.compute(ptree), args.repeat)
        ref, speed, equal = "-", "-", "-"
        if n <= REFERENCE_LIMIT:
            t_ref, (rc, rf, rp) = timed(lambda: (classic_reference(tree), fair_tree_reference(tree),
                                                 pbs_reference(ptree)), 3 if n <= 10_000 else 2)
            equal = "yes" if (
                np.array_equal(res_c.norm_shares, [r[0] for r in rc])
                and np.array_equal(res_c.effective_usage, np.array([r[1] for r in rc], dtype=np.longdouble))
                and np.allclose(res_c.fairshare, [r[2] for r in rc], rtol=1e-15, atol=1e-300)
                and np.array_equal(res_f.rank, [r[4] for r in rf])
                and np.array_equal(res_f.level_fs, np.array([r[2] for r in rf], dtype=np.longdouble))
                and np.array_equal(res_p.tree_percentage, [r[0] for r in rp])
                and np.array_equal(res_p.tree_usage, [r[1] for r in rp])
                and np.allclose(res_p.factor, [r[2] for r in rp], rtol=1e-15, atol=1e-300)
            ) else "NO"
            ref = f"{t_ref:.2f}"
            speed = f"{t_ref / (t_classic + t_ft + t_pbs):.0f}x"
        print(f"| {n:,} | {t_classic:.3f} | {t_ft:.3f} | {t_pbs:.3f} | {ref} | {speed} | {equal} |", flush=True)


if __name__ == "__main__":
    main()
