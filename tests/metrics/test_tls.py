"""``serve-metrics`` over TLS with basic auth (issue 24, item 3): the server itself, the command
and its config, and a real Prometheus (Debian's) that scrapes it with ``tls_config.ca_file`` and
``basic_auth``, and fails to without the CA or without the password. Certificates are made now
with Debian's ``openssl`` (tests/certs.py)."""

from __future__ import annotations

import base64
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.certs import Pki, make_pki
from tests.metrics.test_prometheus import _free_port, _prometheus, _query
from tui import config
from tui.metrics.server import MetricsState, make_server
from tui.model import Snapshot
from tui.security.passwords import PasswordCheck, hash_password, verify
from tui.security.tls import server_context

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURE = FIX / "slurm/nested_parent/fair_tree"
ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "scrape-me-please"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _get(url: str, ctx: ssl.SSLContext | None, user: str | None = None,
         password: str = PASSWORD) -> tuple[int, dict[str, str], bytes]:
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10, context=ctx) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_https_with_basic_auth(pki: Pki) -> None:
    state = MetricsState()
    state.publish(Snapshot(cluster="c", source="hand"))
    users = PasswordCheck({"prometheus": hash_password(PASSWORD, iterations=10_000)})
    server = make_server(state, "127.0.0.1", 0, server_context(str(pki.cert), str(pki.key)), users)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{server.server_address[1]}/metrics"
    trusting = ssl.create_default_context(cafile=str(pki.ca))
    try:
        with pytest.raises(urllib.error.URLError, match="certificate verify failed"):
            _get(url, ssl.create_default_context())  # the system's CAs do not know the test CA
        code, headers, body = _get(url, trusting)
        assert (code, headers["WWW-Authenticate"], body) == (
            401, 'Basic realm="fairtop metrics", charset="UTF-8"', b"fairtop serve-metrics: basic auth needed\n")
        assert _get(url, trusting, "prometheus", "wrong")[0] == 401
        assert _get(url, trusting, "nobody")[0] == 401
        code, _, body = _get(url, trusting, "prometheus")
        assert code == 200 and b'fairtop_snapshot_age_seconds{cluster="c"}' in body
        assert _get(url, trusting, "prometheus")[0] == 200  # remembered: no second PBKDF2
        with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP to the TLS port: closed
            _get(url.replace("https://", "http://"), None, "prometheus")
        assert _get(url, trusting, "prometheus")[0] == 200  # refused handshakes cost the server nothing
    finally:
        server.shutdown()
        server.server_close()


def test_hash_password_and_the_config(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tui.cli", "hash-password", "prom"], input=f"{PASSWORD}\n",
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    m = re.fullmatch(r'prom = "(pbkdf2-sha256\$600000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43})"\n', done.stdout)
    assert m and verify(PASSWORD, m.group(1)) and not verify("other", m.group(1))
    good = tmp_path / "good.toml"
    good.write_text(f"[metrics_basic_auth_users]\n{done.stdout}")
    assert set(config.read_file(good)["metrics_basic_auth_users"]) == {"prom"}
    clear = tmp_path / "clear.toml"
    clear.write_text(f'[metrics_basic_auth_users]\nprom = "{PASSWORD}"\n')
    with pytest.raises(config.ConfigError, match=r"metrics_basic_auth_users.prom must be a hash made by 'fairtop "
                                                 r"hash-password' \(pbkdf2-sha256\$...\), never the password itself"):
        config.read_file(clear)


def _start(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen, str, Path]:
    """``serve-metrics ARGS`` until it says where it serves: (process, URL, its stderr file)."""
    err = tmp_path / f"serve-metrics-{len(list(tmp_path.iterdir()))}.err"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve-metrics", "--from", str(CAPTURE), *args],
                            stdout=subprocess.PIPE, stderr=err.open("w"), text=True, cwd=ROOT, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"metrics on (\S+)", line)
    if not m:
        proc.kill()
        pytest.fail(f"serve-metrics did not start: {line}{err.read_text()}")
    return proc, m.group(1), err


def test_the_command_from_its_config_and_the_clear_text_warning(pki: Pki, tmp_path: Path) -> None:
    conf = tmp_path / "site.toml"
    conf.write_text(f'tls_cert_file = "{pki.cert}"\ntls_key_file = "{pki.key}"\n[metrics_basic_auth_users]\n'
                    f'prometheus = "{hash_password(PASSWORD, iterations=10_000)}"\n')
    proc, url, err = _start(["--config", str(conf), "--listen", "127.0.0.1:0"], tmp_path)
    try:
        assert url.startswith("https://127.0.0.1:")
        deadline = time.monotonic() + 30
        while (code := _get(url, ssl.create_default_context(cafile=str(pki.ca)), "prometheus")[0]) == 503:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert code == 200
    finally:
        proc.terminate()
        proc.wait(10)
    assert "without TLS" not in err.read_text()
    proc, url, err = _start(["--listen", "0.0.0.0:0"], tmp_path)
    proc.terminate()
    proc.wait(10)
    port = url.split(":")[2].split("/")[0]
    said = [line for line in err.read_text().splitlines() if "without TLS" in line]
    assert said == [f"fairtop serve-metrics: warning: listening on 0.0.0.0:{port} without TLS, so the network "
                    "carries every user's usage in clear (give --tls-cert and --tls-key, or tls_cert_file and "
                    "tls_key_file)"]


@pytest.fixture
def prometheus_scraping_tls(pki: Pki, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A real Prometheus scraping one HTTPS serve-metrics with basic auth three ways: ``tls``
    (ca_file and the password), ``noca`` (the password, the system's CAs), ``nopass`` (the CA,
    no password). Yields (its API base, serve-metrics' port)."""
    prometheus = _prometheus()
    conf = tmp_path / "site.toml"
    conf.write_text(f'tls_cert_file = "{pki.cert}"\ntls_key_file = "{pki.key}"\n[metrics_basic_auth_users]\n'
                    f'prometheus = "{hash_password(PASSWORD)}"\n')  # the real cost: remembered after one check
    metrics_port, prom_port = _free_port(), _free_port()
    server, _, _ = _start(["--config", str(conf), "--listen", f"127.0.0.1:{metrics_port}"], tmp_path)
    auth = f"    basic_auth:\n      username: prometheus\n      password: {PASSWORD}\n"
    tls = f"    tls_config:\n      ca_file: {pki.ca}\n"
    jobs = {"tls": tls + auth, "noca": auth, "nopass": tls}
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + "".join(
            f"  - job_name: {name}\n    scheme: https\n{extra}"
            f"    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n" for name, extra in jobs.items()))
    prom = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    try:
        yield f"http://127.0.0.1:{prom_port}", metrics_port
    finally:
        for proc in (prom, server):
            proc.terminate()
            proc.wait(10)


def _targets(base: str) -> dict[str, dict]:
    with urllib.request.urlopen(f"{base}/api/v1/targets", timeout=10) as resp:
        return {t["labels"]["job"]: t for t in json.load(resp)["data"]["activeTargets"]}


def test_prometheus_scrapes_over_tls_with_basic_auth_and_fails_without_the_ca(
        prometheus_scraping_tls: tuple[str, int]) -> None:
    base, port = prometheus_scraping_tls
    deadline = time.monotonic() + 60
    while True:
        try:
            targets = _targets(base)
            if len(targets) == 3 and all(t["health"] != "unknown" for t in targets.values()) and \
                    _query(base, 'fairtop_snapshot_age_seconds{job="tls"}'):
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "Prometheus did not scrape serve-metrics over TLS within 60 s"
        time.sleep(0.5)
    assert targets["tls"]["health"] == "up" and targets["tls"]["scrapeUrl"] == f"https://127.0.0.1:{port}/metrics"
    assert _query(base, 'fairtop_association_rank{job="tls",account="adaa",user="udaa1"}')
    assert targets["noca"]["health"] == "down" and "certificate signed by unknown authority" in \
        targets["noca"]["lastError"]
    assert targets["nopass"]["health"] == "down" and "401 Unauthorized" in targets["nopass"]["lastError"]
    assert not _query(base, 'up{job=~"noca|nopass"} == 1')
