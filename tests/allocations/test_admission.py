"""The admission controller's rule on a clock the test moves: a burst of 64 at a service that
keeps up is let in whole; behind, it falls to the floor (16); a lull between waves of refused
clients does not open it again, a calm second does."""

from __future__ import annotations

import asyncio
from typing import Any

from tui.allocations.admission import DEFAULT_BURST, DEFAULT_FLOOR, MIN_FLOOR, Admission


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


async def test_an_accepted_answer_says_how_long_it_stayed_and_a_refusal_does_not() -> None:
    """``Server-Timing: app;dur=MS`` on what was let in, from its admission to its answer on the
    service's clock; none on a refusal (it stayed nowhere)."""
    clock = [1000.0]
    service = Service()
    admission = Admission(service, limit=1, clock=lambda: clock[0])
    answers: list[list[dict]] = [[], []]

    async def request(n: int) -> None:
        async def send(message: dict) -> None:
            answers[n].append(message)
        await admission({"type": "http", "path": "/job"}, None, send)

    accepted = asyncio.create_task(request(0))
    await asyncio.sleep(0)
    await request(1)
    clock[0] += 0.0375
    service.gate.set()
    await accepted
    (start, _), (refusal, _) = answers
    assert (start["status"], refusal["status"]) == (201, 503)
    assert dict(start["headers"])[b"server-timing"] == b"app;dur=37.5"
    assert b"server-timing" not in dict(refusal["headers"])


# --- the floor counted in time: a store that commits a known number a second --------------------

class Store:
    """An ASGI app that answers its requests in arrival order, as many a tick as the test says."""

    def __init__(self) -> None:
        self.waiting: list[asyncio.Future[None]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(done)
        await done
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def commit(self, n: int) -> None:
        for done in self.waiting[:n]:
            done.set_result(None)
        del self.waiting[:n]

    def flush(self) -> None:
        Store.commit(self, len(self.waiting))


class LatencyStore(Store):
    """A store bound by latency, not throughput: every request stays ``latency_s``, however many."""

    def __init__(self, clock: list[float], latency_s: float) -> None:
        super().__init__()
        self.clock, self.latency_s = clock, latency_s
        self.entered: list[float] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.entered.append(self.clock[0])
        await super().__call__(scope, receive, send)

    def commit(self, n: int) -> None:
        due = sum(t + self.latency_s <= self.clock[0] + 1e-9 for t in self.entered)
        super().commit(due)
        del self.entered[:due]

    def flush(self) -> None:
        super().flush()
        self.entered.clear()


async def _settle() -> None:
    for _ in range(4):  # a resolved request's task, then its way out through Admission
        await asyncio.sleep(0)


async def _offer(admission: Admission, store: Store, clock: list[float], rate: float, offered: float,
                 seconds: float, tick: float = 0.01) -> tuple[list[int], list[float]]:
    """``offered`` requests a second for ``seconds`` at a store that answers ``rate`` a second, on
    the test's clock in ticks: the statuses, and how long each accepted one stayed."""
    codes: list[int] = []
    stays: list[float] = []
    owed_commits = owed_arrivals = 0.0

    async def one() -> None:
        started = clock[0]
        code = await _request(admission)
        codes.append(code)
        if code == 201:
            stays.append(clock[0] - started)

    tasks = []
    for _ in range(round(seconds / tick)):
        clock[0] += tick
        owed_commits += rate * tick
        store.commit(int(owed_commits))
        owed_commits -= int(owed_commits)
        await _settle()
        owed_arrivals += offered * tick
        tasks += [asyncio.create_task(one()) for _ in range(int(owed_arrivals))]
        owed_arrivals -= int(owed_arrivals)
        await _settle()
    store.flush()
    await asyncio.gather(*tasks)
    return codes, stays


def _at_a_store(**settings: Any) -> tuple[Admission, Store, list[float]]:
    """An admission (``settings``) in front of a :class:`Store`, on a clock the test moves."""
    clock = [1000.0]
    store = Store()
    return Admission(store, clock=lambda: clock[0], **settings), store, clock


def _p99(stays: list[float]) -> float:
    return sorted(stays)[int(len(stays) * 0.99)]


async def test_at_a_slow_store_what_is_let_in_waits_the_wait_not_the_floor() -> None:
    """134 commits a second (PostgreSQL at 3 % of a core) offered ten times that: the floor counted
    in requests (16) makes each wait 16 / 134 = 120 ms; counted in time, 50 ms of commits (7)."""
    p99 = {}
    for wait_s in (0.0, 0.050):
        admission, store, clock = _at_a_store(wait_s=wait_s)
        await _offer(admission, store, clock, 134, 1340, 1.0)  # from the burst down to the floor
        codes, stays = await _offer(admission, store, clock, 134, 1340, 3.0)
        p99[wait_s] = _p99(stays)
        assert codes.count(201) >= 0.95 * 3 * 134, codes.count(201)  # and the store never ran dry
        assert codes.count(503) >= 8 * 3 * 134, codes.count(503)
    assert p99[0.0] > 0.110, p99  # 16 in the queue
    assert p99[0.050] < 0.070, p99  # 7 in the queue, answered within 50 ms and a tick
    assert admission.rate is not None and 120 < admission.rate < 140, admission.rate
    assert admission.floor_now() == 7


async def test_a_fast_store_keeps_the_floor_and_the_burst() -> None:
    """2,500 a second (the unbounded store) answers 125 within 50 ms: the floor stays 16, and a
    calm second after the overload lets a job array's 64 prologs in whole."""
    admission, store, clock = _at_a_store()
    codes, stays = await _offer(admission, store, clock, 2500, 5000, 2.0)
    assert codes.count(503) > 0 and admission.floor_now() == DEFAULT_FLOOR, admission.rate
    clock[0] += 1.5
    codes, _ = await _offer(admission, store, clock, 2500, DEFAULT_BURST / 0.01, 0.01)
    assert codes.count(201) == DEFAULT_BURST, codes


async def test_a_stalled_store_keeps_its_floor_and_a_slower_one_falls_to_the_least() -> None:
    """A store that answers nothing for two seconds (a restart) says nothing of its rate once
    back: the floor stays. One that answers 40 a second (2 within 50 ms) lets the least in (4),
    whose requests measure it again: once it is quick again the floor is back at 16 within two
    seconds."""
    admission, store, clock = _at_a_store()
    await _offer(admission, store, clock, 2500, 5000, 1.0)
    await _offer(admission, store, clock, 0, 500, 2.0)
    assert admission.floor_now() == DEFAULT_FLOOR, admission.rate
    codes, _ = await _offer(admission, store, clock, 40, 400, 3.0)
    assert admission.floor_now() == MIN_FLOOR, admission.rate
    assert codes.count(201) >= 0.9 * 3 * 40, codes.count(201)
    codes, _ = await _offer(admission, store, clock, 2500, 5000, 2.0)
    assert codes.count(201) > 2000 and admission.floor_now() == DEFAULT_FLOOR, (codes.count(201), admission.rate)


async def test_a_store_bound_by_latency_keeps_the_floor() -> None:
    """Every request staying 80 ms however many are in (latency no queue causes: a remote store,
    a starved service): letting 10 in rather than 16 answers 125 a second rather than 200 and
    shortens no wait, so the floor goes back to 16 and stays."""
    clock = [1000.0]
    store = LatencyStore(clock, 0.080)
    admission = Admission(store, clock=lambda: clock[0])
    await _offer(admission, store, clock, 0, 2000, 2.0)
    codes, stays = await _offer(admission, store, clock, 0, 2000, 3.0)
    assert admission.floor_now() == DEFAULT_FLOOR and not admission.time_pays(), (admission.rate, admission.rate_below)
    assert codes.count(201) >= 0.9 * 3 * DEFAULT_FLOOR / 0.080, codes.count(201)
    assert max(stays) < 0.1
