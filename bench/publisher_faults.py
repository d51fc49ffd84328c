"""The snapshot publisher through minutes-long faults, on a real Slurm sandbox (issue 26, item 4).

Runs ``fairtop capture --every 10s --timeout 15s DIR`` (DIR on its own small tmpfs) and, in turn:
slurmctld stopped for ``--outage`` minutes, an ``sshare`` that hangs for ``--hang`` minutes (a
wrapper first on PATH that, while a flag file exists, sleeps instead of answering), and the
tmpfs full for ``--full`` minutes; a quiet minute before, between and after. Per fault it prints
the rounds that failed, the stderr lines it wrote (the aim: one when it starts, one when it
ends), whether ``current`` moved, how long after the fault went the next capture was published,
and the publisher's child processes, open files, resident memory and leftover temporary folders.

Needs root (tmpfs, the sandbox) and a sandbox up with its SANDBOX_* environment and SLURM_CONF
exported, e.g. for the pubfaults sandbox:

    export SANDBOX_DIR=/tmp/fairtop-pubfaults SANDBOX_CTLD_PORT=7717 SANDBOX_SLURMD_PORT=7718 \\
      SANDBOX_DBD_PORT=7719 SANDBOX_DB_PORT=14716 SANDBOX_RESTD=0 SANDBOX_CLUSTER=pubf SANDBOX_NODE=pubf-node
    . $SANDBOX_DIR/env.sh
    .venv/bin/python bench/publisher_faults.py --outage 3 --hang 2 --full 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = next((p for p in (ROOT.parent / "shared" / "slurm-sandbox", Path("/work/shared/slurm-sandbox"))
                if p.is_dir()), Path("/work/shared/slurm-sandbox"))
MARKER = "3599.1726"  # the hanging wrapper's sleep: how its leftovers are found


class Lines:
    """A stream's lines with the monotonic time each arrived."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[tuple[float, str]] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def between(self, start: float, end: float) -> list[str]:
        return [text for t, text in self.lines if start <= t < end]

    def first_after(self, start: float) -> float | None:
        return next((t for t, _ in self.lines if t >= start), None)


def _children(pid: int) -> int:
    """Processes whose parent is ``pid`` (the commands a publisher is running now)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            count += int(fields[1]) == pid
    return count


def _stray_sleepers() -> int:
    return sum(1 for e in Path("/proc").iterdir() if e.name.isdigit() and _cmdline(e).find(MARKER.encode()) >= 0)


def _cmdline(entry: Path) -> bytes:
    try:
        return (entry / "cmdline").read_bytes()
    except OSError:
        return b""


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _slurmctld() -> int:
    pids = [line.split() for line in (Path(os.environ["SANDBOX_DIR"]) / "pids").read_text().splitlines()]
    pid = int([p for name, p in pids if name == "slurmctld"][-1])
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "slurmctld"
    return pid


def _stop_slurmctld() -> None:
    pid = _slurmctld()
    os.kill(pid, signal.SIGTERM)
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.2)


def _start_slurmctld() -> None:
    subprocess.run([str(SCRIPTS / "up.sh")], check=True, capture_output=True, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outage", type=float, default=3.0, help="minutes slurmctld is down (default 3)")
    ap.add_argument("--hang", type=float, default=2.0, help="minutes sshare hangs (default 2)")
    ap.add_argument("--full", type=float, default=2.0, help="minutes the disk is full (default 2)")
    ap.add_argument("--timeout", default="15s", help="the publisher's --timeout (default 15s: above sshare's own "
                                                      "9 s of retries when slurmctld is down)")
    ap.add_argument("--quiet", type=float, default=1.0, help="minutes without a fault around each (default 1)")
    args = ap.parse_args()
    if os.geteuid() != 0 or not os.environ.get("SLURM_CONF") or not os.environ.get("SANDBOX_DIR"):
        sys.exit("needs root and a sandbox's SANDBOX_* and SLURM_CONF exported (see --help)")
    work = Path(tempfile.mkdtemp(prefix="fairtop-pubfaults-bench-"))
    disk, wrappers, flag = work / "disk", work / "bin", work / "hang"
    disk.mkdir()
    wrappers.mkdir()
    real = shutil.which("sshare")
    assert real, "no sshare on PATH"
    (wrappers / "sshare").write_text(f"#!/bin/sh\nif [ -e '{flag}' ]; then exec /bin/sleep {MARKER}; fi\n"
                                     f"exec '{real}' \"$@\"\n")
    (wrappers / "sshare").chmod(0o755)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], check=True)
    pub = disk / "pub"
    env = {**os.environ, "PATH": f"{wrappers}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    publisher = subprocess.Popen([sys.executable, "-c", "from tui.cli import main; raise SystemExit(main())",
                                  "capture", "--every", "10s", "--timeout", args.timeout, "--keep", "12",
                                  str(pub)],
                                 env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert publisher.stdout is not None and publisher.stderr is not None
    out, err = Lines(publisher.stdout), Lines(publisher.stderr)
    filler = disk / "filler"

    def fill() -> None:
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        filler.write_bytes(b"\0" * free)

    faults: list[tuple[str, float, Callable[[], None], Callable[[], None]]] = [
        ("slurmctld stopped", args.outage, _stop_slurmctld, _start_slurmctld),
        ("sshare hangs", args.hang, flag.touch, lambda: flag.unlink()),
        ("disk full", args.full, fill, lambda: filler.unlink()),
    ]
    most_children = 0

    def wait(minutes: float) -> None:
        nonlocal most_children
        end = time.monotonic() + minutes * 60
        while time.monotonic() < end:
            most_children = max(most_children, _children(publisher.pid))
            time.sleep(0.5)

    try:
        wait(args.quiet)
        start_rss, start_fds = _rss_kib(publisher.pid), _fds(publisher.pid)
        print("| fault | minutes | rounds failed | stderr lines | current moved | published after it went (s) "
              "| children after | temp left |")
        print("|---|---:|---:|---:|:---:|---:|---:|---:|")
        for name, minutes, bring, take in faults:
            before = os.readlink(pub / "current")
            began = time.monotonic()
            bring()
            wait(minutes)
            moved = os.readlink(pub / "current") != before
            gone = time.monotonic()
            take()
            wait(args.quiet)
            lines = err.between(began, time.monotonic())
            failed = [x for x in lines if x.startswith("fairtop: capture failed")]
            recovered = [x for x in lines if x.startswith("fairtop: capture recovered")]
            rounds = recovered[0].split(" after ")[1].split()[0] if recovered else "?"
            back = out.first_after(gone)
            temp = [p.name for p in pub.iterdir() if p.name.startswith(".")]
            print(f"| {name} | {minutes:g} | {rounds} | {len(lines)} ({len(failed)} failed, {len(recovered)} "
                  f"recovered) | {'yes' if moved else 'no'} | {back - gone if back else float('nan'):.1f} "
                  f"| {_children(publisher.pid)} (stray sleepers {_stray_sleepers()}) | {len(temp)} |", flush=True)
        end_rss, end_fds = _rss_kib(publisher.pid), _fds(publisher.pid)
        print(f"\npublished {len(out.lines)} captures; resident memory {start_rss / 1024:.1f} -> "
              f"{end_rss / 1024:.1f} MiB, open files {start_fds} -> {end_fds}, at most {most_children} children "
              f"at once (sampled every 0.5 s)")
        print("stderr:")
        for t, text in err.lines:
            print(f"  +{t - err.lines[0][0]:6.1f} s  {text}")
    finally:
        publisher.send_signal(signal.SIGTERM)
        publisher.wait(timeout=30)
        if flag.exists():
            flag.unlink()
        try:
            _slurmctld()
        except (AssertionError, IndexError, OSError):
            _start_slurmctld()
        subprocess.run(["umount", str(disk)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
