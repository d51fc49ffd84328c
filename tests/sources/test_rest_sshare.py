"""slurmrestd + sshare: the REST tree with sshare's usage and printed columns, and the REST jobs.

Everything here is real Slurm 22.05.8 output: the twelve scenario captures of
``tests/fixtures/slurm/`` (slurmrestd JSON and sshare/sprio taken within a second of each other)
and ``tests/fixtures/slurmrestd/added_assoc`` (two captures around adding an account and a user,
so each source lists associations the other does not).
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from tui.analysis.breakdown import explain_slurm
from tui.analysis.planner import load_scenario, run_scenario
from tui.analysis.standing import build_standing
from tui.app.tree_rows import UNKNOWN, TreeTable
from tui.config import expand_source
from tui.model import Snapshot
from tui.sources import registry, saved
from tui.sources import slurmrestd as rest
from tui.sources.commands import Output
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.rest_sshare import USAGE_COMMANDS, RestSshare, combine
from tui.sources.saved import printed_columns
from tui.sources.slurm_cli import LiveSlurm
from tui.sources.slurm_cli import commands as slurm_commands
from tui.sources.slurm_text import parse_sprio
from tui.sources.sshare import SshareTable, parse_sshare

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VARIANTS = sorted(p.parent for p in (FIXTURES / "slurm").glob("*/*/rest") if (p.parent / "sprio_l.txt").exists())
ADDED = FIXTURES / "slurmrestd" / "added_assoc"
OPENAPI = json.loads((FIXTURES / "slurmrestd" / "openapi_v3_22.05.8_paths.json").read_text())


def _read(folder: Path, name: str) -> bytes:
    plain = folder / "rest" / name
    return plain.read_bytes() if plain.exists() else gzip.decompress((folder / "rest" / f"{name}.gz").read_bytes())


def _transport(folder: Path, log: list[str] | None = None) -> httpx.MockTransport:
    """The capture's slurmrestd JSON served as the real server answered (404 for anything else)."""
    routes: dict[str, bytes | dict[str, Any]] = {
        "/openapi/v3": OPENAPI,
        "/slurmdb/v0.0.38/associations": _read(folder, "slurmdb_v0.0.38_associations.json"),
        "/slurm/v0.0.38/partitions": _read(folder, "slurm_v0.0.38_partitions.json"),
        "/slurm/v0.0.38/jobs": _read(folder, "slurm_v0.0.38_jobs.json"),
    }

    def handle(request: httpx.Request) -> httpx.Response:
        if log is not None:
            log.append(request.url.path)
        answer = routes.get(request.url.path)
        if answer is None:
            return httpx.Response(404, text="Unable find requested URL.")
        return httpx.Response(200, content=answer) if isinstance(answer, bytes) else httpx.Response(200, json=answer)

    return httpx.MockTransport(handle)


def _rest(folder: Path) -> rest.RestRead:
    return rest.read(socket="/unused", transport=_transport(folder), sleep=lambda s: None)


def _sshare(folder: Path) -> bytes:
    return (folder / "sshare_a_l_P.psv").read_bytes()


def _usage(folder: Path) -> tuple[Snapshot, SshareTable]:
    """The usage side as the live source builds it from the same three outputs."""
    table = parse_sshare(_sshare(folder), "sshare -a -l -P")
    files = saved.Outputs("", {name: (folder / name).read_bytes() for name in USAGE_COMMANDS})
    return saved.snapshot_from_files(files, table, "live", "sandbox", datetime.now(timezone.utc)), table


def _combined(rest_folder: Path, sshare_folder: Path | None = None) -> tuple[Snapshot, SshareTable]:
    usage, table = _usage(sshare_folder or rest_folder)
    return combine(_rest(rest_folder), usage, table), table


@pytest.mark.parametrize("folder", VARIANTS, ids=[f"{p.parent.name}/{p.name}" for p in VARIANTS])
def test_every_association_shows_what_sshare_printed(folder: Path) -> None:
    snap, table = _combined(folder)
    tree = snap.tree
    assert tree is not None and snap.printed is not None
    assert [tree.label(i) for i in range(tree.size)] == [table.tree.label(i) for i in range(table.tree.size)]
    assert snap.printed == printed_columns(table)
    assert snap.usage_unknown == ()
    # assoc_mgr's two decimals; sshare prints the long double truncated
    assert 0 < np.abs(tree.usage_raw - table.tree.usage_raw).max() <= 1
    assert tree.usage_raw[0] > 0  # the scenarios ran jobs: real usage, not zeros
    assert not any("not in" in w or "usage unknown" in w for w in snap.warnings)
    standing = build_standing(snap)
    cells = TreeTable.from_standing(standing).cells
    for header, col in (("NormShares", "norm_shares"), ("RawUsage", "raw_usage"), ("EffectvUsage", "eff_usage"),
                        ("FairShare", "fairshare"), ("LevelFS", "level_fs")):
        if header in table.header:
            printed = list(table.column(header))
            if header == "LevelFS":  # the tree says 'parent' where sshare leaves a parent user's cell empty
                printed = ["parent" if s == "parent" and v == "" else v
                           for s, v in zip(table.column("RawShares"), printed, strict=True)]
            assert cells[col].tolist() == printed, header
    assert standing.reconciliation is not None
    assert standing.reconciliation.disagreements == ()  # dampening and all: from the config
    assert snap.settings.algorithm == ("classic" if folder.name.startswith("classic") else "fair_tree")


@pytest.mark.parametrize("folder", VARIANTS, ids=[f"{p.parent.name}/{p.name}" for p in VARIANTS])
def test_pending_jobs_carry_the_priority_sprio_printed(folder: Path) -> None:
    snap, _ = _combined(folder)
    tree = snap.tree
    assert tree is not None
    sprio = {r.job_id: r for r in parse_sprio((folder / "sprio_l.txt").read_bytes())}
    pending = {j.job_id: j for j in snap.jobs if j.state == "PENDING"}
    assert sorted(pending) == sorted(sprio) and len(pending) >= 7
    rows = {(str(tree.account[i]), str(tree.user[i])): int(i) for i in np.flatnonzero(tree.is_user)}
    standing = build_standing(snap)
    for job_id, job in pending.items():
        assert job.priority == sprio[job_id].priority
        assert job.user == sprio[job_id].user and job.partition == sprio[job_id].partition
        assert job.factors == {}  # the API has no sprio parts
        listed = explain_slurm(standing, rows[(job.account, job.user)]).jobs
        assert [(p.job_id, p.priority) for p in listed if p.job_id == job_id] == [(job_id, job.priority)]
    # finished jobs are in the usage already, not in the job list
    assert {j.state for j in snap.jobs} <= {"PENDING", "RUNNING"}


def test_jobs_from_the_real_api_in_detail() -> None:
    jobs = rest.jobs_from_json(json.loads(_read(FIXTURES / "slurm" / "live" / "fair_tree",
                                                "slurm_v0.0.38_jobs.json")))
    by_id = {j.job_id: j for j in jobs}
    assert sorted(by_id, key=int) == ["4", "5", "6", "7", "8", "9", "10"]  # 1-3 COMPLETED
    j = by_id["8"]
    assert (j.user, j.account, j.partition, j.state, j.priority) == ("la", "qsub", "parked", "PENDING", 10000)
    assert j.tres == {"cpu": 1.0, "mem": 1024.0, "node": 1.0, "billing": 1_000_000.0}
    assert j.time_limit_s == 60
    assert j.submit_time is not None and int(j.submit_time.timestamp()) == 1795286558


def test_v0040_shapes_and_bad_jobs() -> None:
    doc = {"jobs": [{"job_id": 12, "user_name": "u", "account": "a", "partition": "p", "job_state": ["PENDING"],
                     "priority": {"set": True, "infinite": False, "number": 4321},
                     "time_limit": {"set": True, "number": 30}, "tres_req_str": "cpu=2"},
                    {"job_id": 13, "user_name": "u", "account": "a", "job_state": ["COMPLETED"]}]}
    (job,) = rest.jobs_from_json(doc)
    assert (job.job_id, job.priority, job.time_limit_s, job.tres) == ("12", 4321, 1800, {"cpu": 2.0})
    with pytest.raises(InputError, match="no user_name or account"):
        rest.jobs_from_json({"jobs": [{"job_id": 1, "job_state": "PENDING", "user_name": "u"}]})
    with pytest.raises(InputError, match="'jobs' is missing"):
        rest.jobs_from_json({"errors": []})


def test_an_association_only_slurmrestd_lists_is_unknown_not_zero() -> None:
    # slurmrestd after adding quiet/qnew and qnew/lg; sshare from before
    snap, table = _combined(ADDED / "after", ADDED / "before")
    tree = snap.tree
    assert tree is not None
    unknown = [tree.label(i) for i in snap.usage_unknown]
    assert unknown == ["qnew", "qnew/lg"]
    assert any(w.startswith("2 association(s) slurmrestd lists are not in sshare: qnew, qnew/lg")
               for w in snap.warnings)
    standing = build_standing(snap)
    t = TreeTable.from_standing(standing)
    lg = [tree.label(i) for i in range(tree.size)].index("qnew/lg")
    for col in ("raw_usage", "eff_usage", "fairshare", "level_fs", "rank"):
        assert t.cells[col][lg] == UNKNOWN, col
        assert np.isnan(t.keys[col][lg])
    assert t.cells["raw_shares"][lg] == "1"  # the shares are real: slurmdbd's
    assert "sshare does not list it" in explain_slurm(standing, lg).summary
    # every row sshare did print is shown as printed
    label_of = {table.tree.label(j): j for j in range(table.tree.size)}
    for i in range(tree.size):
        if i not in snap.usage_unknown:
            assert t.cells["fairshare"][i].rstrip("≠") == table.column("FairShare")[label_of[tree.label(i)]]


def test_an_association_only_sshare_lists_is_named() -> None:
    snap, table = _combined(ADDED / "before", ADDED / "after")
    assert table.tree.size == snap.tree.size + 2
    assert any(w.startswith("2 association(s) sshare lists are not in slurmrestd's tree and are not "
                            "shown: qnew, qnew/lg") for w in snap.warnings)
    assert snap.usage_unknown == ()


class _Cluster:
    """Answers the usage side's commands with one capture's outputs, and logs them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log: list[str] = []
        self.sshare_fails = False
        self.now = 0.0

    def run(self, args: list[str], timeout: float) -> Output:
        name = next(n for n, a in slurm_commands().items() if a == args)
        self.log.append(name)
        if name == saved.FILES["sshare"] and self.sshare_fails:
            return Output(tuple(args), 1, b"", "sshare: error: Unable to contact slurm controller")
        return Output(tuple(args), 0, (self.folder / name).read_bytes(), "")

    def both(self, requests: list[str]) -> RestSshare:
        live_rest = rest.LiveRest(socket="/unused", transport=_transport(self.folder, requests),
                                  sleep=lambda s: None, clock=lambda: self.now)
        return RestSshare(live_rest, LiveSlurm(runner=self.run, clock=lambda: self.now, only=USAGE_COMMANDS))


def test_each_side_on_its_cadence_and_everything_on_r() -> None:
    cluster = _Cluster(FIXTURES / "slurm" / "live" / "fair_tree")
    requests: list[str] = []
    both = cluster.both(requests)
    snap = both.read()
    assert sorted(cluster.log) == sorted(USAGE_COMMANDS)  # no squeue, sprio, sacctmgr, partitions
    assert requests == ["/openapi/v3", "/slurmdb/v0.0.38/associations", "/slurm/v0.0.38/partitions",
                        "/slurm/v0.0.38/jobs"]
    assert snap.source.endswith("+ sshare") and snap.printed is not None
    assert snap.settings.calc_period_s == 60  # the sandbox's PriorityCalcPeriod, from the config
    cluster.now = 59.0
    again = both.read()
    # the jobs every read; slurmdbd's associations, partitions and sshare not yet
    assert (len(cluster.log), requests[4:]) == (3, ["/slurm/v0.0.38/jobs"])
    assert [j.job_id for j in again.jobs] == [j.job_id for j in snap.jobs] and again.printed == snap.printed
    assert again.warnings == snap.warnings
    cluster.now = 60.0
    both.read()
    assert cluster.log[3:] == [saved.FILES["sshare"], saved.FILES["assoc_mgr"]]
    assert requests[5:] == ["/slurm/v0.0.38/jobs"]
    cluster.now = 600.0
    both.read()
    assert requests[6:] == ["/openapi/v3", "/slurmdb/v0.0.38/associations", "/slurm/v0.0.38/partitions",
                            "/slurm/v0.0.38/jobs"]
    both.refresh_now()
    both.read()
    assert cluster.log.count(saved.FILES["sshare"]) == 4  # 0, 60, 600 (due again), r
    assert requests.count("/slurmdb/v0.0.38/associations") == 3


def test_sshare_failing_is_an_error_not_old_numbers() -> None:
    cluster = _Cluster(FIXTURES / "slurm" / "live" / "fair_tree")
    both = cluster.both([])
    both.read()
    cluster.sshare_fails = True
    both.refresh_now()
    with pytest.raises(SourceUnavailable, match="Unable to contact"):
        both.read()


def test_one_source_in_the_registry_and_the_config() -> None:
    cls = registry.source_class("slurmrestd_sshare")
    assert cls.flag == "--slurmrestd-sshare" and cls.setting == "slurmrestd"
    assert {"usage", "printed", "jobs", "partitions"} <= cls.capabilities
    assert expand_source({"source": "slurmrestd_sshare:/run/slurmrestd.sock"}) == {
        "source": "slurmrestd_sshare", "slurmrestd": "/run/slurmrestd.sock"}
    src = registry.make("slurmrestd_sshare", "/run/slurmrestd.sock")
    assert src.is_live() and src.describe() == "slurmrestd_sshare:/run/slurmrestd.sock"


def test_whatif_says_a_rest_job_has_no_priority_parts(tmp_path: Path) -> None:
    snap, _ = _combined(FIXTURES / "slurm" / "live" / "fair_tree")
    plan = tmp_path / "plan.toml"
    plan.write_text('horizon = "2-0"\nstep = "60"\npending = ["8"]\n')
    with pytest.raises(InputError, match=r"job 8 has no priority parts in the source \(only its total, 10000\)"):
        run_scenario(load_scenario(plan), snap, source="plan.toml")


def test_cost_per_session_and_where_it_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import build_parser, main
    from tui.sources.rest_sshare import per_minute
    from tui.sources.slurm_cli import Cadence

    # jobs every 30 s = 2/min; associations + partitions every 600 s = 0.1/min each;
    # sshare + assoc_mgr per 60 s calc period = 2/min; config every 600 s = 0.1/min
    assert per_minute(Cadence(30.0, 60.0), with_sshare=False) == pytest.approx({"slurmctld": 2.1, "slurmdbd": 0.1})
    assert per_minute(Cadence(30.0, 60.0)) == pytest.approx({"slurmctld": 4.2, "slurmdbd": 0.1})
    assert "--slurmrestd-sshare SOCKET|URL" in build_parser().format_help()
    assert main(["info"]) == 0
    assert "--slurmrestd-sshare adds sshare and assoc_mgr once per PriorityCalcPeriod" in capsys.readouterr().out


def test_a_dead_slurmrestd_between_tree_reads_is_an_error_and_a_refused_job_list_a_warning() -> None:
    folder = FIXTURES / "slurm" / "live" / "fair_tree"
    good = _transport(folder)
    state = {"jobs": "ok"}

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/jobs") and state["jobs"] == "refused":
            return httpx.Response(403, text="Forbidden")
        if request.url.path.endswith("/jobs") and state["jobs"] == "dead":
            raise httpx.ConnectError("connection refused", request=request)
        return good.handle_request(request)

    now = [0.0]
    live = rest.LiveRest(socket="/unused", transport=httpx.MockTransport(handle), sleep=lambda s: None,
                         retries=0, clock=lambda: now[0])
    assert len(live.read().snapshot.jobs) == 7
    now[0] = 30.0
    state["jobs"] = "refused"
    snap = live.read().snapshot
    assert snap.jobs == () and any(w.startswith("jobs unknown: slurmrestd /slurm/v0.0.38/jobs: HTTP 403")
                                   for w in snap.warnings)
    state["jobs"] = "ok"
    snap = live.read().snapshot
    assert len(snap.jobs) == 7 and not any(w.startswith("jobs unknown") for w in snap.warnings)
    state["jobs"] = "dead"
    with pytest.raises(SourceUnavailable, match="cannot connect"):
        live.read()
