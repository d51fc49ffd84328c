"""Overload is refused, not queued: far more pre-debits at once than the service commits in
time, against the real service on 127.0.0.1 (SQLite and PostgreSQL).

512 raw HTTP/1.1 connections send pre-debits back to back for a few seconds, 32 times as many at
once as the service lets in when behind (a refused one is sent again after Retry-After, as the
hooks' client does, with its jitter). Once the first second's burst (all 512 at the same instant) is through,
the service keeps committing; the rest gets 503 with
Retry-After at once; the service's memory stays put; and what was acknowledged is exactly what
the ledger holds. Before the bound, all 512 queued: no 503, and each waited 512 / the rate.
``bench/allocations.py --overload`` runs the same at ten times what one instance commits and
measures the latency of what is let in (p99 under 100 ms is a bench target: asserted here it
failed at load 8 and passed at load 2 at 96 ms, the same code).
"""

from __future__ import annotations

import asyncio
import io
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tui.allocations.client import ApiUnavailable
from tui.allocations.commands import Connection, hook
from tui.allocations.slurm_hooks import HookJob, prolog, run_hook

from .services import SUPER, Server
from .test_concurrency import _allocation

CONNECTIONS, SECONDS, WARM_UP = 512, 4.0, 1.0


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def _post(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> tuple[int, bytes]:
    """One keep-alive ``POST /job``: the status and the response head."""
    writer.write(b"POST /job HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (SUPER.encode(), len(body), body))
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line[15:]) for line in head.split(b"\r\n") if line[:15].lower() == b"content-length:")
    await reader.readexactly(length)
    return int(head.split(b" ", 2)[1]), head.lower()


async def _flood(url: str, gid: int) -> tuple[Counter, list[float], int, set[bytes]]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    codes: Counter = Counter()
    accepted: list[float] = []
    retry_after: set[bytes] = set()
    held = 0
    start = time.monotonic()
    end = start + SECONDS

    async def client(n: int) -> None:
        nonlocal held
        reader, writer = await asyncio.open_connection(host, int(port))
        i = 0
        while time.monotonic() < end:
            minutes = 1 + i % 5
            body = b'{"job_id": "o-%d-%d", "uid": %d, "gid": %d, "resource": "cpu", "minutes": %d}' % (
                n, i, 6000 + n, gid, minutes)
            t0 = time.perf_counter()
            status, head = await _post(reader, writer, body)
            codes[status] += 1
            if status == 201:
                if time.monotonic() - start > WARM_UP:
                    accepted.append(time.perf_counter() - t0)
                held += minutes
                i += 1
            elif status == 503:
                after = [line for line in head.split(b"\r\n") if line.startswith(b"retry-after:")]
                retry_after.update(after)
                await asyncio.sleep((float(after[0][12:]) if after else 1.0) * (1 + 0.25 * random.random()))
        writer.close()

    await asyncio.gather(*(client(n) for n in range(CONNECTIONS)))
    return codes, sorted(accepted), held, retry_after


def test_overload_gets_503_and_keeps_committing(db: str, tokens_file: Path) -> None:
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file)]).start()  # the default settings
    try:
        aid = _allocation(server.url, "flood", 7201, 10**9)
        assert server.proc is not None
        rss_before = _rss_kb(server.proc.pid)
        codes, accepted, held, retry_after = asyncio.run(_flood(server.url, 7201))
        rss_after = _rss_kb(server.proc.pid)
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {SUPER}"}, timeout=10) as su:
            alloc = su.get(f"/alloc/{aid}").json()
    finally:
        server.stop()
    assert set(codes) <= {201, 503}, codes
    assert codes[503] > 0 and retry_after <= {b"retry-after: %d" % s for s in range(1, 5)}, (codes, retry_after)
    assert codes[201] > 200, codes  # and it kept committing meanwhile
    assert rss_after - rss_before < 30_000, f"RSS grew {rss_before} -> {rss_after} kB"
    assert alloc["predebits"] == held  # nothing acknowledged was lost, nothing refused landed


# --- what the hooks do with a refusal -------------------------------------------------------------

class _Refusing(BaseHTTPRequestHandler):
    """What an overloaded service answers to everything (Retry-After 0 keeps the test short)."""

    seen: list[str] = []

    def _refuse(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"error": "overloaded: 300 requests in progress; retry after 0 s"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def refusing_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Refusing.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


JOB = HookJob(job_id="77", uid=6001, gid=7001, account="chem", cpus=4, gpus=0, time_limit_min=30)


def test_the_prolog_reads_503_as_later(refusing_url: str) -> None:
    """The pre-debit is not acknowledged and nobody says whether it landed: ApiUnavailable, which
    ``fairtop allocations hook prolog`` turns into exit 1 (slurmctld requeues the job), not a
    refusal (which would cancel it)."""
    with pytest.raises(ApiUnavailable):
        run_hook(lambda api: prolog(api, JOB), refusing_url, SUPER, False, timeout=5)
    assert not any(s.startswith("PUT") for s in _Refusing.seen)


def test_the_submission_check_has_no_opinion_on_503(refusing_url: str, capsys: pytest.CaptureFixture) -> None:
    options = io.StringIO("account=chem\nntasks=4\ntime=30\n")
    assert hook("submit", Connection(url=refusing_url, token=SUPER, timeout=5), env={}, stdin=options) == 0
    assert "balance not checked" in capsys.readouterr().err
