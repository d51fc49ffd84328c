"""The live source's cadence: each command asked as often as its answer changes, no more."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tui.sources import saved
from tui.sources.errors import SourceUnavailable
from tui.sources.slurm_cli import Cadence, LiveSlurm, Output, commands

LIVE = FIXTURES / "slurm" / "live" / "fair_tree"  # PriorityCalcPeriod = 00:01:00


class FakeCluster:
    """Answers each command with the real capture's output; records what was asked."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slow: dict[str, float] = {}
        self.fail_sshare = False
        by_args = {tuple(args): name for name, args in commands("sandbox").items()}
        by_args.update({tuple(args): name for name, args in commands().items()})
        self.by_args = by_args

    def clock(self) -> float:
        return self.now

    def run(self, args: list[str], timeout: float) -> Output:
        name = self.by_args[tuple(args)]
        self.now += self.slow.get(name, 0.0)
        if name == saved.FILES["sshare"] and self.fail_sshare:
            return Output(tuple(args), 1, b"", "sshare: error: Unable to contact slurm controller")
        path = LIVE / name
        return Output(tuple(args), 0, path.read_bytes() if path.exists() else b"", "")


def _asked(live: LiveSlurm, since: int) -> list[str]:
    return sorted(name for _, name in live.issued[since:])


def test_each_command_on_its_own_cadence() -> None:
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    snap = live.read()
    assert snap.tree is not None and snap.tree.size > 5 and len(live.issued) == 8  # 7 + scontrol show node
    assert live.cadence.usage_s == 60  # the cluster's PriorityCalcPeriod replaced the default
    fake.now += 30
    n = len(live.issued)
    live.read()
    assert _asked(live, n) == ["sprio_l.txt", "squeue.txt"]
    fake.now += 30  # a minute since the first read: a new calc period
    n = len(live.issued)
    live.read()
    assert _asked(live, n) == ["assoc_mgr.txt", "sprio_l.txt", "squeue.txt", "sshare_a_l_P.psv"]
    fake.now += 5
    n = len(live.issued)
    live.read()
    assert _asked(live, n) == []  # nothing due: the kept outputs make the snapshot
    live.refresh_usage_now()  # the user pressed r
    n = len(live.issued)
    live.read()
    assert len(live.issued) - n == 8


def test_a_slow_controller_is_asked_less_often() -> None:
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    fake.slow[saved.FILES["sshare"]] = 3.0  # > 2 s: sshare's period doubles (sshare runs alone)
    live.read()
    assert live.backoff[saved.FILES["sshare"]] == 2.0
    fake.now += 61  # a calc period later: sshare is not due for another minute
    n = len(live.issued)
    live.read()
    assert _asked(live, n) == ["assoc_mgr.txt", "sprio_l.txt", "squeue.txt"]
    fake.slow.clear()
    fake.now += 60
    n = len(live.issued)
    live.read()
    assert "sshare_a_l_P.psv" in _asked(live, n) and live.backoff[saved.FILES["sshare"]] == 1.0


def test_sshare_failure_is_never_hidden_by_a_kept_output() -> None:
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    live.read()
    fake.fail_sshare = True
    live.refresh_usage_now()
    with pytest.raises(SourceUnavailable, match="does not answer"):
        live.read()


def test_commands_per_minute() -> None:
    # sshare and assoc_mgr every 5 min, squeue and sprio every 30 s, config, partitions and
    # nodes every 10 min: 4.7 a minute to slurmctld; sacctmgr every 10 min: 0.1 to slurmdbd.
    rates = Cadence(jobs_s=30, usage_s=300, slow_s=600).per_minute()
    assert rates == pytest.approx({"slurmctld": 4.7, "slurmdbd": 0.1})


def test_the_first_read_gives_sshare_s_tree_before_the_other_commands() -> None:
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    stages = live.read_stages()
    first, running = next(stages)
    # Only sshare and the config have been asked when the first snapshot is handed out.
    assert sorted(name for _, name in live.issued) == ["scontrol_show_config.txt", "sshare_a_l_P.psv"]
    assert sorted(running) == sorted(set(commands()) - {"sshare_a_l_P.psv", "scontrol_show_config.txt"})
    assert first.tree is not None and first.tree.size == 14 and first.printed is not None
    assert first.settings.algorithm == "fair_tree" and not first.jobs
    whole, running = next(stages)
    assert running == () and len(live.issued) == 8 and len(whole.jobs) > 0
    assert next(stages, None) is None
    # Later reads have every output kept: one stage, whatever is due.
    fake.now += 61
    assert [r for _, r in live.read_stages()] == [()]


def test_live_source_stages_say_what_an_early_snapshot_lacks() -> None:
    from tui.sources.registry import SlurmSource

    fake = FakeCluster()
    source = SlurmSource()
    source._live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    (early, running), (whole, done) = list(source.load_stages())
    assert running == ("sacctmgr", "scontrol show partition", "scontrol show node",
                       "scontrol show assoc_mgr", "sprio", "squeue")
    assert early.capabilities == frozenset({"usage", "printed"}) and done == ()
    assert whole.capabilities == frozenset({"usage", "printed", "jobs", "factors", "partitions"})


def test_a_session_open_for_months_keeps_the_newest_commands_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # One entry per command run: ~170,000 a month at the default cadence, kept for ever before.
    monkeypatch.setattr("tui.sources.slurm_cli.ISSUED_KEPT", 20)
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock)
    for _ in range(10):  # every command each time (r pressed): 8 a read, 80 in all
        live.refresh_usage_now()
        live.read()
        fake.now += 1
    assert 10 <= len(live.issued) <= 20
    assert live.issued[-1][0] == max(t for t, _ in live.issued)  # the newest are the ones kept
