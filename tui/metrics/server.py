"""The HTTP side of ``fairtop serve-metrics``: ``GET /metrics`` from the last snapshot.

A loader thread reads the source (once, or on a live source's cadence: ``refresh_rate``, and a
published folder is re-read each period) and renders the text once per snapshot; a scrape only
adds the snapshot's age, so scrapes never cause a load and never reach slurmctld. Until the
first snapshot, and for as long as there is none, ``/metrics`` answers 503 with the reason. A
snapshot that cannot be read again (a vanished folder) is one line on stderr; the last one stays
served, its age growing, so a stale-data alert fires.

With a certificate and key it serves HTTPS, and with users (name -> salted hash,
:mod:`tui.security.passwords`) it asks for basic auth, as Prometheus exporters' web config does; the TLS
handshake runs in the connection's own thread, so a client that stalls or is refused (it does
not trust the certificate) holds up no other scrape and costs no traceback.

stdlib ``http.server``: the body is pre-rendered, so a framework would add nothing but startup.
"""

from __future__ import annotations

import base64
import gzip
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TextIO

from tui.allocations.coldfront import ColdFrontAllocation
from tui.config import AllocationAccess, ColdFrontAccess
from tui.formats.openmetrics import CONTENT_TYPE, EOF, TEXT_CONTENT_TYPE, Family
from tui.metrics.exposition import age_tail, allocation_families, coldfront_families, merge, snapshot_families
from tui.model import Allocation, Snapshot
from tui.sources.registry import Source

__all__ = ["Rendered", "MetricsState", "allocation_readers", "make_server", "run_allocation_feed", "run_loader",
           "serve_metrics"]

Records = tuple[Allocation, ...] | tuple[ColdFrontAllocation, ...]
Reader = tuple[str, str, Callable[[], Records]]
"""(origin, where, read): the allocation service, the embedded ledger or ColdFront, and how to read it."""


@dataclass(frozen=True)
class Rendered:
    """The families of every snapshot read so far, as text and gzip (a scrape appends the age
    as a second gzip member: members concatenate)."""

    snapshots: tuple[Snapshot, ...]
    body: bytes
    body_gz: bytes


class MetricsState:
    """What a scrape serves: the last snapshot of each source (cluster), or why there is none."""

    def __init__(self) -> None:
        self.rendered: Rendered | None = None
        self.reason = "no snapshot yet: the source is being read"
        self._parts: dict[str, tuple[Snapshot | None, list[Family]]] = {}
        self._lock = threading.Lock()

    def current(self, key: str) -> Snapshot | None:
        """The snapshot served for source ``key``."""
        part = self._parts.get(key)
        return part[0] if part else None

    def publish(self, snap: Snapshot, key: str = "") -> list[str]:
        """Serve ``snap`` as source ``key``'s snapshot; returns its warnings."""
        fams, notes = snapshot_families(snap)
        self._serve(key, fams, snap)
        return notes

    def publish_allocations(self, origin: str, allocations: Records, at: datetime) -> None:
        """Serve the allocations read from the ledger, the allocation service or ColdFront
        (``origin``) at ``at``. They are the site's, not a cluster's: no cluster label."""
        if origin == "coldfront":
            self._serve(origin, coldfront_families([a for a in allocations if isinstance(a, ColdFrontAllocation)],
                                                   {"origin": origin}), None)
            return
        self._serve(origin, allocation_families([a for a in allocations if isinstance(a, Allocation)], at,
                                                {"origin": origin}), None)

    def _serve(self, key: str, fams: list[Family], snap: Snapshot | None) -> None:
        for fam in fams:  # one string per family: 155k sample strings at 20k associations weigh ~25 MB
            fam.samples = ["".join(fam.samples)] if fam.samples else []
        with self._lock:
            self._parts[key] = (snap, fams)
            if all(s is None for s, _ in self._parts.values()):
                return  # allocations alone: the snapshot is what /metrics waits for
            body = merge(f for _, f in self._parts.values()).encode()
            self.rendered = Rendered(tuple(s for s, _ in self._parts.values() if s is not None), body,
                                     gzip.compress(body, compresslevel=1, mtime=0))

    def scrape(self, openmetrics: bool, gz: bool) -> bytes | None:
        """The response body, or None (503: see :attr:`reason`)."""
        got = self.rendered
        if got is None:
            return None
        tail = (age_tail(got.snapshots) + (EOF if openmetrics else "")).encode()
        if gz:
            return got.body_gz + gzip.compress(tail, compresslevel=1, mtime=0)
        return got.body + tail


def run_loader(source: Source, state: MetricsState, stop: threading.Event, err: TextIO | None = None,
               cluster: str = "") -> None:
    """Read ``source`` into ``state`` now, then every ``source.refresh_s`` while it is live (a
    saved folder is read once, until it is read well). Failures are one line on ``err``, each
    new reason once. ``cluster``: the cluster label of its series (default: the snapshot's own:
    Slurm's ClusterName, a PBS folder's name)."""
    err = err or sys.stderr
    key = cluster or source.describe()
    live = source.is_live()
    last_error = ""
    last: Snapshot | None = None
    while not stop.is_set():
        try:
            source.check()  # a folder's cached snapshot would hide that the folder has vanished
            snap = source.load()
            if snap is last:  # the source has nothing new (a publisher that has not moved on)
                notes = []
            else:
                last = snap
                notes = state.publish(replace(snap, cluster=cluster) if cluster else snap, key)
            if last_error:
                print(f"fairtop serve-metrics: the source is back: {source.describe()}", file=err, flush=True)
            last_error = ""
            for note in notes:
                print(f"fairtop: warning: {note}", file=err, flush=True)
        except Exception as exc:  # noqa: BLE001 - any failed read: say it in one line, keep serving
            reason = " ".join(str(exc).split()) or type(exc).__name__
            if state.rendered is None:
                state.reason = f"no snapshot: {source.describe()}: {reason}"
            if reason != last_error:
                kept = " (serving the last snapshot)" if state.current(key) is not None else ""
                print(f"fairtop serve-metrics: cannot read {source.describe()}: {reason}{kept}", file=err, flush=True)
            last_error = reason
        if not live and state.current(key) is not None:
            return
        stop.wait(max(source.refresh_s, 1.0))


def run_allocation_feed(origin: str, where: str, read: Callable[[], Records], state: MetricsState,
                        stop: threading.Event, period_s: float, err: TextIO | None = None) -> None:
    """Read the allocations of the ledger or service (``origin`` at ``where``) every ``period_s``
    (no slurmctld involved). A failed read is one line (each new reason once); the last
    allocations read stay served, as the allocations pane shows them "stale since"."""
    err = err or sys.stderr
    last_error = ""
    while not stop.is_set():
        try:
            state.publish_allocations(origin, read(), datetime.now(timezone.utc))
            last_error = ""
        except Exception as exc:  # noqa: BLE001 - any failed read: one line, keep the last
            reason = " ".join(str(exc).split()) or type(exc).__name__
            if reason != last_error:
                print(f"fairtop serve-metrics: cannot read the allocation {origin} {where}: {reason}", file=err,
                      flush=True)
            last_error = reason
        stop.wait(max(period_s, 1.0))


def _basic_user(header: str | None) -> tuple[str, str] | None:
    """(user, password) of an ``Authorization: Basic`` header."""
    kind, _, value = (header or "").partition(" ")
    if kind.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


def _handler(state: MetricsState, check: Callable[[str, str], bool] | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 60  # a connection that says nothing for a minute is closed (its thread ends)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if check is not None:
                given = _basic_user(self.headers.get("Authorization"))
                if given is None or not check(*given):
                    self._send(401, b"fairtop serve-metrics: basic auth needed\n", "text/plain; charset=utf-8",
                               challenge='Basic realm="fairtop metrics", charset="UTF-8"')
                    return
            if self.path.split("?", 1)[0] != "/metrics":
                self._send(404, b"fairtop serve-metrics: GET /metrics\n", "text/plain; charset=utf-8")
                return
            openmetrics = "application/openmetrics-text" in self.headers.get("Accept", "")
            gz = "gzip" in self.headers.get("Accept-Encoding", "")
            body = state.scrape(openmetrics, gz)
            if body is None:
                self._send(503, f"{state.reason}\n".encode(), "text/plain; charset=utf-8")
                return
            self._send(200, body, CONTENT_TYPE if openmetrics else TEXT_CONTENT_TYPE, gz)

        def _send(self, code: int, body: bytes, content_type: str, gz: bool = False, challenge: str = "") -> None:
            self.send_response(code)
            if challenge:
                self.send_header("WWW-Authenticate", challenge)
            self.send_header("Content-Type", content_type)
            if gz:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the scraper hung up: nothing to tell it
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
            """No line per scrape (Prometheus scrapes every 15 s)."""

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[socket.socket, object]:
        """Accept; with TLS, wrap without the handshake, which the connection's thread makes."""
        conn, addr = super().get_request()
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, addr

    def finish_request(self, request: object, client_address: object) -> None:
        if isinstance(request, ssl.SSLSocket):
            request.settimeout(30)
            try:
                request.do_handshake()
            except (OSError, ssl.SSLError):  # refused, untrusted, plain HTTP, stalled: nothing to serve
                return
        super().finish_request(request, client_address)  # type: ignore[arg-type]

    def handle_error(self, request: object, client_address: object) -> None:
        """A scraper that hung up (reset, broken pipe, TLS closed) is not an error worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, ssl.SSLError, TimeoutError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def make_server(state: MetricsState, host: str, port: int, tls: ssl.SSLContext | None = None,
                users: Callable[[str, str], bool] | None = None) -> ThreadingHTTPServer:
    """The server bound to ``host:port`` (0: a free port); OSError when it cannot bind. ``tls``:
    serve HTTPS; ``users``: the basic-auth check (:class:`tui.security.passwords.PasswordCheck`)."""
    server = _Server((host, port), _handler(state, users))
    server.tls = tls
    return server


def allocation_readers(access: AllocationAccess, coldfront: ColdFrontAccess | None = None) -> list[Reader]:
    """The configured allocation service, embedded ledger and ColdFront (what its token's holder
    sees), read as the allocations pane reads them."""
    import asyncio

    from tui.allocations.coldfront import read_coldfront
    from tui.analysis.allocation_feeds import read_ledger, read_service

    out: list[Reader] = []
    url, ledger = access.url, access.ledger
    if url:
        out.append(("service", url, lambda: asyncio.run(read_service(url, token=access.token, munge=access.munge,
                                                                     timeout=access.timeout,
                                                                     ca_file=access.ca_file))))
    if ledger:
        out.append(("ledger", ledger, lambda: read_ledger(ledger)))
    if coldfront is not None and coldfront.token:  # a token's view; not one user's published file
        cf = coldfront
        out.append(("coldfront", cf.url, lambda: asyncio.run(read_coldfront(
            cf.url, token=cf.token, timeout=cf.timeout, ca_file=cf.ca_file, public=cf.public)).allocations))
    return out


def serve_metrics(server: ThreadingHTTPServer, state: MetricsState, sources: Mapping[str, Source],
                  readers: Sequence[Reader], refresh_s: float, ready: Callable[[str], None]) -> None:
    """One loader per source (cluster name -> source; "": its own name) and per allocation
    reader, then serve until interrupted; ``ready`` is told what is served once they started."""
    stop = threading.Event()
    for name, source in sources.items():
        threading.Thread(target=run_loader, args=(source, state, stop), kwargs={"cluster": name},
                         name=f"metrics-{name or source.name}", daemon=True).start()
    for origin, where, read in readers:
        threading.Thread(target=run_allocation_feed, args=(origin, where, read, state, stop, refresh_s),
                         name=f"metrics-{origin}", daemon=True).start()
    ready(", ".join(f"{name or 'its cluster'}: {s.describe()}" for name, s in sources.items()))
    try:
        server.serve_forever()
    finally:
        stop.set()
        server.server_close()
