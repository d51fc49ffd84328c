"""Integration: since 23.11 ``scontrol reconfigure`` re-execs slurmctld, and its decay grid
re-anchors as at a restart (a real 26.05 slurmctld with ``DebugFlags=Priority``).

One sandbox of its own (:data:`PLACE`, about a minute and a half): started, a few seconds past its
first cycle ``scontrol reconfigure``, then two more cycles. Asserted on its log
(:mod:`tui.sources.ctld_log`): the reconfigure is followed within seconds by a ``slurmctld version
... started`` line (a start), its first cycle runs at once, and every logged cycle is where
:func:`tui.engine.usage_law.anchored_cycles` puts it from the starts, the re-exec's among them;
without that start the next cycles would sit on the old grid, and they do not. The saved run in
tests/fixtures/slurm-26.05/ctld_log/reconfigure_2605 is the same check with jobs (tests/sources/test_ctld_log.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox._sandbox import on_release, purge_keeping_log, release_env, sh
from tui.engine.usage_law import anchored_cycles
from tui.sources.ctld_log import ControllerLog, parse_ctld_log

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox, *on_release("26.05")]

#: This module's sandbox: folder, first of three Slurm ports, MariaDB port.
PLACE = ("/tmp/fairtop-rcf-2605", 9217, 15406)
PERIOD = 60.0  # PriorityCalcPeriod: the sandbox's one minute


def _env() -> dict[str, str]:
    folder, port, db = PLACE
    env = {k: v for k, v in release_env("26.05").items() if not k.startswith("SANDBOX_") or k == "SANDBOX_SLURM"}
    env.update(SANDBOX_DIR=folder, SANDBOX_CTLD_PORT=str(port), SANDBOX_SLURMD_PORT=str(port + 1),
               SANDBOX_DBD_PORT=str(port + 2), SANDBOX_DB_PORT=str(db), SANDBOX_RESTD="0",
               SLURM_CONF=f"{folder}/etc/slurm.conf", SANDBOX_DEBUG_FLAGS="Priority", SANDBOX_CPUS="2")
    return env


def _log(env: dict[str, str]) -> ControllerLog:
    return parse_ctld_log(Path(env["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes())


def _until(env: dict[str, str], done, timeout: float = 150) -> ControllerLog:  # noqa: ANN001 - a predicate
    end = time.monotonic() + timeout
    while not done(log := _log(env)):
        assert time.monotonic() < end, "slurmctld did not log it in time"
        time.sleep(0.5)
    return log


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerLog]:
    tmp = tmp_path_factory.mktemp("reconfigure")
    env = _env()
    sh(env, "down.sh", "--purge", timeout=120)  # a sandbox left by a killed run
    try:
        sh(env, "up.sh", timeout=300)
        first = _until(env, lambda log: len(log.cycles) >= 1)
        time.sleep(max(0.0, first.cycles[0] + 20 - time.time()))  # 20 s into the period: a clear shift
        sh(env, "scontrol", "reconfigure")
        yield _until(env, lambda log: len(log.starts) >= 2 and len([c for c in log.cycles if c >= log.starts[1] - 1])
                     >= 2)
    finally:
        purge_keeping_log(env, tmp)


def test_a_reconfigure_re_execs_and_re_anchors_the_grid(log: ControllerLog) -> None:
    assert len(log.reconfigures) == 1 and log.reexecs() == [log.starts[1]]
    assert 0 < log.starts[1] - log.reconfigures[0] < 10
    assert log.stops and log.reconfigures[0] <= log.stops[0] < log.starts[1]  # its state saved first
    until = log.cycles[-1]
    grid = anchored_cycles(log.starts, PERIOD, until, log.stops)
    assert len(grid) == len(log.cycles)  # a cycle's second is its wake-up's: at most one after the start's
    assert all(0 <= c - g <= 1 for c, g in zip(log.cycles, grid)), (log.cycles, list(grid))
    after = [c for c in log.cycles if c > log.starts[1] - 1]
    assert after[0] == int(log.starts[1]) or after[0] == int(log.starts[1]) + 1  # its first cycle, at once
    old_grid = anchored_cycles(log.starts[:1], PERIOD, until)
    assert not set(after) & set(old_grid)  # 20 s off the grid slurmctld kept before
