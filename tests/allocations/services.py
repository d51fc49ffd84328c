"""Real services for the allocation tests and the bench: the fairtop allocation service in a
subprocess, a throwaway PostgreSQL cluster and a munged with its own key.

PostgreSQL and munge come from Debian packages (``postgresql``, ``munge``; ``.ci/run`` installs
them). ``.ci/run`` may start them once and export ``FAIRTOP_TEST_PG`` (a URL to a server where the
tests may create databases) and ``FAIRTOP_TEST_MUNGE_SOCKET``; otherwise these helpers start their
own when run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUPER, ADMIN = "super-token-0001", "admin-token-0002"
#: Standard users: token -> (uid, gids).
STANDARD = {"alice-token-0003": (5001, [7001]), "bob-token-00004": (5002, [7002, 7003])}


def write_tokens(path: Path) -> Path:
    lines = [f'[[token]]\ntoken = "{SUPER}"\nuid = 0\ngids = [0]\nrole = "superuser"\n',
             f'[[token]]\ntoken = "{ADMIN}"\nuid = 900\ngids = [900]\nrole = "admin"\n']
    for token, (uid, gids) in STANDARD.items():
        lines.append(f'[[token]]\ntoken = "{token}"\nuid = {uid}\ngids = {gids}\nrole = "standard"\n')
    path.write_text("\n".join(lines))
    path.chmod(0o600)  # the service refuses a tokens file others may read
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """``fairtop serve-allocations`` in a subprocess; ``url`` once it listens."""

    db: str
    args: list[str] = field(default_factory=list)
    code: Path = ROOT
    """The checkout whose ``tui`` runs (bench/allocations.py --code compares two)."""
    proc: subprocess.Popen | None = None
    url: str = ""
    log: Path | None = None

    def start(self, timeout: float = 20.0, migrate: bool = True) -> Server:
        argv = [sys.executable, "-m", "tui.cli", "serve-allocations", "--db", self.db,
                "--listen", "127.0.0.1:0", *(["--migrate"] if migrate else []), *self.args]
        fd, name = tempfile.mkstemp(prefix="fairtop-alloc-", suffix=".log")
        self.log = Path(name)
        with os.fdopen(fd, "wb") as err:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(argv, cwd=self.code, stdout=subprocess.PIPE, stderr=err, text=True)
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            m = re.search(r"on (https?://\S+)", line)
            if m:
                self.url = m.group(1)
                return self
            if self.proc.poll() is not None:
                break
        said = self.log.read_text()
        self.stop()
        raise RuntimeError(f"the service did not start: {line}{said}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        if self.log is not None:  # read while it ran; one stopped server leaves no file behind
            self.log.unlink(missing_ok=True)


# -- PostgreSQL ---------------------------------------------------------------------------

def pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


class PgCluster:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl as the ``postgres`` user, in a temp dir,
    on 127.0.0.1 and a free port, trust authentication)."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env or {}  # for the server's processes (bench/allocations.py --flush-ms: LD_PRELOAD)
        bindir = pg_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        if os.geteuid() != 0:
            raise RuntimeError("starting a throwaway PostgreSQL needs root (to run as 'postgres')")
        pwd.getpwnam("postgres")
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="fairtop-pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True, cwd="/")

    def start(self, options: str = "") -> PgCluster:
        """initdb and start; ``options`` are more ``-c name=value`` for this server only (not
        written to its files, so a replica copied from it does not inherit them)."""
        self._as_postgres(str(self.bindir / "initdb"), "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                          "--no-sync", "-E", "UTF8", "--locale=C")
        return self._run(options)

    def _run(self, options: str = "") -> PgCluster:
        opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c max_connections=200"
                f" -c shared_buffers=128MB {options}")
        self._as_postgres(*(["env", *(f"{k}={v}" for k, v in self.env.items())] if self.env else []),
                          str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-l", str(self.dir / "log"),
                          "-o", opts, "-w", "-t", "60", "start")
        return self

    def start_standby_of(self, primary: PgCluster, name: str) -> PgCluster:
        """A streaming replica of ``primary`` (``pg_basebackup -R``), started as a hot standby
        that reports itself as ``name`` (for the primary's ``synchronous_standby_names``)."""
        data = self.dir / "data"
        self._as_postgres(str(self.bindir / "pg_basebackup"), "-d",
                          f"host=127.0.0.1 port={primary.port} user=postgres application_name={name}",
                          "-D", str(data), "-R", "-X", "stream", "--no-sync", "-c", "fast")
        return self._run()

    def start_again(self) -> None:
        """``pg_ctl start`` of the cluster as it was left (after :meth:`crash`: crash recovery;
        a standby then connects to its primary again)."""
        self._run()

    def promote(self) -> None:
        """``pg_ctl promote``: the standby becomes a primary (returns once it takes writes)."""
        self._as_postgres(str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-w", "-t", "60", "promote")

    def crash(self) -> None:
        """The server and every process of it SIGKILLed at once, as when its machine dies: the
        postmaster is stopped first (it forks no more, restarts nothing), then all are killed."""
        pid = self.postmaster_pid()
        os.kill(pid, signal.SIGSTOP)
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == pid]
        for victim in (pid, *children):
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def postmaster_pid(self) -> int:
        """The server's process id (its backends are its children)."""
        return int((self.dir / "data" / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        try:
            self._as_postgres(str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def _ppid(proc: Path) -> int | None:
    """The parent of the process ``/proc/PID`` (None once it is gone)."""
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def create_database(server_url: str) -> str:
    """A new empty database on ``server_url``'s server; returns its URL."""
    import psycopg

    name = "fairtop_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + "/" + name


# -- munge --------------------------------------------------------------------------------

def munge_credential(socket: str, user: str | None = None) -> str:
    """A fresh credential from munged at ``socket``, minted as ``user`` (via runuser) or as us."""
    argv = ["munge", "--no-input", "--socket", socket]
    if user:
        argv = ["runuser", "-u", user, "--", *argv]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


class Munged:
    """munged with a generated key, its socket in a temp dir (``--force`` as root)."""

    def __init__(self) -> None:
        if not shutil.which("munged", path="/usr/sbin:/usr/bin:/sbin:/bin") or not shutil.which("munge"):
            raise RuntimeError("munge is not installed (Debian: apt-get install munge)")
        self.dir = Path(tempfile.mkdtemp(prefix="fairtop-munge-"))
        os.chmod(self.dir, 0o755)
        self.socket = str(self.dir / "munge.socket")
        self.proc: subprocess.Popen | None = None

    def start(self) -> Munged:
        key = self.dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o600)
        munged = shutil.which("munged", path="/usr/sbin:/usr/bin:/sbin:/bin")
        assert munged
        self.proc = subprocess.Popen(
            [munged, "--foreground", "--force", "--key-file", str(key), "--socket", self.socket,
             "--pid-file", str(self.dir / "munged.pid"), "--log-file", str(self.dir / "munged.log"),
             "--seed-file", str(self.dir / "munged.seed"), "--num-threads", "4"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            if os.path.exists(self.socket):
                return self
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"munged did not start: {err}")
            time.sleep(0.05)
        raise RuntimeError("munged did not create its socket")

    def credential(self, user: str | None = None) -> str:
        return munge_credential(self.socket, user)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)
