"""A long run of the allocation service's everyday traffic, for the soak test and bench/soak.py:
``connections`` keep-alive clients each pre-debit jobs, debit one in four when it ends (the
debit's path is FastAPI's and a thread's, several times the pre-debit's cost), and read the
allocation every 16th job, until ``requests`` answers came back. The service's resident memory, open
fds and children are sampled along the way (tests/resources.py)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.resources import Held, held

from .services import SUPER


@dataclass
class Run:
    codes: Counter = field(default_factory=Counter)
    samples: list[tuple[int, Held]] = field(default_factory=list)
    """(answers so far, what the service held then)."""
    held: int = 0
    """Minutes pre-debited and acknowledged, of jobs not debited since."""
    debited: int = 0
    seconds: float = 0.0


async def _call(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: bytes, path: bytes,
                body: bytes = b"") -> int:
    writer.write(b"%s %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (method, path, SUPER.encode(), len(body), body))
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line[15:]) for line in head.split(b"\r\n") if line[:15].lower() == b"content-length:")
    await reader.readexactly(length)
    return int(head.split(b" ", 2)[1])


async def drive(url: str, pid: int, gid: int, alloc_id: int, requests: int, connections: int = 16,
                samples: int = 20, report: Callable[[int, Held], None] | None = None) -> Run:
    """Send about ``requests`` requests; sample the service (``pid``) ``samples`` times, evenly."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    run = Run()
    sent = 0
    every = max(1, requests // samples)
    next_sample = every

    def answered(status: int) -> None:
        nonlocal sent, next_sample
        run.codes[status] += 1
        sent += 1
        if sent >= next_sample:
            next_sample += every
            now = held(pid)
            run.samples.append((sent, now))
            if report:
                report(sent, now)

    async def client(n: int) -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for _ in range(8):  # warm-up, all at once: each of the service's threads opens its store connection
            await _call(reader, writer, b"GET", b"/alloc/%d" % alloc_id)
        i = 0
        while sent < requests:
            job = b"s-%d-%d" % (n, i)
            status = await _call(reader, writer, b"POST", b"/job", b'{"job_id": "%s", "uid": %d, "gid": %d, '
                                 b'"resource": "cpu", "minutes": 5}' % (job, 6000 + n, gid))
            run.held += 5 if status == 201 else 0
            answered(status)
            if i % 4 == 0 and status == 201:  # a job that ended: its debit
                status = await _call(reader, writer, b"PUT", b"/job/" + job, b'{"state": "completed", "minutes": 3}')
                if status == 200:
                    run.held, run.debited = run.held - 5, run.debited + 3
                answered(status)
            if i % 16 == 0:
                answered(await _call(reader, writer, b"GET", b"/alloc/%d" % alloc_id))
            i += 1
        writer.close()
        await writer.wait_closed()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(connections)))
    run.seconds = time.perf_counter() - t0
    return run
