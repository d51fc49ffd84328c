"""Ending the session when its terminal is gone.

A dropped SSH connection or a killed tmux hangs up the session's pseudo-terminal. The kernel then
sends SIGHUP, but a session started through ``runuser``, ``su``, ``sudo`` or ``nohup`` may never
get it or ignore it; and Textual's input thread, whose ``select`` says a hung-up terminal is
readable and whose ``read`` then returns nothing, would spin on it at a full core for ever (as
sngrep, kakoune and angband once did). So a thread of ours waits in ``poll`` on the terminal's
descriptors asking for no event at all: it wakes only on POLLHUP, POLLERR or POLLNVAL (never on
input, so it costs nothing while the terminal lives), and once a second checks that the
controlling terminal is still there. When either is gone it calls ``on_gone`` and, should the
process still be alive ``grace_s`` later (Textual's shutdown blocked writing to the dead
terminal), ends it with ``os._exit``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import select
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from tui.sources.commands import refuse_new_commands

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["EXIT_TERMINAL_GONE", "TerminalWatch", "end_with_terminal"]

log = logging.getLogger("fairtop")

EXIT_TERMINAL_GONE = 129
"""The exit status of a session whose terminal went away (128 + SIGHUP, as the signal would give)."""
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL
_CONTROLLING_TTY_GONE = (errno.ENXIO, errno.EIO, errno.ENOTTY)


def _has_controlling_tty() -> bool:
    """Whether the process still has a controlling terminal (``/dev/tty`` opens)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))
    except OSError as exc:
        return exc.errno not in _CONTROLLING_TTY_GONE
    return True


class TerminalWatch:
    """A daemon thread that reports the loss of the terminal once, then enforces the exit."""

    def __init__(self, on_gone: Callable[[str], None], fds: Iterable[int],
                 grace_s: float = 2.0, period_s: float = 1.0) -> None:
        self._on_gone = on_gone
        self._fds = list(fds)
        self._ttys = any(_isatty(fd) for fd in self._fds)  # asked now: a hung-up terminal is no tty
        self._grace_s = grace_s
        self._period_ms = int(period_s * 1000)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fairtop-terminal-watch", daemon=True)

    @property
    def watching(self) -> bool:
        """Whether there is a descriptor to watch."""
        return bool(self._fds)

    def start(self) -> None:
        if self.watching:
            self._thread.start()

    def stop(self) -> None:
        """Stop watching, and after a loss do not end the process (tests); the thread notices
        within ``period_s``."""
        self._stop.set()

    def _run(self) -> None:
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, 0)  # no event asked for: poll reports only hang-up and errors
        controlling = self._ttys and _has_controlling_tty()
        reason = ""
        while not self._stop.is_set() and not reason:
            if poller.poll(self._period_ms):
                reason = "the terminal hung up" if self._ttys else "its input closed"
            elif controlling and not _has_controlling_tty():
                reason = "the controlling terminal is gone"
        if self._stop.is_set():
            return
        self._on_gone(reason)
        if not self._stop.wait(self._grace_s):  # a clean exit ends the process, and this thread, before
            os._exit(EXIT_TERMINAL_GONE)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def end_with_terminal(app: App[int]) -> TerminalWatch | None:
    """Watch what ``app`` draws on: the terminal, or in a browser session the pipe from
    ``fairtop serve`` (its write end closes when the server goes away, whatever the browser
    did); when it goes away, start no further command and end the app, its workers cancelled,
    with :data:`EXIT_TERMINAL_GONE`. Nothing to watch when headless (tests). Call from the app's
    event loop (``on_mount``)."""
    if app.is_headless:
        return None
    loop = asyncio.get_running_loop()

    def end(reason: str) -> None:
        log.warning("ending the session: %s", reason)
        app.workers.cancel_all()
        app.exit(return_code=EXIT_TERMINAL_GONE)

    def gone(reason: str) -> None:  # in the watch's thread: refuse commands before the loop wakes
        refuse_new_commands(reason)
        loop.call_soon_threadsafe(end, reason)

    fds = [0] if app.is_web else [fd for fd in (0, 1, 2) if _isatty(fd)]
    watch = TerminalWatch(gone, fds)
    watch.start()
    return watch if watch.watching else None
