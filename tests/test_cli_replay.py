"""``fairtop replay``: the command line (flags, outputs, errors) on real 22.05 captures."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.conftest import FIXTURES
from tui.cli import main

CAPTURE = str(FIXTURES / "slurm" / "deep4" / "fair_tree")
CLASSIC = str(FIXTURES / "slurm" / "nested_parent" / "classic")
HL1H = str(FIXTURES / "slurm" / "replay" / "hl1h")  # docs/admin/replay.md's worked example


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("capture", [CAPTURE, CLASSIC, HL1H])
def test_own_policy_json_is_the_report(capsys, capture):
    _, report, _ = run(capsys, "report", "--from", capture, "--format", "json")
    code, out, _ = run(capsys, "replay", "--from", capture, "--format", "json")
    assert code == 0 and out == report and len(json.loads(out)) >= 8


def test_the_engine_on_the_replayed_usage_is_the_report_to_its_six_decimals(capsys):
    """The same policy by a roundabout way (a switch at the window's end): the engine's numbers,
    not sshare's text, and still equal."""
    _, report, _ = run(capsys, "report", "--from", CAPTURE, "--format", "json")
    code, out, _ = run(capsys, "replay", "--from", CAPTURE, "--format", "json", "--half-life", "14-0",
                       "--switch-at", "2026-11-21T18:37:42+00:00")
    assert code == 0
    by = {(r["account"], r["user"]): r for r in json.loads(report)}
    for row in json.loads(out):
        want = by[(row["account"], row["user"])]
        assert abs(row["raw_usage"] - want["raw_usage"]) <= 1, row
        assert row["fairshare"] == want["fairshare"] and row["rank"] == want["rank"], row


def test_a_time_without_an_offset_is_on_the_captures_clock(capsys, monkeypatch):
    """The capture says its zone (UTC): '--switch-at 2026-11-21T18:37:42' is 18:37:42 UTC for a
    reader in Berlin too, as sacct printed the jobs' times."""
    import time

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        args = ("replay", "--from", CAPTURE, "--format", "json", "--half-life", "14-0", "--switch-at")
        _, given, _ = run(capsys, *args, "2026-11-21T18:37:42+00:00")
        code, naive, _ = run(capsys, *args, "2026-11-21T18:37:42")
        _, berlin, _ = run(capsys, *args, "2026-11-21T18:37:42+01:00")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert code == 0 and naive == given != berlin


def test_shorter_half_life_table_and_csv(capsys):
    code, out, _ = run(capsys, "replay", "--from", CAPTURE, "--half-life", "60", "--algorithm", "classic")
    assert code == 0
    assert out.startswith("# replay of 13 job run(s) from ")
    assert "half-life 7-00:00:00 -> 0-01:00:00; classic, dampening 1" in out.splitlines()[0]
    code, out, _ = run(capsys, "replay", "--from", CAPTURE, "--half-life", "60", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["account", "user", "raw_usage", "raw_usage_replayed", "fairshare", "fairshare_replayed",
                             "rank", "rank_replayed", "move", "rank_move"]
    d1 = next(r for r in rows if r["user"] == "d1")
    # its jobs ran in the last ~25 minutes: at a 1-hour half-life they keep 75-100 % of it, not ~99.9 %
    assert int(d1["raw_usage"]) == 9998567 and 7_500_000 < int(d1["raw_usage_replayed"]) < 9_900_000


def test_shares_file(capsys, tmp_path):
    shares = tmp_path / "shares.txt"
    shares.write_text("# d1 (the heaviest user of asic) gets many more shares\nasic/d1 100\n")
    code, out, _ = run(capsys, "replay", "--from", CAPTURE, "--shares", str(shares), "--format", "csv")
    assert code == 0
    d1 = next(r for r in csv.DictReader(io.StringIO(out)) if r["user"] == "d1")
    assert float(d1["fairshare_replayed"]) > float(d1["fairshare"]) and int(d1["rank_move"]) > 0
    assert d1["raw_usage"] == d1["raw_usage_replayed"]


@pytest.mark.parametrize("argv, message", [
    (["--half-life", "7x"], "--half-life: not a Slurm time '7x'"),
    (["--calc-period", "0"], "--calc-period: must be a finite time > 0"),
    (["--reset-period", "sometimes"], "--reset-period: one of NONE, DAILY"),
    (["--damping", "0"], "--damping: must be a number > 0"),
    (["--billing", "burn"], "--billing: expected NAME=VALUE"),
    (["--billing", "burn=CPU"], "--billing: burn: TRESBillingWeights entry 'CPU'"),
    (["--qos-usage-factor", "normal=x"], "--qos-usage-factor: normal: a number >= 0"),
    (["--days", "0"], "--days: a number of days from 0 to 3660"),
    (["--at", "yesterday"], "--at: not an ISO date-time"),
    (["--at", "2030-01-01T00:00:00+00:00"], "is after the snapshot"),
    (["--switch-at", "2020-01-01T00:00:00+00:00"], "is outside the replayed window"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "replay", "--from", CAPTURE, *argv)
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert message in last, err


def test_unknown_association_in_shares(capsys, tmp_path):
    shares = tmp_path / "s.txt"
    shares.write_text("asic/nobody 3\n")
    code, _, err = run(capsys, "replay", "--from", CAPTURE, "--shares", str(shares))
    assert code == 2 and f"{shares}:1: no association 'asic/nobody'" in err


def test_a_normal_users_view_under_private_data_is_refused_in_one_line(capsys):
    code, out, err = run(capsys, "replay", "--from", str(FIXTURES / "slurm" / "private" / "la"))
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1] == (
        "fairtop: fairtop replay: needs every job and every association's usage, and "
        "PrivateData=accounts,jobs,usage,users shows you your own only: ask an admin to run it")


def test_live_replay_asks_sacct_once(capsys, monkeypatch):
    """Live: one sshare snapshot, then ONE sacct for the whole window (never per job)."""
    from tui.sources import sacct, slurm_cli
    from tui.sources.saved import load_folder

    snap = load_folder(CAPTURE)
    jobs, last = sacct.load_saved_history(CAPTURE)
    calls = []
    monkeypatch.setattr(slurm_cli, "snapshot_at_cycle", lambda on="": (snap, last))
    cols = sacct.load_saved_columns(CAPTURE)
    monkeypatch.setattr(sacct, "live_columns", lambda since, cluster="", timeout=60.0: calls.append(since) or cols)
    code, out, _ = run(capsys, "replay", "--slurm", "--days", "2", "--half-life", "1-0", "--format", "csv")
    assert code == 0 and len(calls) == 1 and len(out.splitlines()) == 1 + snap.tree.size - 1


def test_the_docs_worked_example_is_what_the_command_prints(capsys, monkeypatch):
    import shlex

    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    page = (ROOT / "docs" / "admin" / "replay.md").read_text()
    blocks = [b.split("```", 1)[0] for b in page.split("```console\n")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        command, *shown = block.rstrip("\n").splitlines()
        code, out, _ = run(capsys, *shlex.split(command.removeprefix("$ fairtop ")))
        assert code == 0 and out.splitlines() == shown


def test_ten_minute_half_life_on_the_sandbox_capture(capsys):
    """Oldest usage falls most: alice and carol ran first (-22 %, -24 %), bob and dave 200 s later."""
    code, out, _ = run(capsys, "replay", "--from", HL1H, "--half-life", "10", "--format", "csv")
    assert code == 0
    drop = {r["user"]: 1 - int(r["raw_usage_replayed"]) / int(r["raw_usage"])
            for r in csv.DictReader(io.StringIO(out)) if r["user"] and int(r["raw_usage"])}
    assert 0.20 < drop["alice"] < 0.25 and 0.20 < drop["carol"] < 0.26
    assert 0.09 < drop["bob"] < 0.13 and 0.13 < drop["dave"] < 0.17


RECONFIGURE = FIXTURES / "slurm-26.05" / "ctld_log" / "reconfigure_2605"


def test_replay_and_history_say_they_ran_on_the_logged_cycles(capsys):
    """A 26.05 capture with slurmctld's saved cycles (a reconfigure re-exec'd it mid-job): replay's
    head and history's check say so, and history's tolerance is 1e-6 relative + 1 (alice 1,155, not
    one period's decay, 13,258,493) while every association still agrees."""
    code, out, _ = run(capsys, "replay", "--from", str(RECONFIGURE), "--half-life", "30")
    assert code == 0
    assert out.splitlines()[1] == ("# cycles: slurmctld's logged decay cycles (8 in the window): the own policy's "
                                   "RawUsage within 1e-6 relative + 1 of sshare's")
    code, out, err = run(capsys, "replay", "--from", str(RECONFIGURE), "--format", "csv")
    assert code == 0 and "fairtop: cycles: slurmctld's logged decay cycles (8 in the window)" in err
    code, out, _ = run(capsys, "history", "--from", str(RECONFIGURE))
    assert code == 0 and "on slurmctld's logged cycles to 2026-11-28T06:56:54+00:00" in out
    alice = next(line for line in out.splitlines() if line.startswith("physics/alice "))
    assert alice.split()[1:3] == ["1,154,452,899", "1,154,452,899"] and alice.split()[-2:] == ["1,155", "agrees"]
    assert "every association agrees" in out
