"""The snapshot: everything fairtop knows about one cluster at one moment.

Sources fill it; the engine computes from it; the app renders it. It holds no behaviour beyond
validation and lookups, and never imports Textual.

The association tree is kept as flat numpy arrays in *pre-order* (every parent before its children,
row 0 is the root), the order ``sshare -a`` prints. Names of quantities follow Slurm:
raw shares, raw usage (billing TRES-seconds, decayed), normalized shares, effective usage,
level fairshare, fairshare factor.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Literal, overload

import numpy as np

#: ``sacctmgr ... fairshare=parent`` (``SLURMDB_FS_USE_PARENT`` in slurmdb.h).
USE_PARENT = 0x7FFFFFFF
#: Slurm's ``NO_VAL``: the root association's raw shares and level shares.
NO_VAL = 0xFFFFFFFE
#: The largest raw shares Slurm stores (uint32).
MAX_SHARES = 0xFFFFFFFF


def depth_of(parent: np.ndarray) -> np.ndarray:
    """Depth of every row given parent links (-1 = the root), by pointer jumping.

    Each pass doubles the distance jumped, so a tree of depth D takes about log2(D) passes.
    """
    anc = np.where(parent >= 0, parent, 0)
    depth = (parent >= 0).astype(np.int64)
    while True:
        step = depth[anc]
        if not step.any():
            return depth
        depth += step
        anc = anc[anc]


def rows_by_depth(depth: np.ndarray) -> list[np.ndarray]:
    """Rows grouped by depth: ``levels[d]`` holds the rows at depth ``d`` (0 first), in row order.

    A stable argsort on an int16 key, which numpy does as a radix sort.
    """
    order = np.argsort(depth.astype(np.int16), kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=0)) + 2))
    return [order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]


def path_to(tree: AssocTree, row: int) -> list[int]:
    """Rows from the root down to ``row`` through direct parents (``parent`` accounts included)."""
    out = [row]
    while tree.parent[out[-1]] >= 0:
        out.append(int(tree.parent[out[-1]]))
    return out[::-1]


class PrintedColumn(Sequence[str]):
    """One column of cells exactly as the scheduler printed them. sshare's are slices of its
    output text (where each cell starts and ends), made into Python strings only when read: the
    first frame draws ~50 rows of 20,000 (a string per cell cost ~5 ms a column, and its pages).
    Reads as a sequence of ``str`` (a cell, a slice, iteration) and equals the tuple or list of
    the same cells."""

    __slots__ = ("_cells", "_text", "_start", "_end")
    __hash__ = None  # type: ignore[assignment]  # equal to tuples, so not hashable like them

    def __init__(self, cells: Sequence[str] | np.ndarray) -> None:
        self._cells: np.ndarray | None = np.asarray(cells if isinstance(cells, np.ndarray) else list(cells),
                                                    dtype=object)
        self._text, self._start, self._end = "", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)

    @classmethod
    def sliced(cls, text: str, start: np.ndarray, end: np.ndarray) -> PrintedColumn:
        """Cell ``i`` is ``text[start[i]:end[i]]``."""
        column = cls(())
        column._cells, column._text, column._start, column._end = None, text, start, end
        return column

    @property
    def cells(self) -> np.ndarray:
        """Every cell as an object array of ``str`` (made on first use, then kept)."""
        if self._cells is None:
            cells = map(self._text.__getitem__, map(slice, self._start.tolist(), self._end.tolist()))
            self._cells = np.fromiter(cells, dtype=object, count=len(self._start))
        return self._cells

    def blank(self) -> np.ndarray:
        """True where the cell is empty."""
        empty: np.ndarray = self._start == self._end if self._cells is None else self._cells == ""
        return empty

    def __len__(self) -> int:
        return len(self._start) if self._cells is None else len(self._cells)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self.cells[index].tolist())
        if self._cells is not None:
            return str(self._cells[index])
        return self._text[self._start[index]:self._end[index]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cells.tolist())

    def tolist(self) -> list[str]:
        """Every cell, as a numpy array's ``tolist`` gives them (the tree table's columns read alike)."""
        cells: list[str] = self.cells.tolist()
        return cells

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PrintedColumn, tuple, list)):
            return len(self) == len(other) and self.cells.tolist() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"PrintedColumn({self.cells.tolist()!r})"

    def take(self, rows: np.ndarray) -> PrintedColumn:
        """The cells of ``rows`` in that order, ``""`` where a row is -1."""
        picked = self.cells[np.maximum(rows, 0)] if len(self) else np.full(len(rows), "", dtype=object)
        return PrintedColumn(np.where(rows >= 0, picked, ""))


class ModelError(ValueError):
    """A snapshot that cannot be true (a cycle, a child before its parent, ...)."""


@dataclass(frozen=True, eq=False)
class AssocTree:
    """Slurm associations as parallel arrays, in pre-order with the root at row 0.

    Attributes
    ----------
    parent : int64 array
        Row of the direct parent; -1 for the root. Always smaller than the row itself.
    is_user : bool array
        True for a user association, False for an account (and the root).
    account : object array of str
        Account name; for a user row, the account the user association belongs to.
    user : object array of str
        User name, "" for account rows.
    shares_raw : int64 array
        Raw shares (``sacctmgr`` Fairshare); :data:`USE_PARENT` for ``parent``;
        :data:`NO_VAL` for the root.
    usage_raw : longdouble array
        Raw usage in billing TRES-seconds (already decayed). An account's usage includes
        its descendants', as in Slurm.
    sibling_order : int64 array or None
        Key giving Slurm's ``children_list`` order among siblings (slurmdbd ``lft`` after a
        slurmctld start). ``None`` means row order, i.e. the order ``sshare`` prints. Only
        Fair Tree ties between sibling accounts depend on it.
    """

    parent: np.ndarray
    is_user: np.ndarray
    account: np.ndarray
    user: np.ndarray
    shares_raw: np.ndarray
    usage_raw: np.ndarray
    sibling_order: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.parent)
        for name in ("is_user", "account", "user", "shares_raw", "usage_raw"):
            if len(getattr(self, name)) != n:
                raise ModelError(f"AssocTree.{name} has {len(getattr(self, name))} rows, parent has {n}")
        if self.sibling_order is not None and len(self.sibling_order) != n:
            raise ModelError("AssocTree.sibling_order length differs from parent")
        if n == 0:
            raise ModelError("association tree is empty (no root)")
        if self.parent[0] != -1:
            raise ModelError("row 0 must be the root (parent -1)")
        rows = np.arange(n)
        if n > 1 and not np.all((self.parent[1:] >= 0) & (self.parent[1:] < rows[1:])):
            bad = int(np.flatnonzero(~((self.parent[1:] >= 0) & (self.parent[1:] < rows[1:])))[0]) + 1
            raise ModelError(f"row {bad}: parent must come before its child (pre-order, no cycles)")
        if n > 1 and np.any(self.is_user[self.parent[1:]]):
            bad = int(np.flatnonzero(self.is_user[self.parent[1:]])[0]) + 1
            raise ModelError(f"row {bad}: parent is a user association")
        if np.any(self.usage_raw < 0) or not np.all(np.isfinite(self.usage_raw)):
            raise ModelError("raw usage must be finite and >= 0")

    @property
    def size(self) -> int:
        return len(self.parent)

    @property
    def user_count(self) -> int:
        """Number of user associations (Slurm's ``g_user_assoc_count``)."""
        return int(np.count_nonzero(self.is_user))

    def label(self, row: int) -> str:
        """``account`` for an account row, ``account/user`` for a user row."""
        if self.is_user[row]:
            return f"{self.account[row]}/{self.user[row]}"
        return str(self.account[row])

    def depth(self) -> np.ndarray:
        """Depth of every row (root 0)."""
        return depth_of(self.parent)

    @classmethod
    def from_rows(
        cls,
        rows: list[tuple[int, bool, str, str, int, float]],
        sibling_order: list[int] | None = None,
    ) -> AssocTree:
        """Build from ``(parent_row, is_user, account, user, shares_raw, usage_raw)`` tuples."""
        parent, is_user, account, user, shares, usage = zip(*rows) if rows else ((),) * 6
        return cls(
            parent=np.asarray(parent, dtype=np.int64),
            is_user=np.asarray(is_user, dtype=bool),
            account=np.asarray(account, dtype=object),
            user=np.asarray(user, dtype=object),
            shares_raw=np.asarray(shares, dtype=np.int64),
            usage_raw=np.asarray(usage, dtype=np.longdouble),
            sibling_order=None if sibling_order is None else np.asarray(sibling_order, dtype=np.int64),
        )


Algorithm = Literal["fair_tree", "classic"]


@dataclass(frozen=True)
class PrioritySettings:
    """The cluster's ``priority/multifactor`` settings (``scontrol show config``)."""

    algorithm: Algorithm = "fair_tree"
    """``fair_tree`` unless PriorityFlags has NO_FAIR_TREE or DEPTH_OBLIVIOUS."""
    flags: frozenset[str] = frozenset()
    """PriorityFlags, upper case (e.g. ``MAX_TRES``)."""
    dampening: int = 1
    """FairShareDampeningFactor (classic only)."""
    decay_half_life_s: int = 7 * 86400
    """PriorityDecayHalfLife in seconds; 0 = no decay."""
    calc_period_s: int = 300
    """PriorityCalcPeriod in seconds."""
    usage_reset_period: str = "NONE"
    max_age_s: int = 7 * 86400
    """PriorityMaxAge in seconds."""
    favor_small: bool = False
    weight_age: int = 0
    weight_assoc: int = 0
    weight_fairshare: int = 0
    weight_jobsize: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    weight_tres: dict[str, float] = field(default_factory=dict)
    """PriorityWeightTRES, e.g. ``{"cpu": 1000.0, "gres/gpu": 3000.0}``."""
    accounting_enforce: frozenset[str] | None = None
    """AccountingStorageEnforce, lower case (``{"associations", "limits"}``); None: not known
    (the usage law then assumes ``limits``, which charges a job's last slice at its end)."""
    qos_usage_factors: dict[str, float] = field(default_factory=dict)
    """QOS name -> UsageFactor where the source has them (``sacctmgr show qos``)."""
    qos_no_decay: frozenset[str] = frozenset()
    """QOS with Flags=NoDecay (their own usage never decays; associations' still does)."""


#: ``MaxTime=UNLIMITED`` / ``MaxNodes=UNLIMITED``: the partition sets no limit.
UNLIMITED = -1


@dataclass(frozen=True)
class NodeType:
    """Nodes of one shape in a partition (``scontrol show node`` / slurm.conf ``NodeName``)."""

    cpus: int
    mem_mb: float
    """RealMemory, MB."""
    gpus: int = 0
    gpu_type: str = ""
    count: int = 1


@dataclass(frozen=True)
class Partition:
    """A partition and how it bills."""

    name: str
    billing_weights: dict[str, float] = field(default_factory=dict)
    """TRESBillingWeights per TRES base unit (mem per MB), e.g. ``{"cpu": 1.0, "mem": 0.25/1024}``.
    Empty: a job is billed its CPU count."""
    total_cpus: int = 0
    total_nodes: int = 0
    priority_job_factor: int = 1
    tres_totals: dict[str, float] = field(default_factory=dict)
    description: str = ""
    node_types: tuple[NodeType, ...] = ()
    """Its nodes grouped by shape; empty when the source does not say (checks then say "unknown")."""
    max_time_s: int | None = None
    """MaxTime in seconds; :data:`UNLIMITED` for none; None when the source does not say."""
    max_nodes: int | None = None
    """MaxNodes per job; :data:`UNLIMITED` for none; None when the source does not say."""
    node_list: str = ""
    """``Nodes=`` host list as the source prints it ("" when not given)."""


@dataclass(frozen=True)
class Job:
    """A running or pending job as ``squeue``/``sprio`` report it."""

    job_id: str
    user: str
    account: str
    partition: str
    state: str
    """``PENDING`` or ``RUNNING`` (Slurm's long state names)."""
    tres: dict[str, float]
    """Allocated TRES if running, else requested (``cpu``, ``mem`` in MB, ``node``, ``gres/gpu``...)."""
    time_limit_s: int = 0
    submit_time: datetime | None = None
    start_time: datetime | None = None
    priority: int | None = None
    factors: dict[str, float] = field(default_factory=dict)
    """Weighted priority parts as ``sprio -l`` prints them (AGE, FAIRSHARE, ...)."""
    reason: str | None = None
    """Why it waits, as squeue printed it: a code (``Priority``, ``AssocGrpBillingMinutes``) or the
    controller's own words (``ReqNodeNotAvail, UnavailableNodes:n1``); None when the source has no
    Reason. For a pending job ``start_time`` is the scheduler's estimate (backfill's), if any."""
    sched_nodes: str | None = None
    """The nodes the scheduler expects to start it on (``squeue --start``'s SCHEDNODES); None: none."""
    dependency: str | None = None
    """Its dependency as squeue prints it (``afterok:12(unfulfilled)``); None: none or not read."""
    req_nodes: str | None = None
    """Nodes it asked for by name (``-w``); None: none or not read."""
    nice: int | None = None
    """Its Nice (subtracted from the priority); None when not read."""
    qos: str | None = None
    """Its QOS; None when not read."""
    eligible_time: datetime | None = None
    """When it became (or becomes) eligible to start; None: not yet known or not read."""


@dataclass(frozen=True)
class QueueTable:
    """Every job of a queue as columns, one row a job, in the source's order (what
    :class:`tui.analysis.jobs.Queue` orders), with a :class:`Job` made only for the rows asked
    (:mod:`tui.sources.squeue_columns` reads squeue so)."""

    job_id: list[str]
    partition: list[str]
    """As printed: ``burn,gpu`` for a job pending in several."""
    user: list[str]
    state: list[str]
    """Slurm's long state names (``PENDING``), as :class:`Job` has them."""
    priority: np.ndarray
    """float64 (priorities are uint32: exact); NaN where the source gives none."""
    submit: np.ndarray
    """Epoch seconds as float64 (what ``Job.submit_time.timestamp()`` gives); inf where none."""
    reason: list[str | None]
    """As ``Job.reason``: the cell stripped, None when empty."""
    id_key: np.ndarray | None = None
    """(array or job id, task id or -1) of each row, n x 2, as Slurm orders them; None: not read."""

    def __len__(self) -> int:
        return len(self.job_id)

    def jobs(self, rows: Iterable[int]) -> list[Job]:
        """The :class:`Job` of each of ``rows`` (the source's reader says how it makes them)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Allocation:
    """A service-unit allocation of a project (HADM model)."""

    allocation_id: str
    project: str
    """The Slurm account the allocation is charged through."""
    granted_su: float
    used_su: float
    """Debited (completed jobs)."""
    pre_debited_su: float = 0.0
    """Held for running jobs."""
    start: datetime | None = None
    end: datetime | None = None
    use_by_user: dict[str, float] = field(default_factory=dict)
    failures: int = 0
    """Jobs refused for insufficient balance."""

    @property
    def remaining_su(self) -> float:
        return self.granted_su - self.used_su - self.pre_debited_su


@dataclass(frozen=True)
class Budget:
    """A Slurm-native budget: an association's GrpTRESMins limit on one TRES against its usage.

    Slurm refuses new jobs of the association (and below) once ``used`` reaches ``limit``;
    ``used`` is the association's decayed usage of that TRES in minutes (it decays with
    PriorityDecayHalfLife like the fairshare usage, unless the site sets NoDecay on the QOS).
    """

    account: str
    user: str
    """"" for an account's budget."""
    tres: str
    """``billing``, ``cpu``, ``gres/gpu``..."""
    limit_minutes: int
    used_minutes: int | None
    """None when the source does not say (sshare's GrpTRESMins column carries only the limit)."""
    running_minutes: int | None = None
    """TRES-minutes still to come from running jobs (GrpTRESRunMins / TRESRunMins)."""

    @property
    def remaining_minutes(self) -> int | None:
        return None if self.used_minutes is None else self.limit_minutes - self.used_minutes


@dataclass(frozen=True)
class AssocLimit:
    """One limit set on an association with its current use, as ``scontrol show assoc_mgr`` prints
    it (``GrpJobs=4(4)``, ``GrpTRES=cpu=64(60)``, ``MaxJobs=1(1)``)."""

    account: str
    user: str
    """"" for an account's own association."""
    partition: str
    name: str
    """The limit's name as Slurm prints it: ``GrpJobs``, ``GrpSubmitJobs``, ``MaxJobs``,
    ``MaxSubmitJobs``, ``GrpJobsAccrue``, ``MaxJobsAccrue``, ``GrpTRES``, ``GrpTRESRunMins``."""
    tres: str
    """The TRES of a TRES limit (``cpu``, ``gres/gpu``); "" for a job count."""
    limit: int
    used: int
    """What counts against it now (jobs, TRES units or TRES-minutes)."""


@dataclass(frozen=True, eq=False)
class PbsTree:
    """PBS Professional fairshare entities (``resource_group`` + usage), in pre-order.

    Row 0 is ``TREEROOT``. ``shares`` is -1 for TREEROOT; ``usage`` >= 1 ("1 means zero").
    """

    name: np.ndarray
    parent: np.ndarray
    resgroup: np.ndarray
    cresgroup: np.ndarray
    shares: np.ndarray
    usage: np.ndarray
    usage_res: str = "cput"
    """``fairshare_usage_res``: the unit ``usage`` is in (display only)."""
    last_decay: int | None = None
    """Epoch seconds of the last decay, from the binary usage file header; None if unknown."""
    decay_factor: float | None = None
    """``fairshare_decay_factor`` from the saved ``sched_config``; None if not saved."""
    decay_time_s: int | None = None
    """``fairshare_decay_time`` in seconds from the saved ``sched_config``; None if not saved."""


@dataclass(frozen=True)
class PrivateView:
    """A snapshot cut by Slurm's PrivateData to what one user may read (their own commands' view,
    or the per-user view a publisher wrote for them)."""

    hides: frozenset[str]
    """The cluster's PrivateData values (``usage``, ``jobs``, ``users``, ``accounts``, ...)."""
    reader: str = ""
    """Whose view it is ("" when not known)."""
    partial: bool = False
    """Associations are missing (their usage, or whole siblings): the engine cannot recompute the
    tree, so only what the scheduler printed is shown and nothing is compared."""
    ranking: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Account -> the reader's ranking in it as the publisher computed it from the whole tree
    (nameless parts such as "8 of 43 users ahead of you")."""
    withheld: str = ""
    """One line: what was left out and why."""


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One cluster at one moment: what every pane reads."""

    cluster: str
    source: str
    """Human description of where the data came from (``demo``, ``live sshare``, a folder...)."""
    taken_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    tree: AssocTree | None = None
    settings: PrioritySettings = field(default_factory=PrioritySettings)
    partitions: tuple[Partition, ...] = ()
    jobs: tuple[Job, ...] = ()
    """The jobs panes iterate: every job, or, when :attr:`queue` is set, those the source made
    ``Job`` of (a user's own; the rest are rows of the queue)."""
    allocations: tuple[Allocation, ...] = ()
    budgets: tuple[Budget, ...] = ()
    """GrpTRESMins limits with their usage, where the source has them."""
    limits: tuple[AssocLimit, ...] = ()
    """Other association limits that are set, with their use (job counts, GrpTRES), where the
    source has them (``scontrol show assoc_mgr``)."""
    printed: Mapping[str, Sequence[str]] | None = None
    """The scheduler's own printed columns (sshare header -> cells, aligned with ``tree`` rows):
    NormShares, RawUsage, NormUsage, EffectvUsage, FairShare, LevelFS where printed (sshare's as
    :class:`PrintedColumn`). None when the source has no printed values (the demo, slurmrestd)."""
    usage_unknown: tuple[int, ...] = ()
    """Tree rows whose usage the source does not have although it has the others' (an association
    slurmrestd lists and sshare does not): 0 in the engine, "unknown" on screen, never compared."""
    pbs: PbsTree | None = None
    warnings: tuple[str, ...] = ()
    """Things the source could not read but that did not stop it (PrivateData, a missing command)."""
    capabilities: frozenset[str] | None = None
    """What the source can provide (``tui.sources.registry.CAPABILITIES``); None: not stated."""
    private: PrivateView | None = None
    """Set when PrivateData cut this snapshot to one user's view (None: the whole cluster)."""
    made_up: bool = False
    """The built-in demo: made-up people and numbers (the summary says whose row it is)."""
    private_data: frozenset[str] = frozenset()
    """The cluster's PrivateData (slurm.conf's and slurmdbd's, where the source read them)."""
    scheduler_version: str | None = None
    """The scheduler's release as the source reported it (Slurm: ``scontrol show config``'s
    SLURM_VERSION, ``sshare -V`` or slurmrestd's meta, e.g. ``"26.05.3"``); None when the source does
    not say. What a release prints (blanks, the root row, REST versions) is decided from it."""
    queue: QueueTable | None = None
    """The whole queue as columns when the source read squeue that way (100,000 pending jobs without
    a ``Job`` each); None: :attr:`jobs` is the whole queue."""
    zone: tzinfo | None = None
    """The zone of the cluster's wall-clock times (sacct's, the local midnights of
    ``PriorityUsageResetPeriod``) when the source says it (a capture's ``timezone.txt``); None:
    this machine's."""
