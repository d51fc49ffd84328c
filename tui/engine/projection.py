"""Usage over time: the projection of a whole tree, the continuous ODE, and recovery.

Slurm's discrete law (each cycle decays by ``d**dt`` and charges every running job
``dt_j * d**dt_j * billing * qos_usage_factor``, spec section 4) lives in
:mod:`tui.engine.usage_law` (:func:`charge_series`, :func:`cycle_accrual`, ... are re-exported
here); this module projects a tree with it.

For planning, usage is also modelled continuously (Yalim, PEARC'20, eq. 8-9)::

    du/dt = c(t) - lambda * u,   lambda = ln 2 / HL

with ``c(t)`` piecewise constant; every piece has an exact closed form.

:func:`add_usage` charges usage to an association and its ancestors (spec 1.2), and
:func:`recovery_curve` recomputes a fairshare while one association's usage decays and the
others' hold steady. Pure functions; times in seconds, usage in billing TRES-seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine import compute
from tui.engine._numeric import scalar_or_array
from tui.engine.decay import decay_factor, decay_rate
from tui.engine.path_rank import PathRank
from tui.engine.tree import structure
from tui.engine.usage_law import (
    Law,
    charge_series,
    cycle_accrual,
    decay_series,
    job_usage_over_cycles,
)
from tui.model import AssocTree, PbsTree, path_to, rows_by_depth

__all__ = [
    "add_usage",
    "cycle_accrual",
    "decay_rate",
    "job_usage_over_cycles",
    "PbsSeries",
    "UsageProjection",
    "charge_series",
    "decay_series",
    "project_pbs",
    "observed_rate",
    "project_usage",
    "recovery_curve",
    "steady_rate",
    "usage_after_cycles",
    "usage_ode",
    "usage_ode_breaks",
]


# --------------------------------------------------------------------------------------------
# Accrual
# --------------------------------------------------------------------------------------------


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
    if algorithm == "fair_tree" and not tree.is_user[row]:
        fairshare[:] = np.nan  # a Fair Tree account has no factor
        return usage, fairshare
    # Fair Tree: only the sibling groups on the row's path move (tui.engine.path_rank); the
    # whole tree where the row inherits a tie from elsewhere.
    added = np.asarray(-(u0 - usage), dtype=np.longdouble)
    ranks = PathRank(tree, structure(tree), row).ranks(added) if algorithm == "fair_tree" \
        else np.zeros(t.size, dtype=np.int64)
    for i in range(t.size):
        if usage[i] == u0 and fairshare_now is not None:
            fairshare[i] = fairshare_now
        elif ranks[i]:
            fairshare[i] = ranks[i] / float(tree.user_count)
        else:
            changed = tree if usage[i] == u0 else add_usage(tree, row, -(u0 - usage[i]))
            fairshare[i] = compute(changed, algorithm, dampening).fairshare[row]
    return usage, fairshare


# --------------------------------------------------------------------------------------------
# Projection of a whole tree over time (what-if planning, issue 9)
# --------------------------------------------------------------------------------------------
#
# Every association's usage is linear in its starting usage and in the charges, and decay
# multiplies every association by the same factor. So the projected usage of the tree at step
# ``k`` is low-rank::
#
#     usage[k] = usage0 * decay[k] + rate_total * rate_series[k] + sum_j charges[j, k] * path_j
#
# with scalar series shared by all associations (``decay``, ``rate_series``), one series per
# job (``charges``) and ``path_j`` the job's association and its ancestors. Nothing of size
# steps x associations is ever formed: a step of the whole tree is one multiply-add, a
# charged association's whole series is a handful of vector operations.

@dataclass(frozen=True, eq=False)
class UsageProjection:
    """Raw usage of every association at every time, kept in low-rank form.

    ``usage(k) = usage0 * decay[k] + rate * rate_series[k] + sum_j charges[j, k] * path(j)``.

    Attributes
    ----------
    times_s : float64 array (m,)
        Seconds from now.
    usage0 : longdouble array (n,)
        Raw usage now (billing TRES-seconds), accounts including their descendants.
    decay : float64 array (m,)
        :func:`decay_series`.
    rate : float64 array (n,)
        Usage rate kept by every association (billing TRES per second, propagated to
        ancestors); zeros when others only decay.
    rate_series : float64 array (m,)
        What a rate of 1 from now has added at each time.
    rows : int64 array (J,)
        Association each job charges.
    charges : float64 array (J, m)
        :func:`charge_series`.
    paths : list of int64 arrays
        ``paths[j]``: the job's association and every direct ancestor (spec 1.2).
    then : Charges or None
        The jobs given to :func:`project_usage` as ``then``: the last of ``rows``.
    """

    times_s: NDArray[np.float64]
    usage0: np.ndarray
    decay: NDArray[np.float64]
    rate: NDArray[np.float64]
    rate_series: NDArray[np.float64]
    rows: NDArray[np.int64]
    charges: NDArray[np.float64]
    paths: list[NDArray[np.int64]]
    then: Charges | None = None

    def at(self, k: int) -> np.ndarray:
        """Usage of every association at step ``k`` (longdouble, shape (n,))."""
        u = self.usage0 * np.longdouble(self.decay[k])
        if self.rate_series[k]:
            u = u + (self.rate * self.rate_series[k]).astype(np.longdouble)
        for j, path in enumerate(self.paths):
            if self.charges[j, k]:
                u[path] += np.longdouble(self.charges[j, k])
        return u

    def of(self, rows: ArrayLike) -> NDArray[np.float64]:
        """Usage of ``rows`` at every step, shape (m, len(rows)), longdouble."""
        r = np.asarray(rows, dtype=np.int64)
        out = np.outer(self.decay.astype(np.longdouble), self.usage0[r])
        if np.any(self.rate[r]):
            out += np.outer(self.rate_series, self.rate[r]).astype(np.longdouble)
        if self.paths:
            out += self.charged(r).T
        return out

    def charged(self, rows: ArrayLike, steps: ArrayLike | None = None) -> NDArray[np.float64]:
        """What the jobs have added to ``rows`` at ``steps`` (default all), shape (len(rows), steps).

        One pass over (job, row on its path) pairs: thousands of running jobs cost milliseconds
        where a dense job x row incidence matrix took minutes at 100k associations.
        """
        r = np.asarray(rows, dtype=np.int64).reshape(-1)
        c = self.charges if steps is None else self.charges[:, np.asarray(steps, dtype=np.int64)]
        if not self.paths or not r.size:
            return np.zeros((r.size, c.shape[1]))
        uniq, inv = np.unique(r, return_inverse=True)
        nodes = np.concatenate(self.paths)
        lut = np.full(int(max(uniq.max(), nodes.max())) + 1, -1, dtype=np.int64)
        lut[uniq] = np.arange(uniq.size)
        job = np.repeat(np.arange(len(self.paths)), [p.size for p in self.paths])
        pos = lut[nodes]
        keep = np.flatnonzero(pos >= 0)
        out = np.zeros((uniq.size, c.shape[1]))
        if keep.size:  # sum the pairs' charge rows per row: sorted, then one reduceat (add.at is slow)
            order = keep[np.argsort(pos[keep], kind="stable")]
            p = pos[order]
            starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
            out[p[starts]] = np.add.reduceat(c[job[order]], starts, axis=0)
        return out[inv.reshape(-1)]


@dataclass(frozen=True, eq=False)
class Charges:
    """Jobs' :func:`charge_series` and paths, made once and given to :func:`project_usage` again
    (``then``): a planner re-projects on every edit, and the source's running jobs (12,600 at
    100k associations) charge the same at the same times each time."""

    rows: NDArray[np.int64]
    charges: NDArray[np.float64]
    paths: list[NDArray[np.int64]]


def precharge(tree: AssocTree, rows: ArrayLike, start_s: ArrayLike, end_s: ArrayLike, billing: ArrayLike,
              times_s: ArrayLike, half_life_s: float, calc_period_s: float = 300.0, law: Law = "slurm",
              resets_s: ArrayLike = (), enforce_limits: bool = True) -> Charges:
    """The :class:`Charges` of some jobs (arguments as :func:`project_usage`'s)."""
    t = np.asarray(times_s, dtype=np.float64)
    r = np.asarray(rows, dtype=np.int64).reshape(-1)
    if np.any((r < 0) | (r >= tree.size)):
        raise ValueError("a charged row is outside the association tree")
    charges = (charge_series(t, start_s, end_s, billing, half_life_s, calc_period_s, law, resets_s, enforce_limits)
               if r.size else np.zeros((0, t.size)))
    return Charges(r, charges, [np.asarray(path_to(tree, int(x)), dtype=np.int64) for x in r])


def project_usage(
    tree: AssocTree,
    rows: ArrayLike,
    start_s: ArrayLike,
    end_s: ArrayLike,
    billing: ArrayLike,
    times_s: ArrayLike,
    half_life_s: float,
    calc_period_s: float = 300.0,
    law: Law = "slurm",
    resets_s: ArrayLike = (),
    rate: ArrayLike | None = None,
    then: Charges | None = None,
    enforce_limits: bool = True,
) -> UsageProjection:
    """Project every association's raw usage while jobs run and everything decays.

    Parameters
    ----------
    tree : AssocTree
        Usage now (``usage_raw``).
    rows, start_s, end_s, billing : array_like, shape (J,)
        One charge per job: association row, start and end in seconds from now, billable TRES
        per second (times the copies running at once).
    times_s : array_like, shape (m,)
        Increasing times from now in seconds, the first normally 0.
    half_life_s, calc_period_s, law, resets_s
        See :func:`charge_series`.
    rate : array_like, shape (n,), optional
        Usage rate each association keeps on its own (billing TRES per second, not including
        descendants: it is summed up the tree here), e.g. from two snapshots. None: zero.
    then : Charges, optional
        Further jobs already charged (:func:`precharge`, on the same times and law), after these.
    enforce_limits : bool
        AccountingStorageEnforce has ``limits``/``safe``: a job's last slice is charged at its
        end (:func:`tui.engine.usage_law.charge_series`).

    Returns
    -------
    UsageProjection
    """
    t = np.asarray(times_s, dtype=np.float64)
    own_jobs = precharge(tree, rows, start_s, end_s, billing, t, half_life_s, calc_period_s, law, resets_s,
                         enforce_limits)
    r, charges, paths = own_jobs.rows, own_jobs.charges, own_jobs.paths
    if then is not None and then.rows.size:
        if then.charges.shape[1] != t.size:
            raise ValueError("then: charged on other times")
        r, charges, paths = np.concatenate([r, then.rows]), np.vstack([charges, then.charges]), paths + then.paths
    own = np.zeros(tree.size) if rate is None else np.asarray(rate, dtype=np.float64).copy()
    if own.shape != (tree.size,):
        raise ValueError("rate must have one value per association")
    total = own.copy()
    if own.any():  # an account's rate includes its descendants', as its usage does
        for level in reversed(rows_by_depth(tree.depth())[1:]):
            total += np.bincount(tree.parent[level], weights=total[level], minlength=tree.size)
    if own.any():
        rate_series = charge_series(t, [0.0], [np.inf], [1.0], half_life_s, calc_period_s, law, resets_s)[0]
    else:
        rate_series = np.zeros(t.size)
    return UsageProjection(t, tree.usage_raw.astype(np.longdouble), decay_series(t, half_life_s, calc_period_s,
                           law, resets_s), total, rate_series, r, charges, paths, then)


def steady_rate(tree: AssocTree, half_life_s: float, calc_period_s: float = 300.0,
                law: Law = "slurm") -> NDArray[np.float64]:
    """Own usage rate of every association that would hold its usage where it is now.

    Pass it as ``rate`` to :func:`project_usage` to model "everyone else keeps running as they
    do", the assumption under which a fairshare recovers at all (if everyone only decays, every
    ratio stays frozen). Slurm law: ``u (1 - q) / (P d**P)`` with ``q = d**P``, so each cycle
    adds exactly what it decays; continuous: ``lambda u``. An association's own usage is its
    raw usage minus its children's (an account's is normally 0).

    Returns
    -------
    float64 array (n,)
        Billing TRES per second.
    """
    usage = tree.usage_raw.astype(np.float64)
    own = usage - np.bincount(tree.parent[1:], weights=usage[1:], minlength=tree.size)
    own = np.maximum(own, 0.0)
    if half_life_s <= 0:
        return np.zeros(tree.size)
    if law == "continuous":
        return own * decay_rate(half_life_s)
    q = float(decay_factor(half_life_s, calc_period_s))
    return own * (1.0 - q) / float(cycle_accrual(calc_period_s, 1.0, half_life_s))


# --------------------------------------------------------------------------------------------
# PBS Professional: usage halves (by fairshare_decay_factor) every fairshare_decay_time
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PbsSeries:
    """PBS usage, ``fairshare_tree_usage`` and ``fairshare_factor`` of some entities per step.

    Attributes
    ----------
    rows : int64 array (r,)
    usage : float64 array (m, r)
        Usage in ``fairshare_usage_res`` units (1 means zero).
    tree_usage : float32 array (m, r)
    factor : float64 array (m, r)
        ``2**(-tree_usage / tree_percentage)`` (0 where the percentage is 0).
    """

    rows: NDArray[np.int64]
    usage: NDArray[np.float64]
    tree_usage: NDArray[np.float32]
    factor: NDArray[np.float64]


def project_pbs(
    tree: PbsTree,
    rows: ArrayLike,
    start_s: ArrayLike,
    end_s: ArrayLike,
    rate: ArrayLike,
    times_s: ArrayLike,
    watch: ArrayLike,
    decay_factor_pbs: float = 0.5,
    decay_time_s: float = 86400.0,
    first_decay_s: float | None = None,
) -> PbsSeries:
    """Project a PBS fairshare tree: jobs accrue usage, every node decays at each decay time.

    OpenPBS (spec 7.3) adds a running job's usage to every node from ``TREEROOT`` to its
    entity, and every ``fairshare_decay_time`` multiplies every node by the (float)
    ``fairshare_decay_factor``, flooring at 1. Accrual is modelled continuously (the scheduler
    adds it each cycle; the part after a job's last cycle, which PBS loses, is counted), so a
    job's usage at ``t`` is ``rate * f**n(t) * (W(min(e, t)) - W(s))`` with ``n`` the decays done
    and ``W(x) = integral of f**-n`` up to ``x``. The factor follows ``calc_usage_factor`` along
    the path of each watched entity, in float as :func:`tui.engine.pbs.fairshare_tree_usage`.

    Parameters
    ----------
    tree : PbsTree
    rows, start_s, end_s, rate : array_like (J,)
        Entity charged, start and end in seconds from now, usage units per second.
    times_s : array_like (m,)
        Seconds from now.
    watch : array_like (r,)
        Entities to report.
    decay_factor_pbs : float
        ``fairshare_decay_factor`` (0 < f < 1).
    decay_time_s : float
        ``fairshare_decay_time`` in seconds.
    first_decay_s : float, optional
        Seconds from now to the next decay (default: a whole ``decay_time``).

    Returns
    -------
    PbsSeries
    """
    from tui.engine.pbs import decay_multiplier, percentages
    from tui.engine.pbs_tree import MIN_USAGE, depth_levels, path_rows

    t = np.asarray(times_s, dtype=np.float64)
    f = decay_multiplier(decay_factor_pbs)
    first = decay_time_s if first_decay_s is None else float(first_decay_s)
    n_dec = int(max(0.0, math.floor((t.max(initial=0.0) - first) / decay_time_s)) + 2)
    events = first + np.arange(n_dec) * decay_time_s           # decay times

    def n_at(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.searchsorted(events, x, side="right").astype(np.float64)

    # W at every event, then W(x) = W(start of its piece) + (x - piece start) f**-n.
    bounds = np.concatenate([[0.0], events])
    w_b = np.concatenate([[0.0], np.cumsum(np.diff(bounds) * f ** -np.arange(n_dec, dtype=np.float64))])

    def big_w(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.maximum(x, 0.0)
        n = n_at(x).astype(np.int64)
        out: NDArray[np.float64] = w_b[n] + (x - bounds[n]) * f ** -n.astype(np.float64)
        return out

    parent = np.asarray(tree.parent, dtype=np.int64)
    r = np.asarray(rows, dtype=np.int64).reshape(-1)
    s = np.asarray(start_s, dtype=np.float64).reshape(-1, 1)
    e = np.asarray(end_s, dtype=np.float64).reshape(-1, 1)
    c = np.asarray(rate, dtype=np.float64).reshape(-1, 1)
    decayed = f ** n_at(t)
    charges = c * decayed * np.maximum(big_w(np.minimum(e, t)) - big_w(s), 0.0)  # (J, m)
    w = np.asarray(watch, dtype=np.int64).reshape(-1)
    # Watched entities, their ancestors and TREEROOT.
    need: list[int] = []
    for watched in w:
        node = int(watched)
        while node >= 0 and node not in need:
            need.append(node)
            node = int(parent[node])
    col = {x: i for i, x in enumerate(need)}
    usage0 = np.asarray(tree.usage, dtype=np.float64)
    u = np.outer(decayed, usage0[need])
    for j, row in enumerate(r):
        node = int(row)
        while node >= 0:
            if node in col:
                u[:, col[node]] += charges[j]
            node = int(parent[node])
    u = np.maximum(u, MIN_USAGE)
    group, perc = percentages(tree, depth_levels(parent))
    v = (u / u[:, [col[0]]]).astype(np.float32)
    uf = np.zeros_like(v)
    for x in sorted(need, key=lambda x: len(path_rows(parent, x))):
        if x == 0:
            continue
        i = col[x]
        if parent[x] == 0:
            uf[:, i] = v[:, i]
        else:
            uf[:, i] = v[:, i] + (uf[:, col[int(parent[x])]] - v[:, i]) * group[x]
    idx = [col[int(x)] for x in w]
    p = perc[w].astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(p > 0, np.power(2.0, -(uf[:, idx] / np.where(p > 0, p, 1)).astype(np.float64)), 0.0)
    return PbsSeries(w, u[:, idx], uf[:, idx], factor)



def observed_rate(usage_then: ArrayLike, usage_now: ArrayLike, parent: ArrayLike, dt_s: float,
                  half_life_s: float, calc_period_s: float = 300.0) -> NDArray[np.float64]:
    """Own usage rate of every association between two snapshots, under Slurm's law.

    Solves ``u_now = u_then * D(dt) + r * A(dt)`` per association, with ``D`` the decay over
    ``dt`` and ``A`` what a rate of 1 adds (:func:`decay_series`, :func:`charge_series`), then
    removes the children's rates (an account's usage includes theirs) and clips at 0.

    Parameters
    ----------
    usage_then, usage_now : array_like (n,)
        Raw usage of the same associations, ``dt_s`` apart (billing TRES-seconds).
    parent : array_like (n,)
        Parent rows (pre-order, -1 for the root).
    dt_s : float
        Seconds between the snapshots (> 0).
    half_life_s, calc_period_s : float

    Returns
    -------
    float64 array (n,)
        Billing TRES per second each association adds on its own; pass as ``rate`` to
        :func:`project_usage` to keep everyone's recent pace.
    """
    if dt_s <= 0:
        raise ValueError("the earlier snapshot must be older than the current one")
    then = np.asarray(usage_then, dtype=np.float64)
    now = np.asarray(usage_now, dtype=np.float64)
    par = np.asarray(parent, dtype=np.int64)
    d = float(decay_series([dt_s], half_life_s, calc_period_s)[0])
    unit = float(charge_series([dt_s], [0.0], [np.inf], [1.0], half_life_s, calc_period_s)[0, 0])
    if unit <= 0:  # shorter than one calc period: no cycle ran, no rate can be seen
        return np.zeros(now.size)
    inclusive = np.maximum((now - then * d) / unit, 0.0)
    own = inclusive - np.bincount(par[1:], weights=inclusive[1:], minlength=now.size)
    return np.maximum(own, 0.0)
