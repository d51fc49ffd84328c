"""Timings and memory of the app: ``python bench/app.py [start|filter|whatif|rss ...] [-n 5]``.

What is measured:

``start``
    Cold start of ``fairtop --demo --user alice`` in a fresh Python process, headless. The parent
    notes the wall clock, then starts ``python -c CHILD``; the child goes through the real entry
    point (``tui.cli.main``: argument parsing, imports, config, app build) with ``App.run`` forced
    headless, and prints the wall clock at (1) the first frame, the empty shell drawn after
    ``on_mount``, and (2) the first frame with data, drawn after the load worker's ``StandingLoaded``
    message (demo built, engine run, tree table built), then exits. Figures are seconds since the
    parent started the process, so they include the interpreter start and every import.
    Target: first data frame under 1 s.
``filter``
    A 100,000-association demo (``demo_snapshot(users=90000, accounts=10000)``) loaded in
    ``App.run_test``; ``/`` opens the filter prompt, then each typed key is timed from just before
    ``pilot.press`` to after ``pilot.pause()`` returns, and the tree's ``rows_shown`` is checked to
    have changed (the live filter ran and the widget was refreshed). Target under 50 ms per key.
``whatif``
    The same 100k app; ``m`` selects the viewer's association, ``4`` opens the what-if planner, and
    once its first projection is in (30 days every 6 h, with and without the job, the cluster's
    running jobs charging; the one without is then kept), :data:`WHATIF_KEYS` are typed into the
    first job line's CPUs/node field (``End``,
    then ``8`` and Backspace in turn: the field goes 4, 48, 4, ...; every key is a valid change)
    at a fast typist's pace, one key every :data:`TYPING_INTERVAL_S` (sent to the driver as
    Pilot does, but without Pilot's wait for idle after each key, which takes longer than the
    pane's debounce). ``key_to_input``: from sending the key to the first line the Input draws
    showing its new value (a wrapper on the instance's ``render_line``): key to screen updated.
    Target under 50 ms (median and worst of the 20 keys). ``engine_runs_while_typing``:
    what-if results that arrived before the last key (0 when the debounce holds). ``ui_stall``:
    gaps of a 1 ms heartbeat task on the app's event loop while typing, the longest and the 99th
    percentile: how long the UI thread could answer nothing; ``ui_stall_ms_max_projecting``: the
    longest gap from the last key to the result drawn, the heartbeat still running
    (``last_key_to_result_probed``: that result's time). Then two more keys (4 -> 48 -> 4) with
    nothing else running: ``last_key_to_result``, from the last key to the first frame drawn
    after the pane put the final form's projection on screen (the debounce, one projection in
    the worker thread, the message, plots, table, redraw); ``..._handled`` stops when the
    message was handled, before the draw; ``ui_step_ms_max``: the longest single screen update or
    layout on the UI thread in that time, in thread CPU (``time.thread_time``, as
    ``bench/whatif_draw.py``: what the machine's other processes do to the wall clock is not in
    it). The bench waits for the result on an event, not by
    polling the app: a poll every 5 ms (``pilot.pause``) held the interpreter so often that the
    worker's projection took 5x its time alone (1.2 s instead of 0.2 s at 100k).
``rss``
    ``VmRSS`` from ``/proc/self/status`` of the process running the app (via ``run_test``) with
    the 100k tree loaded and drawn. Target under 250 MB.

Each benchmark runs ``-n`` times and prints every run plus the median; the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2025, 1, 15, tzinfo=timezone.utc)
ME = "alice"
BIG = {"users": 90_000, "accounts": 10_000}
FILTER_KEYS = "chem"
"""Typed one key at a time after ``/``: each key narrows the live filter."""
WHATIF_KEYS = ("8", "backspace") * 10
"""Typed into the what-if CPUs/node field ("4"): 20 keys, each a valid change of the form."""
TYPING_INTERVAL_S = 0.1
"""Time from one what-if key to the next (a fast typist), within the pane's debounce."""

CHILD = r"""
import sys, time
from tui.app.app import FairtopApp

def mark(name):
    print(name, repr(time.time()), flush=True)

_mount, _loaded, _run = FairtopApp.on_mount, FairtopApp.on_standing_loaded, FairtopApp.run

def on_mount(self):
    _mount(self)
    self.call_after_refresh(mark, "first_frame")

def on_standing_loaded(self, message):
    _loaded(self, message)
    self.call_after_refresh(lambda: (mark("data_frame"), self.exit(0)))

FairtopApp.on_mount, FairtopApp.on_standing_loaded = on_mount, on_standing_loaded
FairtopApp.run = lambda self, **kw: _run(self, headless=True, **kw)
from tui.cli import main
sys.exit(main(["--demo", "--user", "alice"]))
"""


def bench_start() -> dict[str, float]:
    """One cold start; seconds from process start to each mark, and to process exit. ``tui/``'s
    ``.pyc`` files are written first, as an installed package has them."""
    import compileall

    compileall.compile_dir(str(ROOT / "tui"), quiet=1)
    env = dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(prefix="fairtop-bench-"),
               XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="fairtop-bench-"), TEXTUAL_ANIMATIONS="none")
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    end = time.time()
    marks = {name: float(value) - t0 for name, value in (line.split() for line in out.splitlines()
                                                         if line.split()[0].endswith("_frame"))}
    return {**marks, "exit": end - t0}


def big_app():  # noqa: ANN201 - FairtopApp
    """The app on a 100k-association demo, built once so every run times only the app."""
    from tui.app.app import FairtopApp
    from tui.config import Settings, State
    from tui.sources.demo import demo_snapshot

    snap = demo_snapshot(0, now=NOW, me=ME, **BIG)
    return FairtopApp(Settings(theme="dark"), lambda: snap, ME, State())


async def _run_big(measure_filter: bool, measure_whatif: bool = False) -> dict[str, float]:
    from tui.app.widgets.fairshare_tree import FairshareTree

    app = big_app()
    out: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        tree = app.query_one(FairshareTree)
        assert tree.table is not None and tree.table.size >= BIG["users"] + BIG["accounts"], tree.table
        out["associations"] = tree.table.size
        if measure_whatif:
            out.update(await _time_whatif_keys(pilot))
        elif not measure_filter:  # a fresh process only: earlier runs' garbage would count too
            out["rss_mb"] = rss_mb()
        else:
            out.update(await _time_filter_keys(pilot, tree))
    return out


async def _time_filter_keys(pilot, tree) -> dict[str, float]:  # noqa: ANN001 - Pilot, FairshareTree
    """Type :data:`FILTER_KEYS` into the ``/`` prompt; time each key two ways (milliseconds).

    ``key_to_rows``: from just before ``pilot.press`` to the first line the tree draws after its
    filter ran (a wrapper on the instance's ``render_line``), i.e. key press to updated rows on
    screen. ``pilot``: ``pilot.press`` + ``pilot.pause()`` round trip, which adds Pilot's own idle
    detection; ``pilot_noop`` is that round trip for a key that only moves the input's cursor.
    """
    marks: dict[str, float] = {}
    set_filter, render_line = tree.set_filter, tree.render_line

    def timed_set_filter(pattern: str) -> None:
        set_filter(pattern)
        marks["filtered"] = time.perf_counter()

    def timed_render_line(y: int):  # noqa: ANN202 - Strip
        if "filtered" in marks:
            marks.setdefault("drawn", time.perf_counter())
        return render_line(y)

    tree.set_filter, tree.render_line = timed_set_filter, timed_render_line
    await pilot.press("slash")
    await pilot.pause()
    to_rows, round_trip, noop = [], [], []
    for key in FILTER_KEYS:
        before = tree.rows_shown
        marks.clear()
        t = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
        round_trip.append(time.perf_counter() - t)
        assert tree.rows_shown is not before and tree.filter_text.endswith(key), tree.filter_text
        to_rows.append(marks["drawn"] - t)
        t = time.perf_counter()
        await pilot.press("left", "right")  # moves the cursor only: no filter, no tree redraw
        await pilot.pause()
        noop.append(time.perf_counter() - t)
    return {"key_to_rows_ms_max": 1000 * max(to_rows), "key_to_rows_ms_mean": 1000 * statistics.mean(to_rows),
            "pilot_ms_mean": 1000 * statistics.mean(round_trip), "pilot_noop_ms_mean": 1000 * statistics.mean(noop),
            "shown_after": len(tree.rows_shown)}


async def _time_whatif_keys(pilot) -> dict[str, float]:  # noqa: ANN001 - Pilot
    """Type :data:`WHATIF_KEYS` into the what-if CPUs field; milliseconds per key and to the result."""
    import asyncio

    from textual import events
    from textual.widgets import Static

    app = pilot.app
    await pilot.press("m", "4")
    pane = app.query_one("#pane-whatif")
    end = time.perf_counter() + 120
    while pane._result is None:  # the first projection (and the baseline it keeps) is not timed
        assert time.perf_counter() < end, "no first projection within 120 s"
        await pilot.pause(0.05)
    await pilot.pause()
    field = pane.jobs[0].input("cpus")
    result = pane.query_one("#wi-result", Static)
    assert "users ahead" in str(result.content), result.content
    marks: dict[str, float] = {}
    results: list[float] = []
    """When the pane put a projection on screen, and when that was next drawn."""
    drawn: list[float] = []
    render_line, draw, result_lines = field.render_line, pane._draw, result.render_lines

    def timed_render_line(y: int):  # noqa: ANN202 - Strip
        if "key" in marks and field.value != marks["value"]:
            marks.setdefault("drawn", time.perf_counter())
        return render_line(y)

    def timed_draw(plan) -> None:  # noqa: ANN001 - PlanProjection
        draw(plan)
        results.append(time.perf_counter())

    shown = asyncio.Event()
    steps = _ui_steps(app.screen)

    def timed_result_lines(crop):  # noqa: ANN001, ANN202 - Region, list[Strip]
        if results and (not drawn or drawn[-1] < results[-1]):
            drawn.append(time.perf_counter())
            shown.set()
        return result_lines(crop)

    field.render_line, pane._draw, result.render_lines = timed_render_line, timed_draw, timed_result_lines
    field.focus()
    await pilot.press("end")
    await pilot.pause()
    to_input, gaps = [], []

    async def heartbeat() -> None:
        """The event loop's stalls: how long the UI thread could not answer anything."""
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            gaps.append(time.perf_counter() - t0 - 0.001)

    async def type_keys(keys: tuple[str, ...]) -> float:
        """Send ``keys`` at a typist's pace; when the last one was sent."""
        t = 0.0
        for key in keys:  # at a typist's pace, not Pilot's (it waits for idle after each key)
            marks.clear()
            marks["value"] = field.value  # type: ignore[assignment]
            t = marks["key"] = time.perf_counter()
            event = events.Key(key, key if len(key) == 1 else None)
            event.set_sender(app)
            app._driver.send_message(event)
            while "drawn" not in marks:
                assert time.perf_counter() < t + 10, f"key {key!r} not drawn within 10 s"
                await asyncio.sleep(0.001)
            to_input.append(marks["drawn"] - t)
            await asyncio.sleep(max(0.0, t + TYPING_INTERVAL_S - time.perf_counter()))
        return t

    async def result_after(t: float) -> tuple[float, float]:
        """Wait (without polling the app: a poll every few ms slowed the worker 5x) for the
        projection of the form as it was at ``t``; (handled, drawn) in seconds after ``t``."""
        while not drawn or drawn[-1] < t:
            shown.clear()
            await asyncio.wait_for(shown.wait(), 120)
        result_at = next(r for r in results if r > t)
        return result_at - t, next(d for d in drawn if d >= result_at) - t

    beat = asyncio.create_task(heartbeat())
    t = await type_keys(WHATIF_KEYS)
    p99 = statistics.quantiles(gaps, n=100, method="inclusive")[98]
    stall = {"ui_stall_ms_max": 1000 * max(gaps), "ui_stall_ms_p99": 1000 * p99}
    gaps.clear()  # from here: while the worker projects the final form, the probe still beating
    probed_handled, probed = await result_after(t)
    beat.cancel()
    stall["ui_stall_ms_max_projecting"] = 1000 * max(gaps, default=0.0)
    runs_while_typing = len(results) - 1
    typed = list(to_input)  # the keys' figures: the 20 keys of the first pass
    t = await type_keys(WHATIF_KEYS[:2])  # once more with nothing else asking for the interpreter
    steps.clear()
    handled, result_drawn = await result_after(t)
    step_max = max(steps, default=0.0)
    assert field.value == "4" and "users ahead" in str(result.content), (field.value, result.content)
    return {"key_to_input_ms_median": 1000 * statistics.median(typed),
            "key_to_input_ms_max": 1000 * max(typed),
            "last_key_to_result_ms": 1000 * result_drawn,
            "last_key_to_result_handled_ms": 1000 * handled,
            "last_key_to_result_probed_ms": 1000 * probed, "ui_step_ms_max": 1000 * step_max,
            "engine_runs_while_typing": runs_while_typing, **stall}


def _ui_steps(screen) -> list[float]:  # noqa: ANN001 - Screen
    """Thread CPU seconds of each screen update and layout of ``screen`` from now on
    (:func:`ui_steps.timed_steps`); the caller clears the list to start a count."""
    from ui_steps import timed_steps

    steps = timed_steps(screen)
    screen._update_timer._callback = screen._on_timer_update  # the timer holds the method it was made with
    return steps


def rss_mb() -> float:
    """This process's resident set size in MB (``VmRSS``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _rss_child() -> None:
    """``--rss-child``: load the 100k tree in this fresh process and print its RSS."""
    import asyncio

    print(asyncio.run(_run_big(False))["rss_mb"])


def bench_rss() -> dict[str, float]:
    """RSS of a fresh process with the 100k tree loaded (a fresh one: no earlier run's garbage)."""
    out = subprocess.run([sys.executable, __file__, "--rss-child"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    return {"rss_mb": float(out.split()[-1])}


def bench_filter() -> dict[str, float]:
    import asyncio

    return asyncio.run(_run_big(True))


def bench_whatif() -> dict[str, float]:
    import asyncio

    return asyncio.run(_run_big(False, measure_whatif=True))


BENCHES = {"start": bench_start, "filter": bench_filter, "whatif": bench_whatif, "rss": bench_rss}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of {', '.join(BENCHES)} (default: all)")
    parser.add_argument("-n", type=int, default=5, help="runs per benchmark (default 5)")
    parser.add_argument("--associations", type=int, default=100_000,
                        help="size of the demo for filter and whatif (default 100,000: 90%% users)")
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    BIG.update(users=args.associations * 9 // 10, accounts=args.associations // 10)
    if args.rss_child:
        _rss_child()
        return 0
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    for name in args.names or BENCHES:
        runs = [BENCHES[name]() for _ in range(args.n)]
        for key in runs[0]:
            values = [r[key] for r in runs]
            shown = ", ".join(f"{v:.3f}" for v in values)
            print(f"{name:7} {key:15} median {statistics.median(values):10.3f}   runs: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
