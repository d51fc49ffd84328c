"""The one list of sources: each is a :class:`Source` with its name, flag, liveness, capabilities
and ``load() -> Snapshot``. The CLI builds its flags from it, the config validates ``source =``
against it, and the app asks it whether to refresh. Adding a source is one registration here.

Modelled on Harlequin's adapter: a small class that names itself and knows how to connect; the
heavy module behind it (httpx for slurmrestd, subprocess for live Slurm) is imported only by
``load``, so ``fairtop --help`` stays light.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

if TYPE_CHECKING:  # the snapshot (numpy) comes with a source's load(): the config and `standing` need neither
    from tui.model import Snapshot
    # imported by SlurmSource.live_slurm at first use; no cycle (slurm_cli never imports this)
    from tui.sources.rest_sshare import RestSshare
    from tui.sources.slurm_cli import LiveSlurm
    from tui.sources.slurmrestd import LiveRest

__all__ = ["CAPABILITIES", "Capability", "Source", "SOURCES", "Stage", "make", "register", "source_class"]

Stage: TypeAlias = "tuple[Snapshot, tuple[str, ...]]"
"""A snapshot and the commands still loading for it (none: the snapshot is whole)."""

Capability = Literal["usage", "printed", "jobs", "factors", "partitions", "budgets", "allocations"]
CAPABILITIES: dict[str, str] = {
    "usage": "raw usage of every association (what fairshare is computed from)",
    "printed": "the scheduler's own printed fairshare columns (sshare or pbsfs)",
    "jobs": "running and pending jobs with their priority",
    "factors": "the parts of each pending job's priority (sprio)",
    "partitions": "partitions and their TRESBillingWeights",
    "budgets": "Slurm GrpTRESMins budgets",
    "allocations": "service-unit allocations",
}
"""Capability -> what it means, for messages that say what a source lacks."""


class Source(ABC):
    """Where a snapshot comes from.

    Class attributes describe the source to the CLI and the config; an instance is configured
    with its ``value`` (a folder, a URL, a demo kind) and the viewer's name.
    """

    name: ClassVar[str]
    """``source = NAME`` in the config."""
    flag: ClassVar[str]
    """The command-line flag that selects it (``--from``)."""
    metavar: ClassVar[str | None] = None
    """None: the flag is a switch; else it takes a value shown as METAVAR."""
    choices: ClassVar[tuple[str, ...]] = ()
    """Allowed values of an optional value (the first is the default)."""
    setting: ClassVar[str | None] = None
    """The config key holding the value (``folder = "DIR"``), if any."""
    help: ClassVar[str]
    live: ClassVar[bool] = False
    """Re-read every ``refresh_rate`` seconds (a live cluster) or read once (demo, saved)."""
    instant: ClassVar[bool] = False
    """Made in memory in well under a second, no files or commands (the demo): the app reads it
    before its first frame instead of in a worker."""
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, value: str | None = None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> None:
        if self.metavar and not self.choices and not value:
            key = self.setting or self.name
            raise ValueError(f'source "{self.name}" needs {key} = "{self.metavar}" (or {self.flag} {self.metavar})')
        if self.choices and value and value not in self.choices:
            raise ValueError(f"{self.flag} takes one of {', '.join(self.choices)}, not {value!r}")
        self.value = value or (self.choices[0] if self.choices else None)
        self.me = me
        self.refresh_s = refresh_s
        """The app's refresh period (``refresh_rate``): how often a live source is read."""
        self.why = ""
        """Why this source was opened when nothing named it (:mod:`tui.sources.detect`; "" when named)."""
        self.ca_file: str | None = None
        """The CAs (PEM) an https source (slurmrestd) is verified against (config ``ca_file``);
        None: the system's."""
        self.cluster = cluster
        """The cluster's name from a ``[[cluster]]`` entry ("" for a single source); live Slurm asks
        that cluster (``-M NAME``)."""
        self.one_user = False
        """The caller serves :attr:`me` alone (``fairtop jobs``, ``fairtop standing``): a Slurm
        source may then read squeue's queue as columns and make ``Job`` of that user's jobs only
        (``Snapshot.queue``; :func:`tui.sources.saved.snapshot_from_files`). The app, which
        shows every user's jobs, leaves it False."""

    @abstractmethod
    def read(self) -> Snapshot:
        """Read the outside data (may block: the app calls :meth:`load` in a worker thread)."""

    def check(self) -> None:  # noqa: B027 - optional hook: most sources have nothing to check early
        """Fail fast, before the app starts, on what can be known without reading the data
        (a missing folder). Raises :class:`~tui.sources.errors.InputError`."""

    def load(self) -> Snapshot:
        """The snapshot, stamped with what this source can provide."""
        return self._stamp(self.read())

    def load_stages(self) -> Iterator[Stage]:
        """The snapshot in stages, each with what is still loading (the last one: nothing), so
        the app can draw before a slow command returns. One stage unless the source knows better."""
        yield self.load(), ()

    def _stamp(self, snap: Snapshot, lacking: frozenset[str] = frozenset()) -> Snapshot:
        if snap.capabilities is not None:
            return snap
        return replace(snap, capabilities=self.capabilities - lacking)

    def refresh_now(self) -> None:  # noqa: B027 - optional hook: only live sources keep a cadence
        """The user asked for fresh data (``r``): a live source reads everything at its next load."""

    def is_live(self) -> bool:
        """Read again every refresh (:attr:`live`, or a folder that follows a publisher)."""
        return self.live

    def describe(self) -> str:
        """``name`` or ``name:value``, as the state file remembers the last source."""
        return f"{self.name}:{self.value}" if self.value and self.metavar else self.name


SOURCES: dict[str, type[Source]] = {}
"""Registered sources by name, in the order the CLI lists them."""


def register(cls: type[Source]) -> type[Source]:
    """Class decorator: add a source to :data:`SOURCES`."""
    SOURCES[cls.name] = cls
    return cls


def source_class(name: str) -> type[Source]:
    """The registered source called ``name`` (KeyError if none)."""
    return SOURCES[name]


def make(name: str, value: str | None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> Source:
    """A configured source (``cluster``: its ``[[cluster]]`` name). Raises ValueError for a missing
    or bad value."""
    return SOURCES[name](value, me, refresh_s, cluster)


# --- the sources -----------------------------------------------------------------------------

SLURM_ALL = frozenset({"usage", "printed", "jobs", "factors", "partitions"})
_GIVES = {"sprio_l.txt": ("jobs", "factors"), "squeue.txt": ("jobs",), "scontrol_show_partition.txt": ("partitions",)}
"""Live Slurm: the capability each optional command's output gives (file names as saved.FILES)."""


@register
class DemoSource(Source):
    name = "demo"
    flag = "--demo"
    metavar = "KIND"
    choices = ("slurm", "pbs")
    setting = "demo"
    help = "the built-in demo cluster (the default): slurm, or pbs for a PBS Professional site"
    instant = True
    capabilities = SLURM_ALL | {"allocations"}

    def read(self) -> Snapshot:
        if self.value == "pbs":
            from tui.sources.demo_pbs import demo_pbs_snapshot

            return demo_pbs_snapshot(me=self.me or None)
        from tui.sources.demo import demo_snapshot

        return demo_snapshot(seed=0, me=self.me or None)

    def load(self) -> Snapshot:
        snap = self.read()
        if self.why:  # the demo because no scheduler answered here: say so on screen
            snap = replace(snap, warnings=(*snap.warnings, self.why))
        caps = frozenset({"usage", "printed"}) if self.value == "pbs" else self.capabilities
        return replace(snap, capabilities=caps)


@register
class FolderSource(Source):
    name = "folder"
    flag = "--from"
    metavar = "DIR"
    setting = "folder"
    help = ("saved command outputs in DIR (Slurm: as 'fairtop capture' writes; PBS: resource_group + usage); "
            "a symlink such as DIR/current of 'fairtop capture --every' is followed")
    capabilities = SLURM_ALL

    def __init__(self, value: str | None = None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> None:
        super().__init__(value, me, refresh_s, cluster)
        self._last: tuple[str, Snapshot] | None = None
        self.view_note = ""
        """Which part of a PrivateData capture is read, and why ("" when it is not split)."""

    def is_live(self) -> bool:
        """A symlink (``current`` of a publisher) is followed: re-read when it points elsewhere."""
        from pathlib import Path

        return Path(self.value or "").is_symlink()

    def load(self) -> Snapshot:
        from pathlib import Path

        target = str(Path(self.value or "").resolve())
        if self._last is not None and self._last[0] == target:
            return self._last[1]  # the publisher has not moved on: same snapshot, no re-read
        snap = super().load()
        self._last = (target, snap)
        return snap

    def folder(self) -> str:
        """The folder to read: ``value``, or within a capture a publisher split for PrivateData,
        the whole capture if this Unix user may read it, else their own view
        (:func:`tui.sources.private_publish.view_folder`)."""
        from tui.sources.private_publish import my_folder

        assert self.value is not None
        folder, self.view_note = my_folder(self.value)
        return str(folder)

    def check(self) -> None:
        from pathlib import Path

        from tui.sources.errors import InputError
        from tui.sources.pbs_folder import is_pbs_folder
        from tui.sources.saved import FILES

        assert self.value is not None
        if not Path(self.value).is_dir():
            raise InputError(self.value, ("no such folder" if not Path(self.value).exists() else "not a folder")
                             + "; write one with 'fairtop capture DIR' (Slurm) or 'fairtop capture --pbs DIR' (PBS)")
        folder = Path(self.folder())
        hint = "; write one with 'fairtop capture DIR' (Slurm) or 'fairtop capture --pbs DIR' (PBS)"
        if not folder.is_dir():
            raise InputError(self.value, ("no such folder" if not folder.exists() else "not a folder") + hint)
        if not (folder / FILES["sshare"]).is_file() and not is_pbs_folder(folder):
            raise InputError(self.value, f"holds neither {FILES['sshare']} (Slurm) nor resource_group (PBS)" + hint)

    def read(self) -> Snapshot:
        from tui.sources.pbs_folder import is_pbs_folder, load_pbs_folder
        from tui.sources.saved import load_folder

        folder = self.folder()
        if is_pbs_folder(folder):
            return load_pbs_folder(folder)  # capabilities: "jobs" too where qstat's output was saved
        return load_folder(folder, self.me if self.one_user else "")


@register
class SlurmSource(Source):
    name = "slurm"
    flag = "--slurm"
    help = "the live cluster (sshare, scontrol, sacctmgr, sprio, squeue)"
    live = True
    capabilities = SLURM_ALL

    def __init__(self, value: str | None = None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> None:
        super().__init__(value, me, refresh_s, cluster)
        self._live: LiveSlurm | None = None

    @property
    def live_slurm(self) -> LiveSlurm:
        """The commands, each on its own cadence (sshare once per PriorityCalcPeriod, squeue and
        sprio every refresh, sacctmgr every 10 minutes), with ``-M NAME`` for a named cluster;
        made at the first read."""
        if self._live is None:
            from tui.sources.slurm_cli import Cadence, LiveSlurm

            self._live = LiveSlurm(Cadence(jobs_s=self.refresh_s), on=self.cluster)
        return self._live

    def read(self) -> Snapshot:
        self.live_slurm.one_user = self.me if self.one_user else ""
        return self.live_slurm.read()

    def load_stages(self) -> Iterator[Stage]:
        """sshare (with the config) first, the other commands after (:meth:`LiveSlurm.read_stages`).
        An early stage lacks the jobs or partitions whose commands still run: panes say so
        rather than show "no jobs"."""
        from tui.sources.slurm_cli import command_label

        for snap, running in self.live_slurm.read_stages():
            lacking = frozenset(cap for name in running for cap in _GIVES.get(name, ()))
            yield self._stamp(snap, lacking), tuple(command_label(name) for name in running)

    def refresh_now(self) -> None:
        self.live_slurm.refresh_usage_now()


@register
class PbsSource(Source):
    name = "pbs"
    flag = "--pbs"
    help = ("the PBS Professional server fairtop runs on ($PBS_HOME/sched_priv, pbsfs and qstat -f, as "
            "'fairtop capture --pbs' reads them; root or a PBS manager)")
    live = True
    capabilities = frozenset({"usage", "printed", "jobs"})

    def read(self) -> Snapshot:
        import os
        import tempfile
        from pathlib import Path

        from tui.sources.pbs_folder import capture, load_pbs_folder

        with tempfile.TemporaryDirectory(prefix="fairtop-pbs-") as tmp:
            capture(Path(tmp) / "now")
            snap = load_pbs_folder(Path(tmp) / "now")
        return replace(snap, source=f"live PBS ({os.uname().nodename})")


def _live_rest(where: str, ca_file: str | None = None) -> LiveRest:
    """slurmrestd at ``where``: an http(s) URL (https verified against ``ca_file`` or the
    system's CAs), else a unix socket path."""
    from tui.sources.slurmrestd import LiveRest

    if where.startswith(("http://", "https://")):
        return LiveRest(url=where, ca_file=ca_file)
    return LiveRest(socket=where)


@register
class SlurmrestdSource(Source):
    name = "slurmrestd"
    flag = "--slurmrestd"
    metavar = "SOCKET|URL"
    setting = "slurmrestd"
    help = ("slurmrestd at a unix socket or URL (JWT from $SLURM_JWT): tree, partitions, jobs; 22.05 gives no "
            "usage (see --slurmrestd-sshare)")
    live = True
    capabilities = frozenset({"partitions", "jobs"})

    def __init__(self, value: str | None = None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> None:
        super().__init__(value, me, refresh_s, cluster)
        self._rest: LiveRest | None = None

    @property
    def rest(self) -> LiveRest:
        """slurmrestd: jobs every read, associations (slurmdbd) and partitions every 10 minutes."""
        if self._rest is None:
            self._rest = _live_rest(self.value or "", self.ca_file)
        return self._rest

    def read(self) -> Snapshot:
        return self.rest.read().snapshot

    def refresh_now(self) -> None:
        self.rest.refresh_now()


@register
class SlurmrestdSshareSource(Source):
    name = "slurmrestd_sshare"
    flag = "--slurmrestd-sshare"
    metavar = "SOCKET|URL"
    setting = "slurmrestd"
    help = ("slurmrestd's tree, partitions and jobs, with the usage and printed fairshare columns of sshare "
            "(and scontrol's assoc_mgr and config), asked once per PriorityCalcPeriod: for 22.05, whose API "
            "has no usage")
    live = True
    capabilities = frozenset({"usage", "printed", "jobs", "partitions"})

    def __init__(self, value: str | None = None, me: str = "", refresh_s: float = 30.0, cluster: str = "") -> None:
        super().__init__(value, me, refresh_s, cluster)
        self._both: RestSshare | None = None

    @property
    def both(self) -> RestSshare:
        """slurmrestd (jobs every read, the tree every 10 minutes) and the usage side (sshare and
        assoc_mgr once per PriorityCalcPeriod); made at the first read."""
        if self._both is None:
            from tui.sources.rest_sshare import RestSshare

            self._both = RestSshare(_live_rest(self.value or "", self.ca_file), refresh_s=self.refresh_s)
        return self._both

    def read(self) -> Snapshot:
        return self.both.read()

    def refresh_now(self) -> None:
        self.both.refresh_now()
