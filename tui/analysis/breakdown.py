"""Why an association has the fairshare it has: every step from the root, as ``pbsfs -g`` does for PBS.

:func:`explain_slurm` walks the path from the root to one association of a
:class:`~tui.standing.Standing` and gives, per level, the inputs (raw shares, level shares, raw
usage) and the formula with its numbers for normalized shares, effective usage and (Fair Tree)
level fairshare and the position among siblings; then the fairshare factor, a sentence in words,
and the priority parts of the association's pending jobs. Values are the engine's; printed
numbers are the strings ``sshare -l`` would print (:func:`tui.formats.sshare.sshare_cells`).

No Textual here: the breakdown pane only renders an :class:`Explanation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tui.analysis.rank_path import fair_tree_siblings, rank_path
from tui.analysis.standing import Standing
from tui.engine.result import FairshareResult
from tui.formats.sshare import PARENT_LEVEL_FS, sshare_cells
from tui.model import NO_VAL, USE_PARENT, AssocTree, path_to
from tui.slurm_releases import release

__all__ = [
    "Explanation",
    "JobParts",
    "Step",
    "describe_duration",
    "explain_slurm",
    "halving_usage_classic",
    "halving_usage_level_fs",
    "level_fs_text",
    "sibling_position",
]


PARENT_USER_LEVEL_FS = ("LevelFS = parent: none of its own (sshare prints it empty); Fair Tree sorts it as "
                        "+inf, before every sibling with a number and tied with its parent siblings")


def level_fs_text(value: float | None, transparent: bool) -> str:
    """A LevelFS for people: ``parent`` for a ``parent`` association, ``inf`` for no usage, else
    sshare's six decimals (the what-if's before and after use it too)."""
    if transparent:
        return PARENT_LEVEL_FS
    if value is None or math.isnan(value):
        return "-"
    return "inf" if math.isinf(value) else f"{value:f}"


@dataclass(frozen=True)
class Step:
    """One association on the path from the root to the explained row.

    Text fields hold numbers as ``sshare -l`` prints them; formulas show the numbers used.
    """

    row: int
    label: str
    depth: int
    """Depth in the association tree (root 0)."""
    raw_shares: str
    """``"30"``, ``"parent"`` or ``""`` (root)."""
    level_shares: int | None
    """Sum of raw shares of the siblings at this level (None for the root)."""
    transparent: bool
    """A ``parent`` association: skipped, its children sit at its fairshare parent's level."""
    usage_raw: float
    """Raw usage, billing TRES-seconds (decayed)."""
    norm_shares: str
    shares_formula: str
    norm_usage: str
    effective_usage: str
    usage_formula: str
    level_fs: str = ""
    """Fair Tree only; ``inf`` without usage."""
    level_fs_formula: str = ""
    position: int | None = None
    """Fair Tree: 1-based place among siblings sorted by LevelFS (1 = ranked first)."""
    siblings: int | None = None
    note: str = ""
    tied: int = 1
    """Fair Tree: siblings with exactly this LevelFS, itself included (1: no tie)."""

    @property
    def place_text(self) -> str:
        """``place 5 of 5``, ``tied with all 24 (equal LevelFS)``, ``place 3 of 9 · tied with 2 others``."""
        if self.position is None or self.siblings is None:
            return ""
        if self.tied == self.siblings > 1:
            return f"tied with all {self.siblings:,} (equal LevelFS)"
        text = f"place {self.position:,} of {self.siblings:,}"
        if self.tied > 1:
            text += f" · tied with {self.tied - 1:,} other{'s' if self.tied > 2 else ''}"
        return text


@dataclass(frozen=True)
class JobParts:
    """The priority of one pending job and its weighted parts, as ``sprio -l`` prints them."""

    job_id: str
    partition: str
    priority: int | None
    parts: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Explanation:
    """The full breakdown of one association's fairshare."""

    algorithm: str
    row: int
    label: str
    is_user: bool
    steps: tuple[Step, ...]
    """Root first, the explained row last."""
    factor: float
    """The fairshare factor the job priority uses (NaN for a Fair Tree account)."""
    factor_text: str
    """As sshare prints it (empty for a Fair Tree account)."""
    factor_formula: str
    rank: int | None
    """Fair Tree rank (N = best), None under classic or for accounts."""
    users: int
    """N, the number of user associations."""
    usage_ratio: float | None
    """Classic: E/S over the whole path. Fair Tree: U/S at the row's own level (1/LevelFS)."""
    halving_hours: float | None
    """SU (billing-hours) of further use that halve the classic
    factor (Fair Tree: the row's LevelFS); ``inf`` if no amount does, None if undefined."""
    summary: str
    jobs: tuple[JobParts, ...] = ()
    rank_lines: tuple[str, ...] = ()
    """Fair Tree users: how the places along the path add up to the rank (:mod:`rank_path`)."""


def sibling_position(tree: AssocTree, result: FairshareResult, row: int) -> tuple[int, int, int | None]:
    """Place of ``row`` among its Fair Tree siblings, in the order Fair Tree visits them.

    Siblings are the fairshare parent's children, sorted by LevelFS descending, users before
    accounts on equal LevelFS, then ``children_list`` order (as :mod:`tui.engine.fair_tree`).

    Returns
    -------
    (position, count, predecessor)
        1-based position, number of siblings, and the row sorted just before it (None if first).
    """
    order = fair_tree_siblings(tree, result, row)
    k = int(np.flatnonzero(order == row)[0])
    return k + 1, len(order), (int(order[k - 1]) if k else None)


def halving_usage_classic(effective_usage: float, norm_shares: float, root_usage: float,
                          dampening: float = 1) -> float:
    """Raw usage that halves a classic fairshare factor, charged at once to the row's path.

    Derivation. Let the fairshare path be ``root = a0, a1, ..., ak = row`` with
    ``r_j = shares(a_j)/level_shares(a_j)`` and ``N_j = u_j / R``. Classic sets ``E_1 = N_1``
    and ``E_j = N_j + (E_{j-1} - N_j) r_j``, so ``E_k = sum_j c_j N_j`` with
    ``c_j = (1 - r_j) prod_{i>j} r_i`` (``r_1 := 0``), and the ``c_j`` telescope to
    ``sum_j c_j = 1``. A job of usage ``x`` adds ``x`` to the row and to every ancestor,
    root included (spec 1.2), so every ``N_j`` becomes ``(u_j + x)/(R + x)`` and::

        E(x) = (E0 R + x) / (R + x)          E(x) - E0 = x (1 - E0) / (R + x)

    The factor ``F = 2^(-E/(S d))`` halves when ``E`` grows by ``S d``::

        x = S d R / (1 - E0 - S d)

    For a user at the root level of a flat tree ``E0 = u/R`` and ``S = s/sum(s)``, so this is
    ``x = S d R / (1 - u/R - S d)``, about ``S d R`` when both are small: the user's
    share of the cluster's decayed usage. That limit, with ``R`` held fixed, is
    :func:`tui.engine.control.halving_usage` (``u* = d * ubar`` for one share per user); here
    the job's own usage also grows ``R``, so the exact figure is larger. Each further halving costs
    more (``E`` cannot pass 1);
    when ``1 - E0 <= S d`` no usage halves it. Decay during the job is ignored (immediate
    charge), ``parent`` accounts on the path change nothing (they are not on the fairshare path
    and their ``r`` is 1).

    Parameters
    ----------
    effective_usage : float
        ``E0``, EffectvUsage now.
    norm_shares : float
        ``S``, NormShares (classic: the product along the path).
    root_usage : float
        ``R``, the root's raw usage (billing TRES-seconds).
    dampening : float
        FairShareDampeningFactor ``d``.

    Returns
    -------
    float
        ``x`` in billing TRES-seconds; ``inf`` if no usage halves the factor, NaN if ``S <= 0``
        (the factor is already 0).
    """
    s_d = norm_shares * dampening
    if norm_shares <= 0:
        return math.nan
    room = 1.0 - effective_usage - s_d
    if room <= 0:
        return math.inf
    return s_d * root_usage / room


def halving_usage_level_fs(usage: float, parent_usage: float) -> float:
    """Raw usage that halves a Fair Tree LevelFS ``S/U`` with ``U = u/P``.

    The usage ``x`` reaches the row and its fairshare parent (an ancestor), so
    ``U(x) = (u + x)/(P + x)``; ``LF`` halves when ``U`` doubles: ``x = u P / (P - 2u)``.

    Returns
    -------
    float
        Billing TRES-seconds; ``inf`` if ``2u >= P`` (U cannot double), NaN with no usage
        (LevelFS is ``inf``; any usage makes it finite).
    """
    if usage <= 0:
        return math.nan
    if 2 * usage >= parent_usage:
        return math.inf
    return usage * parent_usage / (parent_usage - 2 * usage)


def describe_duration(seconds: float) -> str:
    """``604800`` -> ``"7 days"``, ``50400`` -> ``"14 hours"``, ``90`` -> ``"90 seconds"``."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0 or seconds >= 2 * size:
            n = seconds / size
            text = f"{n:g}" if n == int(n) else f"{n:.1f}"
            return f"{text} {unit}{'' if n == 1 else 's'}"
    return f"{seconds:g} seconds"


def _hours(x: float) -> str:
    """Billing TRES-seconds as hours: thousands separated, small values to 3 digits."""
    h = x / 3600
    return f"{h:,.0f}" if h >= 100 else f"{h:.3g}"


def _shares_text(tree: AssocTree, row: int) -> str:
    raw = int(tree.shares_raw[row])
    return "parent" if raw == USE_PARENT else ("" if row == 0 or raw == NO_VAL else str(raw))


def _root_step(tree: AssocTree, cells: dict[str, list[str]], algorithm: str) -> Step:
    """The root: all shares, effective usage 1, its usage is the cluster's total."""
    usage = float(tree.usage_raw[0])
    if algorithm == "classic":
        shares, eff = "the root holds all shares: 1", f"the root: E = 1; R = {usage:,.0f} is the cluster's total usage"
    else:
        shares, eff = "the root is not ranked", f"the root: U = 1; {usage:,.0f} is the cluster's total usage"
    return Step(0, tree.label(0), 0, "", None, False, usage, cells["NormShares"][0], shares, "",
                cells["EffectvUsage"][0], eff)


def _classic_steps(standing: Standing, path: list[int], cells: dict[str, list[str]]) -> list[Step]:
    tree = standing.snapshot.tree
    res = standing.fairshare
    assert tree is not None and res is not None  # checked by explain()
    st = res.structure
    steps: list[Step] = []
    ratios: list[str] = []  # "(own/level)" of the non-parent levels so far, root first
    for depth, r in enumerate(path[1:], start=1):
        usage = float(tree.usage_raw[r])
        label = tree.label(r)
        ls = int(st.level_shares[r])
        fp = int(st.fs_parent[r])
        norm = f"N = {usage:,.0f} / {float(tree.usage_raw[0]):,.0f} = {cells['NormUsage'][r]}"
        if st.use_parent[r]:
            steps.append(Step(r, label, depth, "parent", ls, True, usage, cells["NormShares"][r],
                              f"parent: takes {tree.label(fp)}'s NormShares", cells["NormUsage"][r],
                              cells["EffectvUsage"][r], f"parent: E = E({tree.label(fp)}); {norm}",
                              note="transparent: its children sit at its parent's level"))
            continue
        own = int(tree.shares_raw[r])
        ratios.append(f"({own}/{ls})")
        shares = " × ".join(reversed(ratios)) + f" = {cells['NormShares'][r]}"
        if ls == 0:
            shares = f"all siblings have 0 shares: 0 = {cells['NormShares'][r]}"
        if fp == 0:
            eff = f"E = N (first level) = {usage:,.0f} / {float(tree.usage_raw[0]):,.0f} = {cells['EffectvUsage'][r]}"
        elif ls == 0:
            eff = f"E = E({tree.label(fp)}) = {cells['EffectvUsage'][r]} (no shares at this level); {norm}"
        else:
            eff = (f"E = N + (E_parent − N) × {own}/{ls} = {cells['NormUsage'][r]} + "
                   f"({cells['EffectvUsage'][fp]} − {cells['NormUsage'][r]}) × {own}/{ls} = "
                   f"{cells['EffectvUsage'][r]}")
        steps.append(Step(r, label, depth, str(own), ls, False, usage, cells["NormShares"][r], shares,
                          cells["NormUsage"][r], cells["EffectvUsage"][r], eff))
    return steps


def _fair_tree_steps(standing: Standing, path: list[int], cells: dict[str, list[str]]) -> list[Step]:
    tree = standing.snapshot.tree
    res = standing.fairshare
    assert tree is not None and res is not None and res.level_fs is not None  # checked by explain()
    st = res.structure
    steps: list[Step] = []
    for depth, r in enumerate(path[1:], start=1):
        usage = float(tree.usage_raw[r])
        label = tree.label(r)
        ls = int(st.level_shares[r])
        fp = int(st.fs_parent[r])
        parent_usage = float(tree.usage_raw[fp])
        pos, count, before = sibling_position(tree, res, r)
        sibs = fair_tree_siblings(tree, res, r)
        tied = int(np.count_nonzero(res.level_fs[sibs] == res.level_fs[r]))
        note = ""
        if before is not None and res.level_fs[before] == res.level_fs[r]:
            if tied < count:  # all tied: the heading says so
                note = f"tied with {tree.label(before)}, placed just before it (equal LevelFS)"
            if not tree.is_user[r]:
                note += ("; " if note else "") + "its first user keeps the rank of the user reached just before"
        eff = f"U = usage / usage({tree.label(fp)}) = {usage:,.0f} / {parent_usage:,.0f} = {cells['EffectvUsage'][r]}"
        if st.use_parent[r]:
            steps.append(Step(r, label, depth, "parent", ls, True, usage, cells["NormShares"][r],
                              f"parent: shows {tree.label(fp)}'s level ratio", cells["NormUsage"][r],
                              cells["EffectvUsage"][r], eff, PARENT_LEVEL_FS,
                              PARENT_USER_LEVEL_FS if tree.is_user[r]
                              else "parent: transparent, its children sit at this level",
                              pos, count, note, tied))
            continue
        own = int(tree.shares_raw[r])
        shares = (f"S = {own}/{ls} = {cells['NormShares'][r]}" if ls
                  else f"S = 0 (all siblings have 0 shares) = {cells['NormShares'][r]}")
        lf = cells["LevelFS"][r]
        if own == 0 or ls == 0:
            lf_formula = "LevelFS = 0 (no shares)"
        elif usage == 0:
            lf_formula = "LevelFS = S / 0 = inf (no usage)"
        else:
            lf_formula = f"LevelFS = S / U = {cells['NormShares'][r]} / {cells['EffectvUsage'][r]} = {lf}"
        steps.append(Step(r, label, depth, str(own), ls, False, usage, cells["NormShares"][r], shares,
                          cells["NormUsage"][r], cells["EffectvUsage"][r], eff, lf, lf_formula,
                          pos, count, note, tied))
    return steps


def _jobs_of(standing: Standing, row: int) -> tuple[JobParts, ...]:
    """Pending jobs of the row's user (or account), highest priority first."""
    tree = standing.snapshot.tree
    assert tree is not None  # checked by explain()
    acct, user = str(tree.account[row]), str(tree.user[row])
    jobs = [j for j in standing.snapshot.jobs
            if j.state == "PENDING" and (row == 0 or j.account == acct) and (not user or j.user == user)]
    jobs.sort(key=lambda j: (-(j.priority or 0), j.job_id))
    return tuple(JobParts(j.job_id, j.partition, j.priority, tuple(j.factors.items())) for j in jobs)


def explain_slurm(standing: Standing, row: int) -> Explanation:
    """Explain the fairshare of ``row`` (an association row of ``standing.snapshot.tree``).

    Parameters
    ----------
    standing : Standing
        Snapshot with its engine results (classic or Fair Tree).
    row : int
        Row of the association to explain (user or account).

    Raises
    ------
    ValueError
        If the standing has no Slurm tree or ``row`` is out of range.
    """
    tree = standing.snapshot.tree
    res = standing.fairshare
    if tree is None or res is None:
        raise ValueError("no Slurm association tree in this snapshot")
    if not 0 <= row < tree.size:
        raise ValueError(f"row {row} is not in the association tree (0..{tree.size - 1})")
    settings = standing.snapshot.settings
    damp = settings.dampening
    path = path_to(tree, row)
    cells = sshare_cells(tree, res, damp, rows=[0, *path])
    half = settings.decay_half_life_s
    # Slurm's usage is every past use, decayed: not a window of the last half-life.
    window = (f"of the decayed usage (all past use, halved every {describe_duration(half)})" if half > 0
              else "of the usage since the last reset")
    label = tree.label(row)
    users = tree.user_count
    is_user = bool(tree.is_user[row])
    shares = float(res.norm_shares[row])
    eff = float(res.effective_usage[row])
    factor = float(res.fairshare[row])
    factor_text = cells["FairShare"][row]
    rank = None
    if res.algorithm == "classic":
        steps = [_root_step(tree, cells, "classic"), *_classic_steps(standing, path, cells)]
        ratio = eff / shares if shares > 0 else None
        halving = halving_usage_classic(eff, shares, float(tree.usage_raw[0]), damp) if row else math.nan
        factor_formula = (f"F = 2^(−E / S / d) = 2^(−{cells['EffectvUsage'][row]} / {cells['NormShares'][row]}"
                          f" / {damp}) = {factor_text}")
        printer = release(standing.snapshot.scheduler_version)
        if not is_user and printer.controller_classic_fairshare:  # the engine explains what sshare leaves blank
            factor_formula += (f" (fairtop's own: Slurm {printer.version}'s sshare prints no FairShare for "
                               "accounts; slurmctld uses only the users')")
        if shares <= 0:
            factor_formula = "F = 0: no shares on the path"
            summary = f"{label} has no shares (itself or an account above it): its fairshare is 0 whatever it uses."
        else:
            summary = f"{label} used {ratio:.2f}x its share {window}; fairshare {factor_text}."
            if math.isinf(halving):
                summary += " No amount of further use halves it (usage is already near the whole cluster's)."
            elif not math.isnan(halving):
                summary += f" It halves after {_hours(halving)} more SU (billing-hours)."
    else:
        steps = [_root_step(tree, cells, "fair_tree"), *_fair_tree_steps(standing, path, cells)]
        assert res.level_fs is not None and res.rank is not None  # Fair Tree results carry both
        lf = float(res.level_fs[row])
        ratio = (1.0 / lf) if lf > 0 and math.isfinite(lf) and row and not res.structure.use_parent[row] else None
        fp = int(res.structure.fs_parent[row])
        halving = (halving_usage_level_fs(float(tree.usage_raw[row]), float(tree.usage_raw[fp]))
                   if row and not res.structure.use_parent[row] else math.nan)
        where = tree.label(fp) if fp else "the cluster"
        if is_user:
            rank = int(res.rank[row])
            factor_formula = f"F = rank / N = {rank}/{users} = {factor_text}"
            ahead = int(np.count_nonzero(res.rank[tree.is_user] > rank))
            summary = (f"{label} ranks {rank:,} of {users:,} ({users:,} is best: {ahead:,} user"
                       f"{'s are' if ahead != 1 else ' is'} ahead): fairshare {rank}/{users} = {factor_text}.")
        else:
            factor_formula = "accounts have no factor: their LevelFS orders their subtree among its siblings"
            summary = f"{label} is an account: its LevelFS {cells['LevelFS'][row] or '(none)'} places its users."
        if ratio is not None:
            summary += (f" Within {where} it used {ratio:.2f}x its share {window}"
                        f" (LevelFS {cells['LevelFS'][row]}).")
        elif row and float(tree.usage_raw[row]) == 0:
            summary += " It has no usage (decayed to nothing or never): LevelFS inf."
        if math.isfinite(halving):
            summary += f" Its LevelFS halves after {_hours(halving)} more SU (billing-hours)."
    if row == 0:
        factor_formula = "the root has no factor of its own"
        summary = (f"root is the whole cluster: {_hours(float(tree.usage_raw[0]))} SU (billing-hours) "
                   f"of {window.removeprefix('of the ')}, shared among {users} user associations.")
    caps = standing.snapshot.capabilities
    if caps is not None and "usage" not in caps:
        summary = (f"{standing.snapshot.source} gives no usage, so {label}'s fairshare is unknown: only the "
                   "shares below are real (the usage figures are zeros the source left empty). "
                   "Read the usage with --slurmrestd-sshare, --slurm or --from DIR.")
    elif row in standing.snapshot.usage_unknown:
        summary = (f"{label} is in {standing.snapshot.source}'s tree but sshare does not list it, so its usage "
                   "and fairshare are unknown (counted as 0 here; a new association slurmctld has not loaded "
                   "yet, or one sshare may not show you).")
    on_path = {tree.label(r) for r in path}
    for fix in standing.order_fixes:  # an order the inputs could not decide, taken from sshare's
        if fix.first in on_path or fix.second in on_path:
            summary += " " + fix.sentence()
    path_places = rank_path(standing, row) if is_user and res.algorithm == "fair_tree" else None
    rank_lines = tuple(path_places.lines()) if path_places is not None else ()
    return Explanation(res.algorithm, row, label, is_user, tuple(steps), factor, factor_text, factor_formula,
                       rank, users, ratio, None if math.isnan(halving) else halving / 3600, summary,
                       _jobs_of(standing, row), rank_lines)
