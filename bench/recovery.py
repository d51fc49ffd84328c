"""The breakdown's recovery curves (16 Fair Tree points) of demo users: ``python bench/recovery.py``.

    .venv/bin/python bench/recovery.py [--rows 40] [--repeat 3] [--against REV]

Times :func:`tui.analysis.planner.recovery` (what the breakdown pane's worker runs after the
explanation) on ``--rows`` user rows of the demo (``fairtop --demo --user alice``: 2,500 users),
each the fastest of ``--repeat``; prints the median and the slowest row. With ``--against REV``
the same rows are timed on a ``git archive`` of REV in a child process (after this tree's), and
the curves are compared (they must be the same numbers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
import numpy as np
from tui.analysis.planner import recovery
from tui.analysis.standing import build_standing
from tui.sources.demo import demo_snapshot
rows, repeat = int(sys.argv[1]), int(sys.argv[2])
standing = build_standing(demo_snapshot(me="alice"), me="alice")
tree = standing.snapshot.tree
users = np.flatnonzero(tree.is_user)
picked = np.random.default_rng(3).choice(users, rows, replace=False).tolist()
picked.insert(0, int(np.flatnonzero(tree.user == "alice")[0]))
times, curves = [], []
for row in picked:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        rec = recovery(standing, row)
        best = min(best, time.perf_counter() - t0)
    times.append(best)
    curves.append(rec.fairshare.tolist())
print(json.dumps({"times": times, "curves": curves}))
"""


def run(pythonpath: Path, rows: int, repeat: int) -> dict[str, list]:
    env = {"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-P", "-c", CHILD, str(rows), str(repeat)], env=env, check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, list] = json.loads(out)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40, help="demo user rows besides alice's")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time git revision REV, and compare the curves")
    args = parser.parse_args()
    results = {"this tree": run(ROOT, args.rows, args.repeat)}
    if args.against:  # a git archive of it, in a child process of its own
        sys.path.insert(0, str(ROOT / "bench"))
        from report import export

        results[args.against] = run(export(args.against), args.rows, args.repeat)
    print("| code | alice (ms) | median of the rows (ms) | slowest (ms) |")
    print("|---|---:|---:|---:|")
    for name, res in results.items():
        t = [1000 * x for x in res["times"]]
        print(f"| {name} | {t[0]:.1f} | {statistics.median(t[1:]):.1f} | {max(t[1:]):.1f} |")
    if args.against:
        same = results["this tree"]["curves"] == results[args.against]["curves"]
        print(f"curves the same as {args.against}'s: {same}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    sys.exit(code)
