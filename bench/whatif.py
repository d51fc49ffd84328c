"""Benchmark: a what-if projection over time (issue 9).

    .venv/bin/python bench/whatif.py [--users 10000] [--days 90] [--repeat 5]

A random association tree (``bench/engine.py``'s ``random_tree``, one account per ~10 users), a
campaign of 20 job lines on 20 users (various starts, walltimes, copies), projected at hourly
steps over ``--days`` days under Slurm's law (5-minute calc period, 7-day half-life) with Fair
Tree re-ranked every day (and LevelFS exact at every hour), then the same with classic
fairshare at every hour. Times the engine (``project_usage`` + ``project_fairshare``) and the
whole scenario path (``run_scenario``: row lookup, billing, projection, answers), fastest of
``--repeat`` runs. Prints a Markdown table for bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import random_tree  # noqa: E402
from engine import timed as best

from tui.analysis.planner import Scenario, ScenarioJob, SettingsOverride, run_scenario
from tui.engine.fairshare_projection import project_fairshare  # noqa: E402
from tui.engine.projection import project_usage  # noqa: E402
from tui.model import Snapshot  # noqa: E402

HOUR, DAY = 3600, 86400


def campaign(tree, n_jobs: int = 20, seed: int = 2) -> list[ScenarioJob]:
    rng = np.random.default_rng(seed)
    users = rng.choice(np.flatnonzero(tree.is_user), n_jobs, replace=False)
    return [ScenarioJob(user=str(tree.user[u]), account=str(tree.account[u]), cpus=int(rng.integers(1, 128)),
                        billing=float(rng.uniform(1, 500)), start_s=int(rng.integers(0, 30)) * DAY,
                        walltime_s=int(rng.integers(1, 72)) * HOUR, count=int(rng.integers(1, 20)),
                        every_s=7 * DAY, repeat=int(rng.integers(1, 4))) for u in users]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = int(args.users / 0.9)  # random_tree: one account per ~10 associations
    tree = random_tree(n)
    jobs = campaign(tree)
    t = np.arange(0, args.days * 24 + 1) * float(HOUR)
    hl, period = 7 * DAY, 300
    runs = [(j, s, e) for j in jobs for s, e in j.runs()]
    rows = {(str(tree.account[i]), str(tree.user[i])): i for i in np.flatnonzero(tree.is_user)}
    r = [rows[(j.account, j.user)] for j, _, _ in runs]
    watch = list(dict.fromkeys(r))

    def engine(algorithm: str, every: int):
        proj = project_usage(tree, r, [s for _, s, _ in runs], [e for _, _, e in runs],
                             [j.billing * j.count for j, _, _ in runs], t, hl, period)
        return project_fairshare(tree, proj, watch, algorithm, 1, every)

    ft, res_ft = best(lambda: engine("fair_tree", 24), args.repeat)
    cl, _ = best(lambda: engine("classic", 1), args.repeat)
    snap = Snapshot(cluster="bench", source="random", tree=tree)
    sc = Scenario(args.days * DAY, HOUR, tuple(jobs), settings=SettingsOverride(half_life_s=hl, calc_period_s=period))
    now = datetime(2026, 11, 22, tzinfo=timezone.utc)
    full, res = best(lambda: run_scenario(sc, snap, now), args.repeat)
    print(f"{tree.user_count:,} users, {tree.size:,} associations, {t.size:,} hourly steps, "
          f"{len(runs)} job runs on {len(watch)} associations; Fair Tree re-ranked {int(res_ft.ranked.sum())} times")
    print()
    print("| associations | steps | Fair Tree, daily ranks (s) | classic, every step (s) | run_scenario (s) |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {tree.size:,} | {t.size:,} | {ft:.3f} | {cl:.3f} | {full:.3f} |")


if __name__ == "__main__":
    main()
