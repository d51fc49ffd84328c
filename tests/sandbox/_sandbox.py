"""The CI Slurm sandbox for the integration tests: its scripts, environment and a second cluster.

CI (``.ci/run``, as root) starts the default sandbox and sets ``FAIRTOP_SANDBOX`` (its scripts
folder); the tests use that sandbox as it was started (``SANDBOX_*`` of the environment, default
``/tmp/slurm-sandbox``). A second cluster joins its slurmdbd with ``FAIRTOP_JOIN_*`` (defaults:
``/tmp/fairtop-join``, cluster ``second``, ports 6917/6918).

Newer releases run beside it: CI starts a 26.05 (and 24.11) sandbox and exports
``FAIRTOP_SANDBOX_2605`` (``FAIRTOP_SANDBOX_2411``) naming a file of ``KEY=VALUE`` lines: every
SANDBOX_* it was started with, SANDBOX_DIR among them (outside that folder: a test that re-creates
the sandbox purges it). :func:`release_env` gives a test that sandbox's environment;
:func:`on_release` skips a test where none is up.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tui.model import AssocTree

SKIP = pytest.mark.skipif(not os.environ.get("FAIRTOP_SANDBOX"),
                          reason="FAIRTOP_SANDBOX not set: no real Slurm sandbox (CI starts one as root)")


def scripts() -> Path:
    given = os.environ.get("FAIRTOP_SANDBOX", "")
    if given not in ("", "1"):
        return Path(given)
    beside = ROOT.parent / "shared" / "slurm-sandbox"
    return beside if beside.is_dir() else Path("/work/shared/slurm-sandbox")


def first_env() -> dict[str, str]:
    """The environment of the CI sandbox, as it was started (plus SLURM_CONF, and SANDBOX_DIR
    named even when it is the scripts' default)."""
    env = dict(os.environ)
    folder = env.setdefault("SANDBOX_DIR", "/tmp/slurm-sandbox")
    env["SLURM_CONF"] = f"{folder}/etc/slurm.conf"
    return env


#: Newer releases' sandboxes: release -> the variable naming their SANDBOX_DIR.
RELEASES = {"24.11": "FAIRTOP_SANDBOX_2411", "26.05": "FAIRTOP_SANDBOX_2605"}


def on_release(release: str) -> list[pytest.MarkDecorator]:
    """Skip unless a sandbox of ``release`` is up (22.05: the default one). A newer release's tests
    are also marked ``slurm_release``: CI runs them after the rest, once that release is built (its
    build runs beside the other tests: .ci/run)."""
    if release == "22.05":
        return [SKIP]
    var = RELEASES[release]
    when = "as root" if release == "26.05" else "as root when FAIRTOP_CI_SLURM names it"
    return [pytest.mark.skipif(not os.environ.get(var),
                               reason=f"{var} not set: no Slurm {release} sandbox (CI starts one {when})"),
            pytest.mark.slurm_release]


def own_env(folder: str, port: int, db: int | str, slurm: str = "", **settings: str) -> dict[str, str]:
    """The environment of a test module's own sandbox: the CI sandbox's without its SANDBOX_*
    settings; ``folder``, three Slurm ports from ``port`` and MariaDB on ``db``; slurmrestd off;
    the Slurm built at ``slurm`` first on PATH (empty: Debian's 22.05); then ``settings``
    (``SANDBOX_DECAY="1:00:00"``...)."""
    env = {k: v for k, v in first_env().items() if not k.startswith("SANDBOX_")}
    if slurm:
        env["PATH"] = f"{slurm}/bin:{slurm}/sbin:{env.get('PATH', '')}"
    env.update(SANDBOX_SLURM=slurm, SANDBOX_DIR=folder, SANDBOX_CTLD_PORT=str(port), SANDBOX_SLURMD_PORT=str(port + 1),
               SANDBOX_DBD_PORT=str(port + 2), SANDBOX_DB_PORT=str(db), SANDBOX_RESTD="0",
               SLURM_CONF=f"{folder}/etc/slurm.conf")
    env.update(settings)
    return env


def release_env(release: str) -> dict[str, str]:
    """The environment of the sandbox running Slurm ``release``: its SANDBOX_* values (from the
    file its variable names), SLURM_CONF, and its binaries first on PATH."""
    if release == "22.05":
        return first_env()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    for line in Path(os.environ[RELEASES[release]]).read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.startswith("SANDBOX_"):
            env[key.strip()] = value.strip()
    env["SLURM_CONF"] = f"{env['SANDBOX_DIR']}/etc/slurm.conf"
    if env.get("SANDBOX_SLURM"):
        env["PATH"] = f"{env['SANDBOX_SLURM']}/bin:{env['SANDBOX_SLURM']}/sbin:{env.get('PATH', '')}"
    return env


def cluster_name(env: dict[str, str]) -> str:
    text = Path(env["SLURM_CONF"]).read_text()
    m = re.search(r"^ClusterName=(\S+)", text, re.M)
    assert m, f"no ClusterName in {env['SLURM_CONF']}"
    return m.group(1)


def join_env(first: dict[str, str] | None = None) -> dict[str, str]:
    """A second cluster joined to a sandbox's munged and slurmdbd (own slurmctld, slurmd, dir):
    the CI sandbox's, or ``first`` (a newer release's, :func:`release_env`: its own folder and
    ports, 10 above the FAIRTOP_JOIN_* ones)."""
    newer = first is not None and bool(first.get("SANDBOX_SLURM"))
    first = first_env() if first is None else first
    env = {k: v for k, v in first.items() if not k.startswith("SANDBOX_")}
    shift = 10 if newer else 0
    folder = os.environ.get("FAIRTOP_JOIN_DIR", "/tmp/fairtop-join") + ("-" + first["SANDBOX_SLURM"].rsplit("-", 1)[-1]
                                                                          if newer else "")
    env.update(SANDBOX_JOIN=first.get("SANDBOX_DIR", "/tmp/slurm-sandbox"), SANDBOX_DIR=folder,
               SANDBOX_CLUSTER=os.environ.get("FAIRTOP_JOIN_CLUSTER", "second"),
               SANDBOX_NODE=os.environ.get("FAIRTOP_JOIN_CLUSTER", "second") + "-node",
               SANDBOX_CTLD_PORT=str(int(os.environ.get("FAIRTOP_JOIN_CTLD_PORT", "6917")) + shift),
               SANDBOX_SLURMD_PORT=str(int(os.environ.get("FAIRTOP_JOIN_SLURMD_PORT", "6918")) + shift),
               SANDBOX_RESTD="0", SLURM_CONF=f"{folder}/etc/slurm.conf")
    if newer:
        env["SANDBOX_SLURM"] = first["SANDBOX_SLURM"]
    for key in ("SANDBOX_DBD_PORT", "SANDBOX_DB_PORT"):  # the joined cluster reads them from the first
        if key in first:
            env[key] = first[key]
    return env


def sh(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    """Run a sandbox script or a Slurm command (argument list) and return its stdout."""
    cmd = [str(scripts() / args[0]), *args[1:]] if args[0].endswith(".sh") else list(args)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)}: {done.stderr[-1500:]}"
    return done.stdout


def purge_keeping_log(env: dict[str, str], keep: Path) -> None:
    """``down.sh --purge`` a sandbox of a test's own, its slurmctld.log first copied into ``keep``
    (a failure's post-mortem: the sandbox itself is gone)."""
    log = Path(env["SANDBOX_DIR"], "log", "slurmctld.log")
    if log.is_file():
        shutil.copy(log, keep / "slurmctld.log")
    subprocess.run([str(scripts() / "down.sh"), "--purge"], env=env, capture_output=True, timeout=120, check=False)


def charged(env: dict[str, str], cluster: str, account: str) -> dict[str, float]:
    """What each user's jobs were charged, from sacct: CPUs x elapsed seconds x 1,000,000 billing."""
    out = sh(env, "sacct", "-M", cluster, "-a", "-X", "-P", "-n", "-A", account, "-o", "User,ElapsedRaw,AllocCPUS")
    total: dict[str, float] = {}
    for line in out.splitlines():
        user, elapsed, cpus = line.split("|")
        total[user] = total.get(user, 0.0) + int(elapsed) * int(cpus) * 1e6
    return total


def wait_all(*envs: dict[str, str], timeout: float = 200) -> None:
    """``usage.sh --wait`` on several clusters at once: queues empty, then one priority cycle each."""
    procs = [subprocess.Popen([str(scripts() / "usage.sh"), "--wait"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for env in envs]
    for proc in procs:
        _, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err[-1500:]


def last_cycle(env: dict[str, str]) -> float:
    """mtime of the controller's priority_last_decay_ran (0 before the first cycle)."""
    path = Path(env.get("SANDBOX_DIR", "/tmp/slurm-sandbox")) / "state" / "ctld" / "priority_last_decay_ran"
    return path.stat().st_mtime if path.exists() else 0.0


def after_a_cycle(env: dict[str, str], within: float = 20, timeout: float = 90) -> None:
    """Return within ``within`` seconds after a priority cycle ran (at once if one just did, as
    after slurmctld starts), so jobs started now end far from the next one (a job ending within
    a second of a cycle may be charged in either: one period's decay)."""
    if 0 <= time.time() - last_cycle(env) < within:
        return
    seen, end = last_cycle(env), time.monotonic() + timeout
    while last_cycle(env) == seen:
        assert time.monotonic() < end, "no priority cycle within the timeout"
        time.sleep(0.2)


def account_rows(tree: AssocTree | None, account: str) -> dict[str, int]:
    """``account``'s row and its users' in ``tree``: user (or the account's name) -> row."""
    assert tree is not None
    return {str(tree.user[i]) or str(tree.account[i]): i for i in range(tree.size)
            if str(tree.account[i]) == account}


def qos_usage(env: dict[str, str]) -> dict[str, float]:
    """Every QOS's raw usage as slurmctld holds it (``scontrol show assoc_mgr flags=qos``)."""
    text = sh(env, "scontrol", "show", "assoc_mgr", "flags=qos")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"QOS=(\S+)\(\d+\)\s+UsageRaw=([0-9.]+)", text)}


def last_ran(env: dict[str, str]) -> float:
    """slurmctld's last decay cycle (its state file's own time_t; 0 before the first)."""
    from tui.sources.sacct import read_last_decay_ran

    path = Path(env["SANDBOX_DIR"], "state", "ctld", "priority_last_decay_ran")
    return read_last_decay_ran(path.read_bytes())[0].timestamp() if path.exists() else 0.0


def unique(prefix: str) -> str:
    """An account name not used by an earlier run on the same sandbox (its jobs would count)."""
    return f"{prefix}{int(time.time()) % 1_000_000}"


def fairtop_for(user: str, env: dict[str, str]) -> str:
    """A command line that runs fairtop as ``user``: this interpreter, or (when it lives where
    ``user`` cannot read, e.g. under /root) the system python3 of the same version with this
    environment's packages on PYTHONPATH."""
    import site
    import sysconfig

    candidates = [(sys.executable, str(ROOT))]
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if system.is_file():
        candidates.append((str(system), ":".join([str(ROOT), sysconfig.get_paths()["purelib"],
                                                   *site.getsitepackages()])))
    for python, path in candidates:
        probe = subprocess.run(["runuser", "-u", user, "--", "env", f"PYTHONPATH={path}", python, "-c",
                                "import tui.cli"], env=env, capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return f"env PYTHONPATH={path} {python} -m tui.cli"
    pytest.skip(f"no Python that {user} may run with fairtop's packages ({sys.executable} is not readable)")
