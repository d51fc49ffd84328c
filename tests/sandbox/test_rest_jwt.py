"""Integration: slurmrestd of Slurm 26.05 over TCP with JWT (auth/jwt), as real sites reach it.

A sandbox of its own (the CI 26.05 build; its own directory and ports, purged afterwards) gets
``AuthAltTypes=auth/jwt`` in slurm.conf and slurmdbd.conf, slurmctld and slurmdbd restarted, and
slurmrestd on 127.0.0.1 with ``rest_auth/jwt`` as the user ``slurmrestd`` (``SLURM_JWT=daemon``,
as Slurm's docs ask). The token is ``scontrol token``'s for a plain user (slurmrestd refuses root's
and SlurmUser's), handed to fairtop in ``$SLURM_JWT`` only: never on a command line, and no error
fairtop prints contains it. About 30 s.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.sandbox._sandbox import RELEASES, on_release, release_env, scripts

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox, *on_release("26.05")]

PORT = 7991  # slurmrestd on 127.0.0.1
USER, ACCOUNT = "ftjwt", "ftjwtacct"


def _env() -> dict[str, str]:
    base = release_env("26.05")
    env = {k: v for k, v in base.items() if not k.startswith("SANDBOX_")}
    env.update(SANDBOX_SLURM=base["SANDBOX_SLURM"], SANDBOX_DIR="/tmp/fairtop-jwt-sandbox", SANDBOX_CTLD_PORT="7987",
               SANDBOX_SLURMD_PORT="7988", SANDBOX_DBD_PORT="7989", SANDBOX_DB_PORT="14426", SANDBOX_RESTD="0",
               SANDBOX_CLUSTER="jwtsbx", SLURM_CONF="/tmp/fairtop-jwt-sandbox/etc/slurm.conf")
    return env


def _run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180, **kw)
    assert done.returncode == 0, f"{args[0]}: {done.stderr[-1500:]}"
    return done


def _daemon_pid(env: dict[str, str], name: str) -> int:
    rows = [line.split() for line in (Path(env["SANDBOX_DIR"]) / "pids").read_text().splitlines() if line.strip()]
    return int([p for n, p in rows if n == name][-1])


@pytest.fixture(scope="module")
def jwt_sandbox():
    if os.geteuid() != 0:
        pytest.skip("needs root (starts a sandbox)")
    assert os.environ.get(RELEASES["26.05"])
    env = _env()
    folder = Path(env["SANDBOX_DIR"])
    _run([str(scripts() / "up.sh")], env)
    spec = folder / "spec.txt"
    spec.write_text(f"account root {ACCOUNT} 5\nuser {ACCOUNT} {USER} 1\n")
    _run([str(scripts() / "tree.sh"), str(spec)], env)
    key = folder / "etc" / "jwt.key"
    key.write_bytes(secrets.token_bytes(32))
    key.chmod(0o600)
    alt = f"AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key={key}\n"
    for conf in ("slurm.conf", "slurmdbd.conf"):
        with open(folder / "etc" / conf, "a") as f:
            f.write(alt)
    started: list[subprocess.Popen] = []
    for name, argv in (("slurmdbd", ["slurmdbd", "-D"]), ("slurmctld", ["slurmctld", "-D"])):
        pid = _daemon_pid(env, name)
        assert Path(f"/proc/{pid}/comm").read_text().strip() == name
        os.kill(pid, 15)
        while Path(f"/proc/{pid}").exists():
            time.sleep(0.1)
        log = open(folder / "log" / f"{name}.jwt.out", "ab")
        started.append(subprocess.Popen(argv, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                        start_new_session=True))
        time.sleep(1.5)
    restd_log = open(folder / "log" / "slurmrestd.jwt.out", "ab")
    started.append(subprocess.Popen(
        ["runuser", "-u", "slurmrestd", "--", "env", f"SLURM_CONF={env['SLURM_CONF']}", "SLURM_JWT=daemon",
         f"{env['SANDBOX_SLURM']}/sbin/slurmrestd", "-a", "rest_auth/jwt", f"127.0.0.1:{PORT}"],
        env=env, stdout=restd_log, stderr=restd_log, stdin=subprocess.DEVNULL, start_new_session=True))
    try:
        for _ in range(100):
            token = subprocess.run(["scontrol", "token", f"username={USER}", "lifespan=600"], env=env,
                                   capture_output=True, text=True, timeout=30)
            if token.returncode == 0:
                break
            time.sleep(0.3)
        assert token.returncode == 0, token.stderr
        yield env, token.stdout.strip().split("=", 1)[1]
    finally:
        for proc in reversed(started):  # the daemons this fixture started, by PID
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        subprocess.run([str(scripts() / "down.sh"), "--purge"], env=env, capture_output=True, timeout=120)


def test_the_rest_source_over_tcp_with_a_jwt_from_the_environment(jwt_sandbox) -> None:
    env, token = jwt_sandbox
    run_env = {**env, "SLURM_JWT": token, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tui.cli", "--slurmrestd", f"http://127.0.0.1:{PORT}", "report", "--format", "json"]
    assert token not in " ".join(argv)
    done = subprocess.run(argv, env={**run_env, "USER": USER, "LOGNAME": USER}, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert token not in done.stdout + done.stderr
    import json

    rows = {(r["account"], r["user"]) for r in json.loads(done.stdout)}
    assert {("root", ""), (ACCOUNT, ""), (ACCOUNT, USER)} <= rows
    assert "read from /shares' values" in done.stderr  # the REST tree with /shares: no usage "unknown"


def test_a_refused_token_is_one_line_that_does_not_show_it(jwt_sandbox) -> None:
    env, token = jwt_sandbox
    bad = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    done = subprocess.run([sys.executable, "-m", "tui.cli", "--slurmrestd", f"http://127.0.0.1:{PORT}", "report"],
                          env={**env, "SLURM_JWT": bad, "PYTHONPATH": str(ROOT), "USER": USER, "LOGNAME": USER},
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    # slurmdbd refuses it (slurmrestd answers 502 for the associations): one line, no token in it
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "slurmrestd" in done.stderr and bad not in done.stderr and token.split(".")[2] not in done.stderr


def test_the_token_from_a_file(jwt_sandbox, tmp_path) -> None:
    """``$FAIRTOP_SLURM_JWT_FILE`` names a file holding ``scontrol token``'s line; the token is in no
    argument and in nothing fairtop prints."""
    env, token = jwt_sandbox
    path = tmp_path / "jwt"
    path.write_text(f"SLURM_JWT={token}\n")
    path.chmod(0o600)
    run_env = {k: v for k, v in env.items() if k != "SLURM_JWT"}
    run_env.update(FAIRTOP_SLURM_JWT_FILE=str(path), PYTHONPATH=str(ROOT), USER=USER, LOGNAME=USER)
    done = subprocess.run([sys.executable, "-m", "tui.cli", "--slurmrestd", f"http://127.0.0.1:{PORT}", "report",
                           "--format", "csv"], env=run_env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert f"{ACCOUNT},{USER}," in done.stdout and token not in done.stdout + done.stderr
    run_env["FAIRTOP_SLURM_JWT_FILE"] = str(tmp_path / "missing")
    done = subprocess.run([sys.executable, "-m", "tui.cli", "--slurmrestd", f"http://127.0.0.1:{PORT}", "report"],
                          env=run_env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "missing" in done.stderr, done.stderr
