"""What TLS and basic auth cost: ``python bench/tls.py [-n 9]``.

In one run, against certificates made now with ``openssl`` (tests/certs.py):

* contexts: a client's verifying context from the system's CAs, from a site ``ca_file``, and
  httpx's own default (certifi's bundle), what each ``AllocationClient`` (a hook per job) builds;
* basic auth: one PBKDF2-SHA256 check at 600,000 iterations, and a remembered one;
* serve-metrics: a scrape of a small snapshot on a new connection over HTTP, HTTPS, and HTTPS
  with basic auth (remembered), as a client that does not keep connections alive sees it;
* serve-allocations: ``GET /health`` through :class:`AllocationClient` (one client, kept
  alive) over HTTP and HTTPS, and the first request of a new client (connect + handshake).

Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import ssl
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from tests.allocations.services import SUPER, Server, write_tokens  # noqa: E402
from tests.certs import make_pki  # noqa: E402
from tui.allocations.client import AllocationClient  # noqa: E402
from tui.metrics.server import MetricsState, make_server  # noqa: E402
from tui.model import Snapshot  # noqa: E402
from tui.security.passwords import PasswordCheck, hash_password  # noqa: E402
from tui.security.tls import server_context  # noqa: E402


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def scrape(url: str, ctx: ssl.SSLContext | None, auth: str | None) -> None:
    headers = {"Authorization": auth} if auth else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10, context=ctx) as resp:
        resp.read()


def metrics(pki_dir: Path, n: int) -> None:
    pki = make_pki(pki_dir)
    state = MetricsState()
    state.publish(Snapshot(cluster="c", source="bench"))
    users = PasswordCheck({"prometheus": hash_password("pw")})
    trusting = ssl.create_default_context(cafile=str(pki.ca))
    auth = "Basic " + base64.b64encode(b"prometheus:pw").decode()
    for name, tls, check, ctx, header in (("HTTP", None, None, None, None),
                                          ("HTTPS", server_context(str(pki.cert), str(pki.key)), None, trusting, None),
                                          ("HTTPS + basic auth", server_context(str(pki.cert), str(pki.key)), users,
                                           trusting, auth)):
        server = make_server(state, "127.0.0.1", 0, tls, check)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}/metrics"
        scrape(url, ctx, header)  # the first (with auth: the one PBKDF2 check)
        print(f"serve-metrics scrape, new connection, {name}: {median_ms(lambda: scrape(url, ctx, header), n):.2f} ms")
        server.shutdown()
        server.server_close()


async def _health(url: str, ca: str, n: int) -> tuple[float, float]:
    async def first() -> None:
        async with AllocationClient(url, token=SUPER, ca_file=ca) as api:
            await api.health()

    firsts = []
    for _ in range(n):
        t = time.perf_counter()
        await first()
        firsts.append(time.perf_counter() - t)
    async with AllocationClient(url, token=SUPER, ca_file=ca) as api:
        await api.health()
        times = []
        for _ in range(n * 5):
            t = time.perf_counter()
            await api.health()
            times.append(time.perf_counter() - t)
    return statistics.median(firsts) * 1000, statistics.median(times) * 1000


def allocations(tmp: Path, n: int) -> None:
    pki = make_pki(tmp / "pki2")
    tokens = write_tokens(tmp / "tokens.toml")
    base = ["--auth", "token", "--tokens", str(tokens)]
    for name, extra in (("HTTP", []), ("HTTPS", ["--tls-cert", str(pki.cert), "--tls-key", str(pki.key)])):
        server = Server(str(tmp / f"ledger-{name}.db"), base + extra).start()
        try:
            first, kept = asyncio.run(_health(server.url, str(pki.ca), n))
        finally:
            server.stop()
        print(f"serve-allocations GET /health, {name}: {kept:.2f} ms kept alive, {first:.2f} ms for a new client")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=9)
    n = parser.parse_args().n
    tmp = Path(tempfile.mkdtemp(prefix="fairtop-bench-tls-"))
    pki = make_pki(tmp / "pki")
    print(f"client context, system CAs: {median_ms(ssl.create_default_context, n):.1f} ms")
    print(f"client context, ca_file: {median_ms(lambda: ssl.create_default_context(cafile=str(pki.ca)), n):.2f} ms")
    print(f"httpx default context (certifi): {median_ms(httpx.create_ssl_context, n):.1f} ms")
    stored = hash_password("pw")
    check = PasswordCheck({"prometheus": stored})
    fresh = iter([PasswordCheck({"u": stored}) for _ in range(3)])  # each with nothing remembered
    first = median_ms(lambda: next(fresh)("u", "pw"), 3)
    print(f"basic auth, first check (PBKDF2 600,000): {first:.0f} ms")
    check("prometheus", "pw")
    print(f"basic auth, remembered: {median_ms(lambda: check('prometheus', 'pw'), n * 100) * 1000:.1f} us")
    metrics(tmp / "m", n)
    allocations(tmp, n)


if __name__ == "__main__":
    main()
