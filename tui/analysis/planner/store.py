"""Named what-if scenarios in the state file's ``scenarios`` list (and in files).

API for the what-if pane (pure functions over the list; :mod:`tui.config` reads and writes the
state file itself, with ``load_named_scenarios`` / ``save_named_scenario`` / ``delete_named_scenario``):

* :func:`stored_scenarios(entries)` -> ``[(name, Scenario | InputError)]``: every saved scenario,
  a damaged one as the error naming ``state file scenario 'NAME':key`` (the others still load);
* :func:`store_scenario(entries, name, scenario)` -> new list: replaces the entry of that name in place,
  else appends; each entry is ``{"name": name, **scenario_to_dict(scenario)}``;
* :func:`drop_scenario(entries, name)` -> new list without it.

Files: :func:`~tui.analysis.planner.scenario_file.save_scenario` /
:func:`~tui.analysis.planner.scenario_file.load_scenario`
(tomli-w; a saved scenario reads back equal). No Textual here.
"""

from __future__ import annotations

from typing import Any

from tui.analysis.planner.scenario import Scenario
from tui.analysis.planner.scenario_file import parse_scenario, scenario_to_dict
from tui.sources.errors import InputError

__all__ = ["drop_scenario", "store_scenario", "stored_scenarios"]

SOURCE = "state file"


def stored_scenarios(entries: list[dict[str, Any]]) -> list[tuple[str, Scenario | InputError]]:
    """Each entry's name and scenario (or why it cannot be read), in the list's order."""
    out: list[tuple[str, Scenario | InputError]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.append((f"#{i + 1}", InputError(f"{SOURCE} scenario #{i + 1}", "not a table")))
            continue
        name = entry.get("name")
        data = {k: v for k, v in entry.items() if k != "name"}
        label = name if isinstance(name, str) and name else f"#{i + 1}"
        try:
            out.append((label, parse_scenario(data, f"{SOURCE} scenario {label!r}")))
        except InputError as exc:
            out.append((label, exc))
    return out


def store_scenario(entries: list[dict[str, Any]], name: str, sc: Scenario) -> list[dict[str, Any]]:
    """``entries`` with ``sc`` saved under ``name`` (replacing one of that name where it was)."""
    name = name.strip()
    if not name:
        raise ValueError("a scenario needs a name")
    entry = {"name": name, **scenario_to_dict(sc)}
    out = [dict(e) for e in entries]
    for i, e in enumerate(out):
        if isinstance(e, dict) and e.get("name") == name:
            out[i] = entry
            return out
    return out + [entry]


def drop_scenario(entries: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """``entries`` without the scenario called ``name``."""
    return [dict(e) for e in entries if not (isinstance(e, dict) and e.get("name") == name)]
