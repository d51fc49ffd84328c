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
controller's zone (default: this machine's).

Live: :func:`sacct_command` is the argument list (never a shell string) and
:func:`live_history` runs it through :func:`tui.sources.commands.run` with a timeout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path

from tui.sources.commands import run
from tui.sources.errors import InputError
from tui.sources.slurm_text import parse_tres_counts
from tui.sources.sshare import decode

__all__ = ["SACCT_FILE", "LAST_CYCLE_FILE", "SACCT_FIELDS", "AccountedJob", "parse_sacct", "sacct_command",
           "read_last_cycle", "read_last_decay_ran", "load_saved_history", "live_history"]

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
    jobs = parse_sacct(data, str(path), tz)
    last = None
    cycle = Path(folder) / LAST_CYCLE_FILE
    if cycle.is_file():
        last = read_last_cycle(cycle.read_bytes(), str(cycle))
    return jobs, last


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
