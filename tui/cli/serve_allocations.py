"""``fairtop serve-allocations``: the allocation ledger service (FastAPI + uvicorn, HTTP or HTTPS),
its options checked in the terminal before it starts; ``--migrate-only`` upgrades the schema."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tui.cli.service_flags import listen_option, service_tls, tls_options
from tui.sources.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    srv = sub.add_parser("serve-allocations", help="run the allocation ledger service (HTTP or HTTPS)",
                         description="Serve the allocation ledger over HTTP, or HTTPS with --tls-cert and "
                                     "--tls-key (FastAPI + uvicorn).")
    srv.add_argument("--db", metavar="PATH|URL", required=True,
                     help="an SQLite file, or PostgreSQL: postgresql://... or a libpq conninfo ('host=a,b "
                          "port=p,q dbname=d target_session_attrs=read-write' for a primary and its replica)")
    listen_option(srv, 8642)
    tls_options(srv)
    srv.add_argument("--config", metavar="FILE", help="config file (tls_cert_file, tls_key_file)")
    srv.add_argument("--auth", choices=("munge", "token"), default="munge",
                     help="munge: X-Munge-Cred checked by the local munged, roles from --superuser/--admin "
                          "(default); token: bearer tokens from --tokens FILE")
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
    srv.add_argument("--admit-floor", type=int, default=16, metavar="N",
                     help="the most requests in progress never refused for being late (default 16); beyond "
                          "them an overloaded service answers 503 with Retry-After. Overloaded, what it accepts "
                          "waits about N / its commit rate: higher refuses fewer, at the price of that latency")
    srv.add_argument("--admit-wait-ms", type=float, default=50.0, metavar="MS",
                     help="overloaded, let in only what the measured commit rate answers within MS (default 50; "
                          "never fewer than 4 nor more than --admit-floor): a slow store refuses more rather "
                          "than answer late. 0: --admit-floor alone")


#: What ``fairtop[allocations]`` brings: without one of them the service cannot start.
ALLOCATIONS_EXTRA = frozenset({"fastapi", "uvicorn", "starlette", "pydantic", "pydantic_core", "anyio",
                               "psycopg", "psycopg_pool", "httptools", "uvloop"})


def run(args: argparse.Namespace) -> int:
    from tui import config
    from tui.allocations.ledger import is_postgresql, open_ledger
    from tui.security.file_modes import SecretFileError

    try:
        from tui.allocations.service import ServeOptions, serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ALLOCATIONS_EXTRA:
            raise
        print(f"fairtop: serve-allocations needs {exc.name}: install fairtop[allocations] "
              "(pip install 'fairtop[allocations]')", file=sys.stderr)
        return 2

    tls = service_tls(args, config.load(args.config))
    opts = ServeOptions(db=args.db, auth=args.auth, tokens=args.tokens, superusers=tuple(args.superuser),
                        admins=tuple(args.admin), munge_socket=args.munge_socket, pool=args.pool,
                        tls_cert=tls[0][0] if tls else None, tls_key=tls[0][1] if tls else None,
                        admit_floor=args.admit_floor, admit_wait_s=args.admit_wait_ms / 1000)
    try:
        opts.build_auth()
    except SecretFileError as exc:
        raise InputError("serve-allocations", str(exc)) from None
    except ValueError as exc:
        raise InputError(args.tokens or "fairtop serve-allocations", str(exc).removeprefix(f"{args.tokens}: ")) \
            from None
    if args.workers < 1:
        raise InputError("fairtop serve-allocations", f"--workers must be >= 1, got {args.workers}")
    if args.admit_floor < 1:
        raise InputError("fairtop serve-allocations", f"--admit-floor must be >= 1, got {args.admit_floor}")
    if args.admit_wait_ms < 0:
        raise InputError("fairtop serve-allocations", f"--admit-wait-ms must be >= 0, got {args.admit_wait_ms:g}")
    new_file = not is_postgresql(args.db) and not Path(args.db).exists()
    if args.migrate or args.migrate_only or new_file:  # a new ledger file starts at the current schema
        ledger = open_ledger(args.db, migrate=True)
        version = ledger.schema_version()
        ledger.close()
        if args.migrate_only:
            print(f"fairtop: ledger schema at version {version}")
            return 0
    host, port = args.listen

    def ready(bound: int, dialect: str) -> None:
        scheme = "https" if tls else "http"
        print(f"fairtop: allocation service on {scheme}://{host}:{bound} ({dialect}, auth {args.auth})", flush=True)

    serve(opts, host, port, workers=args.workers, ready=ready)
    return 0
