"""Parsers of saved Slurm output: real 22.05.8 samples, clear errors, and fuzzing (only InputError)."""

from __future__ import annotations

import random
from datetime import datetime
import re

import pytest
from _samples import (ALL, ASSOC_MGR, ASSOC_MGR_LIMITS, CONFIG, PARTITIONS, SACCTMGR, SPRIO, SQUEUE, SQUEUE_O,
                      SQUEUE_WAITING, SSHARE)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.sources import slurm_text as t
from tui.sources.errors import InputError
from tui.sources.sshare import parse_sshare

PARSERS = {
    "SSHARE": parse_sshare,
    "CONFIG": t.parse_config,
    "PARTITIONS": t.parse_partitions,
    "SACCTMGR": t.parse_sacctmgr_assoc,
    "ASSOC_MGR": t.parse_assoc_mgr,
    "ASSOC_MGR_LIMITS": t.parse_assoc_mgr,
    "SPRIO": t.parse_sprio,
    "SQUEUE": t.parse_squeue,
    "SQUEUE_O": t.parse_squeue,
    "SQUEUE_WAITING": t.parse_squeue,
}


# --- scontrol show config ---------------------------------------------------------------------


def test_config_real() -> None:
    cfg = t.parse_config(CONFIG, "cfg")
    s = cfg.settings
    assert cfg.cluster == "sandbox"
    assert s.algorithm == "classic" and s.flags == {"NO_FAIR_TREE"} and s.dampening == 1
    assert s.decay_half_life_s == 7 * 86400 and s.calc_period_s == 60 and s.max_age_s == 7 * 86400
    assert s.usage_reset_period == "NONE" and s.favor_small is False
    assert s.weight_age == 1000 and s.weight_fairshare == 10000 and s.weight_tres == {}
    assert cfg.values["SLURM_VERSION"] == "22.05.8"


@pytest.mark.parametrize(("flags", "algorithm"), [
    ("", "fair_tree"), ("NO_FAIR_TREE", "classic"), ("DEPTH_OBLIVIOUS,MAX_TRES", "classic"),
    ("MAX_TRES,CALCULATE_RUNNING", "fair_tree"), ("FAIR_TREE", "fair_tree"),
])
def test_config_algorithm_from_flags(flags: str, algorithm: str) -> None:
    text = f"PriorityType            = priority/multifactor\nPriorityFlags           = {flags}\n"
    s = t.parse_config(text).settings
    assert s.algorithm == algorithm
    assert "FAIR_TREE" not in s.flags
    assert set(s.flags) == {f for f in flags.split(",") if f and f != "FAIR_TREE"}


def test_config_weights_damping_and_basic() -> None:
    text = ("PriorityType = priority/basic\nFairShareDampeningFactor = 5\nPriorityFavorSmall = Yes\n"
            "PriorityWeightTRES = CPU=1000,Mem=2000G,GRES/gpu=3000\nPriorityDecayHalfLife = 00:00:00\n")
    cfg = t.parse_config(text)
    assert cfg.settings.dampening == 5 and cfg.settings.favor_small
    assert cfg.settings.weight_tres == {"cpu": 1000.0, "mem": 2000.0 / 1024, "gres/gpu": 3000.0}
    assert cfg.settings.decay_half_life_s == 0
    assert "priority/basic" in cfg.warnings[0]


@pytest.mark.parametrize(("text", "message", "line"), [
    ("", "no PriorityType", None),
    ("PriorityType = priority/multifactor\nPriorityDecayHalfLife = soon\n", "PriorityDecayHalfLife", 2),
    ("PriorityType = priority/multifactor\nPriorityFlags = FAIRTREE\n", "unknown PriorityFlags", 2),
    ("PriorityType = priority/multifactor\nthis is not config\n", "not 'Key = value'", 2),
    ("PriorityType = x\nFairShareDampeningFactor = 0\n", ">= 1", 2),
    ("PriorityType = x\nPriorityWeightAge = 99999999999999999999999\n", "whole number", 2),
])
def test_config_errors(text: str, message: str, line: int | None) -> None:
    with pytest.raises(InputError, match=message) as exc:
        t.parse_config(text, "cfg.txt")
    assert exc.value.line == line and exc.value.source == "cfg.txt"


# --- scontrol show partition ------------------------------------------------------------------


def test_partitions_real() -> None:
    parts = {p.name: p for p in t.parse_partitions(PARTITIONS)}
    assert set(parts) == {"debug", "burn", "parked"}
    assert parts["debug"].billing_weights == {} and parts["burn"].billing_weights == {"cpu": 1e6}
    assert parts["burn"].total_cpus == 16 and parts["burn"].total_nodes == 1
    assert parts["burn"].priority_job_factor == 1
    assert parts["burn"].tres_totals == {"cpu": 16, "mem": 1024, "node": 1, "billing": 16e6}


def test_partitions_errors() -> None:
    assert t.parse_partitions("No partitions in the system\n") == []
    with pytest.raises(InputError, match="PartitionName= first"):
        t.parse_partitions("TotalCPUs=4\n")
    with pytest.raises(InputError, match="Key=value") as exc:
        t.parse_partitions("PartitionName=a\n   junk\n")
    assert exc.value.line == 2
    with pytest.raises(InputError, match="TRESBillingWeights"):
        t.parse_partitions("PartitionName=a TRESBillingWeights=CPU=x\n")


# --- sacctmgr / assoc_mgr ---------------------------------------------------------------------


def test_sacctmgr_real() -> None:
    recs = t.parse_sacctmgr_assoc(SACCTMGR)
    assert [(r.account, r.user, r.lft) for r in recs[:3]] == [("root", "", 1), ("root", "root", 78), ("root", "u1", 4)]
    assert recs[4].parent_name == "root" and recs[4].shares == "40"


def test_sacctmgr_errors() -> None:
    headerless = "\n".join(SACCTMGR.splitlines()[1:])
    with pytest.raises(InputError, match="no column"):
        t.parse_sacctmgr_assoc(headerless)  # the -n capture: no header, no LFT
    with pytest.raises(InputError, match="LFT 1 also on line 2"):
        t.parse_sacctmgr_assoc("Account|User|LFT\nroot||1\nroot|x|1\n")
    with pytest.raises(InputError, match="fields") as exc:
        t.parse_sacctmgr_assoc("Account|User|LFT\nroot||1|\n")
    assert exc.value.line == 2


def test_sacctmgr_grp_tres_mins() -> None:
    recs = t.parse_sacctmgr_assoc("Account|User|LFT|GrpTRESMins\nphys|bob|3|billing=500000,cpu=10\n")
    assert recs[0].grp_tres_mins == {"billing": 500000.0, "cpu": 10.0}


def test_assoc_mgr_real() -> None:
    recs = t.parse_assoc_mgr(ASSOC_MGR)
    assert recs[0].account == "root" and recs[0].user == "" and recs[0].lft == 1
    assert recs[1].user == "root" and recs[1].usage_raw == "0.00"
    assert float(recs[0].usage_raw) > 0 and "." in recs[0].usage_raw


def test_assoc_mgr_limits_real() -> None:
    user, account = t.parse_assoc_mgr(ASSOC_MGR_LIMITS)
    assert (user.user, user.counts["MaxJobs"], user.counts["GrpJobs"]) == ("wqc", (1, 1), (None, 1))
    assert "MaxSubmitJobs" not in user.counts  # printed blank: not set
    assert (account.user, account.grp_tres["cpu"], account.grp_tres["node"]) == ("", (1, 0), (None, 0))
    with pytest.raises(InputError, match="MaxJobs: expected LIMIT"):
        t.parse_assoc_mgr(ASSOC_MGR_LIMITS.replace("MaxJobs=1(1)", "MaxJobs=one"))


# --- sprio / squeue ---------------------------------------------------------------------------


def test_sprio_real() -> None:
    rows = t.parse_sprio(SPRIO)
    assert len(rows) == 3
    r = rows[0]
    assert (r.job_id, r.partition, r.user) == ("18", "parked", "uaa1")
    assert set(r.factors) == {"SITE", "AGE", "ASSOC", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS", "NICE"}
    assert r.tres == {}


def test_sprio_tres_and_errors() -> None:
    text = ("          JOBID PARTITION     USER   PRIORITY        AGE  FAIRSHARE                 TRES\n"
            "             18 burn          bob        340        100        200         cpu=40,mem=2\n")
    (row,) = t.parse_sprio(text)
    assert row.tres == {"cpu": 40.0, "mem": 2.0} and row.priority == 340 and row.factors["AGE"] == 100
    with pytest.raises(InputError, match="JOBID"):
        t.parse_sprio("JOB PARTITION\n1 a\n")
    with pytest.raises(InputError, match="AGE must be a number") as exc:
        t.parse_sprio(text.replace(" 100 ", " 1x0 "))
    assert exc.value.line == 2


def test_squeue_default_real() -> None:
    jobs = t.parse_squeue(SQUEUE)
    assert [(j.job_id, j.user, j.partition, j.state) for j in jobs[:2]] == [
        ("39", "u1", "parked", "PENDING"), ("35", "uf2", "parked", "PENDING")]
    assert jobs[0].tres == {"node": 1.0} and jobs[0].account == ""


def test_squeue_default_name_with_spaces() -> None:
    text = ("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 7      burn  a b c d    alice  R       0:05      1 node1\n")
    (job,) = t.parse_squeue(text)
    assert (job.job_id, job.user, job.state) == ("7", "alice", "RUNNING")


def test_squeue_pipe_real() -> None:
    jobs = t.parse_squeue(SQUEUE_O)
    j = jobs[0]
    assert (j.job_id, j.user, j.account, j.state, j.time_limit_s, j.priority) == ("39", "u1", "root", "PENDING",
                                                                                  60, 10000)
    assert j.tres == {"cpu": 1, "mem": 1024, "node": 1, "billing": 1e6}
    assert j.submit_time is not None and j.start_time is None


def test_squeue_why_it_waits_real() -> None:
    jobs = {j.job_id: j for j in t.parse_squeue(SQUEUE_WAITING)}
    j = jobs["11"]
    assert (j.reason, j.sched_nodes, j.nice, j.qos, j.dependency, j.req_nodes) == (
        "Resources", "sandbox-node", 1000, "normal", None, None)
    assert j.start_time == datetime(2026, 11, 28, 2, 56, 36).astimezone()  # backfill's estimate, as printed
    assert jobs["16"].reason == ("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher "
                                 "priority partitions")  # the controller's words, commas and all
    assert (jobs["16"].sched_nodes, jobs["16"].start_time) == (None, None)
    assert jobs["14"].eligible_time == jobs["14"].start_time == datetime(2026, 11, 28, 3, 46, 33).astimezone()
    assert (jobs["12"].reason, jobs["12"].priority, jobs["12"].eligible_time) == ("JobHeldUser", 0, None)
    assert (jobs["7"].state, jobs["7"].reason, jobs["7"].qos) == ("RUNNING", "None", "one")
    # the columns fairtop asked before these: unknown, not made up
    old = t.parse_squeue(SQUEUE_O)[0]
    assert (old.reason, old.sched_nodes, old.nice, old.qos, old.eligible_time) == (None, None, None, None, None)


def test_squeue_default_layout_gives_the_reason_of_pending_jobs() -> None:
    assert [j.reason for j in t.parse_squeue(SQUEUE)] == ["PartitionDown"] * 3
    text = ("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 7      burn     wrap    alice  R       0:05      1 node1\n")
    assert t.parse_squeue(text)[0].reason is None  # a running job's cell is its nodes


def test_squeue_nice_may_be_negative() -> None:
    text = SQUEUE_WAITING.replace("|1000|normal|", "|-20|normal|")
    assert [j.nice for j in t.parse_squeue(text) if j.job_id == "11"] == [-20]
    with pytest.raises(InputError, match="NICE must be a whole number"):
        t.parse_squeue(SQUEUE_WAITING.replace("|1000|normal|", "|x|normal|"))


def test_squeue_errors() -> None:
    with pytest.raises(InputError, match="no ST or STATE"):
        t.parse_squeue("JOBID USER\n1 a\n")
    with pytest.raises(InputError, match="unknown job state") as exc:
        t.parse_squeue(SQUEUE_O.replace("PENDING", "DREAMING", 1))
    assert exc.value.line == 2
    with pytest.raises(InputError, match="not a time"):
        t.parse_squeue(SQUEUE_O.replace("2026-", "20x6-", 1))


def test_tres_counts() -> None:
    assert t.parse_tres_counts("cpu=2,mem=1.5G,gres/gpu=1,bb/x=1T") == {
        "cpu": 2, "mem": 1536, "gres/gpu": 1, "bb/x": 1024**2}
    assert t.parse_tres_counts("(null)") == {}
    with pytest.raises(InputError, match="NAME=COUNT"):
        t.parse_tres_counts("cpu")
    with pytest.raises(InputError, match="unit"):
        t.parse_tres_counts("cpu=1Q")


# --- fuzzing: only InputError may escape ------------------------------------------------------

JUNK = (["", "|", "||", " ", "=", "==", "\t", "\n", "\r\n", "9" * 400, "1e999", "-1",
                         "nan", "inf", "²", "١٢", "1_0", "(null)", "N/A", "parent", "root", "PENDING",
                         "cpu=", "=1", "a=b=c", "\x00", "\ufeff", "é", "7-", "-7-0", "99:99:99:99",
                         "ClusterName=x", "PartitionName=", "JOBID", "Account|User|LFT", "0x10", "+1",
                         "1e308", "18446744073709551616", "4294967295", "9223372036854775808", "UNLIMITED",
                         "Infinity", "-0", ".5", "5.", "1,5", "٣.٥", "𝟙", "0-0", "1:2:3:4"])
_JUNK = st.sampled_from(JUNK)


def _mutate(text: str, rnd: random.Random, ops: int) -> str:
    lines = text.split("\n")
    for _ in range(ops):
        op = rnd.randrange(8)
        i = rnd.randrange(len(lines)) if lines else 0
        if not lines:
            lines = [""]
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rnd.randrange(len(lines))])
        elif op == 2:  # swap two lines (cycles, children before parents)
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:  # reorder or drop columns of one line (header or row)
            sep = "|" if "|" in lines[i] else " "
            cells = lines[i].split(sep)
            rnd.shuffle(cells)
            lines[i] = sep.join(cells[: rnd.randrange(len(cells) + 1)])
        elif op == 4:  # indentation error
            lines[i] = (" " * rnd.randrange(5)) + lines[i].lstrip()
        elif op == 5:  # truncate the line
            lines[i] = lines[i][: rnd.randrange(len(lines[i]) + 1)]
        elif op == 6:  # replace a number by a huge or odd one
            words = lines[i].replace("|", " | ").split(" ")
            k = rnd.randrange(len(words))
            words[k] = rnd.choice(["9" * 30, "1e400", "-5", "0x10", "١", "1_000", "nan", "18446744073709551616"])
            lines[i] = " ".join(words).replace(" | ", "|")
        else:
            lines[i] = lines[i] + rnd.choice(["|", "=", " x", "|extra", "\t"])
    return "\n".join(lines)


def _only_input_error(parser, data) -> None:  # type: ignore[no-untyped-def]
    try:
        parser(data, "fuzz")
    except InputError as exc:
        assert str(exc).startswith("fuzz")


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), ops=st.integers(1, 6))
def test_fuzz_mutations(name: str, seed: int, ops: int) -> None:
    rnd = random.Random(seed)
    _only_input_error(PARSERS[name], _mutate(ALL[name], rnd, ops))


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fuzz_junk_and_bytes(name: str, data: st.DataObject) -> None:
    text = ALL[name]
    lines = text.split("\n")
    k = data.draw(st.integers(0, len(lines) - 1))
    junk = data.draw(st.lists(_JUNK, min_size=1, max_size=4))
    lines[k] = data.draw(st.sampled_from(["".join(junk), lines[k] + "".join(junk), "".join(junk) + lines[k]]))
    candidate = "\n".join(lines)
    _only_input_error(PARSERS[name], candidate)
    raw = candidate.encode()
    cut = data.draw(st.integers(0, len(raw)))
    _only_input_error(PARSERS[name], raw[:cut] + data.draw(st.binary(max_size=8)) + raw[cut:])


_CELL = re.compile(r"[^|\s=,/]+")


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_cell_with_every_junk(name: str) -> None:
    """Exhaustive: each cell of the real sample replaced by each junk token."""
    text = ALL[name]
    for m in _CELL.finditer(text):
        for new in JUNK:
            _only_input_error(PARSERS[name], text[: m.start()] + new + text[m.end():])


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fuzz_one_cell(name: str, data: st.DataObject) -> None:
    """Replace one cell (a run between separators) with junk, a huge or odd number, or any text."""
    text = ALL[name]
    spans = [m.span() for m in _CELL.finditer(text)]
    a, b = data.draw(st.sampled_from(spans))
    new = data.draw(_JUNK | st.text(max_size=6) | st.integers(-2**70, 2**70).map(str)
                    | st.floats(allow_nan=True).map(repr))
    _only_input_error(PARSERS[name], text[:a] + new + text[b:])


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=60, deadline=None)
@given(blob=st.binary(max_size=300) | st.text(max_size=300))
def test_fuzz_anything(name: str, blob: bytes | str) -> None:
    _only_input_error(PARSERS[name], blob)


def test_fuzz_reordered_columns_still_parse() -> None:
    """Header-driven: the same columns in another order give the same result."""
    rows = [line.split("|") for line in SACCTMGR.strip().splitlines()]
    perm = list(range(len(rows[0])))
    random.Random(3).shuffle(perm)
    shuffled = "\n".join("|".join(r[i] for i in perm) for r in rows) + "\n"
    assert t.parse_sacctmgr_assoc(shuffled) == t.parse_sacctmgr_assoc(SACCTMGR)
    srows = [line.split("|") for line in SSHARE.strip().splitlines()]
    sperm = list(range(len(srows[0])))
    random.Random(5).shuffle(sperm)
    table = parse_sshare("\n".join("|".join(r[i] for i in sperm) for r in srows))
    ref = parse_sshare(SSHARE)
    assert list(table.tree.account) == list(ref.tree.account)
    assert list(table.tree.parent) == list(ref.tree.parent)


def test_big_sshare_with_a_bad_last_cell_fails_fast() -> None:
    """The column-wise number checks must not backtrack: 100k rows, junk at the end."""
    import time

    rows = ["Account|User|RawShares|RawUsage", "root|||5"] + [f" root|u{i}|1|123456789012" for i in range(100_000)]
    text = "\n".join(rows) + "x\n"
    start = time.perf_counter()
    with pytest.raises(InputError, match="RawUsage must be a number") as exc:
        parse_sshare(text)
    assert exc.value.line == len(rows) and time.perf_counter() - start < 3
