"""What reading the balances ``--by-group`` costs cli_filter.lua, against the single file: the real
filter in Debian's lua5.3 (Slurm's API stubbed, as tests/allocations/test_cli_filter_lua.py runs
it), no Slurm.

    .venv/bin/python bench/cli_filter_by_group.py [--allocs 600] [--groups 200] [-n 200] [-k 2000]

A site of ``--allocs`` allocations spread over ``--groups`` Unix gids, published both ways (one
file; ``balances.d/<gid>``). The submitter is in 1, 4 or 16 of those gids (as root, set with
``setpriv --regid --groups``, the same in every row; otherwise the runner's own groups, which then
own the allocations), its job fits its primary group's allocation. Two figures per row:

* per call: one lua5.3 runs ``slurm_cli_pre_submit`` ``-k`` times and times each call with
  ``os.clock()`` (CPU time of the process, user + system: the parsing and the open/read calls);
* per process: ``-n`` whole ``lua5.3`` runs of one call, wall time, against a job step (the filter
  returns at once), which is what sbatch pays on top of loading the filter.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.allocations.balance_file import format_balances, write_balances  # noqa: E402
from tui.allocations.records import AllocationRecord  # noqa: E402

FILTER = ROOT / "tui" / "allocations" / "cli_filter.lua"
FIRST_GID = 300_000
OPTIONS = '{type = "sbatch", account = "p0", ntasks = "1", time = "10"}'
STEP = '{type = "srun", jobid = "42", account = "p0", ntasks = "1", time = "10"}'


def _allocs(n: int, groups: list[int]) -> list[AllocationRecord]:
    today = date.today()
    start, end = str(today - timedelta(days=10)), str(today + timedelta(days=300))
    out = []
    for i in range(n):
        gid = groups[i % len(groups)]
        out.append(AllocationRecord(id=i + 1, project=i + 1, project_name=f"p{i}", gid=gid, account=f"p{i}",
                                    resource="cpu" if i % 3 else "gpu", category="startup", start=start, end=end,
                                    credits=10**6, predebits=0, debits=0, balance=10**6))
    return out


def _publish(where: Path, allocs: list[AllocationRecord]) -> tuple[Path, Path]:
    now = time.time()
    single = where / "balances"
    write_balances(single, format_balances(allocs, now))
    folder = where / "balances.d"
    folder.mkdir()
    by_gid: dict[int, list[AllocationRecord]] = {}
    for a in allocs:
        by_gid.setdefault(a.gid, []).append(a)
    for gid, mine in by_gid.items():  # the publisher's layout without its chown (the runner reads all)
        write_balances(folder / str(gid), format_balances(mine, now), 0o640)
    return single, folder


def _lua_script(patched: Path, options: str, k: int) -> str:
    return (f'slurm = {{SUCCESS = 0, ERROR = -1}}\ndofile("{patched}")\n'
            f"local t = {{}}\nfor i = 1, {k} do\n  local c = os.clock()\n"
            f"  slurm_cli_pre_submit({options}, 0)\n  t[i] = os.clock() - c\nend\n"
            'for i = 1, #t do io.write(string.format("%.9f\\n", t[i])) end\n')


def _q(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * q))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allocs", type=int, default=600, help="allocations at the site (default 600)")
    ap.add_argument("--groups", type=int, default=200, help="Unix gids they belong to (default 200)")
    ap.add_argument("-n", type=int, default=200, help="whole lua5.3 processes per row (default 200)")
    ap.add_argument("-k", type=int, default=2000, help="calls timed inside one process per row (default 2000)")
    args = ap.parse_args()
    lua = shutil.which("lua5.3")
    if lua is None:
        raise SystemExit("no lua5.3 (apt-get install lua5.3)")
    as_root = os.geteuid() == 0 and shutil.which("setpriv") is not None
    gids = list(range(FIRST_GID, FIRST_GID + args.groups)) if as_root else sorted({os.getgid(), *os.getgroups()})
    where = Path(tempfile.mkdtemp(prefix="fairtop-filter-bench-"))
    try:
        patched = where / "cli_filter.lua"
        patched.write_text(FILTER.read_text().replace('local FAIRTOP = "fairtop"', 'local FAIRTOP = "false"'))
        single, folder = _publish(where, _allocs(args.allocs, gids))
        env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "FAIRTOP_BALANCES")}
        member_counts = [c for c in (1, 4, 16) if c <= len(gids)] if as_root else [len(gids)]
        rows: list[tuple[str, list[float], list[float]]] = []
        for count in member_counts:
            ident = (["setpriv", f"--regid={gids[0]}", f"--groups={','.join(map(str, gids[1:count]))}", "--"]
                     if as_root and count > 1 else
                     ["setpriv", f"--regid={gids[0]}", "--clear-groups", "--"] if as_root else [])
            ways = [(f"job step (returns at once), {count} group(s)", single, STEP),
                    (f"single file, {count} group(s)", single, OPTIONS),
                    (f"--by-group folder, {count} group(s)", folder, OPTIONS)]
            walls: list[list[float]] = [[] for _ in ways]
            for _ in range(args.n):  # the ways in turn: the other workers' load weighs on each alike
                for i, (_, path, options) in enumerate(ways):
                    run_env = {**env, "FAIRTOP_BALANCES": str(path)}
                    t0 = time.perf_counter()
                    subprocess.run([*ident, lua, "-e", _lua_script(patched, options, 1)], env=run_env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                    walls[i].append(time.perf_counter() - t0)
            for (label, path, options), wall in zip(ways, walls, strict=True):
                run_env = {**env, "FAIRTOP_BALANCES": str(path)}
                out = subprocess.run([*ident, lua, "-e", _lua_script(patched, options, args.k)], env=run_env,
                                       capture_output=True, text=True, check=True, timeout=600).stdout.split()
                rows.append((label, [float(x) for x in out], wall))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    per_gid = args.allocs / len(gids)
    print(f"lua5.3, {args.allocs} allocations over {len(gids)} gids ({per_gid:.0f} a file --by-group), "
          f"{args.k} calls in one process and {args.n} processes per row; load average {os.getloadavg()[0]:.2f}")
    print("| row | per call: median us | p99 us | per process: median ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for label, calls, wall in rows:
        print(f"| {label} | {1e6 * statistics.median(calls):.0f} | {1e6 * _q(calls, 0.99):.0f} | "
              f"{1e3 * statistics.median(wall):.2f} | {1e3 * _q(wall, 0.99):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
