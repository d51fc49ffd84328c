"""Benchmark: policy replay at a big site's scale (issue 34).

    .venv/bin/python bench/replay.py [--assocs 20000] [--jobs 1000000] [--days 90] [--repeat 3]
    .venv/bin/python bench/replay.py --stream 20000000     # 20M jobs through the streaming parse

A random 20,000-association tree (``bench/engine.py``'s ``random_tree``), and ``--jobs`` jobs over
``--days`` days written as ``sacct -a -P -X -D -o JobID,User,Account,Partition,QOS,AllocCPUS,
AllocTRES,State,Start,End,ElapsedRaw`` text (random users, Pareto-ish run times from a minute to
two days, 1-128 CPUs, memory, some GPUs, 3 partitions with TRESBillingWeights, 3 QOS). The tree's
RawUsage is the replay of those jobs under its own policy (7-day half-life, 5-minute calc period),
as sshare would print it. Timed, fastest of ``--repeat``:

* ``parse``: the text to columns (:func:`tui.sources.sacct.iter_sacct_columns`) and onto the tree
  (:func:`tui.analysis.replay.job_columns`): once per replay session;
* ``own policy``: :func:`tui.analysis.replay.prepare_replay`, the jobs under the snapshot's own
  law, the residual and the fairshare now: once per session;
* ``replay``: :func:`tui.analysis.replay.replay_policy` under a changed policy, each: the jobs
  under the new law (billed again), the residual carried, the engine;
* ``screen``: what the Policy screen computes (:mod:`tui.analysis.policy_view`): once per session
  the own policy's usage and FairShare of every association at the plot's 12 times
  (:func:`~tui.analysis.policy_view.own_series`); when the policy changes, the replay and the new
  policy's series (:func:`~tui.analysis.policy_view.policy_series`); when the highlighted row
  changes, its two figures' lines (:func:`~tui.analysis.policy_view.series_row`);
* ``rss``: the peak resident memory of the process (``--stream``: the file parsed chunk by chunk,
  only the columns kept).

Prints a Markdown table for bench/README.md.
"""

from __future__ import annotations

import argparse
import io
import resource
import sys
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import random_tree, timed  # noqa: E402

from tui.analysis.policy_view import own_series, policy_series, series_row  # noqa: E402
from tui.analysis.replay import PolicyChange, job_columns, prepare_replay, replay_policy  # noqa: E402
from tui.engine.usage_law import UsagePolicy, cycle_grid, replay  # noqa: E402
from tui.model import Partition, PrioritySettings, Snapshot  # noqa: E402
from tui.sources.sacct import SACCT_FIELDS, SacctColumns, iter_sacct_columns  # noqa: E402

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
PARTS = (Partition(name="cpu", billing_weights={"cpu": 1.0, "mem": 0.25 / 1024}),
         Partition(name="gpu", billing_weights={"cpu": 1.0, "mem": 0.25 / 1024, "gres/gpu": 8.0}),
         Partition(name="big", billing_weights={"cpu": 2.0}))
SETTINGS = PrioritySettings(decay_half_life_s=7 * 86400, calc_period_s=300,
                            qos_usage_factors={"normal": 1.0, "scavenger": 0.25, "high": 2.0})


def sacct_lines(tree, n: int, days: float, seed: int = 3, first_id: int = 1) -> list[str]:
    """``n`` jobs of random users of ``tree`` as sacct -P lines (no header), UTC wall clock."""
    rng = np.random.default_rng(seed)
    users = np.flatnonzero(tree.is_user)
    who = users[rng.integers(0, users.size, n)]
    end_t = NOW.timestamp()
    start = np.floor(end_t - rng.uniform(0, days * 86400, n))
    run = np.minimum(np.floor(60 * rng.pareto(1.2, n) * 10 + 60), 2 * 86400)
    end = start + run
    running = end > end_t
    cpus = rng.choice([1, 2, 4, 8, 16, 32, 64, 128], n)
    part = rng.choice(3, n, p=[0.7, 0.2, 0.1])
    gpus = np.where(part == 1, rng.choice([1, 2, 4], n), 0)
    mem = cpus * rng.choice([1000, 2000, 4000], n)
    qos = rng.choice(["normal", "scavenger", "high"], n, p=[0.8, 0.15, 0.05])
    stamp = np.datetime_as_string(start.astype("datetime64[s]"), unit="s")
    stop = np.where(running, "Unknown", np.datetime_as_string(end.astype("datetime64[s]"), unit="s"))
    weights = np.array([1.0, 1.0, 2.0])[part] * cpus + mem * 0.25 / 1024 + gpus * 8.0
    names = ("cpu", "gpu", "big")
    acct, user = tree.account, tree.user
    out = []
    for k in range(n):
        w = who[k]
        g = f",gres/gpu={gpus[k]}" if gpus[k] else ""
        out.append(f"{first_id + k}|{user[w]}|{acct[w]}|{names[part[k]]}|{qos[k]}|{cpus[k]}|"
                   f"billing={int(weights[k])},cpu={cpus[k]}{g},mem={mem[k]}M,node=1|"
                   f"{'RUNNING' if running[k] else 'COMPLETED'}|{stamp[k]}|{stop[k]}|{int(run[k])}")
    return out


def header() -> str:
    return "|".join(SACCT_FIELDS)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--assocs", type=int, default=20000)
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--days", type=float, default=90)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stream", type=int, default=0, metavar="N", help="stream N jobs from a file instead")
    ap.add_argument("--parse", metavar="FILE", help=argparse.SUPPRESS)  # --stream's child
    args = ap.parse_args()
    tree = random_tree(args.assocs)
    if args.parse:
        return parse_file(tree, args.parse)
    if args.stream:
        return stream(tree, args.stream, args.days)
    t0 = time.perf_counter()
    text = (header() + "\n" + "\n".join(sacct_lines(tree, args.jobs, args.days)) + "\n").encode()
    made = time.perf_counter() - t0

    def parse() -> object:
        cols = SacctColumns.concat(list(iter_sacct_columns(io.BytesIO(text), tz=timezone.utc)))
        return job_columns(cols, tree)

    t_parse, jobs = timed(parse, args.repeat)
    since = NOW - timedelta(days=args.days)
    own = UsagePolicy.of(SETTINGS, PARTS)
    grid = cycle_grid(NOW.timestamp(), 300, since.timestamp())
    usage = replay(jobs.table(own, float(grid[0])), tree.parent, grid, own).usage  # type: ignore[attr-defined]
    snap = Snapshot(cluster="bench", source="bench", taken_at=NOW, settings=SETTINGS, partitions=PARTS,
                    tree=replace(tree, usage_raw=np.floor(usage).astype(np.longdouble)))
    changes = {"half-life 2 days": PolicyChange(half_life_s=2 * 86400),
               "classic": PolicyChange(algorithm="classic"),
               "gpu weight 8 -> 16": PolicyChange(billing={"gpu": {"cpu": 1.0, "mem": 0.25 / 1024, "gres/gpu": 16.0}}),
               "switch to 1 day, 30 days ago": PolicyChange(half_life_s=86400)}
    t_base, base = timed(lambda: prepare_replay(snap, jobs, since, NOW), args.repeat)
    rows = []
    for name, change in changes.items():
        switch = NOW - timedelta(days=30) if name.startswith("switch") else None
        t, done = timed(lambda c=change, s=switch: replay_policy(base, c, switch_at=s), args.repeat)
        rows.append((name, t, done))
    t_own, own = timed(lambda: own_series(base), args.repeat)

    def screen_change(c: PolicyChange) -> object:  # the Policy screen's worker on a new form
        done = replay_policy(base, c)
        return policy_series(base, c, own=own, done=done)  # type: ignore[arg-type]

    shown = {name: timed(lambda c=changes[name]: screen_change(c), args.repeat)
             for name in ("half-life 2 days", "classic", "gpu weight 8 -> 16")}
    shown["calc period 5 -> 2 minutes"] = timed(lambda: screen_change(PolicyChange(calc_period_s=120)), args.repeat)
    series = shown["half-life 2 days"][1]
    rows_seen = np.random.default_rng(5).integers(1, tree.size, 100)
    t_rows, _ = timed(lambda: [series_row(series, int(r)) for r in rows_seen], args.repeat)  # type: ignore[arg-type]
    print(f"{args.assocs:,} associations, {args.jobs:,} jobs over {args.days:g} days ({len(grid):,} cycles); "
          f"sacct text {len(text) / 1e6:.0f} MB (made in {made:.1f} s)\n")
    print(f"| step | s |\n|---|---:|\n| parse (text -> columns on the tree) | {t_parse:.2f} |")
    print(f"| the own policy (once per session: residual, fairshare now) | {t_base:.2f} |")
    for name, t, _ in rows:
        print(f"| replay: {name} | {t:.2f} |")
    print(f"| screen: the own policy's plot series (once per session) | {t_own:.2f} |")
    for name, (t, _) in shown.items():
        print(f"| screen: policy change, {name} (replay + the plots' series of every association) | {t:.2f} |")
    print(f"| screen: highlight moves (one row's plot lines, mean of 100 rows) | {t_rows / 100:.5f} |")
    print(f"\npeak RSS {peak_rss_mb():.0f} MB")


def stream(tree, n: int, days: float, chunk: int = 1_000_000) -> None:
    """Write ``n`` jobs to a file chunk by chunk, then parse it streamed in a fresh process (its
    peak RSS is the parse's alone): the columns kept, one part per 64 MB of text."""
    import subprocess

    path = Path("/tmp/fairtop-bench-sacct.psv")
    try:
        with path.open("w") as f:
            f.write(header() + "\n")
            for k in range(0, n, chunk):
                f.write("\n".join(sacct_lines(tree, min(chunk, n - k), days, seed=k, first_id=k + 1)) + "\n")
        size = path.stat().st_size
        done = subprocess.run([sys.executable, __file__, "--parse", str(path), "--assocs", str(tree.size)],
                              capture_output=True, text=True, check=True)
        print(f"{n:,} jobs ({size / 1e9:.1f} GB of sacct text): {done.stdout.strip()}")
    finally:
        path.unlink(missing_ok=True)


def parse_file(tree, path: str) -> None:
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        parts = [job_columns(c, tree) for c in iter_sacct_columns(f, tz=timezone.utc)]
    took = time.perf_counter() - t0
    kept = sum(p.row.nbytes + sum(getattr(p.jobs, a).nbytes for a in ("account", "user", "start", "end", "partition",
                                                                       "qos", "shape")) for p in parts)
    print(f"{sum(p.size for p in parts):,} jobs parsed in {took:.0f} s, columns {kept / 1e6:.0f} MB, "
          f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
