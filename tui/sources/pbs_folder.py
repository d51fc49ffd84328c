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

import re
from datetime import datetime, timezone
from pathlib import Path

from tui.model import Snapshot
from tui.sources.errors import InputError
from tui.sources.pbs import INT_MAX, read_pbs

__all__ = ["FILES", "USAGE_FILES", "is_pbs_folder", "load_pbs_folder", "sched_config_values"]

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

    ``sched_config`` lines are ``name: value [prime|non_prime|all|none]``; ``#`` starts a comment.
    """
    unknown, res = 0, None
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        m = re.match(r"(unknown_shares|fairshare_usage_res)\s*:\s*(\S+)", body)
        if not m:
            continue
        if m.group(1) == "fairshare_usage_res":
            res = m.group(2)
            continue
        if not re.fullmatch(r"[0-9]+", m.group(2)) or int(m.group(2)) > INT_MAX:
            raise InputError(source, f"unknown_shares {m.group(2)!r} is not a non-negative integer", n)
        unknown = int(m.group(2))
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
            taken = datetime.strptime(stamp.read_text().strip(), "%a %b %d %H:%M:%S %Z %Y").replace(tzinfo=timezone.utc)
        except ValueError:
            warnings.append(f"{stamp}: not a 'date -u' line; using the file time")
    return Snapshot(cluster=folder.name, source=f"PBS folder {folder}", taken_at=taken, pbs=tree,
                    warnings=tuple(warnings))
