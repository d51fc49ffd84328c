"""Command line: ``fairtop`` (the app), ``report``, ``whatif``, ``info``, ``capture``, ``history``, ``serve``,
``balance``, ``serve-allocations``.

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tui import __version__
from tui.allocations.errors import AllocationError
from tui.model import Algorithm, AssocTree, PbsTree
from tui.sources import registry
from tui.sources.errors import InputError, SourceUnavailable

if TYPE_CHECKING:
    from tui.engine.result import FairshareResult

EXIT_INPUT = 2


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, exc.strerror or str(exc)) from None


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def _period(text: str) -> float:
    """``30s``, ``5m``, ``1h``, or a Slurm time (minutes, ``hh:mm:ss``)."""
    import re

    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([smh])", text.strip())
    if m:
        seconds = float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]
    else:
        from tui.sources.slurm_units import parse_slurm_time

        try:
            parsed = parse_slurm_time(text)
        except ValueError:
            parsed = None
        if parsed is None:
            raise argparse.ArgumentTypeError(f"not a period: {text!r} (e.g. 30s, 5m, 1h)")
        seconds = float(parsed)
    if seconds < 10:
        raise argparse.ArgumentTypeError(f"a period of at least 10 s, got {text!r}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairtop",
        description="Where you stand on an HPC cluster: fairshare, allocations, what-if planning.",
    )
    parser.add_argument("--version", action="version", version=f"fairtop {__version__}")
    _app_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rep = sub.add_parser("report", help="print the engine's fairshare recomputation of saved outputs",
                         description="Recompute fairshare from raw shares and raw usage alone.")
    src = rep.add_mutually_exclusive_group(required=True)
    src.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output")
    src.add_argument("--pbs-resource-group", metavar="FILE", help="PBS resource_group file")
    src.add_argument("--from", dest="from_dir", metavar="DIR",
                     help="a folder of saved command outputs (as 'fairtop capture' writes)")
    rep.add_argument("--pbs-usage", metavar="FILE", help="PBS usage: 'pbsfs' output or 'entity usage' lines")
    rep.add_argument("--pbs-unknown-shares", type=int, default=0, metavar="N",
                     help="sched_config unknown_shares (default 0, as OpenPBS)")
    rep.add_argument("--algorithm", choices=("fair_tree", "classic"),
                     help="Slurm algorithm (default: from the file: LevelFS column means Fair Tree)")
    rep.add_argument("--damping", type=_positive, default=None, metavar="D",
                     help="FairShareDampeningFactor for classic (default 1)")
    rep.add_argument("--format", choices=("table", "json", "csv"), default="table")

    wif = sub.add_parser("whatif", help="project a scenario of jobs over time: usage, fairshare, rank",
                         description="Project a campaign of jobs (a TOML scenario) over time. With a "
                                     "source, Slurm's decay law over the whole association tree; without "
                                     "one, the scenario's [model] (seed 000's single-user model).")
    wif.add_argument("scenario", metavar="SCENARIO.toml")
    wsrc = wif.add_mutually_exclusive_group()
    wsrc.add_argument("--demo", action="store_true", help="the built-in demo Slurm cluster")
    wsrc.add_argument("--from", dest="from_dir", metavar="DIR", help="a saved capture ('fairtop capture')")
    wsrc.add_argument("--slurm", action="store_true", help="the live cluster")
    wsrc.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output (default settings)")
    wif.add_argument("--since", metavar="DIR", help="an earlier capture of the same cluster: with others = "
                     "\"observed\", everyone keeps the pace seen between it and now")
    wif.add_argument("--now", metavar="ISO", help="time 0 as an ISO date-time (default: the snapshot's time)")
    wif.add_argument("--format", choices=("table", "json", "csv"), default="table")

    sub.add_parser("info", help="print the config, state and theme paths in use")
    cap = sub.add_parser("capture", help="save a live cluster's command outputs into DIR (for --from DIR)")
    cap.add_argument("dir", metavar="DIR")
    cap.add_argument("--pbs", action="store_true",
                     help="a PBS Professional server: resource_group, pbsfs output and sched_config")
    cap.add_argument("--every", type=_period, metavar="PERIOD",
                     help="publish a capture every PERIOD (30s, 5m, 1h) as DIR/<time>, DIR/current pointing at "
                          "the newest; for a site-wide snapshot (see the README)")
    cap.add_argument("--keep", type=int, default=12, metavar="N", help="with --every: captures kept (default 12)")
    cap.add_argument("--count", type=int, default=None, metavar="N", help="with --every: stop after N captures")
    hist = sub.add_parser("history", help="usage per day from sacct, and RawUsage rebuilt from the jobs",
                          description="Usage per day (billing x seconds, per account and user) over the last N "
                                      "days, the decayed usage it implies, and sshare's RawUsage rebuilt from "
                                      "the jobs with Slurm's decay law.")
    hist.add_argument("--account", metavar="A", help="only this account (and the accounts below it)")
    hist.add_argument("--user", dest="history_user", metavar="U", help="only this user's jobs")
    hist.add_argument("--days", default="7", metavar="N", help="days to show, ending today (default 7)")
    hist.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="csv: the daily rows only")
    hist.add_argument("--from", dest="history_from", metavar="DIR",
                      help="a capture folder with sacct_a_P.psv (default: the configured source, else live sacct)")
    serve = sub.add_parser("serve", help="serve the app to a browser (textual-serve) on 127.0.0.1, behind a token",
                           description="Serve fairtop through textual-serve. The first line of output is the "
                                       "URL with its one-time token; reach it from your desktop with "
                                       "'ssh -L PORT:127.0.0.1:PORT login-node'.")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", default="8000", metavar="P", help="port (default 8000; 0: any free port)")
    _app_options(serve, again=True)
    _allocation_parsers(sub)
    return parser


def _app_options(parser: argparse.ArgumentParser, again: bool = False) -> None:
    """The app's options (source flags from the registry, --user, --theme, --config).

    ``again``: on a subcommand (``fairtop serve --from DIR`` as ``fairtop --from DIR serve``),
    with SUPPRESS defaults so an option not given there keeps the top level's value.
    """
    kw: dict = {"default": argparse.SUPPRESS} if again else {}
    sources = parser.add_mutually_exclusive_group()
    for cls in registry.SOURCES.values():
        dest = f"source_{cls.name}"
        if cls.choices:
            sources.add_argument(cls.flag, dest=dest, nargs="?", const=cls.choices[0], choices=cls.choices,
                                 metavar=cls.metavar, help=cls.help, **kw)
        elif cls.metavar:
            sources.add_argument(cls.flag, dest=dest, metavar=cls.metavar, help=cls.help, **kw)
        else:
            sources.add_argument(cls.flag, dest=dest, action="store_true", help=cls.help, **kw)
    parser.add_argument("--user", help="the user to highlight and jump to (default: the Unix user)", **kw)
    parser.add_argument("--theme", help="theme name (see themes/)", **kw)
    parser.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')", **kw)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _allocation_parsers(sub: argparse._SubParsersAction) -> None:
    bal = sub.add_parser("balance", help="allocation balances, without the UI (like sproject)",
                         description="Allocation balances from the embedded ledger (--db) or the service (--url).")
    where = bal.add_mutually_exclusive_group()
    where.add_argument("--db", metavar="PATH|URL", help="the ledger: an SQLite file or postgresql://... "
                       "(default: $FAIRTOP_ALLOC_DB)")
    where.add_argument("--url", help="the allocation service (default: $FAIRTOP_ALLOC_URL)")
    bal.add_argument("--auth", choices=("token", "munge"), default="token",
                     help="with --url: a bearer token from $FAIRTOP_ALLOC_TOKEN, or a MUNGE credential")
    bal.add_argument("--project", metavar="P", help="only this project (name, account or id)")
    bal.add_argument("--format", choices=("table", "json"), default="table")

    srv = sub.add_parser("serve-allocations", help="run the allocation ledger service (HTTP)",
                         description="Serve the allocation ledger over HTTP (FastAPI + uvicorn).")
    srv.add_argument("--db", metavar="PATH|URL", required=True, help="an SQLite file or postgresql://...")
    srv.add_argument("--listen", type=_listen, default=("127.0.0.1", 8642), metavar="HOST:PORT",
                     help="address to listen on (default 127.0.0.1:8642; port 0 picks a free one)")
    srv.add_argument("--auth", choices=("munge", "token"), default="munge")
    srv.add_argument("--tokens", metavar="FILE", help="with --auth token: the TOML tokens file")
    srv.add_argument("--superuser", action="append", default=[], metavar="USER",
                     help="with --auth munge: a user (name or uid) with the superuser role (repeatable)")
    srv.add_argument("--admin", action="append", default=[], metavar="USER",
                     help="with --auth munge: a user (name or uid) with the admin role (repeatable)")
    srv.add_argument("--munge-socket", metavar="PATH", help="munged's socket (default: munge's own)")
    srv.add_argument("--migrate", action="store_true",
                     help="create or upgrade the ledger's schema first (otherwise it must be current)")
    srv.add_argument("--migrate-only", action="store_true", help="upgrade the schema and exit")
    srv.add_argument("--pool", type=int, default=8, metavar="N",
                     help="PostgreSQL connections per worker (default 8)")
    srv.add_argument("--workers", type=int, default=1, metavar="N",
                     help="worker processes on one socket (default 1; more pay off on PostgreSQL only)")


def _balance(args: argparse.Namespace) -> str:
    import os

    from tui.allocations import balance

    url = args.url or (None if args.db else os.environ.get("FAIRTOP_ALLOC_URL"))
    db = args.db or (None if url else os.environ.get("FAIRTOP_ALLOC_DB"))
    if url:
        rows = balance.from_service(url, args.project, token=os.environ.get("FAIRTOP_ALLOC_TOKEN"),
                                    munge=args.auth == "munge")
    elif db:
        rows = balance.from_ledger(db, args.project)
    else:
        raise InputError("fairtop balance", "give --db PATH|URL or --url URL (or set FAIRTOP_ALLOC_DB / "
                         "FAIRTOP_ALLOC_URL)")
    return balance.format_balances(rows, args.format)


def _serve_allocations(args: argparse.Namespace) -> int:
    from tui.allocations.ledger import open_ledger
    from tui.allocations.service import ServeOptions, serve

    opts = ServeOptions(db=args.db, auth=args.auth, tokens=args.tokens, superusers=tuple(args.superuser),
                        admins=tuple(args.admin), munge_socket=args.munge_socket, pool=args.pool)
    try:
        opts.build_auth()
    except ValueError as exc:
        raise InputError(args.tokens or "fairtop serve-allocations", str(exc).removeprefix(f"{args.tokens}: ")) \
            from None
    if args.workers < 1:
        raise InputError("fairtop serve-allocations", f"--workers must be >= 1, got {args.workers}")
    if args.migrate or args.migrate_only:
        ledger = open_ledger(args.db, migrate=True)
        version = ledger.schema_version()
        ledger.close()
        if args.migrate_only:
            print(f"fairtop: ledger schema at version {version}")
            return 0
    host, port = args.listen

    def ready(bound: int, dialect: str) -> None:
        print(f"fairtop: allocation service on http://{host}:{bound} ({dialect}, auth {args.auth})", flush=True)

    serve(opts, host, port, workers=args.workers, ready=ready)
    return 0


def _slurm_report(tree: AssocTree, fmt: str, algorithm: str, damping: float, title: str,
                  printed: Mapping[str, Sequence[str]] | None = None, result: FairshareResult | None = None) -> str:
    """The engine's recomputation of ``tree`` (or ``result``) as a table (under ``title``), json or
    csv; the columns in ``printed`` (sshare's text) as printed."""
    from tui.engine import compute
    from tui.formats.sshare import format_table, report_rows
    from tui.formats.tabular import format_csv, format_json

    result = result if result is not None else compute(tree, algorithm, damping)
    if fmt == "json":
        return format_json(report_rows(tree, result, damping, printed))
    if fmt == "csv":
        return format_csv(report_rows(tree, result, damping, printed))
    head = f"# {title}: {algorithm.replace('_', ' ')}"
    if algorithm == "classic":
        head += f", FairShareDampeningFactor {damping:g}"
    elif tree.sibling_order is not None:
        head += "; ties between sibling accounts follow sacctmgr LFT order"
    else:
        head += "; ties between sibling accounts follow the printed (sshare) order"
    return head + "\n" + format_table(tree, result, damping, printed)


def _pbs_report(tree: PbsTree, fmt: str) -> str:
    from tui.formats.pbsfs import format_pbs_csv, format_pbs_table, pbs_rows
    from tui.formats.tabular import format_json

    rows = pbs_rows(tree)
    if fmt == "json":
        return format_json(rows)
    if fmt == "csv":
        return format_pbs_csv(rows)
    return format_pbs_table(rows)


def _report_sshare(args: argparse.Namespace) -> str:
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(_read(args.sshare), args.sshare)
    algorithm = args.algorithm or ("fair_tree" if "LevelFS" in table.header
                                   else "classic" if "NormUsage" in table.header else "fair_tree")
    return _slurm_report(table.tree, args.format, algorithm, args.damping or 1, args.sshare)


def _report_pbs(args: argparse.Namespace) -> str:
    if not args.pbs_usage:
        raise InputError("fairtop report", "--pbs-resource-group needs --pbs-usage FILE")
    from tui.sources.pbs import read_pbs

    return _pbs_report(read_pbs(args.pbs_resource_group, args.pbs_usage, unknown_shares=args.pbs_unknown_shares),
                       args.format)


def _report_folder(args: argparse.Namespace) -> str:
    """``report --from DIR``: a Slurm capture (algorithm and dampening from its config unless
    given) or a PBS folder."""
    snap = registry.make("folder", args.from_dir).load()
    if snap.pbs is not None:
        return _pbs_report(snap.pbs, args.format)
    assert snap.tree is not None
    damping = args.damping if args.damping is not None else snap.settings.dampening
    algorithm = args.algorithm or snap.settings.algorithm
    notes = list(snap.warnings)
    if snap.printed is not None and (algorithm, damping) == (snap.settings.algorithm, snap.settings.dampening):
        # The scheduler's own numbers, as printed; the engine's run on the order they reveal.
        from tui.analysis.standing import build_standing

        standing = build_standing(snap)
        rec = standing.reconciliation
        if rec is not None and rec.disagreements:
            notes += [f"engine differs from sshare: {d.label} {d.column} engine {d.ours}, shown as printed {d.printed}"
                      for d in rec.disagreements]
        notes += [fix.sentence() for fix in standing.order_fixes]
        tree = standing.snapshot.tree
        assert tree is not None
        out = _slurm_report(tree, args.format, algorithm, damping, snap.source, snap.printed, standing.fairshare)
    else:  # another algorithm or dampening than the capture's: the engine's numbers alone
        out = _slurm_report(snap.tree, args.format, algorithm, damping, snap.source)
    if args.format != "table":
        return out
    head, _, table = out.partition("\n")
    return head + "\n" + "".join(f"# warning: {w}\n" for w in notes) + table


def _whatif(args: argparse.Namespace) -> str:
    """``whatif SCENARIO.toml``: load the scenario and the source, project, format."""
    from datetime import datetime

    from tui.analysis.scenario import load_scenario, run_scenario
    from tui.analysis.whatif_output import format_whatif_csv, format_whatif_json, format_whatif_table
    from tui.model import PrioritySettings, Snapshot

    scenario = load_scenario(args.scenario)
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now)
        except ValueError:
            raise InputError("--now", f"not an ISO date-time: {args.now!r}") from None
    snap = None
    if args.demo:
        snap = registry.make("demo", "slurm", args.user or "").load()
    elif args.from_dir:
        snap = registry.make("folder", args.from_dir).load()
    elif args.slurm:
        snap = registry.make("slurm", None).load()
    elif args.sshare:
        from tui.sources.sshare import parse_sshare

        table = parse_sshare(_read(args.sshare), args.sshare)
        algorithm: Algorithm = "fair_tree" if "LevelFS" in table.header else "classic"
        snap = Snapshot(cluster="", source=args.sshare, tree=table.tree,
                        settings=PrioritySettings(algorithm=algorithm))
    earlier = registry.make("folder", args.since).load() if args.since else None
    result = run_scenario(scenario, snap, now, args.scenario, earlier)
    if args.format == "json":
        return format_whatif_json(result)
    if args.format == "csv":
        return format_whatif_csv(result)
    return format_whatif_table(result)


def _info(args: argparse.Namespace) -> str:
    from tui import config
    from tui.sources.slurm_cli import Cadence

    settings = config.load(args.config)
    cadence = Cadence(jobs_s=settings.refresh_rate)
    rates = cadence.per_minute()
    return config.describe_paths(args.config) + (
        f"live Slurm (--slurm), per session: squeue and sprio every {cadence.jobs_s:g} s (refresh_rate), "
        f"sshare and assoc_mgr once per PriorityCalcPeriod ({cadence.usage_s:g} s until the cluster's "
        f"is read), sacctmgr and scontrol config/partitions every {cadence.slow_s:g} s: "
        f"{rates['slurmctld']:.1f} commands a minute to slurmctld, {rates['slurmdbd']:.1f} to slurmdbd\n")


def _history(args: argparse.Namespace) -> str:
    """``fairtop history``: from ``--from DIR``, the configured folder, or live sacct + sshare."""
    from datetime import datetime, timedelta, timezone

    from tui import config
    from tui.analysis.history import check_raw_usage, daily_usage, select_jobs
    from tui.analysis.history_output import format_history_csv, format_history_json, format_history_table
    from tui.sources import sacct

    days_text = str(args.days).strip()
    if not (days_text.isascii() and days_text.isdigit()) or not 1 <= int(days_text) <= 3660:
        raise InputError("fairtop history", f"--days takes a whole number of days from 1 to 3660, not {args.days!r}")
    days = int(days_text)
    folder = args.history_from
    if folder is None:
        settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
        import shutil

        if settings.source == "folder":
            folder = settings.folder
        elif not (settings.source == "slurm"
                  or (settings.source == "demo" and not args.source_demo and shutil.which("sacct"))):
            raise InputError("fairtop history", f"the {settings.source} source has no accounting records; "
                             "use --from DIR (a capture with sacct_a_P.psv) or a live cluster (--slurm)")
    if folder is not None:
        source = registry.make("folder", folder)
        source.check()
        snap = source.load()
        jobs, last_cycle = sacct.load_saved_history(folder)
    else:
        from tui.sources.slurm_cli import live_snapshot

        snap = live_snapshot()
        hl = snap.settings.decay_half_life_s
        back = max(timedelta(days=days), timedelta(seconds=10 * hl if hl > 0 else 366 * 86400))
        jobs = sacct.live_history(datetime.now(timezone.utc) - back)
        last_cycle = None
    if snap.tree is None:
        raise InputError(str(folder or "live"), "not a Slurm snapshot (PBS has no sacct)")
    mine = select_jobs(jobs, args.account, args.history_user, snap.tree)
    daily = daily_usage(mine, snap.taken_at.astimezone(), days, snap.settings.decay_half_life_s)
    if args.format == "csv":
        return format_history_csv(daily)
    check = check_raw_usage(jobs, snap.tree, snap.settings, last_cycle, snap.taken_at)
    if args.account or args.history_user:
        check = check.only(args.account, args.history_user, snap.tree)
    if args.format == "json":
        return format_history_json(daily, check)
    return format_history_table(daily, check)


def _serve(args: argparse.Namespace) -> int:
    """``fairtop serve``: check the options here (a bad source fails in the terminal), then serve."""
    from tui.serve import child_command, serve

    port_text = str(args.port).strip()
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        raise InputError("fairtop serve", f"--port takes a port number 0-65535, not {args.port!r}")
    chosen = [cls.flag for cls in registry.SOURCES.values()
              if getattr(args, f"source_{cls.name}", None) not in (None, False)]
    if len(chosen) > 1:
        raise InputError("fairtop serve", f"one source at a time, not {' and '.join(chosen)}")
    from tui.app.main import build_app

    build_app(args)
    try:
        return serve(child_command(args), host=args.host, port=int(port_text))
    except OSError as exc:
        print(f"fairtop serve: cannot listen on {args.host}:{port_text}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "report":
            if args.sshare:
                out = _report_sshare(args)
            elif args.pbs_resource_group:
                out = _report_pbs(args)
            else:
                out = _report_folder(args)
            sys.stdout.write(out)
            return 0
        if args.command == "whatif":
            sys.stdout.write(_whatif(args))
            return 0
        if args.command == "info":
            sys.stdout.write(_info(args))
            return 0
        if args.command == "history":
            sys.stdout.write(_history(args))
            return 0
        if args.command == "serve":
            return _serve(args)
        if args.command == "balance":
            sys.stdout.write(_balance(args))
            return 0
        if args.command == "serve-allocations":
            return _serve_allocations(args)
        if args.command == "capture":
            if args.pbs:
                from tui.sources.pbs_folder import capture as capture_pbs

                sys.stdout.write(capture_pbs(args.dir))
                return 0
            from tui.sources import slurm_cli

            if args.every:
                from tui.sources.publish import publish_every

                publish_every(args.dir, slurm_cli.capture, args.every, args.keep, args.count)
                return 0
            sys.stdout.write(slurm_cli.capture(args.dir))
            return 0
        from tui.app.main import run_app

        return run_app(args)
    except InputError as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SourceUnavailable as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return 1
    except AllocationError as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
