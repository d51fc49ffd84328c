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
==========================  ===============================================  ==========

``sched_config`` gives ``unknown_shares`` and ``fairshare_usage_res``. A folder holding
``resource_group`` and no ``sshare_a_l_P.psv`` is a PBS folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from tui.model import Snapshot
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.pbs import INT_MAX, read_pbs

__all__ = ["FILES", "USAGE_FILES", "is_pbs_folder", "load_pbs_folder", "sched_config_values", "pbs_home",
           "date_u", "capture"]

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
    conf = folder / FILES["sched_config"]
    if conf.is_file():
        unknown, res = sched_config_values(conf.read_text(encoding="utf-8", errors="replace"), str(conf))
    else:
        warnings.append(f"{conf}: not saved; unknown_shares taken as 0 (the OpenPBS default)")
    tree = read_pbs(rg, usage, unknown_shares=unknown, usage_res=res or "cput")
    taken = datetime.fromtimestamp(rg.stat().st_mtime, timezone.utc)
    stamp = folder / FILES["captured_at"]
    if stamp.is_file():
        try:
            taken = datetime.strptime(stamp.read_text().strip(), _DATE_U).replace(tzinfo=timezone.utc)
        except ValueError:
            warnings.append(f"{stamp}: not a 'date -u' line; using the file time")
    return Snapshot(cluster=folder.name, source=f"PBS folder {folder}", taken_at=taken, pbs=tree,
                    warnings=tuple(warnings))


def pbs_home(conf: Path = PBS_CONF) -> Path:
    """``$PBS_HOME``: the environment variable, else ``PBS_HOME=`` in ``/etc/pbs.conf``, else
    :data:`DEFAULT_PBS_HOME` (the order the PBS commands use: the environment overrides the file)."""
    if os.environ.get("PBS_HOME"):
        return Path(os.environ["PBS_HOME"])
    try:
        text = conf.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "PBS_HOME" and value.strip():
            return Path(value.strip().strip('"'))
    return Path(DEFAULT_PBS_HOME)


def date_u(t: datetime) -> str:
    """``t`` (UTC) as ``date -u`` prints it: ``Sun Nov  2 20:03:04 UTC 2026`` (day space-padded)."""
    t = t.astimezone(timezone.utc)
    return f"{t:%a %b} {t.day:2d} {t:%H:%M:%S} UTC {t.year}"


def _run_pbsfs(timeout: float) -> bytes:
    """``pbsfs``'s stdout (no shell, no input), or :class:`SourceUnavailable` saying why not."""
    args = ["pbsfs"]
    try:
        proc = subprocess.run(args, capture_output=True, timeout=timeout, shell=False,
                              stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise SourceUnavailable("pbsfs: command not found (run capture --pbs on the PBS server, "
                                "with $PBS_EXEC/sbin on PATH)") from None
    except subprocess.TimeoutExpired:
        raise SourceUnavailable(f"pbsfs: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise SourceUnavailable(f"pbsfs: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        hint = " (pbsfs must run as root)" if hasattr(os, "geteuid") and os.geteuid() != 0 else ""
        raise SourceUnavailable(f"pbsfs: exit status {proc.returncode}: {err[0] if err else 'no message'}{hint}")
    return proc.stdout


def capture(path: str | Path, timeout: float = CAPTURE_TIMEOUT) -> str:
    """Save a PBS server's fairshare files into ``path`` (``fairtop capture --pbs DIR``).

    Copies ``$PBS_HOME/sched_priv/resource_group`` and ``sched_config`` (see :func:`pbs_home`),
    writes ``pbsfs``'s output to ``pbsfs.txt`` (every node's usage as the scheduler holds it) and
    the time to ``captured_at.txt`` in ``date -u``'s format, so ``fairtop --from DIR`` and
    ``fairtop report --from DIR`` read it back (:func:`load_pbs_folder`).

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
                                f"PBS_HOME= in {PBS_CONF})")
    conf = priv / FILES["sched_config"]
    listing = _run_pbsfs(timeout)
    folder = Path(path)
    written = [FILES["resource_group"]]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rg, folder / FILES["resource_group"])
        if conf.is_file():
            shutil.copyfile(conf, folder / FILES["sched_config"])
            written.append(FILES["sched_config"])
        elif (folder / FILES["sched_config"]).exists():
            (folder / FILES["sched_config"]).unlink()  # not an earlier capture's beside this one
        (folder / "pbsfs.txt").write_bytes(listing)
        (folder / FILES["captured_at"]).write_text(date_u(started) + "\n")
    except OSError as exc:
        raise InputError(str(folder), f"cannot write: {exc.strerror or exc}") from None
    written += ["pbsfs.txt", FILES["captured_at"]]
    missing = "" if conf.is_file() else f"; {conf} not found, so unknown_shares is taken as 0"
    entities = sum(1 for line in listing.decode("utf-8", "replace").splitlines() if " Grp:" in line)
    return (f"captured {priv} into {folder}: {', '.join(written)} "
            f"({entities} fairshare entities in pbsfs){missing}\n")
