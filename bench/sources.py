"""Timings of the snapshot sources: ``python bench/sources.py [name ...]``.

Each benchmark runs a few times and prints the median wall time, so a figure is comparable
between runs on one machine. Targets: the demo builds in under 0.2 s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timezone

from tui.sources.demo import demo_snapshot

_NOW = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


def bench_demo() -> None:
    """The default demo cluster: 2,500 users in 300 accounts, jobs and allocations."""
    demo_snapshot(0, now=_NOW, me="someone")


# Placeholder: the sshare-parsing benchmark (``bench_sshare``, parsing saved ``sshare -a -l -P``
# output of a cluster this size) is added here by the slurm_text engineer, and in BENCHMARKS.

BENCHMARKS: dict[str, Callable[[], object]] = {
    "demo": bench_demo,
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
