"""Usage decay: Slurm's per-second factor, half-lives and PriorityUsageResetPeriod.

Usage over time (accrual per cycle, the continuous ODE, recovery) is in
:mod:`tui.engine.projection`. Slurm (``priority/multifactor``, 22.05 ``_decay_thread``) decays usage
with a per-second factor
``d = 1 - 0.693 / HL``, a first-order stand-in for ``2**(-1/HL)``; each cycle multiplies every
association's raw usage by ``d**dt`` with ``dt`` the whole seconds since the previous cycle, and
adds ``dt_j * d**dt_j * billing * qos_usage_factor`` for every running job (spec section 4).

For planning, usage is also modelled continuously (Yalim, PEARC'20, eq. 8-9)::

    du/dt = c(t) - lambda * u,   lambda = ln 2 / HL

with ``c(t)`` piecewise constant; every piece has an exact closed form.

All functions are pure and accept numpy arrays where it makes sense. Times are seconds unless a
docstring says otherwise; usage is in billing TRES-seconds (what ``sshare`` calls RawUsage).
"""

from __future__ import annotations

import math
import sys
from datetime import date, datetime, time, timedelta, timezone
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine._numeric import scalar_or_array

__all__ = [
    "SLURM_LN2",
    "ResetPeriod",
    "decay_per_second",
    "decay_factor",
    "exact_decay_factor",
    "half_life_from_factor",
    "effective_half_life",
    "next_reset",
    "decay_rate",
]

#: The constant Slurm uses for ln 2 in ``1 - 0.693/HL`` (PM ``_decay_thread``).
SLURM_LN2 = 0.693

#: Smallest positive normal double; Slurm floors a cycle's decay factor at ``DBL_MIN``.
_DBL_MIN = sys.float_info.min


# --------------------------------------------------------------------------------------------
# Decay factors
# --------------------------------------------------------------------------------------------


def decay_per_second(half_life_s: float) -> float:
    """Slurm's per-second decay factor.

    Parameters
    ----------
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds. 0 (or negative) means no decay.

    Returns
    -------
    float
        ``1 - 0.693 / half_life_s``, or 1.0 when ``half_life_s <= 0``. Dimensionless, per second.
    """
    if half_life_s <= 0:
        return 1.0
    return 1.0 - SLURM_LN2 / float(half_life_s)


def decay_factor(half_life_s: float, dt_s: ArrayLike) -> NDArray[np.float64] | float:
    """Factor by which one Slurm decay cycle of ``dt_s`` seconds multiplies usage.

    Parameters
    ----------
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds (0: no decay).
    dt_s : array_like
        Seconds since the previous cycle. Slurm uses whole seconds (a ``time_t`` difference);
        fractional values are accepted for planning.

    Returns
    -------
    float or ndarray
        ``d**dt_s``, floored at ``DBL_MIN`` as Slurm does; exactly 1 where ``dt_s <= 0``
        (Slurm skips the decay then).
    """
    d = decay_per_second(half_life_s)
    dt = np.asarray(dt_s, dtype=np.float64)
    out = np.where(dt > 0, np.maximum(np.power(d, np.maximum(dt, 0.0)), _DBL_MIN), 1.0)
    return scalar_or_array(out)


def exact_decay_factor(half_life_s: float, dt_s: ArrayLike) -> NDArray[np.float64] | float:
    """The ideal exponential ``2**(-dt/HL)``, for comparison with :func:`decay_factor`.

    Parameters
    ----------
    half_life_s : float
        Half-life in seconds (0: no decay, factor 1).
    dt_s : array_like
        Elapsed time in seconds.

    Returns
    -------
    float or ndarray
        Dimensionless factor.
    """
    dt = np.asarray(dt_s, dtype=np.float64)
    out = np.ones_like(dt) if half_life_s <= 0 else np.exp2(-dt / float(half_life_s))
    return scalar_or_array(out)


def half_life_from_factor(
    factor: float, period_s: float = 1.0, *, model: Literal["slurm", "exact"] = "slurm"
) -> float:
    """The ``PriorityDecayHalfLife`` that gives ``factor`` over ``period_s`` seconds.

    Inverse of :func:`decay_factor` (``model="slurm"``) or :func:`exact_decay_factor`
    (``model="exact"``). Useful to translate "usage loses 9.4% a day" into a half-life.

    Parameters
    ----------
    factor : float
        Multiplier applied over ``period_s``, in (0, 1]. 1 means no decay (returns 0).
    period_s : float
        Length of the period in seconds.
    model : {"slurm", "exact"}
        ``slurm`` solves ``(1 - 0.693/HL)**period = factor``; ``exact`` solves
        ``2**(-period/HL) = factor``.

    Returns
    -------
    float
        Half-life in seconds (0.0 for ``factor == 1``, Slurm's "no decay").
    """
    if not 0.0 < factor <= 1.0:
        raise ValueError(f"decay factor must be in (0, 1], got {factor!r}")
    if period_s <= 0:
        raise ValueError(f"period must be positive, got {period_s!r} s")
    if factor == 1.0:
        return 0.0
    if model == "exact":
        return -period_s * math.log(2.0) / math.log(factor)
    # d = factor**(1/period); HL = 0.693 / (1 - d).  -expm1(log(f)/p) keeps 1-d accurate.
    one_minus_d = -math.expm1(math.log(factor) / period_s)
    return SLURM_LN2 / one_minus_d


def effective_half_life(half_life_s: float) -> float:
    """Time after which Slurm's decay really halves usage.

    Because ``0.693 < ln 2``, Slurm's per-second factor is slightly too large and usage halves a
    little later than the configured half-life (7-0: 604,928.1 s, about 2 minutes late).

    Parameters
    ----------
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.

    Returns
    -------
    float
        ``ln(1/2) / ln(d)`` in seconds; ``inf`` when there is no decay.
    """
    d = decay_per_second(half_life_s)
    if d >= 1.0:
        return math.inf
    # log of the rounded double d, since that is the number Slurm raises to powers.
    return math.log(0.5) / math.log(d)


def decay_rate(half_life: float) -> float:
    """``lambda = ln 2 / half_life`` (per unit of time of ``half_life``); 0 for no decay."""
    return 0.0 if half_life <= 0 else math.log(2.0) / float(half_life)



# --------------------------------------------------------------------------------------------
# PriorityUsageResetPeriod
# --------------------------------------------------------------------------------------------

ResetPeriod = Literal["NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"]


def next_reset(period: str, last_reset: datetime, now: datetime | None = None) -> datetime | None:
    """When ``PriorityUsageResetPeriod`` next zeroes all usage (PM ``_next_reset``).

    Times are wall-clock times in the controller's local zone: pass naive datetimes in that zone
    or aware ones with its tzinfo. Midnight is computed on the wall clock; DAILY and WEEKLY
    then step by whole 24 h / 7 d as Slurm does (so across a DST change the reset lands at
    23:00 or 01:00 local, as in Slurm).

    Parameters
    ----------
    period : str
        NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY (case-insensitive).
    last_reset : datetime
        Time of the last reset (Slurm starts from the controller's start time).
    now : datetime, optional
        For DAILY/WEEKLY, Slurm skips whole periods while ``next + period < now`` (a
        controller that was down for weeks resets once, not once per missed week).

    Returns
    -------
    datetime or None
        The next reset time; ``None`` for NONE and NOW (NOW resets once at start-up).
        The reset happens at the first decay cycle with ``cycle time >= next reset``.
    """
    p = period.strip().upper()
    if p in ("NONE", "NOW"):
        return None
    midnight = datetime.combine(last_reset.date(), time(0), tzinfo=last_reset.tzinfo)
    if p in ("DAILY", "WEEKLY"):
        if p == "DAILY":
            step, first = timedelta(days=1), timedelta(days=1)
        else:
            # C's tm_wday: Sunday 0 ... Saturday 6; Python's weekday(): Monday 0 ... Sunday 6.
            wday = (last_reset.weekday() + 1) % 7
            step, first = timedelta(days=7), timedelta(days=7 - wday)
        nxt = _add_seconds(midnight, first)
        if now is not None:
            while _add_seconds(nxt, step) < now:
                nxt = _add_seconds(nxt, step)
        return nxt
    y, m = last_reset.year, last_reset.month
    if p == "MONTHLY":
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    elif p == "QUARTERLY":
        y, m = (y + 1, 1) if m >= 10 else (y, (m - 1) // 3 * 3 + 4)
    elif p == "YEARLY":
        y, m = y + 1, 1
    else:
        raise ValueError(
            f"unknown PriorityUsageResetPeriod {period!r}; expected one of "
            "NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY"
        )
    return datetime.combine(date(y, m, 1), time(0), tzinfo=last_reset.tzinfo)


def _add_seconds(t: datetime, delta: timedelta) -> datetime:
    """Add elapsed seconds (Slurm adds to a ``time_t``), not wall-clock days."""
    if t.tzinfo is None or t.utcoffset() is None:
        return t + delta
    return (t.astimezone(timezone.utc) + delta).astimezone(t.tzinfo)


