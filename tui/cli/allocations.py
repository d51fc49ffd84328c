"""``fairtop balance`` (allocation balances, like sproject) and ``fairtop allocations hook|site-factor|
publish-balances`` (Slurm's hooks into the allocation ledger, the seed-004 site factor, the balances
file of cli_filter.lua)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from tui.cli.service_flags import ca_option, given
from tui.sources.errors import InputError

if TYPE_CHECKING:
    from tui.config import ColdFrontAccess, Settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    bal = sub.add_parser("balance", help="allocation balances, without the UI (like sproject)",
                         description="Allocation balances from the embedded ledger (--db) or the service (--url).")
    where = bal.add_mutually_exclusive_group()
    where.add_argument("--db", metavar="PATH|URL", help="the ledger: an SQLite file or postgresql://... "
                       "(default: $FAIRTOP_ALLOC_DB)")
    where.add_argument("--url", help="the allocation service (default: $FAIRTOP_ALLOC_URL)")
    where.add_argument("--coldfront", metavar="URL", help="your allocations in ColdFront (its REST API, with your "
                       "token), beside Slurm's own budgets (default: $FAIRTOP_COLDFRONT_URL, else coldfront_url)")
    bal.add_argument("--coldfront-token-file", metavar="FILE", help="with --coldfront: the file holding your "
                     "ColdFront API token, mode 600 (default: $FAIRTOP_COLDFRONT_TOKEN, else coldfront_token_file)")
    bal.add_argument("--auth", choices=("token", "munge"), default="token",
                     help="with --url: a bearer token from $FAIRTOP_ALLOC_TOKEN, or a MUNGE credential")
    bal.add_argument("--project", metavar="P", help="only this project (name, account or id)")
    ca_option(bal)
    bal.add_argument("--config", metavar="FILE", help="config file (ca_file, allocation_token_file, coldfront_url, "
                     "coldfront_token_file)")
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
    pcf = alc_sub.add_parser("publish-coldfront", help="write every user's ColdFront allocations to DIR (a staff "
                             "token on this host only)",
                             description="Read every ColdFront allocation with a staff token and write each user's "
                             "own (what ColdFront's API would show them; public usage attributes only) to "
                             "DIR/users/NAME/coldfront.json, mode 0400 and owned by NAME (DIR/users 0711), every "
                             "--every seconds; users then set coldfront_published = DIR instead of a token of their "
                             "own (needs root or CAP_CHOWN).")
    pcf.add_argument("dir", metavar="DIR", help="where to write (a folder the users' hosts can read)")
    pcf.add_argument("--every", type=float, default=3600.0, metavar="S", help="seconds between reads (default 3600: "
                     "ColdFront's usage changes when XDMoD's sync runs)")
    pcf.add_argument("--once", action="store_true", help="read and write once and exit")
    pcf.add_argument("--coldfront", metavar="URL",
                     help="ColdFront (default: $FAIRTOP_COLDFRONT_URL, else coldfront_url)")
    pcf.add_argument("--coldfront-token-file", metavar="FILE", help="the staff token, mode 600 (default: "
                     "$FAIRTOP_COLDFRONT_TOKEN, else coldfront_token_file)")
    pcf.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')")
    ca_option(pcf)
    for p in (hook, sfc, pub):
        p.add_argument("--url", help="the allocation service (default: $FAIRTOP_ALLOC_URL, else allocation_url)")
        p.add_argument("--auth", choices=("token", "munge"),
                       help="a bearer token ($FAIRTOP_ALLOC_TOKEN or allocation_token_file) or MUNGE "
                       "(default: $FAIRTOP_ALLOC_AUTH, else allocation_auth)")
        p.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')")
        ca_option(p)
    for p in (sfc, pub):
        p.add_argument("--db", metavar="PATH|URL", help="the embedded ledger (default: $FAIRTOP_ALLOC_DB, else ledger)")


def run(args: argparse.Namespace) -> int:
    if args.command == "balance":
        sys.stdout.write(_balance(args))
        return 0
    return _allocations(args)


def _balance(args: argparse.Namespace) -> str:

    from tui.allocations import balance

    if args.coldfront or args.coldfront_token_file:
        return _coldfront(args)
    url = args.url or (None if args.db else os.environ.get("FAIRTOP_ALLOC_URL"))
    db = args.db or (None if url else os.environ.get("FAIRTOP_ALLOC_DB"))
    if url:
        from tui import config

        env = {**os.environ, "FAIRTOP_ALLOC_AUTH": args.auth, **given({"FAIRTOP_ALLOC_CA_FILE": args.ca_file})}
        access = config.allocation_access(config.load(args.config), env)
        rows = balance.from_service(url, args.project, token=access.token, munge=access.munge,
                                    ca_file=access.ca_file)
    elif db:
        rows = balance.from_ledger(db, args.project)
    elif os.environ.get("FAIRTOP_COLDFRONT_URL") or _coldfront_configured(_settings(args)):
        return _coldfront(args)
    else:
        raise InputError("fairtop balance", "give --db PATH|URL, --url URL or --coldfront URL (or set FAIRTOP_ALLOC_DB "
                         "/ FAIRTOP_ALLOC_URL, or coldfront_url)")
    return balance.format_balances(rows, args.format)


def _settings(args: argparse.Namespace) -> Settings:
    from tui import config

    return config.load(args.config)


def _coldfront(args: argparse.Namespace) -> str:
    """``balance --coldfront``: the user's ColdFront allocations, each usage attribute beside the
    Slurm budget of its account in the configured (or detected) source's snapshot."""
    import asyncio
    import json

    from tui import config
    from tui.allocations.coldfront import read_coldfront
    from tui.analysis.coldfront import coldfront_json, coldfront_lines, reconcile, slurm_budgets

    settings, access = _coldfront_access(args)
    view = asyncio.run(read_coldfront(access.url, token=access.token, timeout=access.timeout,
                                      ca_file=access.ca_file, public=access.public,
                                      published=access.published, user=access.user))
    budgets, slurm = slurm_budgets(None if settings.source == "demo" else config.make_source(settings))
    reconciled = reconcile(view.allocations, budgets) if budgets is not None else []
    if args.format == "json":
        return json.dumps({**coldfront_json(view, reconciled), "slurm": slurm}, indent=2) + "\n"
    return "\n".join([*coldfront_lines(view, reconciled), f"Slurm: {slurm}"]) + "\n"


def _coldfront_configured(settings: Settings) -> bool:
    return bool(settings.coldfront_url or settings.coldfront_published)


def _coldfront_access(args: argparse.Namespace) -> tuple[Settings, ColdFrontAccess]:
    """The ColdFront and token the flags, the environment and the config give (flags first)."""
    from dataclasses import replace

    from tui import config

    settings = _settings(args)
    env = {**os.environ, **given({"FAIRTOP_COLDFRONT_URL": args.coldfront, "FAIRTOP_ALLOC_CA_FILE": args.ca_file})}
    if args.coldfront_token_file:  # the flag beats the environment's token too
        settings = replace(settings, coldfront_token_file=args.coldfront_token_file)
        env.pop("FAIRTOP_COLDFRONT_TOKEN", None)
    access = config.coldfront_access(settings, env)
    if access is None:
        raise InputError(f"fairtop {args.command}", "give --coldfront URL (or set coldfront_url)")
    return settings, access


def _publish_coldfront(args: argparse.Namespace) -> int:
    """``allocations publish-coldfront DIR``: every --every seconds until interrupted (or --once)."""
    import asyncio
    import time
    from pathlib import Path

    from tui.allocations.coldfront_publish import publish, read_site

    _, access = _coldfront_access(args)
    if not access.token:
        raise InputError("fairtop allocations publish-coldfront", "needs a staff token: --coldfront-token-file FILE "
                         "(or coldfront_token_file)")
    while True:
        site, allocations, projects = asyncio.run(read_site(access.url, token=access.token, timeout=access.timeout,
                                                            ca_file=access.ca_file))
        written, skipped = publish(Path(args.dir), site, allocations, projects, public=access.public)
        note = f"; skipped (no Unix account): {', '.join(skipped)}" if skipped else ""
        print(f"fairtop: ColdFront {site}: {len(allocations)} allocations, {written} users' files in {args.dir}{note}",
              flush=True)
        if args.once:
            return 0
        time.sleep(max(args.every, 10.0))


def _allocations(args: argparse.Namespace) -> int:

    from tui import config
    from tui.allocations import commands

    if args.allocations_command == "publish-coldfront":
        return _publish_coldfront(args)

    settings = config.load(args.config)
    env = dict(os.environ)
    env.update(given({"FAIRTOP_ALLOC_URL": args.url, "FAIRTOP_ALLOC_DB": getattr(args, "db", None),
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
