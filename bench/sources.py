"""Timings of the snapshot sources: ``python bench/sources.py [name ...]``.

Each benchmark runs a few times and prints the median wall time, so a figure is comparable
between runs on one machine. Targets: the demo builds in under 0.2 s; a 100,000-row
``sshare -a -l -P`` file parses into a snapshot in under 0.3 s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np

from tui.model import Snapshot
from tui.sources.demo import demo_snapshot
from tui.sources.sshare import parse_sshare

_NOW = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


def bench_demo() -> None:
    """The default demo cluster: 2,500 users in 300 accounts, jobs and allocations."""
    demo_snapshot(0, now=_NOW, me="someone")


SSHARE_ROWS = 100_000
_HEADER = "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins"
_TRES = "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0"
_sshare_cache: dict[int, bytes] = {}


def sshare_text(rows: int = SSHARE_ROWS, seed: int = 1) -> bytes:
    """A Fair Tree ``sshare -a -l -P`` file of ``rows`` associations (1 account per 10 users),
    laid out as sshare prints it: pre-order, users before sub-accounts, one space per depth."""
    if rows in _sshare_cache:
        return _sshare_cache[rows]
    rng = np.random.default_rng(seed)
    n_acc = max(2, rows // 10)
    acc_parent = (rng.random(n_acc) * np.arange(n_acc)).astype(np.int64)  # random recursive tree
    user_acc = rng.integers(0, n_acc, rows - n_acc)
    sub: list[list[int]] = [[] for _ in range(n_acc)]
    for a in range(1, n_acc):
        sub[int(acc_parent[a])].append(a)
    users: list[list[int]] = [[] for _ in range(n_acc)]
    for u, a in enumerate(user_acc.tolist()):
        users[a].append(u)
    usage = rng.integers(0, 10**9, rows).tolist()
    out = [_HEADER]
    stack = [(0, 0)]
    while stack:
        a, depth = stack.pop()
        name = "root" if a == 0 else f"acct{a}"
        pad = " " * depth
        shares = "" if a == 0 else ("parent" if a % 7 == 0 else str(a % 50 + 1))
        out.append(f"{pad}{name}||{shares}|0.010000|{usage[a]}|0.000100|0.000100||1.000000||{_TRES}")
        for u in users[a]:
            out.append(f"{pad} {name}|user{u}|{u % 10 + 1}|0.010000|{usage[n_acc + u]}|0.000010|0.000010|"
                       f"0.500000|0.900000||{_TRES}")
        stack.extend((c, depth + 1) for c in reversed(sub[a]))
    _sshare_cache[rows] = data = ("\n".join(out) + "\n").encode()
    return data


def bench_sshare() -> None:
    """Parse a 100,000-row ``sshare -a -l -P`` file into a snapshot."""
    table = parse_sshare(sshare_text(), "bench.psv")
    Snapshot(cluster="bench", source="bench.psv", tree=table.tree)

BENCHMARKS: dict[str, Callable[[], object]] = {
    "demo": bench_demo,
    "sshare": bench_sshare,
}


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` calls, after one warm-up call (imports, caches)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"benchmarks to run: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("-n", "--repeat", type=int, default=7, help="timed runs per benchmark")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    for name in args.names or BENCHMARKS:
        seconds = median_seconds(BENCHMARKS[name], args.repeat)
        print(f"{name:<12} median {seconds * 1000:8.1f} ms over {args.repeat} runs")


if __name__ == "__main__":
    main()
