"""A folder of saved Slurm command outputs -> :class:`~tui.model.Snapshot`.

The folder layout is the one ``shared/slurm-sandbox/capture.sh`` and ``fairtop capture`` write
(same file names; ``FILE.err`` holds a command's stderr when it printed any):

==============================  ==========================================  =========
file                            command                                     needed
==============================  ==========================================  =========
``sshare_a_l_P.psv``            ``sshare -a -l -P``                         yes
``scontrol_show_config.txt``    ``scontrol show config``                    no
``sacctmgr_assoc_hdr.psv``      ``sacctmgr -P show assoc ... format=..LFT``  no
``assoc_mgr.txt``               ``scontrol show assoc_mgr flags=assoc``     no
``scontrol_show_partition.txt`` ``scontrol show partition``                 no
``scontrol_show_node.txt``      ``scontrol show node``                      no
``sprio_l.txt``                 ``sprio -l``                                no
``squeue.txt``                  ``squeue -a`` or ``squeue -O ...:|``        no
``captured_at.txt``             ``date -u``                                 no
``slurm.conf``                  the cluster's ``slurm.conf``                no
``sacctmgr_qos.psv``            ``sacctmgr -P show qos format=Name,...``    no
==============================  ==========================================  =========

Partitions come from ``scontrol show partition``, else from ``slurm.conf`` (with a warning saying
so); their node shapes (for the what-if's per-node checks) from ``scontrol show node``, else the
``NodeName`` lines of ``slurm.conf``, else none (the checks then say "unknown"). Jobs from an
``sprio``/``squeue`` without an account column are attached to the user's association when the
user has only one.

Raw usage comes from ``assoc_mgr.txt`` when it agrees with sshare: sshare prints it truncated to
a whole number, which moves a printed LevelFS by one in the sixth decimal now and then; assoc_mgr
prints two decimals. Sibling order (Fair Tree ties) comes from sacctmgr's LFT, else assoc_mgr's.

Only the sshare file is required: with PrivateData a user may see nothing else, so each other
missing or empty file becomes a line in ``Snapshot.warnings`` instead of an error. A file that is
present but malformed is an :class:`~tui.sources.errors.InputError`.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tui.model import (Algorithm, AssocLimit, AssocTree, Budget, Job, Partition, PrintedColumn, PrioritySettings,
                       PrivateView, Snapshot)
from tui.slurm_releases import release
from tui.sources import slurm_text
from tui.sources.errors import InputError
from tui.sources.partial_sshare import complete, is_partial
from tui.sources.private_data import DBD_CONFIG_FILE, private_data
from tui.sources.sshare import SshareTable, parse_sshare
from tui.sources.zone import saved_zone

if TYPE_CHECKING:  # read only for a caller that serves one user
    from tui.sources.squeue_columns import QueueColumns

__all__ = ["FILES", "Outputs", "algorithm_from_header", "load_folder", "load_table", "sibling_order", "precise_usage",
           "snapshot_from_files", "sshare_table"]

#: File name of each command's output, as capture.sh names them.
FILES = {
    "sshare": "sshare_a_l_P.psv",
    "config": "scontrol_show_config.txt",
    "assoc": "sacctmgr_assoc_hdr.psv",
    "partition": "scontrol_show_partition.txt",
    "node": "scontrol_show_node.txt",
    "assoc_mgr": "assoc_mgr.txt",
    "sprio": "sprio_l.txt",
    "squeue": "squeue.txt",
    "captured_at": "captured_at.txt",
    "slurm_conf": "slurm.conf",
    "view": "fairtop_view.json",
    "dbd_config": DBD_CONFIG_FILE,
    "qos": "sacctmgr_qos.psv",
}


def _folder(path: str | Path) -> Path:
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(str(path), "no such folder" if not folder.exists() else "not a folder")
    return folder


class Outputs:
    """The outputs of one capture, by file name: from a folder or straight from the commands."""

    def __init__(self, where: str, data: dict[str, bytes], errs: Mapping[str, str] | None = None,
                 zone: tzinfo | None = None) -> None:
        self.where = where
        self.data = data
        self.errs = errs or {}
        self.zone = zone
        """The zone squeue and sacct printed their times in (a capture's ``timezone.txt``); None: this machine's."""

    def get(self, key: str, warnings: list[str]) -> tuple[bytes, str] | None:
        """Content and name of an optional output, or None with a warning saying why it is missing."""
        name = FILES[key]
        label = f"{self.where}/{name}" if self.where else name
        data = self.data.get(name)
        why = f" ({self.errs[name][:120]})" if self.errs.get(name) else ""
        if data is None:
            warnings.append(f"no {name}{why}: {_consequence(key)}")
            return None
        if not data.strip():
            # e.g. PrivateData: the command refused and said so on stderr
            warnings.append(f"{name} is empty{why}: {_consequence(key)}")
            return None
        return data, label


def _consequence(key: str) -> str:
    return {
        "config": "priority settings are Slurm's defaults, algorithm from the sshare columns",
        "assoc": "Fair Tree ties between sibling accounts follow the sshare order",
        "partition": "partition billing weights unknown",
        "assoc_mgr": "raw usage as sshare prints it (whole numbers)",
        "sprio": "no priority factors for pending jobs",
        "squeue": "no job list",
        "captured_at": "capture time unknown (the file time is used)",
    }.get(key, "not used")


def _read_folder(folder: Path) -> Outputs:
    data: dict[str, bytes] = {}
    errs: dict[str, str] = {}
    for name in FILES.values():
        path = folder / name
        try:
            data[name] = path.read_bytes()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise InputError(str(path), exc.strerror or str(exc)) from None
        try:
            lines = path.with_name(name + ".err").read_bytes().decode("utf-8", "replace").strip().splitlines()
            if lines:
                errs[name] = lines[0]
        except OSError:
            pass
    return Outputs(str(folder), data, errs, saved_zone(folder))


def load_table(path: str | Path) -> SshareTable:
    """The folder's ``sshare_a_l_P.psv`` parsed (InputError if the folder or the file is missing)."""
    folder = _folder(path)
    file = folder / FILES["sshare"]
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise InputError(str(folder), f"no {FILES['sshare']} (saved 'sshare -a -l -P' output)") from None
    except OSError as exc:
        raise InputError(str(file), exc.strerror or str(exc)) from None
    assoc = folder / FILES["assoc"]
    return sshare_table(data, str(file), assoc.read_bytes() if assoc.is_file() else None)


def sshare_table(data: bytes, source: str, assoc: bytes | None = None) -> SshareTable:
    """``sshare -a -l -P`` output parsed; a PrivateData one (no root row) with the root and the
    accounts above its rows put back from ``assoc`` (sacctmgr) first (:attr:`SshareTable.added`)."""
    if not is_partial(data):
        return parse_sshare(data, source)
    whole = complete(data, assoc)
    return replace(parse_sshare(whole.text, source), added=whole.added)


def sibling_order(table: SshareTable, records: list[slurm_text.AssocRecord],
                  source: str = "sacctmgr") -> tuple[np.ndarray | None, list[str]]:
    """Slurm's children_list key (slurmdbd LFT) for every row of ``table``.

    slurmctld builds each children_list in association-list order, which after a start is
    slurmdbd's ``lft`` order; only Fair Tree ties between siblings depend on it.

    Returns
    -------
    order : int64 array or None
        LFT per tree row; None when some row has no sacctmgr record (then sshare order is used).
    warnings : list of str
        Why the order could not be used, or where the two sources disagree.
    """
    tree = table.tree
    lfts: dict[tuple[str, str, str], deque[int]] = defaultdict(deque)
    parent_of: dict[str, str] = {}
    for rec in records:
        lfts[(rec.account, rec.user, rec.partition)].append(rec.lft)
        if not rec.user:
            parent_of[rec.account] = rec.parent_name
    order = np.empty(tree.size, dtype=np.int64)
    warnings: list[str] = []
    for i in range(tree.size):
        key = (str(tree.account[i]), str(tree.user[i]), table.partitions[i])
        queue = lfts.get(key)
        if not queue:
            warnings.append(f"{source}: no association {tree.label(i)} (sshare line {table.line_numbers[i]}); "
                            "Fair Tree ties between sibling accounts follow the sshare order")
            return None, warnings
        order[i] = queue.popleft()
        if i and not tree.is_user[i]:
            expected = str(tree.account[tree.parent[i]])
            if parent_of.get(key[0]) not in (None, "", expected):
                warnings.append(f"{source}: account {key[0]} has parent {parent_of[key[0]]!r} in sacctmgr but "
                                f"{expected!r} in sshare (captured at different times?)")
    return order, warnings


def lineage_order(table: SshareTable) -> np.ndarray:
    """Slurm 23.11+'s children_list key for every row of ``table``: slurmdbd's ``lineage``
    (``/root/acct/0-user/[partition/]``, as_mysql_assoc.c ``_set_lineage``), by whose ``strcmp``
    slurmctld sorts its association list (``slurmdb_sort_hierarchical_assoc_list``) and so every
    children list. Among siblings: users (``0-NAME/``) before accounts, each in byte order of its
    name. The rank of each row's lineage is its key."""
    tree = table.tree
    lineage: list[bytes] = [b""] * tree.size
    for i in range(tree.size):
        parent = int(tree.parent[i])
        base = lineage[parent] if parent >= 0 and i else b"/"
        if tree.is_user[i]:
            part = table.partitions[i]
            lineage[i] = base + b"0-" + str(tree.user[i]).encode() + b"/" + (part.encode() + b"/" if part else b"")
        elif i:
            lineage[i] = base + str(tree.account[i]).encode() + b"/"
        else:
            lineage[i] = b"/"
    order = np.empty(tree.size, dtype=np.int64)
    order[sorted(range(tree.size), key=lineage.__getitem__)] = np.arange(tree.size)
    return order


def precise_usage(table: SshareTable, records: list[slurm_text.AssocMgrRecord],
                  source: str = "assoc_mgr") -> tuple[np.ndarray | None, list[str]]:
    """Raw usage of every row of ``table`` at assoc_mgr's precision, if both describe one moment.

    Returns
    -------
    usage : longdouble array or None
        None when a row has no record or a value differs from sshare's by more than rounding
        (the two commands ran in different decay cycles).
    warnings : list of str
    """
    tree = table.tree
    by_key: dict[tuple[str, str, str], deque[slurm_text.AssocMgrRecord]] = defaultdict(deque)
    for rec in records:
        by_key[(rec.account, rec.user, rec.partition)].append(rec)
    cells: list[str] = []
    added = set(table.added)
    for i in range(tree.size):
        queue = by_key.get((str(tree.account[i]), str(tree.user[i]), table.partitions[i]))
        if not queue and i in added:  # put back under PrivateData: sshare has no usage for it either
            cells.append("0")
            continue
        if not queue:
            return None, [f"{source}: no association {tree.label(i)}; raw usage as sshare prints it"]
        rec = queue.popleft()
        if abs(float(rec.usage_raw) - float(tree.usage_raw[i])) > 1.0:
            return None, [f"{source}: UsageRaw of {tree.label(i)} is {rec.usage_raw}, sshare says "
                          f"{int(tree.usage_raw[i])} (another decay cycle?); raw usage as sshare prints it"]
        cells.append(rec.usage_raw)
    return np.asarray(cells, dtype=str).astype(np.longdouble), []


def _captured_at(files: Outputs, warnings: list[str]) -> datetime | None:
    got = files.get("captured_at", warnings)
    if got is None:
        return None
    text = got[0].decode("utf-8", "replace").strip()
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        raise InputError(got[1], f"not a time like 2024-01-31T12:00:00Z: {text[:40]!r}", 1) from None


def _jobs(files: Outputs, warnings: list[str]) -> tuple[Job, ...]:
    """squeue jobs with their sprio factors; jobs only sprio lists are added as pending."""
    jobs: list[Job] = []
    got = files.get("squeue", warnings)
    if got is not None:
        jobs = slurm_text.parse_squeue(*got, tz=files.zone)
    got = files.get("sprio", warnings)
    if got is None:
        return tuple(jobs)
    by_id: dict[str, list[slurm_text.SprioRow]] = defaultdict(list)
    for row in slurm_text.parse_sprio(*got):
        by_id[row.job_id].append(row)
    out = [_with_sprio(job, by_id.pop(job.job_id, [])) for job in jobs]
    for job_id, rows in by_id.items():
        r = rows[0]
        out.append(Job(job_id=job_id, user=r.user, account="", partition=r.partition, state="PENDING",
                       tres={}, priority=int(r.priority) if r.priority is not None else None,
                       factors=dict(r.factors)))
    return tuple(out)


def _with_sprio(job: Job, rows: list[slurm_text.SprioRow]) -> Job:
    """``job`` with its sprio factors (and sprio's priority where squeue has none)."""
    # a job pending in several partitions has one sprio row each: take its own partition's
    mine = [r for r in rows if r.partition == job.partition] or rows
    if not mine:
        return job
    r = mine[0]
    prio = job.priority if job.priority is not None else (int(r.priority) if r.priority is not None else None)
    return replace(job, factors=dict(r.factors), priority=prio)


@dataclass(frozen=True)
class _SprioLines:
    """sprio's text split in lines, its header, and where each job's line is (not parsed)."""

    header: str
    body: list[str]
    first: dict[str, int]
    """Job id -> its line in ``body``."""
    more: dict[str, list[int]]
    """Job id -> every line of a job sprio lists several times (a line per partition)."""

    def of(self, job_id: str) -> str:
        """The header and the job's lines, for :func:`~tui.sources.slurm_text.parse_sprio`."""
        at = self.more.get(job_id) or [self.first[job_id]]
        return self.header + "".join(self.body[i] + "\n" for i in at)


def _sprio_lines(text: str) -> _SprioLines | None:
    """sprio's lines by job id, without parsing them (100,000 lines in a few hundredths of a
    second: each line's first cell split off, no more); None when the first line that is not blank
    is no sprio header."""
    rows = text.split("\n")
    ids = [(row.split(None, 1) or [""])[0] for row in rows]  # 2-3x a regular expression over the text
    start = next((i for i, job_id in enumerate(ids) if job_id), None)
    if start is None:
        return _SprioLines("", [], {}, {})
    if ids[start] != "JOBID":
        return None
    body, body_ids = rows[start + 1:], ids[start + 1:]
    first = dict(zip(body_ids, range(len(body_ids))))
    first.pop("", None)
    more: dict[str, list[int]] = {}
    if len(first) != len(body_ids) - body_ids.count(""):  # a job listed more than once
        for i, job_id in enumerate(body_ids):
            if job_id:
                more.setdefault(job_id, []).append(i)
        more = {job_id: at for job_id, at in more.items() if len(at) > 1}
    return _SprioLines(rows[start] + "\n", body, first, more)


def _one_user_jobs(files: Outputs, warnings: list[str], user: str) -> tuple[tuple[Job, ...], QueueColumns] | None:
    """``user``'s jobs (with their sprio factors) and the whole queue as columns
    (:mod:`tui.sources.squeue_columns`), for a caller that serves one user: a ``Job`` is made
    for that user's rows only, and for a job found just ahead of one of them (its sprio line parsed
    then). None when this way would not give what :func:`_jobs` gives (squeue not in the ``|``
    layout or without accounts, sprio listing a job squeue does not): read every job then.
    A malformed cell in another user's squeue or sprio line is not an error here (it is for
    :func:`_jobs`)."""
    from tui.sources.squeue_columns import squeue_columns

    got = files.data.get(FILES["squeue"])
    if got is None or not got.strip():
        return None
    label = f"{files.where}/{FILES['squeue']}" if files.where else FILES["squeue"]
    cols = squeue_columns(got, label, files.zone)
    if cols is None or "ACCOUNT" not in cols.names:
        return None
    k = cols.names.index("ACCOUNT")
    if len(cols) and (cols.first[:, k] == cols.last[:, k]).any():
        return None  # jobs without an account: _attach_accounts's warning counts them all
    lines = _SprioLines("", [], {}, {})
    sprio = files.get("sprio", warnings)
    if sprio is not None:
        found = _sprio_lines(slurm_text.decode(sprio[0], sprio[1]))
        if found is None:
            return None  # parse_sprio's error
        lines = found
        if lines.first and (not lines.first.keys() <= set(cols.job_id) or np.isnan(cols.priority).any()):
            # sprio lists jobs squeue does not (_jobs adds them as pending), or gives the
            # priority squeue lacks (_jobs takes it): the order follows those
            return None
    parsed: dict[str, list[slurm_text.SprioRow]] = {}

    def attach(job: Job) -> Job:
        if job.job_id not in lines.first:
            return job
        rows = parsed.get(job.job_id)
        if rows is None:
            rows = parsed[job.job_id] = slurm_text.parse_sprio(lines.of(job.job_id),
                                                               sprio[1] if sprio is not None else "sprio -l")
        return _with_sprio(job, rows)

    cols = replace(cols, attach=attach)
    return tuple(cols.jobs(cols.rows_of(user))), cols


def snapshot_from_files(files: Outputs, table: SshareTable, source: str, default_cluster: str,
                        taken_at: datetime, one_user: str = "") -> Snapshot:
    """Everything but the sshare file is optional: each missing piece becomes a warning.

    ``one_user``: the caller serves this user alone (``fairtop jobs``, ``fairtop standing``): the
    snapshot's ``jobs`` are then that user's, and ``queue`` the whole queue as columns, where
    squeue's output allows it (:func:`_one_user_jobs`); every job otherwise."""
    warnings: list[str] = []
    tree = table.tree
    settings = PrioritySettings(algorithm=algorithm_from_header(table))
    cluster, version = "", None
    got = files.get("config", warnings)
    if got is not None:
        config = slurm_text.parse_config(*got)
        settings, cluster = config.settings, config.cluster
        version = config.values.get("SLURM_VERSION") or None
        warnings.extend(config.warnings)
        note = release(version).note()  # a release newer than fairtop knows: say what it will try
        if note:
            warnings.append(note)
    qos = files.data.get(FILES["qos"])
    if qos is not None and qos.strip():  # QOS UsageFactor and NoDecay: the usage law (history)
        factors, no_decay = slurm_text.parse_qos_usage(qos, FILES["qos"])
        settings = replace(settings, qos_usage_factors=factors, qos_no_decay=no_decay)
    usage, order = tree.usage_raw, None
    got = files.get("assoc_mgr", warnings)
    mgr: list[slurm_text.AssocMgrRecord] = []
    if got is not None:
        mgr = slurm_text.parse_assoc_mgr(*got)
        precise, why = precise_usage(table, mgr, FILES["assoc_mgr"])
        warnings.extend(why)
        usage = precise if precise is not None else usage
    if release(version).lineage_order:  # 23.11+: no LFT; siblings in lineage order, from the names
        order = lineage_order(table)
    else:
        got = files.get("assoc", warnings)
        if got is not None:
            order, why = sibling_order(table, slurm_text.parse_sacctmgr_assoc(*got), FILES["assoc"])
            warnings.extend(why)
    if order is None and mgr and all(r.lft is not None for r in mgr):
        as_assoc = [slurm_text.AssocRecord(r.account, r.user, r.partition, "", int(r.lft or 0), "")
                    for r in mgr]
        order, _ = sibling_order(table, as_assoc, FILES["assoc_mgr"])
    if order is not None or usage is not tree.usage_raw:
        tree = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, usage, order)
    one = _one_user_jobs(files, warnings, one_user) if one_user else None
    queue: QueueColumns | None = None
    if one is not None:
        jobs, queue = one
    else:
        jobs = _attach_accounts(_jobs(files, warnings), tree, warnings)
    budgets = _budgets(table, mgr)
    when = _captured_at(files, warnings) or taken_at
    private = _private_view(files, table)
    if private is not None and private.withheld:
        warnings.append(private.withheld)
    return Snapshot(cluster=cluster or default_cluster, source=source, taken_at=when, tree=tree,
                    settings=settings, partitions=_partitions(files, warnings), jobs=jobs,
                    queue=queue, budgets=budgets, limits=_limits(mgr), printed=printed_columns(table),
                    warnings=tuple(warnings),
                    usage_unknown=table.added, private=private, scheduler_version=version, zone=files.zone,
                    private_data=private_data(files.data.get(FILES["config"]), files.data.get(FILES["dbd_config"])))


def _private_view(files: Outputs, table: SshareTable) -> PrivateView | None:
    """What PrivateData cut from these outputs: the publisher's note for a per-user view
    (``fairtop_view.json``), else, when sshare listed only some associations, the cluster's
    PrivateData (from the config) with nothing more known."""
    note = files.data.get(FILES["view"])
    hides = private_data(files.data.get(FILES["config"]))
    if note is not None:
        try:
            view = json.loads(note)
            ranking = {str(k): tuple(str(p) for p in v) for k, v in dict(view.get("ranking", {})).items()}
            return PrivateView(frozenset(map(str, view.get("hides", hides))), str(view.get("reader", "")),
                               bool(table.added), ranking, str(view.get("withheld", "")))
        except (ValueError, TypeError, AttributeError):
            raise InputError(f"{files.where}/{FILES['view']}", "not the JSON a fairtop publisher writes") from None
    if not table.added:
        return None
    shown = ",".join(sorted(hides)) or "usage"
    return PrivateView(hides, "", True, {}, f"PrivateData={shown}: sshare lists only your own associations "
                                            "(and those of accounts you coordinate); the others' usage is unknown")


#: sshare's columns that fairtop shows as printed (RawShares is an input and shown as parsed).
PRINTED = ("NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


def printed_columns(table: SshareTable) -> dict[str, Sequence[str]]:
    """The computed columns exactly as sshare printed them, row-aligned with the tree (blank in
    rows fairtop put back, :attr:`SshareTable.added`)."""
    out: dict[str, Sequence[str]] = {}
    for c in PRINTED:
        if c in table.header:
            column = table.printed(c)
            if c == "RawUsage" and table.added:
                usage = column.cells.copy()
                usage[list(table.added)] = ""
                column = PrintedColumn(usage)
            out[c] = column
    return out


def _budgets(table: SshareTable, mgr: list[slurm_text.AssocMgrRecord]) -> tuple[Budget, ...]:
    """GrpTRESMins limits: with their usage from assoc_mgr, else the limits sshare printed alone."""
    out = []
    if mgr:
        for rec in mgr:
            for tres, (limit, used) in rec.grp_tres_mins.items():
                if limit is not None:
                    run = rec.grp_tres_run_mins.get(tres, (None, None))[1]
                    out.append(Budget(rec.account, rec.user, tres, limit, used, run))
        return tuple(out)
    if "GrpTRESMins" not in table.header:
        return ()
    run_col: list[str] | None = None
    limits = table.printed("GrpTRESMins")
    for i in np.flatnonzero(~limits.blank()).tolist():  # 20k rows without a limit: no Python loop
        cell = limits[i]
        if run_col is None and "TRESRunMins" in table.header:  # read only when some row has a limit
            run_col = table.column("TRESRunMins")
        running = slurm_text.parse_tres_counts(run_col[i]) if run_col is not None else {}
        for tres, limit_mins in slurm_text.parse_tres_counts(cell, "sshare GrpTRESMins", i + 2).items():
            run_mins = running.get(tres)
            out.append(Budget(str(table.tree.account[i]), str(table.tree.user[i]), tres, int(limit_mins), None,
                              None if run_mins is None else int(run_mins)))
    return tuple(out)


def _limits(mgr: list[slurm_text.AssocMgrRecord]) -> tuple[AssocLimit, ...]:
    """The job-count and GrpTRES limits assoc_mgr shows set, with their use."""
    out = []
    for rec in mgr:
        for name, (limit, used) in rec.counts.items():
            if limit is not None:
                out.append(AssocLimit(rec.account, rec.user, rec.partition, name, "", limit, used))
        for tres, (limit, used) in rec.grp_tres.items():
            if limit is not None:
                out.append(AssocLimit(rec.account, rec.user, rec.partition, "GrpTRES", tres, limit, used))
    return tuple(out)


def _partitions(files: Outputs, warnings: list[str]) -> tuple[Partition, ...]:
    """``scontrol show partition``, else the partitions ``slurm.conf`` defines."""
    conf = FILES["slurm_conf"]
    if FILES["partition"] not in files.data and files.data.get(conf):
        label = f"{files.where}/{conf}" if files.where else conf
        warnings.append(f"{FILES['partition']} not saved: partitions and their TRESBillingWeights are "
                        f"read from {conf} (totals from its NodeName lines)")
        return tuple(slurm_text.parse_slurm_conf_partitions(files.data[conf], label))
    got = files.get("partition", warnings)
    if got is None:
        return ()
    parts = slurm_text.parse_partitions(*got)
    nodes_text = files.data.get(FILES["node"], b"")
    if nodes_text.strip():  # optional: older captures lack it, and it only feeds the what-if checks
        label = f"{files.where}/{FILES['node']}" if files.where else FILES["node"]
        try:
            parts = slurm_text.attach_node_types(parts, slurm_text.parse_nodes(nodes_text, label))
        except InputError as exc:  # only the what-if's node checks need it: they then say "unknown"
            warnings.append(f"{exc}: node sizes unknown")
    elif files.data.get(conf):
        parts = slurm_text.attach_node_types(parts, slurm_text.parse_slurm_conf_nodes(files.data[conf], conf))
    return tuple(parts)


def _attach_accounts(jobs: tuple[Job, ...], tree: AssocTree, warnings: list[str]) -> tuple[Job, ...]:
    """Give jobs listed without an account (``sprio -l``, plain ``squeue``) their user's account,
    where the user has exactly one association; say how many stay unattached."""
    if all(j.account for j in jobs):
        return jobs
    accounts: dict[str, set[str]] = defaultdict(set)
    for i in np.flatnonzero(tree.is_user):
        accounts[str(tree.user[i])].add(str(tree.account[i]))
    out, unplaced = [], 0
    for job in jobs:
        if not job.account:
            mine = accounts.get(job.user, set())
            if len(mine) == 1:
                job = replace(job, account=next(iter(mine)))
            else:
                unplaced += 1
        out.append(job)
    if unplaced:
        warnings.append(f"{unplaced} job(s) listed without an account belong to users with several (or no) "
                        "associations and are not attached to one ('fairtop capture' saves squeue with accounts)")
    return tuple(out)


def load_folder(path: str | Path, one_user: str = "") -> Snapshot:
    """Read a capture folder (see the module docstring) into a :class:`~tui.model.Snapshot`.

    Parameters
    ----------
    path : str or Path
        The folder ``capture.sh`` or ``fairtop capture`` wrote.
    one_user : str
        The caller serves this user alone: see :func:`snapshot_from_files`.

    Raises
    ------
    InputError
        No such folder, no ``sshare_a_l_P.psv``, or a file present but malformed.
    """
    folder = _folder(path)
    table = load_table(folder)
    mtime = datetime.fromtimestamp((folder / FILES["sshare"]).stat().st_mtime, timezone.utc)
    return snapshot_from_files(_read_folder(folder), table, str(folder), folder.name, mtime, one_user)


def algorithm_from_header(table: SshareTable) -> Algorithm:
    """Without the config: sshare -l prints LevelFS only under Fair Tree (decided client-side)."""
    return "classic" if "LevelFS" not in table.header and "NormUsage" in table.header else "fair_tree"
