"""Where everyone stands: a snapshot together with the engine's results for it.

Built off the UI thread (the engine is pure), handed to the app in one piece, never mutated.
A Slurm snapshot gets its fairshare result; a PBS snapshot its PBS fairshare. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from tui.engine import compute
from tui.engine import pbs as pbs_engine
from tui.engine.pbs import PbsFairshare
from tui.engine.result import FairshareResult
from tui.model import Snapshot
from tui.slurm_releases import release

if TYPE_CHECKING:  # the reconciliation: only for a source that printed its values (not the demo)
    from tui.analysis.reconcile import OrderFix, Reconciliation


@dataclass(frozen=True, eq=False)
class Standing:
    """A snapshot, its fairshare results, and whose standing it is."""

    snapshot: Snapshot
    fairshare: FairshareResult | None
    """Slurm engine results aligned with ``snapshot.tree`` rows (None without a Slurm tree)."""
    me: str = ""
    my_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Rows that are ``me``: user associations of the Slurm tree, or the PBS entity of that name."""
    pbs: PbsFairshare | None = None
    """PBS engine results aligned with ``snapshot.pbs`` rows (None without a PBS tree)."""
    reconciliation: Reconciliation | None = None
    """The engine's cells against the scheduler's printed ones (None: the source printed none)."""
    order_fixes: tuple[OrderFix, ...] = ()
    """Fair Tree orders the inputs left undecided, taken from the printed values (the snapshot's
    tree then carries the usage that gives them)."""

    def usage_unknown(self, row: int) -> str:
        """Why the usage (and so the fairshare) of ``row`` is unknown; "" when it is known."""
        caps = self.snapshot.capabilities
        if caps is not None and "usage" not in caps:
            return f"{self.snapshot.source} gives no usage"
        private = self.snapshot.private
        if private is not None and private.partial:
            if row in self.snapshot.usage_unknown:
                hides = ",".join(sorted(private.hides)) or "usage"
                return f"PrivateData={hides} hides it from {private.reader or 'you'}"
            return ""
        if row in self.snapshot.usage_unknown:
            return "sshare does not list this association (slurmrestd does)"
        return ""

    @property
    def partial(self) -> bool:
        """PrivateData left associations out: only the printed values hold, the engine's do not."""
        return self.snapshot.private is not None and self.snapshot.private.partial

    @property
    def algorithm(self) -> str:
        """``fair_tree``, ``classic`` or ``pbs``."""
        return "pbs" if self.snapshot.tree is None and self.snapshot.pbs is not None \
            else self.snapshot.settings.algorithm


def build_standing(snapshot: Snapshot, me: str = "", check_printed: bool = True) -> Standing:
    """Run the engine on ``snapshot`` with the cluster's algorithm and dampening factor.

    ``check_printed=False`` skips the reconciliation with the printed columns (and the orders
    taken from them): for a first snapshot drawn before sacctmgr's sibling order arrives, where a
    disagreement could be the missing order rather than the engine's."""
    none = np.zeros(0, dtype=np.int64)
    tree = snapshot.tree
    if tree is None:
        if snapshot.pbs is None:
            return Standing(snapshot, None, me)
        mine = np.flatnonzero(snapshot.pbs.name == me) if me else none
        return Standing(snapshot, None, me, mine, pbs_engine.compute(snapshot.pbs))
    settings = snapshot.settings
    result = compute(tree, settings.algorithm, settings.dampening)
    fixes: tuple[OrderFix, ...]
    rec, fixes = None, ()
    partial = snapshot.private is not None and snapshot.private.partial
    if snapshot.printed is not None and check_printed and not partial:
        from tui.analysis.reconcile import order_from_printed, reconcile

        printer = release(snapshot.scheduler_version)  # blank where that release prints nothing
        rec = reconcile(tree, result, snapshot.printed, settings.dampening, snapshot.usage_unknown, release=printer)
        if settings.algorithm == "fair_tree" and any(d.column == "FairShare" for d in rec.disagreements):
            fixed, fixes = order_from_printed(tree, snapshot.printed, result=result)
            if fixes:
                fixed_result = compute(fixed, settings.algorithm, settings.dampening)
                fixed_rec = reconcile(fixed, fixed_result, snapshot.printed, settings.dampening,
                                      snapshot.usage_unknown, release=printer)
                if len(fixed_rec.disagreements) < len(rec.disagreements):
                    snapshot, tree, result, rec = replace(snapshot, tree=fixed), fixed, fixed_result, fixed_rec
                else:
                    fixes = ()
    mine = np.flatnonzero(tree.is_user & (tree.user == me)) if me else none
    return Standing(snapshot, result, me, mine, reconciliation=rec, order_fixes=fixes)
