"""contrib/systemd: the units verify, and each one's ExecStart, read from the unit, starts and does its job.

``systemd-analyze verify`` on every unit (the template as two instances), and ``systemd-analyze
security --offline`` keeps each unit's exposure low. Then the command lines are taken from the
units as systemd would build them (specifiers, ``Environment=``, the instance's environment
file, ``${VAR}`` and ``$VAR``) and run against the saved captures and throwaway local servers:
the publisher with Slurm commands that print a saved capture, two ledger instances on SQLite, the
balances file from one of them, and the metrics of the published snapshot. As the unit's user
(``runuser``; ``nobody`` for DynamicUser= and for users this host lacks) when that user can run
this Python, else as the test's user. No systemd needs to run: no unit is started by systemd here.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.needs import missing, program

UNITS = ROOT / "contrib" / "systemd"
FAIRTOP = "/usr/local/bin/fairtop"
CAPTURE = FIXTURES / "slurm" / "live" / "fair_tree"
TOKEN = secrets.token_hex(16)
#: how many instances the template runs here
INSTANCES = ("a", "b")
RUNUSER = shutil.which("runuser", path="/usr/sbin:/usr/bin:/sbin:/bin") or "runuser"


@dataclass
class Unit:
    """A unit file's [Service] settings (a key given twice keeps both values, in order)."""

    name: str
    service: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Unit:
        unit, section = cls(path.name), ""
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "Service":
                key, _, value = line.partition("=")
                unit.service.setdefault(key, []).append(value)
        return unit

    def one(self, key: str) -> str:
        (value,) = self.service[key]
        return value


def specifiers(text: str, spec: dict[str, str]) -> str:
    return re.sub(r"%(.)", lambda m: "%" if m.group(1) == "%" else spec[m.group(1)], text)


def environment(unit: Unit, spec: dict[str, str], env_file: dict[str, str]) -> dict[str, str]:
    """``Environment=`` (specifiers expanded, quotes removed), then the environment file over it, as systemd."""
    env: dict[str, str] = {}
    for value in unit.service.get("Environment", []):
        for word in shlex.split(specifiers(value, spec)):
            key, _, val = word.partition("=")
            env[key] = val
    return {**env, **env_file}


def exec_start(unit: Unit, spec: dict[str, str], env: dict[str, str]) -> list[str]:
    """ExecStart= as systemd runs it: ``${VAR}`` one word, ``$VAR`` alone splits on white space."""
    argv: list[str] = []
    for word in shlex.split(specifiers(unit.one("ExecStart"), spec)):
        if re.fullmatch(r"\$\w+", word):
            argv.extend(env.get(word[1:], "").split())
        else:
            argv.append(re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], word))
    return argv


def _runs_our_python(user: str) -> bool:
    done = subprocess.run([RUNUSER, "-u", user, "--", sys.executable, "-c", "import tui.cli"],
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, cwd="/")
    return done.returncode == 0


def run_as(unit: Unit) -> str | None:
    """Whom to run ``unit``'s command as: its User= (if this host has it) or nobody; None: as ourselves."""
    if os.geteuid() != 0:
        return None
    wanted = "nobody" if unit.service.get("DynamicUser") == ["yes"] else unit.service.get("User", ["root"])[0]
    try:
        pwd.getpwnam(wanted)
    except KeyError:
        wanted = "nobody"
    return wanted if _runs_our_python(wanted) else None


@dataclass
class Host:
    """A throwaway root for the units' folders (%C, %S, %d) and PATH with the fake Slurm commands."""

    top: Path

    def spec(self, instance: str = "") -> dict[str, str]:
        return {"i": instance, "I": instance, "C": str(self.top / "cache"), "S": str(self.top / "state"),
                "d": str(self.top / "credentials" / instance)}

    def folder(self, path: str, user: str | None, mode: int) -> Path:
        """What CacheDirectory= and StateDirectory= make: the folder, owned by the unit's user."""
        made = Path(path)
        made.mkdir(parents=True, exist_ok=True)
        made.chmod(mode)
        if user:
            shutil.chown(made, user, pwd.getpwnam(user).pw_gid)
        return made

    def start(self, unit: Unit, argv: list[str], env: dict[str, str], user: str | None) -> subprocess.Popen[str]:
        assert argv[0] == FAIRTOP, argv
        full = [sys.executable, "-m", "tui.cli", *argv[1:]]
        env = {"PATH": f"{self.top / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
               "HOME": "/nonexistent", "XDG_CONFIG_HOME": str(self.top / "etc"), "FAIRTOP_CONFIG": "", **env}
        env = {k: v for k, v in env.items() if v != ""}
        umask = int(unit.one("UMask"), 8)
        prefix = [RUNUSER, "-u", user, "--"] if user else []
        return subprocess.Popen([*prefix, *full], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/", preexec_fn=lambda: os.umask(umask))


def _first_line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The first line the service prints (its 'ready' or 'current' line)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stdout.fileno(), False)
    buf = ""
    while time.monotonic() < deadline:
        chunk = proc.stdout.readline()
        buf += chunk or ""
        if buf.endswith("\n"):
            return buf.strip()
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"exited {proc.returncode}: {err[-1500:]}")
        time.sleep(0.05)
    raise AssertionError(f"no line in {timeout} s")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _http(url: str, body: bytes | None = None) -> str:
    req = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {TOKEN}",
                                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()


def _owned_by(path: Path, user: str | None) -> None:
    """What the unit's command wrote belongs to the user it ran as (root here, ourselves elsewhere)."""
    assert path.stat().st_uid == (pwd.getpwnam(user).pw_uid if user else os.geteuid()), (path, user)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    top = Path(tempfile.mkdtemp(prefix="fairtop-units-", dir="/tmp"))  # pytest's tmp_path is 0700
    top.chmod(0o755)
    (top / "bin").mkdir()
    for command in ("sshare", "squeue", "sprio", "scontrol", "sacctmgr", "sinfo", "sacct"):
        # Slurm's commands as they answered on the sandbox: sshare -a -l -P prints the saved table
        saved = CAPTURE / "sshare_a_l_P.psv" if command == "sshare" else None
        script = top / "bin" / command
        script.write_text(f"#!/bin/sh\nexec /bin/cat '{saved}'\n" if saved else "#!/bin/sh\nexit 1\n")
        script.chmod(0o755)
    try:
        yield Host(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_every_unit_verifies_and_is_hardened(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing(program("systemd-analyze", "apt-get install systemd; .ci/run does so as root") or "")
    units = sorted(UNITS.glob("*.service"))
    assert [u.name for u in units] == ["fairtop-allocations@.service", "fairtop-metrics.service",
                                       "fairtop-publish-balances.service", "fairtop-publish.service"]
    fake = tmp_path / "fairtop"  # verify checks that ExecStart's program exists: stand in for the site's link
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    for unit in units:
        (tmp_path / unit.name).write_text(unit.read_text().replace(FAIRTOP, str(fake)))
    names = [str(tmp_path / u.name) for u in units] + [str(tmp_path / f"fairtop-allocations@{i}.service")
                                                     for i in INSTANCES]
    done = subprocess.run([analyze, "verify", "--man=no", *names], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    for unit in units:
        text = unit.read_text()
        for setting in ("NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "UMask=0"):
            assert setting in text, (unit.name, setting)
        assert "DynamicUser=yes" in text or "User=" in text
        done = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", str(tmp_path / unit.name)],
                              capture_output=True, text=True, timeout=120)
        level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", done.stdout)
        assert level and float(level.group(1)) <= 2.5, (unit.name, done.stdout[-500:])
    publisher = Unit.read(UNITS / "fairtop-publish.service")
    assert publisher.one("AmbientCapabilities") == publisher.one("CapabilityBoundingSet") == "CAP_CHOWN"


@pytest.fixture(scope="module")
def published(host: Host) -> Iterator[Path]:
    """fairtop-publish.service's command, once: a capture published as DIR/current."""
    unit = Unit.read(UNITS / "fairtop-publish.service")
    spec, user = host.spec(), run_as(unit)
    host.folder(specifiers("%C/fairtop", spec), user, int(unit.one("CacheDirectoryMode"), 8))
    argv = exec_start(unit, spec, environment(unit, spec, {}))
    assert argv[1:] == ["capture", "--every", "5m", "--keep", "12", f"{spec['C']}/fairtop"]
    proc = host.start(unit, argv, {}, user)
    try:
        line = _first_line(proc, timeout=120)
    finally:
        _stop(proc)
    assert re.fullmatch(rf"current {re.escape(spec['C'])}/fairtop/\d{{8}}T\d{{6}}Z", line), line
    current = Path(spec["C"]) / "fairtop" / "current"
    _owned_by(current.resolve() / "sshare_a_l_P.psv", user)
    yield current


def test_the_publisher_publishes_a_snapshot_users_can_read(published: Path) -> None:
    assert published.is_symlink()
    sshare = published / "sshare_a_l_P.psv"
    assert sshare.read_bytes() == (CAPTURE / "sshare_a_l_P.psv").read_bytes()
    assert oct(published.resolve().stat().st_mode & 0o777) == "0o755" and oct(sshare.stat().st_mode & 0o777) == "0o644"
    done = subprocess.run([sys.executable, "-m", "tui.cli", "standing", "--from", str(published), "--user", "la"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.startswith("la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead of you · "), done.stderr


@pytest.fixture(scope="module")
def ledgers(host: Host) -> Iterator[dict[str, str]]:
    """fairtop-allocations@a and @b: instance -> URL, each on its own SQLite ledger in its state
    folder, with the tokens credential of the unit's token drop-in."""
    unit = Unit.read(UNITS / "fairtop-allocations@.service")
    procs, urls = [], {}
    try:
        for instance in INSTANCES:
            spec, user = host.spec(instance), run_as(unit)
            mode = int(unit.one("StateDirectoryMode"), 8)
            state = host.folder(specifiers("%S/fairtop-allocations/%i", spec), user, mode)
            creds = host.folder(spec["d"], user, 0o700)
            (creds / "tokens").write_text(f'[[token]]\ntoken = "{TOKEN}"\nuid = 0\ngids = [0]\nrole = "superuser"\n')
            (creds / "tokens").chmod(0o400)
            if user:
                shutil.chown(creds / "tokens", user)
            # /etc/fairtop/allocations/NAME.env, and the drop-in's Environment= for token auth
            env_file = {"DB": str(state / "ledger.db"), "LISTEN": f"127.0.0.1:{_free_port()}",
                        "OPTIONS": specifiers("--auth token --tokens %d/tokens", spec)}
            argv = exec_start(unit, spec, environment(unit, spec, env_file))
            assert argv[1:5] == ["serve-allocations", "--migrate", "--db", env_file["DB"]]
            procs.append(host.start(unit, argv, {}, user))
            line = _first_line(procs[-1])
            found = re.fullmatch(r"fairtop: allocation service on (http://127\.0\.0\.1:\d+) \(sqlite, auth token\)",
                                 line)
            assert found, line
            urls[instance] = found.group(1)
        yield urls
    finally:
        for proc in procs:
            _stop(proc)


def test_two_ledger_instances_serve_their_own_ledgers(ledgers: dict[str, str], host: Host) -> None:
    a, b = ledgers["a"], ledgers["b"]
    assert _http(f"{a}/health") and _http(f"{b}/health")
    created = _http(f"{a}/project", b'{"name": "chem", "gid": 7001, "account": "chem"}')
    assert '"name":"chem"' in created.replace(" ", "")
    assert '"chem"' in _http(f"{a}/project") and _http(f"{b}/project").strip() == "[]"
    for instance in INSTANCES:
        ledger = Path(host.spec(instance)["S"]) / "fairtop-allocations" / instance / "ledger.db"
        assert ledger.is_file() and ledger.stat().st_mode & 0o077 == 0  # UMask=0077: the ledger is the service's
        _owned_by(ledger, run_as(Unit.read(UNITS / "fairtop-allocations@.service")))


def test_publish_balances_writes_the_file_the_submit_check_reads(ledgers: dict[str, str], host: Host) -> None:
    a = ledgers["a"]
    projects = _http(f"{a}/project")
    if '"chem"' not in projects:
        _http(f"{a}/project", b'{"name": "chem", "gid": 7001, "account": "chem"}')
    pid = re.search(r'"id":\s*(\d+)', _http(f"{a}/project")).group(1)  # type: ignore[union-attr]
    year = time.gmtime().tm_year
    alloc = _http(f"{a}/alloc", f'{{"project": {pid}, "resource": "cpu", "category": "startup", '
                                f'"start": "{year}-01-01", "end": "{year}-12-31"}}'.encode())
    aid = re.search(r'"id":\s*(\d+)', alloc).group(1)  # type: ignore[union-attr]
    _http(f"{a}/alloc/{aid}/credit", b'{"su_hours": 10}')
    unit = Unit.read(UNITS / "fairtop-publish-balances.service")
    spec, user = host.spec(), run_as(unit)
    folder = host.folder(specifiers("%C/fairtop-balances", spec), user, int(unit.one("CacheDirectoryMode"), 8))
    # /etc/fairtop/publish-balances.env
    env = environment(unit, spec, {"FAIRTOP_ALLOC_URL": a, "FAIRTOP_ALLOC_AUTH": "token", "FAIRTOP_ALLOC_TOKEN": TOKEN})
    argv = exec_start(unit, spec, env)
    assert argv[1:] == ["allocations", "publish-balances", "--every", "10", str(folder / "balances")]
    proc = host.start(unit, argv, env, user)
    try:
        deadline = time.monotonic() + 60
        while not (folder / "balances").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        _stop(proc)
    lines = (folder / "balances").read_text().splitlines()
    assert lines[1].split("\t")[:6] == ["chem", "7001", "cpu", f"{year}-01-01", f"{year}-12-31", "600"]
    assert oct((folder / "balances").stat().st_mode & 0o777) == "0o644"  # every submitter's filter reads it
    _owned_by(folder / "balances", user)


def test_metrics_serve_the_published_snapshot(published: Path, host: Host) -> None:
    unit = Unit.read(UNITS / "fairtop-metrics.service")
    spec, user = host.spec(), run_as(unit)
    port = _free_port()
    env = environment(unit, spec, {"LISTEN": f"127.0.0.1:{port}"})  # /etc/fairtop/metrics.env
    argv = exec_start(unit, spec, env)
    assert argv[1:] == ["serve-metrics", "--listen", f"127.0.0.1:{port}", "--from", str(published)]
    proc = host.start(unit, argv, {}, user)
    try:
        assert _first_line(proc).startswith(f"fairtop: metrics on http://127.0.0.1:{port}/metrics")
        deadline = time.monotonic() + 60
        while True:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "no snapshot in 60 s"
                time.sleep(0.2)
    finally:
        _stop(proc)
    assert re.search(r'^fairtop_association_fairshare\{[^}]*account="grp",user="la"[^}]*\} 0\.250000$', body,
                     re.MULTILINE), body[:800]
