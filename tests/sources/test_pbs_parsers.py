"""PBS resource_group and usage parsers: real inputs, every refusal, and fuzzing (only InputError)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.pbs_tree import file_records
from tui.formats import pbsfs
from tui.formats.pbsfs import COLUMNS, format_pbs_csv, format_pbs_table, pbs_rows
from tui.sources.errors import InputError
from tui.sources.pbs import parse_resource_group, read_pbs, tree_from_inputs
from tui.sources.pbs_usage import parse_usage

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pbs"
RG = FIX / "man_resource_group"
LISTING = (FIX / "man_pbsfs.txt").read_text()


def v2(records: list[tuple[bytes, float]], last_decay: int = 1_700_000_000, order: str = "<",
       version: float = 2.0) -> bytes:
    """A usage file as OpenPBS ``write_usage`` lays it out."""
    head = struct.pack(order + "9s7xd", b"PBS_MAG!", version) + struct.pack(order + "q", last_decay)
    return head + b"".join(struct.pack(order + "50s6xd", name, usage) for name, usage in records)


P1_BINARY = v2([(b"pbsuser1", 100.0), (b"pbsuser", 100.0), (b"pbsuser3", 1000.0)])


# --- resource_group ------------------------------------------------------------------------------

def test_resource_group_comments_tabs_and_line_numbers():
    entries = parse_resource_group(RG.read_bytes(), "rg")
    assert [(n, e.name, e.cresgroup, e.parent, e.shares) for n, e in entries] == [
        (3, "group1", 10, "root", 40), (4, "group2", 20, "root", 60), (7, "pbsuser", 11, "group1", 50),
        (8, "pbsuser1", 12, "group1", 50), (9, "pbsuser2", 21, "group2", 60), (10, "pbsuser3", 22, "group2", 40)]


def test_extra_fields_ignored_like_strtok():
    (_, e), = parse_resource_group(b"a 1 root 5 trailing words\n", "rg")
    assert (e.name, e.shares) == ("a", 5)


@pytest.mark.parametrize(("text", "line", "message"), [
    (b"a 1 root\n", 1, "missing field 'shares'"),
    (b"# c\na\n", 2, "missing field 'cgroup'"),
    (b"a x root 5\n", 1, "cgroup 'x' is not an integer"),
    (b"a 1 root 5.0\n", 1, "shares '5.0' is not an integer"),
    (b"a 1 root 0x10\n", 1, "shares '0x10' is not an integer"),
    (b"a 1 root 1_0\n", 1, "shares '1_0' is not an integer"),
    (b"a 1 root 5\r\n", 1, "Windows line ends"),
    (b"a 1 root 99999999999999999999\n", 1, "does not fit a 32-bit integer"),
    (b"a 1 root -3\n", 1, "shares -3 is negative"),
    (b"a 1 root 2000000000\nb 2 root 2000000000\n", 2, "add up past 2147483647"),
    (b"a 1 nobody 5\n", 1, "parent nobody of a is not defined"),
    (b"a 1 root 5\na 2 root 5\n", 2, "entity a is not unique (first on line 1)"),
    (b"unknown 2 root 5\n", 1, "entity unknown is not unique (unknown is built in)"),
    (b"TREEROOT 2 root 5\n", 1, "is not unique"),
    (b"a 1 b 5\nb 2 a 5\n", 1, "cycle: a -> b -> a"),
    (b"x 1 root 5\na 1 b 5\nb 2 c 5\nc 3 a 5\n", 2, "cycle: a -> b -> c -> a"),
    (b"a 1 a 5\n", 1, "cycle: a is its own parent"),
    (b"a 1 b 5\nb 2 root 5\n", 1, "defined only later, on line 2"),
    (b"a" * 300 + b" 1 root 5\n", 1, "longer than 255 bytes"),
    (b"ok 1 root 5\n\xff\xfe 2 root 1\n", 2, "not UTF-8 text (byte 0xff)"),
    (b"ok 1 root 5\nb\x00 2 root 1\n", 2, "NUL byte"),
    (b"a\x1b[31m 1 root 5\n", 1, "control character"),
])
def test_resource_group_errors_name_file_and_line(text, line, message):
    with pytest.raises(InputError) as err:
        parse_resource_group(text, "sched_priv/resource_group")
    assert err.value.source == "sched_priv/resource_group"
    assert err.value.line == line
    assert message in err.value.message


@pytest.mark.parametrize("text", [b"", b"\n \n", b"# only a comment\n* and another\n"])
def test_resource_group_empty(text):
    with pytest.raises(InputError, match="empty|no entities"):
        parse_resource_group(text, "rg")


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError) as err:
        read_pbs(tmp_path / "nope")
    assert err.value.source.endswith("nope")


# --- usage in its three shapes ------------------------------------------------------------------

@pytest.mark.parametrize("usage", [
    (FIX / "man_usage.txt").read_bytes(),
    LISTING.encode(),
    P1_BINARY,
    v2([(b"pbsuser1", 100.0), (b"pbsuser", 100.0), (b"pbsuser3", 1000.0)], order=">"),
])
def test_every_usage_shape_gives_the_man_page_listing(usage):
    tree = tree_from_inputs(parse_resource_group(RG.read_bytes(), "rg"), parse_usage(usage, "usage"))
    assert pbsfs.listing(tree) == LISTING


def test_binary_header_and_kind():
    u = parse_usage(P1_BINARY, "usage")
    assert (u.kind, u.last_decay, [(r.name, r.usage, r.line) for r in u.records]) == (
        "binary", 1_700_000_000, [("pbsuser1", 100.0, 1), ("pbsuser", 100.0, 2), ("pbsuser3", 1000.0, 3)])


def test_binary_round_trip_of_written_records():
    tree = read_pbs(RG, FIX / "man_usage.txt")
    data = v2([(n.encode(), u) for n, u in file_records(tree)], last_decay=0)
    again = tree_from_inputs(parse_resource_group(RG.read_bytes(), "rg"), parse_usage(data, "usage"))
    assert pbsfs.listing(again) == LISTING and again.last_decay == 0


@pytest.mark.parametrize(("data", "message"), [
    (b"PBS_MAG!\0" + b"\0" * 10, "header is truncated"),
    (v2([], version=3.0), "version 3.0 is not supported"),
    (v2([], last_decay=12345), "before 2000"),
    (P1_BINARY[:-5], "truncated record at byte 160"),
    (v2([(b"x" * 50, 1.0)]), "not NUL-terminated"),
    (v2([(b"bad/name", 1.0)]), "invalid entity name"),
    (v2([(b"a", -2.0)]), "not a number >= 0"),
    (v2([(b"a", float("nan"))]), "not a number >= 0"),
    (v2([(b"a", 2.0), (b"a", 3.0)]), "appears twice"),
])
def test_binary_errors(data, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        parse_usage(data, "usage")


def test_seed002_published_listing_as_input():
    """The paper's pbsfs listing (stylised blanks, unknown leaves L9-L11) read back as usage."""
    published = (FIX / "seed002_pbsfs_published.txt").read_text()
    tree = read_pbs(FIX / "seed002_resource_group", FIX / "seed002_pbsfs_published.txt", unknown_shares=10)
    assert tree.usage_res == "ncpus*pow(walltime,0.85)"
    assert [ln.split() for ln in pbsfs.listing(tree).splitlines()] == [ln.split() for ln in published.splitlines()]


def test_listing_keeps_rounded_internal_values():
    # a listing shows each node as it stood; internal rows are taken as printed, not re-summed
    text = LISTING.replace("Usage: 201 ", "Usage: 250 ")
    tree = tree_from_inputs(parse_resource_group(RG.read_bytes(), "rg"), parse_usage(text.encode(), "u"))
    assert dict(zip(tree.name, tree.usage))["group1"] == 250.0


@pytest.mark.parametrize(("text", "line", "message"), [
    (b"alice 10\nbob\n", 2, "expected 'entity usage', got 1 fields"),
    (b"alice ten\n", 1, "usage 'ten' is not a number"),
    (b"alice 1e999\n", 1, "out of range"),
    (b"alice inf\n", 1, "is not a number"),
    (b"alice nan\n", 1, "is not a number"),
    (b"alice -4\n", 1, "negative"),
    (b"ali/ce 4\n", 1, "invalid entity name"),
    (b"a" * 60 + b" 4\n", 1, "longer than 49"),
    (b"alice 1\n# x\nalice 2\n", 3, "appears twice (first on line 1)"),
    (b"alice 1\n\xc3\x28 2\n", 2, "not UTF-8"),
    (LISTING.replace("Usage: 1001", "Usage: lots").encode(), 3, "usage 'lots' is not a number"),
    (LISTING.replace("Perc: 60.000%", "Perc: 60.000").encode(), 3, "not a pbsfs line"),
])
def test_usage_text_errors(text, line, message):
    with pytest.raises(InputError) as err:
        parse_usage(text, "usage.txt")
    assert (err.value.line, message in err.value.message) == (line, True), err.value.message


def test_usage_sums_past_double_range():
    body = b"pbsuser 1e308\npbsuser1 1e308\n"
    with pytest.raises(InputError, match="add up past the largest double") as err:
        tree_from_inputs(parse_resource_group(RG.read_bytes(), "rg"), parse_usage(body, "usage.txt"))
    assert err.value.source == "usage.txt"


def test_version1_binary_is_refused_clearly():
    v1 = struct.pack("<9s7xd", b"pbsuser", 100.0)  # {char name[9]; double usage}, no header
    with pytest.raises(InputError, match="version-1 usage files are not supported"):
        parse_usage(v1, "usage")


@pytest.mark.parametrize("text", [b"", b"   \n", b"# nothing\n", b"Fairshare usage units are in: cput\n"])
def test_usage_empty(text):
    with pytest.raises(InputError):
        parse_usage(text, "usage")


# --- report rows ---------------------------------------------------------------------------------

def test_report_rows_seed002():
    rows = pbs_rows(read_pbs(FIX / "seed002_resource_group", FIX / "seed002_usage.txt", unknown_shares=10))
    assert all(tuple(r) == COLUMNS for r in rows)
    row = {r["name"]: r for r in rows}
    assert [r["name"] for r in rows][:4] == ["TREEROOT", "B4", "L8", "L7"]
    assert row["L5"] == {"name": "L5", "parent": "B3", "shares": 10, "percentage": 10.000001, "usage": 100.0,
                         "fairshare_tree_usage": 0.33375, "usage_per_perc": pytest.approx(1000, abs=1e-3),
                         "fairshare_factor": 0.098927}  # 2^-(0.33375/0.1) = 0.0989...
    assert (row["B2"]["fairshare_tree_usage"], row["B3"]["fairshare_tree_usage"]) == (0.500624, 0.438202)
    assert (row["L2"]["percentage"], row["L2"]["usage_per_perc"], row["L2"]["fairshare_factor"]) == (0.0, -1.0, 0.0)


def test_report_p1_table_and_csv():
    rows = pbs_rows(read_pbs(RG, FIX / "man_usage.txt"))
    assert {r["name"]: r["percentage"] for r in rows}["pbsuser3"] == 24.0
    csv_text = format_pbs_csv(rows)
    assert csv_text.splitlines()[0] == ",".join(COLUMNS)
    assert "pbsuser3,group2,40,24.0,1000.0,0.832973," in csv_text
    table = format_pbs_table(rows).splitlines()
    assert table[0].split() == ["Entity", "Shares", "Perc%", "Usage", "TreeUsage", "Usage/Perc", "Factor"]
    assert table[3].split() == ["pbsuser3", "40", "24.000000", "1000", "0.832973", "4167", "0.090201"]
    assert table[3].startswith("    pbsuser3")  # depth 2


# --- fuzzing: bad input only ever raises InputError ----------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GOOD_RG = RG.read_bytes()
NAMES = st.sampled_from(["a", "b", "c", "d", "root", "unknown", "TREEROOT", "x y", "é"])
FIELD = st.one_of(NAMES, st.integers(-2**70, 2**70).map(str), st.sampled_from(["", "1e3", "+4", "-0", "nan", "\t"]))


def _only_input_error(fn, *args):
    try:
        return fn(*args)
    except InputError as exc:
        assert exc.source and exc.message
        return None


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(data):
    _only_input_error(parse_resource_group, data, "rg")
    _only_input_error(parse_usage, data, "usage")
    _only_input_error(parse_usage, b"PBS_MAG!\0" + data, "usage")


@FUZZ
@given(st.integers(0, len(GOOD_RG)), st.integers(0, len(LISTING)))
def test_fuzz_truncated(cut_rg, cut_listing):
    groups = _only_input_error(parse_resource_group, GOOD_RG[:cut_rg], "rg")
    usage = _only_input_error(parse_usage, LISTING.encode()[:cut_listing], "usage")
    if groups is not None:
        _only_input_error(tree_from_inputs, groups, usage)
    _only_input_error(parse_usage, P1_BINARY[: cut_listing % (len(P1_BINARY) + 1)], "usage")


@FUZZ
@given(st.lists(st.lists(FIELD, min_size=0, max_size=6), max_size=8), st.lists(st.tuples(NAMES, FIELD), max_size=6))
def test_fuzz_lines_columns_numbers_cycles(rg_rows, usage_rows):
    rg = "\n".join(" ".join(r) for r in rg_rows).encode()
    usage = "\n".join(f"{n} {v}" for n, v in usage_rows).encode()
    groups = _only_input_error(parse_resource_group, rg, "rg")
    parsed = _only_input_error(parse_usage, usage, "usage")
    if groups is not None:
        tree = _only_input_error(tree_from_inputs, groups, parsed)
        if tree is not None:  # whatever got through is a well-formed tree
            assert tree.name[0] == "TREEROOT" and bool(np.all(tree.parent[1:] < np.arange(1, len(tree.parent))))


@FUZZ
@given(st.permutations(GOOD_RG.decode().splitlines()), st.permutations([0, 1, 2, 3]))
def test_fuzz_reordered_lines_and_columns(lines, cols):
    text = "\n".join(" ".join(ln.split()[i] for i in cols) if len(ln.split()) == 4 else ln for ln in lines)
    groups = _only_input_error(parse_resource_group, text.encode(), "rg")
    if cols == [0, 1, 2, 3] and groups is None:
        assert any(ln.split()[2:3] == [p] for p in ("group1", "group2") for ln in lines)  # child before parent


@FUZZ
@given(st.dictionaries(st.sampled_from(["pbsuser", "pbsuser1", "pbsuser2", "pbsuser3", "alice", "bob"]),
                       st.floats(0, 1e12, allow_nan=False), max_size=6))
def test_fuzz_load_rule_invariant(usages):
    """After a load every internal node holds 1 + the sum of the leaf values below it."""
    body = "".join(f"{n} {u!r}\n" for n, u in usages.items()) or "# none\npbsuser 1\n"
    tree = tree_from_inputs(parse_resource_group(GOOD_RG, "rg"), parse_usage(body.encode(), "u"))
    kids: dict[int, list[int]] = {}
    for i in range(1, len(tree.parent)):
        kids.setdefault(int(tree.parent[i]), []).append(i)

    present = set(usages) if usages else {"pbsuser"}

    def leaf_sum(i: int) -> float:
        return sum(leaf_sum(k) if k in kids else tree.usage[k] * (tree.name[k] in present) for k in kids.get(i, []))

    for i in kids:
        assert tree.usage[i] == pytest.approx(1 + leaf_sum(i), rel=1e-12)
