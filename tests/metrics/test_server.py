"""The server: 503 with the reason before a snapshot, gzip, a vanished snapshot, and the one-line
errors of the command (unknown source, port in use)."""

from __future__ import annotations

import gzip
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.metrics.scrape import parse
from tui.metrics.server import MetricsState, make_server, run_loader
from tui.model import Snapshot
from tui.sources import registry

FIX = Path(__file__).resolve().parents[1] / "fixtures"
NESTED = FIX / "slurm/nested_parent/fair_tree"


def serving(state: MetricsState) -> tuple[str, object]:
    server = make_server(state, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/metrics", server


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_503_with_the_reason_until_a_snapshot_then_200() -> None:
    state = MetricsState()
    url, server = serving(state)
    try:
        code, _, body = get(url)
        assert (code, body) == (503, b"no snapshot yet: the source is being read\n")
        state.publish(Snapshot(cluster="c", source="hand"))
        code, headers, body = get(url, {"Accept": "application/openmetrics-text; version=1.0.0"})
        assert code == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
        assert body.endswith(b"# EOF\n")
        code, headers, plain = get(url)
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4") and not plain.endswith(b"# EOF\n")
    finally:
        server.shutdown()  # type: ignore[attr-defined]


def test_gzip_when_asked_is_the_same_text() -> None:
    state = MetricsState()
    state.publish(registry.make("folder", str(NESTED)).load())
    url, server = serving(state)
    try:
        _, headers, raw = get(url, {"Accept-Encoding": "gzip"})
        _, _, plain = get(url)
    finally:
        server.shutdown()  # type: ignore[attr-defined]
    assert headers["Content-Encoding"] == "gzip"
    unzipped = gzip.decompress(raw).decode()  # two gzip members: the families, then the age
    def strip_age(text: str) -> dict:
        return {k: v for k, v in parse(text).items() if k != "fairtop_snapshot_age_seconds"}

    assert strip_age(unzipped) == strip_age(plain.decode())
    assert len(parse(unzipped)["fairtop_association_fairshare"]) > 20


def test_a_failing_source_is_the_503_reason() -> None:
    state = MetricsState()
    stop = threading.Event()
    source = registry.make("folder", "/nonexistent/fairtop-capture")
    source.refresh_s = 1
    err = _Lines()
    t = threading.Thread(target=run_loader, args=(source, state, stop, err), daemon=True)
    t.start()
    _wait(lambda: err.lines)
    stop.set()
    assert state.rendered is None and state.reason.startswith("no snapshot: ")
    assert "/nonexistent/fairtop-capture" in state.reason
    assert len(err.lines) == 1 and err.lines[0].startswith("fairtop serve-metrics: cannot read folder:")


def test_a_vanished_snapshot_is_one_line_and_the_last_stays_served(tmp_path: Path) -> None:
    capture = tmp_path / "20260301T000000Z"
    shutil.copytree(NESTED, capture)
    (tmp_path / "current").symlink_to(capture.name)
    source = registry.make("folder", str(tmp_path / "current"))
    source.refresh_s = 1
    state, stop, err = MetricsState(), threading.Event(), _Lines()
    t = threading.Thread(target=run_loader, args=(source, state, stop, err), daemon=True)
    t.start()
    _wait(lambda: state.rendered is not None)
    first = state.rendered
    shutil.rmtree(capture)
    _wait(lambda: any("cannot read" in line for line in err.lines))
    time.sleep(2.5)  # two more periods: the same reason is not repeated
    stop.set()
    t.join(5)
    failed = [line for line in err.lines if "cannot read" in line]
    assert len(failed) == 1 and failed[0].endswith("(serving the last snapshot)")
    assert state.rendered is first
    body = state.scrape(openmetrics=False, gz=False)
    assert body is not None and b"fairtop_association_fairshare" in body


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines += [line for line in text.splitlines() if line]
        return len(text)

    def flush(self) -> None:
        pass


def _wait(cond: object, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": "/nonexistent-fairtop-test"}
    return subprocess.run([sys.executable, "-m", "tui.cli", "serve-metrics", *args], capture_output=True, text=True,
                          timeout=60, env=env)


def test_unknown_source_is_one_line(tmp_path: Path) -> None:
    done = _cli("--from", str(tmp_path / "missing"), "--listen", "127.0.0.1:0")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "missing" in done.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('source = "nosuch"\n')
    done = _cli("--config", str(bad), "--listen", "127.0.0.1:0")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "nosuch" in done.stderr


def test_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _cli("--from", str(NESTED), "--listen", f"127.0.0.1:{port}")
    assert done.returncode == 1
    assert done.stderr.strip() == f"fairtop serve-metrics: cannot listen on 127.0.0.1:{port}: Address already in use"


def _serve(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """``fairtop serve-metrics ARGS --listen 127.0.0.1:0`` running, and its /metrics URL."""
    env = {**os.environ, "XDG_CONFIG_HOME": "/nonexistent-fairtop-test", **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve-metrics", *args, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("fairtop: metrics on http://"), first
    return proc, first.split()[3]


def test_every_configured_cluster_in_one_scrape(tmp_path: Path) -> None:
    """Two [[cluster]] tables, a Slurm capture and a PBS folder: one scrape, each family once
    (one # TYPE line), the clusters' series under their configured names."""
    pbs = tmp_path / "pbs"
    pbs.mkdir()
    shutil.copy(FIX / "pbs/man_resource_group", pbs / "resource_group")
    shutil.copy(FIX / "pbs/man_usage.txt", pbs / "usage.txt")
    config = tmp_path / "config.toml"
    config.write_text(f'[[cluster]]\nname = "alpha"\nsource = "folder:{NESTED}"\n\n'
                      f'[[cluster]]\nname = "beta"\nsource = "folder:{pbs}"\n')
    proc, url = _serve("--config", str(config))
    try:
        _wait(lambda: get(url)[0] == 200 and b'cluster="beta"' in get(url)[2] and b'cluster="alpha"' in get(url)[2])
        text = get(url)[2].decode()
    finally:
        proc.terminate()
        proc.wait(10)
    types = [line for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types))
    got = parse(text)
    assert {lab["cluster"] for lab, _ in got["fairtop_snapshot_age_seconds"]} == {"alpha", "beta"}
    assert {lab["cluster"] for lab, _ in got["fairtop_association_fairshare"]} == {"alpha"}
    assert {lab["cluster"] for lab, _ in got["fairtop_pbs_entity_fairshare_factor"]} == {"beta"}
    schedulers = {lab["cluster"]: lab["scheduler"] for lab, _ in got["fairtop_scheduler_info"]}
    assert schedulers == {"alpha": "slurm", "beta": "pbs"}


def test_cluster_names_a_single_sources_label() -> None:
    """A PBS folder is named after its folder (a published one: its capture time, a new label
    each capture); --cluster gives the series a stable name."""
    proc, url = _serve("--from", str(NESTED), "--cluster", "prod")
    try:
        _wait(lambda: get(url)[0] == 200)
        got = parse(get(url)[2].decode())
    finally:
        proc.terminate()
        proc.wait(10)
    assert {lab["cluster"] for series in got.values() for lab, _ in series} == {"prod"}


def test_the_ledgers_allocations(tmp_path: Path) -> None:
    """The embedded ledger ($FAIRTOP_ALLOC_DB, as the allocations pane reads it): 100 SU
    credited, a job pre-debited 10 SU and completed at 5, another holding 2: balance 93."""
    from tui.allocations.ledger import open_ledger

    db = str(tmp_path / "ledger.db")
    ledger = open_ledger(db, migrate=True)
    project = ledger.create_project("chem", 7001, "chem")
    alloc = ledger.create_allocation(project["id"], "cpu", "startup", "2026-01-01", "2099-12-31")
    ledger.credit(alloc["id"], 6000)
    ledger.predebit("j1", 5001, 7001, "cpu", 600, today="2026-06-15")
    ledger.complete("j1", "completed", 300)
    ledger.predebit("j2", 5001, 7001, "cpu", 120, today="2026-06-15")
    ledger.close()
    proc, url = _serve("--from", str(NESTED), env={"FAIRTOP_ALLOC_DB": db})
    try:
        _wait(lambda: get(url)[0] == 200 and b"fairtop_allocation_balance{" in get(url)[2])
        got = parse(get(url)[2].decode())
    finally:
        proc.terminate()
        proc.wait(10)
    labels = {"origin": "ledger", "allocation": str(alloc["id"]), "project": "chem"}
    values = {name: v for name, series in got.items() for lab, v in series if lab == labels}
    assert {k: values[k] for k in ("fairtop_allocation_credits", "fairtop_allocation_debits",
                                   "fairtop_allocation_pre_debits", "fairtop_allocation_balance")} == {
        "fairtop_allocation_credits": 100.0, "fairtop_allocation_debits": 5.0,
        "fairtop_allocation_pre_debits": 2.0, "fairtop_allocation_balance": 93.0}


def test_a_scraper_that_hangs_up_leaves_no_traceback() -> None:
    """A client that closes the connection before the body is read (``curl | head``): the server
    writes nothing to stderr about it and answers the next scrape."""
    import socket
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "--demo", "slurm", "serve-metrics", "--listen",
                             f"127.0.0.1:{port}"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "metrics on" in (proc.stdout.readline() if proc.stdout else "")
        for _ in range(50):  # the demo's snapshot is read in the background
            with socket.create_connection(("127.0.0.1", port)) as c:
                c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                head = c.recv(64)
            if head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"):
                break
            time.sleep(0.1)
        for _ in range(5):  # hang up right after the status line, with a reset
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            c.recv(16)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            c.close()
        time.sleep(0.5)
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert c.recv(64).split(b"\r\n")[0].endswith(b"200 OK")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err
