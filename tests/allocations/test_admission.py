"""The admission controller's rule on a clock the test moves: a burst of 64 at a service that
keeps up is let in whole; behind, it falls to the floor (16); a lull between waves of refused
clients does not open it again, a calm second does."""

from __future__ import annotations

import asyncio
from typing import Any

from tui.allocations.admission import DEFAULT_BURST, DEFAULT_FLOOR, Admission


class Service:
    """An ASGI app whose requests stay until the test lets them go."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.gate.wait()
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


async def _request(admission: Admission) -> int:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await admission({"type": "http", "path": "/job"}, None, send)
    return sent[0]["status"]


async def _wave(admission: Admission, service: Service, clock: list[float], n: int, stay_s: float) -> list[int]:
    """``n`` requests at once, each staying ``stay_s``; their statuses."""
    service.gate.clear()
    tasks = [asyncio.create_task(_request(admission)) for _ in range(n)]
    await asyncio.sleep(0)
    clock[0] += stay_s
    service.gate.set()
    return list(await asyncio.gather(*tasks))


async def test_a_burst_is_let_in_whole_and_a_standing_queue_falls_to_the_floor() -> None:
    clock = [1000.0]
    service = Service()
    admission = Admission(service, clock=lambda: clock[0])
    codes = await _wave(admission, service, clock, DEFAULT_BURST + 1, 0.002)
    assert codes.count(201) == DEFAULT_BURST and codes.count(503) == 1  # a job array's prologs
    clock[0] += 0.1
    await _wave(admission, service, clock, DEFAULT_BURST, 0.050)  # behind: each stayed 50 ms
    clock[0] += 0.1
    codes = await _wave(admission, service, clock, 40, 0.050)
    assert codes.count(201) == DEFAULT_FLOOR, codes
    clock[0] += 0.1
    codes = await _wave(admission, service, clock, 10, 0.002)  # a lull: quick, not full
    clock[0] += 0.1
    codes = await _wave(admission, service, clock, 40, 0.002)
    assert codes.count(201) < DEFAULT_BURST // 2, codes  # one calm interval is not a calm service
    clock[0] += 1.5  # a second and more without a request
    codes = await _wave(admission, service, clock, DEFAULT_BURST, 0.002)
    assert codes.count(201) == DEFAULT_BURST, codes
