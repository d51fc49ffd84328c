"""Which source ``fairtop`` opens when nothing names one (no source flag, no ``source`` in any
config): the cluster it runs on, never a made-up one in its place.

1. Slurm, when ``sshare`` is on PATH and a controller is configured: ``scontrol ping`` (one cheap
   RPC, well under a second) names a slurmctld, up or down. A controller that is down is still this
   cluster: the live source then says so, rather than a demo standing in for it.
2. PBS Professional, when its commands (``qstat``, ``pbsfs``) or its files (``$PBS_HOME``,
   ``/etc/pbs.conf``) are here: the live PBS source (it says plainly when the files are not
   readable by this user).
3. Else the built-in demo, saying that no scheduler was found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Detected", "detect"]


@dataclass(frozen=True)
class Detected:
    source: str
    """A registry source name: ``slurm``, ``pbs`` or ``demo``."""
    why: str
    """One line: what was found (``fairtop info`` prints it; the demo shows it)."""


def _ping(timeout: float = 5.0) -> tuple[bool, str]:
    """Does a Slurm configuration name a controller here? (answer, scontrol's first line)"""
    try:
        done = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"scontrol ping: {exc}"
    out = (done.stdout.strip() or done.stderr.strip()).splitlines()
    first = out[0] if out else f"exit status {done.returncode}"
    return "Slurmctld(" in done.stdout, first if "Slurmctld(" in done.stdout else (out[-1] if out else first)


def detect(which: Callable[[str], str | None] = shutil.which,
           ping: Callable[[], tuple[bool, str]] = _ping,
           pbs_paths: tuple[Path, ...] | None = None) -> Detected:
    """The source to open when none is configured (see the module docstring)."""
    skipped = ""
    if which("sshare"):
        if which("scontrol") is None:
            return Detected("slurm", "sshare is on PATH (no scontrol to ask for the controller)")
        answers, line = ping()
        if answers:
            return Detected("slurm", f"sshare is on PATH and scontrol ping says: {line}")
        skipped = f"sshare is on PATH but no Slurm controller is configured here ({line})"
    if pbs_paths is None:
        from tui.sources.pbs_folder import conf_file, pbs_home

        pbs_paths = (conf_file(), pbs_home() / "sched_priv")
    found = [cmd for cmd in ("qstat", "pbsfs") if which(cmd)] + [str(p) for p in pbs_paths if p.exists()]
    if found:
        return Detected("pbs", (skipped + "; " if skipped else "") + f"PBS Professional is here ({', '.join(found)})")
    pbs_conf = os.environ.get("PBS_CONF_FILE") or "/etc/pbs.conf"
    if skipped:
        return Detected("demo", f"the built-in demo, made-up numbers: {skipped}, and no PBS either (qstat, pbsfs, "
                                f"{pbs_conf})")
    return Detected("demo", "the built-in demo, made-up numbers: no scheduler found here (no sshare, qstat or "
                            f"pbsfs on PATH, no {pbs_conf})")
