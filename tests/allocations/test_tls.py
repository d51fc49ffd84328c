"""The allocation service over TLS and every client of it (issue 24, item 3): ``fairtop balance``,
``publish-balances``, the Slurm submit hook, the app's reader. A CA and certificates made now with
Debian's ``openssl`` (tests/certs.py); real services on 127.0.0.1 (embedded SQLite ledger).

A client verifies against ``ca_file`` (or the system's CAs) and refuses a wrong host, an
unknown CA or a plain-HTTP server with one line naming the URL and the reason: no traceback,
no token. A service bound beyond loopback without TLS says so once at start."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.certs import Pki, make_pki
from tui.allocations.client import AllocationClient, TlsRefused
from tui.allocations.ledger import open_ledger
from tui.analysis.allocation_feeds import read_service

from .services import ROOT, SUPER, Server, write_tokens


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def ledger_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A ledger with one project and one active allocation of 600 cpu-minutes."""
    path = str(tmp_path_factory.mktemp("ledger") / "ledger.db")
    led = open_ledger(path, migrate=True)
    project = led.create_project("chem", 7001, "chem")
    alloc = led.create_allocation(project["id"], "cpu", "startup", "2020-01-01", "2099-12-31")
    led.credit(alloc["id"], 600)
    led.close()
    return path


def _serve(ledger: str, tokens: Path, *extra: str) -> Server:
    return Server(ledger, ["--auth", "token", "--tokens", str(tokens), *extra]).start(migrate=False)


@pytest.fixture(scope="module")
def servers(pki: Pki, ledger_file: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """good: the CA's certificate for 127.0.0.1; wrong_host: the CA's, for elsewhere.example;
    unknown_ca: another CA's; plain: no TLS."""
    tokens = write_tokens(tmp_path_factory.mktemp("tokens") / "tokens.toml")
    started: dict[str, Server] = {}
    try:
        for name, cert, key in (("good", pki.cert, pki.key), ("wrong_host", pki.wrong_host_cert, pki.wrong_host_key),
                                ("unknown_ca", pki.unknown_ca_cert, pki.unknown_ca_key)):
            started[name] = _serve(ledger_file, tokens, "--tls-cert", str(cert), "--tls-key", str(key))
        started["plain"] = _serve(ledger_file, tokens)
        yield started
    finally:
        for server in started.values():
            server.stop()


def _cli(*args: str, env: dict[str, str] | None = None, stdin: str = "", home: Path) -> subprocess.CompletedProcess:
    """``python -m tui.cli ARGS`` with no config but ``--config`` (a fresh XDG home)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    full.update(XDG_CONFIG_HOME=str(home), FAIRTOP_ALLOC_TOKEN=SUPER, **(env or {}))
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], input=stdin, env=full, capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


def _one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr and SUPER not in stderr, stderr
    return stderr


def test_the_service_says_https_and_balance_reads_it_with_the_ca(servers: dict[str, Server], pki: Pki,
                                                                 tmp_path: Path) -> None:
    url = servers["good"].url
    assert url.startswith("https://127.0.0.1:")
    done = _cli("balance", "--url", url, "--ca-file", str(pki.ca), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[:3] == ["1", "chem", "cpu"] and " 10.0 " in done.stdout
    # localhost is in the certificate too
    done = _cli("balance", "--url", url.replace("127.0.0.1", "localhost"), "--ca-file", str(pki.ca), home=tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("server, ca, reason", [
    ("wrong_host", True, "IP address mismatch, certificate is not valid for '127.0.0.1'"),
    ("unknown_ca", True, "unable to get local issuer certificate"),
    ("good", False, "unable to get local issuer certificate"),  # the system's CAs do not know the test CA
    ("plain", True, "TLS handshake failed: wrong version number; is it serving plain HTTP?"),
])
def test_balance_refuses_in_one_line(servers: dict[str, Server], pki: Pki, tmp_path: Path, server: str, ca: bool,
                                     reason: str) -> None:
    url = servers[server].url.replace("http://", "https://")
    done = _cli("balance", "--url", url, *(["--ca-file", str(pki.ca)] if ca else []), home=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    line = _one_line(done.stderr)
    assert line.startswith(f"fairtop: {url}: TLS") and reason in line, line
    checked = f"checked against ca_file {pki.ca}" if ca else "checked against the system's CAs; set ca_file"
    assert server == "plain" or checked in line


def test_publish_balances_verifies_with_the_configs_ca_file(servers: dict[str, Server], pki: Pki,
                                                            tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'ca_file = "{pki.ca}"\nallocation_auth = "token"\n')
    out = tmp_path / "balances"
    done = _cli("allocations", "publish-balances", str(out), "--once", "--url", servers["good"].url,
                "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines()[1].split("\t")[:6] == ["chem", "7001", "cpu", "2020-01-01", "2099-12-31",
                                                              "600"]
    assert out.stat().st_mode & 0o777 == 0o644
    bad = servers["wrong_host"].url
    done = _cli("allocations", "publish-balances", str(out), "--once", "--url", bad, "--config", str(config),
                home=tmp_path)
    assert done.returncode == 1
    assert _one_line(done.stderr).startswith(f"fairtop: balances not published: {bad}: TLS: the server's certificate "
                                             "is refused: IP address mismatch")


def test_the_submit_hook_verifies_and_says_why_in_one_line(servers: dict[str, Server], pki: Pki,
                                                           tmp_path: Path) -> None:
    options = "account=chem\ntime=00:10:00\nntasks=1\n"
    env = {"FAIRTOP_ALLOC_AUTH": "token", "FAIRTOP_ALLOC_CA_FILE": str(pki.ca)}
    done = _cli("allocations", "hook", "submit", "--url", servers["good"].url, env=env, stdin=options, home=tmp_path)
    assert (done.returncode, done.stderr) == (0, "fairtop: job fits: 10 of 600 cpu-minutes left\n")
    bad = servers["unknown_ca"].url
    done = _cli("allocations", "hook", "submit", "--url", bad, env=env, stdin=options, home=tmp_path)
    # an unverified service is no answer: the submission passes, the prolog decides (and refuses it too)
    assert done.returncode == 0
    assert _one_line(done.stderr) == (f"fairtop: balance not checked: {bad}: TLS: the server's certificate is "
                                      f"refused: unable to get local issuer certificate (checked against ca_file "
                                      f"{pki.ca})\n")


def test_the_apps_reader_and_the_client(servers: dict[str, Server], pki: Pki) -> None:
    good, bad = servers["good"].url, servers["wrong_host"].url
    allocs = asyncio.run(read_service(good, token=SUPER, munge=False, timeout=5, ca_file=str(pki.ca)))
    assert [(a.project, a.granted_su) for a in allocs] == [("chem", 10.0)]
    with pytest.raises(TlsRefused, match=f"^{bad}: TLS: the server's certificate is refused: IP address mismatch"):
        asyncio.run(read_service(bad, token=SUPER, munge=False, timeout=5, ca_file=str(pki.ca)))

    async def two_instances() -> None:  # the first refused: no move to the next, no retry
        async with AllocationClient(f"{bad}, {good}", token=SUPER, ca_file=str(pki.ca)) as api:
            await api.allocations()

    with pytest.raises(TlsRefused, match=f"^{bad}: TLS"):
        asyncio.run(two_instances())


def test_https_never_falls_back_to_http(servers: dict[str, Server], pki: Pki, tmp_path: Path) -> None:
    plain = servers["plain"].url
    mixed = f"{servers['good'].url}, {plain}"
    done = _cli("balance", "--url", mixed, "--ca-file", str(pki.ca), home=tmp_path)
    assert done.returncode == 1
    assert _one_line(done.stderr) == (f"fairtop: allocation_url mixes https and http instances ({plain}): a client "
                                      "told https never falls back to plain HTTP; give every instance https://\n")


def test_a_plain_service_beyond_loopback_says_so_once(ledger_file: str, tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens.toml")
    server = Server(ledger_file, ["--auth", "token", "--tokens", str(tokens)])
    server.start(migrate=False)
    try:
        assert server.log is not None
        assert "warning" not in server.log.read_text()  # 127.0.0.1
    finally:
        server.stop()
    wide = Server(ledger_file, ["--auth", "token", "--tokens", str(tokens), "--listen", "0.0.0.0:0"])
    wide.start(migrate=False)
    try:
        port = wide.url.rsplit(":", 1)[1]
        assert wide.log is not None
        warnings = [line for line in wide.log.read_text().splitlines() if "warning" in line]
        assert warnings == [f"fairtop serve-allocations: warning: listening on 0.0.0.0:{port} without TLS, so the "
                            "network carries bearer tokens and the ledger's records in clear (give --tls-cert and "
                            "--tls-key, or tls_cert_file and tls_key_file)"]
    finally:
        wide.stop()


@pytest.mark.parametrize("flags, message", [
    (["--tls-cert", "{cert}"], "a TLS certificate is given but no key"),
    (["--tls-cert", "{cert}", "--tls-key", "{other}"], "cannot be used: key values mismatch"),
    (["--tls-cert", "{cert}", "--tls-key", "{open_key}"], "TLS key file {open_key} is readable by others "
                                                          "(mode 0644); chmod 640 {open_key}"),
])
def test_a_bad_certificate_or_key_is_one_line_before_listening(pki: Pki, ledger_file: str, tmp_path: Path,
                                                               flags: list[str], message: str) -> None:
    open_key = tmp_path / "open.key"
    open_key.write_bytes(pki.key.read_bytes())
    open_key.chmod(0o644)
    names = {"cert": pki.cert, "other": pki.wrong_host_key, "open_key": open_key}
    tokens = write_tokens(tmp_path / "tokens.toml")
    done = _cli("serve-allocations", "--db", ledger_file, "--listen", "127.0.0.1:0", "--auth", "token", "--tokens",
                str(tokens), *(f.format(**names) for f in flags), home=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert message.format(**names) in _one_line(done.stderr)


def test_tls_from_the_config(pki: Pki, ledger_file: str, tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text(f'tls_cert_file = "{pki.cert}"\ntls_key_file = "{pki.key}"\n')
    server = Server(ledger_file, ["--auth", "token", "--tokens", str(write_tokens(tmp_path / "t.toml")),
                                  "--config", str(config)]).start(migrate=False)
    try:
        assert server.url.startswith("https://")
        done = _cli("balance", "--url", server.url, "--ca-file", str(pki.ca), home=tmp_path)
        assert done.returncode == 0 and "chem" in done.stdout, done.stderr
    finally:
        server.stop()
