"""The flags of the services and their clients: ``--listen HOST:PORT``, ``--tls-cert``/``--tls-key``
(checked before a service starts), ``--ca-file``, and flags given as the environment they override."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tui.sources.errors import InputError

if TYPE_CHECKING:
    import ssl

    from tui.config import Settings


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def listen_option(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument("--listen", type=_listen, default=("127.0.0.1", port), metavar="HOST:PORT",
                        help=f"address to listen on (default 127.0.0.1:{port}; port 0 picks a free one)")


def tls_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM, leaf then chain; "
                        "default: tls_cert_file of the config)")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM, not readable by others; "
                        "default: tls_key_file)")


def ca_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ca-file", metavar="FILE", help="verify an https service against these CAs (PEM) "
                        "instead of the system's (default: $FAIRTOP_ALLOC_CA_FILE, else ca_file)")


def given(values: dict[str, str | None]) -> dict[str, str]:
    """The flags given, as the environment variables they override."""
    return {k: v for k, v in values.items() if v}


def service_tls(args: argparse.Namespace, settings: Settings) -> tuple[tuple[str, str], ssl.SSLContext] | None:
    """(certificate, key) of a service, flags over config, checked now (None: plain HTTP);
    InputError on one line when they cannot be used."""
    from tui.security.tls import TlsConfigError, server_context, server_files

    try:
        files = server_files(args.tls_cert or settings.tls_cert_file, args.tls_key or settings.tls_key_file)
        return (files, server_context(*files)) if files else None
    except TlsConfigError as exc:
        raise InputError(args.command, str(exc)) from None
