"""Scenarios saved to files and to the state file's ``scenarios`` list, read back equal."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tui.analysis.planner import (
    drop_scenario,
    load_scenario,
    parse_scenario,
    save_scenario,
    scenario_to_dict,
    store_scenario,
    stored_scenarios,
)
from tui.config import delete_named_scenario, load_named_scenarios, load_state, save_named_scenario
from tui.sources.errors import InputError

FULL = {
    "horizon": "14-0", "step": "1:00:00", "target": 0.6, "others": "steady", "pending": ["61000419"],
    "rank_every": "1-0", "running": False,
    "jobs": [{"user": "khoang", "account": "eps_hoang_lab", "partition": "gpu", "nodes": 2, "cpus": 16, "gpus": 4,
              "gpu_type": "a100", "mem": "128G", "start": "1-0", "walltime": "12:00:00", "runtime": "10:00:00",
              "count": 20, "every": "7-0", "repeat": 2, "qos_factor": 0.5, "site": 100.0},
             {"user": "bob", "tres": "cpu=8,mem=16G,gres/gpu=1", "billing": 12.5}],
    "shares": [{"account": "eps_hoang_lab", "raw_shares": 4}],
    "settings": {"half_life": "3-0", "calc_period": "5", "algorithm": "classic", "dampening": 2,
                 "usage_reset_period": "NONE"},
    "admin": {"halving_usage": 1e9, "weeks": 6, "check_every": "6:00:00", "upkeep_amount": 5e7},
    "model": {"halving_usage": 10000, "half_life": "7-0", "initial_usage": 50.0},
}


def test_every_key_round_trips_through_a_file(tmp_path: Path) -> None:
    sc = parse_scenario(FULL)
    assert sc.jobs[0].runtime_s == 36000 and sc.jobs[0].qos_factor == 0.5 and sc.admin is not None
    path = tmp_path / "plan.toml"
    save_scenario(path, sc)
    assert load_scenario(path) == sc
    # what is written is TOML the reader takes as it is
    assert parse_scenario(tomllib.loads(path.read_text())) == sc == parse_scenario(scenario_to_dict(sc))


def test_the_state_list_keeps_names_order_and_replaces_in_place() -> None:
    a, b = parse_scenario({"horizon": "1-0"}), parse_scenario(FULL)
    entries = store_scenario(store_scenario([], "first", a), "gpu week", b)
    assert [e["name"] for e in entries] == ["first", "gpu week"]
    entries = store_scenario(entries, "first", b)
    assert [n for n, _ in stored_scenarios(entries)] == ["first", "gpu week"]
    assert all(sc == b for _, sc in stored_scenarios(entries))
    assert [e["name"] for e in drop_scenario(entries, "first")] == ["gpu week"]


def test_a_damaged_entry_is_its_error_and_the_others_load() -> None:
    entries = [{"name": "bad", "horizon": "1-0", "jobs": [{"walltime": "forever"}]}, {"name": "ok", "horizon": "2-0"}]
    (n1, bad), (n2, ok) = stored_scenarios(entries)
    assert n1 == "bad" and isinstance(bad, InputError)
    assert str(bad).startswith("state file scenario 'bad':jobs[0].walltime: not a Slurm time 'forever'")
    assert n2 == "ok" and not isinstance(ok, InputError) and ok.horizon_s == 2 * 86400


def test_the_state_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "state.toml"
    sc = parse_scenario(FULL)
    save_named_scenario("gpu week", sc, path)
    save_named_scenario("quiet", parse_scenario({"horizon": "30-0"}), path)
    assert [(n, s == sc) for n, s in load_named_scenarios(path)] == [("gpu week", True), ("quiet", False)]
    assert "[[scenarios.jobs]]" in path.read_text()  # tomli-w's array of tables
    delete_named_scenario("gpu week", path)
    assert [n for n, _ in load_named_scenarios(path)] == ["quiet"] and load_state(path).last_theme is None
