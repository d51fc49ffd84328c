"""Usage decay and accrual: Slurm's discrete model and the continuous what-if ODE.

Slurm (``priority/multifactor``, 22.05 ``_decay_thread``) decays usage with a per-second factor
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
import re
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
    "cycle_accrual",
    "job_usage_over_cycles",
    "usage_after_cycles",
    "next_reset",
    "parse_slurm_time",
    "parse_slurm_minutes",
    "decay_rate",
    "usage_ode",
    "usage_ode_breaks",
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


# --------------------------------------------------------------------------------------------
# Accrual
# --------------------------------------------------------------------------------------------


def cycle_accrual(
    dt_s: ArrayLike,
    billing: ArrayLike,
    half_life_s: float,
    qos_usage_factor: ArrayLike = 1.0,
) -> NDArray[np.float64] | float:
    """Raw usage one job adds over one accrual interval (spec 4.3, PM ``_apply_new_usage``).

    Parameters
    ----------
    dt_s : array_like
        Seconds the job ran inside the interval (``end - max(last_ran, job start)``); negative
        values count as 0.
    billing : array_like
        Billable TRES of the job (see :mod:`tui.engine.billing`); CPUs when the partition has no
        ``TRESBillingWeights``.
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.
    qos_usage_factor : array_like
        QOS ``UsageFactor``; Slurm treats a negative value as 1.

    Returns
    -------
    float or ndarray
        ``dt * d**dt * billing * qf`` in billing TRES-seconds: the new usage is itself decayed
        over its own interval.
    """
    dt = np.maximum(np.asarray(dt_s, dtype=np.float64), 0.0)
    qf = np.asarray(qos_usage_factor, dtype=np.float64)
    qf = np.where(qf < 0, 1.0, qf)
    d = decay_per_second(half_life_s)
    out = dt * np.power(d, dt) * np.asarray(billing, dtype=np.float64) * qf
    return scalar_or_array(out)


def job_usage_over_cycles(
    cycle_times_s: ArrayLike,
    start_s: float,
    end_s: float,
    billing: float,
    half_life_s: float,
    qos_usage_factor: float = 1.0,
    usage0: float = 0.0,
) -> NDArray[np.longdouble]:
    """Raw usage of one association after each decay cycle while one job runs and ends.

    Follows Slurm's order (spec 4.2-4.3): at every cycle the existing usage is decayed by
    ``d**(t_k - t_{k-1})``, then a job still running adds its share of ``[t_{k-1}, t_k]``. A job
    that ends between two cycles is charged at its end for ``[max(t_{k-1}, start), end]``, and
    that charge is decayed by the whole of the next cycle's interval.

    Parameters
    ----------
    cycle_times_s : array_like
        Increasing times of decay cycles in seconds (e.g. epoch). The first entry is the
        ``last_ran`` before the window; nothing is charged for time before it.
    start_s, end_s : float
        Job start and end in seconds on the same clock; ``end_s = inf`` for a job still running.
    billing : float
        Billable TRES of the job.
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.
    qos_usage_factor : float
        QOS ``UsageFactor`` (negative counts as 1).
    usage0 : float
        Raw usage at ``cycle_times_s[0]`` in billing TRES-seconds.

    Returns
    -------
    ndarray of longdouble
        Usage right after each cycle; ``[0]`` is ``usage0``. Usage is accumulated in long double
        as in Slurm (``usage_raw`` is ``long double``; increments are doubles).
    """
    t = np.asarray(cycle_times_s, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("cycle_times_s must be a non-empty 1-d sequence")
    if np.any(np.diff(t) <= 0):
        raise ValueError("cycle_times_s must be strictly increasing")
    if end_s < start_s:
        raise ValueError(f"job ends ({end_s}) before it starts ({start_s})")
    out = np.empty(t.size, dtype=np.longdouble)
    u = np.longdouble(usage0)
    out[0] = u
    for k in range(1, t.size):
        t0, t1 = t[k - 1], t[k]
        begin = max(t0, start_s)
        if end_s <= t1:
            # Ended inside this interval: charged at job end, then decayed with everything else.
            if end_s > t0:
                u += np.longdouble(cycle_accrual(end_s - begin, billing, half_life_s, qos_usage_factor))
            u *= np.longdouble(decay_factor(half_life_s, t1 - t0))
        else:
            u *= np.longdouble(decay_factor(half_life_s, t1 - t0))
            if start_s < t1:
                u += np.longdouble(cycle_accrual(t1 - begin, billing, half_life_s, qos_usage_factor))
        out[k] = u
    return out


def usage_after_cycles(
    usage0: ArrayLike,
    n_cycles: int,
    period_s: float,
    half_life_s: float,
    increment: ArrayLike = 0.0,
) -> NDArray[np.float64] | float:
    """Usage after ``n_cycles`` equal cycles, each decaying then adding ``increment``.

    Closed form of ``u <- u * q + a`` with ``q = d**period``:
    ``u_n = u0 * q**n + a * (1 - q**n) / (1 - q)``. It equals Slurm's repeated multiplication to
    within a few ulps.

    Parameters
    ----------
    usage0 : array_like
        Usage before the first cycle (billing TRES-seconds).
    n_cycles : int
        Number of cycles (>= 0).
    period_s : float
        Seconds per cycle (``PriorityCalcPeriod``).
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.
    increment : array_like
        Usage added at each cycle after the decay, e.g. :func:`cycle_accrual` of a job that
        runs through every cycle.

    Returns
    -------
    float or ndarray
        Usage after the last cycle, billing TRES-seconds.
    """
    if n_cycles < 0:
        raise ValueError("n_cycles must be >= 0")
    q = float(decay_factor(half_life_s, period_s))
    u0 = np.asarray(usage0, dtype=np.float64)
    a = np.asarray(increment, dtype=np.float64)
    qn = q**n_cycles
    # Geometric sum; with no decay (q == 1) it is just n * a.
    geo = n_cycles if q == 1.0 else -math.expm1(n_cycles * math.log(q)) / (1.0 - q)
    out = u0 * qn + a * geo
    return scalar_or_array(out)


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


# --------------------------------------------------------------------------------------------
# Slurm time strings
# --------------------------------------------------------------------------------------------

_TIMESPEC = re.compile(r"[0-9:\-]+")


def parse_slurm_time(text: str) -> int | None:
    """Parse a Slurm duration (``time_str2secs``) into seconds.

    Accepted forms: ``min``, ``min:sec``, ``hr:min:sec``, ``days-hr``, ``days-hr:min``,
    ``days-hr:min:sec``; ``INFINITE``/``UNLIMITED``/``-1`` mean no limit.

    Parameters
    ----------
    text : str
        E.g. ``"7-0"`` (7 days), ``"14-00:00:00"``, ``"90"`` (90 minutes), ``"5:30"``
        (5 min 30 s).

    Returns
    -------
    int or None
        Seconds; ``None`` for an infinite value.

    Raises
    ------
    ValueError
        For anything Slurm would reject (``NO_VAL``).
    """
    s = text.strip()
    if s.upper() in ("-1", "INFINITE", "UNLIMITED"):
        return None
    # Slurm's sscanf would read a leading '-' as a negative day count; no option wants that.
    if not s or s.startswith("-") or not _TIMESPEC.fullmatch(s) or not _valid_timespec(s):
        raise ValueError(
            f"not a Slurm time {text!r}: expected minutes, min:sec, hr:min:sec, "
            "days-hr, days-hr:min or days-hr:min:sec"
        )
    if "-" in s:
        days, _, rest = s.partition("-")
        parts = [int(x) if x else 0 for x in rest.split(":")] if rest else []
        h, m, sec = (parts + [0, 0, 0])[:3]
        return int(days or 0) * 86400 + h * 3600 + m * 60 + sec
    parts = [int(x) if x else 0 for x in s.split(":")]
    if len(parts) == 3:
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 60


def _valid_timespec(s: str) -> bool:
    """``_is_valid_timespec`` in parse_time.c: digit groups vs dashes and colons."""
    digits = len(re.findall(r"[0-9]+", s))
    dash, colon = s.count("-"), s.count(":")
    if not digits or dash > 1 or colon > 2:
        return False
    if dash and ":" in s.split("-", 1)[0]:
        return False  # a colon before the dash
    need = {1: 3, 2: 4} if dash else {1: 2, 2: 3}
    return digits >= need.get(colon, 0)


def parse_slurm_minutes(text: str) -> int | None:
    """Parse a Slurm duration the way slurm.conf time options are read (``time_str2mins``).

    Seconds round up to whole minutes, so the result in seconds is a multiple of 60. This is
    how ``PriorityDecayHalfLife``, ``PriorityMaxAge`` and job time limits are stored.

    Parameters
    ----------
    text : str
        A Slurm duration, see :func:`parse_slurm_time`.

    Returns
    -------
    int or None
        Whole minutes; ``None`` for an infinite value.
    """
    secs = parse_slurm_time(text)
    return None if secs is None else (secs + 59) // 60


# --------------------------------------------------------------------------------------------
# Continuous model (what-if planning)
# --------------------------------------------------------------------------------------------


def decay_rate(half_life: float) -> float:
    """``lambda = ln 2 / half_life`` (per unit of time of ``half_life``); 0 for no decay."""
    return 0.0 if half_life <= 0 else math.log(2.0) / float(half_life)


def usage_ode_breaks(
    breaks: ArrayLike, rates: ArrayLike, half_life: float, u0: float = 0.0
) -> NDArray[np.float64]:
    """Exact usage at each breakpoint of a piecewise-constant charge rate.

    Parameters
    ----------
    breaks : array_like
        Increasing times ``b_0 < b_1 < ... < b_{k-1}`` at which the rate changes.
    rates : array_like
        ``c_i``, the charge rate on ``[b_i, b_{i+1})`` (usage per unit time, e.g. billing
        TRES-seconds per second = billable TRES); the last rate holds after ``b_{k-1}``.
    half_life : float
        Half-life in the same time unit as ``breaks`` (0: no decay).
    u0 : float
        Usage at ``b_0``.

    Returns
    -------
    ndarray
        ``u(b_i)`` for every break.
    """
    b = np.asarray(breaks, dtype=np.float64)
    c = np.asarray(rates, dtype=np.float64)
    if b.ndim != 1 or b.shape != c.shape or b.size == 0:
        raise ValueError("breaks and rates must be 1-d and of the same non-zero length")
    if np.any(np.diff(b) <= 0):
        raise ValueError("breaks must be strictly increasing")
    lam = decay_rate(half_life)
    u = np.empty_like(b)
    u[0] = u0
    for i in range(1, b.size):
        u[i] = _ode_piece(u[i - 1], c[i - 1], lam, b[i] - b[i - 1])
    return u


def usage_ode(
    t: ArrayLike, breaks: ArrayLike, rates: ArrayLike, half_life: float, u0: float = 0.0
) -> NDArray[np.float64]:
    """Exact solution of ``du/dt = c(t) - lambda*u`` on a time grid (Yalim 2020, eq. 9).

    On each piece with constant ``c``::

        u(t) = c/lambda + (u_i - c/lambda) * exp(-lambda * (t - b_i))

    and ``u_i + c * (t - b_i)`` when there is no decay. The steady state of a constant rate is
    ``c / lambda``.

    Parameters
    ----------
    t : array_like
        Times at which to evaluate (any shape), ``>= breaks[0]``.
    breaks, rates, half_life, u0
        See :func:`usage_ode_breaks`.

    Returns
    -------
    ndarray
        ``u(t)``, same shape as ``t``, in units of rate x time.
    """
    b = np.asarray(breaks, dtype=np.float64)
    c = np.asarray(rates, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    if np.any(tt < b[0]):
        raise ValueError("usage_ode: times before the first break are undefined (no initial value)")
    ub = usage_ode_breaks(b, c, half_life, u0)
    i = np.searchsorted(b, tt, side="right") - 1  # piece containing each t
    return _ode_piece(ub[i], c[i], decay_rate(half_life), tt - b[i])


def _ode_piece(u0: ArrayLike, c: ArrayLike, lam: float, tau: ArrayLike) -> NDArray[np.float64]:
    """Closed form over one constant-rate piece; expm1 keeps small ``lambda*tau`` accurate."""
    u0 = np.asarray(u0, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    tau = np.asarray(tau, dtype=np.float64)
    if lam == 0.0:
        return u0 + c * tau
    em1 = np.expm1(-lam * tau)  # exp(-lambda tau) - 1
    return u0 * (1.0 + em1) - (c / lam) * em1
