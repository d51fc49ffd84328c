"""Long runs against a real Slurm: the live source for N cycles, the publisher for N captures.

Two parts that run for months on a site (issue 26): a live session re-reading the cluster, and the
snapshot publisher (``fairtop capture --every``). Each is run N times against the cluster that
``SLURM_CONF`` names (a sandbox with ~2,000 associations for the figures in bench/README.md):

- ``--live N``: this process reads the cluster with :class:`tui.sources.slurm_cli.LiveSlurm`, every
  command every cycle (as a user pressing ``r``: the most a session asks), and builds the standing
  the app draws (the engine run on the whole tree) for one user;
- ``--publish N``: the publisher's own loop, as ``fairtop capture --every 10s --keep 12 DIR`` runs it,
  with no wait between captures.

Resident memory (VmRSS), open file descriptors and child processes are sampled after every cycle;
printed: the peak just after warm-up (the second tenth of the run) and in the last tenth, the growth
between them, the largest, and every count of descriptors and children seen.

    . /tmp/slurm-sandbox/env.sh
    .venv/bin/python bench/soak_live.py --live 1000 --publish 1000 --user alice

``--check`` exits 1 naming what grew (tests/sandbox/test_long_runs.py runs a short version).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.resources import Held, held  # noqa: E402
from tui.analysis.standing import build_standing  # noqa: E402
from tui.sources.slurm_cli import LiveSlurm  # noqa: E402


@dataclass
class Run:
    """Samples of one long run; ``warm`` is the index where warm-up ends."""
    name: str
    samples: list[Held] = field(default_factory=list)
    seconds: float = 0.0

    def windows(self) -> tuple[list[Held], list[Held]]:
        """The samples just after warm-up (the second tenth of the run) and the last tenth: their
        peaks are compared, as single samples swing with the numpy arrays alive at that moment."""
        w = max(2, len(self.samples) // 10)
        return self.samples[w:2 * w], self.samples[-w:]

    def faults(self) -> list[str]:
        """What is not flat: the peak resident memory grown 10% or more from just after warm-up to
        the end, more descriptors open at the end than ever after warm-up, a child process left."""
        warm, last = self.windows()
        found = []
        rss_warm, rss_last = max(s.rss_kb for s in warm), max(s.rss_kb for s in last)
        if rss_last >= 1.1 * rss_warm:
            found.append(f"peak RSS grew {rss_warm} -> {rss_last} kB")
        if max(s.fds for s in last) > max(s.fds for s in warm):
            found.append(f"open fds {max(s.fds for s in warm)} -> {max(s.fds for s in last)}")
        if self.samples[-1].children:
            found.append(f"{self.samples[-1].children} child processes left")
        return [f"{self.name}: {f}" for f in found]

    def report(self) -> str:
        warm, last = self.windows()
        rss_warm, rss_last = max(s.rss_kb for s in warm), max(s.rss_kb for s in last)
        top = max(s.rss_kb for s in self.samples[len(self.samples) // 10:])
        fds = sorted({s.fds for s in self.samples[len(self.samples) // 10:]})
        kids = sorted({s.children for s in self.samples})
        tenth = max(1, len(self.samples) // 10)
        peaks = [max(s.rss_kb for s in self.samples[k:k + tenth]) / 1024 for k in range(0, len(self.samples), tenth)]
        return (f"{self.name}: {len(self.samples)} samples in {self.seconds:.0f} s; peak RSS by tenth of the run "
                f"{' '.join(f'{p:.1f}' for p in peaks)} MB; peak RSS after warm-up "
                f"{rss_warm / 1024:.1f} MB, at the end {rss_last / 1024:.1f} MB "
                f"(growth {100.0 * (rss_last - rss_warm) / rss_warm:+.1f}%), max {top / 1024:.1f} MB; "
                f"open fds {fds}; children {kids}")


def live(cycles: int, user: str) -> Run:
    """``cycles`` reads of the live cluster, every command each time, the standing built each time."""
    source = LiveSlurm()
    run = Run(f"live source, {cycles} cycles")
    me = os.getpid()
    start = time.monotonic()
    rows = 0
    for _ in range(cycles):
        source.refresh_usage_now()
        snap = source.read()
        rows = snap.tree.size if snap.tree is not None else 0
        build_standing(snap, user)
        run.samples.append(held(me))
    run.seconds = time.monotonic() - start
    run.name += f" ({rows} associations)"
    return run


def publish(captures: int) -> Run:
    """The publisher's loop (:func:`tui.sources.publish.publish_every` with the capture and layout
    ``fairtop capture --every`` uses) for ``captures`` captures back to back, sampled between them
    (the command itself waits at least 10 s between captures: 1,000 would take hours)."""
    from functools import partial

    from tui.cli.capture import _arrange_private
    from tui.sources import slurm_cli
    from tui.sources.publish import publish_every

    run = Run(f"publisher, {captures} captures")
    me = os.getpid()
    with tempfile.TemporaryDirectory(prefix="fairtop-soak-") as tmp:
        site = Path(tmp) / "site"
        log = Path(tmp) / "log"
        start = time.monotonic()
        with open(os.devnull, "w") as out, log.open("w") as err:
            published = publish_every(site, partial(slurm_cli.capture, on=""), 0.0, 12, captures, out=out, err=err,
                                      sleep=lambda _: run.samples.append(held(me)),
                                      arrange=partial(_arrange_private, share_with=None, public=False))
        run.seconds = time.monotonic() - start
        run.samples.append(held(me))
        kept = len([p for p in site.iterdir() if not p.is_symlink()])
        run.name += f" ({published} published, {kept} kept; {len(log.read_text().splitlines())} log lines)"
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--live", type=int, default=0, metavar="N", help="live-source cycles")
    ap.add_argument("--publish", type=int, default=0, metavar="N", help="publisher captures")
    ap.add_argument("--user", default="", help="whose standing the live cycles build")
    ap.add_argument("--check", action="store_true", help="exit 1 when a run is not flat (see Run.faults)")
    args = ap.parse_args()
    if "SLURM_CONF" not in os.environ:
        raise SystemExit("soak_live: SLURM_CONF is not set (source a sandbox's env.sh)")
    runs = ([live(args.live, args.user)] if args.live else []) + ([publish(args.publish)] if args.publish else [])
    faults = []
    for run in runs:
        print(run.report(), flush=True)
        faults += run.faults()
    if args.check and faults:
        raise SystemExit("\n".join(faults))


if __name__ == "__main__":
    main()
