"""Bytes fairtop writes to its terminal per action, and a 256 kbit/s link: ``python bench/tty_bytes.py``.

Each app runs in a tmux window of the given size (a real terminal) and ``tmux pipe-pane`` copies
everything the app writes to its pty into a file; an action's bytes are the file's growth from
just before ``tmux send-keys`` until the output has been quiet for a while (``--quiet``, 1 s: the
breakdown beside a wide tree waits 0.15 s for the selection to rest, then recomputes). A field of
the what-if form blinks its cursor every 0.5 s, so actions there end at 0.3 s of quiet (a Tab
resets the blink: the first blink comes 0.5 s after it), and so does a key typed at the prompt.

Actions on ``fairtop --demo --user alice`` (the 2,500-user demo): Down (the median of 5), Page
Down, sort (``s``), one filter key (``c`` after ``/``), each tab (``2``..``5``, then ``1``), Tab
in the what-if form (the median of 4), ``:user bob`` (the whole command, typed), idle 10 s
(``--idle``), and a walk of 20 Downs from alice's account, one at a time (the median, the most bytes a Down sent
and the total: the breakdown beside a wide tree changes height between neighbours; ``--walk-only``).
Beside them, a minimal Textual ``DataTable`` app with 2,800 rows and 8 columns in the
same terminal: Down and Page Down.

A followed snapshot: ``fairtop --from ROOT/current --user user1`` on a published folder of 2,800
associations (refresh_rate 2 s), whose ``current`` then flips to a capture in which 1 % of the
rows ran (:func:`follow_captures`); its bytes are those of ``FOLLOW_S`` after the flip less those
of the same time before it (the status line's clock). DataTable's counterpart: one cell in 1 % of
its rows updated (``u``). ``--follow-only`` measures these alone.

``--slow``: fairtop behind ``script -qfc CMD /dev/null | python tty_bytes.py --throttle 32000``
(its pty's output throttled to 256 kbit/s, as an SSH link from home) in a 120x40 and a 200x60
window; the bytes are counted after the throttle, so the last byte's arrival is when the screen
settles. The throttle sends at most 32,000 B/s with no burst allowance (``pv -L 32k`` lets a
second's worth through at once after an idle moment, which hides what one key costs). Prints the time from
a Down to the screen settling (median of 3) and, for Down held 2 s (30 keys a second, a
keyboard's repeat), how long the screen keeps changing after the last key.

``--fairtop CMD`` measures another checkout (e.g. ``/work/main/.venv/bin/fairtop``); ``--against REV``
also measures fairtop as of git revision REV (a ``git archive`` of it on ``PYTHONPATH``) in the
same run, each size and the slow link taking the two in turn.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOCKET = "fairtop-tty-bytes"
SIZES = ((80, 24), (120, 40), (200, 60))
POLL_S = 0.005
FORM_QUIET_S = 0.3
FOLLOW_ROWS = 2800
"""Associations of the followed capture (DataTable's rows)."""
FOLLOW_S = 4.0
"""A followed capture's window: the refresh (every 2 s, the least refresh_rate) and its drawing."""
FOLLOWED = "followed snapshot, 1 % of rows changed"
START_TIMEOUT_S = 60.0
WALK = 20
"""Downs of the walk (``--walk``), one at a time."""

DATATABLE_APP = '''
from textual.app import App
from textual.widgets import DataTable

class Table(App):
    BINDINGS = [("u", "usage", "1 % of the rows' usage changes")]

    def compose(self):
        yield DataTable(cursor_type="row")

    def on_mount(self):
        table = self.query_one(DataTable)
        self.cols = table.add_columns("Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage",
                                      "FairShare", "LevelFS")
        self.keys = [table.add_row(f"acct{i // 40}", f"user{i}", 1, f"{1 / 2800:.6f}", i * 1013 % 99991,
                                   f"{(i * 7 % 1000) / 1000:.6f}", f"{(i * 13 % 1000) / 1000:.6f}",
                                   f"{i % 97 / 10:.3f}")
                     for i in range(2800)]

    def action_usage(self):
        table = self.query_one(DataTable)
        for i in range(7, 2800, 100):
            table.update_cell(self.keys[i], self.cols[4], i * 1013 % 99991 + 1)

Table().run()
'''


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


class Window:
    """One app in a tmux window with its output copied to ``log``."""

    def __init__(self, name: str, argv: list[str], width: int, height: int, log: Path) -> None:
        self.target = name
        self.log = log
        log.write_bytes(b"")
        # A session of its own: a detached session has the size it is made with. The copy starts
        # before the app writes anything (pipe-pane runs a shell command: the path is ours).
        tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
             "sh", "-c", 'sleep 0.3; exec "$@"', "sh", *argv)
        tmux("pipe-pane", "-O", "-t", self.target, f"cat >> {shlex.quote(str(log))}")

    def size(self) -> int:
        return self.log.stat().st_size

    def screen(self) -> str:
        return tmux("capture-pane", "-p", "-t", self.target)

    def keys(self, *keys: str, literal: bool = False) -> None:
        tmux("send-keys", "-t", self.target, *(["-l"] if literal else []), *keys)

    def settle(self, quiet: float, start: int | None = None) -> tuple[int, float]:
        """Wait until nothing was written for ``quiet`` s; (bytes since ``start``, seconds from
        now to the last byte)."""
        t0 = time.perf_counter()
        last_size, last_change = self.size(), t0
        first = last_size if start is None else start
        while time.perf_counter() - last_change < quiet:
            time.sleep(POLL_S)
            size = self.size()
            if size != last_size:
                last_size, last_change = size, time.perf_counter()
        return last_size - first, last_change - t0

    def action(self, *keys: str, quiet: float, literal: bool = False) -> int:
        start = self.size()
        self.keys(*keys, literal=literal)
        return self.settle(quiet, start)[0]

    def wait_for(self, text: str) -> None:
        t0 = time.perf_counter()
        while text not in self.screen():
            if time.perf_counter() - t0 > START_TIMEOUT_S:
                raise TimeoutError(f"{self.target}: no {text!r} on screen:\n{self.screen()}")
            time.sleep(0.05)

    def close(self) -> None:
        # The window's processes, found before the session goes: `script` (the slow link) keeps
        # its own pty, so the session's SIGHUP leaves it and the app under it running for ever.
        pane = int(tmux("display-message", "-p", "-t", self.target, "#{pane_pid}").strip() or 0)
        left = descendants(pane) if pane else []
        tmux("kill-session", "-t", self.target)
        for pid in left:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc), children first found first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def fairtop_actions(win: Window, quiet: float, idle: float) -> dict[str, int]:
    out: dict[str, int] = {}
    win.wait_for("alice")
    win.settle(quiet)
    out["Down"] = int(statistics.median(win.action("Down", quiet=quiet) for _ in range(5)))
    out["Page Down"] = win.action("PageDown", quiet=quiet)
    win.action("m", quiet=quiet)  # back to alice
    out["sort (s)"] = win.action("s", quiet=quiet)
    win.action("0", quiet=quiet)
    win.action("/", quiet=FORM_QUIET_S)  # the prompt's field blinks too
    out["filter: one key"] = win.action("c", quiet=FORM_QUIET_S, literal=True)
    win.action("Enter", quiet=quiet)
    win.action("Escape", quiet=quiet)
    for key in "23451":
        out[f"tab {key}"] = win.action(key, quiet=quiet)
    win.action("4", quiet=quiet)
    win.action("Tab", quiet=FORM_QUIET_S)  # into the form
    out["what-if: Tab"] = int(statistics.median(win.action("Tab", quiet=FORM_QUIET_S) for _ in range(4)))
    win.action("Escape", quiet=FORM_QUIET_S)
    win.action("1", quiet=quiet)
    start = win.size()
    win.keys(":")
    win.settle(0.2)
    win.keys("user bob", literal=True)
    win.settle(0.2)
    win.keys("Enter")
    out[":user bob"] = win.settle(quiet, start)[0]
    if idle:
        start = win.size()
        time.sleep(idle)
        out[f"idle {idle:g} s"] = win.size() - start
    return out


def walk_actions(win: Window, quiet: float) -> dict[str, int]:
    """Bytes per Down from alice's account over its first :data:`WALK` users (each Down settled):
    the breakdown beside a wide tree changes height on the way (a path one level longer, alice's
    pending-jobs block shown, then gone)."""
    win.wait_for("alice")
    win.settle(quiet)
    win.action("Left", quiet=quiet)
    sent = [win.action("Down", quiet=quiet) for _ in range(WALK)]
    return {f"walk of {WALK} Downs: median": int(statistics.median(sent)), f"walk of {WALK} Downs: max": max(sent),
            f"walk of {WALK} Downs: total": sum(sent)}


def datatable_actions(win: Window, quiet: float) -> dict[str, int]:
    win.wait_for("user0")
    win.settle(quiet)
    return {"Down": int(statistics.median(win.action("Down", quiet=quiet) for _ in range(5))),
            "Page Down": win.action("PageDown", quiet=quiet),
            FOLLOWED: win.action("u", quiet=quiet)}


def follow_captures(rows: int = FOLLOW_ROWS) -> tuple[bytes, bytes]:
    """A Fair Tree capture of ``rows`` associations (bench/sources.py's, each account's raw usage
    made the sum of its children's, as Slurm has it), and the same after 1 % of the rows ran:
    that many users' raw usage 5 % higher (their printed LevelFS and FairShare lower) and their
    accounts' sums with it. ``user1`` and the users printed after it in its account are among
    them (on screen where the app opens, on user1's row), the rest picked at random."""
    sys.path.insert(0, str(ROOT))
    from bench.sources import sshare_text

    lines = [line.split("|") for line in sshare_text(rows).decode().split("\n")]
    users = [i for i, cells in enumerate(lines) if len(cells) > 4 and cells[1].startswith("user")]
    mine = next(k for k, i in enumerate(users) if lines[i][1] == "user1")
    picked = set(users[mine:mine + 8])
    rng = random.Random(25)
    while len(picked) < rows // 100:
        picked.add(rng.choice(users))
    base = _sum_accounts(lines)
    for i in picked:
        cells = lines[i]
        cells[4] = str(int(cells[4]) * 105 // 100)
        cells[7] = f"{float(cells[7]) - 0.001:.6f}"
        cells[8] = f"{float(cells[8]) / 1.05:.6f}"
    return base, _sum_accounts(lines)


def _sum_accounts(lines: list[list[str]]) -> bytes:
    """The sshare text of ``lines`` with every account's RawUsage the sum of its children's."""
    parent: dict[int, int] = {}
    stack: list[int] = []  # the account open at each depth (one leading space a level)
    for i, cells in enumerate(lines[1:], start=1):
        if len(cells) < 5:
            continue
        depth = len(cells[0]) - len(cells[0].lstrip(" "))
        if depth:
            parent[i] = stack[depth - 1]
        if not cells[1]:  # an account
            del stack[depth:]
            stack.append(i)
            cells[4] = "0"
    for i in sorted(parent, reverse=True):  # children after their account: bottom-up
        lines[parent[i]][4] = str(int(lines[parent[i]][4]) + int(lines[i][4]))
    return "\n".join("|".join(cells) for cells in lines).encode()


def publish(root: Path, sshare: bytes) -> None:
    """Publish a capture into ``root`` as ``fairtop capture --every`` does (``current`` flips to it)."""
    from tui.sources.publish import publish_once
    from tui.sources.saved import FILES

    def capture(folder: Path) -> str:
        (folder / FILES["sshare"]).write_bytes(sshare)
        (folder / FILES["config"]).write_text("PriorityType = priority/multifactor\nPriorityFlags = FAIR_TREE\n")
        return ""

    publish_once(root, capture, keep=3)


def follow_action(win: Window, root: Path, changed: bytes) -> dict[str, int]:
    """The bytes a followed snapshot with 1 % of rows changed sends: a window of FOLLOW_S after
    ``current`` flips, less the same window before it (the status line's "updated N s ago")."""
    win.wait_for("user1")
    time.sleep(2 * FOLLOW_S)  # the first frames, the breakdown beside the tree, refreshes of the same capture
    start = win.size()
    time.sleep(FOLLOW_S)
    clock = win.size() - start
    start = win.size()
    publish(root, changed)
    time.sleep(FOLLOW_S)
    return {FOLLOWED: win.size() - start - clock, f"live: status clock {FOLLOW_S:g} s": clock}


def slow_link(fairtop: list[str], width: int, height: int, logs: Path) -> dict[str, float]:
    """Seconds from a Down to the screen settling, and from the end of Down held 2 s."""
    inner = shlex.join(fairtop)
    # tmux runs the window's command with sh -c: one string, built from our own arguments.
    throttle = shlex.join([sys.executable, str(Path(__file__).resolve()), "--throttle", "32000"])
    cmd = f"script -qfc {shlex.quote(inner)} /dev/null | {throttle}"
    win = Window(f"slow{width}", ["sh", "-c", cmd], width, height, logs / f"slow{width}.log")
    try:
        win.wait_for("alice")
        win.settle(1.0)
        singles = []
        for _ in range(3):
            win.keys("Down")
            singles.append(win.settle(1.0)[1])
        # A held key repeats every 33 ms: sent through one control-mode client (a tmux process
        # per key takes longer than that on a loaded machine, and the keys would come slower).
        with subprocess.Popen(["tmux", "-L", SOCKET, "-C", "attach", "-f", "ignore-size", "-t", win.target],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True) as control:
            assert control.stdin is not None
            t_end = time.perf_counter() + 2.0
            while time.perf_counter() < t_end:
                control.stdin.write(f"send-keys -t {win.target} Down\n")
                control.stdin.flush()
                time.sleep(1 / 30)
            control.stdin.write("detach-client\n")
            control.stdin.flush()
            _, lag = win.settle(1.0)
            control.wait(5)
        return {"Down: settled after (s)": statistics.median(singles), "Down held 2 s: lag after release (s)": lag}
    finally:
        win.close()


def throttle(rate: float) -> int:
    """Copy stdin to stdout at ``rate`` bytes a second, 256 B at a time: a link's serialisation
    delay, each byte leaving when the ones before it have."""
    free_at = time.monotonic()
    while chunk := os.read(0, 4096):
        for i in range(0, len(chunk), 256):
            piece = chunk[i:i + 256]
            free_at = max(free_at, time.monotonic()) + len(piece) / rate
            time.sleep(max(0.0, free_at - time.monotonic()))
            os.write(1, piece)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fairtop", default=str(ROOT / ".venv" / "bin" / "fairtop"), help="the fairtop to run")
    parser.add_argument("--quiet", type=float, default=1.0, help="seconds of no output that end an action")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of the idle measure (0: skip)")
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    parser.add_argument("--slow", action="store_true", help="also the 256 kbit/s link")
    parser.add_argument("--slow-only", action="store_true", help="only the 256 kbit/s link")
    parser.add_argument("--follow-only", action="store_true", help="only the followed snapshot (and DataTable's)")
    parser.add_argument("--walk-only", action="store_true", help=f"only a walk of {WALK} Downs from alice's account")
    parser.add_argument("--against", metavar="REV", help="also fairtop as of this git revision, in the same run")
    parser.add_argument("--throttle", type=float, help=argparse.SUPPRESS)  # the link itself
    args = parser.parse_args()
    if args.throttle:
        return throttle(args.throttle)
    args.slow |= args.slow_only
    for tool in ("tmux", "script"):
        if shutil.which(tool) is None:
            print(f"needs {tool}", file=sys.stderr)
            return 1
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    fairtops = {"fairtop": shlex.split(args.fairtop)}
    if args.against:
        sys.path.insert(0, str(ROOT / "bench"))
        from report import export

        python = str(Path(shlex.split(args.fairtop)[0]).with_name("python"))
        # -P: the checkout in the current folder must not come before the exported one
        fairtops[f"fairtop@{args.against}"] = ["env", f"PYTHONPATH={export(args.against)}", python, "-P", "-m",
                                               "tui.cli"]
    demo = ["--demo", "--user", "alice"]
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        tmux("new-session", "-d", "-s", "bench")  # the server, for the whole run
        state = logs / "state"  # a fresh XDG state: no theme or scenario of the user's
        env = ["env", f"XDG_STATE_HOME={state}", f"XDG_CONFIG_HOME={logs / 'config'}"]
        (logs / "config" / "fairtop").mkdir(parents=True)
        (logs / "config" / "fairtop" / "config.toml").write_text("refresh_rate = 2.0\n")  # the least allowed
        base, changed = follow_captures()
        try:
            results: dict[str, dict[str, float]] = {}
            for w, h in [] if args.slow_only else sizes:
                for name, cmd in fairtops.items():
                    tag = f"{name}{w}".replace("@", "-")
                    if not args.follow_only:
                        measure(results, f"{w}x{h}", name,
                                Window(f"walk-{tag}", [*env, *cmd, *demo], w, h, logs / f"walk-{tag}.log"),
                                lambda win: walk_actions(win, args.quiet))
                    if args.walk_only:
                        continue
                    if not args.follow_only:
                        measure(results, f"{w}x{h}", name, Window(tag, [*env, *cmd, *demo], w, h, logs / f"{tag}.log"),
                                lambda win: fairtop_actions(win, args.quiet, args.idle))
                    root = logs / f"follow-{tag}"
                    publish(root, base)
                    argv = [*env, *cmd, "--from", str(root / "current"), "--user", "user1"]
                    measure(results, f"{w}x{h}", name, Window(f"follow-{tag}", argv, w, h, logs / f"follow-{tag}.log"),
                            lambda win: follow_action(win, root, changed))
                if args.walk_only:
                    continue
                measure(results, f"{w}x{h}", "DataTable",
                        Window(f"DataTable{w}", [*env, sys.executable, "-c", DATATABLE_APP], w, h,
                               logs / f"DataTable{w}.log"),
                        lambda win: datatable_actions(win, args.quiet))
            if results:
                print_table(results, sizes)
            if args.slow:
                print("\n256 kbit/s link (script | throttle 32,000 B/s):")
                for w, h in ((120, 40), (200, 60)):
                    for name, cmd in fairtops.items():
                        for what, s in slow_link([*env, *cmd, *demo], w, h, logs).items():
                            print(f"  {name} {w}x{h} {what}: {s:.2f}")
        finally:
            tmux("kill-server")
    return 0


def measure(results: dict[str, dict[str, float]], size: str, name: str, win: Window,
            run: Callable[[Window], dict[str, int]]) -> None:
    """Run ``run`` on ``win`` (closed after), each action's bytes into ``results``."""
    try:
        for action, n in run(win).items():
            results.setdefault(f"{name}: {action}", {})[size] = n
    finally:
        win.close()


def print_table(results: dict[str, dict[str, float]], sizes: list[tuple[int, ...]]) -> None:
    names = [f"{w}x{h}" for w, h in sizes]
    print("| action | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for action, by_size in results.items():
        print(f"| {action} | " + " | ".join(f"{by_size.get(n, 0):,.0f}" for n in names) + " |")


if __name__ == "__main__":
    sys.exit(main())
