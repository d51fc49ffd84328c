"""What each Slurm release prints and offers, decided in one place (from each release's source).

The engine computes the same numbers for every release; what differs is what ``sshare`` prints of
them, which commands and fields exist, and the REST plugin versions. Each rule below names the
release that brought it and the change in SchedMD's repository:

* **sshare's classic FairShare** (``PriorityFlags=NO_FAIR_TREE``). Up to 25.05, sshare recomputed
  ``2**(-(E/S)/d)`` client-side from the EffectvUsage and NormShares it received, for every row,
  accounts and the root included (``src/sshare/process.c``). From 25.11 (ce4741b891 "Use fs_factor
  everywhere instead of calculating it when PriorityFlags=NO_FAIR_TREE") it prints slurmctld's own
  ``fs_factor`` for users, computed there from the unrounded values, and nothing for accounts, as
  under Fair Tree.
* **sacctmgr's LFT and RGT** are gone from 23.11 (98b6367f61 "Don't pack lft and rgt for newer
  code"): slurmdbd orders associations by their ``lineage`` (``/root/acct/0-user/``), and slurmctld
  builds each children list in that order (``slurmdb_sort_hierarchical_assoc_list``): among
  siblings, users (``0-NAME``) before accounts, each by ``strcmp`` of its lineage component.
  Only Fair Tree ties between siblings depend on this order.
* **sshare --json** exists from 23.11.
* **slurmrestd** plugin versions: v0.0.36-v0.0.38 (22.05), v0.0.40-v0.0.42 (24.11),
  v0.0.42-v0.0.45 (26.05).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SlurmRelease", "release", "NEWEST_KNOWN", "OLDEST_KNOWN"]

#: The releases fairtop has been checked against, oldest and newest (tests/fixtures).
OLDEST_KNOWN = (22, 5)
NEWEST_KNOWN = (26, 5)


@dataclass(frozen=True)
class SlurmRelease:
    """One Slurm release's ways; ``version`` as the source reported it (None: not said)."""

    version: str | None
    major: tuple[int, int] | None
    """(year, month), e.g. (26, 5); None when the version is not known."""

    @property
    def controller_classic_fairshare(self) -> bool:
        """sshare prints slurmctld's classic FairShare for users and none for accounts (25.11+);
        else it recomputes it from the printed EffectvUsage and NormShares for every row."""
        return self.major is not None and self.major >= (25, 11)

    @property
    def sacctmgr_lft(self) -> bool:
        """``sacctmgr show assoc format=...,LFT,RGT`` works (before 23.11)."""
        return self.major is None or self.major < (23, 11)

    @property
    def lineage_order(self) -> bool:
        """Siblings are ordered by their lineage (23.11+), else by slurmdbd's LFT."""
        return self.major is not None and self.major >= (23, 11)

    @property
    def sshare_json(self) -> bool:
        return self.major is not None and self.major >= (23, 11)

    @property
    def newer_than_known(self) -> bool:
        return self.major is not None and self.major > NEWEST_KNOWN

    def note(self) -> str | None:
        """One line for a release newer than any fairtop knows (None otherwise)."""
        if not self.newer_than_known:
            return None
        return (f"Slurm {self.version} is newer than any release fairtop knows (newest: "
                f"{NEWEST_KNOWN[0]}.{NEWEST_KNOWN[1]:02d}): its output is read and printed as "
                f"{NEWEST_KNOWN[0]}.{NEWEST_KNOWN[1]:02d} prints it; a difference is flagged, not hidden")


_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def release(version: str | None) -> SlurmRelease:
    """The release of a version string as Slurm prints it (``26.05.3``, ``slurm 24.11.7``,
    ``22.05.8``); unknown for None or text without one (the 22.05 ways)."""
    m = _VERSION.search(version or "")
    if not m:
        return SlurmRelease(version, None)
    return SlurmRelease(m.group(0), (int(m.group(1)), int(m.group(2))))
