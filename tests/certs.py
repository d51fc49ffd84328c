"""A test PKI made at test time with Debian's ``openssl`` (argument lists, no shell): a CA, a
server certificate for 127.0.0.1 and localhost, one for another host, and one from a CA the
clients do not know. EC P-256 keys (made in milliseconds); the extensions Python 3.13's strict
verification asks for (CA basicConstraints and keyUsage, the leaf's key identifiers and
serverAuth)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

_LEAF_EXT = ("basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature",
             "extendedKeyUsage=serverAuth", "subjectKeyIdentifier=hash", "authorityKeyIdentifier=keyid")


@dataclass(frozen=True)
class Pki:
    ca: Path
    """The CA the clients are told (``ca_file``)."""
    cert: Path
    key: Path
    """A certificate for IP:127.0.0.1 and DNS:localhost, and its key (0600)."""
    wrong_host_cert: Path
    wrong_host_key: Path
    """Signed by the same CA, for DNS:elsewhere.example only."""
    unknown_ca_cert: Path
    unknown_ca_key: Path
    """For 127.0.0.1 and localhost, signed by a CA nobody was told."""


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _ca(folder: Path, name: str) -> tuple[Path, Path]:
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
             "-out", str(cert), "-days", "2", "-subj", f"/CN=fairtop test {name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-addext", "subjectKeyIdentifier=hash")
    return cert, key


def _leaf(folder: Path, name: str, ca: tuple[Path, Path], san: str) -> tuple[Path, Path]:
    key, csr, cert, ext = (folder / f"{name}.key", folder / f"{name}.csr", folder / f"{name}.pem",
                           folder / f"{name}.ext")
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
             "-out", str(csr), "-subj", f"/CN={name}")
    ext.write_text("\n".join((*_LEAF_EXT, f"subjectAltName={san}")) + "\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
             "-out", str(cert), "-days", "2", "-extfile", str(ext))
    key.chmod(0o600)
    return cert, key


def make_pki(folder: Path) -> Pki:
    """The PKI in ``folder`` (about 0.1 s)."""
    if shutil.which("openssl") is None:
        message = "NO OPENSSL: the TLS tests did NOT run (apt-get install openssl; .ci/run does so as root)"
        if os.geteuid() == 0:
            pytest.fail(message)
        pytest.skip("!!!!!!!! " + message)
    folder.mkdir(parents=True, exist_ok=True)
    ca, other = _ca(folder, "ca"), _ca(folder, "other-ca")
    good = _leaf(folder, "server", ca, "IP:127.0.0.1,DNS:localhost")
    wrong = _leaf(folder, "wrong-host", ca, "DNS:elsewhere.example")
    stranger = _leaf(folder, "unknown-ca", other, "IP:127.0.0.1,DNS:localhost")
    return Pki(ca[0], *good, *wrong, *stranger)
