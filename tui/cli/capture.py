"""``fairtop capture DIR``: a live cluster's command outputs saved into DIR (for ``--from DIR``), and
with ``--every`` published again and again as DIR/<time>, DIR/current the newest (a view per user
under PrivateData)."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

from tui.cli.inputs import EXIT_INPUT
from tui.sources.errors import SourceUnavailable


def _duration(text: str) -> float:
    """``30s``, ``5m``, ``1h``, or a Slurm time (minutes, ``hh:mm:ss``), in seconds."""
    import re

    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([smh])", text.strip())
    if m:
        return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]
    from tui.sources.slurm_units import parse_slurm_time

    try:
        parsed = parse_slurm_time(text)
    except ValueError:
        parsed = None
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not a period: {text!r} (e.g. 30s, 5m, 1h)")
    return float(parsed)


def _period(text: str) -> float:
    """A publishing period: :func:`_duration`, at least 10 s."""
    seconds = _duration(text)
    if seconds < 10:
        raise argparse.ArgumentTypeError(f"a period of at least 10 s, got {text!r}")
    return seconds


def _timeout(text: str) -> float:
    """A command's timeout: :func:`_duration`, more than 0 s."""
    seconds = _duration(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a timeout of more than 0 s, got {text!r}")
    return seconds


def add_parser(sub: argparse._SubParsersAction) -> None:
    cap = sub.add_parser("capture", help="save a live cluster's command outputs into DIR (for --from DIR)",
                         description="Run sshare, scontrol, sacctmgr, squeue, sprio and sacct (or, with --pbs, "
                                     "copy the PBS server's fairshare files) and save their outputs into DIR, "
                                     "which 'fairtop --from DIR' and 'fairtop report --from DIR' read. A cluster "
                                     "that does not answer is one line on stderr and exit status 2, and no "
                                     "folder is left behind.")
    cap.add_argument("dir", metavar="DIR", help="the folder to write (made when the cluster has answered)")
    cap.add_argument("--pbs", action="store_true",
                     help="a PBS Professional server: resource_group, pbsfs output and sched_config")
    cap.add_argument("--every", type=_period, metavar="PERIOD",
                     help="publish a capture every PERIOD (30s, 5m, 1h) as DIR/<time>, DIR/current pointing at "
                          "the newest; for a site-wide snapshot (see docs/admin/publisher.md)")
    cap.add_argument("--keep", type=int, default=12, metavar="N", help="with --every: captures kept (default 12)")
    cap.add_argument("--count", type=int, default=None, metavar="N", help="with --every: stop after N captures")
    cap.add_argument("--cluster", dest="report_cluster", metavar="NAME",
                     help="another cluster of this slurmdbd (-M NAME), saved as if captured on it")
    cap.add_argument("--timeout", type=_timeout, default=None, metavar="PERIOD",
                     help="how long each command may take before it is killed with its children (default 20s; "
                          "sacct 3 times as long)")
    cap.add_argument("--share-with", metavar="GROUP",
                     help="with --every under PrivateData: the whole capture is readable by this Unix group too "
                          "(e.g. the admins), not by the publisher only")
    cap.add_argument("--public", action="store_true",
                     help="with --every under PrivateData: publish the whole capture to every user anyway (an "
                          "explicit choice; logged at start)")


def run(args: argparse.Namespace) -> int:
    """``fairtop capture``: a cluster that does not answer is one line and exit 2, and leaves no
    folder behind (the commands run before the folder is made)."""
    try:
        capture: Callable[[str | Path], str]
        timeout = {} if args.timeout is None else {"timeout": args.timeout}
        if args.pbs:
            from tui.sources.pbs_folder import capture as capture_pbs

            capture = functools.partial(capture_pbs, **timeout)
        else:
            from tui.sources import slurm_cli

            on = getattr(args, "report_cluster", None) or ""  # --cluster NAME: sshare -M NAME, ...
            capture = functools.partial(slurm_cli.capture, on=on, **timeout)
        if args.every:
            from tui.sources.publish import publish_every

            _stop_on_sigterm()
            arrange = None if args.pbs else functools.partial(_arrange_private, share_with=args.share_with,
                                                              public=args.public)
            published = publish_every(args.dir, capture, args.every, args.keep, args.count, arrange=arrange)
            return 0 if published else EXIT_INPUT
        sys.stdout.write(capture(args.dir))
        if not args.pbs:
            _private_capture(Path(args.dir))
        return 0
    except SourceUnavailable as exc:
        print(f"fairtop capture: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_INPUT


def _stop_on_sigterm() -> None:
    """SIGTERM (systemctl stop, kill) ends a publisher as Ctrl+C does: its commands killed with
    their children and its temporary folder removed, rather than left behind."""
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def _arrange_private(folder: Path, share_with: str | None, public: bool) -> str:
    """A published capture: every user's summary line beside it, and under PrivateData the whole
    for the publisher, a view per user, each with their ranking among all users and their line
    (:mod:`tui.sources.private_publish`, :mod:`tui.publish_answers`)."""
    from tui.publish_answers import Answers
    from tui.sources.private_publish import arrange

    return arrange(folder, Answers, share_with, public)


def _private_capture(folder: Path) -> None:
    """A one-off capture of a PrivateData cluster holds every user's usage and jobs: capture()
    made it readable by its owner only; say so on stderr."""
    if folder.stat().st_mode & 0o077 == 0 and (folder / "scontrol_show_config.txt").is_file():
        from tui.sources.private_data import DBD_CONFIG_FILE, HIDES, private_data

        hides = private_data(*(p.read_bytes() for p in (folder / "scontrol_show_config.txt",
                                                         folder / DBD_CONFIG_FILE) if p.is_file())) & set(HIDES)
        if hides:
            print(f"fairtop capture: PrivateData={','.join(sorted(hides))}: {folder} holds every user's usage and "
                  "jobs, so it is readable by you only (mode 0700); 'capture --every' publishes a view per user",
                  file=sys.stderr)
