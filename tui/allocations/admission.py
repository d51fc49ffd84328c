"""Admission: beyond what the service can answer in time, refuse at once (503 + Retry-After)
rather than queue for ever.

Without it, every request that reaches the service waits its turn: at ten times what one instance
can commit, the queue (coroutines, pending pre-debits, their bodies) and the latency grow for as
long as the load lasts, and a prolog that finally gets its answer after a minute has long timed
out. Here, as CoDel does for packets, a standing queue is recognised by its delay: over each
``interval_s`` the *shortest* time a request spent in the service is taken; when even that is over
``target_s`` the service is behind. The number of requests let in at once (``allowed``, between
``floor`` and ``limit``) then shrinks by a fifth, and grows by a tenth after an interval that was
not behind and used it all: by Little's law it settles near what the service commits in
``target_s``, so what is let in waits about that long, and the rest is refused at once.
A second of intervals neither behind nor full (the service had room) restores at least ``burst``:
a job array's prologs arriving together at a service that keeps up are let in whole, while under
a standing queue ``allowed`` falls from ``burst`` to ``floor`` within a second. The floor is
small because it is also what is let in however late: latency under overload is about ``floor``
/ the commit rate (64 at ~1,000 a second measured a p99 of 89-185 ms; 16, about 30 ms at the
500 a second of a loaded 2-core machine, keeps the p99 under 100 ms).
``/health`` is never refused. A refusal costs no ledger call: the hooks read 503 as "later" (the prolog fails and
slurmctld requeues the job; the submission check lets the job through unchecked).
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Admission", "RETRY_AFTER_S"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: What a refusal asks the client to wait, in whole seconds (the client honours Retry-After): drawn
#: at random in this range, so that the clients refused together do not all come back together.
RETRY_AFTER_S = (1, 4)
#: Requests in progress beyond which every new one is refused.
DEFAULT_LIMIT = 1024
#: The queueing delay the service tolerates (the shortest stay of an interval's requests).
DEFAULT_TARGET_S = 0.010
DEFAULT_INTERVAL_S = 0.100
#: Requests always let in, however late the others: the queue drains through them.
DEFAULT_FLOOR = 16
#: Requests let in at once by a service that keeps up: a burst of this many (a job array's
#: prologs) reaching a service that has kept up for a second is never refused.
DEFAULT_BURST = 64
#: Intervals in a row neither behind nor full (a second) after which ``burst`` is let in again:
#: one such interval may be a lull between waves of clients that were told to come back later.
CALM_INTERVALS = 10


class Admission:
    """An ASGI wrapper in front of ``app`` refusing what it cannot answer in time (module doc);
    ``refused`` counts the refusals, ``in_progress`` the requests inside now."""

    def __init__(self, app: ASGIApp, limit: int = DEFAULT_LIMIT, target_s: float = DEFAULT_TARGET_S,
                 interval_s: float = DEFAULT_INTERVAL_S, floor: int = DEFAULT_FLOOR,
                 burst: int = DEFAULT_BURST, clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.limit, self.target_s, self.interval_s, self.floor = limit, target_s, interval_s, floor
        self.burst = min(limit, max(floor, burst))
        self.clock = clock
        self.in_progress = 0
        self.refused = 0
        self.allowed = self.burst
        """Requests let in at once now (see the module doc)."""
        self._interval_ends = 0.0
        self._quickest = math.inf
        self._full = False
        self._calm = 0
        """Intervals in a row neither behind nor full."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/health":
            await self.app(scope, receive, send)
            return
        if self._refuse():
            self.refused += 1
            await _overloaded(send)
            return
        self.in_progress += 1
        started = self.clock()
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_progress -= 1
            self._done(self.clock() - started)

    def _refuse(self) -> bool:
        if self.clock() >= self._interval_ends:
            self._new_interval()
        if self.in_progress >= self.allowed:
            self._full = True
            return True
        return False

    def _done(self, stay_s: float) -> None:
        self._quickest = min(self._quickest, stay_s)
        if self.clock() >= self._interval_ends:
            self._new_interval()

    def _new_interval(self) -> None:
        """Judge the interval that ended (one in which nothing finished says nothing)."""
        now = self.clock()
        behind = self.target_s < self._quickest < math.inf
        if behind:
            self.allowed = max(self.floor, int(min(self.allowed, self.in_progress) * 0.8))
        elif self._full and self._quickest <= self.target_s:
            self.allowed = min(self.limit, self.allowed + max(1, self.allowed // 10))
        self._calm = 0 if behind or self._full else self._calm + 1
        self._calm += int((now - self._interval_ends) / self.interval_s)  # intervals without a request
        if self._calm >= CALM_INTERVALS:
            self.allowed = max(self.allowed, self.burst)
        self._quickest = math.inf
        self._full = False
        self._interval_ends = now + self.interval_s


def _refusal(after: int) -> tuple[Message, Message]:
    body = json.dumps({"error": f"overloaded: retry after {after} s", "retry_after": after}).encode()
    return ({"type": "http.response.start", "status": 503,
             "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)),
                         (b"retry-after", b"%d" % after)]},
            {"type": "http.response.body", "body": body})


#: The refusals, made once: under overload most answers are these, and each costs the service
#: CPU that the requests it accepts need.
_REFUSALS = [_refusal(after) for after in range(RETRY_AFTER_S[0], RETRY_AFTER_S[1] + 1)]


async def _overloaded(send: Send) -> None:
    start, body = random.choice(_REFUSALS)
    await send(start)
    await send(body)
