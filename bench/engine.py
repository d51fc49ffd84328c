"""Benchmark: full fairshare recompute on random trees vs the plain recursive reference.

    .venv/bin/python bench/engine.py [--sizes 10000,100000,1000000] [--repeat 3]

For each size: a random association tree (accounts in a random recursive tree, users under random
accounts, Pareto usage, some ``parent`` and zero shares); times classic, Fair Tree and PBS
(when ``tui.engine.pbs`` is present) as the median of ``--repeat`` runs, and the recursive
pure-Python reference (``tui.engine.reference``) once, where it finishes in reasonable time; checks
the answers are equal. Prints a Markdown table for bench/README.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.engine import classic, fair_tree  # noqa: E402
from tui.engine.tree import structure  # noqa: E402
from tui.engine.reference import classic_reference, fair_tree_reference  # noqa: E402
from tui.model import NO_VAL, USE_PARENT, AssocTree  # noqa: E402

REFERENCE_LIMIT = 100_000


def random_tree(n: int, seed: int = 1) -> AssocTree:
    """A random tree of ``n`` associations (about one account per 10 users), parents first."""
    rng = np.random.default_rng(seed)
    n_acc = max(2, n // 10)
    parent = np.empty(n, dtype=np.int64)
    parent[0] = -1
    # account i (1..n_acc-1) hangs under a random earlier account: a random recursive tree
    parent[1:n_acc] = (rng.random(n_acc - 1) * np.arange(1, n_acc)).astype(np.int64)
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


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    try:
        from tui.engine import pbs_bench  # optional: PBS recompute on the same shape
    except ImportError:
        pbs_bench = None
    print("| associations | classic (s) | Fair Tree (s) | PBS (s) | reference classic+FT (s) | speed-up | equal |")
    print("|---:|---:|---:|---:|---:|---:|:---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        tree = random_tree(n)
        t_struct, st = timed(lambda: structure(tree), args.repeat)
        t_classic, res_c = timed(lambda: classic(tree, 1, st), args.repeat)
        t_ft, res_f = timed(lambda: fair_tree(tree, st), args.repeat)
        t_classic += t_struct / 2  # both algorithms share one structure pass
        t_ft += t_struct / 2
        t_pbs = timed(lambda: pbs_bench(tree), args.repeat)[0] if pbs_bench else float("nan")
        ref, speed, equal = "-", "-", "-"
        if n <= REFERENCE_LIMIT:
            t0 = time.perf_counter()
            rc = classic_reference(tree)
            rf = fair_tree_reference(tree)
            t_ref = time.perf_counter() - t0
            equal = "yes" if (
                np.array_equal(res_c.norm_shares, [r[0] for r in rc])
                and np.array_equal(res_c.effective_usage, np.array([r[1] for r in rc], dtype=np.longdouble))
                and np.allclose(res_c.fairshare, [r[2] for r in rc], rtol=1e-15, atol=0)
                and np.array_equal(res_f.rank, [r[4] for r in rf])
                and np.array_equal(res_f.level_fs, np.array([r[2] for r in rf], dtype=np.longdouble))
            ) else "NO"
            ref = f"{t_ref:.2f}"
            speed = f"{t_ref / (t_classic + t_ft):.0f}x"
        print(f"| {n:,} | {t_classic:.3f} | {t_ft:.3f} | {t_pbs:.3f} | {ref} | {speed} | {equal} |", flush=True)


if __name__ == "__main__":
    main()
