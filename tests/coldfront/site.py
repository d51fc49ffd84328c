"""A real ColdFront for the tests: the pinned, hashed release of ``requirements.txt`` in its own
venv (a Django site, not a dependency of fairtop), SQLite, its test data plus ``populate.py``,
served by gunicorn (one of its dependencies) on 127.0.0.1, plain or with a certificate.

Built once into ``$FAIRTOP_TEST_CACHE`` (default ``~/.cache/fairtop-tests``), keyed by the sha256
of ``requirements.txt`` and ``populate.py``: the venv (about a minute with the wheels to fetch)
and a template database with the tokens (about a minute); each test session copies the template.
``python3 -m tests.coldfront.site`` builds it ahead with the standard library alone (``.ci/run``
does, beside the rest of its start).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
POPULATE = HERE / "populate.py"


class BuildFailed(RuntimeError):
    """ColdFront could not be built here (no network, no venv module, ...): one line."""


def cache_dir() -> Path:
    """Where the build lives, keyed by what it is made from."""
    key = hashlib.sha256(REQUIREMENTS.read_bytes() + POPULATE.read_bytes()).hexdigest()[:16]
    root = Path(os.environ.get("FAIRTOP_TEST_CACHE") or Path.home() / ".cache" / "fairtop-tests")
    return root / f"coldfront-{key}"


def site_env(db: Path, static: Path) -> dict[str, str]:
    """ColdFront's settings, from the environment as its docs give them."""
    return {**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")},
            "DEBUG": "False", "SECRET_KEY": "fairtop-tests-only", "DB_URL": f"sqlite:///{db}", "PLUGIN_API": "True",
            "PLUGIN_SLURM": "True", "STATIC_ROOT": str(static), "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SETTINGS_MODULE": "coldfront.config.settings", "PYTHONDONTWRITEBYTECODE": "1"}


def _run(argv: list[str], env: dict[str, str], timeout: float, stdin: str | None = None) -> str:
    try:
        done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(f"{Path(argv[0]).name} {argv[1] if len(argv) > 1 else ''}: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise BuildFailed(f"{Path(argv[0]).name} {' '.join(argv[1:3])} failed: {last}")
    return done.stdout


def build() -> Path:
    """The cache folder with ``venv/``, ``template.db`` and ``tokens.json``; built if missing
    (one session builds, another waits on the lock)."""
    home = cache_dir()
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "built").exists():
            shutil.rmtree(home, ignore_errors=True)  # a build cut off before its end
            _build(home)
    return home


def _build(home: Path) -> None:
    try:
        venv.EnvBuilder(with_pip=True).create(home / "venv")
    except Exception as exc:  # ensurepip missing (Debian: python3-venv), ...
        raise BuildFailed(f"cannot make a venv for ColdFront: {exc}") from None
    py = str(home / "venv" / "bin" / "python")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes", "-r", str(REQUIREMENTS)],
         env, timeout=900)
    site = site_env(home / "template.db", home / "static")
    coldfront = str(home / "venv" / "bin" / "coldfront")
    _run([coldfront, "initial_setup", "--force_overwrite"], site, timeout=600)
    _run([coldfront, "load_test_data"], site, timeout=600)
    out = _run([py, str(POPULATE)], site, timeout=300)
    (home / "tokens.json").write_text(out.strip().splitlines()[-1])
    (home / "built").write_text("")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Site:
    """A running ColdFront."""

    url: str
    tokens: dict[str, str]
    """User name -> API token (cgray, sfoster, pmanager, nobody, staffer)."""
    revoked: str
    """A token ColdFront made and then deleted."""
    pid: int
    """gunicorn's master (the tests stop and continue it: a slow ColdFront)."""
    db: Path
    home: Path
    """The build (its venv)."""

    def slurm_dump(self, out: Path) -> dict[str, str]:
        """``coldfront slurm_dump``: cluster name -> the file it writes for ``sacctmgr load``."""
        coldfront = str(self.home / "venv" / "bin" / "coldfront")
        _run([coldfront, "slurm_dump", "-o", str(out)], site_env(self.db, self.db.parent / "static"), timeout=120)
        return {f.stem: f.read_text() for f in sorted(out.glob("*.cfg"))}

    @contextmanager
    def stalled(self) -> Iterator[None]:
        """ColdFront accepts connections but answers nothing (its processes stopped) meanwhile."""
        os.killpg(self.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(self.pid, signal.SIGCONT)


@contextmanager
def serve(folder: Path, tls: tuple[Path, Path] | None = None) -> Iterator[Site]:
    """Copy the template database into ``folder`` and serve ColdFront on a free port of
    127.0.0.1 until the block ends (https with ``tls`` = (certificate, key))."""
    home = build()
    db = folder / "coldfront.db"
    shutil.copy(home / "template.db", db)
    tokens = json.loads((home / "tokens.json").read_text())
    port = free_port()
    argv = [str(home / "venv" / "bin" / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2",
            "--timeout", "120", "--access-logfile", "-", "coldfront.config.wsgi:application"]
    if tls:
        argv += ["--certfile", str(tls[0]), "--keyfile", str(tls[1])]
    log = (folder / f"gunicorn-{port}.log").open("w")
    proc = subprocess.Popen(argv, env=site_env(db, folder / "static"), stdout=log, stderr=subprocess.STDOUT,
                            cwd=folder, start_new_session=True)
    scheme = "https" if tls else "http"
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise BuildFailed(f"gunicorn exited {proc.returncode}: see {log.name}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise BuildFailed(f"ColdFront did not listen on {url} within 60 s") from None
                time.sleep(0.2)
        if not tls:  # the first request loads Django: before the tests' timeouts start
            import httpx  # here: `python3 -m tests.coldfront.site` builds with the standard library alone

            httpx.get(f"{url}/api/allocations/", headers={"Authorization": f"Token {tokens['tokens']['nobody']}"},
                      timeout=60)
        yield Site(url, tokens["tokens"], tokens["revoked"], proc.pid, db, home)
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


if __name__ == "__main__":
    try:
        print(build())
    except BuildFailed as exc:
        sys.exit(f"ColdFront for the tests: {exc}")
