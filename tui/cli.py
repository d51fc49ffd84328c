"""Command line: ``fairtop`` (the app), ``report``, ``standing``, ``whatif``, ``info``, ``capture``, ``history``,
``serve``, ``balance``, ``serve-allocations``, ``allocations hook|site-factor``, ``serve-metrics``,
``hash-password``.

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import functools
import gettext
from contextlib import contextmanager
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui import __version__
from tui.allocations.errors import AllocationError
from tui.slurm_releases import SlurmRelease, release
from tui.sources import registry
from tui.sources.errors import InputError, SourceUnavailable

if TYPE_CHECKING:  # the model (numpy) is imported by the commands that read a snapshot
    import ssl

    from tui.analysis.history import DailyUsage, HistoryCheck
    from tui.config import Settings
    from tui.engine.result import FairshareResult
    from tui.model import Algorithm, AssocTree, PbsTree, Snapshot

EXIT_INPUT = 2
CLUSTER_HELP = ("NAME, a,b or all: the config's [[cluster]] tables, or clusters of the live slurmdbd (-M); "
                "the output then carries a cluster column.")


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
    src = rep.add_mutually_exclusive_group()
    src.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output ('sshare -M a,b ...': "
                     "one report per cluster)")
    src.add_argument("--slurm", dest="report_slurm", action="store_true",
                     help="the live cluster (with --cluster a,b or all: one 'sshare -M', each cluster's commands -M)")
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
    rep.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="table: sshare's layout plus Rank (default); json: an array of objects, one per "
                          "association and line; csv: one row each. Both carry account, user, raw_shares, "
                          "norm_shares, raw_usage, norm_usage, effective_usage, level_fs, fairshare, rank, numbers "
                          "as sshare prints them (six decimals); an empty cell is null (json) or empty (csv), "
                          "infinity is the string \"inf\". Warnings go to stderr")
    rep.add_argument("--cluster", dest="report_cluster", metavar="NAME|all", help=CLUSTER_HELP + " Without a "
                     "source option: the config's [[cluster]] tables (or its one source).")

    wif = sub.add_parser("whatif", help="project a scenario of jobs over time: usage, fairshare, rank",
                         description="Project a campaign of jobs (a TOML scenario) over time. With a "
                                     "source, Slurm's decay law over the whole association tree; without "
                                     "one, the scenario's [model] (seed 000's single-user model).")
    wif.add_argument("scenario", metavar="SCENARIO.toml",
                     help="horizon, step and [[jobs]] (or [model]); see docs/whatif.md")
    wsrc = wif.add_mutually_exclusive_group()
    wsrc.add_argument("--demo", action="store_true", help="the built-in demo Slurm cluster")
    wsrc.add_argument("--from", dest="from_dir", metavar="DIR", help="a saved capture ('fairtop capture')")
    wsrc.add_argument("--slurm", action="store_true", help="the live cluster")
    wsrc.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output (default settings)")
    wif.add_argument("--since", metavar="DIR", help="an earlier capture of the same cluster: with others = "
                     "\"observed\", everyone keeps the pace seen between it and now (--demo without it: "
                     "the week before, from the demo's own accounting records)")
    wif.add_argument("--now", metavar="ISO", help="time 0 as an ISO date-time (default: the snapshot's time)")
    wif.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="table (default), json (the contract of docs/whatif.md) or csv (one row per step)")
    wif.add_argument("--cluster", dest="report_cluster", metavar="NAME",
                     help="plan on this cluster: a [[cluster]] of the config, or with --slurm one asked with -M")

    _standing_options(sub.add_parser("standing", help=STANDING_HELP, description=STANDING_DESCRIPTION))

    info = sub.add_parser("info", help="print the config, state and theme paths in use, and check the config",
                          description="Every file fairtop reads or writes: the config files in their precedence "
                                      "(each valid, INVALID with the reason, or not found; exit 2 when one is "
                                      "invalid), the state file, the example config, the theme folders (yours "
                                      "included), and what a live session costs the controller.")
    info.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                      help="check this config file too (as 'fairtop --config FILE')")
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
    hist.add_argument("--cluster", dest="report_cluster", metavar="NAME|all", help=CLUSTER_HELP)
    serve = sub.add_parser("serve", help="serve the app to a browser (textual-serve) on 127.0.0.1, behind a token",
                           description="Serve fairtop through textual-serve. The first line of output is the "
                                       "URL with its one-time token; reach it from your desktop with "
                                       "'ssh -L PORT:127.0.0.1:PORT login-node'.")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", default="8000", metavar="P", help="port (default 8000; 0: any free port)")
    _app_options(serve, again=True)
    _allocation_parsers(sub)
    _metrics_parser(sub)
    return parser


STANDING_HELP = "where you stand, in one line: for a login banner, a prompt, a dashboard"
STANDING_DESCRIPTION = ("The line the app shows above the tree (FairShare, users ahead, what holds you back, pending "
                        "jobs, allocation), from the same source the app reads. Exit status 2 with one line when the "
                        "source cannot be read.")


def _standing_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    _app_options(parser, again=True)
    parser.add_argument("--format", dest="standing_format", choices=("line", "json"), default="line",
                        help="line: the one line (default); json: one object with the line, its parts and its values "
                             "(user, cluster, source, taken_at, fairshare, users_ahead, users, pending_jobs, "
                             "allocation)")
    return parser


def _standing_fast(argv: Sequence[str]) -> int:
    """``fairtop standing ...`` with its own parser: a banner runs it at every login, and building the
    other commands' parsers took as long as reading a small snapshot (bench/standing.py)."""
    from tui.standing_line import run

    parser = argparse.ArgumentParser(prog="fairtop standing", description=STANDING_DESCRIPTION)
    args = _standing_options(parser).parse_args(argv)
    args.command = "standing"
    return run(args)


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
    parser.add_argument("--cluster", metavar="NAME", help="the cluster to show first (a [[cluster]] of the config; "
                        "with --slurm: NAME or a,b, asked with -M)", **kw)
    parser.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')", **kw)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _listen_option(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument("--listen", type=_listen, default=("127.0.0.1", port), metavar="HOST:PORT",
                        help=f"address to listen on (default 127.0.0.1:{port}; port 0 picks a free one)")


def _tls_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM, leaf then chain; "
                        "default: tls_cert_file of the config)")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM, not readable by others; "
                        "default: tls_key_file)")


def _ca_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ca-file", metavar="FILE", help="verify an https service against these CAs (PEM) "
                        "instead of the system's (default: $FAIRTOP_ALLOC_CA_FILE, else ca_file)")


def _metrics_parser(sub: argparse._SubParsersAction) -> None:
    met = sub.add_parser("serve-metrics", help="serve the fairshare tree and allocations to Prometheus (OpenMetrics)",
                         description="GET /metrics: every association (or PBS entity), allocation, pending jobs "
                                     "per account, the scheduler's release and the snapshot's age, from the source "
                                     "options' snapshot, or of every [[cluster]] of the config (a published folder "
                                     "is re-read every refresh_rate; a scrape never reads the source). 503 with the "
                                     "reason until a snapshot is read. --cluster NAME: the cluster label of a single "
                                     "source (default: its own: ClusterName, a PBS folder's name); with --slurm, "
                                     "the clusters asked with -M (a,b).")
    _listen_option(met, 9842)
    _tls_options(met)
    met.add_argument("--allow-private-data", action="store_true",
                     help="serve a PrivateData cluster's every user's usage without basic auth anyway (an explicit "
                          "choice: whoever reaches the port reads what sshare refuses them)")
    _app_options(met, again=True)
    pw = sub.add_parser("hash-password", help="the hash of a password for metrics_basic_auth_users",
                        description="Read a password (from the terminal, twice; or one line of stdin) and print "
                                    "its salted PBKDF2-SHA256 hash for the config's [metrics_basic_auth_users].")
    pw.add_argument("user", nargs="?", default="prometheus", help="the user name to print the line for "
                    "(default prometheus)")


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
    _ca_option(bal)
    bal.add_argument("--config", metavar="FILE", help="config file (ca_file, allocation_token_file)")
    bal.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or json")

    alc = sub.add_parser("allocations", help="allocation tools: Slurm hooks, site factor",
                         description="Slurm's hooks into the allocation ledger, and the seed-004 site factor.")
    alc_sub = alc.add_subparsers(dest="allocations_command", required=True)
    hook = alc_sub.add_parser("hook", help="run by Slurm: cli_filter (submit), PrologSlurmctld, EpilogSlurmctld",
                              description="submit: refuse a job that would overdraw (options on stdin, key=value); "
                              "prolog: pre-debit at start; epilog: debit the actual use at the end.")
    hook.add_argument("step", choices=("submit", "prolog", "epilog"),
                      help="which hook Slurm runs: submit (cli_filter), prolog (PrologSlurmctld), epilog "
                           "(EpilogSlurmctld)")
    sfc = alc_sub.add_parser("site-factor", help="each pending job's site factor (dry run; --apply sets it)",
                             description="Compute each pending job's site factor from its allocation (seed 004); "
                             "--apply runs scontrol update job=ID SiteFactor=N.")
    sfc.add_argument("--apply", action="store_true", help="set the factors in Slurm (scontrol update)")
    pub = alc_sub.add_parser("publish-balances", help="write every allocation's balance to FILE for cli_filter.lua",
                             description="Write every allocation's free balance to FILE (atomically) every "
                             "--every seconds, for the cli_filter to read itself: a submission then starts no "
                             "fairtop (set BALANCES in cli_filter.lua, or $FAIRTOP_BALANCES).")
    pub.add_argument("file", metavar="FILE", help="where to write (a path every submitting host can read)")
    pub.add_argument("--every", type=float, default=10.0, metavar="S", help="seconds between writes (default 10)")
    pub.add_argument("--once", action="store_true", help="write once and exit")
    pub.add_argument("--by-group", action="store_true",
                     help="what a PrivateData site uses: write FILE.d/<gid>, one file per Unix group, readable "
                          "by that group only (mode 0640; the folder 0711), instead of one file every user can "
                          "read (needs root or CAP_CHOWN; set BALANCES to FILE.d)")
    for p in (hook, sfc, pub):
        p.add_argument("--url", help="the allocation service (default: $FAIRTOP_ALLOC_URL, else allocation_url)")
        p.add_argument("--auth", choices=("token", "munge"),
                       help="a bearer token ($FAIRTOP_ALLOC_TOKEN or allocation_token_file) or MUNGE "
                       "(default: $FAIRTOP_ALLOC_AUTH, else allocation_auth)")
        p.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')")
        _ca_option(p)
    for p in (sfc, pub):
        p.add_argument("--db", metavar="PATH|URL", help="the embedded ledger (default: $FAIRTOP_ALLOC_DB, else ledger)")

    srv = sub.add_parser("serve-allocations", help="run the allocation ledger service (HTTP or HTTPS)",
                         description="Serve the allocation ledger over HTTP, or HTTPS with --tls-cert and "
                                     "--tls-key (FastAPI + uvicorn).")
    srv.add_argument("--db", metavar="PATH|URL", required=True,
                     help="an SQLite file, or PostgreSQL: postgresql://... or a libpq conninfo ('host=a,b "
                          "port=p,q dbname=d target_session_attrs=read-write' for a primary and its replica)")
    _listen_option(srv, 8642)
    _tls_options(srv)
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


def _balance(args: argparse.Namespace) -> str:

    from tui.allocations import balance

    url = args.url or (None if args.db else os.environ.get("FAIRTOP_ALLOC_URL"))
    db = args.db or (None if url else os.environ.get("FAIRTOP_ALLOC_DB"))
    if url:
        from tui import config

        env = {**os.environ, "FAIRTOP_ALLOC_AUTH": args.auth, **_given({"FAIRTOP_ALLOC_CA_FILE": args.ca_file})}
        access = config.allocation_access(config.load(args.config), env)
        rows = balance.from_service(url, args.project, token=access.token, munge=access.munge,
                                    ca_file=access.ca_file)
    elif db:
        rows = balance.from_ledger(db, args.project)
    else:
        raise InputError("fairtop balance", "give --db PATH|URL or --url URL (or set FAIRTOP_ALLOC_DB / "
                         "FAIRTOP_ALLOC_URL)")
    return balance.format_balances(rows, args.format)


def _given(values: dict[str, str | None]) -> dict[str, str]:
    """The flags given, as the environment variables they override."""
    return {k: v for k, v in values.items() if v}


def _service_tls(args: argparse.Namespace, settings: Settings) -> tuple[tuple[str, str], ssl.SSLContext] | None:
    """(certificate, key) of a service, flags over config, checked now (None: plain HTTP);
    InputError on one line when they cannot be used."""
    from tui.security.tls import TlsConfigError, server_context, server_files

    try:
        files = server_files(args.tls_cert or settings.tls_cert_file, args.tls_key or settings.tls_key_file)
        return (files, server_context(*files)) if files else None
    except TlsConfigError as exc:
        raise InputError(args.command, str(exc)) from None


def _hash_password(args: argparse.Namespace) -> int:
    """``fairtop hash-password [USER]``: ``USER = "pbkdf2-sha256$..."`` for the config."""
    import getpass

    from tui.security.passwords import hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            raise InputError("hash-password", "the two passwords differ")
    else:
        password = sys.stdin.readline().rstrip("\n")
    if not password:
        raise InputError("hash-password", "an empty password")
    print(f'{args.user} = "{hash_password(password)}"')
    return 0


def _allocations(args: argparse.Namespace) -> int:

    from tui import config
    from tui.allocations import commands

    settings = config.load(args.config)
    env = dict(os.environ)
    env.update(_given({"FAIRTOP_ALLOC_URL": args.url, "FAIRTOP_ALLOC_DB": getattr(args, "db", None),
                       "FAIRTOP_ALLOC_AUTH": args.auth, "FAIRTOP_ALLOC_CA_FILE": args.ca_file}))
    access = config.allocation_access(settings, env)
    url = None if getattr(args, "db", None) else access.url  # an explicit --db beats a configured service
    conn = commands.Connection(url=url, db=None if url else access.ledger, token=access.token,
                               munge=access.munge, timeout=access.timeout, ca_file=access.ca_file)
    if args.allocations_command == "hook":
        return commands.hook(args.step, conn)
    if args.allocations_command == "publish-balances":
        return commands.publish_balances(conn, args.file, args.every, once=args.once, by_group=args.by_group)
    sys.stdout.write(commands.site_factor(conn, config.site_factor_params(settings), args.apply))
    return 0


#: What ``fairtop[allocations]`` brings: without one of them the service cannot start.
ALLOCATIONS_EXTRA = frozenset({"fastapi", "uvicorn", "starlette", "pydantic", "pydantic_core", "anyio",
                               "psycopg", "psycopg_pool", "httptools", "uvloop"})


def _serve_allocations(args: argparse.Namespace) -> int:
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

    tls = _service_tls(args, config.load(args.config))
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


def _serve_metrics(args: argparse.Namespace) -> int:
    """``fairtop serve-metrics``: every cluster's source (the config's ``[[cluster]]`` tables, or
    the one source, ``--cluster`` naming its label or live Slurm's ``-M`` clusters); a bad source
    or config fails here in one line; then serve."""
    from tui import config
    from tui.metrics.server import MetricsState, allocation_readers, make_server, serve_metrics
    from tui.security.passwords import PasswordCheck
    from tui.security.tls import clear_text_warning

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    try:
        sources = config.make_sources(settings, settings.user or "", getattr(args, "cluster", None),
                                      source_flag="source" in overrides)
    except ValueError as exc:
        raise InputError("fairtop serve-metrics", str(exc)) from None
    for source in sources.values():
        source.check()
    readers = allocation_readers(config.allocation_access(settings))
    tls = _service_tls(args, settings)
    users = PasswordCheck(settings.metrics_basic_auth_users) if settings.metrics_basic_auth_users else None
    if users is None and not args.allow_private_data:
        _refuse_private_metrics(sources)
    host, port = args.listen
    state = MetricsState()
    try:
        server = make_server(state, host, port, tls[1] if tls else None, users)
    except OSError as exc:
        print(f"fairtop serve-metrics: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if tls is None:
        clear_text_warning("serve-metrics", host, server.server_address[1],
                           "every user's usage" + (" and the basic-auth password" if users else ""))

    def ready(what: str) -> None:
        scheme = "https" if tls else "http"
        auth = f", basic auth: {len(users.users)} user(s)" if users else ""
        print(f"fairtop: metrics on {scheme}://{host}:{server.server_address[1]}/metrics ({what}{auth})", flush=True)

    serve_metrics(server, state, sources, readers, settings.refresh_rate, ready)
    return 0


def _refuse_private_metrics(sources: Mapping[str, registry.Source]) -> None:
    """A cluster whose PrivateData hides usage, jobs, users or accounts is not served to whoever
    reaches the port: basic auth (``metrics_basic_auth_users``) first, or an explicit flag."""
    from tui.sources.private_data import HIDES

    for name, source in sources.items():
        snap = source.load()  # a published folder's read is kept: the first scrape reads nothing again
        hides = set(snap.private_data) & set(HIDES)
        if hides:
            raise InputError("fairtop serve-metrics", f"{name or snap.cluster or 'the source'} sets PrivateData="
                             f"{','.join(sorted(hides))}: the metrics carry every user's usage, so set "
                             "metrics_basic_auth_users (and TLS) in the config, or pass --allow-private-data")


def _warn(warnings: Sequence[str]) -> None:
    """What the user must know about a snapshot, on stderr whatever the format (stdout stays
    the table, JSON or CSV alone)."""
    for w in warnings:
        print(f"fairtop: warning: {w}", file=sys.stderr)


def _report_blocks(tree: AssocTree, result: FairshareResult, damping: float, cluster: str | None,
                   printed: Mapping[str, Sequence[str]] | None = None,
                   release: SlurmRelease | None = None) -> Iterator[dict[str, list[str]]]:
    """The report's columns in blocks (:func:`tui.formats.sshare.report_blocks`; the columns in
    ``printed`` as sshare printed them), with a ``cluster`` column first when one is named."""
    from tui.formats.sshare import report_blocks

    for block in report_blocks(tree, result, damping, printed=printed, release=release):
        if cluster is None:
            yield block
        else:
            size = len(next(iter(block.values()), []))
            yield {"cluster": [cluster] * size, **block}


def _write_blocks(fmt: str, blocks: Iterable[dict[str, list[str]]], with_cluster: bool) -> None:
    """json or csv of report blocks, straight to stdout."""
    from tui.formats.sshare import REPORT_COLUMNS
    from tui.formats.tabular import write_columns_csv, write_columns_json

    first = ("cluster",) if with_cluster else ()
    if fmt == "json":
        write_columns_json(blocks, (*first, "account", "user"), sys.stdout)
    else:
        write_columns_csv(blocks, (*first, *REPORT_COLUMNS), sys.stdout)


def _slurm_report(tree: AssocTree, fmt: str, algorithm: str, damping: float, title: str,
                  cluster: str | None = None, printed: Mapping[str, Sequence[str]] | None = None,
                  result: FairshareResult | None = None, release: SlurmRelease | None = None) -> str:
    """The engine's recomputation of ``tree`` (or ``result``) as a table (under ``title``), the
    columns in ``printed`` (sshare's text) as printed; json and csv are written to stdout as they
    are made (a 200k-association report is not held at once), and "" returned. With ``cluster``,
    a cluster column first."""
    from tui.engine import compute
    from tui.formats.sshare import format_table

    result = result if result is not None else compute(tree, algorithm, damping)
    if fmt in ("json", "csv"):
        _write_blocks(fmt, _report_blocks(tree, result, damping, cluster, printed, release), cluster is not None)
        return ""
    if cluster is not None:
        from tui.formats.tabular import cluster_column

        return cluster_column(cluster, _slurm_report(tree, fmt, algorithm, damping, title, None, printed, result,
                                                     release),
                              max(7, len(cluster)))
    head = f"# {title}: {algorithm.replace('_', ' ')}"
    if algorithm == "classic":
        head += f", FairShareDampeningFactor {damping:g}"
    elif tree.sibling_order is not None:
        head += ("; ties between siblings follow slurmdbd's lineage order" if release is not None
                 and release.lineage_order else "; ties between sibling accounts follow sacctmgr LFT order")
    else:
        head += "; ties between sibling accounts follow the printed (sshare) order"
    return head + "\n" + format_table(tree, result, damping, printed, release)


def _pbs_report(tree: PbsTree, fmt: str, cluster: str | None = None) -> str:
    from tui.formats.pbsfs import format_pbs_csv, format_pbs_table, pbs_rows
    from tui.formats.tabular import cluster_column, format_csv, format_json, with_cluster

    rows = pbs_rows(tree)
    if cluster is not None:
        if fmt == "table":
            return cluster_column(cluster, format_pbs_table(rows), max(7, len(cluster)))
        rows = with_cluster(cluster, rows)
        return format_json(rows) if fmt == "json" else format_csv(rows)
    if fmt == "json":
        return format_json(rows)
    if fmt == "csv":
        return format_pbs_csv(rows)
    return format_pbs_table(rows)


def _report_sshare(args: argparse.Namespace) -> str:
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(_read(args.sshare), args.sshare)
    tree, header = table.tree, table.header
    del table  # its printed cells (millions of strings at 200k rows) are not needed past here
    algorithm = args.algorithm or ("fair_tree" if "LevelFS" in header
                                   else "classic" if "NormUsage" in header else "fair_tree")
    return _slurm_report(tree, args.format, algorithm, args.damping or 1, args.sshare)


def _report_pbs(args: argparse.Namespace) -> str:
    if not args.pbs_usage:
        raise InputError("fairtop report", "--pbs-resource-group needs --pbs-usage FILE")
    from tui.sources.pbs import read_pbs

    return _pbs_report(read_pbs(args.pbs_resource_group, args.pbs_usage, unknown_shares=args.pbs_unknown_shares),
                       args.format)


def _report_folder(args: argparse.Namespace) -> str:
    """``report --from DIR``: a Slurm capture (algorithm and dampening from its config unless
    given) or a PBS folder."""
    return _report_snapshot(registry.make("folder", args.from_dir).load(), args)


def _report_snapshot(snap: Snapshot, args: argparse.Namespace, cluster: str | None = None) -> str:
    if snap.pbs is not None:
        return _pbs_report(snap.pbs, args.format, cluster)
    tree, result, algorithm, damping, printed, notes = _report_inputs(snap, args)
    _warn(notes)
    return _slurm_report(tree, args.format, algorithm, damping, snap.source, cluster, printed, result,
                         release(snap.scheduler_version))


def _report_inputs(snap: Snapshot, args: argparse.Namespace,
                   ) -> tuple[AssocTree, FairshareResult, str, float, Mapping[str, Sequence[str]] | None, list[str]]:
    """What a Slurm snapshot's report shows (:func:`tui.analysis.report_inputs.report_inputs`)."""
    from tui.analysis.report_inputs import report_inputs

    got = report_inputs(snap, args.algorithm, args.damping)
    return got.tree, got.result, got.algorithm, got.damping, got.printed, got.notes


def _cluster_snapshots(args: argparse.Namespace) -> dict[str, Snapshot]:
    """``--cluster NAME|a,b|all`` without a file: live Slurm (``--slurm``: one ``sshare -M``) or the
    config's ``[[cluster]]`` tables (each its own source). Cluster name -> snapshot."""
    from tui import config

    pick = args.report_cluster
    names = [n.strip() for n in pick.split(",")] if pick else []
    overrides = config.cli_overrides(args)  # `fairtop --slurm report ...` as `report --slurm`
    if getattr(args, "report_slurm", False):
        overrides["source"] = "slurm"
    settings = config.load(getattr(args, "config", None), overrides)
    if not settings.cluster or "source" in overrides:
        if settings.source == "slurm":
            from tui.sources.slurm_cli import live_snapshots

            return live_snapshots(names)
        raise InputError("--cluster", f"source {settings.source!r} is one cluster: list several as [[cluster]] "
                                      "tables in the config, or ask live Slurm (--slurm)")
    wanted = [c.name for c in settings.cluster] if pick == "all" else names
    out = {}
    for name in wanted:
        source = config.make_sources(settings, pick=name)[name]
        source.check()
        out[name] = source.load()
    return out


def _report(args: argparse.Namespace) -> str:
    """``fairtop report``: one source, or several clusters each with a cluster column."""
    if args.pbs_resource_group:
        return _report_pbs(args)
    if args.sshare:
        from tui.sources.cluster_split import split_clusters

        data = _read(args.sshare)
        parts = split_clusters(data, args.sshare)
        if "" in parts and not args.report_cluster:
            return _report_sshare(args)
        if "" in parts:  # one cluster's plain sshare output: --cluster names it
            parts = {_one_cluster(args.report_cluster): parts[""]}
        return _join_reports(args, {name: _sshare_snapshot(body, args, name) for name, body in parts.items()})
    if args.from_dir and not args.report_cluster:
        return _report_folder(args)
    if args.from_dir:
        return _join_reports(args, {_one_cluster(args.report_cluster): registry.make("folder", args.from_dir).load()})
    if not args.report_cluster:
        from tui import config

        overrides = config.cli_overrides(args)
        if args.report_slurm:
            overrides["source"] = "slurm"
        settings = config.load(getattr(args, "config", None), overrides)
        if not settings.cluster or "source" in overrides:
            source = config.make_source(settings)
            source.check()
            return _report_snapshot(source.load(), args)
        args.report_cluster = "all"
    return _join_reports(args, _cluster_snapshots(args))


def _one_cluster(pick: str) -> str:
    """``--cluster NAME`` for input that holds one cluster (a capture, a plain sshare file)."""
    if pick == "all" or "," in pick:
        raise InputError("--cluster", f"this input holds one cluster: give its NAME, not {pick!r}")
    return pick


def _sshare_snapshot(body: bytes, args: argparse.Namespace, cluster: str) -> Snapshot:
    from tui.model import PrioritySettings, Snapshot
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(body, args.sshare)
    algorithm: Algorithm = ("fair_tree" if "LevelFS" in table.header
                            else "classic" if "NormUsage" in table.header else "fair_tree")
    where = f"{args.sshare} (cluster {cluster})" if cluster else args.sshare
    return Snapshot(cluster=cluster, source=where, tree=table.tree, settings=PrioritySettings(algorithm=algorithm))


def _join_reports(args: argparse.Namespace, snaps: dict[str, Snapshot]) -> str:
    """Each cluster's report with a cluster column: tables one after the other, one JSON array,
    one CSV with one header. ``--cluster`` picks among ``snaps`` (names, a,b or all)."""
    pick = args.report_cluster
    if pick and pick != "all" and "" not in snaps:
        wanted = [n.strip() for n in pick.split(",")]
        missing = [n for n in wanted if n not in snaps]
        if missing:
            raise InputError("--cluster", f"no cluster {missing[0]!r} here (found: {', '.join(snaps)})")
        snaps = {n: snaps[n] for n in wanted}
    if args.format == "table":
        return "\n".join(_report_snapshot(snap, args, name or snap.cluster) for name, snap in snaps.items())
    if all(snap.pbs is None and snap.tree is not None for snap in snaps.values()):
        from itertools import chain

        def blocks(name: str, snap: Snapshot) -> Iterator[dict[str, list[str]]]:
            tree, result, _, damping, printed, notes = _report_inputs(snap, args)
            _warn(notes)
            return _report_blocks(tree, result, damping, name or snap.cluster, printed, release(snap.scheduler_version))

        _write_blocks(args.format, chain.from_iterable(blocks(n, s) for n, s in snaps.items()), True)
        return ""
    import json

    from tui.formats.tabular import format_csv, format_json

    as_json = argparse.Namespace(**{**vars(args), "format": "json"})
    rows = [row for name, snap in snaps.items()
            for row in json.loads(_report_snapshot(snap, as_json, name or snap.cluster))]
    if args.format == "json":
        return format_json(rows)
    columns = list(dict.fromkeys(key for row in rows for key in row))  # classic and Fair Tree differ
    return format_csv(rows, columns)


def _whatif(args: argparse.Namespace) -> str:
    """``whatif SCENARIO.toml``: load the scenario and the source, project, format."""
    from datetime import datetime

    from tui.analysis.planner import (
        format_whatif_csv,
        format_whatif_json,
        format_whatif_table,
        load_scenario,
        run_scenario,
    )
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
        snap = registry.make("slurm", None, cluster=args.report_cluster or "").load()
    elif args.report_cluster and not args.sshare:
        from tui import config

        if args.report_cluster == "all" or "," in args.report_cluster:
            raise InputError("--cluster", "a plan runs on one cluster: give one NAME (run it once per cluster)")
        settings = config.load(getattr(args, "config", None))
        source = config.make_sources(settings, pick=args.report_cluster)[args.report_cluster]
        source.check()
        snap = source.load()
    elif args.sshare:
        from tui.sources.sshare import parse_sshare

        table = parse_sshare(_read(args.sshare), args.sshare)
        algorithm: Algorithm = "fair_tree" if "LevelFS" in table.header else "classic"
        snap = Snapshot(cluster="", source=args.sshare, tree=table.tree,
                        settings=PrioritySettings(algorithm=algorithm))
    earlier = registry.make("folder", args.since).load() if args.since else None
    if earlier is None and args.demo and scenario.others == "observed" and snap is not None:
        earlier = _demo_week_before(snap)
    _warn([*(snap.warnings if snap else ()), *(earlier.warnings if earlier else ())])
    result = run_scenario(scenario, snap, now, args.scenario, earlier)
    if args.format == "json":
        return format_whatif_json(result)
    if args.format == "csv":
        return format_whatif_csv(result)
    return format_whatif_table(result)


def _demo_week_before(snap: Snapshot) -> Snapshot:
    """The demo as it stood a week ago, rebuilt from its own accounting records (the History tab's):
    what ``others = "observed"`` measures the pace against when no ``--since`` is given."""
    from dataclasses import replace

    from tui.analysis.history import usage_back_then
    from tui.sources.demo import demo_history

    assert snap.tree is not None
    jobs, last = demo_history(snap)
    usage, then = usage_back_then(jobs, snap.tree, snap.settings, last, 7)
    return replace(snap, tree=replace(snap.tree, usage_raw=usage.astype(snap.tree.usage_raw.dtype)), taken_at=then,
                   source=f"{snap.source}, a week earlier from its accounting records")


def _info(args: argparse.Namespace) -> int:
    """``fairtop info``: every path, each config file valid or not (exit 2 when one is not), and
    what a live session costs the controller."""
    from tui import config
    from tui.sources.slurm_cli import Cadence

    sys.stdout.write(config.describe_paths(args.config))
    try:
        settings = config.load(args.config)
    except config.ConfigError as exc:
        print(f"fairtop: the configuration is invalid: {exc}", file=sys.stderr)
        return EXIT_INPUT
    sys.stdout.write(_source_line(settings))
    cadence = Cadence(jobs_s=settings.refresh_rate)
    rates = cadence.per_minute()
    from tui.sources.rest_sshare import per_minute
    from tui.sources.slurmrestd import LiveRest

    rest = per_minute(cadence, LiveRest.slow_s_default, with_sshare=False)
    both = per_minute(cadence, LiveRest.slow_s_default)
    clusters = "".join(f"  {c.name:<12} {c.source}" + (f" -M {c.name}" if c.source == "slurm" else "")
                       + (f" {c.value}" if c.value else "") + "\n" for c in settings.cluster)
    if clusters:
        sys.stdout.write("clusters ([[cluster]]; c or :cluster NAME switches):\n" + clusters)
    sys.stdout.write(
        f"live Slurm (--slurm), per session: squeue and sprio every {cadence.jobs_s:g} s (refresh_rate), "
        f"sshare and assoc_mgr once per PriorityCalcPeriod ({cadence.usage_s:g} s until the cluster's "
        f"is read), sacctmgr and scontrol config/partitions every {cadence.slow_s:g} s: "
        f"{rates['slurmctld']:.1f} commands a minute to slurmctld, {rates['slurmdbd']:.1f} to slurmdbd\n"
        f"slurmrestd (--slurmrestd), per session: jobs every {cadence.jobs_s:g} s, associations and partitions "
        f"every {LiveRest.slow_s_default:g} s: {rest['slurmctld']:.1f} requests a minute to slurmctld, "
        f"{rest['slurmdbd']:.1f} to slurmdbd; --slurmrestd-sshare adds sshare and assoc_mgr once per "
        f"PriorityCalcPeriod and the config every {cadence.slow_s:g} s: {both['slurmctld']:.1f} a minute to "
        f"slurmctld, {both['slurmdbd']:.1f} to slurmdbd\n")
    return 0


def _source_line(settings: Any) -> str:
    """``fairtop info``'s line on the source: which, and why (named, or found here); for a
    published capture split by PrivateData, which part this user reads."""
    from tui import config

    value = getattr(settings, registry.source_class(settings.source).setting or "", None)
    line = f"source:       {settings.source}" + (f" {value}" if isinstance(value, str) and value else "")
    line += f"  (found: {settings.source_why})" if settings.source_why else "  (named by a flag or a config file)"
    if settings.source == "folder":
        try:
            source = config.make_source(settings)
            source.folder()  # type: ignore[attr-defined]
            note = source.view_note  # type: ignore[attr-defined]
        except (InputError, ValueError) as exc:
            note = str(exc)
        if note:
            line += f"\n              {note}"
    return line + "\n"


def _history(args: argparse.Namespace) -> str:
    """``fairtop history``: from ``--from DIR``, the configured folder, or live sacct + sshare;
    with ``--cluster``, each cluster's (a folder or live ``-M NAME``) under a cluster column."""
    from tui import config
    from tui.analysis.history_output import format_history_csv, format_history_json, format_history_table

    days_text = str(args.days).strip()
    if not (days_text.isascii() and days_text.isdigit()) or not 1 <= int(days_text) <= 3660:
        raise InputError("fairtop history", f"--days takes a whole number of days from 1 to 3660, not {args.days!r}")
    days = int(days_text)
    folder = args.history_from
    pick = args.report_cluster
    targets: dict[str, tuple[str | None, str]] = {}
    """cluster -> (folder or None for live, -M name)"""
    settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
    if pick and folder is None and settings.cluster and not any(
            getattr(args, f"source_{c.name}", None) for c in registry.SOURCES.values()):
        names = [c.name for c in settings.cluster] if pick == "all" else [n.strip() for n in pick.split(",")]
        for name in names:
            src = config.make_sources(settings, pick=name)[name]
            if src.name not in ("folder", "slurm"):
                raise InputError("fairtop history", f"cluster {name!r} (source {src.name}) has no accounting records")
            targets[name] = (src.value if src.name == "folder" else None, name if src.name == "slurm" else "")
    elif pick and folder is not None:
        targets[pick] = (folder, "")
    elif folder is None:
        import shutil

        if settings.source == "folder":
            folder = settings.folder
        elif settings.source == "demo" and (args.source_demo or not shutil.which("sacct")):
            folder = DEMO_HISTORY  # the demo's made-up past
        elif not (settings.source == "slurm"
                  or (settings.source == "demo" and not args.source_demo and shutil.which("sacct"))):
            raise InputError("fairtop history", f"the {settings.source} source has no accounting records; "
                             "use --from DIR (a capture with sacct_a_P.psv) or a live cluster (--slurm)")
        if pick == "all" and folder is None:
            raise InputError("--cluster", "all needs [[cluster]] tables in the config; name live clusters: a,b")
        for name in (pick.split(",") if pick else [""]):
            targets[name.strip()] = (folder, name.strip() if folder is None else "")
    else:
        targets[""] = (folder, "")
    results = {name: _history_one(args, days, where, on) for name, (where, on) in targets.items()}
    if not pick:
        daily, check = results[""]
        if args.format == "csv":
            return format_history_csv(daily)
        return format_history_json(daily, check) if args.format == "json" else format_history_table(daily, check)
    import json

    from tui.formats.tabular import cluster_column, format_csv, with_cluster

    if args.format == "csv":
        rows = [row for name, (daily, _) in results.items()
                for row in with_cluster(name, daily.rows())]
        return format_csv(rows, ["cluster", "date", "account", "user", "usage", "su", "decayed_usage"])
    if args.format == "json":
        docs = [{"cluster": name, **json.loads(format_history_json(daily, check))}
                for name, (daily, check) in results.items()]
        for doc in docs:
            for row in doc["daily"]:
                row["cluster"] = doc["cluster"]
        return json.dumps(docs, indent=1) + "\n"
    width = max(7, *(len(n) for n in results))
    return "\n".join(cluster_column(name, format_history_table(daily, check), width)
                     for name, (daily, check) in results.items())


DEMO_HISTORY = "\0demo"
"""``fairtop history`` on the built-in demo: its made-up accounting records, not a folder."""


def _history_one(args: argparse.Namespace, days: int, folder: str | None, on: str) -> tuple[DailyUsage, HistoryCheck]:
    """One cluster's daily usage and RawUsage check: a capture folder, or live (``on``: ``-M``)."""
    from datetime import datetime, timedelta, timezone

    from tui.analysis.history import check_raw_usage, daily_usage, select_jobs
    from tui.sources import sacct

    if folder == DEMO_HISTORY:
        from tui.sources.demo import demo_history

        snap = registry.make("demo", "slurm", getattr(args, "user", None) or "").load()
        last_cycle: datetime | None
        jobs, last_cycle = demo_history(snap)
    elif folder is not None:
        source = registry.make("folder", folder)
        source.check()
        snap = source.load()
        jobs, last_cycle = sacct.load_saved_history(folder)
    else:
        from tui.sources.slurm_cli import snapshot_at_cycle

        snap, last_cycle = snapshot_at_cycle(on)
        hl = snap.settings.decay_half_life_s
        back = max(timedelta(days=days), timedelta(seconds=10 * hl if hl > 0 else 366 * 86400))
        jobs = sacct.live_history(datetime.now(timezone.utc) - back, cluster=on)
    if snap.tree is None:
        raise InputError(str(folder or "live"), "not a Slurm snapshot (PBS has no sacct)")
    _warn(snap.warnings)
    mine = select_jobs(jobs, args.account, args.history_user, snap.tree)
    daily = daily_usage(mine, snap.taken_at.astimezone(), days, snap.settings.decay_half_life_s)
    check = check_raw_usage(jobs, snap.tree, snap.settings, last_cycle, snap.taken_at)
    if args.account or args.history_user:
        check = check.only(args.account, args.history_user, snap.tree)
    return daily, check


def _capture(args: argparse.Namespace) -> int:
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


@contextmanager
def _messages_looked_up_once() -> Iterator[None]:
    """argparse translates each help message it is given (``gettext``), and CPython looks for the
    catalogue on disk at every call, found or not: 4 file system calls a message, ~190 for our
    subcommands at every start. Where no catalogue exists (the usual case: one look, 4 calls)
    every message is its own translation, as gettext's fallback would say; else each message is
    looked up once while the parser is built."""
    translate = argparse._  # type: ignore[attr-defined]
    domain = gettext.textdomain()
    if gettext.find(domain, gettext.bindtextdomain(domain)) is None:
        argparse._ = str  # type: ignore[attr-defined]
    else:
        argparse._ = functools.cache(translate)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._ = translate  # type: ignore[attr-defined]


def _drop_script_folder() -> None:
    """Take the console script's own folder (``.venv/bin``, ``/usr/bin``) off ``sys.path``.

    Python puts a script's folder first on ``sys.path``, so every top-level import made after
    this stats it before finding the module elsewhere: ~120 file system calls of the app's start
    (a round trip each on NFS or Lustre). A ``bin`` folder holds no modules of ours; a
    ``python -m tui.cli`` run (whose first entry is the working folder) is left as it is.
    """
    script = sys.argv[0] if sys.argv else ""
    if script and sys.path and sys.path[0] == os.path.dirname(os.path.abspath(script)) \
            and not script.endswith(".py"):
        del sys.path[0]


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        _drop_script_folder()
    argv = sys.argv[1:] if argv is None else argv
    if list(argv[:1]) == ["standing"]:
        return _standing_fast(argv[1:])
    with _messages_looked_up_once():
        args = build_parser().parse_args(argv)
    try:
        if args.command == "report":
            import gc

            gc.disable()  # one pass over a big tree and out: no cycles to collect, 0.4 s of scans at 200k
            sys.stdout.write(_report(args))
            return 0
        if args.command == "whatif":
            sys.stdout.write(_whatif(args))
            return 0
        if args.command == "info":
            return _info(args)
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
        if args.command == "allocations":
            return _allocations(args)
        if args.command == "serve-metrics":
            return _serve_metrics(args)
        if args.command == "hash-password":
            return _hash_password(args)
        if args.command == "capture":
            return _capture(args)
        if args.command == "standing":
            from tui.standing_line import run

            return run(args)
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
