"""slurmctld's log -> decay cycle times, starts and stops (tui.sources.ctld_log); QOS table."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.errors import InputError
from tui.sources.slurm_text import parse_qos_usage

LOG = """\
[2026-11-28T02:38:53.525] slurmctld version 22.05.8 started on cluster sandbox
[2026-11-28T02:38:54.356] priority/multifactor: _read_last_decay_ran: No last decay (/x) to recover
[2026-11-28T02:38:54.356] priority/multifactor: _ft_debug:     root (root):  inf
[2026-11-28T02:38:54.357] priority/multifactor: _ft_debug:       acct (acct):  1.0
[2026-11-28T02:39:54.356] priority/multifactor: PRIO: Decay factor over 60 seconds goes from 0.99 -> 0.98
[2026-11-28T02:39:54.358] priority/multifactor: _ft_debug:     root (root):  inf
[2026-11-28T02:40:20.001] Terminate signal (SIGINT or SIGTERM) received
[2026-11-28T02:40:20.101] Saving all slurm state
[2026-11-28T02:41:01.900] slurmctld version 22.05.8 started on cluster sandbox
[2026-11-28T02:41:02.999] priority/multifactor: _ft_debug:     root (root):  inf
not a log line
"""


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def test_cycles_starts_and_stops() -> None:
    log = parse_ctld_log(LOG, timezone.utc)
    assert log.cycles == [ts("2026-11-28T02:38:54"), ts("2026-11-28T02:39:54"), ts("2026-11-28T02:41:02")]
    assert log.starts == [ts("2026-11-28T02:38:53.525"), ts("2026-11-28T02:41:01.900")]
    assert log.stops == [ts("2026-11-28T02:40:20.001")]


def test_qos_usage_factors_and_no_decay() -> None:
    factors, no_decay = parse_qos_usage("Name|UsageFactor|Flags\nnormal|1.000000|\nkeep|2.000000|DenyOnLimit,NoDecay\n"
                                        "half|0.500000|\n")
    assert factors == {"normal": 1.0, "keep": 2.0, "half": 0.5} and no_decay == {"keep"}
    with pytest.raises(InputError, match="UsageFactor"):
        parse_qos_usage("Name|Flags\nnormal|\n")


def test_a_capture_keeps_the_cycle_lines_with_their_zone() -> None:
    """What a capture saves: the cycle, start, stop and reconfigure lines only, each time with its
    zone, read back to the same times wherever the capture is read."""
    from datetime import timedelta

    from tui.sources.ctld_log import priority_lines

    plus2 = timezone(timedelta(hours=2))
    kept = priority_lines(LOG + "[2026-11-28T02:42:00.000] Reconfigure signal (SIGHUP) received\n", plus2).decode()
    assert "_ft_debug:       acct" not in kept and "not a log line" not in kept and "_read_last_decay_ran" not in kept
    assert kept.splitlines()[0] == ("[2026-11-28T02:38:53.525+02:00] slurmctld version 22.05.8 started on cluster "
                                    "sandbox")
    again, direct = parse_ctld_log(kept, timezone.utc), parse_ctld_log(LOG, plus2)  # the saved zone wins
    assert (again.cycles, again.starts, again.stops) == (direct.cycles, direct.starts, direct.stops)
    assert again.cycles[0] == ts("2026-11-28T00:38:54") and again.reconfigures == [ts("2026-11-28T00:42:00")]


RECONFIGURE = FIXTURES / "slurm-26.05" / "ctld_log" / "reconfigure_2605"


def test_a_2605_reconfigure_re_execs_and_re_anchors_the_grid() -> None:
    """A real 26.05.3 (DebugFlags=Priority, calc period 1 minute): ``scontrol reconfigure`` at
    06:52:53.890, 62 s after the start, re-execs slurmctld ("started" at 06:52:54.063), whose first
    cycle runs at once (06:52:54) and the next a period later (06:53:54, not the old grid's
    06:53:52): every logged cycle is where anchored_cycles puts it from the two starts, and not
    from the first start alone. The capture's saved lines read the same."""
    from tui.engine.usage_law import anchored_cycles
    from tui.sources.ctld_log import load_saved_log

    log = parse_ctld_log((RECONFIGURE / "slurmctld.log").read_bytes(), timezone.utc)
    assert log.starts == [ts("2026-11-28T06:50:52.268"), ts("2026-11-28T06:52:54.063")]
    assert log.reconfigures == [ts("2026-11-28T06:52:53.890")] and log.reexecs() == [log.starts[1]]
    assert log.stops == [ts("2026-11-28T06:52:53.917")]  # "Saving all slurm state" before the re-exec
    assert log.cycles == [ts(f"2026-11-28T06:{m}") for m in ("50:52", "51:52", "52:52", "52:54", "53:54", "54:54",
                                                             "55:54", "56:54")]
    until = ts("2026-11-28T06:56:54")
    assert list(anchored_cycles(log.starts, 60, until, log.stops)) == log.cycles
    assert list(anchored_cycles(log.starts[:1], 60, until))[3:] != log.cycles[4:]  # not the old grid
    saved = load_saved_log(RECONFIGURE)
    assert saved is not None
    assert (saved.cycles, saved.starts, saved.stops, saved.reconfigures) == \
        (log.cycles, log.starts, log.stops, log.reconfigures)


def test_capture_saves_the_logs_cycle_lines(tmp_path, monkeypatch) -> None:  # noqa: ANN001 - fixtures
    """``fairtop capture`` on the controller's host keeps, of the SlurmctldLogFile its config names,
    what the replay reads: the 26.05 run's whole log gives the fixture's saved lines, byte for byte
    (times in the log's zone, here UTC); another cluster's (-M) log is not this host's."""
    import time

    from tui.sources.slurm_cli import controller_log

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        real = (RECONFIGURE / "scontrol_show_config.txt").read_text()
        assert "SlurmctldLogFile        = /tmp/fairtop-rcf-2605/log/slurmctld.log\n" in real

        def config(path: Path) -> bytes:
            return real.replace("/tmp/fairtop-rcf-2605/log/slurmctld.log", str(path)).encode()

        saved = controller_log(config=config(RECONFIGURE / "slurmctld.log"))
        assert saved == (RECONFIGURE / "slurmctld_cycles.log").read_bytes()
        assert controller_log("other", config=config(RECONFIGURE / "slurmctld.log")) is None
        assert controller_log(config=config(tmp_path / "none.log")) is None
    finally:
        monkeypatch.undo()
        time.tzset()
