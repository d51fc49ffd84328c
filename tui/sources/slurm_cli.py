"""Live Slurm: run the client commands and build a :class:`~tui.model.Snapshot`.

Every command runs from an argument list (never a shell string: account and user names are
user input), with a timeout, and its stdout is kept under the file name capture.sh uses, so
:func:`live_snapshot` and ``load_folder(capture(dir))`` go through the same code
(:func:`tui.sources.saved.snapshot_from_files`).

Only ``sshare`` is required; any other command that is missing, refused (PrivateData) or fails
becomes a warning in the snapshot. A missing command, a non-zero exit or a controller that does
not answer for sshare raises :class:`~tui.sources.errors.SourceUnavailable`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tui.security.file_modes import PRIVATE, PRIVATE_DIR, PUBLIC, PUBLIC_DIR, make_dir, write_file
from tui.model import Snapshot
from tui.slurm_releases import release
from tui.sources import sacct, saved, slurm_text
from tui.sources.ctld_log import CYCLES_FILE
from tui.sources.cluster_split import split_clusters, strip_cluster_header
from tui.sources.commands import DEFAULT_TIMEOUT, Output, _cmdline, _failure, kill_running, run
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.private_data import DBD_CONFIG_FILE, HIDES, USERS_FILE, private_data
from tui.sources.sshare import SshareTable
from tui.sources.zone import ZONE_FILE, local_zone_name

__all__ = ["DEFAULT_TIMEOUT", "ASSOC_FIELDS", "Cadence", "LiveSlurm", "Output", "run", "commands", "collect",
           "live_snapshot", "live_snapshots", "last_decay_cycle", "snapshot_at_cycle", "capture",
           "command_label"]

#: sacctmgr fields capture.sh asks for (LFT gives the children_list order before 23.11).
ASSOC_FIELDS = ("Cluster,Account,User,Partition,ParentName,ParentID,ID,LFT,RGT,Share,Priority,GrpTRESMins,"
                "GrpTRESRunMins,GrpTRES,GrpJobs,GrpJobsAccrue,GrpSubmit,GrpWall,MaxTRESMins,MaxTRES,"
                "MaxTRESPerNode,MaxJobs,MaxJobsAccrue,MaxSubmit,MaxWall,QOS,DefaultQOS")
#: The same from Slurm 23.11, which has no LFT and RGT ("Unknown field 'lft'"): siblings are in
#: lineage order there, which the names give (:func:`tui.sources.saved.lineage_order`).
ASSOC_FIELDS_NO_LFT = ASSOC_FIELDS.replace("LFT,RGT,", "")


def commands(cluster: str = "", on: str = "", lft: bool = True) -> dict[str, list[str]]:
    """File name -> argument list of every command fairtop reads (file names as capture.sh's).

    ``cluster`` limits sacctmgr to one cluster (an argument, not shell text). ``on`` asks another
    cluster of the same slurmdbd: ``-M NAME`` on sshare, scontrol, sprio and squeue (each takes
    it; sprio takes one cluster only), ``cluster=NAME`` for sacctmgr. ``lft``: the release still
    has sacctmgr's LFT field (before 23.11, :mod:`tui.slurm_releases`).
    """
    cluster = on or cluster
    assoc = ["sacctmgr", "-P", "show", "assoc"]
    if cluster:
        assoc += ["where", f"cluster={cluster}"]
    assoc.append(f"format={ASSOC_FIELDS if lft else ASSOC_FIELDS_NO_LFT}")
    m = ["-M", on] if on else []
    f = saved.FILES
    return {
        f["sshare"]: ["sshare", *m, "-a", "-l", "-P"],
        f["config"]: ["scontrol", *m, "show", "config"],
        f["assoc"]: assoc,
        f["partition"]: ["scontrol", *m, "show", "partition"],
        f["node"]: ["scontrol", *m, "show", "node"],
        f["assoc_mgr"]: ["scontrol", *m, "show", "assoc_mgr", "flags=assoc"],
        f["sprio"]: ["sprio", *m, "-l"],
        f["squeue"]: ["squeue", *m, "-a", "-O", ",".join(f"{name}:|" for name in slurm_text.SQUEUE_FIELDS)],
    }


def command_label(name: str) -> str:
    """What the status line calls a command while it runs: ``sacctmgr``, ``scontrol show
    partition``, ``sprio`` (``name`` is its file name, as in :func:`commands`)."""
    args = commands()[name]
    return " ".join(args[:3]) if args[0] == "scontrol" else args[0]


def collect(timeout: float = DEFAULT_TIMEOUT, on: str = "") -> tuple[dict[str, Output], datetime]:
    """Run every command of :func:`commands` (sshare and config first, the rest in parallel);
    ``on``: of that cluster (``-M``), each output without its ``CLUSTER:`` line.

    Returns
    -------
    outputs : dict of file name to Output
        A command that could not run at all has returncode -1 and the reason in stderr.
    started : datetime
        UTC time before the first command.

    Raises
    ------
    SourceUnavailable
        sshare is missing, fails or times out.
    """
    started = datetime.now(timezone.utc)
    f = saved.FILES
    sshare = _unheaded(run(commands(on=on)[f["sshare"]], timeout))  # required: raises
    outputs = {f["sshare"]: sshare}
    outputs[f["config"]] = _soft(commands(on=on)[f["config"]], timeout)
    cluster, lft = on, True
    if outputs[f["config"]].returncode == 0:
        try:
            conf = slurm_text.parse_config(outputs[f["config"]].stdout, "scontrol show config")
        except InputError:
            pass  # reported when the snapshot is built
        else:
            cluster, lft = conf.cluster, release(conf.values.get("SLURM_VERSION")).sacctmgr_lft
    rest = {k: v for k, v in commands(cluster, on, lft).items() if k not in outputs}
    with ThreadPoolExecutor(max_workers=len(rest)) as pool:
        futures = {name: pool.submit(_soft, args, timeout) for name, args in rest.items()}
        try:
            for name, fut in futures.items():
                outputs[name] = fut.result()
        except BaseException:  # interrupted (Ctrl+C, SIGTERM): the pool would wait out every timeout
            kill_running()
            raise
    return outputs, started


def _unheaded(out: Output) -> Output:
    """``out`` without the ``CLUSTER: NAME`` line a ``-M NAME`` run prints first, so it reads as
    the same command's output on that cluster itself (and saves as such)."""
    body = strip_cluster_header(out.stdout)
    return out if body is out.stdout else Output(out.args, out.returncode, body, out.stderr)


def _soft(args: list[str], timeout: float) -> Output:
    """Run an optional command; failures are kept as an Output with the reason in stderr."""
    try:
        return _unheaded(run(args, timeout, check=False))
    except SourceUnavailable as exc:
        return Output(tuple(args), -1, b"", str(exc))


def _reason(out: Output) -> str:
    """One line on what went wrong (or what the command warned about)."""
    if out.returncode == 0:
        return out.first_error
    return _failure(out) if out.returncode > 0 else out.stderr.strip()


def _outputs(outputs: dict[str, Output], where: str) -> saved.Outputs:
    data: dict[str, bytes] = {name: o.stdout for name, o in outputs.items() if o.returncode == 0}
    errs = {name: _reason(o) for name, o in outputs.items() if o.stderr.strip()}
    return saved.Outputs(where, data, errs)


def live_snapshot(timeout: float = DEFAULT_TIMEOUT, on: str = "") -> Snapshot:
    """Ask the cluster now (see :func:`collect`; ``on``: that cluster, ``-M``) and build the
    snapshot as ``load_folder`` would.

    Raises
    ------
    SourceUnavailable
        sshare cannot be run or fails.
    InputError
        A command printed something its parser does not accept (a Slurm version fairtop does not
        know?).
    """
    outputs, started = collect(timeout, on)
    name = saved.FILES["sshare"]
    assoc = outputs.get(saved.FILES["assoc"])
    table = saved.sshare_table(outputs[name].stdout, "sshare -a -l -P",
                               assoc.stdout if assoc is not None and assoc.returncode == 0 else None)
    host = os.uname().nodename
    files = _outputs(outputs, "")
    files.data[saved.FILES["captured_at"]] = started.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    return saved.snapshot_from_files(files, table, _where(host, on), on or host, started)


def _where(host: str, on: str) -> str:
    return f"live Slurm -M {on} ({host})" if on else f"live Slurm ({host})"


def live_snapshots(names: list[str], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Snapshot]:
    """Several clusters of one slurmdbd at once: one ``sshare -M a,b -a -l -P`` (``["all"]``:
    every cluster slurmdbd knows), cut into one table per cluster, and each cluster's other
    commands with ``-M NAME``. Cluster name -> snapshot, in sshare's order.

    Raises
    ------
    SourceUnavailable
        sshare fails, or prints no section for a cluster asked for (unknown, or unreachable:
        sshare then says so on stderr and exits 0).
    """
    started = datetime.now(timezone.utc)
    args = ["sshare", "-M", ",".join(names), "-a", "-l", "-P"]
    out = run(args, timeout)
    parts = split_clusters(out.stdout, _cmdline(args))
    missing = [n for n in names if n != "all" and n not in parts]
    if missing or "" in parts:
        why = out.first_error or "no 'CLUSTER: NAME' section"
        raise SourceUnavailable(f"{_cmdline(args)}: nothing for {', '.join(missing) or 'any cluster'}: {why}")
    def read(name: str) -> Snapshot:
        return LiveSlurm(timeout=timeout, on=name).read(given_sshare=(Output(tuple(args), 0, parts[name], ""), started))

    with ThreadPoolExecutor(max_workers=len(parts)) as pool:  # the clusters' controllers answer in parallel
        futures = {name: pool.submit(read, name) for name in parts}
        return {name: fut.result() for name, fut in futures.items()}


@dataclass(frozen=True)
class Cadence:
    """How often each command is asked again, aligned with what changes (seconds).

    sshare's values change once per PriorityCalcPeriod, so sshare and assoc_mgr follow it;
    jobs move faster (squeue, sprio every ``refresh_rate``); associations, partitions and the
    config barely move (sacctmgr talks to slurmdbd: every 10 minutes).
    """

    jobs_s: float = 30.0
    usage_s: float = 300.0
    """Overridden by the cluster's PriorityCalcPeriod once the config is read."""
    slow_s: float = 600.0

    def period(self, name: str) -> float:
        f = saved.FILES
        if name in (f["squeue"], f["sprio"]):
            return self.jobs_s
        if name in (f["sshare"], f["assoc_mgr"]):
            return self.usage_s
        return self.slow_s

    def per_minute(self) -> dict[str, float]:
        """Commands per minute a session issues to slurmctld and to slurmdbd."""
        ctld = sum(60.0 / self.period(name) for name in commands() if name != saved.FILES["assoc"])
        return {"slurmctld": ctld, "slurmdbd": 60.0 / self.period(saved.FILES["assoc"])}


#: Commands kept in ``LiveSlurm.issued`` (an hour of the busiest cadence is ~5,000): a session
#: left open for months appended one entry per command for ever (~170,000 a month).
ISSUED_KEPT = 10_000
#: A command slower than this is asked less often (its period doubles, up to 8x).
SLOW_COMMAND_S = 2.0
MAX_BACKOFF = 8.0


class LiveSlurm:
    """The live cluster read with a cadence per command, so that a session costs slurmctld a few
    commands a minute (not eight every few seconds). Outputs are kept between reads; the
    snapshot is rebuilt from the freshest output of each command.

    ``runner`` and ``clock`` are replaceable for tests and benchmarks.
    """

    def __init__(self, cadence: Cadence | None = None, timeout: float = DEFAULT_TIMEOUT,
                 runner: Callable[[list[str], float], Output] | None = None,
                 clock: Callable[[], float] = time.monotonic, only: Collection[str] | None = None,
                 on: str = "") -> None:
        self.only = None if only is None else frozenset(only) | {saved.FILES["sshare"], saved.FILES["config"]}
        """File names of the commands to run (sshare and the config always); None: all of them."""
        self.table: SshareTable | None = None
        """The kept sshare output, parsed (rows as the snapshot's tree before any fix)."""
        self.cadence = cadence or Cadence()
        self.on = on
        """The cluster asked with ``-M`` (another cluster of this slurmdbd); "" the local one."""
        self.timeout = timeout
        self.runner = runner or (lambda args, t: run(args, t, check=False))
        self.clock = clock
        self.outputs: dict[str, Output] = {}
        self.asked_at: dict[str, float] = {}
        self.backoff: dict[str, float] = {}
        self.issued: list[tuple[float, str]] = []
        """(time, file name) of the commands run (the newest ISSUED_KEPT), for the cadence benchmark."""
        self.cluster = on
        self.lft = True  # sacctmgr has LFT (before 23.11); set from the config's SLURM_VERSION
        self.usage_taken_at = ""
        self.one_user = ""
        """The user a one-user caller serves (``Source.one_user``): the snapshot then holds that
        user's jobs and the queue as columns (:func:`tui.sources.saved.snapshot_from_files`)."""
        """When the kept sshare output was asked (``captured_at.txt`` format)."""
        self._force = True

    def refresh_usage_now(self) -> None:
        """Ask sshare (and everything else) at the next read: the user pressed ``r``."""
        self._force = True

    def _due(self, name: str, now: float) -> bool:
        last = self.asked_at.get(name)
        return last is None or now - last >= self.cadence.period(name) * self.backoff.get(name, 1.0)

    def _ask(self, name: str, args: list[str]) -> Output:
        start = self.clock()
        try:
            out = _unheaded(self.runner(args, self.timeout))
        except SourceUnavailable as exc:
            out = Output(tuple(args), -1, b"", str(exc))
        took = self.clock() - start
        self.issued.append((start, name))
        if len(self.issued) > ISSUED_KEPT:  # a session open for months: the newest only
            del self.issued[:ISSUED_KEPT // 2]
        self.asked_at[name] = start
        # A slow controller gets asked less often; a quick answer restores the cadence.
        self.backoff[name] = min(MAX_BACKOFF, self.backoff.get(name, 1.0) * 2) if took > SLOW_COMMAND_S else 1.0
        return out

    def read(self, given_sshare: tuple[Output, datetime] | None = None) -> Snapshot:
        """Run the commands that are due, then build the snapshot from the kept outputs (the last
        of :meth:`read_stages`).

        ``given_sshare``: this cluster's part of an ``sshare -M a,b`` run and when it started,
        used instead of asking sshare again.

        Raises
        ------
        SourceUnavailable
            sshare cannot be run or fails (a kept sshare output is not reused after a failure:
            the user must see that the controller stopped answering).
        """
        *_, (whole, running) = self.read_stages(given_sshare)
        assert not running  # read_stages always ends with the whole snapshot
        return whole

    def read_stages(self, given_sshare: tuple[Output, datetime] | None = None,
                    ) -> Iterator[tuple[Snapshot, tuple[str, ...]]]:
        """Like :meth:`read`, in stages: ``(snapshot, commands still running)``.

        When a due command has no kept output yet (the first read), a first snapshot is yielded
        as soon as sshare (and the config, asked alongside it: one quick RPC that says Fair Tree or
        classic) returned, so the tree can be drawn; sacctmgr, the partitions, assoc_mgr, sprio
        and squeue then run and the whole snapshot follows. Later reads have every output kept
        and yield once. The cadence is :meth:`read`'s: staging changes when a snapshot is built,
        not which commands are asked.

        Raises
        ------
        SourceUnavailable
            As :meth:`read`, before the first yield.
        """
        now = self.clock()
        force, self._force = self._force, False
        f = saved.FILES
        started = datetime.now(timezone.utc)
        mine = commands(self.cluster, self.on, self.lft)
        if given_sshare is not None:
            self.outputs[f["sshare"]] = given_sshare[0]
            self.asked_at[f["sshare"]] = now
            self.usage_taken_at = given_sshare[1].strftime("%Y-%m-%dT%H:%M:%SZ")
        ask = {name: mine[name] for name in (f["sshare"], f["config"])
               if (force or self._due(name, now)) and not (name == f["sshare"] and given_sshare is not None)}
        with ThreadPoolExecutor(max_workers=2) as pool:  # both are quick slurmctld RPCs
            futures = {name: pool.submit(self._ask, name, args) for name, args in ask.items()}
            got = {name: fut.result() for name, fut in futures.items()}
        if f["sshare"] in got:
            out = got[f["sshare"]]
            if out.returncode != 0:
                raise SourceUnavailable(_failure(out) if out.returncode > 0 else out.stderr.strip())
            self.outputs[f["sshare"]] = out
            self.usage_taken_at = started.strftime("%Y-%m-%dT%H:%M:%SZ")
        if f["config"] in got:
            self.outputs[f["config"]] = got[f["config"]]
            self._read_config()
        due = {k: v for k, v in commands(self.cluster, self.on, self.lft).items()
               if k not in (f["sshare"], f["config"]) and (self.only is None or k in self.only)
               and (force or self._due(k, now))}
        missing = tuple(name for name in due if name not in self.outputs)
        if missing:
            yield self._snapshot(started), missing
        if due:
            with ThreadPoolExecutor(max_workers=len(due)) as pool:
                futures = {name: pool.submit(self._ask, name, args) for name, args in due.items()}
                for name, fut in futures.items():
                    self.outputs[name] = fut.result()
        yield self._snapshot(started), ()

    def _snapshot(self, started: datetime) -> Snapshot:
        """The snapshot from the freshest kept output of each command."""
        f = saved.FILES
        assoc = self.outputs.get(f["assoc"])
        table = saved.sshare_table(self.outputs[f["sshare"]].stdout, "sshare -a -l -P",
                                   assoc.stdout if assoc is not None and assoc.returncode == 0 else None)
        self.table = table
        host = os.uname().nodename
        files = _outputs(self.outputs, "")
        files.data[f["captured_at"]] = self.usage_taken_at.encode()
        return saved.snapshot_from_files(files, table, _where(host, self.on), self.on or host, started,
                                         self.one_user)

    def _read_config(self) -> None:
        out = self.outputs[saved.FILES["config"]]
        if out.returncode != 0:
            return
        try:
            conf = slurm_text.parse_config(out.stdout, "scontrol show config")
        except InputError:
            return  # reported when the snapshot is built
        self.cluster = self.on or conf.cluster
        self.lft = release(conf.values.get("SLURM_VERSION")).sacctmgr_lft
        if conf.settings.calc_period_s > 0:
            self.cadence = Cadence(self.cadence.jobs_s, float(conf.settings.calc_period_s), self.cadence.slow_s)


def last_decay_cycle(on: str = "", timeout: float = DEFAULT_TIMEOUT) -> datetime | None:
    """When slurmctld last ran its decay cycle: the time of ``priority_last_decay_ran`` in its
    StateSaveLocation (``scontrol [-M NAME] show config``), which slurmctld touches every cycle.
    Readable on the controller's host (or where the state is shared); None elsewhere, and the
    history check then assumes cycles up to the snapshot time (one period's tolerance)."""
    out = _soft(commands(on=on)[saved.FILES["config"]], timeout)
    if out.returncode != 0:
        return None
    try:
        where = slurm_text.parse_config(out.stdout, "scontrol show config").values.get("StateSaveLocation", "")
    except InputError:
        return None
    if not where:
        return None
    state = Path(where) / "priority_last_decay_ran"
    try:  # the cycle's own time_t, else the file's mtime (written at the end of the cycle)
        return sacct.read_last_decay_ran(state.read_bytes(), str(state))[0]
    except InputError:
        pass
    except OSError:
        return None
    try:
        return datetime.fromtimestamp(state.stat().st_mtime, timezone.utc)
    except OSError:
        return None


def controller_log(on: str = "", timeout: float = DEFAULT_TIMEOUT, config: bytes | None = None) -> bytes | None:
    """The decay cycles, starts and stops slurmctld logged (:func:`tui.sources.ctld_log.priority_lines`)
    from its ``SlurmctldLogFile`` (``scontrol show config``), read line by line. Readable on the
    controller's host by an admin, with ``DebugFlags=Priority`` for the cycles; None elsewhere (or
    for another cluster, ``on``), and a replay then assumes a regular grid."""
    from tui.sources.ctld_log import priority_lines

    if on:
        return None
    if config is None:
        out = _soft(commands(on=on)[saved.FILES["config"]], timeout)
        if out.returncode != 0:
            return None
        config = out.stdout
    try:
        where = slurm_text.parse_config(config, "scontrol show config").values.get("SlurmctldLogFile", "")
    except InputError:
        return None
    if not where or where in ("(null)", "None"):
        return None
    marks = (b"_ft_debug:", b"Decay factor", b"slurmctld version", b"Terminate signal", b"Saving all slurm state",
             b"Reconfigure", b"reconfigure")
    try:
        with open(where, "rb") as f:
            kept = b"".join(line for line in f if any(m in line for m in marks))
    except OSError:
        return None
    lines = priority_lines(kept, source=where)
    return lines or None


def snapshot_at_cycle(on: str = "", timeout: float = DEFAULT_TIMEOUT) -> tuple[Snapshot, datetime | None]:
    """A live snapshot and the decay cycle its usage comes from (:func:`last_decay_cycle`, read
    before and after the commands; when a cycle ran in between, asked again, up to three times).
    None for the cycle when it cannot be read or pinned."""
    for _ in range(3):
        before = last_decay_cycle(on, timeout)
        snap = live_snapshot(timeout, on)
        after = last_decay_cycle(on, timeout)
        if before == after:
            return snap, after
    return snap, None


def _history_start(outputs: dict[str, Output], started: datetime) -> datetime:
    """How far back ``capture`` asks sacct: ten half-lives (what still counts in RawUsage to
    0.1%), at least 30 days; a year without decay."""
    from datetime import timedelta

    hl = 7 * 86400
    config = outputs.get(saved.FILES["config"])
    if config is not None and config.returncode == 0:
        try:
            hl = slurm_text.parse_config(config.stdout).settings.decay_half_life_s
        except InputError:
            pass
    back = timedelta(days=366) if hl <= 0 else max(timedelta(seconds=10 * hl), timedelta(days=30))
    return (started - back).astimezone()


def _check_writable(folder: Path) -> None:
    """Fail before any command runs when ``folder`` could not be written: it, or the nearest
    folder above it that exists, must be a writable folder."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(str(folder), f"cannot create the folder: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(str(folder), f"cannot create the folder: {existing} is not writable")


def capture(path: str | Path, timeout: float = DEFAULT_TIMEOUT, on: str = "") -> str:
    """Save the live cluster's outputs into ``path`` under capture.sh's file names.

    Writes each command's stdout to its file (and ``sacct`` for ``fairtop history``), non-empty
    stderr to ``FILE.err``, the command
    lines with exit codes to ``commands.txt`` and the start time to ``captured_at.txt``, so
    ``fairtop --from DIR`` and ``fairtop report --from DIR`` read it back. ``on``: another
    cluster of this slurmdbd (``-M NAME``), saved as if captured there.

    Returns
    -------
    str
        A one-line summary ending in a newline.

    Raises
    ------
    SourceUnavailable
        As :func:`collect`.
    InputError
        ``path`` cannot be created or written.
    """
    folder = Path(path)
    _check_writable(folder)
    outputs, started = collect(timeout, on)  # before the folder: no cluster, no empty folder left behind
    # What a publisher needs to honour PrivateData (tui.sources.private_data): who coordinates
    # which account or is an operator, and slurmdbd's own PrivateData. Asked by capture only:
    # a live session never needs them.
    outputs[USERS_FILE] = _soft(["sacctmgr", "-P", "show", "user", "withcoord",
                                 "format=User,AdminLevel,Coordinators"], timeout)
    outputs[DBD_CONFIG_FILE] = _soft(["sacctmgr", "show", "configuration"], timeout)
    # Every user's usage and jobs under PrivateData: the owner's only (0700/0600), from the first
    # byte; else what every user may read (0755/0644), whatever the umask.
    private = bool(private_data(*(outputs[k].stdout for k in (saved.FILES["config"], DBD_CONFIG_FILE)
                                  if outputs[k].returncode == 0)) & set(HIDES))
    mode = PRIVATE if private else PUBLIC
    try:
        make_dir(folder, PRIVATE_DIR if private else PUBLIC_DIR)
        if private:
            os.chmod(folder, PRIVATE_DIR)  # an existing folder too: it now holds what others may not read
    except OSError as exc:
        raise InputError(str(path), f"cannot create the folder: {exc.strerror or exc}") from None
    outputs[sacct.SACCT_FILE] = _soft(sacct.sacct_command(_history_start(outputs, started), cluster=on),
                                      timeout * 3)
    # What a replay of the usage law needs beside sacct and the partitions' TRESBillingWeights:
    # the QOS UsageFactors and NoDecay flags, and the last decay cycle (on the controller's host).
    outputs[saved.FILES["qos"]] = _soft(["sacctmgr", "-P", "show", "qos",
                                         "format=" + ",".join(slurm_text.QOS_FIELDS)], timeout)
    last = last_decay_cycle(on, timeout)
    if last is not None:
        outputs[sacct.LAST_CYCLE_FILE] = Output(("priority_last_decay_ran",), 0,
                                                (last.strftime("%Y-%m-%d %H:%M:%S +0000") + "\n").encode(), "")
    config = outputs[saved.FILES["config"]]
    log = controller_log(on, timeout, config.stdout) if config.returncode == 0 else None
    if log is not None:  # slurmctld's own cycles (DebugFlags=Priority): a replay runs on them
        outputs[CYCLES_FILE] = Output(("SlurmctldLogFile",), 0, log, "")
    failed = 0
    try:
        lines = []
        for name, out in outputs.items():
            if out.returncode == 0:
                write_file(folder / name, out.stdout, mode)
            elif (folder / name).exists():
                (folder / name).unlink()  # never leave an earlier capture's output beside this one
            err = folder / (name + ".err")
            if out.stderr.strip():
                write_file(err, out.stderr if out.returncode >= 0 else out.stderr + "\n", mode)
            elif err.exists():
                err.unlink()  # a stale message from an earlier capture into the same folder
            failed += out.returncode != 0
            lines.append(f"{out.returncode}\t{name}\t{_cmdline(out.args)}\n")
        write_file(folder / "commands.txt", "".join(lines), mode)
        write_file(folder / saved.FILES["captured_at"], started.strftime("%Y-%m-%dT%H:%M:%SZ") + "\n", mode)
        write_file(folder / ZONE_FILE, local_zone_name() + "\n", mode)  # the zone sacct printed its times in
    except OSError as exc:
        raise InputError(str(folder), f"cannot write: {exc.strerror or exc}") from None
    return f"captured into {folder} ({len(outputs)} commands, {failed} non-zero exits)\n"
