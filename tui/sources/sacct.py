"""Accounting records: ``sacct -a -P -X`` output -> :class:`AccountedJob` (usage history).

The columns are read from the header line, so any ``-o`` list works as long as it holds
``JobID``, ``User``, ``Account``, ``Start``, ``End`` and either ``AllocTRES`` (for
``billing=``) or ``AllocCPUS``. ``ElapsedRaw`` (else ``Elapsed``) gives the run time; ``State``
is kept. Job steps (``123.batch``, ``123.0``) are skipped: usage is charged per job (spec 4.3).
Jobs that never started (``Start`` = ``Unknown``/``None``) are dropped. A running job has
``End`` = ``Unknown`` and ``end`` None. With ``-D`` a requeued job appears once per run (same
JobID, State REQUEUED for the earlier runs): every run is kept, as Slurm charged each.

``billing`` is the ``billing=`` count of AllocTRES (the job's billable TRES, spec 4.4, which
Slurm stores truncated to an integer); a record without it (older Slurm, no TRESBillingWeights
and no billing TRES) falls back to AllocCPUS, as Slurm bills a partition without weights.

Times are local wall-clock times without a zone, as sacct prints them; pass ``tz`` for the
zone they were printed in (default: this machine's; a capture's own, saved by ``fairtop capture``,
for the ``load_saved_*`` readers: :mod:`tui.sources.zone`).

Live: :func:`sacct_command` is the argument list (never a shell string) and
:func:`live_history` runs it through :func:`tui.sources.commands.run` with a timeout.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import BinaryIO

import numpy as np

from tui.sources.commands import run
from tui.sources.errors import InputError
from tui.sources.slurm_text import parse_tres_counts
from tui.sources.sshare import decode
from tui.sources.zone import saved_zone

__all__ = ["SACCT_FILE", "LAST_CYCLE_FILE", "SACCT_FIELDS", "AccountedJob", "parse_sacct", "sacct_command",
           "read_last_cycle", "read_last_decay_ran", "load_saved_history", "live_history", "SacctColumns",
           "parse_sacct_columns", "iter_sacct_columns", "load_saved_columns", "live_columns", "load_saved_last_cycle"]

#: File name of ``sacct -a -P -X ...`` in a capture folder (as capture.sh names it).
SACCT_FILE = "sacct_a_P.psv"
#: ``priority_last_decay_ran`` as ``date`` printed it (capture.sh), if saved.
LAST_CYCLE_FILE = "last_decay_cycle.txt"
#: The fields fairtop asks sacct for.
SACCT_FIELDS = ("JobID", "User", "Account", "Partition", "QOS", "AllocCPUS", "AllocTRES", "State", "Start",
                "End", "ElapsedRaw")
_NEEDED = ("JobID", "User", "Account", "Start", "End")
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
_NOT_A_TIME = ("", "Unknown", "None", "N/A", "(null)", "NONE")


@dataclass(frozen=True)
class AccountedJob:
    """One job as the accounting database recorded it."""

    job_id: str
    account: str
    user: str
    start: datetime
    """When it started (aware)."""
    end: datetime | None
    """When it ended; None while it runs."""
    elapsed_s: int
    """Run time in seconds as sacct reports it (ElapsedRaw)."""
    billing: float
    """Billable TRES per second of run time (AllocTRES ``billing=``, else AllocCPUS)."""
    state: str = ""
    partition: str = ""
    qos: str = ""
    alloc_tres: Mapping[str, float] = field(default_factory=dict)
    """AllocTRES counts (``cpu``, ``mem`` in MB, ``node``, ``billing``, ``gres/gpu``, ...): the
    billing is recomputed from them as a double where the partition's weights are known."""

    def run_seconds(self, now: datetime) -> float:
        """Seconds it ran up to ``now`` (its end, or ``now`` while running)."""
        stop = self.end if self.end is not None and self.end <= now else now
        return max(0.0, (stop - self.start).total_seconds())


def _time(cell: str, what: str, source: str, line: int, tz: tzinfo | None) -> datetime | None:
    s = cell.strip()
    if s in _NOT_A_TIME:
        return None
    if not _TIME.fullmatch(s):
        raise InputError(source, f"{what} is not a time like 2024-01-31T12:00:00: {cell[:40]!r}", line)
    try:
        t = datetime.fromisoformat(s)
        return t.replace(tzinfo=tz) if tz is not None else t.astimezone()
    except (ValueError, OverflowError, OSError):
        raise InputError(source, f"{what} is not a time: {cell[:40]!r}", line) from None


def _elapsed(cell: str, source: str, line: int) -> int | None:
    """ElapsedRaw (seconds) or Elapsed (``[D-]HH:MM:SS``)."""
    s = cell.strip()
    if s.isdigit() and s.isascii():
        return int(s)
    m = re.fullmatch(r"(?:([0-9]+)-)?([0-9]{1,2}):([0-9]{2}):([0-9]{2})", s)
    if not m:
        if not s:
            return None
        raise InputError(source, f"Elapsed is not a duration: {cell[:40]!r}", line)
    d, h, mi, se = (int(g) if g else 0 for g in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + se


def parse_sacct(data: bytes | str, source: str = "sacct -a -P -X", tz: tzinfo | None = None) -> list[AccountedJob]:
    """Parse ``sacct -P`` output (header first, ``|`` between cells) into started jobs.

    Parameters
    ----------
    data : bytes or str
        The command's stdout.
    source : str
        Name used in error messages (a file name).
    tz : tzinfo, optional
        Zone of the printed times (default: this machine's local zone).

    Raises
    ------
    InputError
        Empty output, a header without the needed columns, a row with the wrong number of
        cells, or a bad time, duration or TRES string.
    """
    text = decode(data, source)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError(source, "empty: no sacct header line")
    header = lines[0].rstrip("\n").split("|")
    missing = [c for c in _NEEDED if c not in header]
    if missing or not ({"AllocTRES", "AllocCPUS"} & set(header)):
        need = ", ".join(missing) or "AllocTRES or AllocCPUS"
        raise InputError(source, f"not 'sacct -P' output with {need} in its header (got {'|'.join(header)[:80]!r})", 1)
    col = {name: i for i, name in enumerate(header)}
    out: list[AccountedJob] = []
    for no, raw in enumerate(lines[1:], 2):
        cells = raw.split("|")
        if len(cells) == len(header) + 1 and cells[-1] == "":
            cells = cells[:-1]  # sacct -p puts a | after the last cell
        if len(cells) != len(header):
            raise InputError(source, f"{len(cells)} cells, the header has {len(header)}", no)

        def cell(name: str, cells: list[str] = cells) -> str:
            return cells[col[name]] if name in col else ""

        job_id = cell("JobID").strip()
        if "." in job_id:
            continue  # a step: its usage is the job's
        start = _time(cell("Start"), "Start", source, no, tz)
        if start is None:
            continue  # never ran: no usage
        end = _time(cell("End"), "End", source, no, tz)
        elapsed = _elapsed(cell("ElapsedRaw") or cell("Elapsed"), source, no)
        if elapsed is None:
            elapsed = int(((end or start) - start).total_seconds())
        tres = parse_tres_counts(cell("AllocTRES"), source, no) if "AllocTRES" in col else {}
        billing = tres.get("billing")
        if billing is None:
            cpus = cell("AllocCPUS").strip()
            billing = float(cpus) if cpus.isdigit() and cpus.isascii() else tres.get("cpu", 0.0)
        out.append(AccountedJob(job_id=job_id, account=cell("Account").strip(), user=cell("User").strip(),
                                start=start, end=end, elapsed_s=elapsed, billing=float(billing),
                                state=cell("State").strip().split(" ")[0], partition=cell("Partition").strip(),
                                qos=cell("QOS").strip(), alloc_tres=tres))
    return out


def read_last_cycle(data: bytes | str, source: str = LAST_CYCLE_FILE) -> datetime:
    """``2026-11-21 18:43:43.056289599 +0000`` (``date`` of the priority_last_decay_ran file) or ISO."""
    text = decode(data, source).strip()
    m = re.fullmatch(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.[0-9]+)?"
                     r"\s*(Z|[+-][0-9]{2}:?[0-9]{2})?", text)
    if not m:
        raise InputError(source, f"not a time like 2024-01-31 12:00:00 +0000: {text[:40]!r}", 1)
    zone = m.group(3) or ""
    when = datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}")
    if zone in ("", ):
        return when.astimezone()
    if zone == "Z":
        return when.replace(tzinfo=timezone.utc)
    sign = 1 if zone[0] == "+" else -1
    digits = zone[1:].replace(":", "")
    return when.replace(tzinfo=timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))))


def read_last_decay_ran(data: bytes, source: str = "priority_last_decay_ran") -> tuple[datetime, datetime]:
    """slurmctld's ``priority_last_decay_ran`` state file: the last decay cycle and the last
    usage reset (two ``time_t`` packed as big-endian 64-bit integers, PM ``_write_last_decay_ran``).

    Raises
    ------
    InputError
        Not 16 bytes or more.
    """
    if len(data) < 16:
        raise InputError(source, f"{len(data)} bytes: not slurmctld's priority_last_decay_ran (two 64-bit times)")
    last_ran, last_reset = (int.from_bytes(data[i:i + 8], "big") for i in (0, 8))
    return (datetime.fromtimestamp(last_ran, timezone.utc), datetime.fromtimestamp(last_reset, timezone.utc))


def load_saved_history(folder: str | Path, tz: tzinfo | None = None) -> tuple[list[AccountedJob], datetime | None]:
    """The jobs of a capture folder's ``sacct_a_P.psv`` and its last decay cycle (None if not saved).
    Times are read in ``tz``, by default the zone the capture saved (:func:`tui.sources.zone.saved_zone`;
    this machine's when it saved none).

    Raises
    ------
    InputError
        No sacct file (with how to make one), or a malformed one.
    """
    from tui.sources.private_publish import my_folder

    folder = my_folder(folder)[0]  # a PrivateData capture: the whole, or this user's own view
    path = Path(folder) / SACCT_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(str(folder), f"no {SACCT_FILE}: save one with 'sacct -a -P -X --starttime=YYYY-MM-DD "
                         f"-o {','.join(SACCT_FIELDS)} > {SACCT_FILE}'") from None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None
    return parse_sacct(data, str(path), tz if tz is not None else saved_zone(folder)), load_saved_last_cycle(folder)


def load_saved_last_cycle(folder: str | Path) -> datetime | None:
    """A capture folder's last decay cycle (``last_decay_cycle.txt``); None if not saved."""
    from tui.sources.private_publish import my_folder

    cycle = Path(my_folder(folder)[0]) / LAST_CYCLE_FILE
    return read_last_cycle(cycle.read_bytes(), str(cycle)) if cycle.is_file() else None


def sacct_command(since: datetime, user: str | None = None, account: str | None = None,
                  cluster: str = "") -> list[str]:
    """The live ``sacct`` argument list: all users' jobs (``-a``), allocations only (``-X``), every
    run of a requeued job (``-D``: without it sacct shows the last run only) since ``since``;
    ``cluster``: that cluster's jobs (``-M NAME``; default the local one).

    ``user`` and ``account`` become single arguments (``--user=NAME``), never shell text.
    """
    args = ["sacct", "-a", "-P", "-X", "-D", "--starttime=" + since.strftime("%Y-%m-%dT%H:%M:%S"),
            "--endtime=now", "-o", ",".join(SACCT_FIELDS)]
    if cluster:
        args[1:1] = ["-M", cluster]
    if user:
        args.append("--user=" + user)
    if account:
        args.append("--accounts=" + account)
    return args


def live_history(since: datetime, timeout: float = 60.0, cluster: str = "") -> list[AccountedJob]:
    """Run ``sacct`` now (see :func:`sacct_command`) and parse it.

    Raises
    ------
    SourceUnavailable
        sacct is missing, times out or fails (slurmdbd down).
    """
    out = run(sacct_command(since, cluster=cluster), timeout=timeout)
    return parse_sacct(out.stdout, "sacct -a -P -X")


# --------------------------------------------------------------------------------------------
# Columns: millions of jobs without an object each
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SacctColumns:
    """Started jobs (one row per run) as columns: names as codes into tuples of distinct names,
    AllocTRES as codes into the distinct job shapes (a site has thousands of shapes for millions
    of jobs). About 40 bytes a job.

    Attributes
    ----------
    account, user, partition, qos : int32 arrays (J,)
        Indices into ``accounts``, ``users``, ``partitions``, ``qos_names``.
    start, end : float64 arrays (J,)
        Epoch seconds; ``end`` is ``inf`` while the job runs.
    shape : int32 array (J,)
        Index into ``shapes`` (each a distinct AllocTRES, ``billing`` left out) and
        ``shape_billing`` (its ``billing=``, else AllocCPUS, else its ``cpu``).
    """

    account: np.ndarray
    accounts: tuple[str, ...]
    user: np.ndarray
    users: tuple[str, ...]
    start: np.ndarray
    end: np.ndarray
    partition: np.ndarray
    partitions: tuple[str, ...]
    qos: np.ndarray
    qos_names: tuple[str, ...]
    shape: np.ndarray
    shapes: tuple[dict[str, float], ...]
    shape_billing: np.ndarray

    @property
    def size(self) -> int:
        return int(self.start.size)

    @classmethod
    def of_jobs(cls, jobs: Sequence[AccountedJob]) -> SacctColumns:
        """The columns of parsed jobs (the demo's, a test's)."""
        def codes(values: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
            seen: dict[str, int] = {}
            return np.asarray([seen.setdefault(v, len(seen)) for v in values], dtype=np.int32), tuple(seen)

        shapes: dict[tuple[tuple[str, float], ...], int] = {}
        bills: list[float] = []
        shape = []
        for j in jobs:
            key = tuple(sorted((k, v) for k, v in j.alloc_tres.items() if k != "billing")) + (("\0", j.billing),)
            if key not in shapes:
                shapes[key] = len(shapes)
                bills.append(j.billing)
            shape.append(shapes[key])
        account, accounts = codes([j.account for j in jobs])
        user, users = codes([j.user for j in jobs])
        partition, partitions = codes([j.partition for j in jobs])
        qos, qos_names = codes([j.qos for j in jobs])
        return cls(account, accounts, user, users,
                   np.asarray([j.start.timestamp() for j in jobs], dtype=np.float64).reshape(-1),
                   np.asarray([j.end.timestamp() if j.end else np.inf for j in jobs], dtype=np.float64).reshape(-1),
                   partition, partitions, qos, qos_names, np.asarray(shape, dtype=np.int32),
                   tuple({k: v for k, v in key if k != "\0"} for key in shapes), np.asarray(bills, dtype=np.float64))

    @classmethod
    def concat(cls, parts: Sequence[SacctColumns]) -> SacctColumns:
        """Chunks (:func:`iter_sacct_columns`) as one, their names merged."""
        def merge(codes: list[np.ndarray], names: list[tuple[str, ...]]) -> tuple[np.ndarray, tuple[str, ...]]:
            seen: dict[str, int] = {}
            out = [np.asarray([seen.setdefault(n, len(seen)) for n in ns], dtype=np.int32)[c] if len(ns)
                   else c for c, ns in zip(codes, names)]
            return (np.concatenate(out) if out else np.zeros(0, np.int32)), tuple(seen)

        def field_of(name: str) -> list:
            return [getattr(p, name) for p in parts]

        account, accounts = merge(field_of("account"), field_of("accounts"))
        user, users = merge(field_of("user"), field_of("users"))
        partition, partitions = merge(field_of("partition"), field_of("partitions"))
        qos, qos_names = merge(field_of("qos"), field_of("qos_names"))
        offsets = np.cumsum([0] + [len(p.shapes) for p in parts])[:-1]
        return cls(account, accounts, user, users, np.concatenate(field_of("start")), np.concatenate(field_of("end")),
                   partition, partitions, qos, qos_names,
                   np.concatenate([p.shape + np.int32(o) for p, o in zip(parts, offsets)]),
                   tuple(s for p in parts for s in p.shapes), np.concatenate(field_of("shape_billing")))


def _epochs(cells: list[str], what: str, source: str, tz: tzinfo | None) -> np.ndarray:
    """sacct's local wall-clock times as epoch seconds, vectorised (the zone's offset looked up once
    per distinct hour); NaN where no time (Unknown, None, ...)."""
    arr = np.asarray(cells, dtype="U19")
    ok = (np.char.str_len(arr) == 19) & (np.char.find(arr, "T") == 10)
    blank = np.isin(arr, _NOT_A_TIME)
    if not np.all(ok | blank):
        bad = str(arr[~(ok | blank)][0])
        raise InputError(source, f"{what} is not a time like 2024-01-31T12:00:00: {bad[:40]!r}")
    out = np.full(arr.size, np.nan)
    if not ok.any():
        return out
    try:
        naive = arr[ok].astype("datetime64[s]").astype(np.int64)
    except ValueError:
        raise InputError(source, f"{what} holds a cell that is not a time") from None
    hours, inverse = np.unique(naive // 3600, return_inverse=True)
    offset = np.empty(hours.size)
    for k, h in enumerate(hours.tolist()):
        wall = datetime.fromtimestamp(h * 3600, timezone.utc).replace(tzinfo=tz)
        offset[k] = h * 3600 - (wall.timestamp() if tz is not None else wall.replace(tzinfo=None).timestamp())
    out[ok] = naive - offset[inverse.reshape(-1)]
    return out


def _coded(cells: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each cell's index into the distinct cells (in order of first appearance), at C speed."""
    names = list(dict.fromkeys(cells))
    index = {n: i for i, n in enumerate(names)}
    code = np.fromiter(map(index.__getitem__, cells), dtype=np.int32, count=len(cells))
    return code, tuple(n.strip() for n in names)


def parse_sacct_columns(text: str, header: Sequence[str], source: str = "sacct -a -P -X",
                        tz: tzinfo | None = None, first_line: int = 2) -> SacctColumns:
    """Rows of ``sacct -P`` output (whole lines, without the header) as :class:`SacctColumns`,
    with the same rules as :func:`parse_sacct` (steps and never-started jobs left out, every run
    of a requeued job kept). Cells are split once for the whole text, not line by line.

    Raises
    ------
    InputError
        A row with the wrong number of cells, a bad time or TRES string.
    """
    col = {name: i for i, name in enumerate(header)}
    width = len(header)
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    flat = text.replace("\n", "|").split("|") if text else []
    if flat and flat[-1] == "" and text.endswith("\n"):
        flat.pop()
    if len(flat) != lines * width:  # a ragged row (or sacct -p's trailing |): line by line
        rows = []
        for no, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            row = line.split("|")
            if len(row) == width + 1 and row[-1] == "":
                row.pop()
            if len(row) != width:
                raise InputError(source, f"{len(row)} cells, the header has {width}", first_line + no)
            rows.extend(row)
        flat, lines = rows, len(rows) // width

    def cells(name: str) -> list[str]:
        return flat[col[name]::width] if name in col else [""] * lines

    keep = np.fromiter(("." not in j for j in cells("JobID")), dtype=bool, count=lines)
    start = _epochs(cells("Start"), "Start", source, tz)
    keep &= ~np.isnan(start)
    end = _epochs(cells("End"), "End", source, tz)
    end[np.isnan(end)] = np.inf
    idx = np.flatnonzero(keep)
    every = idx.size == lines

    def kept(name: str) -> list[str]:
        values = cells(name)
        return values if every else [values[i] for i in idx.tolist()]

    shape, distinct = _coded([t + "|" + c for t, c in zip(kept("AllocTRES"), kept("AllocCPUS"))])
    shapes, bills = [], []
    for shape_text in distinct:
        tres_text, _, cpus = shape_text.partition("|")
        tres = parse_tres_counts(tres_text, source) if tres_text else {}
        bill = tres.pop("billing", None)
        if bill is None:
            bill = float(cpus) if cpus.isdigit() and cpus.isascii() else tres.get("cpu", 0.0)
        shapes.append(tres)
        bills.append(float(bill))
    account, accounts = _coded(kept("Account"))
    user, users = _coded(kept("User"))
    partition, partitions = _coded(kept("Partition"))
    qos, qos_names = _coded(kept("QOS"))
    return SacctColumns(account, accounts, user, users, start[idx], end[idx], partition, partitions, qos, qos_names,
                        shape, tuple(shapes), np.asarray(bills, dtype=np.float64))


def iter_sacct_columns(stream: BinaryIO, source: str = "sacct -a -P -X", tz: tzinfo | None = None,
                       chunk: int = 64 << 20) -> Iterator[SacctColumns]:
    """``sacct -P`` output read ``chunk`` bytes at a time (whole lines), as columns: a year of a
    large site's jobs in bounded memory (the text of one chunk at a time, then its columns)."""
    head = stream.readline()
    while head and not head.strip():
        head = stream.readline()
    if not head:
        raise InputError(source, "empty: no sacct header line")
    header = decode(head, source).rstrip("\r\n").split("|")
    missing = [c for c in _NEEDED if c not in header]
    if missing or not ({"AllocTRES", "AllocCPUS"} & set(header)):
        need = ", ".join(missing) or "AllocTRES or AllocCPUS"
        raise InputError(source, f"not 'sacct -P' output with {need} in its header (got {'|'.join(header)[:80]!r})",
                         1)
    rest, line, done = b"", 2, False
    while not done:
        block = stream.read(chunk)
        done = not block
        data = rest + block
        cut = len(data) if done else data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut == 0 and not done:
            continue  # one line longer than a chunk: read on
        text = data[:cut].decode("utf-8", "replace").replace("\r\n", "\n")
        if text.strip() or (done and line == 2):
            yield parse_sacct_columns(text, header, source, tz, line)
        line += text.count("\n")


def load_saved_columns(folder: str | Path, tz: tzinfo | None = None) -> SacctColumns:
    """A capture folder's ``sacct_a_P.psv`` as columns (:func:`load_saved_history`'s jobs, in its zone)."""
    from tui.sources.private_publish import my_folder

    path = Path(my_folder(folder)[0]) / SACCT_FILE
    zone = tz if tz is not None else saved_zone(path.parent)
    try:
        with path.open("rb") as stream:
            return SacctColumns.concat(list(iter_sacct_columns(stream, str(path), zone)))
    except FileNotFoundError:
        raise InputError(str(folder), f"no {SACCT_FILE}: save one with 'sacct -a -P -X -D --starttime=YYYY-MM-DD "
                         f"-o {','.join(SACCT_FIELDS)} > {SACCT_FILE}'") from None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None


def live_columns(since: datetime, timeout: float = 60.0, cluster: str = "") -> SacctColumns:
    """:func:`live_history` as columns: one ``sacct`` run."""
    out = run(sacct_command(since, cluster=cluster), timeout=timeout)
    data = out.stdout.encode() if isinstance(out.stdout, str) else out.stdout
    return SacctColumns.concat(list(iter_sacct_columns(io.BytesIO(data), "sacct -a -P -X")))
