"""Usage over time: Slurm's discrete decay and accrual, the continuous ODE, and recovery.

Slurm (``priority/multifactor``, 22.05 ``_decay_thread``) multiplies every association's raw
usage by ``d**dt`` each cycle (``d = 1 - 0.693/HL``, :mod:`tui.engine.decay`) and adds
``dt_j * d**dt_j * billing * qos_usage_factor`` for every running job (spec section 4).

For planning, usage is also modelled continuously (Yalim, PEARC'20, eq. 8-9)::

    du/dt = c(t) - lambda * u,   lambda = ln 2 / HL

with ``c(t)`` piecewise constant; every piece has an exact closed form.

:func:`add_usage` charges usage to an association and its ancestors (spec 1.2), and
:func:`recovery_curve` recomputes a fairshare while one association's usage decays and the
others' hold steady. Pure functions; times in seconds, usage in billing TRES-seconds.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine import compute
from tui.engine._numeric import scalar_or_array
from tui.engine.decay import decay_factor, decay_per_second
from tui.model import AssocTree, path_to

__all__ = [
    "add_usage",
    "cycle_accrual",
    "decay_rate",
    "job_usage_over_cycles",
    "recovery_curve",
    "usage_after_cycles",
    "usage_ode",
    "usage_ode_breaks",
]


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
    u: NDArray[np.float64] = np.asarray(u0, dtype=np.float64)
    rate: NDArray[np.float64] = np.asarray(c, dtype=np.float64)
    t: NDArray[np.float64] = np.asarray(tau, dtype=np.float64)
    if lam == 0.0:
        return u + rate * t
    em1 = np.expm1(-lam * t)  # exp(-lambda tau) - 1
    return u * (1.0 + em1) - (rate / lam) * em1


# --------------------------------------------------------------------------------------------
# Charging an association, and recovery
# --------------------------------------------------------------------------------------------


def add_usage(tree: AssocTree, row: int, amount: float) -> AssocTree:
    """A copy of ``tree`` with ``amount`` added to ``row`` and every direct ancestor (spec 1.2)."""
    usage = tree.usage_raw.copy()
    usage[path_to(tree, row)] += np.longdouble(amount)
    return AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, usage,
                     tree.sibling_order)


def recovery_curve(tree: AssocTree, row: int, seconds: ArrayLike, half_life_s: float,
                   algorithm: str = "fair_tree", dampening: float = 1,
                   fairshare_now: float | None = None,
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Raw usage and fairshare of ``row`` at ``seconds`` from now if it runs nothing more.

    Slurm decays every association by the same factor, so decay alone moves no ratio; what
    moves a fairshare is that *this* usage decays while others keep running. Modelled: everyone
    else's usage holds steady, this row's decays by Slurm's per-second factor, and its ancestors
    lose the same amount. The engine recomputes the whole tree at every time after the first.

    ``fairshare_now``, when given, is used where the usage has not moved (saves an engine pass).

    Returns
    -------
    (usage, fairshare) : float64 arrays aligned with ``seconds``
        Fairshare is NaN where the algorithm gives the row none (Fair Tree accounts).
    """
    t = np.asarray(seconds, dtype=np.float64)
    u0 = float(tree.usage_raw[row])
    if half_life_s > 0:
        usage = u0 * np.asarray(decay_factor(half_life_s, t), dtype=np.float64)
    else:
        usage = np.full(t.shape, u0)
    fairshare = np.empty(t.shape)
    for i in range(t.size):
        if usage[i] == u0 and fairshare_now is not None:
            fairshare[i] = fairshare_now
            continue
        changed = tree if usage[i] == u0 else add_usage(tree, row, -(u0 - usage[i]))
        fairshare[i] = compute(changed, algorithm, dampening).fairshare[row]
    return usage, fairshare
