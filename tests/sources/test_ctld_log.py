"""slurmctld's log -> decay cycle times, starts and stops (tui.sources.ctld_log); QOS table."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

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
