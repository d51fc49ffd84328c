"""Long runs without growth (issue 26): resident memory, open fds and child processes of a
long-running part, sampled along a long run; after warm-up (the first fifth) memory must grow
under 10 % and fds and children stay flat.

    .venv/bin/python bench/soak.py service [--requests 1000000] [--pg URL]
    .venv/bin/python bench/soak.py app [--snapshots 1000] [--malloc] [--untuned]

``service``: the real ``fairtop serve-allocations`` (token auth, 127.0.0.1) on SQLite (a temp file)
or PostgreSQL (``--pg URL`` of a server where a database may be created), 16 keep-alive clients
of everyday traffic: pre-debits, a debit for one job in 4, a read of the allocation every 16th
(tests/allocations/soak.py); samples the service process.
``app``: the app following a published folder whose captures switch between 20,000 and 2,000
associations (tests/app/follow.py); samples this process, which runs the app headless.
``--malloc`` adds what holds the memory, every tenth capture: Python's objects (thousands of
blocks of its own allocator) and glibc's heap (mallinfo2: arenas' size, mmapped blocks, in use,
free; numpy's arrays are there); ``--untuned``
runs the app without its allocator settings (tui/app/allocator.py), for comparison.
The short versions are tests/allocations/test_soak.py and tests/app/test_follow_soak.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.resources import Held, flat  # noqa: E402

SAMPLES = 20


def _line(label: str, h: Held, extra: str = "") -> None:
    print(f"| {label} | {h.rss_kb / 1024:.1f} | {h.fds} | {h.children} |{extra}", flush=True)


def _verdict(samples: list[Held]) -> int:
    warm = samples[len(samples) // 5 - 1]
    rest = samples[len(samples) // 5:]
    top = max(s.rss_kb for s in rest)
    print(f"\nafter warm-up {warm.rss_kb / 1024:.1f} MB, highest after {top / 1024:.1f} MB "
          f"({100 * (top - warm.rss_kb) / warm.rss_kb:+.1f} %), end {rest[-1].rss_kb / 1024:.1f} MB; "
          f"fds {warm.fds} -> {rest[-1].fds}; children {warm.children} -> {rest[-1].children}")
    grew = flat(samples[:len(samples) // 5], rest)
    print("flat" if not grew else "GREW: " + "; ".join(grew))
    return 1 if grew else 0


def service(args: argparse.Namespace) -> int:
    import httpx
    from allocations.services import SUPER, Server, create_database, write_tokens
    from allocations.soak import drive
    from allocations.test_concurrency import _allocation

    tmp = Path(tempfile.mkdtemp(prefix="fairtop-soak-"))
    db = create_database(args.pg) if args.pg else str(tmp / "ledger.db")
    server = Server(db, ["--auth", "token", "--tokens", str(write_tokens(tmp / "tokens.toml"))]).start()
    try:
        aid = _allocation(server.url, "soak", 7301, 10**12)
        assert server.proc is not None
        print(f"{args.requests:,} requests, {'PostgreSQL' if args.pg else 'SQLite'}, load average "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        print("| requests | RSS MB | fds | children | requests/s so far |\n|---:|---:|---:|---:|---:|")
        t0 = time.perf_counter()
        run = asyncio.run(drive(server.url, server.proc.pid, 7301, aid, args.requests, samples=SAMPLES,
                                report=lambda n, h: _line(f"{n:,}", h, f" {n / (time.perf_counter() - t0):,.0f} |")))
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {SUPER}"}, timeout=30) as su:
            alloc = su.get(f"/alloc/{aid}").json()
    finally:
        server.stop()
    consistent = alloc["debits"] == run.debited and alloc["predebits"] == run.held
    print(f"\n{sum(run.codes.values()):,} answers in {run.seconds:.0f} s: {dict(run.codes)}; ledger "
          f"{'equals' if consistent else 'DIFFERS FROM'} what was acknowledged; load average now "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return _verdict([h for _, h in run.samples]) or (0 if consistent and set(run.codes) == {200, 201} else 1)


def _malloc_columns() -> str:
    """Python's blocks (thousands), then glibc's arenas, mmapped blocks, in use and free (MB)."""
    from tui.app.allocator import heap

    m, mb = heap(), 1024 * 1024
    assert m is not None, "--malloc needs glibc"
    return (f" {sys.getallocatedblocks() / 1000:.0f} | {m.arena / mb:.1f} | {m.hblkhd / mb:.1f} "
            f"| {m.uordblks / mb:.1f} | {m.fordblks / mb:.1f} |")


def app(args: argparse.Namespace) -> int:
    from tests.app.follow import follow
    from tui.app import allocator

    every = max(1, args.snapshots // SAMPLES) if not args.malloc else max(1, args.snapshots // 100)
    samples: list[Held] = []
    times: list[float] = []
    if args.untuned:
        allocator.keep_large_blocks_mapped = lambda: False
        allocator.return_free_memory = lambda: False

    def report(k: int, h: Held, seconds: float) -> None:
        samples.append(h)
        times.append(seconds)
        if k % every == 0:
            _line(f"{k:,}", h, f" {seconds:.2f} |" + (_malloc_columns() if args.malloc else ""))

    print(f"{args.snapshots:,} captures, 20,000 and 2,000 associations in turn, "
          f"{'untuned' if args.untuned else 'tuned'} allocator, load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    malloc_head = (" Python k blocks | arenas MB | mmapped MB | in use MB | free MB |", "---:|" * 5)
    print("| captures | RSS MB | fds | children | seconds to show this one |" + (malloc_head[0] if args.malloc else "")
          + "\n|---:|---:|---:|---:|---:|" + (malloc_head[1] if args.malloc else ""))
    with tempfile.TemporaryDirectory(prefix="fairtop-soak-") as tmp:
        asyncio.run(follow(Path(tmp) / "published", args.snapshots, report=report))
    print(f"\n{len(samples):,} captures shown in {sum(times):.0f} s; load average now "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return _verdict(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="part", required=True)
    srv = sub.add_parser("service", help="the allocation service")
    srv.add_argument("--requests", type=int, default=1_000_000)
    srv.add_argument("--pg", help="PostgreSQL server URL (default: SQLite in a temp file)")
    follow = sub.add_parser("app", help="the app following a published folder")
    follow.add_argument("--snapshots", type=int, default=1000)
    follow.add_argument("--malloc", action="store_true", help="sample tracemalloc and glibc's mallinfo2 too")
    follow.add_argument("--untuned", action="store_true", help="without the app's allocator settings")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    return service(args) if args.part == "service" else app(args)


if __name__ == "__main__":
    sys.exit(main())
