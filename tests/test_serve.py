"""``fairtop serve``: the app through textual-serve, behind a one-time token, in a real browser.

The browser test drives Debian's chromium with chromedriver (selenium). The terminal is drawn on
a canvas, so the test also records the bytes the page's websocket received and replays them into
a VT100 screen (pyte) to read what the browser was shown; the PNG in ``screenshots/`` is the
browser's own rendering.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.needs import missing
from tui.cli import build_parser
from tui.serve import child_command, url_for

CAPTURE = FIXTURES / "slurm" / "live" / "fair_tree"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCREENSHOT = ROOT / "screenshots" / "browser-tree-filter.png"


def test_child_command_is_an_argument_list() -> None:
    args = build_parser().parse_args(["serve", "--from", "-odd dir; rm -rf ~", "--user", "a b", "--theme", "nord"])
    argv = child_command(args)
    assert argv[:3] == [sys.executable, "-m", "tui.cli"]
    assert argv[3:] == ["--from=-odd dir; rm -rf ~", "--user=a b", "--theme=nord"]
    # the options may also come before the subcommand, as for the app itself
    top = build_parser().parse_args(["--demo", "pbs", "serve", "--port", "0"])
    assert child_command(top)[3:] == ["--demo=pbs"] and top.port == "0" and top.host == "127.0.0.1"
    # and the child parses them back to the same settings
    again = build_parser().parse_args(child_command(args)[3:])
    assert again.source_folder == "-odd dir; rm -rf ~" and again.user == "a b"
    # the cluster to open first ([[cluster]] of the config, or -M with --slurm) goes along
    both = build_parser().parse_args(["serve", "--slurm", "--cluster", "alpha,beta"])
    assert child_command(both)[3:] == ["--slurm", "--cluster=alpha,beta"]


def test_url_for() -> None:
    assert url_for("127.0.0.1", 8000, "t") == "http://127.0.0.1:8000/?token=t"
    assert url_for("::1", 8000, "t") == "http://[::1]:8000/?token=t"


def test_bad_port_and_bad_source_fail_in_the_terminal(capsys) -> None:
    from tui.cli import main

    assert main(["serve", "--port", "http"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["serve", "--port", "0", "--from", "/nonexistent/x"]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["--demo", "slurm", "serve", "--from", str(CAPTURE)]) == 2
    assert "one source at a time" in capsys.readouterr().err


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """``fairtop serve --port 0 --from CAPTURE``: its first stdout line and the process."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("FAIRTOP_CONFIG", None)
    # relative to the checkout (the cwd): the title bar, and so the screenshot, names the capture
    # as the repository holds it, not a path of the machine that ran the test
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--from",
                             str(CAPTURE.relative_to(ROOT))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url, proc.stderr.read()
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _status(url: str) -> int:
    try:
        with urlopen(url, timeout=10) as resp:
            return resp.status
    except HTTPError as exc:
        return exc.code


async def _ws(url: str) -> tuple[int | None, bytes]:
    """Open the websocket; (HTTP status if refused, first bytes of the session if any)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        try:
            timeout = aiohttp.ClientWSTimeout(ws_close=2)
            async with session.ws_connect(url + "?width=100&height=30", timeout=timeout) as ws:
                got = b""
                deadline = time.monotonic() + 30
                while b"fairtop" not in got and time.monotonic() < deadline:
                    msg = await ws.receive(timeout=30)
                    if msg.type == aiohttp.WSMsgType.BINARY:
                        got += msg.data
                    elif msg.type != aiohttp.WSMsgType.TEXT:
                        break
                return None, got
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status, b""


def test_the_token_guards_the_page_and_the_websocket(server) -> None:
    url, proc = server
    base, token = url.split("/?token=")
    assert _status(url) == 200
    assert _status(base + "/") == 403
    assert _status(base + "/?token=" + token[:-1] + ("A" if token[-1] != "A" else "B")) == 403
    assert _status(base + "/static/js/textual.js") == 200  # the terminal's script is public
    ws_base = "ws" + base[len("http"):]
    status, got = asyncio.run(_ws(ws_base + "/ws/not-the-token"))
    assert status == 403 and got == b""
    assert _children(proc.pid) == []  # no session was started
    status, got = asyncio.run(_ws(ws_base + "/ws"))
    assert status in (403, 404) and _children(proc.pid) == []
    status, got = asyncio.run(_ws(ws_base + "/ws/" + token))
    assert status is None and b"fairtop" in got  # the right token: a session, the app drawing itself


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its reaper does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def _session_then(ws_url: str, server: subprocess.Popen, kill_server: bool) -> tuple[int, float]:
    """Open a session, wait for its first screen, then close the websocket (the browser went
    away) or SIGKILL the server; the session's pid and how long it lived on."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(ws_url + "?width=100&height=30")
        got = b""
        while b"fairtop" not in got:
            msg = await ws.receive(timeout=30)
            assert msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), msg
            got += msg.data if msg.type == aiohttp.WSMsgType.BINARY else b""
        (pid,) = _children(server.pid)
        if kill_server:
            server.kill()
            server.wait()
        else:
            await ws.close()
        gone = time.monotonic()
        while _alive(pid) and time.monotonic() - gone < 10:
            await asyncio.sleep(0.05)
        if not kill_server or ws.closed:
            return pid, time.monotonic() - gone
        await ws.close()
        return pid, time.monotonic() - gone


@pytest.mark.parametrize("kill_server", [False, True], ids=["browser-closed", "server-killed"])
def test_a_session_ends_when_its_browser_or_its_server_goes_away(server, kill_server: bool) -> None:
    """Closing the websocket stops the session (textual-serve asks it to quit); a server that
    dies closes the session's input pipe, which the session watches as it watches a terminal."""
    url, proc = server
    base, token = url.split("/?token=")
    pid, lived = asyncio.run(_session_then("ws" + base[len("http"):] + "/ws/" + token, proc, kill_server))
    try:
        assert not _alive(pid) and lived < 5, f"the session (pid {pid}) ran on {lived:.1f} s"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


# --- the real browser -------------------------------------------------------------------------

#: Records what the page's websocket receives (base64 chunks) and the terminal size it reports.
RECORDER = r"""
window.__rx = []; window.__size = null;
const NativeWS = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const ws = protocols ? new NativeWS(url, protocols) : new NativeWS(url);
  ws.addEventListener('message', (e) => {
    if (typeof e.data !== 'string') {
      const b = new Uint8Array(e.data); let s = '';
      for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
      window.__rx.push(btoa(s));
    }
  });
  ws.addEventListener('close', () => { window.__closed = true; });
  ws.addEventListener('error', () => { window.__closed = true; });
  const send = ws.send.bind(ws);
  ws.send = (d) => {
    try { const m = JSON.parse(d); if (m[0] === 'resize') window.__size = m[1]; } catch (err) {}
    return send(d);
  };
  return ws;
};
window.WebSocket.prototype = NativeWS.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
"""


@pytest.fixture
def browser():
    absent = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if absent:
        missing(f"no {' or '.join(absent)} (apt-get install chromium chromium-driver; .ci/run does so as root)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="!!!!!!!! selenium not installed (pip install -e .[test])")
    pytest.importorskip("pyte", reason="!!!!!!!! pyte not installed (pip install -e .[test])")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="fairtop-chromium-")
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,900"):
        opts.add_argument(arg)
    drv = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    try:
        drv.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _screen(drv) -> str:
    """What the page's terminal was sent so far, replayed into a screen of its size."""
    import pyte

    size = drv.execute_script("return window.__size")
    if not size:
        return ""
    screen = pyte.Screen(size["width"], size["height"])
    stream = pyte.ByteStream(screen)
    for chunk in drv.execute_script("return window.__rx"):
        stream.feed(base64.b64decode(chunk))
    return "\n".join(screen.display)


def _wait_for(drv, test, timeout: float = 40.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = _screen(drv)
        if test(text):
            return text
        time.sleep(0.3)
    raise AssertionError("the browser never showed it; last screen:\n" + text)


def _rows(text: str) -> list[str]:
    """Tree rows: the lines between the column header and the status line."""
    lines = text.splitlines()
    top = next(i for i, ln in enumerate(lines) if "Account / User" in ln)
    return [ln.strip() for ln in lines[top + 1:] if ln.strip() and not ln.strip().startswith(("snapshot", "?"))
            and "▌" not in ln]


def test_in_a_real_browser_tree_filter_and_screenshot(server, browser) -> None:
    from selenium.webdriver.common.by import By

    url, proc = server
    browser.get(url)
    text = _wait_for(browser, lambda t: "Account / User" in t and "quiet" in t)
    before = _rows(text)
    assert any(r.startswith("▾ root") for r in before) and any("quiet" in r for r in before)
    keys = browser.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea")
    keys.send_keys("/")
    time.sleep(0.5)
    keys.send_keys("lsub")
    time.sleep(0.3)
    keys.send_keys("\n")
    text = _wait_for(browser, lambda t: "filter /lsub/" in t)
    after = _rows(text)
    assert after != before
    assert any("lsub" in r for r in after) and not any("quiet" in r for r in after)
    assert len(after) < len(before)
    assert str(ROOT) not in text and "tests/fixtures/slurm/live/fair_tree" in text  # the title: no machine path
    SCREENSHOT.parent.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_in_a_real_browser_no_token_no_session(server, browser) -> None:
    url, proc = server
    base = url.split("/?token=")[0]
    for bad in (base + "/", base + "/?token=wrong"):
        browser.get(bad)
        assert "needs the token" in browser.find_element("tag name", "body").text
    # the page's script, pointed at the websocket with a wrong token, is refused too
    ws = "ws" + base[len("http"):] + "/ws/wrong?width=80&height=24"
    browser.execute_script("window.__closed = false; new WebSocket(arguments[0]);", ws)
    deadline = time.monotonic() + 10
    while not browser.execute_script("return window.__closed") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert browser.execute_script("return window.__closed") is True
    assert browser.execute_script("return window.__rx.length") == 0
    assert _children(proc.pid) == []
