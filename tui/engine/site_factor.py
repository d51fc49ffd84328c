"""Allocation site factor (seed 004, HADM "Site factor"): pure functions over arrays.

For active allocations ``i`` the seed defines two fractions in [0, 1]:

* the credit factor ``f_c = 1 - C_used / C_alloc`` (unused share of the grant);
* the temporal factor ``f_t = 1 - dt_i / max_j dt_j`` (``dt``: time until expiry): 1 for an
  allocation expiring now, 0 for the one that expires last.

and two ways to combine them into the site factor ``s`` in [0, 1]:

* power rule ``s = f_c**N_c * f_t**N_t``; the seed's asymmetric example (its Figure 2) takes the
  square root of the credit factor, ``N_c = 1/2``, and biases the temporal factor towards
  allocations near expiry; the exponent is not printed in the text, so ``N_t = 2`` (the seed's
  own "squaring" example) is the default here;
* sigmoid ``s = S(f_c; l_c, x0_c) * S(f_t; l_t, x0_t)`` with
  ``S(x; l, x0) = (e^{lx} - 1)(e^l + e^{l x0}) / ((e^l - 1)(e^{lx} + e^{l x0}))`` (so that
  ``S(0) = 0`` and ``S(1) = 1``); the seed's Figure 6 uses ``l_c = 5, l_t = 50, x0_c = 0.25,
  x0_t = 0.75``.

Note: the seed says ``l = 0`` gives "a linear function of zero slope"; the formula's limit as
``l -> 0`` is in fact the identity ``S(x) = x`` (expand the exponentials to first order), which is
what :func:`sigmoid` returns for ``l = 0``.

No I/O, no clock: times until expiry are given (any one unit, e.g. seconds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "POWER_N_CREDIT", "POWER_N_TEMPORAL", "SIGMOID_CREDIT", "SIGMOID_TEMPORAL",
    "credit_factor", "temporal_factor", "power_rule", "sigmoid", "sigmoid_rule", "site_factor",
    "SiteFactorParams", "SEED_PARAMS", "site_factors",
]

#: Power-rule exponents (seed 004, Figure 2: square root on the credit factor).
POWER_N_CREDIT = 0.5
POWER_N_TEMPORAL = 2.0
#: Sigmoid parameters ``(l, x0)`` (seed 004, Figure 6).
SIGMOID_CREDIT = (5.0, 0.25)
SIGMOID_TEMPORAL = (50.0, 0.75)


def credit_factor(used: ArrayLike, granted: ArrayLike) -> np.ndarray:
    """``1 - used / granted``, clipped to [0, 1]; 0 where nothing was granted.

    Parameters
    ----------
    used, granted : array_like
        Credits consumed and granted, in one unit (e.g. resource-minutes).
    """
    u = np.asarray(used, dtype=float)
    g = np.asarray(granted, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(g > 0, 1.0 - u / np.where(g > 0, g, 1.0), 0.0)
    out: np.ndarray = np.clip(f, 0.0, 1.0)
    return out


def temporal_factor(time_to_expiry: ArrayLike) -> np.ndarray:
    """``1 - dt_i / max_j dt_j`` over the active allocations, in [0, 1].

    Parameters
    ----------
    time_to_expiry : array_like
        Time until each allocation expires (one unit, any); negative values count as 0. When
        every allocation expires now (max 0) every factor is 1.
    """
    dt: np.ndarray = np.clip(np.asarray(time_to_expiry, dtype=float), 0.0, None)
    if dt.size == 0:
        return dt
    longest = dt.max()
    if longest <= 0:
        return np.ones_like(dt)
    out: np.ndarray = np.clip(1.0 - dt / longest, 0.0, 1.0)
    return out


def power_rule(f_credit: ArrayLike, f_temporal: ArrayLike, n_credit: float = POWER_N_CREDIT,
               n_temporal: float = POWER_N_TEMPORAL) -> np.ndarray:
    """``f_c**n_c * f_t**n_t`` (seed 004 power rule), in [0, 1] for factors in [0, 1]."""
    fc: np.ndarray = np.clip(np.asarray(f_credit, dtype=float), 0.0, 1.0)
    ft: np.ndarray = np.clip(np.asarray(f_temporal, dtype=float), 0.0, 1.0)
    out: np.ndarray = np.power(fc, n_credit) * np.power(ft, n_temporal)
    return out


def sigmoid(x: ArrayLike, l: float, x0: float) -> np.ndarray:  # noqa: E741 - the seed's name
    """The seed's normalised logistic curve: ``S(0) = 0``, ``S(1) = 1``, midpoint near ``x0``.

    Computed as ``(1 - e^{-lx})(1 + e^{l(x0-1)}) / ((1 - e^{-l})(1 + e^{l(x0-x)}))``, the same
    function divided through by ``e^{l} e^{lx}``, which stays finite for large ``l``.

    Parameters
    ----------
    x : array_like
        Fractions in [0, 1] (clipped).
    l : float
        Transition rate (> 0; 0 gives the identity, the limit of the formula).
    x0 : float
        Midpoint of the transition.
    """
    xs: np.ndarray = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    if l == 0:
        return xs.copy()
    with np.errstate(over="ignore"):
        num = -np.expm1(-l * xs) * (1.0 + np.exp(l * (x0 - 1.0)))
        den = -np.expm1(-l) * (1.0 + np.exp(l * (x0 - xs)))
        quotient = num / den
    out: np.ndarray = np.clip(np.where(np.isfinite(den), quotient, 0.0), 0.0, 1.0)
    return out


def sigmoid_rule(f_credit: ArrayLike, f_temporal: ArrayLike, credit: tuple[float, float] = SIGMOID_CREDIT,
                 temporal: tuple[float, float] = SIGMOID_TEMPORAL) -> np.ndarray:
    """``S(f_c; l_c, x0_c) * S(f_t; l_t, x0_t)`` (seed 004 sigmoid site factor)."""
    out: np.ndarray = sigmoid(f_credit, *credit) * sigmoid(f_temporal, *temporal)
    return out


def site_factor(used: ArrayLike, granted: ArrayLike, time_to_expiry: ArrayLike, rule: str = "power") -> np.ndarray:
    """The site factor in [0, 1] of each active allocation, by ``rule`` ``"power"`` or
    ``"sigmoid"`` with the seed's parameters."""
    fc, ft = credit_factor(used, granted), temporal_factor(time_to_expiry)
    if rule == "power":
        return power_rule(fc, ft)
    if rule == "sigmoid":
        return sigmoid_rule(fc, ft)
    raise ValueError(f"rule must be 'power' or 'sigmoid', got {rule!r}")


@dataclass(frozen=True)
class SiteFactorParams:
    """How the site factor is formed (the config's ``[site_factor]`` table)."""

    rule: str = "power"
    """``"power"`` or ``"sigmoid"``."""
    n_credit: float = POWER_N_CREDIT
    n_temporal: float = POWER_N_TEMPORAL
    sigmoid_credit: tuple[float, float] = SIGMOID_CREDIT
    """``(l, x0)`` of the credit factor's sigmoid."""
    sigmoid_temporal: tuple[float, float] = SIGMOID_TEMPORAL
    scale: int = 10000
    """Slurm's SiteFactor is an integer added to the job priority as is: ``round(scale * s)``."""


#: Seed 004's forms and parameters.
SEED_PARAMS = SiteFactorParams()


def site_factors(used: ArrayLike, granted: ArrayLike, time_to_expiry: ArrayLike,
                 params: SiteFactorParams = SEED_PARAMS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Credit factor, temporal factor and site factor of each active allocation under ``params``.

    Parameters
    ----------
    used, granted : array_like
        Credits committed (debited + held) and granted, one unit.
    time_to_expiry : array_like
        Time until each allocation ends, one unit (any).
    """
    fc, ft = credit_factor(used, granted), temporal_factor(time_to_expiry)
    if params.rule == "power":
        return fc, ft, power_rule(fc, ft, params.n_credit, params.n_temporal)
    if params.rule == "sigmoid":
        return fc, ft, sigmoid_rule(fc, ft, params.sigmoid_credit, params.sigmoid_temporal)
    raise ValueError(f"rule must be 'power' or 'sigmoid', got {params.rule!r}")
