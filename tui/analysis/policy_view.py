"""What the app's Policy screen asks of a replay: its form read into a :class:`PolicyChange`, the
largest winners and losers, and one association's usage and FairShare over the window under the
cluster's policy and the new one.

The replay itself is :mod:`tui.analysis.replay` (as ``fairtop replay``). Pure: no I/O, no Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from tui.analysis.replay import RESET_PERIODS, PolicyChange, PolicyReplay, ReplayBase, prepare_replay, replay_policy
from tui.engine.usage_law import UsagePolicy
from tui.model import PrioritySettings
from tui.sources.slurm_units import parse_slurm_time, parse_tres_billing_weights

FORM_FIELDS = ("half_life", "calc_period", "reset_period", "algorithm", "damping", "enforce_limits",
               "qos_usage_factor", "billing")
"""The form's fields, as ``fairtop replay``'s flags (empty: the cluster's own)."""


class FormError(ValueError):
    """A form field that does not read: ``field`` and one sentence."""

    def __init__(self, field: str, text: str) -> None:
        super().__init__(f"{field}: {text}")
        self.field, self.text = field, text


def slurm_seconds(field: str, text: str | None, zero_ok: bool) -> float | None:
    """A Slurm time (``7-0``, ``90`` minutes, ``1:00:00``) in seconds; None when empty.

    Raises
    ------
    FormError
        Not a Slurm time, infinite, or 0 where ``zero_ok`` is false.
    """
    if not text:
        return None
    try:
        secs = parse_slurm_time(text)
    except ValueError as exc:
        raise FormError(field, str(exc)) from None
    if secs is None or (secs == 0 and not zero_ok):
        raise FormError(field, f"must be a finite time{'' if zero_ok else ' > 0'} (7-0 = 7 days, 90 = 90 minutes), "
                               f"not {text!r}")
    return float(secs)


def _pairs(field: str, text: str, sep: str) -> dict[str, str]:
    out = {}
    for item in (t.strip() for t in text.split(sep)):
        if not item:
            continue
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise FormError(field, f"expected NAME=VALUE, not {item!r}")
        out[name.strip()] = value.strip()
    return out


def form_change(form: Mapping[str, str]) -> PolicyChange:
    """The form (:data:`FORM_FIELDS` -> text, empty or missing: the cluster's own) as a change.

    ``qos_usage_factor``: ``QOS=F`` pairs, comma-separated; ``billing``: ``PARTITION=WEIGHTS``
    pairs separated by ``;`` (WEIGHTS as TRESBillingWeights, ``CPU=1,Mem=0.25G``).

    Raises
    ------
    FormError
        A field that does not read, named.
    """
    get = {k: str(form.get(k, "")).strip() for k in FORM_FIELDS}
    reset = get["reset_period"].upper() or None
    if reset is not None and reset not in RESET_PERIODS:
        raise FormError("reset period", f"one of {', '.join(RESET_PERIODS)}, not {get['reset_period']!r}")
    algorithm = get["algorithm"].lower().replace(" ", "_") or None
    if algorithm not in (None, "classic", "fair_tree"):
        raise FormError("algorithm", f"classic or fair_tree, not {get['algorithm']!r}")
    damping = None
    if get["damping"]:
        try:
            damping = float(get["damping"])
        except ValueError:
            damping = -1.0
        if not 0 < damping < math.inf:
            raise FormError("damping", f"a number > 0, not {get['damping']!r}")
    limits = get["enforce_limits"].lower() or None
    if limits not in (None, "yes", "no"):
        raise FormError("enforce limits", f"yes or no, not {get['enforce_limits']!r}")
    factors = {}
    for qos, text in _pairs("QOS usage factors", get["qos_usage_factor"], ",").items():
        try:
            factors[qos] = float(text)
        except ValueError:
            factors[qos] = -1.0
        if not 0 <= factors[qos] < math.inf:
            raise FormError("QOS usage factors", f"{qos}: a number >= 0, not {text!r}")
    billing = {}
    for part, text in _pairs("billing weights", get["billing"], ";").items():
        try:
            billing[part] = parse_tres_billing_weights(text)
        except ValueError as exc:
            raise FormError("billing weights", f"{part}: {exc}") from None
    return PolicyChange(half_life_s=slurm_seconds("half-life", get["half_life"], zero_ok=True),
                        calc_period_s=slurm_seconds("calc period", get["calc_period"], zero_ok=False),
                        reset_period=reset, algorithm=algorithm, damping=damping,
                        enforce_limits=None if limits is None else limits == "yes",
                        qos_usage_factor=factors, billing=billing)


def winners_losers(rows: list[dict[str, object]], n: int = 5) -> tuple[list[dict[str, object]],
                                                                       list[dict[str, object]]]:
    """The ``n`` largest gains and the ``n`` largest losses in FairShare of ``replay_rows`` (sorted
    by the move, largest gain first); a row that does not move is neither."""
    moved = [r for r in rows if isinstance(r["move"], float) and r["move"] != 0.0]
    winners = [r for r in moved if r["move"] > 0][:n]  # type: ignore[operator]
    losers = [r for r in reversed(moved) if r["move"] < 0][:n]  # type: ignore[operator]
    return winners, losers


@dataclass(frozen=True, eq=False)
class Series:
    """Every association over the window: at each time, RawUsage and FairShare under the cluster's
    own policy (``now``) and under the new one (``new``), arrays of ``[time, tree row]``."""

    times: list[datetime]
    usage_now: NDArray[np.float64]
    usage_new: NDArray[np.float64]
    fairshare_now: NDArray[np.float64]
    fairshare_new: NDArray[np.float64]


def policy_series(base: ReplayBase, change: PolicyChange, points: int = 12) -> Series:
    """Every association's usage and FairShare at ``points`` times from the window's start to the
    snapshot, each a replay read at that time (the last one is ``base``'s own). Once per policy:
    a selection then reads its row (infinite FairShare as 0)."""
    start, end = base.since, datetime.fromtimestamp(base.when, base.snap.taken_at.tzinfo)
    step = (end - start) / points
    last = datetime.fromtimestamp(base.last, end.tzinfo)  # the capture's last cycle: base is read at it
    times, parts = [], []
    for k in range(1, points + 1):
        at = end if k == points else start + step * k
        at_base = base if k == points else prepare_replay(base.snap, base.jobs, base.since, last, at)
        done = replay_policy(at_base, change)
        times.append(at)
        parts.append([np.asarray(done.now_tree.usage_raw, dtype=np.float64),
                      np.asarray(done.tree.usage_raw, dtype=np.float64),
                      np.asarray(done.now.fairshare, dtype=np.float64),
                      np.asarray(done.result.fairshare, dtype=np.float64)])
    cols = [np.nan_to_num(np.stack([p[i] for p in parts]), nan=0.0, posinf=0.0, neginf=0.0) for i in range(4)]
    return Series(times, *cols)


def default_window(taken_at: datetime, half_life_s: float, first_job: float | None) -> datetime:
    """The replayed window's start: every job of the source, else ten half-lives (at least 30 days)."""
    if first_job is not None:
        return datetime.fromtimestamp(first_job - 1, taken_at.tzinfo)
    back = timedelta(days=366) if half_life_s <= 0 else max(timedelta(seconds=10 * half_life_s), timedelta(days=30))
    return taken_at - back


def enforce_hint(enforce: frozenset[str] | None) -> str:
    """The "Enforce limits" field's hint: the cluster's own, as the other fields show theirs. Yes when
    AccountingStorageEnforce has ``limits`` or ``safe`` (or ``all``: a job's last slice is charged at its
    end), no when it does not (``associations`` alone); unknown (a source without it) counts as yes, as
    the replay counts it (:meth:`~tui.engine.usage_law.UsagePolicy.of`), and says so."""
    if enforce is None:
        return "yes (AccountingStorageEnforce unknown)"
    return "yes" if UsagePolicy.of(PrioritySettings(accounting_enforce=enforce)).enforce_limits else "no"


def duration(seconds: float) -> str:
    """Slurm's ``D-HH:MM:SS``."""
    s = int(seconds)
    return f"{s // 86400}-{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def policy_line(done: PolicyReplay) -> str:
    """What the replay changed, one line (``fairtop replay --format table``'s head, the Policy screen)."""
    a, b = done.old, done.new
    changes = []
    if a.half_life_s != b.half_life_s:
        changes.append(f"half-life {duration(a.half_life_s)} -> {duration(b.half_life_s)}")
    if a.calc_period_s != b.calc_period_s:
        changes.append(f"calc period {a.calc_period_s:g} s -> {b.calc_period_s:g} s")
    if a.reset_period != b.reset_period:
        changes.append(f"reset {a.reset_period} -> {b.reset_period}")
    if a.enforce_limits != b.enforce_limits:
        changes.append(f"limits {'yes' if a.enforce_limits else 'no'} -> {'yes' if b.enforce_limits else 'no'}")
    if a.billing_mode != b.billing_mode:
        changes.append(f"billing {a.billing_mode} -> {b.billing_mode}")
    changes += [f"TRESBillingWeights of {p}" for p in sorted(b.tres_weights)
                if a.tres_weights.get(p) != b.tres_weights[p]]
    changes += [f"UsageFactor of {q} {a.usage_factor(q):g} -> {b.usage_factor(q):g}"
                for q in sorted(b.qos_usage_factor) if a.usage_factor(q) != b.usage_factor(q)]
    return "; ".join(changes) or "the cluster's own usage law"
