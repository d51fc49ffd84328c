"""``fairtop whatif SCENARIO.toml``: the projection's command-line contract (issue 9)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.analysis.test_scenario import FIGURE3, figure3_minimum
from tests.conftest import FIXTURES
from tui.cli import main

DEEP4 = FIXTURES / "slurm" / "deep4" / "fair_tree"
NOW = "2026-11-22T00:00:00+00:00"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fig3(tmp_path):
    p = tmp_path / "figure3.toml"
    p.write_text(FIGURE3)
    return p


def test_standalone_json_contract(capsys, fig3) -> None:
    code, out, err = run(capsys, "whatif", str(fig3), "--format", "json", "--now", NOW)
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["t_hours"][:3] == [0.0, 1.0, 2.0] and d["t_hours"][-1] == 70 * 24 and len(d["t_hours"]) == 70 * 24 + 1
    [s] = d["series"]
    assert (s["account"], s["user"]) == ("", "")
    assert len(s["raw_usage"]) == len(s["fairshare"]) == len(d["t_hours"])
    assert min(s["fairshare"]) == pytest.approx(figure3_minimum(), rel=1e-12)
    assert s["raw_usage"][0] == 0.0 and d["usage_unit"] == "core-hours" and d["law"] == "continuous"
    assert any("lowest 0.3486 on 2026-12-27 00:00" in a for a in d["answers"])


def test_slurm_capture_json_and_csv(capsys, tmp_path) -> None:
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "2-0"\nstep = "6:00:00"\n'
                 '[[jobs]]\nuser = "d2"\nbilling = 1000\nstart = "6:00:00"\nwalltime = "4:00:00"\n'
                 '[[jobs]]\nuser = "d6"\naccount = "compilers"\nbilling = 500\nwalltime = "1-0"\n')
    code, out, err = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--format", "json", "--now", NOW)
    assert code == 0, err
    d = json.loads(out)
    assert d["t_hours"] == [0.0, 6.0, 12.0, 18.0, 24.0, 30.0, 36.0, 42.0, 48.0]
    assert [(s["account"], s["user"]) for s in d["series"]] == [("asic", "d2"), ("compilers", "d6")]
    d2 = d["series"][0]
    assert d2["raw_usage"][0] == pytest.approx(8998731, abs=1) and d2["fairshare"][0] == 0.5 and d2["rank"][0] == 12
    assert d2["rank"][2] < 12 and set(d2) >= {"rank", "ahead", "level_fs"}
    code, out, _ = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--format", "csv", "--now", NOW)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 18 and rows[0]["user"] == "d2" and rows[0]["date"] == "2026-11-22T00:00"
    assert float(rows[0]["raw_usage"]) == pytest.approx(8998731, abs=1)
    code, out, _ = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--now", NOW)
    assert code == 0 and "asic/d2: fairshare 0.5000 now" in out and "rank 12 ->" in out


def test_sshare_source_defaults_to_the_file_algorithm(capsys, tmp_path) -> None:
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "1-0"\n[[jobs]]\nuser = "uGA1"\nbilling = 10\nwalltime = "2:00:00"\n')
    code, out, err = run(capsys, "whatif", str(p), "--sshare", str(FIXTURES / "sshare" / "test24_4_fair_tree.psv"),
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["algorithm"] == "fair_tree"


@pytest.mark.parametrize(("text", "message"), [
    ('horizon = "1-0"\n[[jobs]]\nwalltime = "soon"\n', "plan.toml:jobs[0].walltime: not a Slurm time 'soon'"),
    ('horizon = "1-0"\n[[jobs]]\ncpu = 4\n', "plan.toml:jobs[0].cpu: unknown key; did you mean 'cpus'?"),
    ('horizon = \n', "plan.toml: not valid TOML"),
    ('horizon = "1-0"\n', "plan.toml: no source and no [model] table"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, text, message) -> None:
    p = tmp_path / "plan.toml"
    p.write_text(text)
    code, out, err = run(capsys, "whatif", str(p))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"fairtop: {tmp_path}/{message}")


def test_unknown_user_on_a_capture_exits_2(capsys, tmp_path) -> None:
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "1-0"\n[[jobs]]\nuser = "zed"\n')
    code, _, err = run(capsys, "whatif", str(p), "--from", str(DEEP4))
    assert code == 2 and "plan.toml:jobs[0].user: no association of user 'zed'" in err


def test_missing_file_exits_2(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "whatif", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml" in err


def test_observed_pace_from_an_earlier_capture(capsys, tmp_path) -> None:
    # Two captures of the same sandbox run 72 s apart with nothing running: the observed pace
    # is nil, so the projection is plain decay.
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "1-0"\nstep = "6:00:00"\nothers = "observed"\n'
                 '[[jobs]]\nuser = "d2"\nbilling = 1000\nwalltime = "4:00:00"\n')
    base = FIXTURES / "slurm" / "deep4"
    code, out, err = run(capsys, "whatif", str(p), "--from", str(base / "classic"), "--since",
                         str(base / "fair_tree"), "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert any("keeps the pace seen since 2026-11-21 18:37" in a for a in d["answers"])
    code, _, err = run(capsys, "whatif", str(p), "--from", str(base / "classic"))
    assert code == 2 and "plan.toml:others: \"observed\" needs an earlier snapshot" in err


def test_observed_pace_on_the_demo_from_its_own_records(capsys, tmp_path) -> None:
    # The demo has a past (its History tab): without --since, "observed" measures everyone's pace
    # over the week before its last decay cycle, rebuilt from those records; the projection then
    # differs from plain decay.
    from datetime import datetime, timedelta

    p = tmp_path / "plan.toml"
    job = '[[jobs]]\nuser = "amwangi"\naccount = "astro_friedman_lab"\ncpus = 64\nwalltime = "2-00:00:00"\n'
    p.write_text('horizon = "7-0"\nstep = "6:00:00"\nothers = "observed"\n' + job)
    code, out, err = run(capsys, "whatif", str(p), "--demo", "--format", "json")
    assert code == 0, err
    observed = json.loads(out)
    [since] = [a for a in observed["answers"] if "keeps the pace seen since" in a]
    then = datetime.fromisoformat(since.rsplit("since ", 1)[1]).replace(tzinfo=None)
    now = datetime.fromisoformat(observed["now"]).replace(tzinfo=None)
    assert timedelta(days=7) <= now - then < timedelta(days=7, minutes=5)  # the demo's 5-minute cycles
    p.write_text('horizon = "7-0"\nstep = "6:00:00"\nothers = "decay"\nrunning = false\n' + job)
    code, out, err = run(capsys, "whatif", str(p), "--demo", "--format", "json")
    assert code == 0, err
    decay = json.loads(out)
    assert observed["series"][0]["level_fs"][-1] != decay["series"][0]["level_fs"][-1]


def test_a_job_the_capture_s_nodes_cannot_run(capsys, tmp_path) -> None:
    # deep4's slurm.conf: one node with CPUs=16, RealMemory=1024; its partitions are MaxTime=INFINITE.
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "1-0"\n[[jobs]]\nuser = "d2"\npartition = "burn"\ncpus = 17\nwalltime = "1:00:00"\n')
    code, out, err = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--now", NOW)
    assert code == 2 and out == ""
    assert f"{p}:jobs[0].cpus: 17 CPUs in all; partition 'burn' has 16" in err  # the totals speak first
    p.write_text('horizon = "1-0"\n[[jobs]]\nuser = "d2"\npartition = "burn"\ncpus = 4\nmem = "2G"\n')
    code, out, err = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--now", NOW)
    # no memory total in slurm.conf's partitions: the node check names the node's 1 GB
    assert code == 2 and f"{p}:jobs[0].mem: 2 GB of memory per node; the largest node in burn has 1" in err
    p.write_text('horizon = "1-0"\nstep = "12:00:00"\n[[jobs]]\nuser = "d2"\npartition = "burn"\ncpus = 16\n')
    code, out, err = run(capsys, "whatif", str(p), "--from", str(DEEP4), "--now", NOW, "--format", "json")
    assert code == 0, err
    s = json.loads(out)["series"][0]
    assert s["balance_note"] == "balance unknown: the source has no allocations and no GrpTRESMins budgets"
    assert len(s["fairshare_before"]) == len(s["priority"]) == 3


def test_the_captures_warnings_go_to_stderr(capsys, tmp_path) -> None:
    """A capture without scontrol_show_partition.txt: the warning on stderr, stdout the JSON alone."""
    import shutil

    folder = tmp_path / "capture"
    shutil.copytree(DEEP4, folder)
    (folder / "scontrol_show_partition.txt").unlink(missing_ok=True)
    p = tmp_path / "plan.toml"
    p.write_text('horizon = "1-0"\nstep = "6:00:00"\n[[jobs]]\nuser = "d2"\nbilling = 1000\nwalltime = "4:00:00"\n')
    code, out, err = run(capsys, "whatif", str(p), "--from", str(folder), "--format", "json", "--now", NOW)
    assert code == 0
    assert json.loads(out)["t_hours"] == [0.0, 6.0, 12.0, 18.0, 24.0]
    assert "fairtop: warning: scontrol_show_partition.txt not saved" in err
