"""``fairtop report`` on 200,000 associations as a whole process: ``python bench/report.py [-n 5]
[--against REV]``.

Writes a Fair Tree ``sshare -a -l -P`` file of 200k rows (``bench/sources.py``'s generator: 20k
accounts in a random recursive tree, 180k users), then runs ``python -m tui.cli report --sshare
FILE --format json`` (and csv, and table) in fresh processes, stdout to a file. Each figure is
the whole process: interpreter start, imports, parsing, the engine, formatting, writing. Wall
time and the CPU time of the child (user + system, from ``getrusage``) are both printed: on this
shared 2-core machine the wall time is mostly waiting for a core when other jobs run, the CPU
time is what the command costs.

``--against REV`` also runs the same command from a git revision (exported with ``git archive``
into a temporary folder, run with the same interpreter), alternating with this checkout's, and
checks that both JSON outputs parse to the same rows (values compared as sshare prints them,
six decimals). Target: under 2 s wall for json on an idle machine.
"""

from __future__ import annotations

import argparse
import compileall
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = 200_000


def run_once(src: Path, data: Path, fmt: str, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``report`` process run from source tree ``src``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with out.open("w") as sink:
        subprocess.run([sys.executable, "-m", "tui.cli", "report", "--sshare", str(data), "--format", fmt],
                       cwd=src, env={**os.environ, "PYTHONPATH": str(src)}, stdout=sink, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def export(rev: str) -> Path:
    """The source tree of ``rev`` (``tui/`` and ``themes/``) in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="fairtop-bench-rev-"))
    archive = subprocess.run(["git", "archive", rev, "tui", "themes"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def same_meaning(a: Path, b: Path) -> bool:
    """Both JSON reports give the same rows, numbers compared at sshare's six decimals (the old
    writer printed doubles in full; a null LevelFS there may be "inf" here)."""
    def norm(v: object) -> object:
        return f"{v:.6f}" if isinstance(v, float) else v

    old, new = json.loads(a.read_text()), json.loads(b.read_text())
    keys = set(old[0]) & set(new[0])
    return len(old) == len(new) and all(
        norm(o[k]) == norm(n[k]) or (o[k] is None and n[k] == "inf")
        or (isinstance(o[k], float) and isinstance(n[k], float) and abs(o[k] - n[k]) <= 5.0000001e-7)
        for o, n in zip(old, new) for k in keys)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--against", metavar="REV", help="also run this git revision's report (e.g. main)")
    parser.add_argument("--formats", default="json,csv,table", help="formats to time (default json,csv,table)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from sources import sshare_text

    work = Path(tempfile.mkdtemp(prefix="fairtop-bench-report-"))
    data = work / "sshare.psv"
    data.write_bytes(sshare_text(ROWS))
    trees = {"this": ROOT}
    if args.against:
        trees[args.against] = export(args.against)
    for src in trees.values():  # as installed: pip writes the .pyc files (PYTHONDONTWRITEBYTECODE is set here)
        compileall.compile_dir(str(src / "tui"), quiet=1)
    load_before = os.getloadavg()[0]
    rows = []
    for fmt in args.formats.split(","):
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for name, src in trees.items():  # warm-up: disk cache, .pyc files
            run_once(src, data, fmt, work / f"{name}.{fmt}")
        for _ in range(args.n):
            for name, src in trees.items():
                results[name].append(run_once(src, data, fmt, work / f"{name}.{fmt}"))
        for name, runs in results.items():
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            rows.append(f"| {fmt} | {name} | {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
                        f"{statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f}) |")
        if fmt == "json" and args.against:
            print(f"json of {args.against} and this checkout mean the same: "
                  f"{same_meaning(work / f'{args.against}.json', work / 'this.json')}")
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {ROWS:,} associations, {args.n} runs each, load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("| format | code | wall s, median (min-max) | CPU s, median (min-max) |\n|---|---|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
