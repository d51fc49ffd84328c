"""The Policy screen's form read into a PolicyChange, its winners and losers, and its plot series."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tui.analysis.policy_view import FormError, default_window, form_change, policy_series, series_row, winners_losers
from tui.analysis.replay import PolicyChange, job_columns, prepare_replay, replay_policy
from tui.sources.sacct import load_saved_columns, load_saved_last_cycle
from tui.sources.saved import load_folder


def test_form_mirrors_replay_flags() -> None:
    change = form_change({"half_life": "1-0", "calc_period": "5", "reset_period": "weekly", "algorithm": "classic",
                          "damping": "2", "enforce_limits": "no", "qos_usage_factor": "low=0.5, high=2",
                          "billing": "gpu=CPU=1,GRES/gpu=8"})
    assert (change.half_life_s, change.calc_period_s, change.reset_period, change.algorithm) == \
        (86400.0, 300.0, "WEEKLY", "classic")
    assert change.damping == 2.0 and change.enforce_limits is False
    assert change.qos_usage_factor == {"low": 0.5, "high": 2.0}
    assert change.billing["gpu"]["cpu"] == 1.0


def test_empty_form_keeps_the_cluster_policy() -> None:
    change = form_change({})
    assert change.half_life_s is None and change.algorithm is None and not change.billing


@pytest.mark.parametrize(("form", "field"), [({"calc_period": "0"}, "calc period"),
                                             ({"reset_period": "hourly"}, "reset period"),
                                             ({"algorithm": "multifactor"}, "algorithm"),
                                             ({"damping": "-1"}, "damping"),
                                             ({"qos_usage_factor": "low"}, "QOS usage factors")])
def test_form_errors_name_the_field(form: dict[str, str], field: str) -> None:
    with pytest.raises(FormError) as err:
        form_change(form)
    assert err.value.field == field


def test_winners_and_losers() -> None:
    rows = [{"move": m, "account": "a", "user": str(i)} for i, m in enumerate([0.3, 0.1, 0.0, None, -0.05, -0.2])]
    winners, losers = winners_losers(rows, 1)  # type: ignore[arg-type]
    assert winners[0]["move"] == 0.3 and losers[0]["move"] == -0.2


HL1H = FIXTURES / "slurm" / "replay" / "hl1h"


def _hl1h_base():  # noqa: ANN202 - a ReplayBase
    snap = load_folder(HL1H)
    cols, last = load_saved_columns(HL1H), load_saved_last_cycle(HL1H)
    since = default_window(snap.taken_at, snap.settings.decay_half_life_s, float(cols.start.min()))
    return prepare_replay(snap, job_columns(cols, snap.tree), since.astimezone(timezone.utc), last)


@pytest.mark.parametrize("change", [PolicyChange(), PolicyChange(half_life_s=1800.0),
                                    PolicyChange(calc_period_s=120.0), PolicyChange(enforce_limits=False),
                                    PolicyChange(algorithm="classic")], ids=["own", "hl30m", "calc2m", "nolimits",
                                                                             "classic"])
def test_series_is_a_replay_read_at_each_time(change: PolicyChange) -> None:
    """The plot's series (one pass of the law for all 12 times and every association) equals what a
    replay read at each time gives (prepare_replay at it, then replay_policy), on the real 22.05
    capture hl1h; its last time is the replay's own, and the cluster's side ends on sshare's RawUsage."""
    base = _hl1h_base()
    series = policy_series(base, change)
    end = datetime.fromtimestamp(base.when, base.snap.taken_at.tzinfo)
    step = (end - base.since) / 12
    last = datetime.fromtimestamp(base.last, end.tzinfo)
    assert series.times == [end if k == 12 else base.since + step * k for k in range(1, 13)]
    for k, at in enumerate(series.times):
        at_base = base if k == 11 else prepare_replay(base.snap, base.jobs, base.since, last, at)
        done = replay_policy(at_base, change)
        np.testing.assert_allclose(series.usage_now[k], np.asarray(done.now_tree.usage_raw, dtype=np.float64),
                                   rtol=1e-12)
        np.testing.assert_allclose(series.usage_new[k], np.asarray(done.tree.usage_raw, dtype=np.float64),
                                   rtol=1e-12)
        np.testing.assert_allclose(series.fairshare_now[k], np.nan_to_num(done.now.fairshare, posinf=0.0),
                                   rtol=1e-12)
        np.testing.assert_allclose(series.fairshare_new[k], np.nan_to_num(done.result.fairshare, posinf=0.0),
                                   rtol=1e-12)
    tree = base.tree
    alice = next(i for i in range(tree.size) if tree.user[i] == "alice")
    assert series.usage_now[-1, alice] == float(tree.usage_raw[alice]) > 0  # sshare's RawUsage at the capture
    assert series.usage_now[0, alice] < series.usage_now[-1, alice] or series.usage_now[0, alice] == 0
    dates, usage, fairshare = series_row(series, alice, base.snap.zone)
    assert len(dates) == 12 and usage[0][1][-1] == float(tree.usage_raw[alice]) / 3600.0
    # the last time is the capture's cycle, on the capture's clock (UTC) whoever reads it
    assert dates[-1] == series.times[-1].astimezone(timezone.utc).strftime("%d/%m/%Y %H:%M")
    assert [name for name, _ in fairshare] == ["cluster's policy", "new policy"]


def test_series_on_logged_cycles_is_a_replay_read_at_each_time() -> None:
    """The same on slurmctld's logged cycles through a 26.05 reconfigure (its re-exec re-anchored the
    grid): each time reads the logged grid, under the cluster's policy and a 30-minute half-life."""
    from tui.sources.ctld_log import load_saved_log

    folder = FIXTURES / "slurm-26.05" / "ctld_log" / "reconfigure_2605"
    snap, log = load_folder(folder), load_saved_log(folder)
    cols, last = load_saved_columns(folder), load_saved_last_cycle(folder)
    assert log is not None
    since = default_window(snap.taken_at, snap.settings.decay_half_life_s, float(cols.start.min()))
    base = prepare_replay(snap, job_columns(cols, snap.tree), since.astimezone(timezone.utc), last, cycles=log.cycles)
    change = PolicyChange(half_life_s=1800.0)
    series = policy_series(base, change)
    assert base.logged
    for k, at in enumerate(series.times):
        at_base = base if k == 11 else prepare_replay(snap, base.jobs, base.since, last, at, cycles=log.cycles)
        done = replay_policy(at_base, change)
        np.testing.assert_allclose(series.usage_now[k], np.asarray(done.now_tree.usage_raw, dtype=np.float64),
                                   rtol=1e-12)
        np.testing.assert_allclose(series.usage_new[k], np.asarray(done.tree.usage_raw, dtype=np.float64),
                                   rtol=1e-12)
    assert series.usage_new[-1].max() < series.usage_now[-1].max()  # a shorter half-life: less usage
