"""First frame on live Slurm: ``python bench/first_frame_live.py [-n 5] [--whole]``.

Runs against a real Slurm (the sandbox: export its ``SLURM_CONF``), with the app built as
``fairtop --slurm`` builds it (the registry's :class:`~tui.sources.registry.SlurmSource`, its
staged load, headless ``App.run``). The live source's command runner is wrapped to note when
``sshare`` returns; the app's ``on_standing_loaded`` is wrapped to note, after the next refresh
(the frame drawn with that message's tree), the first frame and the whole one.

Reported per run (seconds):

``sshare``
    sshare's own run time (``sshare -a -l -P``).
``first_frame``
    From sshare returning to the first frame with the tree drawn. Target under 0.3 s at 20k
    associations (issue 25). It covers parsing sshare's output (and the config, asked alongside
    sshare), the engine, the tree table and the draw.
``first_frame_cpu``
    The CPU time the process (all its threads) spent in that interval, which the machine's
    other processes do not stretch.
``shell_frame``
    From sshare returning to the app's empty shell drawn after ``on_mount`` (negative: drawn before
    sshare returned). While the shell is still being laid out, the load worker shares the
    interpreter with it, so a small tree's sshare returning early does not draw early.
``whole_frame``
    From sshare returning to the frame with everything (sacctmgr, partitions, assoc_mgr, sprio,
    squeue) drawn.
``--whole`` runs the app without stages (``stages=None``: every command before the first
frame, as before staging) for comparison; its ``first_frame`` is then the whole one.

The tree size is what the sandbox holds; the script prints it (``sshare -a`` rows).
``--spec FILE [--size N]`` writes a tree.sh spec of about N associations instead (default 20,000:
root -> ff<d> (40) -> ff<d>g<g> (10 each) -> 50 users each, the users fu00..fu49 shared by all
groups, so only 50 Unix users are made) for ``tree.sh --bulk FILE``, and exits.

``--offline FOLDER [--against REV]`` times the first stage's work after sshare returns without a
cluster: FOLDER holds ``sshare_a_l_P.psv`` and ``scontrol_show_config.txt`` as the sandbox printed
them; the live source is fed them by its runner (every other command fails, as still running),
then the standing (engine) and the tree table are built, as the load worker does. Each figure is
the thread's CPU time (``time.thread_time``: what other processes do to the wall clock is not in
it), median of ``-n`` runs per process after one not counted, 3 processes per tree taking turns
(``--against REV``: the tree of git revision REV too, as ``bench/whatif_draw.py`` does). glibc's
mmap threshold is fixed as the app fixes it (``tui/app/allocator.py``), so every array from 128 kB
up is fresh pages each run, as in the app: without it the repeated runs reuse the heap and miss
the page faults (~4 us each on the 2-core box) that the live first frame pays.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def one_run(staged: bool) -> dict[str, float]:
    from tui.app.app import FairtopApp
    from tui.config import Settings, State
    from tui.sources.commands import run
    from tui.sources.registry import SlurmSource

    marks: dict[str, float] = {}
    source = SlurmSource(None, "", 30.0)
    live = source.live_slurm

    def runner(args: list[str], timeout: float):  # noqa: ANN202 - Output
        t = time.perf_counter()
        out = run(args, timeout, check=False)
        if args[0] == "sshare":
            marks["sshare_returned"], marks["sshare"] = time.perf_counter(), time.perf_counter() - t
            marks["sshare_cpu"] = time.process_time()
        return out

    live.runner = runner
    app = FairtopApp(Settings(source="slurm", refresh_rate=3600, theme="dark"), source.load, "", State(),
                     live=True, source_name="slurm", stages=source.load_stages if staged else None)
    loaded = FairtopApp.on_standing_loaded  # Textual finds handlers on the class, not the instance

    def on_standing_loaded(self: FairtopApp, message) -> None:  # noqa: ANN001 - StandingLoaded
        loaded(self, message)
        rows = message.standing.snapshot.tree.size if message.standing.snapshot.tree is not None else 0
        marks["rows"] = rows

        def drawn(whole: bool = not message.loading) -> None:
            if "first_frame" not in marks:
                marks["first_frame"], marks["first_cpu"] = time.perf_counter(), time.process_time()
            if whole:
                marks["whole_frame"] = time.perf_counter()
                app.exit(0)

        app.call_after_refresh(drawn)

    mounted = FairtopApp.on_mount

    def on_mount(self: FairtopApp) -> None:
        mounted(self)
        self.call_after_refresh(lambda: marks.setdefault("shell_frame", time.perf_counter()))

    FairtopApp.on_standing_loaded = on_standing_loaded  # type: ignore[method-assign]
    FairtopApp.on_mount = on_mount  # type: ignore[method-assign]
    try:
        app.run(headless=True, size=(160, 50))
    finally:
        FairtopApp.on_standing_loaded = loaded  # type: ignore[method-assign]
        FairtopApp.on_mount = mounted  # type: ignore[method-assign]
    t0 = marks["sshare_returned"]
    return {"rows": marks["rows"], "sshare": marks["sshare"], "shell_frame": marks["shell_frame"] - t0,
            "first_frame": marks["first_frame"] - t0, "first_frame_cpu": marks["first_cpu"] - marks["sshare_cpu"],
            "whole_frame": marks["whole_frame"] - t0}


OFFLINE = r"""
import statistics, sys, time
from pathlib import Path
from tui.analysis.standing import build_standing
from tui.app.tree_rows import TreeTable
from tui.sources.commands import Output
from tui.sources.slurm_cli import LiveSlurm

folder, runs = Path(sys.argv[1]), int(sys.argv[2])
try:  # glibc's mmap threshold fixed as the app fixes it: every array from 128 kB up is fresh pages
    from tui.app.allocator import keep_large_blocks_mapped
    keep_large_blocks_mapped()
except ImportError:  # a tree from before allocator.py
    pass
saved = {"sshare": (folder / "sshare_a_l_P.psv").read_bytes(),
         "scontrol": (folder / "scontrol_show_config.txt").read_bytes()}

def runner(args, timeout):
    if args[0] == "sshare" or args[:3] == ["scontrol", "show", "config"]:
        return Output(tuple(args), 0, saved[args[0]], "")
    return Output(tuple(args), 1, b"", "not in this bench")

def one():
    t0 = time.thread_time()
    snap, running = next(LiveSlurm(runner=runner).read_stages())
    t1 = time.thread_time()
    standing = build_standing(snap, "", check_printed=not running)
    t2 = time.thread_time()
    TreeTable.from_standing(standing)
    t3 = time.thread_time()
    return snap.tree.size, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)

one()
got = [one() for _ in range(runs)]
print(got[0][0], *(statistics.median(g[1][k] for g in got) for k in range(4)))
"""
OFFLINE_FIGURES = ("snapshot (sshare parsed)", "standing (engine)", "tree table", "all")


def offline(folder: Path, runs: int, against: str | None) -> None:
    """``--offline``: CPU of the first stage's work on saved output, per tree (module docstring)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    trees = {"this tree": root}
    if against:
        sys.path.insert(0, str(root / "bench"))
        from report import export

        trees[against] = export(against)
    got: dict[str, list[list[float]]] = {name: [] for name in trees}
    rows = 0
    for _ in range(3):
        for name, src in trees.items():
            home = tempfile.mkdtemp(prefix="fairtop-bench-")
            out = subprocess.run([sys.executable, "-P", "-c", OFFLINE, str(folder.resolve()), str(runs)], cwd=src,
                                 capture_output=True, text=True, timeout=600, check=True,
                                 env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "HOME": home}).stdout.split()
            rows = int(out[0])
            got[name].append([1e3 * float(x) for x in out[1:]])
    print(f"{rows:,} associations; CPU ms, median of {runs} runs per process (3 processes: min-max)")
    print()
    print("| tree | " + " | ".join(OFFLINE_FIGURES) + " |")
    print("|---|" + "---:|" * len(OFFLINE_FIGURES))
    for name, procs in got.items():
        cells = [f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in zip(*procs)]
        print(f"| {name} | " + " | ".join(cells) + " |")


def write_spec(path: Path, size: int) -> int:
    """A tree.sh spec of about ``size`` associations; returns how many."""
    groups = max(1, size // 51)
    lines = []
    for g in range(groups):
        d, k = divmod(g, 10)
        if k == 0:
            lines.append(f"account root ff{d:02d} {1 + d % 7}")
        lines.append(f"account ff{d:02d} ff{d:02d}g{k} {1 + k % 4}")
        lines += [f"user ff{d:02d}g{k} fu{u:02d} {1 + u % 3}" for u in range(50)]
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs (default 5)")
    parser.add_argument("--whole", action="store_true", help="no stages: every command before the first frame")
    parser.add_argument("--spec", type=Path, help="write a tree.sh spec to SPEC and exit")
    parser.add_argument("--size", type=int, default=20_000, help="associations in --spec (default 20,000)")
    parser.add_argument("--offline", type=Path, metavar="FOLDER",
                        help="time the work after sshare on saved sshare and config output instead")
    parser.add_argument("--against", metavar="REV", help="with --offline: also the tree of git revision REV")
    args = parser.parse_args(argv)
    if args.offline:
        offline(args.offline, args.n, args.against)
        return 0
    if args.spec:
        print(f"{write_spec(args.spec, args.size):,} associations in {args.spec}")
        return 0
    import os

    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="fairtop-bench-"))
    os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="fairtop-bench-"))
    runs = [one_run(not args.whole) for _ in range(args.n)]
    for i, r in enumerate(runs):
        print(f"run {i + 1}: " + "  ".join(f"{k} {v:.3f}" if k != "rows" else f"rows {int(v):,}" for k, v in r.items()))
    for key in ("sshare", "shell_frame", "first_frame", "first_frame_cpu", "whole_frame"):
        values = [r[key] for r in runs]
        print(f"{key}: median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
