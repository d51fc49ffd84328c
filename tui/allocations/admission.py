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
a standing queue ``allowed`` falls from ``burst`` to the floor within a second.

The floor is what is let in however late, so latency under overload is about the floor / the
commit rate. Counted in requests alone it suits one store only (16 is 30 ms at 500 commits a
second, but 120 ms at the 134 of a PostgreSQL bounded to 3 % of a core: p99 447 ms). So it is
counted in time: ``rate``, the answers a second averaged over the intervals in which the service
was full (one with room answers what it is asked, not what it can) and answered some (a store
that stalled, restarting, says nothing of what it does once back), times ``wait_s`` is what it
answers within that wait. Behind, ``allowed`` falls at once to at most that many, never under
``min_floor`` (a slow store still lets requests in, and so is measured again) nor over
``floor``. By Little's law what is let in then waits about ``wait_s`` whatever the store; at a
store quicker than ``floor`` / ``wait_s`` (320 a second) nothing changes. That pays where the
store is bound by what it commits a second (its CPU, as in the bench); where a request's stay is
latency no queue causes (a remote store, a service starved of CPU) letting fewer in only cuts
what is answered. So ``rate`` is measured with ``floor`` or more let in (never with what the
rule decided, which would spiral down), the rate with fewer apart (``rate_below``, which the
floor then follows), and when that fell nearer in proportion to what is let in than not at all
(:meth:`time_pays`) the floor is ``floor`` again until a calm second. ``wait_s`` 0 turns it off.
The burst is let in whatever the rate: at a slow store its last
waits ``burst`` / the rate once (480 ms at 134 a second), and the floor takes over within an
interval.
An accepted answer says how long it stayed in the service (``Server-Timing: app;dur=MS``, from
the admission to its first line), which a client can set against what it waited in all.
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

__all__ = ["Admission", "RETRY_AFTER_S", "STORE_RETRY_AFTER_S"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: What a refusal asks the client to wait, in whole seconds (the client honours Retry-After): drawn
#: at random in this range, so that the clients refused together do not all come back together.
RETRY_AFTER_S = (1, 4)
#: What a 503 of the store (down, failing over, its commits stalled) asks the client to wait: the
#: shortest, since the store may be back any moment and a refusal then costs the service nothing.
STORE_RETRY_AFTER_S = 1
#: Requests in progress beyond which every new one is refused.
DEFAULT_LIMIT = 1024
#: The queueing delay the service tolerates (the shortest stay of an interval's requests).
DEFAULT_TARGET_S = 0.010
DEFAULT_INTERVAL_S = 0.100
#: The most requests let in, however late the others, at a store quick enough (see ``wait_s``).
DEFAULT_FLOOR = 16
#: Behind, what is let in is what the measured rate answers within this wait (module doc).
DEFAULT_WAIT_S = 0.050
#: Requests always let in, however slow the store: the queue drains, and the rate is measured, through them.
MIN_FLOOR = 4
#: Weight of the newest busy interval in ``rate``: an average over about the last half second busy.
RATE_WEIGHT = 0.2
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
                 burst: int = DEFAULT_BURST, wait_s: float = DEFAULT_WAIT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.limit, self.target_s, self.interval_s, self.floor = limit, target_s, interval_s, floor
        self.min_floor = min(floor, MIN_FLOOR)
        self.wait_s = wait_s
        """Behind, let in what ``rate`` answers in this long (0: the floor is ``floor`` alone)."""
        self.burst = min(limit, max(floor, burst))
        self.clock = clock
        self.in_progress = 0
        self.refused = 0
        self.allowed = self.burst
        """Requests let in at once now (see the module doc)."""
        self.rate: float | None = None
        """Answers a second while full with ``floor`` or more let in (None until seen)."""
        self.rate_below: float | None = None
        """Answers a second while full with fewer let in (``_below``), in this overload."""
        self._below = 0
        self._interval_ends = 0.0
        self._interval_starts = 0.0
        self._answered = 0
        """Requests answered in this interval."""
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

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":  # how long it stayed, for its client's log
                stay = b"app;dur=%.1f" % (1000 * (self.clock() - started))
                message = {**message, "headers": [*message.get("headers", ()), (b"server-timing", stay)]}
            await send(message)

        try:
            await self.app(scope, receive, timed)
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
        self._answered += 1
        if self.clock() >= self._interval_ends:
            self._new_interval()

    def _new_interval(self) -> None:
        """Judge the interval that ended (one in which nothing finished says nothing)."""
        now = self.clock()
        behind = self.target_s < self._quickest < math.inf
        if self._full and self._answered and now - self._interval_starts < 2 * self.interval_s:
            self._measured(self._answered / (now - self._interval_starts))
        if behind:
            shrunk = min(int(min(self.allowed, self.in_progress) * 0.8), self._in_wait())
            self.allowed = max(self.floor_now(), shrunk)
        elif self._full and self._quickest <= self.target_s:
            self.allowed = min(self.limit, self.allowed + max(1, self.allowed // 10))
        self._calm = 0 if behind or self._full else self._calm + 1
        self._calm += int((now - self._interval_ends) / self.interval_s)  # intervals without a request
        if self._calm >= CALM_INTERVALS:
            self.allowed = max(self.allowed, self.burst)
            self.rate_below = None  # the next overload tries the time floor afresh
        self._quickest = math.inf
        self._full = False
        self._answered = 0
        self._interval_starts, self._interval_ends = now, now + self.interval_s

    def _measured(self, answered: float) -> None:
        """An interval's answers a second, into the average of those with as many let in: the
        rate is measured with ``floor`` or more let in, never with what it decided itself."""
        if self.allowed >= self.floor:
            self.rate = answered if self.rate is None else self.rate + RATE_WEIGHT * (answered - self.rate)
        else:
            self._below = self.allowed
            self.rate_below = answered if self.rate_below is None else \
                self.rate_below + RATE_WEIGHT * (answered - self.rate_below)

    def time_pays(self) -> bool:
        """Whether letting fewer in than ``floor`` shortened the wait rather than only cut what is
        answered: at a store bound by what it commits a second the rate stays, where the stay is
        latency no queue causes it falls in proportion; the line is half-way between the two (and
        no line is drawn a step below ``floor``, where the two differ by less than the noise)."""
        if self.rate is None or self.rate_below is None or 4 * self._below > 3 * self.floor:
            return True
        return self.rate_below >= self.rate * (1 + self._below / self.floor) / 2

    def _in_wait(self) -> int:
        """What the rate answers within ``wait_s`` (``limit`` while not known, or not paying);
        below ``floor``, the rate measured there."""
        if self.rate is None or not self.wait_s or not self.time_pays():
            return self.limit
        return math.ceil((self.rate if self.rate_below is None else self.rate_below) * self.wait_s)

    def floor_now(self) -> int:
        """What is let in however late: what ``rate`` answers within ``wait_s``, between
        ``min_floor`` and ``floor``."""
        return max(self.min_floor, min(self.floor, self._in_wait()))


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
