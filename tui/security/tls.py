"""TLS for fairtop's own services and their clients.

Services (``serve-allocations``, ``serve-metrics``) take a certificate and its key, as
Prometheus exporters' web config does (``tls_server_config.cert_file``/``key_file``). Clients
verify the service's certificate and host name against the system's CAs (OpenSSL's default
paths: Debian's ``/etc/ssl/certs``; ``$SSL_CERT_FILE`` too), or against ``ca_file`` alone when
the config names one (a site CA). httpx's own default would be certifi's bundle, which knows no
site CA and ignores the system's: so the context is always built here. A client given an
``https://`` URL never talks plain HTTP: a list of instances may not mix the two, and no
redirect is followed.

A refusal (unknown CA, wrong host, a plain-HTTP server) is one line naming the URL and the
reason: :func:`failure` finds the SSL error under the client library's wrapping.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tui.security.file_modes import SecretFileError, check_secret_mode

__all__ = ["TlsConfigError", "client_context", "check_schemes", "clear_text_warning", "failure", "is_loopback",
           "server_context", "server_files"]


class TlsConfigError(ValueError):
    """A certificate, key or CA file that cannot be used (one line)."""


@functools.lru_cache(maxsize=8)
def client_context(ca_file: str | None = None) -> ssl.SSLContext:
    """Verify certificates and host names against ``ca_file`` (PEM, one or more CAs) or, with
    None, the system's CAs. TLS 1.2 at least. Cached: a hook that runs per job loads the CAs once."""
    try:
        ctx = ssl.create_default_context(cafile=str(Path(ca_file).expanduser()) if ca_file else None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsConfigError(f"ca_file {ca_file}: {getattr(exc, 'strerror', None) or exc}") from None
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def server_files(cert: str | None, key: str | None) -> tuple[str, str] | None:
    """The (certificate, key) pair a service was given, None for plain HTTP; both or neither."""
    if bool(cert) != bool(key):
        given, missing = ("certificate", "key") if cert else ("key", "certificate")
        raise TlsConfigError(f"a TLS {given} is given but no {missing} (--tls-cert and --tls-key, or tls_cert_file "
                             "and tls_key_file): TLS needs both")
    if not cert or not key:
        return None
    return str(Path(cert).expanduser()), str(Path(key).expanduser())


def server_context(cert: str, key: str) -> ssl.SSLContext:
    """A server context for ``cert`` (PEM, the chain after the leaf) and ``key``; a key that
    others (not the group: Debian's ``ssl-cert``) may read is refused, as ssh refuses one."""
    try:
        check_secret_mode(key, Path(key).stat().st_mode, "TLS key file", others_only=True)
    except OSError as exc:
        raise TlsConfigError(f"TLS key file {key}: {exc.strerror or exc}") from None
    except SecretFileError as exc:
        raise TlsConfigError(str(exc)) from None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except ssl.SSLError as exc:  # an OSError too: first
        reason = str(exc.reason or exc).lower().replace("_", " ")
        raise TlsConfigError(f"TLS certificate {cert} and key {key} cannot be used: {reason}") from None
    except OSError as exc:
        raise TlsConfigError(f"TLS certificate {cert} or key {key}: {exc.strerror or exc}") from None
    return ctx


def check_schemes(urls: Sequence[str]) -> bool:
    """True when the URLs are https; a list mixing https and http is refused (a client told
    https must never fall back to plain HTTP)."""
    secure = [u.lower().startswith("https://") for u in urls]
    if any(secure) and not all(secure):
        plain = next(u for u, s in zip(urls, secure) if not s)
        raise TlsConfigError(f"allocation_url mixes https and http instances ({plain}): a client told https "
                             "never falls back to plain HTTP; give every instance https://")
    return bool(secure) and all(secure)


def failure(exc: BaseException, ca_file: str | None = None) -> str | None:
    """Why TLS refused the connection (None when ``exc`` is not a TLS failure), in one line:
    the certificate's fault with the CAs it was checked against, or the handshake's."""
    seen: BaseException | None = exc
    for _ in range(8):  # httpx.ConnectError <- httpcore.ConnectError <- ssl.SSLError
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            cas = f"ca_file {ca_file}" if ca_file else "the system's CAs; set ca_file for a site CA"
            reason = (seen.verify_message or seen.reason or "certificate verify failed").rstrip(".")
            return f"TLS: the server's certificate is refused: {reason} (checked against {cas})"
        if isinstance(seen, ssl.SSLError):
            reason = seen.reason or str(seen)
            hint = "; is it serving plain HTTP?" if "WRONG_VERSION" in str(reason).upper() else ""
            return f"TLS handshake failed: {str(reason).lower().replace('_', ' ')}{hint}"
        seen = seen.__cause__ or seen.__context__
    return None


def is_loopback(host: str) -> bool:
    """``host`` (an address or a name) reaches this machine only."""
    name = host.strip("[]")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        addrs = {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    except OSError:
        return False
    return bool(addrs) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs)


def clear_text_warning(command: str, host: str, port: int, what: str, err: TextIO | None = None) -> bool:
    """Say once, at start, that a service bound beyond this machine without TLS sends ``what``
    in clear (True when said)."""
    if is_loopback(host):
        return False
    print(f"fairtop {command}: warning: listening on {host}:{port} without TLS, so the network carries {what} "
          "in clear (give --tls-cert and --tls-key, or tls_cert_file and tls_key_file)", file=err or sys.stderr,
          flush=True)
    return True
