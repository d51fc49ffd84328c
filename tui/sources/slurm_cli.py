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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tui.model import Snapshot
from tui.sources import sacct, saved, slurm_text
from tui.sources.commands import DEFAULT_TIMEOUT, Output, _cmdline, _failure, run
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.sshare import parse_sshare

__all__ = ["DEFAULT_TIMEOUT", "ASSOC_FIELDS", "Cadence", "LiveSlurm", "Output", "run", "commands", "collect",
           "live_snapshot", "capture", "command_label"]

#: sacctmgr fields capture.sh asks for (LFT gives the children_list order).
ASSOC_FIELDS = ("Cluster,Account,User,Partition,ParentName,ParentID,ID,LFT,RGT,Share,Priority,GrpTRESMins,"
                "GrpTRESRunMins,GrpTRES,GrpJobs,GrpJobsAccrue,GrpSubmit,GrpWall,MaxTRESMins,MaxTRES,"
                "MaxTRESPerNode,MaxJobs,MaxJobsAccrue,MaxSubmit,MaxWall,QOS,DefaultQOS")


def commands(cluster: str = "") -> dict[str, list[str]]:
    """File name -> argument list of every command fairtop reads (file names as capture.sh's).

    ``cluster`` limits sacctmgr to one cluster (an argument, not shell text).
    """
    assoc = ["sacctmgr", "-P", "show", "assoc"]
    if cluster:
        assoc += ["where", f"cluster={cluster}"]
    assoc.append(f"format={ASSOC_FIELDS}")
    f = saved.FILES
    return {
        f["sshare"]: ["sshare", "-a", "-l", "-P"],
        f["config"]: ["scontrol", "show", "config"],
        f["assoc"]: assoc,
        f["partition"]: ["scontrol", "show", "partition"],
        f["assoc_mgr"]: ["scontrol", "show", "assoc_mgr", "flags=assoc"],
        f["sprio"]: ["sprio", "-l"],
        f["squeue"]: ["squeue", "-a", "-O", ",".join(f"{name}:|" for name in slurm_text.SQUEUE_FIELDS)],
    }


def command_label(name: str) -> str:
    """What the status line calls a command while it runs: ``sacctmgr``, ``scontrol show
    partition``, ``sprio`` (``name`` is its file name, as in :func:`commands`)."""
    args = commands()[name]
    return " ".join(args[:3]) if args[0] == "scontrol" else args[0]


def collect(timeout: float = DEFAULT_TIMEOUT) -> tuple[dict[str, Output], datetime]:
    """Run every command of :func:`commands` (sshare and config first, the rest in parallel).

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
    sshare = run(commands()[f["sshare"]], timeout)  # required: raises
    outputs = {f["sshare"]: sshare}
    outputs[f["config"]] = _soft(commands()[f["config"]], timeout)
    cluster = ""
    if outputs[f["config"]].returncode == 0:
        try:
            cluster = slurm_text.parse_config(outputs[f["config"]].stdout, "scontrol show config").cluster
        except InputError:
            pass  # reported when the snapshot is built
    rest = {k: v for k, v in commands(cluster).items() if k not in outputs}
    with ThreadPoolExecutor(max_workers=len(rest)) as pool:
        futures = {name: pool.submit(_soft, args, timeout) for name, args in rest.items()}
        for name, fut in futures.items():
            outputs[name] = fut.result()
    return outputs, started


def _soft(args: list[str], timeout: float) -> Output:
    """Run an optional command; failures are kept as an Output with the reason in stderr."""
    try:
        return run(args, timeout, check=False)
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


def live_snapshot(timeout: float = DEFAULT_TIMEOUT) -> Snapshot:
    """Ask the cluster now (see :func:`collect`) and build the snapshot as ``load_folder`` would.

    Raises
    ------
    SourceUnavailable
        sshare cannot be run or fails.
    InputError
        A command printed something its parser does not accept (a Slurm version fairtop does not
        know?).
    """
    outputs, started = collect(timeout)
    name = saved.FILES["sshare"]
    table = parse_sshare(outputs[name].stdout, "sshare -a -l -P")
    host = os.uname().nodename
    files = _outputs(outputs, "")
    files.data[saved.FILES["captured_at"]] = started.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    return saved.snapshot_from_files(files, table, f"live Slurm ({host})", host, started)


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


#: A command slower than this is asked less often (its period doubles, up to 8x).
SLOW_COMMAND_S = 2.0
MAX_BACKOFF = 8.0


class LiveSlurm:
    """The live cluster read with a cadence per command, so that a session costs slurmctld a few
    commands a minute (not seven every few seconds). Outputs are kept between reads; the
    snapshot is rebuilt from the freshest output of each command.

    ``runner`` and ``clock`` are replaceable for tests and benchmarks.
    """

    def __init__(self, cadence: Cadence | None = None, timeout: float = DEFAULT_TIMEOUT,
                 runner: Callable[[list[str], float], Output] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cadence = cadence or Cadence()
        self.timeout = timeout
        self.runner = runner or (lambda args, t: run(args, t, check=False))
        self.clock = clock
        self.outputs: dict[str, Output] = {}
        self.asked_at: dict[str, float] = {}
        self.backoff: dict[str, float] = {}
        self.issued: list[tuple[float, str]] = []
        """(time, file name) of every command run, for the cadence benchmark and ``info``."""
        self.cluster = ""
        self.usage_taken_at = ""
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
            out = self.runner(args, self.timeout)
        except SourceUnavailable as exc:
            out = Output(tuple(args), -1, b"", str(exc))
        took = self.clock() - start
        self.issued.append((start, name))
        self.asked_at[name] = start
        # A slow controller gets asked less often; a quick answer restores the cadence.
        self.backoff[name] = min(MAX_BACKOFF, self.backoff.get(name, 1.0) * 2) if took > SLOW_COMMAND_S else 1.0
        return out

    def read(self) -> Snapshot:
        """Run the commands that are due, then build the snapshot from the kept outputs (the last
        of :meth:`read_stages`).

        Raises
        ------
        SourceUnavailable
            sshare cannot be run or fails (a kept sshare output is not reused after a failure:
            the user must see that the controller stopped answering).
        """
        *_, (whole, running) = self.read_stages()
        assert not running  # read_stages always ends with the whole snapshot
        return whole

    def read_stages(self) -> Iterator[tuple[Snapshot, tuple[str, ...]]]:
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
        ask = {name: args for name, args in commands().items()
               if name in (f["sshare"], f["config"]) and (force or self._due(name, now))}
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
        due = {k: v for k, v in commands(self.cluster).items()
               if k not in (f["sshare"], f["config"]) and (force or self._due(k, now))}
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
        table = parse_sshare(self.outputs[f["sshare"]].stdout, "sshare -a -l -P")
        host = os.uname().nodename
        files = _outputs(self.outputs, "")
        files.data[f["captured_at"]] = self.usage_taken_at.encode()
        return saved.snapshot_from_files(files, table, f"live Slurm ({host})", host, started)

    def _read_config(self) -> None:
        out = self.outputs[saved.FILES["config"]]
        if out.returncode != 0:
            return
        try:
            conf = slurm_text.parse_config(out.stdout, "scontrol show config")
        except InputError:
            return  # reported when the snapshot is built
        self.cluster = conf.cluster
        if conf.settings.calc_period_s > 0:
            self.cadence = Cadence(self.cadence.jobs_s, float(conf.settings.calc_period_s), self.cadence.slow_s)


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


def capture(path: str | Path, timeout: float = DEFAULT_TIMEOUT) -> str:
    """Save the live cluster's outputs into ``path`` under capture.sh's file names.

    Writes each command's stdout to its file (and ``sacct`` for ``fairtop history``), non-empty
    stderr to ``FILE.err``, the command
    lines with exit codes to ``commands.txt`` and the start time to ``captured_at.txt``, so
    ``fairtop --from DIR`` and ``fairtop report --from DIR`` read it back.

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
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(str(path), f"cannot create the folder: {exc.strerror or exc}") from None
    outputs, started = collect(timeout)
    outputs[sacct.SACCT_FILE] = _soft(sacct.sacct_command(_history_start(outputs, started)), timeout * 3)
    failed = 0
    try:
        lines = []
        for name, out in outputs.items():
            if out.returncode == 0:
                (folder / name).write_bytes(out.stdout)
            elif (folder / name).exists():
                (folder / name).unlink()  # never leave an earlier capture's output beside this one
            err = folder / (name + ".err")
            if out.stderr.strip():
                err.write_text(out.stderr if out.returncode >= 0 else out.stderr + "\n")
            elif err.exists():
                err.unlink()  # a stale message from an earlier capture into the same folder
            failed += out.returncode != 0
            lines.append(f"{out.returncode}\t{name}\t{_cmdline(out.args)}\n")
        (folder / "commands.txt").write_text("".join(lines))
        (folder / saved.FILES["captured_at"]).write_text(started.strftime("%Y-%m-%dT%H:%M:%SZ") + "\n")
    except OSError as exc:
        raise InputError(str(folder), f"cannot write: {exc.strerror or exc}") from None
    return f"captured into {folder} ({len(outputs)} commands, {failed} non-zero exits)\n"
