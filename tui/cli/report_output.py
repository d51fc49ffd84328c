"""How ``fairtop report`` shows one snapshot: a Slurm tree as sshare's table (with Rank), JSON or CSV
written as it is made, a PBS tree as pbsfs's; with a cluster column when a cluster is named."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from tui.cli.inputs import warn
from tui.slurm_releases import SlurmRelease, release

if TYPE_CHECKING:
    from tui.engine.result import FairshareResult
    from tui.model import AssocTree, PbsTree, Snapshot


def blocks_with_cluster(tree: AssocTree, result: FairshareResult, damping: float, cluster: str | None,
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


def write_blocks(fmt: str, blocks: Iterable[dict[str, list[str]]], with_cluster: bool) -> None:
    """json or csv of report blocks, straight to stdout."""
    from tui.formats.sshare import REPORT_COLUMNS
    from tui.formats.tabular import write_columns_csv, write_columns_json

    first = ("cluster",) if with_cluster else ()
    if fmt == "json":
        write_columns_json(blocks, (*first, "account", "user"), sys.stdout)
    else:
        write_columns_csv(blocks, (*first, *REPORT_COLUMNS), sys.stdout)


def slurm_report(tree: AssocTree, fmt: str, algorithm: str, damping: float, title: str,
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
        write_blocks(fmt, blocks_with_cluster(tree, result, damping, cluster, printed, release), cluster is not None)
        return ""
    if cluster is not None:
        from tui.formats.tabular import cluster_column

        return cluster_column(cluster, slurm_report(tree, fmt, algorithm, damping, title, None, printed, result,
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


def pbs_report(tree: PbsTree, fmt: str, cluster: str | None = None) -> str:
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


def snapshot_report(snap: Snapshot, args: argparse.Namespace, cluster: str | None = None) -> str:
    if snap.pbs is not None:
        return pbs_report(snap.pbs, args.format, cluster)
    tree, result, algorithm, damping, printed, notes = slurm_inputs(snap, args)
    warn(notes)
    return slurm_report(tree, args.format, algorithm, damping, snap.source, cluster, printed, result,
                        release(snap.scheduler_version))


def slurm_inputs(snap: Snapshot, args: argparse.Namespace,
                 ) -> tuple[AssocTree, FairshareResult, str, float, Mapping[str, Sequence[str]] | None, list[str]]:
    """What a Slurm snapshot's report shows (:func:`tui.analysis.report_inputs.report_inputs`)."""
    from tui.analysis.report_inputs import report_inputs

    got = report_inputs(snap, args.algorithm, args.damping)
    return got.tree, got.result, got.algorithm, got.damping, got.printed, got.notes
