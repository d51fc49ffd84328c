"""Command line: ``fairtop`` (the app), ``fairtop report``, ``fairtop info``, ``fairtop capture``,
``fairtop balance``, ``fairtop serve-allocations``.

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from tui import __version__
from tui.allocations.errors import AllocationError
from tui.model import AssocTree, PbsTree
from tui.sources import registry
from tui.sources.errors import InputError, SourceUnavailable

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairtop",
        description="Where you stand on an HPC cluster: fairshare, allocations, what-if planning.",
    )
    parser.add_argument("--version", action="version", version=f"fairtop {__version__}")
    sources = parser.add_mutually_exclusive_group()
    for cls in registry.SOURCES.values():
        dest = f"source_{cls.name}"
        if cls.choices:
            sources.add_argument(cls.flag, dest=dest, nargs="?", const=cls.choices[0], choices=cls.choices,
                                 metavar=cls.metavar, help=cls.help)
        elif cls.metavar:
            sources.add_argument(cls.flag, dest=dest, metavar=cls.metavar, help=cls.help)
        else:
            sources.add_argument(cls.flag, dest=dest, action="store_true", help=cls.help)
    parser.add_argument("--user", help="the user to highlight and jump to (default: the Unix user)")
    parser.add_argument("--theme", help="theme name (see themes/)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')")
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

    sub.add_parser("info", help="print the config, state and theme paths in use")
    cap = sub.add_parser("capture", help="save a live cluster's command outputs into DIR (for --from DIR)")
    cap.add_argument("dir", metavar="DIR")
    cap.add_argument("--pbs", action="store_true",
                     help="a PBS Professional server: resource_group, pbsfs output and sched_config")
    _allocation_parsers(sub)
    return parser


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


def _slurm_report(tree: AssocTree, fmt: str, algorithm: str, damping: float, title: str) -> str:
    """The engine's recomputation of ``tree`` as a table (under ``title``), json or csv."""
    from tui.engine import compute
    from tui.formats.sshare import format_table, report_rows
    from tui.formats.tabular import format_csv, format_json

    result = compute(tree, algorithm, damping)
    if fmt == "json":
        return format_json(report_rows(tree, result, damping))
    if fmt == "csv":
        return format_csv(report_rows(tree, result, damping))
    head = f"# {title}: {algorithm.replace('_', ' ')}"
    if algorithm == "classic":
        head += f", FairShareDampeningFactor {damping:g}"
    elif tree.sibling_order is not None:
        head += "; ties between sibling accounts follow sacctmgr LFT order"
    else:
        head += "; ties between sibling accounts follow the printed (sshare) order"
    return head + "\n" + format_table(tree, result, damping)


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
    out = _slurm_report(snap.tree, args.format, args.algorithm or snap.settings.algorithm, damping, snap.source)
    if args.format != "table":
        return out
    head, _, table = out.partition("\n")
    return head + "\n" + "".join(f"# warning: {w}\n" for w in snap.warnings) + table


def _info(args: argparse.Namespace) -> str:
    from tui import config

    return config.describe_paths(args.config)


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
        if args.command == "info":
            sys.stdout.write(_info(args))
            return 0
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


if __name__ == "__main__":
    sys.exit(main())
