"""The scenario file: TOML read, checked and written (``docs/whatif.md`` has every key). A wrong
key, type or value is one :class:`InputError` naming ``file:key`` and why. No Textual here.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

from tui.analysis.planner.scenario import Admin, Model, Scenario, ScenarioJob, SettingsOverride, SharesOverride
from tui.engine.billing import normalize_tres_name
from tui.sources.errors import InputError
from tui.sources.slurm_units import parse_slurm_time

# --------------------------------------------------------------------------------------------
# TOML
# --------------------------------------------------------------------------------------------

_TOP = {"horizon", "step", "target", "others", "running", "pending", "rank_every", "jobs", "model", "shares",
        "settings", "admin"}
_JOB = {"user", "account", "partition", "nodes", "cpus", "gpus", "gpu_type", "mem", "tres", "billing",
        "start", "walltime", "count", "every", "repeat", "runtime", "qos_factor", "site", "site_scale", "site_rule"}
_ADMIN = {"halving_usage", "weeks", "check_every", "upkeep_amount"}
_MODEL = {"halving_usage", "half_life", "initial_usage"}
_SHARES = {"account", "user", "raw_shares"}
_SETTINGS = {"half_life", "calc_period", "algorithm", "dampening", "usage_reset_period", "pbs_decay_factor",
             "pbs_decay_time"}
_MEM = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*([KMGTP]?)B?\s*", re.IGNORECASE)
_MEM_UNIT = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
MAX_TIME_MIN = 0xFFFFFFFE
"""Slurm's longest finite time (uint32 minutes; one more is INFINITE): longer would overflow the projection."""


def _finite(value: float) -> bool:
    """A TOML number a float holds (TOML integers are unbounded: 10**400 is not finite)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class _Reader:
    """Typed getters that raise :class:`InputError` naming ``file:key``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> InputError:
        return InputError(f"{self.source}:{key}", message)

    def unknown(self, table: dict[str, Any], allowed: set[str], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                import difflib

                near = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; expected one of {', '.join(sorted(allowed))}"
                shown = key if key.isprintable() else repr(key)  # a quoted TOML key may hold a newline
                raise self.fail(f"{prefix}{shown}", f"unknown key{hint}")

    def table(self, data: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any] | None:
        """The sub-table ``[key]`` checked for unknown keys; None when absent."""
        if key not in data:
            return None
        t = data[key]
        if not isinstance(t, dict):
            raise self.fail(key, f"a table ([{key}])")
        self.unknown(t, allowed, f"{key}.")
        return t

    def time(self, table: dict[str, Any], key: str, name: str, default: int | None = None,
             positive: bool = False) -> int | None:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.fail(name, f"a Slurm time string (\"D-HH:MM:SS\", \"HH:MM:SS\", minutes), not {value!r}")
        try:
            secs = parse_slurm_time(str(value))
        except ValueError:
            raise self.fail(name, f"not a Slurm time {value!r}: use D-HH:MM:SS, HH:MM:SS or minutes") from None
        if secs is None:
            raise self.fail(name, "must be finite")
        if secs > MAX_TIME_MIN * 60:
            raise self.fail(name, f"longer than Slurm's longest time, {MAX_TIME_MIN} minutes")
        if positive and secs <= 0:
            raise self.fail(name, "must be longer than 0")
        return secs

    def number(self, table: dict[str, Any], key: str, name: str, default: float | None = None,
               low: float | None = None, integer: bool = False) -> float | None:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            raise self.fail(name, f"{'a whole number' if integer else 'a number'}, not {value!r}")
        if not _finite(value):
            raise self.fail(name, "must be finite")
        if low is not None and value < low:
            raise self.fail(name, f"at least {low:g}, not {value!r}")
        return value

    def text(self, table: dict[str, Any], key: str, name: str, default: str = "") -> str:
        if key not in table:
            return default
        value = table[key]
        if not isinstance(value, str):
            raise self.fail(name, f"a string, not {value!r}")
        return value.strip()

    def mem(self, table: dict[str, Any], key: str, name: str) -> float:
        if key not in table:
            return 0.0
        value = table[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and _finite(value):
            return float(value)
        m = _MEM.fullmatch(value) if isinstance(value, str) else None
        if not m:
            raise self.fail(name, f"memory per node as \"64G\", \"500M\" or a number of MB, not {value!r}")
        return float(m.group(1)) * _MEM_UNIT[m.group(2).upper()]

    def tres(self, table: dict[str, Any], key: str, name: str) -> dict[str, float] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(name, f"a TRES string such as \"cpu=16,mem=64G,gres/gpu=4\", not {value!r}")
        out: dict[str, float] = {}
        for item in value.split(","):
            k, sep, v = item.partition("=")
            try:
                tres_name = normalize_tres_name(k)
                if not sep:
                    raise ValueError
                if tres_name == "mem":
                    out["mem"] = self.mem({"m": v}, "m", name)
                else:
                    count = float(v)
                    if not math.isfinite(count) or count < 0:
                        raise ValueError
                    out[tres_name] = count
            except (ValueError, InputError):
                raise self.fail(name, f"bad TRES entry {item.strip()!r}: expected TYPE[/NAME]=COUNT") from None
        out.setdefault("node", 1.0)
        return out


def parse_scenario(data: dict[str, Any], source: str = "scenario") -> Scenario:
    """Validate a scenario read from TOML (or built by the pane) into a :class:`Scenario`.

    Raises
    ------
    InputError
        Naming ``source:key`` (e.g. ``plan.toml:jobs[1].walltime``) and what was expected.
    """
    rd = _Reader(source)
    rd.unknown(data, _TOP, "")
    horizon = rd.time(data, "horizon", "horizon", positive=True)
    if horizon is None:
        raise rd.fail("horizon", "required: how far to project, e.g. \"30-0\" for 30 days")
    step = rd.time(data, "step", "step", default=max(1, horizon // 100), positive=True)
    assert step is not None
    if horizon // step > 200_000:
        raise rd.fail("step", f"{horizon // step} steps over the horizon; use a longer step")
    target = rd.number(data, "target", "target", 0.5, low=0.0)
    assert target is not None
    if target > 1:
        raise rd.fail("target", f"a fairshare in [0, 1], not {target!r}")
    others = rd.text(data, "others", "others", "decay")
    if others not in ("decay", "steady", "observed"):
        raise rd.fail("others", f"\"decay\", \"steady\" or \"observed\", not {others!r}")
    rank_every = rd.time(data, "rank_every", "rank_every", None, positive=True)
    running = data.get("running", True)
    if not isinstance(running, bool):
        raise rd.fail("running", f"true or false, not {running!r}")
    pending = data.get("pending", [])
    if not isinstance(pending, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                for x in pending):
        raise rd.fail("pending", f"a list of job ids, not {pending!r}")

    jobs_raw = data.get("jobs", [])
    if not isinstance(jobs_raw, list) or not all(isinstance(j, dict) for j in jobs_raw):
        raise rd.fail("jobs", "an array of tables ([[jobs]])")
    jobs = []
    for i, j in enumerate(jobs_raw):
        p = f"jobs[{i}]."
        rd.unknown(j, _JOB, p)
        nodes = int(rd.number(j, "nodes", p + "nodes", 1, low=1, integer=True) or 1)
        job = ScenarioJob(
            user=rd.text(j, "user", p + "user"),
            account=rd.text(j, "account", p + "account"),
            partition=rd.text(j, "partition", p + "partition"),
            nodes=nodes,
            cpus=float(rd.number(j, "cpus", p + "cpus", 1, low=0) or 0),
            gpus=int(rd.number(j, "gpus", p + "gpus", 0, low=0, integer=True) or 0),
            gpu_type=rd.text(j, "gpu_type", p + "gpu_type"),
            mem_mb=rd.mem(j, "mem", p + "mem"),
            tres=rd.tres(j, "tres", p + "tres"),
            billing=rd.number(j, "billing", p + "billing", None, low=0),
            start_s=int(rd.time(j, "start", p + "start", 0) or 0),
            walltime_s=int(rd.time(j, "walltime", p + "walltime", 3600, positive=True) or 0),
            count=int(rd.number(j, "count", p + "count", 1, low=1, integer=True) or 1),
            every_s=int(rd.time(j, "every", p + "every", 0) or 0),
            repeat=int(rd.number(j, "repeat", p + "repeat", 1, low=1, integer=True) or 1),
            runtime_s=rd.time(j, "runtime", p + "runtime", None, positive=True),
            qos_factor=rd.number(j, "qos_factor", p + "qos_factor", None, low=0),
            site=float(rd.number(j, "site", p + "site", 0.0) or 0.0),
            site_scale=rd.number(j, "site_scale", p + "site_scale", None, low=0),
            site_rule=rd.text(j, "site_rule", p + "site_rule", "power"),
        )
        if job.site_rule not in ("power", "sigmoid"):
            raise rd.fail(p + "site_rule", f"\"power\" or \"sigmoid\" (seed 004), not {job.site_rule!r}")
        if job.runtime_s is not None and job.runtime_s > job.walltime_s:
            raise rd.fail(p + "runtime", "longer than the walltime: Slurm ends the job at its time limit")
        if job.repeat > 1 and job.every_s <= 0:
            raise rd.fail(p + "every", f"needed with repeat = {job.repeat}: the time between repeats")
        if job.repeat * job.count > 100_000:
            raise rd.fail(p + "repeat", "more than 100,000 runs in one job line")
        jobs.append(job)

    model = None
    if (m := rd.table(data, "model", _MODEL)) is not None:
        u_star = rd.number(m, "halving_usage", "model.halving_usage", None, low=0)
        if u_star is None or u_star <= 0:
            raise rd.fail("model.halving_usage", "required: u* > 0, the usage that halves fairshare (core-hours)")
        hl = rd.time(m, "half_life", "model.half_life", 7 * 86400)
        model = Model(float(u_star), int(hl or 0), float(rd.number(m, "initial_usage", "model.initial_usage", 0.0,
                                                                      low=0) or 0.0))

    shares = []
    raw_shares = data.get("shares", [])
    if not isinstance(raw_shares, list) or not all(isinstance(s, dict) for s in raw_shares):
        raise rd.fail("shares", "an array of tables ([[shares]])")
    for i, s in enumerate(raw_shares):
        p = f"shares[{i}]."
        rd.unknown(s, _SHARES, p)
        n = rd.number(s, "raw_shares", p + "raw_shares", None, low=0, integer=True)
        if n is None:
            raise rd.fail(p + "raw_shares", "required: the raw shares to try")
        acct = rd.text(s, "account", p + "account")
        if not acct:
            raise rd.fail(p + "account", "required")
        shares.append(SharesOverride(acct, rd.text(s, "user", p + "user"), int(n)))

    settings = SettingsOverride()
    if (st := rd.table(data, "settings", _SETTINGS)) is not None:
        algorithm = rd.text(st, "algorithm", "settings.algorithm") or None
        if algorithm not in (None, "fair_tree", "classic"):
            raise rd.fail("settings.algorithm", f"\"fair_tree\" or \"classic\", not {algorithm!r}")
        reset = rd.text(st, "usage_reset_period", "settings.usage_reset_period") or None
        if reset is not None and reset.upper() not in ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY",
                                                       "QUARTERLY", "YEARLY"):
            raise rd.fail("settings.usage_reset_period",
                          f"NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY, not {reset!r}")
        pbs_f = rd.number(st, "pbs_decay_factor", "settings.pbs_decay_factor", None, low=0)
        if pbs_f is not None and not 0 < pbs_f < 1:
            raise rd.fail("settings.pbs_decay_factor", f"between 0 and 1 (exclusive), not {pbs_f!r}")
        settings = SettingsOverride(rd.time(st, "half_life", "settings.half_life"),
                                    rd.time(st, "calc_period", "settings.calc_period", None, positive=True),
                                    algorithm, rd.number(st, "dampening", "settings.dampening", None, low=1),
                                    reset, pbs_f, rd.time(st, "pbs_decay_time", "settings.pbs_decay_time", None,
                                                          positive=True))
    admin = None
    if (a := rd.table(data, "admin", _ADMIN)) is not None:
        u_star = rd.number(a, "halving_usage", "admin.halving_usage", None, low=0)
        if not u_star:
            raise rd.fail("admin.halving_usage", "required: u* > 0, the usage that halves fairshare (RawUsage units)")
        admin = Admin(float(u_star), float(rd.number(a, "weeks", "admin.weeks", 4.0, low=0) or 0.0),
                      int(rd.time(a, "check_every", "admin.check_every", 4 * 3600, positive=True) or 0),
                      rd.number(a, "upkeep_amount", "admin.upkeep_amount", None, low=0))
    return Scenario(int(horizon), int(step), tuple(jobs), model, tuple(shares), settings, float(target), others,
                    rank_every, running, tuple(str(x) for x in pending), admin)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario TOML file (errors name the file and the key)."""
    p = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(p, exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise InputError(p, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(p, f"not valid TOML: {exc}") from None
    return parse_scenario(data, p)


def _time_text(secs: int) -> str:
    """Seconds as a Slurm ``D-HH:MM:SS`` string (what :func:`parse_slurm_time` reads back)."""
    d, rest = divmod(int(secs), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}"


def scenario_to_dict(sc: Scenario) -> dict[str, Any]:
    """The TOML table of a scenario (defaults left out); :func:`parse_scenario` reads it back."""
    out: dict[str, Any] = {"horizon": _time_text(sc.horizon_s), "step": _time_text(sc.step_s)}
    if sc.target != 0.5:
        out["target"] = sc.target
    if sc.others != "decay":
        out["others"] = sc.others
    if sc.rank_every_s is not None:
        out["rank_every"] = _time_text(sc.rank_every_s)
    if not sc.running:
        out["running"] = False
    if sc.pending:
        out["pending"] = list(sc.pending)
    default = ScenarioJob()
    jobs = []
    for j in sc.jobs:
        t: dict[str, Any] = {}
        for key in ("user", "account", "partition", "nodes", "gpus", "gpu_type", "count", "repeat"):
            if getattr(j, key) != getattr(default, key):
                t[key] = getattr(j, key)
        if j.cpus != default.cpus:
            t["cpus"] = int(j.cpus) if float(j.cpus).is_integer() else j.cpus
        if j.mem_mb:
            t["mem"] = j.mem_mb
        if j.tres is not None:
            t["tres"] = ",".join(f"{k}={v:g}" for k, v in j.tres.items())
        if j.billing is not None:
            t["billing"] = j.billing
        t["start"] = _time_text(j.start_s)
        t["walltime"] = _time_text(j.walltime_s)
        if j.every_s:
            t["every"] = _time_text(j.every_s)
        if j.runtime_s is not None:
            t["runtime"] = _time_text(j.runtime_s)
        if j.qos_factor is not None:
            t["qos_factor"] = j.qos_factor
        if j.site:
            t["site"] = j.site
        if j.site_scale is not None:
            t["site_scale"] = j.site_scale
        if j.site_rule != "power":
            t["site_rule"] = j.site_rule
        jobs.append(t)
    if jobs:
        out["jobs"] = jobs
    if sc.shares:
        out["shares"] = [{"account": s.account, "user": s.user, "raw_shares": s.raw_shares} for s in sc.shares]
    times = {k: v for k, v in (("half_life", sc.settings.half_life_s), ("calc_period", sc.settings.calc_period_s))
             if v is not None}
    st: dict[str, Any] = {k: _time_text(v) for k, v in times.items()}
    if sc.settings.pbs_decay_time_s is not None:
        st["pbs_decay_time"] = _time_text(sc.settings.pbs_decay_time_s)
    for key in ("algorithm", "dampening", "usage_reset_period", "pbs_decay_factor"):
        if getattr(sc.settings, key) is not None:
            st[key] = getattr(sc.settings, key)
    if st:
        out["settings"] = st
    if sc.admin is not None:
        adm: dict[str, Any] = {"halving_usage": sc.admin.halving_usage, "weeks": sc.admin.weeks,
                               "check_every": _time_text(sc.admin.check_every_s)}
        if sc.admin.upkeep_amount is not None:
            adm["upkeep_amount"] = sc.admin.upkeep_amount
        out["admin"] = adm
    if sc.model is not None:
        out["model"] = {"halving_usage": sc.model.halving_usage, "half_life": _time_text(sc.model.half_life_s),
                        "initial_usage": sc.model.initial_usage}
    return out


def save_scenario(path: str | Path, sc: Scenario) -> None:
    """Write a scenario as TOML (tomli-w; comments are not kept)."""
    import tomli_w

    Path(path).write_text(tomli_w.dumps(scenario_to_dict(sc)), encoding="utf-8")
