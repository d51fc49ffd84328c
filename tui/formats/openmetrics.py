"""The OpenMetrics text format (and Prometheus' 0.0.4 text format, its subset for gauges):
families of gauges with escaped labels.

Slurm values are written as the text ``fairtop report --format json`` carries (sshare's ``%f``
cells, the printed ones where the source has them), so Prometheus parses the same double the
report shows; ``inf`` becomes ``+Inf``; an empty cell is left out, never written as 0.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from tui.model import AssocTree

__all__ = ["ASSOCIATION_METRICS", "CONTENT_TYPE", "EOF", "PBS_METRICS", "TEXT_CONTENT_TYPE", "Family",
           "association_families", "label_set", "number", "pbs_families"]

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
EOF = "# EOF\n"
"""The OpenMetrics terminator (a comment to the 0.0.4 parser, which does not need it)."""

#: report column -> (metric, help). The per-association families, in the tree pane's order.
ASSOCIATION_METRICS = {
    "raw_shares": ("fairtop_association_raw_shares", "RawShares as sshare prints it (absent for 'parent')"),
    "norm_shares": ("fairtop_association_norm_shares", "NormShares: the share of the parent's shares"),
    "raw_usage": ("fairtop_association_raw_usage", "RawUsage: decayed billing-seconds"),
    "norm_usage": ("fairtop_association_norm_usage", "NormUsage (classic)"),
    "effective_usage": ("fairtop_association_effective_usage", "EffectvUsage"),
    "fairshare": ("fairtop_association_fairshare", "FairShare factor (absent where sshare prints none)"),
    "level_fs": ("fairtop_association_level_fs", "LevelFS (Fair Tree; +Inf where sshare prints inf)"),
    "rank": ("fairtop_association_rank", "Fair Tree rank of a user (1 = highest priority)"),
}

#: pbs_rows key -> (metric, help).
PBS_METRICS = {
    "shares": ("fairtop_pbs_entity_shares", "shares in resource_group"),
    "percentage": ("fairtop_pbs_entity_percentage", "share of the machine in percent, as pbsfs prints it"),
    "usage": ("fairtop_pbs_entity_usage", "usage (usage units)"),
    "fairshare_tree_usage": ("fairtop_pbs_entity_tree_usage", "fairshare_tree_usage"),
    "usage_per_perc": ("fairtop_pbs_entity_usage_per_perc", "usage / percentage (absent where the percentage is 0)"),
    "fairshare_factor": ("fairtop_pbs_entity_fairshare_factor", "fairshare_factor (0..1)"),
}


class Family:
    """One gauge family: its ``# HELP``/``# TYPE`` lines and samples, written only when it has any."""

    def __init__(self, name: str, help_text: str) -> None:
        self.name = name
        self.head = f"# HELP {name} {help_text}\n# TYPE {name} gauge\n"
        self.samples: list[str] = []

    def add(self, labels: str, value: str) -> None:
        """One sample: ``labels`` from :func:`label_set`, ``value`` from :func:`number` or a cell."""
        self.samples.append(f"{self.name}{labels} {value}\n")

    def text(self) -> str:
        return self.head + "".join(self.samples) if self.samples else ""


def _escape(value: str) -> str:
    """A label value as the format quotes it: backslash, double quote and newline escaped
    (account names are user input)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def label_set(labels: Mapping[str, Any]) -> str:
    """``{a="x",b="y"}``, values escaped."""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def number(x: float) -> str:
    """A float as Prometheus parses it back exactly: ``repr`` (shortest round trip), ``+Inf``."""
    if x == float("inf"):
        return "+Inf"
    if x == float("-inf"):
        return "-Inf"
    return "NaN" if x != x else repr(float(x))


def _cell(text: str) -> str | None:
    """A report cell as a sample value (None: blank, left out)."""
    if not text:
        return None
    if text in ("inf", "-inf"):
        return "+Inf" if text == "inf" else "-Inf"
    return text


#: Report columns computed from usage: left out where the source does not have the usage.
USAGE_COLUMNS = frozenset({"raw_usage", "norm_usage", "effective_usage", "fairshare", "level_fs", "rank"})


def association_families(cluster: str, tree: AssocTree, blocks: Iterable[Mapping[str, Sequence[str]]],
                         usage_unknown: Collection[int] = ()) -> list[Family]:
    """Per-association gauges from :func:`tui.formats.sshare.report_blocks` of ``tree``.

    Labels: cluster, account, user ("" for an account), parent (the parent association's
    account, "" for root), depth (root 0). ``raw_shares`` "parent" is not a number: left out.
    ``usage_unknown``: rows whose usage the source does not have: their :data:`USAGE_COLUMNS`
    are left out, not written as the engine's values from a usage of 0.
    """
    fams = {col: Family(name, text) for col, (name, text) in ASSOCIATION_METRICS.items()}
    unknown = set(usage_unknown)
    parent = tree.parent.tolist()
    depth = tree.depth().tolist()
    accounts = tree.account.tolist()
    c = _escape(cluster)
    i = 0
    for block in blocks:
        present = [col for col in ASSOCIATION_METRICS if col in block]
        columns = [(fams[col].samples, fams[col].name, block[col]) for col in present]
        shares_only = [column for column, col in zip(columns, present) if col not in USAGE_COLUMNS]
        for k, (account, user) in enumerate(zip(block["account"], block["user"])):
            p = parent[i]
            labels = (f'{{cluster="{c}",account="{_escape(account)}",user="{_escape(user)}",'
                      f'parent="{_escape(accounts[p]) if p >= 0 else ""}",depth="{depth[i]}"}} ')
            for samples, name, cells in shares_only if i in unknown else columns:
                value = cells[k]
                if value and value != "parent":
                    samples.append(name + labels + (_cell(value) or "") + "\n")
            i += 1
    return list(fams.values())


def pbs_families(cluster: str, rows: Sequence[Mapping[str, Any]]) -> list[Family]:
    """Per-entity gauges from :func:`tui.formats.pbsfs.pbs_rows` (labels: cluster, entity,
    parent, depth). TREEROOT's shares (-1) and a usage_per_perc of -1 (percentage 0) are
    pbsfs' markers, not values: left out."""
    fams = {key: Family(name, text) for key, (name, text) in PBS_METRICS.items()}
    depth: dict[str, int] = {}
    for row in rows:  # pre-order: a parent's depth is known first
        depth[row["name"]] = depth[row["parent"]] + 1 if row["parent"] else 0
        labels = label_set({"cluster": cluster, "entity": row["name"], "parent": row["parent"],
                            "depth": depth[row["name"]]})
        for key, fam in fams.items():
            value = row[key]
            if key in ("shares", "usage_per_perc") and value == -1:
                continue
            fam.add(labels, str(value) if isinstance(value, (int, np.integer)) else number(float(value)))
    return list(fams.values())
