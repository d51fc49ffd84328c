"""``fairtop report``: the engine's fairshare recomputation of saved outputs (an sshare file, a PBS
resource_group and usage, a capture folder), of the live cluster, or of the config's clusters, each
under a cluster column. Which snapshots are reported is here; how each is shown,
:mod:`tui.cli.report_output`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tui.cli.inputs import read_input, warn
from tui.cli.report_output import (
    blocks_with_cluster,
    pbs_report,
    slurm_inputs,
    slurm_report,
    snapshot_report,
    write_blocks,
)
from tui.cli.source_flags import CLUSTER_HELP
from tui.slurm_releases import release
from tui.sources import registry
from tui.sources.errors import InputError

if TYPE_CHECKING:
    from tui.model import Algorithm, Snapshot


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
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


def run(args: argparse.Namespace) -> int:
    import gc

    gc.disable()  # one pass over a big tree and out: no cycles to collect, 0.4 s of scans at 200k
    sys.stdout.write(_report(args))
    return 0


def _report(args: argparse.Namespace) -> str:
    """``fairtop report``: one source, or several clusters each with a cluster column."""
    if args.pbs_resource_group:
        return _report_pbs(args)
    if args.sshare:
        from tui.sources.cluster_split import split_clusters

        data = read_input(args.sshare)
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
            return snapshot_report(source.load(), args)
        args.report_cluster = "all"
    return _join_reports(args, _cluster_snapshots(args))


def _one_cluster(pick: str) -> str:
    """``--cluster NAME`` for input that holds one cluster (a capture, a plain sshare file)."""
    if pick == "all" or "," in pick:
        raise InputError("--cluster", f"this input holds one cluster: give its NAME, not {pick!r}")
    return pick


def _report_sshare(args: argparse.Namespace) -> str:
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(read_input(args.sshare), args.sshare)
    tree, header = table.tree, table.header
    del table  # its printed cells (millions of strings at 200k rows) are not needed past here
    algorithm = args.algorithm or ("fair_tree" if "LevelFS" in header
                                   else "classic" if "NormUsage" in header else "fair_tree")
    return slurm_report(tree, args.format, algorithm, args.damping or 1, args.sshare)


def _report_pbs(args: argparse.Namespace) -> str:
    if not args.pbs_usage:
        raise InputError("fairtop report", "--pbs-resource-group needs --pbs-usage FILE")
    from tui.sources.pbs import read_pbs

    return pbs_report(read_pbs(args.pbs_resource_group, args.pbs_usage, unknown_shares=args.pbs_unknown_shares),
                      args.format)


def _report_folder(args: argparse.Namespace) -> str:
    """``report --from DIR``: a Slurm capture (algorithm and dampening from its config unless
    given) or a PBS folder."""
    return snapshot_report(registry.make("folder", args.from_dir).load(), args)


def _sshare_snapshot(body: bytes, args: argparse.Namespace, cluster: str) -> Snapshot:
    from tui.model import PrioritySettings, Snapshot
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(body, args.sshare)
    algorithm: Algorithm = ("fair_tree" if "LevelFS" in table.header
                            else "classic" if "NormUsage" in table.header else "fair_tree")
    where = f"{args.sshare} (cluster {cluster})" if cluster else args.sshare
    return Snapshot(cluster=cluster, source=where, tree=table.tree, settings=PrioritySettings(algorithm=algorithm))


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
        return "\n".join(snapshot_report(snap, args, name or snap.cluster) for name, snap in snaps.items())
    if all(snap.pbs is None and snap.tree is not None for snap in snaps.values()):
        from itertools import chain

        def blocks(name: str, snap: Snapshot) -> Iterator[dict[str, list[str]]]:
            tree, result, _, damping, printed, notes = slurm_inputs(snap, args)
            warn(notes)
            return blocks_with_cluster(tree, result, damping, name or snap.cluster, printed,
                                       release(snap.scheduler_version))

        write_blocks(args.format, chain.from_iterable(blocks(n, s) for n, s in snaps.items()), True)
        return ""
    import json

    from tui.formats.tabular import format_csv, format_json

    as_json = argparse.Namespace(**{**vars(args), "format": "json"})
    rows = [row for name, snap in snaps.items()
            for row in json.loads(snapshot_report(snap, as_json, name or snap.cluster))]
    if args.format == "json":
        return format_json(rows)
    columns = list(dict.fromkeys(key for row in rows for key in row))  # classic and Fair Tree differ
    return format_csv(rows, columns)
