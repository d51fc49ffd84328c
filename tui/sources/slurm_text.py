"""Parsers for saved Slurm command output (22.05 formats): strict, header-driven, clear errors.

One function per command, each taking the raw bytes (or text) and a ``source`` name used in
error messages. Anything that does not look like the command's output is an
:class:`~tui.sources.errors.InputError` naming the file and, where known, the line; no other
exception escapes (the tests fuzz every parser to hold that).

========================================  ===============================================
command                                   parser
========================================  ===============================================
``scontrol show config``                  :func:`parse_config` -> :class:`SlurmConfig`
``scontrol show partition``               :func:`parse_partitions` -> ``list[Partition]``
``sacctmgr -P show assoc format=...``     :func:`parse_sacctmgr_assoc` -> ``list[AssocRecord]``
``scontrol show assoc_mgr flags=assoc``   :func:`parse_assoc_mgr` -> ``list[AssocMgrRecord]``
``sprio -l``                              :func:`parse_sprio` -> ``list[SprioRow]``
``squeue`` (default, or ``-O ...:|``)     :func:`parse_squeue` -> ``list[Job]``
========================================  ===============================================
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from tui.model import UNLIMITED, Job, NodeType, Partition, PrioritySettings
from tui.sources.errors import InputError
from tui.sources.slurm_units import parse_slurm_time, parse_tres_billing_weights
from tui.sources.sshare import decode

__all__ = [
    "SlurmConfig",
    "AssocRecord",
    "AssocMgrRecord",
    "SprioRow",
    "parse_config",
    "parse_partitions",
    "parse_nodes",
    "parse_slurm_conf_nodes",
    "parse_gres_gpus",
    "attach_node_types",
    "parse_sacctmgr_assoc",
    "parse_assoc_mgr",
    "parse_sprio",
    "parse_squeue",
    "parse_tres_counts",
    "SQUEUE_FIELDS",
]

#: ``squeue -O`` fields fairtop asks for live; ``:|`` = no width limit, ``|`` after each cell.
#: Reason onwards say why a pending job waits (:mod:`tui.analysis.jobs`). Slurm 22.05 and 26.05
#: print them alike (``src/squeue/print.c``): Reason is the controller's description when it set
#: one (``ReqNodeNotAvail, UnavailableNodes:n1``), else the reason code; SchedNodes and Dependency
#: ``(null)`` when none; ReqNodes empty when none; StartTime and EligibleTime ``N/A`` when unset (a
#: pending job's StartTime is the scheduler's estimate: backfill's, or its begin time).
SQUEUE_FIELDS = ("JobID", "Partition", "UserName", "Account", "State", "TimeLimit", "SubmitTime",
                 "StartTime", "PriorityLong", "tres-alloc", "Reason", "SchedNodes", "Dependency", "ReqNodes",
                 "Nice", "QOS", "EligibleTime")

_INT = re.compile(r"[0-9]+")
_NUM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NULL = ("", "(null)", "N/A", "None", "none")
_NULLS = frozenset(_NULL)
#: Largest integer any of these fields can hold in Slurm (uint64); bigger is not Slurm output.
_MAX_INT = (1 << 64) - 1
#: Memory-like TRES are counted in MB (``slurmdb_get_tres_base_unit``); suffixes scale by 1024.
_MB_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_COUNT_UNITS = {"K": 1024.0, "M": 1024.0**2, "G": 1024.0**3, "T": 1024.0**4, "P": 1024.0**5}


def _int(cell: str, what: str, source: str, line: int | None) -> int:
    """An unsigned decimal integer (ASCII digits only: ``int`` would also take ``'٣'`` or ``'1_0'``)."""
    s = cell.strip()
    if not _INT.fullmatch(s) or len(s) > 20 or int(s) > _MAX_INT:
        raise InputError(source, f"{what} must be a whole number, got {cell!r}", line)
    return int(s)


def _float(cell: str, what: str, source: str, line: int | None) -> float:
    s = cell.strip()
    if not _NUM.fullmatch(s) or len(s) > 64:
        raise InputError(source, f"{what} must be a number, got {cell!r}", line)
    value = float(s)
    if value in (float("inf"), float("-inf")):
        raise InputError(source, f"{what} is out of range: {cell!r}", line)
    return value


def _duration(cell: str, what: str, source: str, line: int | None, infinite: int = 0) -> int:
    """Seconds of a Slurm time string (``7-00:00:00``, ``00:01:00``); ``infinite`` for UNLIMITED."""
    s = cell.strip()
    if len(s) > 40:
        raise InputError(source, f"{what} is not a Slurm time: {cell!r}", line)
    try:
        secs = parse_slurm_time(s)
    except ValueError:
        raise InputError(source, f"{what} is not a Slurm time: {cell!r}", line) from None
    return infinite if secs is None else secs


def parse_tres_counts(text: str, source: str = "TRES", line: int | None = None) -> dict[str, float]:
    """``cpu=16,mem=1G,node=1,gres/gpu=2`` -> ``{"cpu": 16.0, "mem": 1024.0, ...}`` (mem in MB).

    Parameters
    ----------
    text : str
        A TRES string as ``scontrol``/``squeue`` print it; empty or ``(null)``/``N/A`` gives {}.
    source, line
        Where it came from, for errors.

    Raises
    ------
    InputError
        An item without ``=``, or a value that is not a number with an optional K/M/G/T/P.
    """
    out: dict[str, float] = {}
    if text.strip() in _NULL:
        return out
    for item in text.split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip().lower()
        value = value.strip()
        if not sep or not name or not value:
            raise InputError(source, f"TRES item {item!r} is not NAME=COUNT", line)
        unit = value[-1].upper() if value[-1].isalpha() else ""
        number = value[:-1] if unit else value
        kind = name.split("/", 1)[0]
        scale = (_MB_UNITS if kind in ("mem", "bb") else _COUNT_UNITS) if unit else {"": 1.0}
        if unit not in scale and unit:
            raise InputError(source, f"TRES item {item!r}: unknown unit {unit!r}", line)
        out[name] = _float(number, f"TRES {name}", source, line) * scale[unit]
    return out


# --------------------------------------------------------------------------------------------
# scontrol show config
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlurmConfig:
    """``scontrol show config``: the priority settings plus every ``Key = value`` as printed."""

    settings: PrioritySettings
    cluster: str
    """ClusterName ("" if not printed)."""
    values: dict[str, str]
    """Every key of the first (slurm.conf) section, value text as printed."""
    warnings: tuple[str, ...] = ()
    """E.g. PriorityType is not priority/multifactor (fairshare then plays no part)."""


_CONFIG_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?)\s*=\s?(.*)")
_CONFIG_OTHER = re.compile(
    r"Configuration data as of .*|Slurmctld\(.*\) at .* is (UP|DOWN).*|[A-Za-z][A-Za-z0-9 /()_-]*:\s*"
    r"|[A-Za-z0-9_ ]+ Configuration.*|Cgroup Support Configuration:.*"
)

_FLAG_NAMES = ("ACCRUE_ALWAYS", "MAX_TRES_GRES", "MAX_TRES", "SMALL_RELATIVE_TO_TIME", "DEPTH_OBLIVIOUS",
               "CALCULATE_RUNNING", "NO_FAIR_TREE", "INCR_ONLY", "NO_NORMAL_ASSOC", "NO_NORMAL_PART",
               "NO_NORMAL_QOS", "NO_NORMAL_TRES", "NO_NORMAL_ALL", "FAIR_TREE")


def _flags(text: str, source: str, line: int | None) -> frozenset[str]:
    """PriorityFlags as scontrol prints them (comma list, upper case); unknown names are an error."""
    if text.strip() in _NULL:
        return frozenset()
    out = set()
    for item in text.split(","):
        name = item.strip().upper()
        if not name:
            continue
        if name not in _FLAG_NAMES:
            raise InputError(source, f"unknown PriorityFlags entry {item.strip()!r}", line)
        out.add(name)
    return frozenset(out)


def parse_config(data: bytes | str, source: str = "scontrol show config") -> SlurmConfig:
    """Parse ``scontrol show config`` into :class:`SlurmConfig`.

    Only the first section (slurm.conf) is read; later sections (cgroup.conf, MPI plugins,
    ...) repeat key names with other meanings.

    Raises
    ------
    InputError
        No ``PriorityType`` key (not scontrol output), an unreadable line, a bad number, time or
        flag in one of the priority keys.
    """
    text = decode(data, source)
    values: dict[str, str] = {}
    lines_of: dict[str, int] = {}
    seen_key = False
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            if seen_key:
                break  # the slurm.conf section ends at the first blank line after it
            continue
        m = _CONFIG_LINE.fullmatch(line)
        if m:
            key, value = m.group(1), m.group(2).strip()
            values.setdefault(key, value)
            lines_of.setdefault(key, no)
            seen_key = True
            continue
        if _CONFIG_OTHER.fullmatch(line):
            continue
        raise InputError(source, f"not 'Key = value' (scontrol show config): {line[:60]!r}", no)
    if "PriorityType" not in values:
        raise InputError(source, "not scontrol show config output: no PriorityType")

    def get(key: str) -> tuple[str, int | None] | None:
        return (values[key], lines_of[key]) if key in values else None

    kw: dict[str, object] = {}
    warnings: list[str] = []
    if values["PriorityType"] != "priority/multifactor":
        warnings.append(f"PriorityType is {values['PriorityType']}: fairshare does not affect priority here")
    if (v := get("PriorityFlags")) is not None:
        flags = _flags(v[0], source, v[1])
        kw["flags"] = flags - {"FAIR_TREE"}
        kw["algorithm"] = "classic" if flags & {"NO_FAIR_TREE", "DEPTH_OBLIVIOUS"} else "fair_tree"
    for key, name in (("PriorityDecayHalfLife", "decay_half_life_s"), ("PriorityCalcPeriod", "calc_period_s"),
                      ("PriorityMaxAge", "max_age_s")):
        if (v := get(key)) is not None:
            kw[name] = _duration(v[0], key, source, v[1])
    if (v := get("FairShareDampeningFactor")) is not None:
        kw["dampening"] = _int(v[0], "FairShareDampeningFactor", source, v[1])
        if kw["dampening"] == 0:
            raise InputError(source, "FairShareDampeningFactor must be >= 1", v[1])
    if (v := get("PriorityUsageResetPeriod")) is not None:
        kw["usage_reset_period"] = v[0] or "NONE"
    if (v := get("AccountingStorageEnforce")) is not None:
        kw["accounting_enforce"] = frozenset(f.strip().lower() for f in v[0].split(",")
                                             if f.strip() and f.strip().lower() not in ("none", "(null)"))
    if (v := get("PriorityFavorSmall")) is not None:
        if v[0].lower() not in ("yes", "no"):
            raise InputError(source, f"PriorityFavorSmall must be Yes or No, got {v[0]!r}", v[1])
        kw["favor_small"] = v[0].lower() == "yes"
    for suffix in ("Age", "Assoc", "FairShare", "JobSize", "Partition", "QOS"):
        if (v := get("PriorityWeight" + suffix)) is not None:
            kw["weight_" + suffix.lower()] = _int(v[0], "PriorityWeight" + suffix, source, v[1])
    if (v := get("PriorityWeightTRES")) is not None and v[0] not in _NULL:
        try:
            kw["weight_tres"] = parse_tres_billing_weights(v[0])
        except ValueError as exc:
            raise InputError(source, f"PriorityWeightTRES: {exc}", v[1]) from None
    settings = PrioritySettings(**kw)  # type: ignore[arg-type]
    return SlurmConfig(settings, values.get("ClusterName", ""), values, tuple(warnings))


# --------------------------------------------------------------------------------------------
# scontrol show partition
# --------------------------------------------------------------------------------------------


def _key_values(text: str, source: str, first_key: str) -> list[tuple[int, dict[str, str]]]:
    """Blocks of ``Key=value`` tokens (``scontrol show`` layout), each starting with ``first_key``."""
    blocks: list[tuple[int, dict[str, str]]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("No ") and not blocks:  # "No partitions in the system"
            continue
        for token in line.split():
            key, sep, value = token.partition("=")
            if not sep or not key:
                raise InputError(source, f"expected Key=value, got {token[:60]!r}", no)
            if key == first_key:
                blocks.append((no, {}))
            elif not blocks:
                raise InputError(source, f"expected {first_key}= first, got {key[:40]!r}", no)
            blocks[-1][1].setdefault(key, value)
    return blocks


def parse_partitions(data: bytes | str, source: str = "scontrol show partition") -> list[Partition]:
    """Parse ``scontrol show partition`` into :class:`~tui.model.Partition` objects.

    Raises
    ------
    InputError
        A token that is not ``Key=value``, a block not starting with ``PartitionName=``, a bad
        number or TRESBillingWeights.
    """
    text = decode(data, source)
    out = []
    for no, kv in _key_values(text, source, "PartitionName"):
        name = kv["PartitionName"]
        if not name:
            raise InputError(source, "empty PartitionName", no)
        try:
            weights = parse_tres_billing_weights(kv.get("TRESBillingWeights", "") if
                                                  kv.get("TRESBillingWeights", "") not in _NULL else "")
        except ValueError as exc:
            raise InputError(source, f"partition {name}: TRESBillingWeights: {exc}", no) from None
        out.append(Partition(
            name=name,
            billing_weights=weights,
            total_cpus=_int(kv.get("TotalCPUs", "0"), "TotalCPUs", source, no),
            total_nodes=_int(kv.get("TotalNodes", "0"), "TotalNodes", source, no),
            priority_job_factor=_int(kv.get("PriorityJobFactor", "1"), "PriorityJobFactor", source, no),
            tres_totals=parse_tres_counts(kv.get("TRES", ""), source, no),
            max_time_s=_limit_time(kv.get("MaxTime"), name, source, no),
            max_nodes=_limit_count(kv.get("MaxNodes"), "MaxNodes", source, no),
            node_list="" if kv.get("Nodes", "") in _NULL else kv["Nodes"],
        ))
    return out


def _limit_time(text: str | None, part: str, source: str, no: int) -> int | None:
    """MaxTime: seconds, :data:`UNLIMITED`, or None when the line does not give it."""
    if text is None:
        return None
    try:
        secs = parse_slurm_time(text)
    except ValueError:
        raise InputError(source, f"partition {part}: MaxTime {text!r} is not a Slurm time", no) from None
    return UNLIMITED if secs is None else secs


def _limit_count(text: str | None, what: str, source: str, no: int) -> int | None:
    if text is None:
        return None
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return UNLIMITED
    return _int(text, what, source, no)


def parse_gres_gpus(text: str) -> tuple[int, str]:
    """GPUs and their type from a node's ``Gres=`` (``gpu:a100:4(S:0-1)``, ``gpu:2,mps:100``).

    Returns ``(count, type)``; several typed GPU entries give their sum and the first type.
    """
    count, kind = 0, ""
    for item in re.split(r",(?![^(]*\))", text or ""):
        fields = item.split("(", 1)[0].split(":")
        if fields[0].strip().lower() != "gpu" or len(fields) < 2:
            continue
        try:
            n = int(fields[-1])
        except ValueError:
            continue
        count += n
        if len(fields) == 3 and not kind:
            kind = fields[1].lower()
    return count, kind


_NODE_KEY = re.compile(r"(?<!\S)(NodeName|CPUTot|CPUEfctv|RealMemory|Gres)=(\S*)")


def parse_nodes(data: bytes | str, source: str = "scontrol show node") -> dict[str, NodeType]:
    """``scontrol show node``: each node's shape, by node name.

    CPUs are ``CPUEfctv`` (23.02+: without the cores kept for the system) else ``CPUTot``; memory
    ``RealMemory`` (MB); GPUs from ``Gres``. Only these keys are read: other fields hold free text
    with spaces (``OS=Linux 6.1.0 #1 SMP ...``, ``Reason=...``).
    """
    text = decode(data, source)
    out: dict[str, NodeType] = {}
    block: dict[str, str] = {}
    first = 0

    def flush() -> None:
        if not block:
            return
        gpus, kind = parse_gres_gpus(block.get("Gres", ""))
        cpus = block.get("CPUEfctv", block.get("CPUTot", "0"))
        out[block["NodeName"]] = NodeType(_int(cpus, "CPUTot", source, first),
                                          float(_int(block.get("RealMemory", "0"), "RealMemory", source, first)),
                                          gpus, kind)

    for no, line in enumerate(text.splitlines(), 1):
        for key, value in _NODE_KEY.findall(line):
            if key == "NodeName":
                flush()
                block, first = {"NodeName": value}, no
            elif block:
                block.setdefault(key, value)
    flush()
    return out


def attach_node_types(parts: list[Partition], nodes: dict[str, NodeType]) -> list[Partition]:
    """Give each partition its nodes grouped by shape, from its ``Nodes=`` host list (``ALL``:
    every node). A partition whose list names a node not in ``nodes`` keeps no node types
    (its checks then say "unknown" rather than judge from part of the partition)."""
    out = []
    for p in parts:
        try:
            names = list(nodes) if p.node_list.upper() == "ALL" else expand_hostlist(p.node_list)
        except ValueError:
            names = []
        if not names or any(n not in nodes for n in names):
            out.append(p)
            continue
        groups: dict[tuple[int, float, int, str], int] = {}
        for n in names:
            t = nodes[n]
            key = (t.cpus, t.mem_mb, t.gpus, t.gpu_type)
            groups[key] = groups.get(key, 0) + 1
        types = tuple(NodeType(c, m, g, k, count) for (c, m, g, k), count in groups.items())
        out.append(dataclasses.replace(p, node_types=types))
    return out


def expand_hostlist(text: str) -> list[str]:
    """Slurm host names: ``node[01-03,7],gpu1`` -> node01 node02 node03 node7 gpu1 (one bracket)."""
    out: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        m = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", part)
        if not m:
            out.append(part)
            continue
        head, body, tail = m.groups()
        for item in body.split(","):
            lo, _, hi = item.partition("-")
            if not hi:
                out.append(f"{head}{lo}{tail}")
                continue
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise ValueError(f"bad host range {item!r}")
            out.extend(f"{head}{str(k).zfill(len(lo))}{tail}" for k in range(int(lo), int(hi) + 1))
    return out


def parse_slurm_conf_nodes(data: bytes | str, source: str = "slurm.conf") -> dict[str, NodeType]:
    """Each node's shape from ``slurm.conf``'s ``NodeName`` lines (``NodeName=DEFAULT`` applies to
    the lines after it; Slurm's defaults are CPUs=1, RealMemory=1 MB)."""
    text = decode(data, source)
    shapes: dict[str, NodeType] = {}
    defaults: dict[str, str] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("NodeName="):
            continue
        kv = dict(token.partition("=")[::2] for token in line.split())
        if kv["NodeName"] == "DEFAULT":
            defaults.update({k: v for k, v in kv.items() if k != "NodeName"})
            continue
        nk = {**defaults, **kv}
        gpus, kind = parse_gres_gpus(nk.get("Gres", ""))
        shape = NodeType(_int(nk.get("CPUs", "1"), "CPUs", source, no),
                         float(_int(nk.get("RealMemory", "1"), "RealMemory", source, no)), gpus, kind)
        try:
            for name in expand_hostlist(kv["NodeName"]):
                shapes[name] = shape
        except ValueError as exc:
            raise InputError(source, str(exc), no) from None
    return shapes


def parse_slurm_conf_partitions(data: bytes | str, source: str = "slurm.conf") -> list[Partition]:
    """Partitions as ``slurm.conf`` defines them, when ``scontrol show partition`` was not saved.

    ``PartitionName=DEFAULT`` lines set defaults for the lines after them; ``Nodes=ALL`` (or a
    host list) is counted against the ``NodeName`` lines' ``CPUs`` for TotalCPUs/TotalNodes.
    Other ``slurm.conf`` lines are ignored. Raises :class:`InputError` for a bad host list or
    TRESBillingWeights.
    """
    text = decode(data, source)
    shapes = parse_slurm_conf_nodes(text, source)
    defaults: dict[str, str] = {}
    parts: list[tuple[int, dict[str, str]]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line.startswith(("NodeName=", "PartitionName=")):
            continue
        kv = dict(token.partition("=")[::2] for token in line.split())
        try:
            if "NodeName" in kv:
                continue
            if kv.get("PartitionName") == "DEFAULT":
                defaults.update({k: v for k, v in kv.items() if k != "PartitionName"})
            elif "PartitionName" in kv:
                parts.append((no, {**defaults, **kv}))
        except ValueError as exc:
            raise InputError(source, str(exc), no) from None
    blocks = []
    for no, kv in parts:
        spec = kv.get("Nodes", "")
        try:
            names = list(shapes) if spec.upper() == "ALL" else expand_hostlist(spec) if spec else []
        except ValueError as exc:
            raise InputError(source, str(exc), no) from None
        cpus = sum(shapes[n].cpus if n in shapes else 0 for n in names)
        blocks.append(" ".join([f"PartitionName={kv['PartitionName']}", f"TotalCPUs={cpus}",
                                f"TotalNodes={len(names)}"]
                               + [f"{k}={kv[k]}" for k in ("TRESBillingWeights", "PriorityJobFactor") if k in kv]
                               + [f"Nodes={','.join(names)}" if names else ""]
                               # slurm.conf's defaults: MaxTime and MaxNodes are UNLIMITED unless set
                               + [f"{k}={kv.get(k, 'UNLIMITED')}" for k in ("MaxTime", "MaxNodes")]))
    return attach_node_types(parse_partitions("\n".join(blocks), source), shapes)


# --------------------------------------------------------------------------------------------
# sacctmgr -P show assoc
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssocRecord:
    """One association as slurmdbd stores it (``sacctmgr -P show assoc``)."""

    account: str
    user: str
    partition: str
    parent_name: str
    """Parent account of an account association ("" for root and for user rows)."""
    lft: int
    """Nested-set left value: Slurm's children_list order after a slurmctld start."""
    shares: str
    """Share as printed (``1``, ``parent``); "" when the column is absent."""
    grp_tres_mins: dict[str, float] = field(default_factory=dict)
    line: int = 0


def _psv(text: str, source: str, required: tuple[str, ...], what: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and rows of ``-P`` (or ``-p``) output; checks the header and every field count."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        raise InputError(source, f"empty: no {what} header")
    header = lines[start].split("|")
    trailing = len(header) > 1 and header[-1] == ""
    if trailing:
        header = header[:-1]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(source, f"not {what} output: no column {', '.join(missing)} in the header", start + 1)
    rows = []
    for i in range(start + 1, len(lines)):
        if not lines[i].strip():
            continue
        fields = lines[i].split("|")
        if trailing:
            if fields[-1] != "":
                raise InputError(source, "expected a '|' after the last field", i + 1)
            fields = fields[:-1]
        if len(fields) != len(header):
            raise InputError(source, f"expected {len(header)} fields as in the header, got {len(fields)}", i + 1)
        rows.append((i + 1, fields))
    return header, rows


def parse_sacctmgr_assoc(data: bytes | str, source: str = "sacctmgr show assoc") -> list[AssocRecord]:
    """Parse ``sacctmgr -P show assoc format=...`` *with* its header (Account, User, LFT needed).

    Raises
    ------
    InputError
        No header with Account, User and LFT (e.g. the ``-n`` capture), a wrong field count, a
        non-numeric LFT, a LFT used twice.
    """
    text = decode(data, source)
    header, rows = _psv(text, source, ("Account", "User", "LFT"), "sacctmgr -P show assoc (with LFT)")
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    out = []
    seen: dict[int, int] = {}
    for no, f in rows:
        lft = _int(f[col["LFT"]], "LFT", source, no)
        if lft in seen:
            raise InputError(source, f"LFT {lft} also on line {seen[lft]}", no)
        seen[lft] = no
        if not f[col["Account"]]:
            raise InputError(source, "empty Account", no)

        def opt(name: str, f: list[str] = f) -> str:
            return f[col[name]] if name in col else ""

        out.append(AssocRecord(
            account=f[col["Account"]], user=f[col["User"]], partition=opt("Partition"),
            parent_name=opt("ParentName"), lft=lft, shares=opt("Share"),
            grp_tres_mins=parse_tres_counts(opt("GrpTRESMins"), source, no), line=no,
        ))
    return out


# --------------------------------------------------------------------------------------------
# scontrol show assoc_mgr flags=assoc
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssocMgrRecord:
    """One association as slurmctld holds it (``scontrol show assoc_mgr flags=assoc``)."""

    account: str
    user: str
    """User name without the ``(uid)`` suffix; "" for an account."""
    partition: str
    assoc_id: int
    usage_raw: str
    """UsageRaw as printed (``%.2Lf``): more precise than sshare's truncated RawUsage."""
    lft: int | None
    line: int = 0
    grp_tres_mins: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    """GrpTRESMins per TRES: (limit or None for ``N``, used minutes), e.g. ``billing=200000(183315)``."""
    grp_tres_run_mins: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    """GrpTRESRunMins: (limit, minutes committed by running jobs)."""
    grp_tres: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    """GrpTRES: (limit, TRES held by running jobs)."""
    counts: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    """Job-count limits (:data:`COUNT_LIMITS`) that are printed: (limit or None, jobs counted)."""


#: assoc_mgr's job-count limits, printed ``LIMIT(USED)`` (``N`` = none; blank for a Max* not set).
COUNT_LIMITS = ("GrpJobs", "GrpJobsAccrue", "GrpSubmitJobs", "MaxJobs", "MaxJobsAccrue", "MaxSubmitJobs")
_COUNT = re.compile(r"(N|[0-9]+)\(([0-9]+)\)")


_USER_UID = re.compile(r"(.*)\([0-9]+\)")
_LIMIT_USED = re.compile(r"([^=,]+)=(N|[0-9]+)\(([0-9]+)\)")


def parse_limit_usage(text: str, what: str, source: str, line: int | None) -> dict[str, tuple[int | None, int]]:
    """assoc_mgr's ``tres=LIMIT(USED),...`` (``N`` = no limit) -> {tres: (limit or None, used)}."""
    out: dict[str, tuple[int | None, int]] = {}
    for item in filter(None, text.split(",")):
        m = _LIMIT_USED.fullmatch(item)
        if not m:
            raise InputError(source, f"{what}: expected TRES=LIMIT(USED), got {item[:40]!r}", line)
        out[m.group(1).lower()] = (None if m.group(2) == "N" else int(m.group(2)), int(m.group(3)))
    return out


def _counts(kv: dict[str, str], source: str, line: int) -> dict[str, tuple[int | None, int]]:
    out: dict[str, tuple[int | None, int]] = {}
    for name in COUNT_LIMITS:
        cell = kv.get(name, "")
        if not cell:
            continue
        m = _COUNT.fullmatch(cell)
        if not m:
            raise InputError(source, f"{name}: expected LIMIT(USED), got {cell[:40]!r}", line)
        out[name] = (None if m.group(1) == "N" else int(m.group(1)), int(m.group(2)))
    return out


def parse_assoc_mgr(data: bytes | str, source: str = "scontrol show assoc_mgr") -> list[AssocMgrRecord]:
    """Parse the association records of ``scontrol show assoc_mgr flags=assoc``.

    Each record starts with ``ClusterName=`` and has ``Account``, ``UserName``, ``ID`` and a
    ``UsageRaw/Norm/Efctv=`` line; ``Lft`` is read when present. Other sections (users, QOS)
    end the association part.

    Raises
    ------
    InputError
        No association record, a record without its keys, a bad number.
    """
    text = decode(data, source)
    blocks: list[tuple[int, dict[str, str]]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line in ("Current Association Manager state", "Association Records"):
            continue
        if line.endswith("Records") or line.startswith("No "):
            if blocks:
                break  # "User Records", "QOS Records": not associations
            continue
        for token in line.split():
            key, sep, value = token.partition("=")
            if not sep:
                continue  # e.g. "Lft=1 DefAssoc=No" is fine; stray words carry nothing we read
            if key == "ClusterName":
                blocks.append((no, {}))
            elif not blocks:
                raise InputError(source, f"expected ClusterName= first, got {token[:40]!r}", no)
            blocks[-1][1].setdefault(key, value)
    if not blocks:
        raise InputError(source, "not scontrol show assoc_mgr output: no association records")
    out = []
    for no, kv in blocks:
        for key in ("Account", "UserName", "ID", "UsageRaw/Norm/Efctv"):
            if key not in kv:
                raise InputError(source, f"association record without {key}", no)
        user = kv["UserName"]
        m = _USER_UID.fullmatch(user)
        usage = kv["UsageRaw/Norm/Efctv"].split("/")[0]
        if _float(usage, "UsageRaw", source, no) < 0:
            raise InputError(source, f"UsageRaw must be >= 0, got {usage!r}", no)
        out.append(AssocMgrRecord(
            account=kv["Account"], user=m.group(1) if m else user, partition=kv.get("Partition", ""),
            assoc_id=_int(kv["ID"], "ID", source, no), usage_raw=usage.strip(),
            lft=_int(kv["Lft"], "Lft", source, no) if "Lft" in kv else None, line=no,
            grp_tres_mins=parse_limit_usage(kv.get("GrpTRESMins", ""), "GrpTRESMins", source, no),
            grp_tres_run_mins=parse_limit_usage(kv.get("GrpTRESRunMins", ""), "GrpTRESRunMins", source, no),
            grp_tres=parse_limit_usage(kv.get("GrpTRES", ""), "GrpTRES", source, no),
            counts=_counts(kv, source, no),
        ))
    return out


# --------------------------------------------------------------------------------------------
# sprio -l
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SprioRow:
    """One ``sprio`` line: a pending job in one partition and its weighted priority parts."""

    job_id: str
    partition: str
    user: str
    priority: float | None
    factors: dict[str, float]
    """Weighted parts by header name (``AGE``, ``FAIRSHARE``, ``PARTITION``, ``SITE``, ...)."""
    tres: dict[str, float]
    line: int = 0


_SPRIO_NUMERIC = ("PRIORITY", "SITE", "AGE", "ASSOC", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS", "NICE")


def parse_sprio(data: bytes | str, source: str = "sprio -l") -> list[SprioRow]:
    """Parse ``sprio`` / ``sprio -l`` (fixed-width) output by its header.

    Cells never contain spaces, so a row splits on whitespace; only the last column, TRES,
    may be empty. The first ``PARTITION`` column is the partition name, a second one the
    partition factor. ``sprio -n`` (normalized, floats) parses too.

    Raises
    ------
    InputError
        No ``JOBID`` header, a row with a different number of cells, a non-numeric factor.
    """
    text = decode(data, source)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        return []  # sprio prints a header even when empty, but an empty capture means "no jobs"
    header = lines[start].split()
    if not header or header[0] != "JOBID":
        raise InputError(source, "not sprio output: the header must start with JOBID", start + 1)
    names: list[str] = []
    for h in header:
        names.append("PARTITION_NAME" if h == "PARTITION" and "PARTITION_NAME" not in names else h)
    out = []
    for i in range(start + 1, len(lines)):
        cells = lines[i].split()
        if not cells:
            continue
        no = i + 1
        if len(cells) == len(names) - 1 and names[-1] == "TRES":
            cells.append("")
        if len(cells) != len(names):
            raise InputError(source, f"expected {len(names)} columns as in the header, got {len(cells)}", no)
        row = dict(zip(names, cells))
        factors = {n: _float(row[n], n, source, no) for n in names if n in _SPRIO_NUMERIC and n != "PRIORITY"}
        tres: dict[str, float] = {}
        if row.get("TRES"):
            tres = parse_tres_counts(row["TRES"], source, no)
        out.append(SprioRow(
            job_id=row["JOBID"], partition=row.get("PARTITION_NAME", ""), user=row.get("USER", ""),
            priority=_float(row["PRIORITY"], "PRIORITY", source, no) if "PRIORITY" in row else None,
            factors=factors, tres=tres, line=no,
        ))
    return out


# --------------------------------------------------------------------------------------------
# squeue
# --------------------------------------------------------------------------------------------

_STATES = {"PD": "PENDING", "R": "RUNNING", "CG": "COMPLETING", "CD": "COMPLETED", "CF": "CONFIGURING",
           "CA": "CANCELLED", "F": "FAILED", "TO": "TIMEOUT", "PR": "PREEMPTED", "NF": "NODE_FAIL",
           "S": "SUSPENDED", "ST": "STOPPED", "RQ": "REQUEUED", "RH": "REQUEUE_HOLD", "RS": "RESIZING",
           "RF": "REQUEUE_FED", "RD": "RESV_DEL_HOLD", "RV": "REVOKED", "SE": "SPECIAL_EXIT",
           "SI": "SIGNALING", "SO": "STAGE_OUT", "BF": "BOOT_FAIL", "DL": "DEADLINE", "OOM": "OUT_OF_MEMORY"}


_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")


def _time(cell: str, what: str, source: str, line: int, tz: tzinfo | None = None) -> datetime | None:
    """An ISO time as squeue prints it (wall-clock time in ``tz``, default this machine's zone);
    N/A/Unknown/None -> None."""
    s = cell.strip()
    if s in _NULL or s in ("Unknown", "NONE"):
        return None
    try:
        if not _ISO.fullmatch(s):
            raise ValueError
        wall = datetime.fromisoformat(s)
        return wall.replace(tzinfo=tz) if tz is not None else wall.astimezone()
    except (ValueError, OverflowError, OSError):
        raise InputError(source, f"{what} is not a time: {cell!r}", line) from None


def _time_limit(cell: str, source: str, line: int) -> int:
    s = cell.strip()
    if s in _NULL or s.upper() in ("UNLIMITED", "INFINITE", "NOT_SET"):
        return 0
    return _duration(s, "TIME_LIMIT", source, line)


def _state(cell: str, source: str, line: int) -> str:
    s = cell.strip().upper()
    if s in _STATES:
        return _STATES[s]
    if s in _STATES.values():
        return s
    raise InputError(source, f"unknown job state {cell!r}", line)


def _fixed_width(header_line: str, line: str) -> list[str]:
    """Cells of a default ``squeue`` line: every column but the last is right-justified and cut
    to its width, so a column ends where its header word ends; the last runs to the line's end."""
    ends = [m.end() for m in re.finditer(r"\S+", header_line)]
    cells, begin = [], 0
    for end in ends[:-1]:
        cells.append(line[begin:end].strip())
        begin = end
    cells.append(line[begin:].strip())
    return cells


def parse_squeue(data: bytes | str, source: str = "squeue", tz: tzinfo | None = None) -> list[Job]:
    """Parse ``squeue`` output: the default layout (``squeue -a``) or ``|``-separated ``-o``/``-O``.
    Its times are wall-clock times in ``tz`` (default: this machine's zone, where squeue ran).

    The ``|`` form (see :data:`SQUEUE_FIELDS`) gives account, times, priority and TRES; the
    default layout only job, partition, user, state and node count (account unknown: "").

    Raises
    ------
    InputError
        No ``JOBID`` and ``USER`` and ``ST``/``STATE`` header, a wrong field count, an unknown
        state, a bad number or time.
    """
    text = decode(data, source)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        return []
    head = lines[start]
    pipe = "|" in head
    if pipe:
        names, rows = _psv(text, source, ("JOBID", "USER"), "squeue -o")
        names = [n.strip() for n in names]
    else:
        names = head.split()
        rows = [(i + 1, _fixed_width(head, lines[i])) for i in range(start + 1, len(lines)) if lines[i].strip()]
    if "JOBID" not in names or "USER" not in names:
        raise InputError(source, "not squeue output: no JOBID and USER columns", start + 1)
    state_col = "STATE" if "STATE" in names else "ST" if "ST" in names else None
    if state_col is None:
        raise InputError(source, "not squeue output: no ST or STATE column", start + 1)
    return _squeue_jobs(names, rows, state_col, source, tz)


def _squeue_jobs(names: list[str], rows: list[tuple[int, list[str]]], state_col: str, source: str,
                 tz: tzinfo | None = None) -> list[Job]:
    """The jobs of squeue's rows. 100,000 pending jobs repeat their cells (TRES, times, limits,
    states): each distinct cell is converted once, and columns are taken by index."""
    col = {n: i for i, n in enumerate(names)}
    width = len(names)
    missing = width  # a column squeue was not asked for reads as "" (or None where that matters)

    def at(name: str) -> int:
        return col.get(name, missing)

    i_id, i_user, i_state = col["JOBID"], col["USER"], col[state_col]
    i_account, i_part, i_prio, i_limit = at("ACCOUNT"), at("PARTITION"), at("PRIORITY"), at("TIME_LIMIT")
    i_submit, i_start, i_eligible = at("SUBMIT_TIME"), at("START_TIME"), at("ELIGIBLE_TIME")
    i_tres = at("TRES_ALLOC") if "TRES_ALLOC" in col else at("TRES")
    i_cpus, i_nodes, i_listed = at("CPUS"), at("NODES"), at("NODELIST(REASON)")
    i_reason, i_nice = at("REASON"), at("NICE")
    i_sched, i_dep, i_req, i_qos = at("SCHEDNODES"), at("DEPENDENCY"), at("REQ_NODES"), at("QOS")
    seen_tres: dict[str, dict[str, float]] = {}
    seen_time: dict[str, datetime | None] = {}
    seen_limit: dict[str, int] = {}
    seen_state: dict[str, str] = {}
    seen_nice: dict[str, int | None] = {}
    jobs = []

    def when(cell: str, what: str, no: int) -> datetime | None:
        got = seen_time.get(cell, _UNSEEN)
        if got is _UNSEEN:
            got = seen_time[cell] = _time(cell, what, source, no, tz)
        return got  # type: ignore[return-value]

    for no, cells in rows:
        if len(cells) != width:
            raise InputError(source, f"expected {width} columns as in the header, got {len(cells)}", no)
        cells.append("")  # the cell of every column not asked
        if not cells[i_id] or not cells[i_user]:
            raise InputError(source, "empty JOBID or USER", no)
        cell = cells[i_tres]
        tres: dict[str, float] = {}
        if cell not in _NULL:
            if cell not in seen_tres:
                seen_tres[cell] = parse_tres_counts(cell, source, no)
            tres = dict(seen_tres[cell])  # each job its own dict
        if not tres:
            for i, key in ((i_cpus, "cpu"), (i_nodes, "node")):
                if cells[i] not in _NULL:
                    tres[key] = float(_int(cells[i], key.upper() + "S", source, no))
        state = seen_state.get(cells[i_state]) or seen_state.setdefault(cells[i_state],
                                                                        _state(cells[i_state], source, no))
        reason: str | None = cells[i_reason].strip() or None if i_reason != missing else None
        listed = cells[i_listed]
        if i_reason == missing and state == "PENDING" and listed.startswith("(") and listed.endswith(")"):
            reason = listed[1:-1]  # the default layout: a pending job's reason in parentheses
        limit = cells[i_limit]
        if limit not in seen_limit:
            seen_limit[limit] = _time_limit(limit, source, no)
        prio, nice = cells[i_prio], cells[i_nice]
        if nice not in seen_nice:
            seen_nice[nice] = None if nice in _NULL else _signed(nice, "NICE", source, no)
        submit, start = cells[i_submit], cells[i_start]
        sched, dep, req, qos = cells[i_sched], cells[i_dep], cells[i_req], cells[i_qos]
        jobs.append(Job(
            job_id=cells[i_id], user=cells[i_user], account=cells[i_account], partition=cells[i_part], state=state,
            tres=tres, time_limit_s=seen_limit[limit],
            submit_time=when(submit, "SUBMIT_TIME", no) if submit else None,
            start_time=when(start, "START_TIME", no) if start else None,
            priority=int(prio) if prio.isdigit() and prio.isascii() and len(prio) < 20 else
            None if prio in _NULL else _int(prio, "PRIORITY", source, no),
            reason=reason, nice=seen_nice[nice],
            eligible_time=when(cells[i_eligible], "ELIGIBLE_TIME", no) if cells[i_eligible] else None,
            sched_nodes=None if sched in _NULLS else sched.strip(), dependency=None if dep in _NULLS else dep.strip(),
            req_nodes=None if req in _NULLS else req.strip(), qos=None if qos in _NULLS else qos.strip(),
        ))
    return jobs


#: ``sacctmgr -P show qos`` fields the usage law needs (QOS UsageFactor and NoDecay).
QOS_FIELDS = ("Name", "UsageFactor", "Flags")


def parse_qos_usage(data: bytes | str, source: str = "sacctmgr -P show qos") -> tuple[dict[str, float], frozenset[str]]:
    """``sacctmgr -P show qos format=Name,UsageFactor,Flags`` -> (QOS -> UsageFactor, NoDecay QOS).

    Raises
    ------
    InputError
        No Name/UsageFactor header, or a factor that is not a number.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = lines[0].split("|") if lines else []
    if "Name" not in header or "UsageFactor" not in header:
        raise InputError(source, "not 'sacctmgr -P show qos' output with Name and UsageFactor in its header", 1)
    col = {name: i for i, name in enumerate(header)}
    factors: dict[str, float] = {}
    no_decay: set[str] = set()
    for no, line in enumerate(lines[1:], 2):
        cells = line.split("|")
        if len(cells) < len(header):
            raise InputError(source, f"{len(cells)} cells, the header has {len(header)}", no)
        name = cells[col["Name"]].strip()
        raw = cells[col["UsageFactor"]].strip()
        try:
            factors[name] = float(raw) if raw else 1.0
        except ValueError:
            raise InputError(source, f"UsageFactor is not a number: {raw[:40]!r}", no) from None
        if "Flags" in col and "nodecay" in {f.strip().lower() for f in cells[col["Flags"]].split(",")}:
            no_decay.add(name)
    return factors, frozenset(no_decay)


_UNSEEN = object()


def _signed(cell: str, what: str, source: str, line: int) -> int:
    s = cell.strip()
    return -_int(s[1:], what, source, line) if s.startswith("-") else _int(s, what, source, line)
