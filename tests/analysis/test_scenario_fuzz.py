"""Scenario files users can trust (issue 21): fuzzed files with unknown keys, wrong types and
impossible values each answer one line naming the file, the key and why (an :class:`InputError`),
never a traceback, and every file the checker accepts runs. The keys and rules are those
``docs/whatif.md`` documents; the valid base file is that page's full example."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.analysis.planner import load_scenario, parse_scenario, run_scenario
from tui.sources import registry
from tui.sources.errors import InputError

#: A valid scenario touching every table (the full example of docs/whatif.md, shortened).
BASE: dict[str, Any] = {
    "horizon": "14-0", "step": "6:00:00", "target": 0.5, "others": "decay", "running": True,
    "pending": ["61000419"], "rank_every": "1-0",
    "jobs": [{"user": "michellel", "account": "eps_gao_lab", "nodes": 1, "cpus": 4, "gpus": 0, "gpu_type": "",
              "mem": "8G", "billing": 4.0, "start": "1-0", "walltime": "12:00:00", "count": 2, "every": "3-0",
              "repeat": 2, "runtime": "10:00:00", "qos_factor": 0.5, "site": 0, "site_scale": 1000,
              "site_rule": "power", "partition": ""}],
    "shares": [{"account": "eps_gao_lab", "user": "michellel", "raw_shares": 4}],
    "settings": {"half_life": "7-0", "calc_period": "5", "algorithm": "fair_tree", "dampening": 1,
                 "usage_reset_period": "NONE", "pbs_decay_factor": 0.5, "pbs_decay_time": "1-0"},
    "admin": {"halving_usage": 1e9, "weeks": 2, "check_every": "4:00:00", "upkeep_amount": 5e7},
    "model": {"halving_usage": 10000, "half_life": "7-0", "initial_usage": 0},
}
TIME = {"horizon", "step", "rank_every", "jobs.start", "jobs.walltime", "jobs.every", "jobs.runtime",
        "settings.half_life", "settings.calc_period", "settings.pbs_decay_time", "admin.check_every", "model.half_life"}
NUMBER = {"target", "jobs.cpus", "jobs.billing", "jobs.qos_factor", "jobs.site", "jobs.site_scale",
          "settings.dampening", "settings.pbs_decay_factor", "admin.halving_usage", "admin.weeks",
          "admin.upkeep_amount", "model.halving_usage", "model.initial_usage"}
WHOLE = {"jobs.nodes", "jobs.gpus", "jobs.count", "jobs.repeat", "shares.raw_shares"}
TEXT = {"others", "jobs.user", "jobs.account", "jobs.partition", "jobs.gpu_type", "jobs.site_rule",
        "shares.account", "shares.user", "settings.algorithm", "settings.usage_reset_period"}
ARRAYS = {"jobs", "shares"}  # arrays of tables: the key path gets [0]
TABLES = ("", "jobs", "shares", "settings", "admin", "model")


def _name(path: str) -> str:
    """``jobs.cpus`` -> ``jobs[0].cpus`` (the name the error uses)."""
    table, _, key = path.rpartition(".")
    return f"{table}[0].{key}" if table in ARRAYS else path


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    table, _, key = path.rpartition(".")
    where = data if not table else (data[table][0] if table in ARRAYS else data[table])
    where[key] = value


def _check(data: dict[str, Any], key: str) -> None:
    """The file fails with one line that names it, then ``key``, then why."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.toml"
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
        try:
            load_scenario(path)
        except InputError as exc:
            text = str(exc)
            assert "\n" not in text, text
            assert text.startswith(f"{path}:{key}: "), (key, text)
            assert len(text) > len(f"{path}:{key}: ") + 5, text  # a reason follows
            return
        raise AssertionError(f"{key}: accepted {data!r}")


def test_the_base_file_is_valid_and_runs_on_the_demo() -> None:
    sc = parse_scenario(copy.deepcopy(BASE), "base")
    demo = registry.make("demo", "slurm").load()
    without_model = copy.deepcopy(BASE)
    del without_model["model"], without_model["admin"]
    assert run_scenario(parse_scenario(without_model, "base"), demo).series
    assert sc.jobs[0].repeat == 2 and sc.settings.pbs_decay_time_s == 86400


_junk_key = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_\n -", min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), key=_junk_key, value=st.one_of(st.integers(), st.text(max_size=5)))
def test_an_unknown_key_is_named(table: str, key: str, value: Any) -> None:
    allowed = {p.rpartition(".")[2] for p in TIME | NUMBER | WHOLE | TEXT if p.rpartition(".")[0] == table}
    allowed |= {"running", "pending", "jobs", "shares", "settings", "admin", "model"} if not table else set()
    if key in allowed:
        return
    data = copy.deepcopy(BASE)
    _set(data, f"{table}.{key}" if table else key, value)
    shown = key if key.isprintable() else repr(key)
    _check(data, _name(f"{table}.{shown}") if table else shown)


_wrong = {
    "time": st.one_of(st.floats(allow_nan=False), st.booleans(), st.lists(st.integers(), max_size=2),
                      st.dictionaries(_junk_key, st.integers(), min_size=1, max_size=1),
                      st.text(alphabet="xyz!?", min_size=1, max_size=4)),
    "number": st.one_of(st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2)),
    "whole": st.one_of(st.text(max_size=4), st.booleans(), st.floats(allow_nan=False).filter(lambda f: f % 1 != 0)),
    "text": st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.lists(st.text(), max_size=2)),
    "bool": st.one_of(st.integers(), st.text(max_size=4), st.lists(st.booleans(), max_size=2)),
    "list": st.one_of(st.integers(), st.text(max_size=4), st.lists(st.one_of(st.booleans(), st.floats(),
                                                                             st.lists(st.integers())), min_size=1,
                                                                   max_size=3)),
    "mem": st.one_of(st.text(alphabet="xyzQ-", min_size=1, max_size=4), st.booleans(), st.lists(st.integers())),
    "tres": st.one_of(st.just(""), st.text(alphabet="cpu=,x-", min_size=1, max_size=8).filter(
        lambda t: not __import__("re").fullmatch(r"(cpu=[0-9]+)(,cpu=[0-9]+)*", t)), st.integers()),
}
KEYS = {"time": TIME, "number": NUMBER, "whole": WHOLE, "text": TEXT, "bool": {"running"}, "list": {"pending"},
        "mem": {"jobs.mem"}, "tres": {"jobs.tres"}}


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_wrong_type_is_named(data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(sorted(_wrong)))
    path = data.draw(st.sampled_from(sorted(KEYS[kind])))
    value = data.draw(_wrong[kind])
    scenario = copy.deepcopy(BASE)
    _set(scenario, path, value)
    _check(scenario, _name(path))


#: Values of the right type that no run can have, and the key the error must name.
IMPOSSIBLE = [
    ("horizon", st.sampled_from(["0", "0:00:00", "-1", "1-25:00:00x"])),
    ("step", st.sampled_from(["0", "0-0"])),
    ("target", st.floats(min_value=1.0001, max_value=1e6)),
    ("target", st.floats(max_value=-1e-9, min_value=-1e6)),
    ("others", st.text(max_size=8).filter(lambda s: s.strip() not in ("decay", "steady", "observed"))),
    ("jobs.count", st.integers(max_value=0)),
    ("jobs.nodes", st.integers(max_value=0)),
    ("jobs.cpus", st.floats(max_value=-1e-9, min_value=-1e9)),
    ("jobs.site_rule", st.text(max_size=8).filter(lambda s: s.strip() not in ("power", "sigmoid"))),
    ("jobs.runtime", st.sampled_from(["12:00:01", "1-0", "13:00:00"])),  # past the 12-hour walltime
    ("jobs.repeat", st.integers(min_value=100_001, max_value=10**7)),
    ("settings.algorithm", st.text(max_size=8).filter(lambda s: s.strip() not in ("", "fair_tree", "classic"))),
    ("settings.pbs_decay_factor", st.one_of(st.floats(min_value=1.0, max_value=1e6), st.just(0.0))),
    ("settings.dampening", st.floats(max_value=0.999, min_value=-1e6)),
    ("shares.raw_shares", st.integers(max_value=-1)),
    ("model.halving_usage", st.floats(max_value=0.0, min_value=-1e9)),
]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_an_impossible_value_is_named(data: st.DataObject) -> None:
    path, values = data.draw(st.sampled_from(IMPOSSIBLE))
    scenario = copy.deepcopy(BASE)
    _set(scenario, path, data.draw(values))
    _check(scenario, _name(path))


def test_what_the_fuzzing_found_is_one_line() -> None:
    """Found by fuzzing (a helper's run on the same checker): TOML integers are unbounded, a
    time past Slurm's longest overflowed the projection, ``mem = inf`` was taken, and a quoted
    key may hold a newline."""
    for path, value in (("target", 10**400), ("jobs.cpus", -(10**400)), ("jobs.mem", float("inf")),
                        ("horizon", 10**12), ("jobs.walltime", "9999999-0")):
        scenario = copy.deepcopy(BASE)
        _set(scenario, path, value)
        _check(scenario, _name(path))
    scenario = copy.deepcopy(BASE)
    scenario["jobs"][0]["a\nb"] = 1
    _check(scenario, "jobs[0].'a\\nb'")


def test_repeat_without_every_and_a_job_no_node_can_run() -> None:
    scenario = copy.deepcopy(BASE)
    del scenario["jobs"][0]["every"]
    _check(scenario, "jobs[0].every")  # repeat = 2 needs the time between repeats
    # checked against the source's nodes: the demo's largest node has far fewer CPUs
    demo = registry.make("demo", "slurm").load()
    big = copy.deepcopy(BASE)
    del big["model"], big["admin"]
    big["jobs"][0].update(partition=demo.partitions[0].name, cpus=10**6)
    try:
        run_scenario(parse_scenario(big, "plan.toml"), demo, source="plan.toml")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("plan.toml:jobs[0]."), str(exc)
    else:
        raise AssertionError("a job of a million CPUs per node ran")
