"""The exposition of real captures: the values `fairtop report --format json` gives, blanks left
out, +Inf where sshare prints inf; PBS entities; allocations and pending jobs by hand."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.metrics.scrape import expected, parse, report_rows
from tests.needs import missing
from tui.formats.openmetrics import ASSOCIATION_METRICS, label_set
from tui.formats.pbsfs import pbs_rows
from tui.metrics.exposition import age_tail, snapshot_body
from tui.model import Allocation, Job, Snapshot
from tui.sources import registry
from tui.sources.pbs import read_pbs

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURES = ["slurm/nested_parent/fair_tree", "slurm/nested_parent/classic", "slurm/near_tie/fair_tree"]


def association_samples(text: str) -> dict[tuple[str, str, str, str], float]:
    got = parse(text)
    return {(name, lab["cluster"], lab["account"], lab["user"]): value
            for name, _ in ASSOCIATION_METRICS.values() for lab, value in got.get(name, [])}


@pytest.mark.parametrize("capture", CAPTURES)
def test_every_association_value_is_the_reports(capture: str) -> None:
    folder = str(FIX / capture)
    snap = registry.make("folder", folder).load()
    text, _ = snapshot_body(snap)
    want = expected(report_rows(folder), snap.cluster)
    assert association_samples(text) == want  # same keys: blanks absent on both sides; same values


def test_nested_accounts_infinity_and_blanks() -> None:
    """nested_parent: accounts three levels down carry their parent and depth; LevelFS inf is
    +Inf; Fair Tree accounts have no FairShare (sshare prints none) rather than 0."""
    snap = registry.make("folder", str(FIX / "slurm/nested_parent/fair_tree")).load()
    text, _ = snapshot_body(snap)
    got = parse(text)
    level = {(lab["account"], lab["user"]): (lab["parent"], lab["depth"], v)
             for lab, v in got["fairtop_association_level_fs"]}
    assert level[("abb", "")] == ("ab", "2", float("inf"))
    assert 'account="abb",user="",parent="ab",depth="2"} +Inf\n' in text
    assert level[("adaa", "udaa2")][:2] == ("adaa", "4")
    fairshare_accounts = [lab for lab, _ in got["fairtop_association_fairshare"] if lab["user"] == ""]
    assert fairshare_accounts == []
    assert all(lab["user"] for lab, _ in got["fairtop_association_rank"])  # ranks are users'


def test_promtool_accepts_the_output(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        missing("no promtool on PATH (apt-get install prometheus; .ci/prometheus.sh does so as root)")
    snap = registry.make("folder", str(FIX / "slurm/nested_parent/fair_tree")).load()
    text, _ = snapshot_body(snap)
    done = subprocess.run([promtool, "check", "metrics"], input=text + age_tail(snap), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pbs_entities() -> None:
    tree = read_pbs(str(FIX / "pbs/man_resource_group"), str(FIX / "pbs/man_usage.txt"))
    snap = Snapshot(cluster="pbsman", source="pbs", pbs=tree, scheduler_version="23.06")
    text, _ = snapshot_body(snap)
    got = parse(text)
    rows = pbs_rows(tree)
    factor = {lab["entity"]: v for lab, v in got["fairtop_pbs_entity_fairshare_factor"]}
    assert factor == {r["name"]: r["fairshare_factor"] for r in rows}
    shares = {lab["entity"]: v for lab, v in got["fairtop_pbs_entity_shares"]}
    assert "TREEROOT" not in shares  # -1 is pbsfs' marker, not a share count
    assert shares == {r["name"]: r["shares"] for r in rows if r["name"] != "TREEROOT"}
    assert ('fairtop_scheduler_info{cluster="pbsman",scheduler="pbs",version="23.06",algorithm=""} 1'
            in text)


def test_allocation_by_hand() -> None:
    """1,000 SU granted 10 days ago for 40 days, 250 debited, 50 pre-debited: balance 700, burn
    25 SU/day, so it runs out 28 days after the snapshot (before its end)."""
    now = datetime(2026, 3, 1, tzinfo=timezone.utc)
    alloc = Allocation("A-1", "chem", granted_su=1000, used_su=250, pre_debited_su=50,
                       start=now - timedelta(days=10), end=now + timedelta(days=30))
    snap = Snapshot(cluster="c", source="hand", taken_at=now, allocations=(alloc,),
                    capabilities=frozenset({"allocations"}))
    got = parse(snapshot_body(snap)[0])
    labels = {"cluster": "c", "origin": "snapshot", "allocation": "A-1", "project": "chem"}
    values = {name: v for name, series in got.items() for lab, v in series if lab == labels}
    assert values == {
        "fairtop_allocation_credits": 1000.0, "fairtop_allocation_debits": 250.0,
        "fairtop_allocation_pre_debits": 50.0, "fairtop_allocation_balance": 700.0,
        "fairtop_allocation_burn_rate": 25.0,
        "fairtop_allocation_exhaustion_timestamp_seconds": (now + timedelta(days=28)).timestamp(),
    }


def _job(account: str, state: str, priority: int | None) -> Job:
    return Job(job_id="1", user="u", account=account, partition="p", state=state, tres={}, priority=priority)


def test_pending_jobs_per_account_and_unknown_without_jobs() -> None:
    jobs = (_job("a", "PENDING", 10), _job("a", "PENDING", 30), _job("a", "RUNNING", 99), _job("b", "PENDING", None),
            _job("", "PENDING", 50))  # squeue without an account: counted for the cluster only
    snap = Snapshot(cluster="c", source="hand", jobs=jobs, capabilities=frozenset({"jobs"}))
    got = parse(snapshot_body(snap)[0])
    assert {lab["account"]: v for lab, v in got["fairtop_account_pending_jobs"]} == {"a": 2, "b": 1}
    assert {lab["account"]: v for lab, v in got["fairtop_account_pending_priority_max"]} == {"a": 30}
    assert got["fairtop_cluster_pending_jobs"] == [({"cluster": "c"}, 4)]
    without = parse(snapshot_body(Snapshot(cluster="c", source="hand", capabilities=frozenset()))[0])
    assert "fairtop_account_pending_jobs" not in without  # unknown, not 0


def test_label_values_are_escaped() -> None:
    assert label_set({"account": 'a"b\\c\nd'}) == '{account="a\\"b\\\\c\\nd"}'


def test_age_and_unknown_version() -> None:
    taken = datetime(2026, 3, 1, tzinfo=timezone.utc)
    snap = Snapshot(cluster="c", source="hand", taken_at=taken)
    assert age_tail(snap, taken + timedelta(seconds=90.5)).endswith('fairtop_snapshot_age_seconds{cluster="c"} 90.5\n')
    assert 'version="unknown"' in snapshot_body(snap)[0]


def test_usage_the_source_lacks_is_left_out() -> None:
    """A source without usage (slurmrestd 22.05): shares only, no usage, fairshare, LevelFS or
    rank computed from a usage of 0; one association sshare did not list: its usage values only."""
    from dataclasses import replace

    snap = registry.make("folder", str(FIX / "slurm/nested_parent/fair_tree")).load()
    caps = (snap.capabilities or frozenset()) - {"usage", "printed"}
    blind = parse(snapshot_body(replace(snap, printed=None, capabilities=caps))[0])
    assert len(blind["fairtop_association_norm_shares"]) == snap.tree.size  # type: ignore[union-attr]
    assert not {"fairtop_association_raw_usage", "fairtop_association_fairshare", "fairtop_association_level_fs",
                "fairtop_association_rank", "fairtop_association_effective_usage"} & set(blind)
    row = next(i for i in range(5, snap.tree.size) if snap.tree.is_user[i])  # type: ignore[union-attr]
    one = parse(snapshot_body(replace(snap, usage_unknown=(row,)))[0])
    full = parse(snapshot_body(snap)[0])
    key = (str(snap.tree.account[row]), str(snap.tree.user[row]))  # type: ignore[union-attr]
    for name in ("fairtop_association_raw_usage", "fairtop_association_fairshare", "fairtop_association_norm_shares"):
        here = [v for lab, v in one.get(name, []) if (lab["account"], lab["user"]) == key]
        before = [v for lab, v in full[name] if (lab["account"], lab["user"]) == key]
        assert here == ([] if name != "fairtop_association_norm_shares" else before) and before
