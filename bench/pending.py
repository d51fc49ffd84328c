"""Why my jobs wait, with 100,000 pending jobs: from squeue's output to the user's jobs explained.

A generated ``squeue -a -O`` output in fairtop's layout (:data:`tui.sources.slurm_text.SQUEUE_FIELDS`):
100,000 pending jobs (and 2,000 running) of 3,000 users in three partitions (burn 60 %, gpu 25 %,
short 15 %), priorities spread over 1e3-1e7, submit times over three days, job arrays, and
Slurm's reasons in about a cluster's mix (Priority 75 %, limits 10 %, dependencies 7 %, holds 3 %,
begin times 2 %, Resources for each partition's first, the rest none yet); one job in ten has a
backfill estimate. The user (``wqb``, of the real capture tests/fixtures/pending_jobs, whose
tree, settings and sprio the snapshot keeps) has 25 pending jobs, 10 of them an array.

Timed, each the fastest of ``-n`` runs:

* ``parse``: :func:`~tui.sources.slurm_text.parse_squeue`, the text into 102,000 ``Job`` (what the
  live refresh does with squeue's stdout);
* ``explain``: :class:`~tui.analysis.jobs.Queue` of the whole queue, then
  :func:`~tui.analysis.jobs.explain_pending` for the user's 25 jobs (reason in words, place,
  parts, estimate, moves; the fairshare recovery of a Priority job included);
* ``summary``: :func:`~tui.analysis.summary.user_summary`, the whole summary line (ranking too);
* ``after squeue``: parse + explain, from squeue's bytes to the explanations. Target under 0.5 s.

The same again the column-wise way (:mod:`tui.sources.squeue_columns`), the ``columns:`` lines:

* ``read``: :func:`~tui.sources.squeue_columns.squeue_columns`, then ``Job`` of the user's rows only;
* ``explain``: :meth:`Queue.of_columns <tui.analysis.jobs.Queue.of_columns>` (``Job`` made for
  the jobs just ahead only) and :func:`~tui.analysis.jobs.explain_pending` on a snapshot whose
  ``jobs`` are the user's and ``queue`` the columns;
* ``after squeue``: read + explain. Both ways must explain the same (checked each run).

And the product, the ``product:`` lines: the capture folder with this ``squeue.txt`` and a
``sprio_l.txt`` of every pending job that may start (held jobs and those waiting on a dependency
or a begin time are not in sprio), written to a temporary folder; the real command functions run
on it (``fairtop jobs --from DIR --user wqb`` and ``fairtop standing --from DIR --user wqb``,
their output to a buffer), each timed whole, from the folder to the printed text:

* ``jobs`` / ``standing``: as shipped: the one-user path (``Source.one_user``: squeue read as
  columns, ``Job`` of the user's jobs and of the jobs just ahead only, their sprio lines parsed
  alone);
* ``jobs, every Job`` / ``standing, every Job``: the same command with the one-user path turned
  off (every squeue and sprio line made into objects, as the app reads a folder);
* ``jobs, 15 jobs``: the command on the capture as it is (15 jobs): what the command costs
  without a big queue (reading sshare and the config, the engine, Python's imports are warm). The
  queue's own share of a command is its time less this one.

Both ways must print the same (checked each run).

    .venv/bin/python bench/pending.py [-n 5] [--jobs 100000]
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "tests/fixtures/pending_jobs/capture"
ME = "wqb"
HEADER = ("JOBID|PARTITION|USER|ACCOUNT|STATE|TIME_LIMIT|SUBMIT_TIME|START_TIME|PRIORITY|TRES_ALLOC|REASON|"
          "SCHEDNODES|DEPENDENCY|REQ_NODES|NICE|QOS|ELIGIBLE_TIME|")
REASONS = (["Priority"] * 75 + ["AssocGrpCpuLimit"] * 4 + ["AssocMaxJobsLimit"] * 3 + ["QOSMaxJobsPerUserLimit"] * 3
           + ["Dependency"] * 7 + ["JobHeldUser"] * 3 + ["BeginTime"] * 2 + ["None"] * 3)
PARTS = ["burn"] * 12 + ["gpu"] * 5 + ["short"] * 3


def squeue_text(n: int, seed: int = 35) -> str:
    rnd = random.Random(seed)
    base = 1_795_000_000  # 2026-11-18, epoch seconds
    lines = [HEADER]
    job = 500_000

    def line(job_id: str, user: str, account: str, state: str, part: str, reason: str) -> str:
        submit = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(base + rnd.randrange(3 * 86400)))
        start = "N/A"
        if state == "RUNNING" or rnd.random() < 0.1:
            start = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(base + 3 * 86400 + rnd.randrange(86400)))
        cpus = rnd.choice((1, 4, 16, 64))
        tres = f"cpu={cpus},mem={cpus * 4}G,node=1,billing={cpus}" + (",gres/gpu=1" if part == "gpu" else "")
        prio = "0" if reason == "JobHeldUser" else str(rnd.randrange(1_000, 10_000_000))
        dep = "afterok:123(unfulfilled)" if reason == "Dependency" else "(null)"
        nodes = "node0042" if start != "N/A" and state == "PENDING" else "(null)"
        return (f"{job_id}|{part}|{user}|{account}|{state}|1-00:00:00|{submit}|{start}|{prio}|{tres}|"
                f"{reason}|{nodes}|{dep}||0|normal|{submit}|")

    for _ in range(2_000):
        job += 1
        lines.append(line(str(job), f"u{rnd.randrange(3000):04d}", "lab", "RUNNING", rnd.choice(PARTS), "None"))
    for k in range(n - 25):
        job += 1
        reason = rnd.choice(REASONS) if k >= 3 else "Resources"
        part = rnd.choice(PARTS) if k >= 3 else ("burn", "gpu", "short")[k]
        lines.append(line(str(job), f"u{rnd.randrange(3000):04d}", "lab", "PENDING", part, reason))
    for _ in range(15):
        job += 1
        lines.append(line(str(job), ME, "wq", "PENDING", "burn", rnd.choice(REASONS)))
    job += 1
    for task in range(10):
        lines.append(line(f"{job}_{task}", ME, "wq", "PENDING", "burn", "Priority"))
    return "\n".join(lines) + "\n"


def sprio_text(squeue: str) -> str:
    """``sprio -l`` of the pending jobs of ``squeue`` that may start, in the capture's layout: the
    priority split into age and fairshare."""
    head = (CAPTURE / "sprio_l.txt").read_text().splitlines()[0]
    out = [head]
    for line in squeue.splitlines()[1:]:
        c = line.split("|")
        if c[4] != "PENDING" or c[10] in ("JobHeldUser", "Dependency", "BeginTime"):
            continue
        prio = int(c[8])
        age = prio // 3
        out.append(f"{c[0]:>15} {c[1]:<9} {c[2]:>8} {prio:>10} {0:>10} {age:>10} {0:>10} {prio - age:>10} "
                   f"{0:>10} {0:>10} {0:>10} {0:>11}                     ")
    return "\n".join(out) + "\n"


def _command(argv: list[str]) -> tuple[float, str]:
    """Run ``fairtop ARGV`` (the real command function), its stdout kept; (seconds, output)."""
    import contextlib
    import io

    from tui.cli import main as fairtop

    buf = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        assert fairtop(argv) == 0
    return time.perf_counter() - t0, buf.getvalue()


def product(folder: Path, n: int) -> dict[str, float]:
    """The commands on ``folder``, each the fastest of ``n``, one-user path on and off."""
    import os

    from tui.sources import saved

    os.environ["XDG_CONFIG_HOME"] = str(folder.parent / "config")  # no user config: the flags alone
    best: dict[str, float] = {}
    one_user = saved._one_user_jobs
    for _ in range(n):
        for name, argv in (("jobs", ["jobs"]), ("standing", ["standing"])):
            took, shown = _command([*argv, "--from", str(folder), "--user", ME])
            saved._one_user_jobs = lambda *_: None  # type: ignore[assignment] - every Job, as the app reads
            try:
                took_all, shown_all = _command([*argv, "--from", str(folder), "--user", ME])
            finally:
                saved._one_user_jobs = one_user
            assert shown == shown_all, f"{name}: the columns print otherwise"
            best[name] = min(best.get(name, took), took)
            best[f"{name}, every Job"] = min(best.get(f"{name}, every Job", took_all), took_all)
        took, _ = _command(["jobs", "--from", str(CAPTURE), "--user", ME])
        best["jobs, 15 jobs"] = min(best.get("jobs, 15 jobs", took), took)
    return best


def main() -> None:
    from tui.analysis.jobs import Queue, explain_pending
    from tui.analysis.standing import build_standing
    from tui.analysis.summary import user_summary
    from tui.sources.saved import load_folder
    from tui.sources.slurm_text import parse_squeue
    from tui.sources.squeue_columns import squeue_columns

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=100_000)
    args = ap.parse_args()
    text = squeue_text(args.jobs)
    snap = load_folder(CAPTURE)
    best: dict[str, float] = {}
    for _ in range(args.n):
        t0 = time.perf_counter()
        jobs = parse_squeue(text)
        t1 = time.perf_counter()
        standing = build_standing(replace(snap, jobs=tuple(jobs)), ME)
        t2 = time.perf_counter()
        explained = explain_pending(standing, queue=Queue(standing.snapshot.jobs))
        t3 = time.perf_counter()
        line = user_summary(standing)
        t4 = time.perf_counter()
        cols = squeue_columns(text)
        assert cols is not None
        own = tuple(cols.jobs(cols.rows_of(ME)))
        t5 = time.perf_counter()
        standing_c = build_standing(replace(snap, jobs=own, queue=cols), ME)
        t6 = time.perf_counter()
        explained_c = explain_pending(standing_c, queue=Queue.of_columns(cols))
        t7 = time.perf_counter()
        assert explained_c == explained, "the columns explain otherwise"
        for key, took in (("parse", t1 - t0), ("explain", t3 - t2), ("summary", t4 - t3),
                          ("after squeue", (t1 - t0) + (t3 - t2)),
                          ("columns: read", t5 - t4), ("columns: explain", t7 - t6),
                          ("columns: after squeue", (t5 - t4) + (t7 - t6))):
            best[key] = min(best.get(key, took), took)
    pending = sum(j.state == "PENDING" for j in jobs)
    print(f"{len(jobs):,} jobs ({pending:,} pending), {len(explained)} of {ME}'s explained; fastest of {args.n}:")
    for key, took in best.items():
        print(f"  {key:<22} {took:7.3f} s")
    print(f"  after squeue, objects / columns: {best['after squeue'] / best['columns: after squeue']:.1f}x")
    assert line is not None
    print(f"  line: {line.text}")
    print(f"  first: {explained[0].lines[:2]}")
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "capture"
        shutil.copytree(CAPTURE, folder)
        (folder / "squeue.txt").write_text(text)
        (folder / "sprio_l.txt").write_text(sprio_text(text))
        figures = product(folder, args.n)
    print(f"product, the commands on a saved folder with this queue; fastest of {args.n}:")
    for key, took in figures.items():
        print(f"  {key:<22} {took:7.3f} s")
    base = figures["jobs, 15 jobs"]
    for name in ("jobs", "standing"):
        print(f"  {name}: the queue's share {figures[name] - base:.3f} s (every Job: "
              f"{figures[name + ', every Job'] - base:.3f} s), "
              f"{figures[name + ', every Job'] / figures[name]:.1f}x faster whole")


if __name__ == "__main__":
    main()
