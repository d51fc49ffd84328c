"""slurmrestd over https is verified as fairtop's other clients verify (tui.security.tls.client_context):
against ``ca_file``, or the system's CAs (OpenSSL's paths, ``$SSL_CERT_FILE``), never certifi's
bundle, which knows no site CA. A real TLS server on 127.0.0.1 with a CA made now (tests/certs.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.certs import Pki, make_pki
from tui import config
from tui.sources.slurmrestd import ApiUnavailable, RestClient
from tui.security.tls import client_context, server_context


class _Json(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"path": self.path, "user": self.headers.get("X-SLURM-USER-NAME")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _https(cert: Path, key: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Json)
    server.socket = server_context(str(cert), str(key)).wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def site_ca_url(pki: Pki) -> Iterator[str]:
    yield from _https(pki.cert, pki.key)


@pytest.fixture(scope="module")
def unknown_ca_url(pki: Pki) -> Iterator[str]:
    yield from _https(pki.unknown_ca_cert, pki.unknown_ca_key)


def _get(url: str, **kw: object) -> dict:
    with RestClient(url=url, token="jwt", user="alice", retries=2, sleep=lambda s: None, **kw) as rest:  # type: ignore[arg-type]
        return rest.get_json("/openapi")


def test_a_site_ca_given_as_ca_file(site_ca_url: str, pki: Pki) -> None:
    assert _get(site_ca_url, ca_file=str(pki.ca)) == {"path": "/openapi", "user": "alice"}


def test_without_ca_file_the_systems_cas_not_certifis() -> None:
    """No ca_file: the context every fairtop client uses, with the system's CAs (OpenSSL's
    paths: Debian's /etc/ssl/certs, where update-ca-certificates puts a site CA), not httpx's
    default, certifi's bundle."""
    with RestClient(url="https://head.example:6820", token="jwt", user="alice") as rest:
        assert rest._client._transport._pool._ssl_context is client_context(None)  # type: ignore[attr-defined]


def test_an_unknown_ca_is_refused_in_one_line_and_not_retried(site_ca_url: str, unknown_ca_url: str,
                                                              pki: Pki) -> None:
    for url, kw, against in ((unknown_ca_url, {"ca_file": str(pki.ca)}, f"ca_file {pki.ca}"),
                             (site_ca_url, {}, "the system's CAs; set ca_file for a site CA")):
        with pytest.raises(ApiUnavailable) as err:
            _get(url, **kw)
        assert str(err.value) == (f"slurmrestd {url}: TLS: the server's certificate is refused: unable to get local "
                                  f"issuer certificate (checked against {against})")


def test_the_configured_source_verifies_against_ca_file(site_ca_url: str, pki: Pki) -> None:
    settings = config.Settings(source="slurmrestd", slurmrestd=site_ca_url, ca_file=str(pki.ca))
    source = config.make_source(settings)
    assert source.ca_file == str(pki.ca)
    rest = source.rest  # type: ignore[attr-defined]
    assert rest.where["ca_file"] == str(pki.ca) and rest.where["url"] == site_ca_url
    [cluster] = config.make_sources(settings, pick="one").values()
    assert cluster.ca_file == str(pki.ca)
