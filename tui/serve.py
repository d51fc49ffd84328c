"""``fairtop serve``: the same app in a browser, through textual-serve, behind a one-time token.

textual-serve has no authentication of its own: any process that can reach its port gets a
session, i.e. a fairtop running as you. On a shared login node every user can reach
127.0.0.1, so the server here

* binds 127.0.0.1 unless told otherwise (reach it from a desktop with ``ssh -L``);
* makes a random token (``secrets.token_urlsafe``, 256 bits) when it starts, and answers the
  page (``/?token=...``) and the websocket (``/ws/<token>``: the page's own script appends
  ``?width=..&height=..`` to the websocket URL, so the token rides in the path) only when the
  token matches (compared in constant time); anything else gets 403 and no process;
* prints the URL, token included, as the first line of standard output (logs go to stderr);
* starts the app for each session from an argument list (``python -m tui.cli`` + the user's
  fairtop options), never from a shell string: textual-serve's own ``AppService`` hands its
  command to a shell, so :class:`ExecAppService` replaces that one method.

Static files (the terminal's JavaScript and CSS) are public; downloads are addressed by the
app's unguessable per-delivery keys, as in textual-serve.

aiohttp and textual-serve are imported when serving starts, so ``fairtop --help`` stays light.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import secrets
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from tui.sources import registry

__all__ = ["child_command", "make_server", "serve", "url_for"]


def child_command(args: argparse.Namespace) -> list[str]:
    """The app command each browser session runs: this Python, ``-m tui.cli``, and the source,
    user, theme and config options of ``args``, each option and value one argument
    (``--from=DIR``: a value that starts with ``-`` cannot turn into an option)."""
    argv = [sys.executable, "-m", "tui.cli"]
    for cls in registry.SOURCES.values():
        value = getattr(args, f"source_{cls.name}", None)
        if value is None or value is False:
            continue
        argv.append(cls.flag if value is True else f"{cls.flag}={value}")
    for name in ("user", "theme", "config", "cluster"):
        value = getattr(args, name, None)
        if value:
            argv.append(f"--{name}={value}")
    return argv


def url_for(host: str, port: int, token: str) -> str:
    """``http://HOST:PORT/?token=TOKEN`` (IPv6 hosts in brackets)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}/?token={token}"


def make_server(argv: Sequence[str], host: str = "127.0.0.1", port: int = 8000, token: str | None = None) -> Any:
    """A textual-serve ``Server`` that runs ``argv`` (no shell) per session and checks ``token``.

    Returns an instance of a ``textual_serve.server.Server`` subclass with ``token``,
    ``make_app()`` (the guarded aiohttp application) and ``public_url``.
    """
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from rich.console import Console
    from textual_serve.app_service import AppService
    from textual_serve.server import Server, log, to_int

    class ExecAppService(AppService):
        """textual-serve's AppService, starting the app from an argument list."""

        def __init__(self, argv: Sequence[str], **kwargs: Any) -> None:
            super().__init__(shlex.join(argv), **kwargs)
            self.argv = list(argv)

        async def _open_app_process(self, width: int = 80, height: int = 24):  # noqa: ANN202
            environment = self._build_environment(width=width, height=height)
            self._process = process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=environment)
            assert process.stdin is not None
            self._stdin = process.stdin
            return process

    class TokenServer(Server):
        """Server with the token check, the token-bearing websocket route and exec'd sessions."""

        def __init__(self) -> None:
            super().__init__(shlex.join(argv), host=host, port=port, title="fairtop")
            self.argv = list(argv)
            self.token = token or secrets.token_urlsafe(32)
            self.console = Console(stderr=True)  # stdout's first line is the URL

        def _ok(self, given: str | None) -> bool:
            return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

        def make_app(self) -> web.Application:
            @web.middleware
            async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
                path = request.path
                if path.startswith(("/static/", "/download/")):
                    return await handler(request)
                given = request.query.get("token") if path == "/" else (
                    path[len("/ws/"):] if path.startswith("/ws/") else None)
                if not self._ok(given):
                    log.warning("refused %s %s: no valid token", request.method, path)
                    raise web.HTTPForbidden(text="fairtop: this address needs the token fairtop serve printed\n")
                return await handler(request)

            app = web.Application(middlewares=[guard])
            aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get("/ws/{token}", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ])
            return app

        @aiohttp_jinja2.template("app_index.html")
        async def handle_index(self, request: web.Request) -> dict[str, Any]:
            base = f"{request.scheme}://{request.host}"  # as the browser reached us (ssh -L may remap the port)
            ws = ("wss:" if request.scheme == "https" else "ws:") + base.split(":", 1)[1]
            return {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": f"{ws}/ws/{self.token}",
                "config": {"static": {"url": f"{base}/static/"}},
                "application": {"name": self.title},
            }

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            websocket = web.WebSocketResponse(heartbeat=15)
            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            app_service = None
            try:
                await websocket.prepare(request)
                app_service = ExecAppService(self.argv, write_bytes=websocket.send_bytes,
                                             write_str=websocket.send_str, close=websocket.close,
                                             download_manager=self.download_manager, debug=self.debug)
                await app_service.start(width, height)
                await self._process_messages(websocket, app_service)
            except asyncio.CancelledError:
                await websocket.close()
            except Exception as error:  # noqa: BLE001 - one session's failure must not stop the server
                log.exception(error)
            finally:
                if app_service is not None:
                    await app_service.stop()
            return websocket

    return TokenServer()


async def _run(server: Any) -> None:
    from aiohttp import web

    runner = web.AppRunner(server.make_app(), handle_signals=False, access_log=None)  # URLs carry the token
    await runner.setup()
    site = web.TCPSite(runner, server.host, server.port)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - the bound port when port=0
    port = sockets[0].getsockname()[1] if sockets else server.port
    server.public_url = url_for(server.host, port, "").split("/?")[0]
    url = url_for(server.host, port, server.token)
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    print(f"fairtop serve: {shlex.join(server.argv)} for each browser session; Ctrl+C stops", file=sys.stderr)
    if server.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"fairtop serve: warning: {server.host} is reachable from other machines and this is plain "
              "HTTP: the token can be read on the network; prefer 127.0.0.1 and ssh -L", file=sys.stderr)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def serve(argv: Sequence[str], host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve until interrupted; the URL with the token is the first line of stdout.

    Returns 0 after Ctrl+C or SIGTERM; raises ``OSError`` when the address cannot be bound.
    """
    import logging
    import signal

    server = make_server(argv, host, port)
    logging.basicConfig(level="INFO", format="%(message)s", stream=sys.stderr)
    loop = asyncio.new_event_loop()
    task = loop.create_task(_run(server))
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, task.cancel)
        except NotImplementedError:  # pragma: no cover - Windows
            pass
    try:
        loop.run_until_complete(task)
    except asyncio.CancelledError:
        pass
    finally:
        loop.close()
    return 0
