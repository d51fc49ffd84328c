"""PBS Professional's queue -> :class:`~tui.model.Job`: ``qstat -f -F json``.

What fairtop reads of each job (OpenPBS ``qstat -f``'s attributes, the JSON form of the same):

* ``job_state``: ``Q`` (queued), ``H`` (held), ``W`` (waiting for its execution time), ``T``
  (being moved) are kept as ``PENDING``; ``R``/``E`` (running, exiting) as ``RUNNING``; finished
  and other states are left out (their usage is in the fairshare tree already);
* ``comment``: why it waits, in the scheduler's or the server's own words (``Not Running: Not
  enough free nodes available``, ``Job held by pbsu3 on Sat Nov 28 06:40:59 2026``), kept as
  printed in :attr:`~tui.model.Job.reason`;
* ``estimated.start_time`` / ``estimated.exec_vnode``: the scheduler's start estimate, which
  ``pbs_sched`` sets only for the jobs it plans ahead ("top jobs": ``strict_ordering`` or
  starving jobs with ``backfill``); None when it printed none;
* ``Job_Owner`` (``user@host``): the user, PBS's default fairshare entity (``euser``); ``queue``
  as the partition; ``Account_Name`` where given; ``qtime``; ``Resource_List`` (``ncpus``,
  ``nodect``, ``mem``, ``walltime``).

Times are printed by qstat as ``ctime`` does (``Sat Nov 28 06:45:59 2026``), in the server's local
time: read as this machine's local time (a capture read on another machine in another time zone is
off by the difference).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from tui.model import Job
from tui.sources.commands import run_in_group
from tui.sources.errors import InputError

__all__ = ["QSTAT_ARGS", "QSTAT_FILE", "jobs_from_qstat_json", "run_qstat"]

#: The one qstat of a read: every job, every attribute, as JSON (no shell: an argument list).
QSTAT_ARGS = ("qstat", "-f", "-F", "json")
#: Where a capture keeps its output.
QSTAT_FILE = "qstat_f.json"
_PENDING, _RUNNING = frozenset("QHWT"), frozenset("RE")
_CTIME = "%a %b %d %H:%M:%S %Y"


def run_qstat(timeout: float) -> tuple[bytes | None, str | None]:
    """``qstat -f -F json``'s stdout, or None and one line saying why not (the jobs are then
    unknown; the fairshare files do not need them)."""
    try:
        returncode, stdout, stderr = run_in_group(list(QSTAT_ARGS), timeout)
    except FileNotFoundError:
        return None, "qstat: command not found (pending jobs unknown)"
    except subprocess.TimeoutExpired:
        return None, f"qstat: no answer within {timeout:g} s (pending jobs unknown)"
    except OSError as exc:
        return None, f"qstat: {exc.strerror or exc} (pending jobs unknown)"
    if returncode != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"qstat: exit status {returncode}: {err[0] if err else 'no message'} (pending jobs unknown)"
    return stdout, None


def _time(value: Any, source: str, what: str, tz: tzinfo | None = None) -> datetime | None:
    """A time as qstat prints it: epoch seconds, or a ctime string in ``tz`` (default this machine's zone)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):  # some qstat builds print epoch seconds
        return datetime.fromtimestamp(value).astimezone()
    try:
        wall = datetime.strptime(str(value).strip(), _CTIME)
        return wall.replace(tzinfo=tz) if tz is not None else wall.astimezone()
    except ValueError:
        raise InputError(source, f"{what}: {value!r} is not a time as qstat prints it") from None


def _walltime(value: Any) -> int:
    if isinstance(value, (int, float)):
        return int(value)
    parts = str(value or "").split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        return 0
    seconds = 0
    for n in numbers:
        seconds = seconds * 60 + n
    return seconds


def _mem_mb(value: Any) -> float | None:
    text = str(value or "").strip().lower()
    units = {"b": 1 / 2**20, "w": 8 / 2**20, "kb": 1 / 1024, "kw": 8 / 1024, "mb": 1, "mw": 8, "gb": 1024,
             "gw": 8192, "tb": 2**20, "tw": 8 * 2**20}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * units[unit]
    return int(text) / 2**20 if text.isdigit() else None  # a bare number is bytes


def jobs_from_qstat_json(data: bytes | str, source: str = "qstat -f -F json", tz: tzinfo | None = None) -> list[Job]:
    """Pending and running jobs of ``qstat -f -F json``'s output (see the module's notes); its
    ctime strings are wall-clock times in ``tz`` (default: this machine's zone, where qstat ran).

    Raises
    ------
    InputError
        Not JSON, or a ``Jobs`` that is not an object, or a time qstat would not print.
    """
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise InputError(source, f"not JSON: {exc}") from None
    if not isinstance(doc, Mapping):
        raise InputError(source, "not a JSON object")
    items = doc.get("Jobs", {})  # qstat prints no "Jobs" when there are none
    if not isinstance(items, Mapping):
        raise InputError(source, "'Jobs' is not an object")
    out = []
    for job_id, j in items.items():
        if not isinstance(j, Mapping):
            raise InputError(source, f"job {job_id} is {type(j).__name__}, expected an object")
        state = str(j.get("job_state", ""))
        if state not in _PENDING and state not in _RUNNING:
            continue
        pending = state in _PENDING
        what = f"job {job_id}"
        owner = str(j.get("Job_Owner", "")).split("@", 1)[0]
        res = j.get("Resource_List") if isinstance(j.get("Resource_List"), Mapping) else {}
        assert isinstance(res, Mapping)
        tres: dict[str, float] = {}
        for key, name in (("ncpus", "cpu"), ("nodect", "node")):
            if isinstance(res.get(key), (int, float)):
                tres[name] = float(res[key])
        mem = _mem_mb(res.get("mem")) if res.get("mem") is not None else None
        if mem is not None:
            tres["mem"] = mem
        est = j.get("estimated") if isinstance(j.get("estimated"), Mapping) else {}
        assert isinstance(est, Mapping)
        comment = j.get("comment")
        out.append(Job(
            job_id=str(job_id), user=owner, account=str(j.get("Account_Name", "") or ""),
            partition=str(j.get("queue", "")), state="PENDING" if pending else "RUNNING", tres=tres,
            time_limit_s=_walltime(res.get("walltime")),
            submit_time=_time(j.get("qtime"), source, f"{what} qtime", tz),
            start_time=_time(est.get("start_time"), source, f"{what} estimated.start_time", tz) if pending
            else _time(j.get("stime"), source, f"{what} stime", tz),
            reason=str(comment) if pending and isinstance(comment, str) and comment.strip() else None,
            sched_nodes=str(est["exec_vnode"]) if pending and est.get("exec_vnode") else None,
            eligible_time=_time(j.get("Execution_Time"), source, f"{what} Execution_Time", tz) if pending else None,
        ))
    return out
