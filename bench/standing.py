"""``fairtop standing``: the whole process, from a published snapshot folder, against ``python -c pass``.

A login banner or a prompt runs it as a new process every time, so what counts is the process
from start to exit: interpreter, imports, reading the folder, the line. The folder is what
``fairtop capture --every`` publishes (``DIR/<UTC time>/`` with every user's line in
``fairtop_standings.json``, and the ``DIR/current`` symlink), here holding a saved capture:
tests/fixtures/slurm/live/fair_tree (8 users) and near_tie (2,080 associations, 2,021 users, a
1.5 MB ``scontrol show assoc_mgr``); the same near_tie folder without the file (saved by hand:
the line is computed with the engine) for comparison. Each command runs ``-n`` times (fairtop's
bytecode compiled first, as an install has it), interleaved so a busy neighbour hurts all of them
alike; the table gives the fastest and the median wall time, and the fastest minus the fastest
``python -c pass`` (the floor no Python tool goes under) and minus ``import numpy`` (the floor of
anything that computes).

    .venv/bin/python bench/standing.py [-n 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAIRTOP = [sys.executable, "-m", "tui.cli"]


CAPTURES = {"small": (ROOT / "tests/fixtures/slurm/live/fair_tree", "la"),
            "2k": (ROOT / "tests/fixtures/slurm/near_tie/fair_tree", "u02144")}


def publish(capture: Path, into: Path, lines: bool = True) -> Path:
    """``into/<stamp>/`` holding ``capture``'s files and ``into/current`` pointing at it, as the
    publisher leaves it (``lines``: with every user's line, as ``capture --every`` writes it)."""
    from tui.cli.capture import _arrange_private

    stamp = into / "20261126T060000Z"
    shutil.copytree(capture, stamp)
    if lines:
        _arrange_private(stamp, None, False)
    (into / "current").symlink_to(stamp.name)
    return into / "current"


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="runs of each command (default 15)")
    args = parser.parse_args()
    # fairtop's own bytecode, as pip leaves it in an installed fairtop: without it (a checkout run
    # under PYTHONDONTWRITEBYTECODE, as here) every run compiled tui/cli/ and the rest again
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tui")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        current = {name: publish(capture, Path(tmp) / name) for name, (capture, _) in CAPTURES.items()}
        small, big = current["small"], current["2k"]
        saved = publish(CAPTURES["2k"][0], Path(tmp) / "saved", lines=False)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
            "fairtop standing --from DIR/current (8 users)": [*FAIRTOP, "standing", "--from", str(small), "--user",
                                                              CAPTURES["small"][1]],
            "  ... --format json": [*FAIRTOP, "standing", "--from", str(small), "--user", CAPTURES["small"][1],
                                    "--format", "json"],
            "fairtop standing --from DIR/current (2,021 users)": [*FAIRTOP, "standing", "--from", str(big), "--user",
                                                                  CAPTURES["2k"][1]],
            "fairtop standing --from DIR (2,021 users, no lines: computed)": [
                *FAIRTOP, "standing", "--from", str(saved), "--user", CAPTURES["2k"][1]],
            "fairtop standing --demo (2,501 users, made in memory)": [*FAIRTOP, "standing", "--demo", "--user",
                                                                      "alice"],
            "fairtop report --from DIR/current (8 users)": [*FAIRTOP, "report", "--from", str(small)],
        }
        for argv in list(commands.values())[2:6]:
            print(subprocess.run(argv, capture_output=True, text=True, cwd=ROOT).stdout.strip()[:160])
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.n):
            for name, argv in commands.items():
                times[name].append(timed(argv))
    wall = {name: [w for w, _ in got] for name, got in times.items()}
    cpu = {name: [c for _, c in got] for name, got in times.items()}
    floor, numpy_floor = min(wall["python -c pass"]), min(wall["python -c 'import numpy'"])
    print(f"\n{args.n} runs each, {time.strftime('%Y-%m-%d %H:%M')}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs\n")
    print("| command | wall, fastest (s) | wall, median (s) | fastest - pass (s) | fastest - import numpy (s) "
          "| CPU, least (s) |")
    print("|:---|---:|---:|---:|---:|---:|")
    for name in commands:
        best = min(wall[name])
        print(f"| `{name.strip()}` | {best:.3f} | {statistics.median(wall[name]):.3f} | {best - floor:.3f} | "
              f"{best - numpy_floor:.3f} | {min(cpu[name]):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
