"""Policy replay (tui.analysis.replay) on a one-job tree with hand-derived numbers, and on a real
22.05 capture against its own sshare."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tui.analysis.history import check_raw_usage
from tui.analysis.replay import JobColumns, PolicyChange, job_columns, parse_shares, policy_replay, replay_rows
from tui.model import NO_VAL, USE_PARENT, AssocTree, Partition, PrioritySettings, Snapshot
from tui.sources.sacct import AccountedJob, load_saved_history
from tui.sources.saved import load_folder

HL = 86400          # one day
P = 60              # PriorityCalcPeriod
L = 1_800_000_000   # the last decay cycle (a multiple of P), the capture's time
B = 4.0             # billing per second: 4 CPUs, no weights
CAPTURE = FIXTURES / "slurm" / "deep4" / "fair_tree"


def _d(half_life: float) -> float:
    return 1 - 0.693 / half_life if half_life > 0 else 1.0  # Slurm's per-second factor


def _law(start: float, end: float, half_life: float, tail: bool = True) -> float:
    """A job on the grid L - k*P, by hand: each whole period it ran adds P*d**P*B at its cycle,
    decayed to L; the part after the last cycle before its end is added at the end (limits),
    decayed from that cycle... (here the end is on the grid or the tail given explicitly)."""
    d = _d(half_life)
    total = 0.0
    t = start
    while t + P <= end:
        total += P * d**P * B * d ** (L - (t + P))
        t += P
    if tail and end > t:
        x = end - t
        total += x * d**x * B * d ** (L - (t + P))  # charged at the end, decayed from the cycle before it
    return total


def _snap(usage: float, shares: int = 1, qos: str = "", enforce: frozenset[str] | None = None) -> Snapshot:
    tree = AssocTree(parent=np.array([-1, 0, 1]), is_user=np.array([False, False, True]),
                     account=np.array(["root", "phys", "phys"], dtype=object),
                     user=np.array(["", "", "alice"], dtype=object),
                     shares_raw=np.array([NO_VAL, 10, shares]), usage_raw=np.array([usage, usage, usage],
                                                                                     dtype=np.longdouble))
    settings = PrioritySettings(decay_half_life_s=HL, calc_period_s=P, accounting_enforce=enforce)
    return Snapshot(cluster="c", source="test", taken_at=datetime.fromtimestamp(L, timezone.utc), tree=tree,
                    settings=settings, partitions=(Partition(name="burn"),))


def _jobs(start: float, end: float, qos: str = "", cpus: float = 4.0) -> JobColumns:
    job = AccountedJob("1", "phys", "alice", datetime.fromtimestamp(start, timezone.utc),
                       datetime.fromtimestamp(end, timezone.utc), int(end - start), cpus, "COMPLETED", "burn", qos,
                       {"cpu": cpus, "billing": cpus})
    return job_columns([job], _snap(0).tree)


SINCE = datetime.fromtimestamp(L - 3600, timezone.utc)


def _usage(done, row: int = 2) -> float:
    return float(done.tree.usage_raw[row])


def test_own_policy_gives_the_printed_usage_back():
    own = _law(L - 600, L - 120, HL)
    done = policy_replay(_snap(math.floor(own)), _jobs(L - 600, L - 120), PolicyChange(), SINCE)
    assert done.unchanged and _usage(done) == math.floor(own)
    assert abs(done.residual[2]) <= 1.0  # the jobs explain sshare's number (up to its truncation)


def test_no_decay_charges_billing_times_seconds():
    own = _law(L - 600, L - 120, HL)
    done = policy_replay(_snap(math.floor(own)), _jobs(L - 600, L - 120), PolicyChange(half_life_s=0), SINCE)
    # 8 minutes on 4 CPUs, nothing decayed; sshare's truncation (the residual, < 1) carried as it is
    assert abs(done.residual[2]) < 1 and _usage(done) == math.floor(480 * B + done.residual[2])
    assert not done.unchanged


def test_halving_the_half_life():
    own = _law(L - 600, L - 120, HL)
    half = _law(L - 600, L - 120, HL / 2)
    done = policy_replay(_snap(own), _jobs(L - 600, L - 120), PolicyChange(half_life_s=HL / 2), SINCE)
    assert _usage(done) == math.floor(half)
    assert half < own


def test_usage_from_before_the_window_decays_as_the_new_policy_would():
    own, extra = _law(L - 600, L - 120, HL), 1e6  # 1e6 billing-s from before the window's first cycle
    c0 = L - 3600
    done = policy_replay(_snap(own + extra), _jobs(L - 600, L - 120), PolicyChange(half_life_s=HL / 2), SINCE)
    carried = extra * (_d(HL / 2) / _d(HL)) ** (L - c0)
    assert _usage(done) == pytest.approx(math.floor(_law(L - 600, L - 120, HL / 2) + carried), abs=1)
    assert any("before the window" in n for n in done.notes)


def test_without_limits_the_last_slice_is_never_charged():
    with_tail = _law(L - 600, L - 90, 0)  # no decay: 510 s
    assert with_tail == 510 * B
    snap = replace(_snap(with_tail), settings=replace(_snap(0).settings, decay_half_life_s=0))
    done = policy_replay(snap, _jobs(L - 600, L - 90), PolicyChange(enforce_limits=False), SINCE)
    assert _usage(done) == 480 * B


def test_qos_usage_factor_and_billing_weights():
    snap = replace(_snap(480 * B), settings=replace(_snap(0).settings, decay_half_life_s=0))
    jobs = _jobs(L - 600, L - 120, qos="scav")
    half = policy_replay(snap, jobs, PolicyChange(qos_usage_factor={"scav": 0.5}), SINCE)
    assert _usage(half) == 480 * B * 0.5
    weighted = policy_replay(snap, jobs, PolicyChange(billing={"burn": {"cpu": 2.5}}), SINCE)
    assert _usage(weighted) == 480 * 4 * 2.5


def test_switch_at_the_end_changes_nothing_and_earlier_carries_the_usage():
    own = _law(L - 600, L - 120, HL)
    snap, jobs = _snap(math.floor(own)), _jobs(L - 600, L - 120)
    late = policy_replay(snap, jobs, PolicyChange(half_life_s=HL / 2), SINCE,
                         switch_at=datetime.fromtimestamp(L, timezone.utc))
    assert _usage(late) == pytest.approx(math.floor(own), abs=1)
    # switched at L-300: the old law up to then (charges of 5 periods), then the new one
    mid = policy_replay(snap, jobs, PolicyChange(half_life_s=HL / 2), SINCE,
                        switch_at=datetime.fromtimestamp(L - 300, timezone.utc))
    d, d2 = _d(HL), _d(HL / 2)
    at_switch = sum(P * d**P * B * d ** (L - 300 - t) for t in range(L - 540, L - 299, P))
    after = sum(P * d2**P * B * d2 ** (L - t) for t in (L - 240, L - 180, L - 120))
    assert _usage(mid) == pytest.approx(math.floor(at_switch * d2**300 + after), abs=1)


def test_shares_file_and_its_errors():
    tree = _snap(0).tree
    assert parse_shares("phys 20  # more\nphys/alice parent\n", tree) == {("phys", ""): 20,
                                                                       ("phys", "alice"): USE_PARENT}
    with pytest.raises(ValueError, match="s:2: no association 'phys/bob'"):
        parse_shares("phys 1\nphys/bob 3\n", tree, "s")
    with pytest.raises(ValueError, match="whole number"):
        parse_shares("phys -1\n", tree)


def test_at_and_switch_outside_the_window_are_refused():
    snap, jobs = _snap(0), _jobs(L - 600, L - 120)
    with pytest.raises(ValueError, match="after the snapshot"):
        policy_replay(snap, jobs, PolicyChange(), SINCE, at=datetime.fromtimestamp(L + 60, timezone.utc))
    with pytest.raises(ValueError, match="outside the replayed window"):
        policy_replay(snap, jobs, PolicyChange(), SINCE, switch_at=SINCE - timedelta(hours=1))


def test_on_a_real_capture_the_jobs_explain_sshare_and_a_shorter_half_life_moves_usage_down():
    snap = load_folder(CAPTURE)
    jobs, last = load_saved_history(CAPTURE)
    assert snap.tree is not None
    since = min(j.start for j in jobs) - timedelta(minutes=5)
    done = policy_replay(snap, job_columns(jobs, snap.tree), PolicyChange(), since, last)
    check = check_raw_usage(jobs, snap.tree, snap.settings, last, snap.taken_at, partitions=snap.partitions)
    assert check.agrees and done.unchanged
    assert np.all(np.abs(done.residual) <= np.array([r.tolerance for r in check.rows]))
    assert np.array_equal(done.tree.usage_raw, snap.tree.usage_raw)
    short = policy_replay(snap, job_columns(jobs, snap.tree), PolicyChange(half_life_s=3600), since, last)
    used = np.asarray(snap.tree.usage_raw, dtype=float) > 0
    assert np.all(np.asarray(short.tree.usage_raw)[used] < np.asarray(snap.tree.usage_raw)[used])
    rows = replay_rows(short)
    assert [r["account"] for r in rows if r["user"] == ""] and all(
        (r["move"] is None) == (r["fairshare"] is None) for r in rows)


def test_classic_rows_are_sorted_by_the_move():
    snap = load_folder(CAPTURE)
    jobs, last = load_saved_history(CAPTURE)
    assert snap.tree is not None
    since = min(j.start for j in jobs) - timedelta(minutes=5)
    done = policy_replay(snap, job_columns(jobs, snap.tree), PolicyChange(algorithm="classic"), since, last)
    moves = [r["move"] for r in replay_rows(done) if r["move"] is not None]
    assert moves == sorted(moves, reverse=True) and moves[0] > 0 > moves[-1]
    users = [r for r in replay_rows(done) if r["user"]]
    assert sorted(int(r["rank_replayed"]) for r in users)[-1] == len(users)  # N = the best


@pytest.mark.parametrize("capture", ["deep4/fair_tree", "live/fair_tree", "nested_parent/classic"])
def test_sacct_columns_are_the_parsed_jobs(capture):
    """The columnar parse (one code per distinct name and shape) keeps what parse_sacct keeps."""
    from tui.sources.sacct import SacctColumns, load_saved_columns

    folder = FIXTURES / "slurm" / capture
    jobs, _ = load_saved_history(folder)
    cols = load_saved_columns(folder)
    ref = SacctColumns.of_jobs(jobs)
    assert cols.size == ref.size == len(jobs) > 0
    assert np.array_equal(cols.start, ref.start) and np.array_equal(cols.end, ref.end)
    assert [cols.users[u] for u in cols.user] == [j.user for j in jobs]
    assert [cols.qos_names[q] for q in cols.qos] == [j.qos for j in jobs]
    assert np.array_equal(cols.shape_billing[cols.shape], [j.billing for j in jobs])
    assert [cols.shapes[s] for s in cols.shape] == [{k: v for k, v in j.alloc_tres.items() if k != "billing"}
                                                     for j in jobs]


def test_streamed_chunks_concatenate_to_the_whole():
    from tui.sources.sacct import SacctColumns, iter_sacct_columns

    path = FIXTURES / "slurm" / "deep4" / "fair_tree" / "sacct_a_P.psv"
    with path.open("rb") as stream:
        whole = next(iter_sacct_columns(stream))
    with path.open("rb") as stream:
        parts = list(iter_sacct_columns(stream, chunk=4))
    assert len(parts) > 2
    joined = SacctColumns.concat(parts)
    assert np.array_equal(joined.start, whole.start)
    assert [joined.accounts[a] + "/" + joined.users[u] for a, u in zip(joined.account, joined.user)] == \
        [whole.accounts[a] + "/" + whole.users[u] for a, u in zip(whole.account, whole.user)]
    assert np.array_equal(joined.shape_billing[joined.shape], whole.shape_billing[whole.shape])


def test_at_an_earlier_time_reads_the_usage_then():
    """--at before the capture: "now" is the jobs' usage then (plus the residual decayed back),
    and the own policy replays to it exactly; a job still running then counts up to then."""
    own = _law(L - 600, L - 120, HL)
    snap, jobs = _snap(own), _jobs(L - 600, L - 120)
    then = datetime.fromtimestamp(L - 300, timezone.utc)  # the job ran 5 periods by then
    done = policy_replay(snap, jobs, PolicyChange(), SINCE, at=then)
    at_then = sum(P * _d(HL)**P * B * _d(HL) ** (L - 300 - t) for t in range(L - 540, L - 299, P))
    assert float(done.now_tree.usage_raw[2]) == pytest.approx(at_then, rel=1e-9)
    assert _usage(done) == pytest.approx(at_then, abs=1) and not done.unchanged


RECONFIGURE = FIXTURES / "slurm-26.05" / "ctld_log" / "reconfigure_2605"


def _reconfigure_base(logged: bool):  # noqa: ANN202 - a ReplayBase
    from tui.analysis.policy_view import default_window
    from tui.analysis.replay import prepare_replay
    from tui.sources.ctld_log import load_saved_log
    from tui.sources.sacct import load_saved_columns, load_saved_last_cycle

    snap = load_folder(RECONFIGURE)
    cols, log = load_saved_columns(RECONFIGURE), load_saved_log(RECONFIGURE)
    assert log is not None
    since = default_window(snap.taken_at, snap.settings.decay_half_life_s, float(cols.start.min()))
    return snap, prepare_replay(snap, job_columns(cols, snap.tree), since.astimezone(timezone.utc),
                                load_saved_last_cycle(RECONFIGURE), cycles=log.cycles if logged else None)


def test_own_policy_on_logged_cycles_through_a_reconfigure() -> None:
    """A real 26.05.3 capture (hl 1 h, calc period 1 minute) whose slurmctld re-exec'd at a
    ``scontrol reconfigure`` while alice's and carol's jobs ran: on the logged cycles (saved by the
    capture) the own policy gives slurmctld's usage within 1e-6 relative + 1 (here within 1e-9); on a
    regular grid back from the last cycle, 2 s off before the reconfigure, alice is 56,950 off (4.9e-5
    relative: more than the logged bound, within the assumed 1 - d^P = 0.011)."""
    snap, logged = _reconfigure_base(True)
    _, assumed = _reconfigure_base(False)
    tree = snap.tree
    printed = np.asarray(tree.usage_raw, dtype=np.float64)
    alice = next(i for i in range(tree.size) if tree.user[i] == "alice")
    assert logged.logged and not assumed.logged
    assert logged.grid_text == ("slurmctld's logged decay cycles (8 in the window): the own policy's RawUsage within "
                                "1e-6 relative + 1 of sshare's")
    assert assumed.grid_text == ("assumed, every 60 s back from the last cycle (no slurmctld log saved): the own "
                                 "policy's RawUsage within 1 - d^P = 0.011 relative + 1 of sshare's")
    assert list(logged.grid[-5:]) == [float(datetime(2026, 11, 28, 6, m, 54, tzinfo=timezone.utc).timestamp())
                                      for m in (52, 53, 54, 55, 56)]  # re-anchored at the re-exec
    assert np.all(np.abs(printed - logged.rebuilt) <= 1e-6 * printed + 1)
    assert int(printed[alice]) == 1154452898  # sshare's RawUsage (assoc_mgr's 1154452898.81...)
    assert abs(printed - logged.rebuilt).max() < 1e-9 * printed.max()
    off = printed[alice] - float(assumed.rebuilt[alice])
    assert round(off) == 56950 and 1e-6 * printed[alice] + 1 < off < 0.011 * printed[alice]
