"""Fairshare control analytics for Slurm's classic algorithm (Yalim, PEARC'20, seed 000).

With one share per user, classic fairshare is ``F = 2**(-U/(S*d)) = 2**(-u/(d*ubar))``, where
``u`` is a user's raw usage, ``ubar`` the mean raw usage of the population and ``d`` the
``FairShareDampeningFactor``. So ``u* = d*ubar`` is the usage that halves a user's fairshare,
and it can be read back from any single user: ``ubar = u / (-log2 F)`` (paper section 2.1.3;
the paper writes ``u / log2 F``, which has the wrong sign for ``F < 1``).

A site can hold ``u*`` at a target either by padding the population with an artificial user of
usage ``w = u*(N-1)`` (N counting that user) that is topped up as it decays, or by setting
``d = u*/ubar`` (paper eq. 5 and 7).

Units: usage in any unit (core-hours in the paper, billing TRES-seconds in Slurm), as long as
inputs agree; times in the unit of the half-life given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine._numeric import scalar_or_array
from tui.engine.decay import decay_factor, decay_per_second, exact_decay_factor

__all__ = [
    "mean_usage",
    "mean_usage_interval",
    "halving_usage",
    "dampening_for_target",
    "slurm_dampening_for_target",
    "fairshare_at",
    "usage_for_fairshare",
    "padding",
    "padding_decay",
    "time_to_decay",
    "Upkeep",
    "padding_upkeep",
    "dampening_drift",
]


def mean_usage(fairshare: ArrayLike, raw_usage: ArrayLike) -> NDArray[np.float64] | float:
    """Mean usage (times the dampening factor) read from one user: ``u / (-log2 F)``.

    Parameters
    ----------
    fairshare : array_like
        The user's classic fairshare factor ``F`` in (0, 1).
    raw_usage : array_like
        The user's raw usage ``u`` (any usage unit).

    Returns
    -------
    float or ndarray
        ``d * ubar`` in the unit of ``raw_usage``; NaN where ``F`` is not in (0, 1) (F = 1
        says nothing about the mean, F = 0 is an underflowed report).

    Notes
    -----
    In general ``-log2 F = u / (S d sum(u))``, so this returns ``S * d * sum(u)``: the usage that
    halves *this* user's fairshare. With one share per user (``S = 1/N``, the paper's setting)
    that is ``d * ubar``, the same for everyone.
    """
    f = np.asarray(fairshare, dtype=np.float64)
    u = np.asarray(raw_usage, dtype=np.float64)
    ok = (f > 0) & (f < 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(ok, u / -np.log2(np.where(ok, f, 0.5)), np.nan)
    return scalar_or_array(out)


def mean_usage_interval(
    fairshare: ArrayLike,
    raw_usage: ArrayLike,
    fairshare_decimals: int = 6,
    usage_decimals: int = 3,
) -> tuple[NDArray[np.float64] | float, NDArray[np.float64] | float]:
    """Range of :func:`mean_usage` consistent with rounded inputs.

    sshare prints FairShare with 6 decimals, so ``F`` is only known to +-5e-7; for a small ``F``
    that is a large relative error: ``d ubar / ubar = dF / (F ln2 (-log2 F))``, e.g. +-0.12 %
    (+-11.8 core-hours of 10,188) at ``F = 0.000043``. ``ubar`` grows with both ``F`` and ``u``,
    so the ends of the range come from the ends of both input intervals.

    Parameters
    ----------
    fairshare, raw_usage : array_like
        Rounded values as printed.
    fairshare_decimals, usage_decimals : int
        Decimals they were rounded to.

    Returns
    -------
    (low, high)
        Bounds of ``u / (-log2 F)`` over ``F +- 0.5e-k`` and ``u +- 0.5e-m``.
    """
    f = np.asarray(fairshare, dtype=np.float64)
    u = np.asarray(raw_usage, dtype=np.float64)
    df = 0.5 * 10.0**-fairshare_decimals
    du = 0.5 * 10.0**-usage_decimals
    return mean_usage(f - df, u - du), mean_usage(np.minimum(f + df, np.nextafter(1.0, 0.0)), u + du)


def halving_usage(mean: ArrayLike, dampening: ArrayLike = 1.0) -> NDArray[np.float64] | float:
    """Usage per fairshare halving, ``u* = d * ubar`` (paper section 3).

    Parameters
    ----------
    mean : array_like
        Mean raw usage of the population ``ubar``.
    dampening : array_like
        ``FairShareDampeningFactor`` ``d``.

    Returns
    -------
    float or ndarray
        Usage after which a user's fairshare halves, in the unit of ``mean``.
    """
    out = np.asarray(mean, dtype=np.float64) * np.asarray(dampening, dtype=np.float64)
    return scalar_or_array(out)


def dampening_for_target(target: ArrayLike, mean: ArrayLike) -> NDArray[np.float64] | float:
    """Dampening factor that makes fairshare halve every ``target`` usage: ``d = u*/ubar`` (eq. 7).

    Parameters
    ----------
    target : array_like
        Target halving usage ``u*``.
    mean : array_like
        Current mean raw usage ``ubar`` (same unit).

    Returns
    -------
    float or ndarray
        The real-valued factor. Slurm only takes integers, see
        :func:`slurm_dampening_for_target`.
    """
    out = np.asarray(target, dtype=np.float64) / np.asarray(mean, dtype=np.float64)
    return scalar_or_array(out)


def slurm_dampening_for_target(target: float, mean: float) -> int:
    """The ``FairShareDampeningFactor`` Slurm can actually take for a target.

    Slurm reads the factor as a 16-bit unsigned integer (slurm.conf ``FairShareDampeningFactor``,
    ``scontrol`` too; the paper notes this); 0 is not allowed. The result is ``u*/ubar`` rounded
    to the nearest integer and clamped to [1, 65535], so the precision is poor when ``ubar`` is
    close to ``u*``.

    Parameters
    ----------
    target, mean : float
        ``u*`` and ``ubar`` in the same unit.

    Returns
    -------
    int
    """
    if mean <= 0:
        return 65535  # no usage yet: as much dampening as Slurm allows
    d = float(dampening_for_target(target, mean))
    return int(min(max(round(d), 1), 65535))


def fairshare_at(usage: ArrayLike, halving: ArrayLike) -> NDArray[np.float64] | float:
    """Fairshare under control: ``F = 2**(-u/u*)`` (paper section 3).

    Parameters
    ----------
    usage : array_like
        A user's raw usage.
    halving : array_like
        ``u* = d * ubar`` in the same unit.

    Returns
    -------
    float or ndarray
        Fairshare in (0, 1].
    """
    out = np.exp2(-np.asarray(usage, dtype=np.float64) / np.asarray(halving, dtype=np.float64))
    return scalar_or_array(out)


def usage_for_fairshare(fairshare: ArrayLike, halving: ArrayLike) -> NDArray[np.float64] | float:
    """Raw usage at which fairshare reaches ``F``: ``u = -u* log2 F`` (inverse of :func:`fairshare_at`)."""
    out = -np.asarray(halving, dtype=np.float64) * np.log2(np.asarray(fairshare, dtype=np.float64))
    return scalar_or_array(out)


def padding(target: ArrayLike, n_users: ArrayLike) -> NDArray[np.float64] | float:
    """Usage of the artificial user so that fairshare halves every ``target``: ``w = u*(N-1)``.

    Parameters
    ----------
    target : array_like
        Target halving usage ``u*`` (e.g. core-seconds).
    n_users : array_like
        Users in the system, including the artificial one (paper eq. 5 and Table 1).

    Returns
    -------
    float or ndarray
        Padding ``w`` in the unit of ``target``.
    """
    out = np.asarray(target, dtype=np.float64) * (np.asarray(n_users, dtype=np.float64) - 1.0)
    return scalar_or_array(out)


def padding_decay(
    w: ArrayLike,
    period: float,
    half_life: float,
    model: Literal["exact", "slurm"] = "exact",
) -> NDArray[np.float64] | float:
    """Usage the padding loses over ``period`` with no upkeep: the upkeep needed per period.

    Parameters
    ----------
    w : array_like
        Padding (usage).
    period, half_life : float
        Same time unit. For ``model="slurm"`` both must be seconds.
    model : {"exact", "slurm"}
        ``exact``: ``w (1 - 2**(-period/HL))`` (the paper's Table 1);
        ``slurm``: ``w (1 - (1 - 0.693/HL)**period)``, what Slurm really removes.

    Returns
    -------
    float or ndarray
        Usage lost, in the unit of ``w``.
    """
    keep = exact_decay_factor(half_life, period) if model == "exact" else decay_factor(half_life, period)
    out = np.asarray(w, dtype=np.float64) * (1.0 - keep)
    return scalar_or_array(out)


def time_to_decay(
    w: float,
    amount: float,
    half_life: float,
    model: Literal["exact", "slurm"] = "exact",
) -> float:
    """Time until a padding ``w`` has lost ``amount`` (when to run the next upkeep job).

    Parameters
    ----------
    w, amount : float
        Padding and the loss that triggers an upkeep, same unit; ``0 <= amount < w``.
    half_life : float
        Half-life (seconds for ``model="slurm"``).
    model : {"exact", "slurm"}
        ``exact``: ``-HL log2(1 - amount/w)``; ``slurm``: ``ln(1 - amount/w) / ln d``.

    Returns
    -------
    float
        Time in the unit of ``half_life``.
    """
    if not 0 <= amount < w:
        raise ValueError(f"amount must be in [0, w): got amount={amount!r}, w={w!r}")
    keep = math.log1p(-amount / w)
    if model == "exact":
        return -half_life * keep / math.log(2.0)
    d = decay_per_second(half_life)
    if d >= 1.0:
        return math.inf
    return keep / math.log(d)


@dataclass(frozen=True)
class Upkeep:
    """A simulated upkeep of the artificial user's padding (paper Figure 1).

    Attributes
    ----------
    times : float64 array
        Check times (unit of the half-life given), the first at 0.
    before, after : float64 arrays
        Padding just before and just after each check's upkeep job.
    ran : bool array
        Whether an upkeep job ran at that check.
    """

    times: NDArray[np.float64]
    before: NDArray[np.float64]
    after: NDArray[np.float64]
    ran: NDArray[np.bool_]

    def worst_slip(self, target: float) -> float:
        """Largest relative distance from ``target`` at any time (decay is monotone between
        checks, so the extremes are the values just before and just after a check)."""
        return float(max(np.max(np.abs(self.before - target)), np.max(np.abs(self.after - target))) / target)


def padding_upkeep(
    w: float,
    amount: float,
    check_every: float,
    half_life: float,
    horizon: float,
    model: Literal["exact", "slurm"] = "exact",
) -> Upkeep:
    """Simulate the paper's upkeep rule: every ``check_every``, if the padding is below ``w``,
    run one upkeep job that adds ``amount``.

    The paper's numbers (section 2.1.2): ``w = 90e9`` core-seconds, ``amount = 1.5e9``, a check
    every 4 hours, a one-week half-life. A 4-hour decay (1.47e9) is a little less than one
    upkeep, so the padding settles in a band about ``w`` of width ``amount`` plus one check's
    decay, which keeps it within 2 % (:meth:`Upkeep.worst_slip`).

    Parameters
    ----------
    w : float
        Target padding (usage), also the padding at time 0.
    amount : float
        Usage one upkeep job adds.
    check_every, half_life, horizon : float
        Same time unit (seconds for ``model="slurm"``).
    model : {"exact", "slurm"}
        ``exact``: ``2**(-t/HL)``; ``slurm``: Slurm's ``(1 - 0.693/HL)**t``, the same
        whatever the ``PriorityCalcPeriod`` (cycles multiply to ``d**t``).

    Returns
    -------
    Upkeep
    """
    if check_every <= 0 or horizon < 0:
        raise ValueError("check_every must be > 0 and horizon >= 0")
    keep = float(exact_decay_factor(half_life, check_every) if model == "exact"
                 else decay_factor(half_life, check_every))
    n = int(math.floor(horizon / check_every + 1e-9)) + 1
    before = np.empty(n)
    after = np.empty(n)
    ran = np.zeros(n, dtype=bool)
    u = float(w)
    for i in range(n):
        if i:
            u *= keep
        before[i] = u
        if u < w:
            u += amount
            ran[i] = True
        after[i] = u
    return Upkeep(np.arange(n, dtype=np.float64) * float(check_every), before, after, ran)


def dampening_drift(target: float, mean: float, times: ArrayLike, half_life: float,
                    mean_rate: float = 0.0) -> NDArray[np.float64]:
    """The real-valued dampening ``u*/ubar(t)`` over time (paper eq. 7) as the mean usage decays.

    ``ubar(t) = c/lambda + (ubar - c/lambda) exp(-lambda t)`` with ``c = mean_rate``, the mean
    usage added per unit time (0: the population stops; the factor then doubles every
    half-life).

    Parameters
    ----------
    target, mean : float
        ``u*`` and today's ``ubar`` (same usage unit).
    times : array_like
        Times from now (unit of ``half_life``).
    half_life : float
    mean_rate : float
        Mean usage added per user per unit time.

    Returns
    -------
    ndarray
        The dampening factor ``d`` to set at each time.
    """
    t = np.asarray(times, dtype=np.float64)
    lam = 0.0 if half_life <= 0 else math.log(2.0) / half_life
    if lam == 0.0:
        ubar = mean + mean_rate * t
    else:
        ubar = mean_rate / lam + (mean - mean_rate / lam) * np.exp(-lam * t)
    return float(target) / ubar
