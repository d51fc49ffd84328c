"""First frame in a real terminal: ``python bench/first_frame.py [-n 5] [--pbs-tui PATH]``.

Each app is started in a fresh tmux window of 120x40 (a real terminal: tmux parses the escape
codes and keeps the screen), and the screen is read with ``tmux capture-pane`` every 10 ms until
the app's data rows are on it. The time is from just before ``tmux new-window`` to the first
capture that shows them: the whole process, interpreter start-up, imports, loading the data and
drawing included. The apps take turns (A B A B ...), so a drift in the machine's load hits both.

- fairtop: ``fairtop --demo --user alice`` (the 2,500-user demo), done when a tree row carries its
  numbers: alice's row (the app opens on it) or, for older revisions, the root row;
- pbs-tui (PyPI ``pbs-tui``, a Textual dashboard for PBS Pro, in its own venv; not a project
  dependency): ``pbs-tui --dummy``, done when the first job row (a job id) is drawn;
- floor: a Textual app that shows 20 static lines (nothing else), done when its last line is;
- numpy floor (issue 33): the same app importing ``numpy`` and ``numpy.random`` and computing its
  20 lines with them, done when its last line is. fairtop computes with numpy too, so this floor is
  the one its first frame is held to (the target is 1.3x of it).

One tmux server on a private socket (``-L fairtop-bench``) holds a idle session for the whole
run, so no run pays for starting the server. Prints, per app, the median, min and max of the
wall time and of the CPU time the app's process had used when its rows appeared (from
``/proc/PID/stat``: on a loaded machine the wall time is mostly waiting for a core, the CPU time
is what the app costs), the load average before and after, and each app's ratio to the numpy
floor (of the medians, and the median of the ratios round by round).

``--syscalls``: each app once more under ``strace -f -c -e trace=%file`` (every system call that
names a file: open, stat, access, readlink, ...), stopped when its rows appear; prints the calls
and the failed ones (mostly the import system's misses along ``sys.path``). On a login node whose
Python lives on NFS or Lustre each is a round trip.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOCKET = "fairtop-bench"
WIDTH, HEIGHT = 120, 40
TIMEOUT_S = 30.0
POLL_S = 0.01

FLOOR_APP = '''
from textual.app import App
from textual.widgets import Static

class Floor(App):
    def compose(self):
        for i in range(20):
            yield Static(f"static line {i}")

Floor().run()
'''

NUMPY_FLOOR_APP = '''
import numpy as np
import numpy.random
from textual.app import App
from textual.widgets import Static

class Floor(App):
    def compose(self):
        draws = np.random.default_rng(0).random(20)
        for i, x in enumerate(np.cumsum(draws)):
            yield Static(f"numpy line {i} {x:.3f}")

Floor().run()
'''


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_frame(argv: list[str], done: re.Pattern[str], name: str, env: dict[str, str] | None = None
                ) -> tuple[float, float]:
    """Seconds from starting ``argv`` in a new 120x40 window to the first screen matching
    ``done``, and the CPU seconds the app had used by then (the machine's load stretches the
    first; the second is what the app itself costs)."""
    t0 = time.perf_counter()
    tmux("new-window", "-d", "-t", "bench", "-n", name, *(f"-e{k}={v}" for k, v in (env or {}).items()), *argv)
    pid = int(tmux("display-message", "-p", "-t", f"bench:{name}", "#{pane_pid}"))
    try:
        while True:
            screen = tmux("capture-pane", "-p", "-t", f"bench:{name}")
            if done.search(screen):
                return time.perf_counter() - t0, cpu_seconds(pid)
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError(f"{name}: no match for {done.pattern!r} in {TIMEOUT_S:g} s:\n{screen}")
            time.sleep(POLL_S)
    finally:
        tmux("kill-window", "-t", f"bench:{name}")


def file_calls(argv: list[str], done: re.Pattern[str], name: str, env: dict[str, str], out: Path) -> tuple[int, int]:
    """File system calls (and failed ones) of ``argv`` from its start to its first data frame."""
    traced = ["strace", "-f", "-c", "-e", "trace=%file", "-o", str(out), *argv]
    tmux("new-window", "-d", "-t", "bench", "-n", name, *(f"-e{k}={v}" for k, v in env.items()), *traced)
    pid = int(tmux("display-message", "-p", "-t", f"bench:{name}", "#{pane_pid}"))  # strace
    t0 = time.perf_counter()
    while not done.search(tmux("capture-pane", "-p", "-t", f"bench:{name}")):
        if time.perf_counter() - t0 > TIMEOUT_S:
            raise TimeoutError(f"{name}: no match for {done.pattern!r} under strace")
        time.sleep(POLL_S)
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        os.kill(int(child), signal.SIGKILL)  # the app: strace then writes its summary and exits
    while "total" not in (out.read_text() if out.exists() else ""):
        time.sleep(POLL_S)
    total = next(line for line in out.read_text().splitlines() if line.rstrip().endswith("total")).split()
    return int(total[-3]), int(total[-2]) if len(total) == 6 else 0


def compile_bytecode(folder: Path) -> None:
    """Write ``folder``'s ``.pyc`` files, as an installed package has them (pip compiles at
    install; a checkout gets them at its first run unless PYTHONDONTWRITEBYTECODE is set, as it
    is on this machine: without them every start compiles all of ``tui/``, ~0.15 s)."""
    import compileall

    compileall.compile_dir(str(folder), quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs of each app (default 5)")
    parser.add_argument("--pbs-tui", default="/tmp/pbstui-venv/bin/pbs-tui", help="the pbs-tui executable")
    parser.add_argument("--fairtop", default=str(ROOT / ".venv" / "bin" / "fairtop"), help="the fairtop executable")
    parser.add_argument("--against", metavar="REV", help="also time fairtop as of this git revision (e.g. main)")
    parser.add_argument("--syscalls", action="store_true", help="also count each app's file system calls (strace)")
    args = parser.parse_args()
    if not shutil.which("tmux"):
        print("needs tmux", file=sys.stderr)
        return 2
    floor = Path(tempfile.mkdtemp()) / "floor.py"
    floor.write_text(FLOOR_APP)
    numpy_floor = floor.with_name("numpy_floor.py")
    numpy_floor.write_text(NUMPY_FLOOR_APP)
    python = str(Path(args.fairtop).with_name("python"))
    root_row = re.compile(r"▾ root +[0-9]|\n +alice +(parent|[0-9]+) +[0-9]")
    apps: dict[str, tuple[list[str], re.Pattern[str], dict[str, str]]] = {
        "fairtop": ([args.fairtop, "--demo", "--user", "alice"], root_row, {}),
        "floor": ([python, str(floor)], re.compile(r"static line 19"), {}),
        "numpy-floor": ([python, str(numpy_floor)], re.compile(r"numpy line 19 "), {}),
    }
    if args.against:
        sys.path.insert(0, str(ROOT / "bench"))
        from report import export

        src = export(args.against)
        compile_bytecode(src)
        # -P: the checkout in the cwd must not come first
        apps[f"fairtop@{args.against}"] = ([python, "-P", "-m", "tui.cli", "--demo", "--user", "alice"], root_row,
                                           {"PYTHONPATH": str(src)})
    if Path(args.pbs_tui).exists():
        apps["pbs-tui"] = ([args.pbs_tui, "--dummy"], re.compile(r"▊\s+[0-9]{6,}\s+\w"), {})
    else:
        print(f"no pbs-tui at {args.pbs_tui}: python -m venv /tmp/pbstui-venv && "
              "/tmp/pbstui-venv/bin/pip install pbs-tui", file=sys.stderr)
    compile_bytecode(ROOT / "tui")
    env = {**os.environ, "TERM": "xterm-256color"}
    os.environ.update(env)
    subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    tmux("new-session", "-d", "-s", "bench", "-x", str(WIDTH), "-y", str(HEIGHT), "sleep", "3600")
    tmux("set-option", "-g", "default-size", f"{WIDTH}x{HEIGHT}")
    tmux("set-window-option", "-g", "aggressive-resize", "off")
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in apps}
    cpu: dict[str, list[float]] = {name: [] for name in apps}
    try:
        for name, (argv, done, env) in apps.items():  # warm-up: the disk cache, not counted
            first_frame(argv, done, name, env)
        for _ in range(args.n):
            for name, (argv, done, env) in apps.items():
                wall, used = first_frame(argv, done, name, env)
                times[name].append(wall)
                cpu[name].append(used)
        calls = {name: file_calls(argv, done, name, env, floor.with_name(f"{name}.strace"))
                 for name, (argv, done, env) in apps.items()} if args.syscalls else {}
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    load_after = os.getloadavg()
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {WIDTH}x{HEIGHT} tmux, {args.n} runs each, load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after")
    for name, runs in times.items():
        print(f"{name:13} wall median {statistics.median(runs):.2f} s (min {min(runs):.2f}, max {max(runs):.2f}); "
              f"CPU median {statistics.median(cpu[name]):.2f} s (min {min(cpu[name]):.2f}, max {max(cpu[name]):.2f})")
    base = times["numpy-floor"]
    for name, runs in times.items():  # each run against the numpy floor's run of the same round
        if name not in ("floor", "numpy-floor"):
            pairs = [a / b for a, b in zip(runs, base)]
            used = statistics.median(cpu[name]) / statistics.median(cpu["numpy-floor"])
            print(f"{name:13} / numpy-floor: wall {statistics.median(runs) / statistics.median(base):.2f}x "
                  f"(median of the {len(pairs)} rounds' ratios {statistics.median(pairs):.2f}x, "
                  f"min {min(pairs):.2f}x); CPU {used:.2f}x")
    for name, (n, failed) in calls.items():
        print(f"{name:13} file system calls to the first frame: {n:,} ({failed:,} failed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
