"""A folder of PBS Professional fairshare files -> :class:`~tui.model.Snapshot` (``snapshot.pbs``).

==========================  ===============================================  ==========
file                        what                                             needed
==========================  ===============================================  ==========
``resource_group``          ``$PBS_HOME/sched_priv/resource_group``          yes
``usage``                   the scheduler's binary usage file                one of the
``pbsfs.txt``               ``pbsfs`` output                                 three, in
``usage.txt``               ``entity usage`` lines                           this order
``sched_config``            ``$PBS_HOME/sched_priv/sched_config``            no
``captured_at.txt``         ``date -u``                                      no
``qstat_f.json``            ``qstat -f -F json``: the jobs, their comment    no
                            and ``estimated.start_time``
==========================  ===============================================  ==========

``sched_config`` gives ``unknown_shares`` and ``fairshare_usage_res``. A folder holding
``resource_group`` and no ``sshare_a_l_P.psv`` is a PBS folder. Without ``qstat_f.json`` (a capture
made before fairtop read qstat, or one where qstat failed) the jobs are unknown.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from tui.security.file_modes import PUBLIC, PUBLIC_DIR, make_dir, write_file
from tui.model import Snapshot
from tui.sources.commands import run_in_group
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.pbs import INT_MAX, read_pbs
from tui.sources.pbs_jobs import QSTAT_FILE, jobs_from_qstat_json, run_qstat
from tui.sources.zone import ZONE_FILE, local_zone_name, saved_zone

__all__ = ["FILES", "USAGE_FILES", "is_pbs_folder", "load_pbs_folder", "sched_config_values", "sched_decay_values",
           "pbs_home", "conf_file", "date_u", "capture"]

#: Seconds ``pbsfs`` may take (it only reads local files).
CAPTURE_TIMEOUT = 30.0
#: Where OpenPBS keeps its files when neither the environment nor ``/etc/pbs.conf`` says.
DEFAULT_PBS_HOME = "/var/spool/pbs"
PBS_CONF = Path("/etc/pbs.conf")
_DATE_U = "%a %b %d %H:%M:%S %Z %Y"

FILES = {"resource_group": "resource_group", "sched_config": "sched_config", "captured_at": "captured_at.txt"}
#: Usage inputs, the first present wins.
USAGE_FILES = ("usage", "pbsfs.txt", "usage.txt")
_SLURM_MARK = "sshare_a_l_P.psv"


def is_pbs_folder(path: str | Path) -> bool:
    """True for a folder with ``resource_group`` and no saved sshare output."""
    folder = Path(path)
    return (folder / FILES["resource_group"]).is_file() and not (folder / _SLURM_MARK).exists()


def sched_config_values(text: str, source: str) -> tuple[int, str | None]:
    """``unknown_shares`` (0 when absent) and ``fairshare_usage_res`` (None when absent).

    ``sched_config`` lines are ``name: value [prime|non_prime|all|none]``; ``#`` starts a comment;
    a value in double quotes may hold spaces (``fairshare_usage_res: "ncpus * walltime"``).
    """
    unknown, res = 0, None
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        m = re.match(r'(unknown_shares|fairshare_usage_res)\s*:\s*(?:"([^"]*)"|(\S+))', body)
        if not m:
            continue
        if m.group(1) == "fairshare_usage_res":
            res = m.group(2) if m.group(2) is not None else m.group(3)
            continue
        if m.group(3) is None:
            raise InputError(source, f"unknown_shares {m.group(2)!r} is not a non-negative integer", n)
        if not re.fullmatch(r"[0-9]+", m.group(3)) or int(m.group(3)) > INT_MAX:
            raise InputError(source, f"unknown_shares {m.group(3)!r} is not a non-negative integer", n)
        unknown = int(m.group(3))
    return unknown, res


def _decay_time(value: str) -> int | None:
    """``fairshare_decay_time`` as PBS reads a time: seconds, ``MM:SS`` or ``HH:MM:SS``."""
    if not re.fullmatch(r"[0-9]+(:[0-9]+){0,2}", value):
        return None
    seconds = 0
    for part in value.split(":"):
        seconds = seconds * 60 + int(part)
    return seconds


def sched_decay_values(text: str, source: str) -> tuple[float | None, int | None]:
    """``fairshare_decay_factor`` and ``fairshare_decay_time`` (seconds) from ``sched_config``;
    None for one that is absent (the scheduler then uses 0.5 and 24:00:00).

    Raises
    ------
    InputError
        A factor outside (0, 1) or a time that is not seconds, ``MM:SS`` or ``HH:MM:SS`` above 0
        (pbs_sched refuses both).
    """
    factor: float | None = None
    period: int | None = None
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        m = re.match(r"(fairshare_decay_factor|fairshare_decay_time)\s*:\s*(\S+)", body)
        if not m:
            continue
        if m.group(1) == "fairshare_decay_factor":
            try:
                factor = float(m.group(2))
            except ValueError:
                factor = None
            if factor is None or not 0 < factor < 1:
                raise InputError(source, f"fairshare_decay_factor {m.group(2)!r} is not a number between 0 and 1", n)
        else:
            period = _decay_time(m.group(2))
            if not period:
                raise InputError(source, f"fairshare_decay_time {m.group(2)!r} is not a time above 0 "
                                         "(seconds or HH:MM:SS)", n)
    return factor, period


def load_pbs_folder(path: str | Path) -> Snapshot:
    """Read a PBS folder.

    Raises
    ------
    InputError
        No such folder, no ``resource_group``, or a file present but malformed.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(str(path), "no such folder" if not folder.exists() else "not a folder")
    rg = folder / FILES["resource_group"]
    if not rg.is_file():
        raise InputError(str(rg), "no such file (a PBS folder needs resource_group)")
    warnings: list[str] = []
    usage = next((folder / name for name in USAGE_FILES if (folder / name).is_file()), None)
    if usage is None:
        warnings.append(f"{folder}: no usage file ({', '.join(USAGE_FILES)}): every entity shows usage 1 (none)")
    unknown, res = 0, None
    factor: float | None = None
    period: int | None = None
    conf = folder / FILES["sched_config"]
    if conf.is_file():
        text = conf.read_text(encoding="utf-8", errors="replace")
        unknown, res = sched_config_values(text, str(conf))
        factor, period = sched_decay_values(text, str(conf))
    else:
        warnings.append(f"{conf}: not saved; unknown_shares taken as 0 (the OpenPBS default)")
    tree = replace(read_pbs(rg, usage, unknown_shares=unknown, usage_res=res or "cput"),
                   decay_factor=factor, decay_time_s=period)
    taken = datetime.fromtimestamp(rg.stat().st_mtime, timezone.utc)
    stamp = folder / FILES["captured_at"]
    if stamp.is_file():
        try:
            taken = datetime.strptime(stamp.read_text().strip(), _DATE_U).replace(tzinfo=timezone.utc)
        except ValueError:
            warnings.append(f"{stamp}: not a 'date -u' line; using the file time")
    qstat = folder / QSTAT_FILE
    jobs = tuple(jobs_from_qstat_json(qstat.read_bytes(), str(qstat), saved_zone(folder))) if qstat.is_file() else ()
    caps = frozenset({"usage", "printed", "jobs"} if qstat.is_file() else {"usage", "printed"})
    return Snapshot(cluster=folder.name, source=f"PBS folder {folder}", taken_at=taken, pbs=tree, jobs=jobs,
                    warnings=tuple(warnings), capabilities=caps, zone=saved_zone(folder))


def pbs_home(conf: Path | None = None) -> Path:
    """``$PBS_HOME``: the environment variable, else ``PBS_HOME=`` in the PBS configuration file
    (``$PBS_CONF_FILE``, else ``/etc/pbs.conf``), else :data:`DEFAULT_PBS_HOME` (the order the PBS
    commands use: the environment overrides the file)."""
    if os.environ.get("PBS_HOME"):
        return Path(os.environ["PBS_HOME"])
    if conf is None:
        conf = conf_file()
    try:
        text = conf.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "PBS_HOME" and value.strip():
            return Path(value.strip().strip('"'))
    return Path(DEFAULT_PBS_HOME)


def conf_file() -> Path:
    """The PBS configuration file the PBS commands read: ``$PBS_CONF_FILE``, else ``/etc/pbs.conf``."""
    return Path(os.environ["PBS_CONF_FILE"]) if os.environ.get("PBS_CONF_FILE") else PBS_CONF


def date_u(t: datetime) -> str:
    """``t`` (UTC) as ``date -u`` prints it: ``Sun Nov  2 20:03:04 UTC 2026`` (day space-padded)."""
    t = t.astimezone(timezone.utc)
    return f"{t:%a %b} {t.day:2d} {t:%H:%M:%S} UTC {t.year}"


def _run_pbsfs(timeout: float) -> bytes:
    """``pbsfs``'s stdout (no shell, no input), or :class:`SourceUnavailable` saying why not."""
    args = ["pbsfs"]
    try:
        returncode, stdout, stderr = run_in_group(args, timeout)  # a hung pbsfs dies with its children
    except FileNotFoundError:
        raise SourceUnavailable("pbsfs: command not found (run capture --pbs on the PBS server, "
                                "with $PBS_EXEC/sbin on PATH)") from None
    except subprocess.TimeoutExpired:
        raise SourceUnavailable(f"pbsfs: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise SourceUnavailable(f"pbsfs: {exc.strerror or exc}") from None
    if returncode != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        hint = " (pbsfs must run as root)" if hasattr(os, "geteuid") and os.geteuid() != 0 else ""
        raise SourceUnavailable(f"pbsfs: exit status {returncode}: {err[0] if err else 'no message'}{hint}")
    return stdout


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def capture(path: str | Path, timeout: float = CAPTURE_TIMEOUT) -> str:
    """Save a PBS server's fairshare files into ``path`` (``fairtop capture --pbs DIR``).

    Copies ``$PBS_HOME/sched_priv/resource_group``, ``sched_config`` and the scheduler's binary
    ``usage`` file (see :func:`pbs_home`), writes ``pbsfs``'s output to ``pbsfs.txt`` (every
    node's usage as the scheduler holds it), ``qstat -f -F json`` to ``qstat_f.json`` (the jobs:
    why each waits, PBS's ``comment``, and its ``estimated.start_time``; left out with a note when
    qstat fails) and the time to ``captured_at.txt`` in ``date -u``'s format, so ``fairtop --from
    DIR`` and ``fairtop report --from DIR`` read it back (:func:`load_pbs_folder`).

    Returns
    -------
    str
        A summary (what was written where), ending in a newline.

    Raises
    ------
    SourceUnavailable
        ``resource_group`` is missing under ``$PBS_HOME/sched_priv``, or ``pbsfs`` is not
        installed, fails or times out. Nothing is written then.
    InputError
        ``path`` cannot be created or written.
    """
    started = datetime.now(timezone.utc)
    priv = pbs_home() / "sched_priv"
    rg = priv / FILES["resource_group"]
    if not rg.is_file():
        raise SourceUnavailable(f"{rg}: no such file (is this the PBS server? set PBS_HOME or "
                                f"PBS_HOME= in {conf_file()})")
    conf = priv / FILES["sched_config"]
    usage_file = priv / "usage"
    for _ in range(3):  # the scheduler rewrites usage each cycle: keep a file and a listing of one moment
        before = _read_or_none(usage_file)
        listing = _run_pbsfs(timeout)
        usage = _read_or_none(usage_file)
        if usage == before:
            break
    queue, qstat_failed = run_qstat(timeout)
    folder = Path(path)
    written = [FILES["resource_group"]]
    try:
        make_dir(folder, PUBLIC_DIR)  # today's modes, stated: 0755 folder, 0644 files, whatever the umask
        write_file(folder / FILES["resource_group"], rg.read_bytes(), PUBLIC)
        if conf.is_file():
            write_file(folder / FILES["sched_config"], conf.read_bytes(), PUBLIC)
            written.append(FILES["sched_config"])
        elif (folder / FILES["sched_config"]).exists():
            (folder / FILES["sched_config"]).unlink()  # not an earlier capture's beside this one
        if usage is not None:  # the exact doubles and the last decay's time, which pbsfs does not print
            write_file(folder / "usage", usage, PUBLIC)
            written.append("usage")
        write_file(folder / "pbsfs.txt", listing, PUBLIC)
        if queue is not None:
            write_file(folder / QSTAT_FILE, queue, PUBLIC)
            write_file(folder / ZONE_FILE, local_zone_name() + "\n", PUBLIC)  # qstat's times are wall-clock times
            written += [QSTAT_FILE, ZONE_FILE]
        elif (folder / QSTAT_FILE).exists():
            (folder / QSTAT_FILE).unlink()  # not an earlier capture's queue beside this one
        write_file(folder / FILES["captured_at"], date_u(started) + "\n", PUBLIC)
    except OSError as exc:
        raise InputError(str(folder), f"cannot write: {exc.strerror or exc}") from None
    written += ["pbsfs.txt", FILES["captured_at"]]
    missing = "" if conf.is_file() else f"; {conf} not found, so unknown_shares is taken as 0"
    if qstat_failed:
        missing += f"; {qstat_failed}"
    entities = sum(1 for line in listing.decode("utf-8", "replace").splitlines() if " Grp:" in line)
    return (f"captured {priv} into {folder}: {', '.join(written)} "
            f"({entities} fairshare entities in pbsfs){missing}\n")
