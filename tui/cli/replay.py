"""``fairtop replay``: the jobs of the last days under another policy (half-life, calc period,
reset period, algorithm, dampening, billing weights, MAX_TRES, limits enforcement, QOS
UsageFactors, shares), from a capture or the live cluster (one ``sacct`` per replay). The
computation is :mod:`tui.analysis.replay`; here the flags, the source and the output."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING

from tui.cli.inputs import read_input, warn
from tui.sources import registry
from tui.sources.errors import InputError

if TYPE_CHECKING:
    from tui.analysis.replay import PolicyChange, PolicyReplay
    from tui.model import Snapshot
    from tui.sources.sacct import SacctColumns

_YES_NO = ("yes", "no")


def add_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("replay", help="replay the past weeks' jobs under another policy (admins)",
                         description="Replay the jobs of the last days with Slurm's usage law under another "
                                     "policy and show each user's and account's FairShare and rank now and "
                                     "replayed. Counterfactual by default (had the policy always been this); "
                                     "--switch-at switches at a time, usage carried over as Slurm carries it. "
                                     "Needs every job: admins only under PrivateData. See docs/admin/replay.md.")
    src = rep.add_mutually_exclusive_group()
    src.add_argument("--from", dest="from_dir", metavar="DIR", help="a capture ('fairtop capture DIR', with sacct)")
    src.add_argument("--slurm", action="store_true", help="the live cluster: one sshare, one sacct")
    src.add_argument("--demo", action="store_true", help="the built-in demo cluster and its made-up jobs")
    rep.add_argument("--cluster", dest="report_cluster", metavar="NAME",
                     help="with --slurm: the cluster asked with -M; else a [[cluster]] of the config")
    window = rep.add_mutually_exclusive_group()
    window.add_argument("--days", metavar="N", help="replay the jobs of the last N days (default: all the "
                        "source's jobs; live: ten half-lives, at least 30 days)")
    window.add_argument("--since", metavar="TIME", help="replay the jobs from TIME (ISO date-time; without an offset "
                        "on the cluster's clock: a capture's timezone.txt, else this machine's)")
    rep.add_argument("--at", metavar="TIME", help="read the usage at TIME (ISO; default the source's time)")
    rep.add_argument("--switch-at", metavar="TIME",
                     help="switch to the new policy at TIME (ISO) instead of having always had it")
    pol = rep.add_argument_group("the new policy (anything not given stays the cluster's)")
    pol.add_argument("--half-life", metavar="TIME", help="PriorityDecayHalfLife, a Slurm time (7-0 = 7 days, "
                     "90 = 90 minutes; 0: no decay)")
    pol.add_argument("--calc-period", metavar="TIME", help="PriorityCalcPeriod, a Slurm time (5 = 5 minutes)")
    pol.add_argument("--reset-period", type=str.upper, metavar="PERIOD",
                     help="PriorityUsageResetPeriod: NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY")
    pol.add_argument("--algorithm", choices=("fair_tree", "classic"), help="Fair Tree or classic (NO_FAIR_TREE)")
    pol.add_argument("--damping", metavar="D", help="FairShareDampeningFactor (classic)")
    pol.add_argument("--billing", action="append", default=[], metavar="PARTITION=WEIGHTS",
                     help="a partition's whole TRESBillingWeights, e.g. gpu=CPU=1,Mem=0.25G,GRES/gpu=8 "
                          "(repeatable); jobs are billed again from their AllocTRES")
    pol.add_argument("--max-tres", nargs="?", const="yes", choices=_YES_NO,
                     help="PriorityFlags=MAX_TRES on (yes, the default of the bare flag) or off")
    pol.add_argument("--enforce-limits", choices=_YES_NO,
                     help="AccountingStorageEnforce with limits (a job's last slice charged at its end) or not")
    pol.add_argument("--qos-usage-factor", action="append", default=[], metavar="QOS=F",
                     help="a QOS's UsageFactor (repeatable)")
    pol.add_argument("--shares", metavar="FILE",
                     help="raw shares to change: lines 'ACCOUNT SHARES' or 'ACCOUNT/USER SHARES' (a whole "
                          "number or 'parent'; # comments)")
    rep.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="table (default) and csv: per user and account, FairShare and rank now and replayed "
                          "and the move; json: the replayed sshare rows as 'fairtop report --format json'")


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(_replay(args))
    return 0


def _time(flag: str, text: str | None, zone: tzinfo | None) -> datetime | None:
    """An ISO date-time; without an offset, on the cluster's clock (``zone``: a capture's, as sacct
    printed its times; None: this machine's)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(flag, f"not an ISO date-time like 2026-11-21T12:00: {text!r}") from None
    if when.tzinfo is not None:
        return when
    return when.replace(tzinfo=zone) if zone is not None else when.astimezone()


def _seconds(flag: str, text: str | None, zero_ok: bool) -> float | None:
    from tui.analysis.policy_view import FormError, slurm_seconds

    try:
        return slurm_seconds(flag, text, zero_ok)
    except FormError as exc:
        raise InputError(flag, exc.text) from None


def _pairs(flag: str, items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(flag, f"expected NAME=VALUE, not {item!r}")
        out[name.strip()] = value.strip()
    return out


def policy_change(args: argparse.Namespace, snap: Snapshot) -> PolicyChange:
    """The flags as a :class:`PolicyChange` (each checked, one line on error)."""
    from tui.analysis.replay import RESET_PERIODS, PolicyChange, parse_shares
    from tui.sources.slurm_units import parse_tres_billing_weights

    if args.reset_period is not None and args.reset_period not in RESET_PERIODS:
        raise InputError("--reset-period", f"one of {', '.join(RESET_PERIODS)}, not {args.reset_period!r}")
    damping = None
    if args.damping is not None:
        try:
            damping = float(args.damping)
        except ValueError:
            damping = -1.0
        if not 0 < damping < float("inf"):
            raise InputError("--damping", f"must be a number > 0, not {args.damping!r}")
    billing = {}
    for part, text in _pairs("--billing", args.billing).items():
        try:
            billing[part] = parse_tres_billing_weights(text)
        except ValueError as exc:
            raise InputError("--billing", f"{part}: {exc}") from None
    factors = {}
    for qos, text in _pairs("--qos-usage-factor", args.qos_usage_factor).items():
        try:
            factors[qos] = float(text)
        except ValueError:
            factors[qos] = -1.0
        if not 0 <= factors[qos] < float("inf"):
            raise InputError("--qos-usage-factor", f"{qos}: a number >= 0, not {text!r}")
    shares = {}
    if args.shares:
        assert snap.tree is not None
        shares = parse_shares(read_input(args.shares).decode("utf-8", "replace"), snap.tree, args.shares)
    return PolicyChange(
        half_life_s=_seconds("--half-life", args.half_life, zero_ok=True),
        calc_period_s=_seconds("--calc-period", args.calc_period, zero_ok=False),
        reset_period=args.reset_period, algorithm=args.algorithm, damping=damping, billing=billing,
        max_tres=None if args.max_tres is None else args.max_tres == "yes",
        enforce_limits=None if args.enforce_limits is None else args.enforce_limits == "yes",
        qos_usage_factor=factors, shares=shares)


def _source(args: argparse.Namespace) -> tuple[Snapshot, datetime | None, str | None, str]:
    """The snapshot, its last decay cycle, and where its jobs are: a folder, the demo ("\\0demo")
    or live (None, with the -M cluster)."""
    from tui.sources import sacct

    if args.demo:
        return registry.make("demo", "slurm", getattr(args, "user", None) or "").load(), None, "\0demo", ""
    if args.slurm:
        from tui.sources.slurm_cli import snapshot_at_cycle

        snap, last = snapshot_at_cycle(args.report_cluster or "")
        return snap, last, None, args.report_cluster or ""
    folder = args.from_dir
    if folder is None:
        from tui import config

        settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
        src = (config.make_sources(settings, pick=args.report_cluster)[args.report_cluster]
               if args.report_cluster and settings.cluster else config.make_source(settings))
        if src.name == "slurm":
            from tui.sources.slurm_cli import snapshot_at_cycle

            snap, last = snapshot_at_cycle(args.report_cluster or "")
            return snap, last, None, args.report_cluster or ""
        if src.name != "folder":
            raise InputError("fairtop replay", f"the {src.name} source has no accounting records; use --from DIR "
                             "(a capture with sacct_a_P.psv), --slurm or --demo")
        folder = src.value
    source = registry.make("folder", folder)
    source.check()
    snap = source.load()
    last = sacct.load_saved_last_cycle(folder)
    return snap, last, folder, ""


def _jobs(where: str | None, cluster: str, snap: Snapshot, since: datetime) -> SacctColumns:
    """The jobs as columns: a capture's sacct file, the demo's records, or ONE live sacct."""
    from tui.sources import sacct

    if where == "\0demo":
        from tui.sources.demo import demo_history

        return sacct.SacctColumns.of_jobs(demo_history(snap)[0])
    if where is None:
        return sacct.live_columns(since, cluster=cluster)  # the one sacct of this replay
    return sacct.load_saved_columns(where)


def _window(args: argparse.Namespace, snap: Snapshot, live: bool) -> datetime | None:
    """The window's start; None: every job of the source."""
    if args.since:
        return _time("--since", args.since, snap.zone)
    if args.days is not None:
        text = str(args.days).strip()
        try:
            days = float(text)
        except ValueError:
            days = -1.0
        if not 0 < days <= 3660:
            raise InputError("--days", f"a number of days from 0 to 3660, not {args.days!r}")
        return snap.taken_at - timedelta(days=days)
    if live:
        hl = snap.settings.decay_half_life_s
        return snap.taken_at - (timedelta(days=366) if hl <= 0 else max(timedelta(seconds=10 * hl), timedelta(days=30)))
    return None


def _cycles(where: str | None, cluster: str) -> list[float] | None:
    """slurmctld's logged decay cycles: a capture's ``slurmctld_cycles.log``, or live the controller's
    own log (on its host, readable, with DebugFlags=Priority); None: a regular grid is assumed."""
    from tui.sources.ctld_log import load_saved_log, parse_ctld_log

    if where == "\0demo":
        return None
    if where is None:
        from tui.sources.slurm_cli import controller_log

        data = controller_log(cluster)
        return parse_ctld_log(data).cycles if data else None
    log = load_saved_log(where)
    return log.cycles if log is not None else None


def _replay(args: argparse.Namespace) -> str:
    from tui.analysis.replay import job_columns, policy_replay

    snap, last, where, cluster = _source(args)
    if snap.tree is None:
        raise InputError(snap.source, "not a Slurm snapshot: a replay needs Slurm's associations and sacct")
    if snap.private is not None and snap.private.hides & {"jobs", "usage", "users", "accounts"}:
        raise InputError("fairtop replay", f"needs every job and every association's usage, and "
                         f"PrivateData={','.join(sorted(snap.private.hides))} shows you your own only: "
                         "ask an admin to run it")
    warn(snap.warnings)
    since = _window(args, snap, where is None)
    jobs = _jobs(where, cluster, snap, since or snap.taken_at)
    if since is None:
        first = float(jobs.start.min()) if jobs.size else (snap.taken_at - timedelta(days=1)).timestamp()
        since = datetime.fromtimestamp(first - 1, timezone.utc)
    change = policy_change(args, snap)
    try:
        done = policy_replay(snap, job_columns(jobs, snap.tree), change, since.astimezone(timezone.utc), last,
                             _time("--at", args.at, snap.zone), _time("--switch-at", args.switch_at, snap.zone),
                             _cycles(where, cluster))
    except ValueError as exc:
        raise InputError("fairtop replay", str(exc)) from None
    warn(done.notes)
    if args.format != "table":  # the table says it in its head; stdout stays JSON or CSV alone
        print(f"fairtop: cycles: {done.grid_text}", file=sys.stderr)
    if args.format == "json":
        return _json(snap, done)
    from tui.analysis.replay import replay_rows
    from tui.formats.tabular import format_csv

    rows = replay_rows(done)
    if args.format == "csv":
        return format_csv(rows)
    return _table(done, rows)


def _json(snap: Snapshot, done: PolicyReplay) -> str:
    """The replayed rows as ``fairtop report --format json`` prints a snapshot: sshare's own
    columns where the replay changed nothing."""
    from dataclasses import replace

    from tui.cli.report_output import slurm_inputs, slurm_report
    from tui.slurm_releases import release

    if done.unchanged:
        same = argparse.Namespace(algorithm=None, damping=None)
        tree, result, algorithm, damping, printed, notes = slurm_inputs(replace(snap, warnings=()), same)
        warn(notes)
        return slurm_report(tree, "json", algorithm, damping, snap.source, None, printed, result,
                            release(snap.scheduler_version))
    return slurm_report(done.tree, "json", done.algorithm, done.damping, snap.source, None, None, done.result,
                        release(snap.scheduler_version))


def _fs(value: object) -> str:
    return "" if value is None else f"{value:.6f}" if isinstance(value, float) else str(value)


def _table(done: PolicyReplay, rows: list[dict[str, object]]) -> str:
    from tui.analysis.policy_view import policy_line

    head = [f"# replay of {done.jobs} job run(s) from {done.since.isoformat(timespec='minutes')} to "
            f"{done.at.isoformat(timespec='minutes')}: {policy_line(done)}; "
            f"{done.algorithm.replace('_', ' ')}" + (f", dampening {done.damping:g}" if done.algorithm == "classic"
                                                      else ""),
            f"# cycles: {done.grid_text}",
            "# Rank: N = the highest FairShare of N users (as 'fairtop report'); Move: FairShare replayed - now"]
    cols = ("Account", "User", "RawUsage", "Replayed", "FairShare", "Replayed", "Move", "Rank", "Replayed")
    body = [[str(r["account"]), str(r["user"]), str(r["raw_usage"]), str(r["raw_usage_replayed"]),
             _fs(r["fairshare"]), _fs(r["fairshare_replayed"]),
             "" if r["move"] is None else f"{r['move']:+.6f}", _fs(r["rank"]), _fs(r["rank_replayed"])]
            for r in rows]
    widths = [max(len(c), *(len(line[k]) for line in body)) if body else len(c) for k, c in enumerate(cols)]
    lines = [" ".join(v.ljust(w) if k < 2 else v.rjust(w) for k, (v, w) in enumerate(zip(line, widths))).rstrip()
             for line in (list(cols), *body)]
    return "\n".join(head + lines) + "\n"
