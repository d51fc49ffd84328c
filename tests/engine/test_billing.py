"""Billable TRES against Slurm's documented examples (spec 4.4) and the FASRC weights (seed 003)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.billing import (
    billable_tres,
    billing_mode,
    job_billing,
    mem_weight_per_gb,
    normalize_tres_name,
)
from tui.formats.tres import format_tres_billing_weights
from tui.model import Job, Partition
from tui.sources.slurm_units import parse_tres_billing_weights

GB = 1024  # MB per GB: Slurm's memory base unit is the MB
DOC_WEIGHTS = "CPU=1.0,Mem=0.25G"


def test_parse_doc_string() -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    assert w == {"cpu": 1.0, "mem": 0.25 / 1024, "gres/gpu": 2.0}


@pytest.mark.parametrize(
    ("text", "key", "weight"),
    [
        ("mem=.25", "mem", 0.25),  # per MB: 8 GB -> 2048 (slurm.conf.5)
        ("Mem=0.25M", "mem", 0.25),  # M is the base unit: no change
        ("Mem=2K", "mem", 2.0),  # below the base unit: Slurm leaves it alone
        ("Mem=1T", "mem", 1 / 1024**2),
        ("Mem=0.25GB", "mem", 0.25 / 1024),  # only the first suffix character counts
        ("CPU=1K", "cpu", 1 / 1024),  # count base: K divides by 1024
        ("GRES/gpu=3G", "gres/gpu", 3 / 1024**3),
        ("BB/cray=1G", "bb/cray", 1 / 1024),  # burst buffers are MB-based like memory
        ("cpu=-0.5", "cpu", -0.5),  # negative weights are allowed
        ("License/Matlab=1e2", "license/matlab", 100.0),
    ],
)
def test_parse_units_and_case(text: str, key: str, weight: float) -> None:
    assert parse_tres_billing_weights(text) == {key: weight}


def test_parse_empty_fields_and_repeats() -> None:
    assert parse_tres_billing_weights("") == {}
    assert parse_tres_billing_weights(None) == {}
    assert parse_tres_billing_weights("CPU=1,,cpu=2") == {"cpu": 2.0}


@pytest.mark.parametrize(
    ("junk", "message"),
    [
        ("CPU", "TYPE\\[/NAME\\]=WEIGHT"),
        ("CPU=", "TYPE\\[/NAME\\]=WEIGHT"),
        ("=1", "TYPE\\[/NAME\\]=WEIGHT"),
        ("CPU=abc", "not a number"),
        ("CPU=G", "not a number"),
        ("Mem=0.25X", "unknown unit 'X'"),
        ("GRES/=1", "empty TRES"),
    ],
)
def test_parse_rejects_junk(junk: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_tres_billing_weights(junk)


def test_format_round_trips() -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    assert parse_tres_billing_weights(format_tres_billing_weights(w)) == w


def test_normalize() -> None:
    assert normalize_tres_name(" GRES/GPU ") == "gres/gpu"


# ---- priority_multifactor.shtml examples (CPU=1.0, Mem=0.25G) ------------------------------


@pytest.mark.parametrize(
    ("cpus", "mem_gb", "total", "max_tres"),
    [
        (1, 60, 16.0, 15.0),
        (16, 1, 16.25, 16.0),  # the page prints "MAX((15*1.0), ...) = 15", a typo for 16 CPUs
        (16, 60, 31.0, 16.0),
        (16, 64, 32.0, 16.0),
    ],
)
def test_doc_examples(cpus: int, mem_gb: int, total: float, max_tres: float) -> None:
    w = parse_tres_billing_weights(DOC_WEIGHTS)
    job = {"cpu": cpus, "mem": mem_gb * GB}
    assert billable_tres(job, w) == total
    assert billable_tres(job, w, "max_tres") == max_tres


def test_slurm_conf_man_page_example() -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    job = {"cpu": 1, "mem": 8 * GB, "gres/gpu": 0}
    assert billable_tres(job, w) == 3.0
    assert billable_tres(job, w, "max_tres") == 2.0
    # And the unsuffixed weight from the same page: mem=.25 on 8 GB bills 2048.
    assert billable_tres({"mem": 8 * GB}, parse_tres_billing_weights("mem=.25")) == 2048.0


def test_max_tres_puts_gres_in_the_max_and_licenses_in_the_sum() -> None:
    w = parse_tres_billing_weights("CPU=1,Mem=0.25G,GRES/gpu=10,License/matlab=3")
    job = {"cpu": 4, "mem": 32 * GB, "gres/gpu": 2, "license/matlab": 1}
    assert billable_tres(job, w) == 4 + 8 + 20 + 3
    assert billable_tres(job, w, "max_tres") == 20 + 3  # max(4, 8, 20) + licence
    assert billable_tres(job, w, "max_tres_gres") == 8 + 20 + 3  # max(4, 8) + gres + licence


def test_max_tres_starts_at_zero_and_ignores_billing() -> None:
    w = {"cpu": -1.0, "license/x": 2.0}
    assert billable_tres({"cpu": 4, "license/x": 1, "billing": 99}, w, "max_tres") == 2.0
    assert billable_tres({"cpu": 4, "license/x": 1}, w) == -2.0


def test_no_weights_bills_cpus() -> None:
    assert billable_tres({"cpu": 12, "mem": 10**6, "gres/gpu": 4}, {}) == 12.0
    assert billable_tres({"mem": 100}, None) == 0.0


def test_vectorised_over_jobs() -> None:
    w = parse_tres_billing_weights(DOC_WEIGHTS)
    got = billable_tres({"cpu": [1, 16, 16], "mem": np.array([60, 1, 60]) * GB}, w, "max_tres")
    np.testing.assert_array_equal(got, [15.0, 16.0, 16.0])


def test_billing_mode_from_flags() -> None:
    assert billing_mode(frozenset()) == "sum"
    assert billing_mode({"MAX_TRES", "NO_FAIR_TREE"}) == "max_tres"
    assert billing_mode({"max_tres", "MAX_TRES_GRES"}) == "max_tres_gres"


# ---- FASRC (seed 003) ----------------------------------------------------------------------


def test_fasrc_memory_weights() -> None:
    # 32 Cascade Lake cores (1.0) and 128 GB: 4 GB costs one core -> 0.25 per GB.
    assert mem_weight_per_gb(32, 1.0, 128) == 0.25
    # Same node shape with Sapphire Rapids (0.6): 0.15 per GB, as the page says.
    assert mem_weight_per_gb(32, 0.6, 128) == pytest.approx(0.15, abs=1e-15)
    with pytest.raises(ValueError, match="positive"):
        mem_weight_per_gb(32, 1.0, 0)


def test_fasrc_full_node_bills_the_same_by_cores_or_memory() -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G")
    by_cores = billable_tres({"cpu": 32, "mem": 4 * GB}, w, "max_tres")
    by_memory = billable_tres({"cpu": 1, "mem": 128 * GB}, w, "max_tres")
    assert by_cores == by_memory == 32.0


def test_fasrc_requeue_is_half_price() -> None:
    # Requeue partitions: CPU 0.5, GPU 104.6, Mem 0.125 per GB; an A100 elsewhere bills 209.1.
    full = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=209.1")
    requeue = parse_tres_billing_weights("CPU=0.5,Mem=0.125G,GRES/gpu=104.6")
    job = {"cpu": 16, "mem": 64 * GB, "gres/gpu": 1}
    assert billable_tres(job, full) == pytest.approx(16 + 16 + 209.1)
    assert billable_tres(job, requeue) == pytest.approx(8 + 8 + 104.6)
    # One A100 for an hour, summed billing: 241.1 * 3600 = 867,960 billing TRES-seconds.
    assert billable_tres(job, full) * 3600 == pytest.approx(867_960.0)


@given(
    cpu=st.integers(0, 10_000),
    mem=st.integers(0, 10**7),
    gpu=st.integers(0, 64),
    extra=st.integers(1, 100),
    which=st.sampled_from(["cpu", "mem", "gres/gpu"]),
    mode=st.sampled_from(["sum", "max_tres", "max_tres_gres"]),
)
def test_billing_is_monotone_in_counts(cpu: int, mem: int, gpu: int, extra: int, which: str, mode: str) -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    job = {"cpu": cpu, "mem": mem, "gres/gpu": gpu}
    more = dict(job)
    more[which] += extra
    assert billable_tres(more, w, mode) >= billable_tres(job, w, mode)  # type: ignore[arg-type]


@given(cpu=st.integers(0, 10_000), mem=st.integers(0, 10**7), gpu=st.integers(0, 64))
def test_max_tres_never_exceeds_sum_with_non_negative_weights(cpu: int, mem: int, gpu: int) -> None:
    w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
    job = {"cpu": cpu, "mem": mem, "gres/gpu": gpu}
    assert billable_tres(job, w, "max_tres") <= billable_tres(job, w, "max_tres_gres") <= billable_tres(job, w)


def test_job_billing_from_the_snapshot_model() -> None:
    part = Partition("shared", billing_weights=parse_tres_billing_weights(DOC_WEIGHTS))
    job = Job("1", "alice", "lab", "shared", "RUNNING", tres={"cpu": 1, "mem": 60 * GB, "node": 1})
    assert job_billing(job, part) == 16.0
    assert job_billing(job, part, frozenset({"MAX_TRES"})) == 15.0
    assert job_billing(job, Partition("plain")) == 1.0
    assert job_billing(job, None) == 1.0
