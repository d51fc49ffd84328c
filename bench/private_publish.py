"""The publisher under PrivateData: what one capture costs to lay out for every user.

A capture of a real 2,080-association Slurm tree (tests/fixtures/slurm/near_tie/fair_tree, 2,021
users) is made to look like a PrivateData cluster's (``PrivateData = usage,jobs,users,accounts``
in its config, every user listed by ``sacctmgr show user``, one in ten a coordinator of their
account) and laid out by :func:`tui.sources.private_publish.arrange` as ``fairtop capture --every``
does: the whole capture for the publisher, each user's view with their ranking among all users.
Views are given to this process's own uid (a bench creates no Unix users), so the figure is the
work without the chown calls (one per file). Prints the time of the rankings and of the whole
layout, and the files and bytes written, for ``-n`` runs; and what every user's summary line
(``fairtop_standings.json``, for ``fairtop standing``) adds: the layout without the lines, and a
public capture's one file of 2,021 lines (load, engine, lines) against the load and engine alone.

    .venv/bin/python bench/private_publish.py [-n 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.sources.private_data import USERS_FILE
from tui.publish_answers import Answers
from tui.sources.private_publish import arrange

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "tests/fixtures/slurm/near_tie/fair_tree"


def private_copy(into: Path) -> int:
    """The capture in ``into`` as a PrivateData cluster's; returns its number of users."""
    shutil.copytree(CAPTURE, into, ignore=shutil.ignore_patterns("rest", "*.gz"))
    for sub in [p for p in into.iterdir() if p.is_dir()]:
        shutil.rmtree(sub)
    conf = into / "scontrol_show_config.txt"
    conf.write_text(conf.read_text() + "PrivateData             = accounts,jobs,usage,users\n")
    header, *rows = (into / "sshare_a_l_P.psv").read_text().splitlines()
    cols = header.split("|")
    ia, iu = cols.index("Account"), cols.index("User")
    users: dict[str, str] = {}
    for row in rows:
        cells = row.split("|")
        if cells[iu]:
            users.setdefault(cells[iu], cells[ia].strip())
    lines = ["User|Admin|Coord Accounts"]
    lines += [f"{u}|None|{a if k % 10 == 0 else ''}" for k, (u, a) in enumerate(sorted(users.items()))]
    (into / USERS_FILE).write_text("\n".join(lines) + "\n")
    return len(users)


class RankingsOnly(Answers):
    """The layout as it was before the summary lines: rankings only."""

    def whole(self, folder: Path) -> bytes | None:
        return None

    def view(self, folder: Path, reader: str, note: Mapping[str, Any], partial: bool) -> bytes | None:
        return None


def public_lines(into: Path) -> tuple[float, float, float, float, int]:
    """A public capture: wall and CPU seconds to load it and run the engine, the same for that plus
    every user's line in one file, and the file's size."""
    shutil.copytree(CAPTURE, into, ignore=shutil.ignore_patterns("rest", "*.gz"))
    t0, c0 = time.perf_counter(), time.process_time()
    Answers(into)
    engine = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    data = Answers(into).whole(into)
    lines = time.perf_counter() - t0, time.process_time() - c0
    return *engine, *lines, len(data or b"")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=3)
    n = ap.parse_args().n
    me = os.getuid()
    rank_s, total_s, bare_s, engine_s, lines_s, engine_cpu, lines_cpu = [], [], [], [], [], [], []
    bare_cpu: list[float] = []
    total_cpu: list[float] = []
    size_public = 0
    files = size = users = links = 0
    for _ in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "cap"
            users = private_copy(folder)
            t0 = time.perf_counter()
            Answers(folder).rankings()
            rank_s.append(time.perf_counter() - t0)
            bare = Path(tmp) / "bare"
            private_copy(bare)
            t0, c0 = time.perf_counter(), time.process_time()
            arrange(bare, RankingsOnly, uid_of=lambda name: me)
            bare_s.append(time.perf_counter() - t0)
            bare_cpu.append(time.process_time() - c0)
            engine, cpu, lines, cpu_lines, size_public = public_lines(Path(tmp) / "public")
            engine_s.append(engine)
            lines_s.append(lines)
            engine_cpu.append(cpu)
            lines_cpu.append(cpu_lines)
            t0, c0 = time.perf_counter(), time.process_time()
            note = arrange(folder, Answers, uid_of=lambda name: me)
            total_s.append(time.perf_counter() - t0)
            total_cpu.append(time.process_time() - c0)
            written = [p for p in (folder / "users").rglob("*") if p.is_file() and not p.is_symlink()]
            links = sum(1 for p in (folder / "users").rglob("*") if p.is_symlink())
            files, size = len(written), sum(p.stat().st_size for p in written)
    print(f"{users:,} users, PrivateData=accounts,jobs,usage,users; {note}")
    print(f"rankings (load, engine, every user's path): median {statistics.median(rank_s):.2f} s "
          f"(min {min(rank_s):.2f})")
    print(f"whole layout without the summary lines: median {statistics.median(bare_s):.2f} s "
          f"(min {min(bare_s):.2f}; CPU {min(bare_cpu):.2f} s at least)")
    print(f"public capture: load + engine {statistics.median(engine_s):.2f} s ({min(engine_cpu):.2f} s CPU at "
          f"least), + every user's line ({size_public / 1e6:.2f} MB) {statistics.median(lines_s):.2f} s "
          f"({min(lines_cpu):.2f} s CPU at least); wall: medians")
    print(f"whole layout (rankings + lines + {files:,} view files, {size / 1e6:.1f} MB, {links:,} links to "
          f"common/): median {statistics.median(total_s):.2f} s (min {min(total_s):.2f}; CPU {min(total_cpu):.2f} s "
          "at least)")


if __name__ == "__main__":
    main()
