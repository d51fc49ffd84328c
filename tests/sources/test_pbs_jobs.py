"""PBS's queue (``qstat -f -F json``) -> jobs, and their comments in words, on a real OpenPBS's output
(tests/fixtures/pbs_qstat: the PBS server sandbox's, with a running, a queued, a held and a
never-runnable job)."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.analysis.jobs import explain_pending
from tui.analysis.jobs.pbs_comments import describe_pbs
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.sources.errors import InputError
from tui.sources.pbs_folder import load_pbs_folder
from tui.sources.pbs_jobs import QSTAT_FILE, jobs_from_qstat_json

QSTAT = FIXTURES / "pbs_qstat"


def printed(text: str) -> dict[str, dict[str, str]]:
    """``qstat -f``'s text: job id -> attribute -> value (continuation lines, a tab first, joined)."""
    jobs: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if line.startswith("Job Id: "):
            current = jobs.setdefault(line[len("Job Id: "):].strip(), {})
        elif line.startswith("\t") and key:
            current[key] += line[1:]
        elif " = " in line:
            key, _, value = line.lstrip().partition(" = ")  # a trailing space before a wrap is the value's
            current[key] = value
    return jobs


def test_each_jobs_comment_and_estimate_are_qstats() -> None:
    jobs = {j.job_id: j for j in jobs_from_qstat_json((QSTAT / "qstat_f.json").read_bytes())}
    text = printed((QSTAT / "qstat_f.txt").read_text())
    assert set(jobs) == set(text) == {"0.fairtop-pbs", "1.fairtop-pbs", "2.fairtop-pbs", "3.fairtop-pbs"}
    assert jobs["0.fairtop-pbs"].state == "RUNNING" and jobs["0.fairtop-pbs"].reason is None
    for job_id in ("1.fairtop-pbs", "2.fairtop-pbs", "3.fairtop-pbs"):
        job = jobs[job_id]
        assert job.state == "PENDING" and job.reason == text[job_id]["comment"], job_id
        est = text[job_id].get("estimated.start_time")
        assert (job.start_time.strftime("%a %b %d %H:%M:%S %Y") if job.start_time else None) == est, job_id
    queued = jobs["1.fairtop-pbs"]
    assert (queued.user, queued.partition, queued.tres["cpu"], queued.time_limit_s) == ("pbsu2", "workq", 2, 300)
    assert queued.sched_nodes == text["1.fairtop-pbs"]["estimated.exec_vnode"] == "(fairtop-pbs:ncpus=2)"
    assert jobs["3.fairtop-pbs"].reason == "Can Never Run: Insufficient amount of resource: ncpus (R: 4 A: 2 T: 2)"


def test_known_comments_in_words_and_others_as_printed() -> None:
    m = describe_pbs("Can Never Run: Insufficient amount of resource: ncpus (R: 4 A: 2 T: 2)")
    assert m.kind == "invalid" and m.sentence.endswith("it asks for 4 ncpus; 2 available now, 2 in total")
    m = describe_pbs("Not Running: Insufficient amount of resource: ncpus (R: 2 A: 0 T: 2)")
    assert (m.kind, m.sentence) == ("queue", "it asks for 2 ncpus; 0 available now, 2 in total")
    assert describe_pbs("Not Running: Not enough free nodes available").kind == "queue"
    held = describe_pbs("Job held by pbsu3 on Sat Nov 28 06:40:59 2026")
    assert (held.kind, held.sentence) == ("hold", "pbsu3 held it (qhold) on Sat Nov 28 06:40:59 2026")
    limit = describe_pbs("Not Running: Queue workq job limit reached for user pbsu1")
    assert limit.sentence == "user pbsu1 already runs as many jobs as the queue workq allows (max_run)"
    odd = describe_pbs("Something PBS never said")
    assert odd.kind == "unknown" and odd.code == "Something PBS never said"


def test_a_capture_with_qstat_explains_the_users_jobs(tmp_path: Path) -> None:
    # the sandbox's tree (tests/pbs_sandbox/up.sh), usage 1 each
    (tmp_path / "resource_group").write_text("physics 100 root 60\nchem 200 root 40\npbsu1 1001 physics 30\n"
                                             "pbsu2 1002 physics 10\npbsu3 1003 chem 20\npbsu4 1004 chem 20\n")
    (tmp_path / "usage.txt").write_text("pbsu1 1\npbsu2 1\npbsu3 1\npbsu4 1\n")
    shutil.copy(QSTAT / "qstat_f.json", tmp_path / QSTAT_FILE)
    snap = load_pbs_folder(tmp_path)
    assert snap.capabilities is not None and "jobs" in snap.capabilities and len(snap.jobs) == 4
    (queued,) = explain_pending(build_standing(snap, "pbsu2"))
    assert queued.why == ("PBS says: 'Not Running: Not enough free nodes available': no node has the free "
                          "resources it asks for now.")
    at = datetime(2026, 11, 28, 6, 45, 59).astimezone()
    assert queued.estimate.startswith(f"Start estimate (PBS's, qstat -f estimated.start_time): {at:%Y-%m-%d %H:%M:%S} "
                                      "on (fairtop-pbs:ncpus=2) (read ")
    (held,) = explain_pending(build_standing(snap, "pbsu3"))
    assert held.moves == ("releasing it: qrls 2.fairtop-pbs",)
    assert held.estimate.startswith("Start estimate: unknown: PBS printed no estimated.start_time")
    line = user_summary(build_standing(snap, "pbsu2")).text
    assert line.endswith(f"1 pending job: Not enough free nodes available; the scheduler estimates {at:%H:%M}")


def test_a_broken_qstat_file_is_refused_naming_it() -> None:
    with pytest.raises(InputError, match="not JSON"):
        jobs_from_qstat_json(b"{", "x/qstat_f.json")
    assert jobs_from_qstat_json(b'{"timestamp": 1, "pbs_server": "s"}') == []  # no jobs: qstat prints no "Jobs"
