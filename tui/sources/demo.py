"""The built-in demo cluster: a deterministic, Cannon-like snapshot that needs no cluster.

fairtop opens this by default. Everything comes from one seeded :class:`numpy.random.Generator`,
so a seed always gives the same tree, jobs and allocations (job times are relative to ``now``).

What it imitates, and from where:

* **Tree.** ``root`` -> schools -> departments -> labs -> users (three schools hold labs directly,
  so account depth is 3 or 4). Accounts sort as ``sshare -a`` prints them: an account's users
  first, then its sub-accounts, each by name. A few percent of users hold a second association.
* **Shares.** FASRC's scheme (seed 003): every lab gets a gratis share of 200 plus the billing
  TRES of any hardware it bought; departments and schools hold the sum of their labs. Many labs
  give their users ``parent`` shares, as on Cannon; a few departments are ``parent`` too; a
  couple of labs and departed users have 0.
* **Usage.** Pareto-like (seed 000: a fifth of the users hold about 80 %), with whole dormant
  labs and many idle users; totals match the partitions' billing capacity at 75 % utilisation
  decayed with a 3-day half-life. An account's raw usage is exactly the sum of its children's.
* **Billing.** Cannon's TRES weights per CPU generation and GPU type (seed 003), memory weighted
  so a node's memory costs what its cores cost, requeue partitions at half price, and unbilled
  test partitions. Unbilled means every weight written as 0: Slurm bills an *empty*
  TRESBillingWeights as the CPU count.
* **Priority.** Fair Tree, PriorityCalcPeriod 5 min, PriorityMaxAge 3 days, weights fairshare
  20,000,000 and age 10,000,000 and nothing else, as seed 003 describes Cannon.
* **Jobs.** A few hundred running and pending jobs (a sample, not the whole load the usage
  implies), drawn per user in proportion to usage**0.6; pending ones carry sprio's parts.
* **Allocations.** HADM (seed 004): granted SU (billing-hours), debits by user, pre-debits for
  running jobs (billing x time limit), a few allocations refused jobs for lack of balance.

Where Slurm would have computed something (a job's billing TRES, sprio's parts, the fairshare
factor behind them), the demo asks the engine, so the snapshot agrees with what fairtop computes
from it. The module never imports Textual.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

import numpy as np

from tui.engine import compute
from tui.engine.billing import (
    BillingMode,
    billable_tres,
    billing_mode,
    job_billing,
    mem_weight_per_gb,
)
from tui.engine.priority import PriorityFactors, PriorityWeights, age_factor, job_priority
from tui.model import (
    NO_VAL,
    UNLIMITED,
    USE_PARENT,
    Allocation,
    AssocTree,
    Job,
    NodeType,
    Partition,
    PrioritySettings,
    Snapshot,
)
from tui.sources.slurm_units import parse_tres_billing_weights

if TYPE_CHECKING:  # sacct's parser (and slurm_text's tables) only when the history is asked for
    from tui.sources.sacct import AccountedJob

# --- Organisation ---------------------------------------------------------------------------

#: Schools and their departments; an empty tuple means labs hang off the school itself.
_ORG: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fas", ("astro", "chem", "econ", "eps", "gov", "math", "mcb", "oeb", "phys", "psych",
             "scrb", "soc", "stat")),
    ("seas", ("apmath", "bioe", "cs", "ee", "env", "mech")),
    ("hms", ("bcmp", "cellbio", "dbmi", "genetics", "neuro", "sysbio")),
    ("sph", ("biostat", "envhlth", "epi", "nutrition")),
    ("hbs", ()),
    ("hks", ()),
    ("gse", ()),
)

#: How compute-hungry a department's labs are, relative to 1 (the rest).
_INTENSITY: dict[str, float] = {
    "astro": 2.5, "chem": 2.5, "eps": 2.0, "phys": 2.0, "cs": 2.0, "genetics": 1.8,
    "sysbio": 1.5, "bcmp": 1.8, "apmath": 1.5, "mcb": 1.3,
    "econ": 0.6, "gov": 0.4, "psych": 0.6, "soc": 0.4, "hbs": 0.5, "hks": 0.4, "gse": 0.3,
}

_FIRST = (
    "james", "mary", "john", "patricia", "robert", "jennifer", "michael", "linda", "david",
    "elizabeth", "william", "susan", "richard", "jessica", "joseph", "sarah", "thomas", "karen",
    "daniel", "nancy", "matthew", "lisa", "anthony", "betty", "mark", "sandra", "paul", "ashley",
    "steven", "emily", "andrew", "donna", "kevin", "michelle", "brian", "amanda", "george",
    "melissa", "wei", "li", "jing", "hao", "yan", "xin", "priya", "arjun", "ananya", "rahul",
    "deepa", "vikram", "minji", "jisoo", "hyun", "sora", "yuki", "kenji", "haruto", "aiko",
    "ahmed", "fatima", "omar", "layla", "yusuf", "amina", "carlos", "sofia", "diego", "lucia",
    "mateo", "valentina", "lars", "ingrid", "sven", "freya", "olga", "ivan", "nikolai", "elena",
    "chidi", "ngozi", "kwame", "abena", "tunde", "zara", "noah", "olivia", "liam", "emma",
    "ethan", "ava", "lucas", "mia", "gabriel", "chloe", "felix", "nora", "oscar", "ruth",
)

_SURNAMES = (
    "smith", "johnson", "williams", "brown", "jones", "garcia", "miller", "davis", "rodriguez",
    "martinez", "hernandez", "lopez", "gonzalez", "wilson", "anderson", "thomas", "taylor",
    "moore", "jackson", "martin", "lee", "perez", "thompson", "white", "harris", "sanchez",
    "clark", "ramirez", "lewis", "robinson", "walker", "young", "allen", "king", "wright",
    "scott", "torres", "nguyen", "hill", "flores", "green", "adams", "nelson", "baker", "hall",
    "rivera", "campbell", "mitchell", "carter", "roberts", "wang", "li", "zhang", "liu", "chen",
    "yang", "huang", "zhao", "wu", "zhou", "xu", "sun", "ma", "zhu", "hu", "guo", "he", "lin",
    "luo", "gao", "kim", "park", "choi", "jung", "kang", "cho", "yoon", "jang", "lim", "han",
    "patel", "shah", "singh", "kumar", "sharma", "gupta", "mehta", "reddy", "rao", "iyer",
    "nair", "das", "bose", "chatterjee", "mukherjee", "sato", "suzuki", "takahashi", "tanaka",
    "watanabe", "ito", "yamamoto", "nakamura", "kobayashi", "kato", "muller", "schmidt",
    "schneider", "fischer", "weber", "meyer", "wagner", "becker", "schulz", "hoffmann", "rossi",
    "russo", "ferrari", "esposito", "bianchi", "romano", "colombo", "ricci", "marino", "greco",
    "dubois", "moreau", "laurent", "simon", "michel", "lefebvre", "leroy", "roux", "ivanov",
    "smirnov", "kuznetsov", "popov", "volkov", "novak", "kowalski", "nowak", "wisniewski",
    "silva", "santos", "oliveira", "souza", "costa", "pereira", "almeida", "ferreira", "cohen",
    "levy", "katz", "friedman", "goldberg", "shapiro", "murphy", "kelly", "sullivan", "walsh",
    "obrien", "byrne", "ryan", "okafor", "adeyemi", "mensah", "osei", "kariuki", "mwangi",
    "haddad", "nasser", "khalil", "hassan", "ahmed", "ali", "hussain", "khan", "rahman",
    "yilmaz", "kaya", "demir", "nielsen", "hansen", "jensen", "larsen", "johansson", "karlsson",
    "nilsson", "eriksson", "berg", "lindqvist", "vandijk", "jansen", "devries", "bakker",
    "visser", "meijer", "novotny", "horvath", "nagy", "toth", "papadopoulos", "georgiou",
    "tran", "le", "pham", "hoang", "vu", "dang", "bui", "ngo", "duong", "mendoza", "castillo",
    "ortiz", "morales", "reyes", "cruz", "gutierrez", "ruiz", "alvarez", "romero", "vargas",
)

# --- Partitions -----------------------------------------------------------------------------

#: Billing TRES per core, normalised to Cascade Lake by peak FLOPs (FASRC, seed 003).
_CPU_TRES = {"sapphire": 0.6, "cascade": 1.0, "icelake": 1.15, "genoa": 0.6}
#: Billing TRES per GPU, same normalisation (seed 003).
_GPU_TRES = {"a40": 10.0, "v100": 75.0, "a100": 209.1, "h100": 546.9}
#: Requeue partitions bill a flat half price whatever the hardware (seed 003).
_REQUEUE_WEIGHTS = "CPU=0.5,Mem=0.125G"


@dataclass(frozen=True)
class _Hardware:
    """One homogeneous node type in a partition."""

    nodes: int
    cpu: str
    cores: int
    mem_gb: int
    gpus: int = 0
    gpu: str = ""


@dataclass(frozen=True)
class _PartSpec:
    """A demo partition: its hardware, how it bills and how jobs use it."""

    name: str
    hardware: tuple[_Hardware, ...]
    kind: str
    """``cpu``, ``gpu``, ``requeue`` or ``test``; decides billing and job shapes."""
    max_time_s: int
    job_share: float
    """Fraction of the demo's jobs submitted here."""
    description: str
    only_school: str = ""
    """Restrict to one school's users (a communal partition)."""


_DAY = 86400
_PARTS: tuple[_PartSpec, ...] = (
    _PartSpec("sapphire", (_Hardware(192, "sapphire", 112, 990),), "cpu", 3 * _DAY, 0.25,
              "Intel Sapphire Rapids, 112 cores / 990 GB"),
    _PartSpec("shared", (_Hardware(300, "cascade", 48, 184),), "cpu", 3 * _DAY, 0.18,
              "Intel Cascade Lake, 48 cores / 184 GB"),
    _PartSpec("icelake", (_Hardware(96, "icelake", 64, 499),), "cpu", 14 * _DAY, 0.08,
              "Intel Ice Lake, 64 cores / 499 GB, long jobs"),
    _PartSpec("bigmem", (_Hardware(16, "icelake", 64, 1988),), "cpu", 3 * _DAY, 0.03,
              "Intel Ice Lake, 64 cores / 2 TB"),
    _PartSpec("genoa", (_Hardware(40, "genoa", 192, 755),), "cpu", 3 * _DAY, 0.05,
              "AMD Genoa, 192 cores / 755 GB"),
    _PartSpec("gpu", (_Hardware(36, "icelake", 64, 990, 4, "a100"),), "gpu", 3 * _DAY, 0.08,
              "4x Nvidia A100 80GB per node"),
    _PartSpec("gpu_h100", (_Hardware(24, "sapphire", 96, 1500, 4, "h100"),), "gpu", 3 * _DAY,
              0.04, "4x Nvidia H100 per node"),
    _PartSpec("seas_gpu", (_Hardware(20, "cascade", 48, 384, 4, "v100"),
                           _Hardware(20, "cascade", 48, 384, 4, "a40")), "gpu", 7 * _DAY, 0.03,
              "SEAS communal: V100 and A40 nodes", only_school="seas"),
    _PartSpec("serial_requeue", (), "requeue", 3 * _DAY, 0.16,
              "All CPU nodes, preemptible, half price"),
    _PartSpec("gpu_requeue", (), "requeue", 3 * _DAY, 0.05,
              "All GPU nodes, preemptible, half price"),
    _PartSpec("test", (_Hardware(8, "sapphire", 112, 990),), "test", 12 * 3600, 0.04,
              "Interactive and testing, not billed"),
    _PartSpec("gpu_test", (_Hardware(4, "icelake", 64, 990, 4, "a100"),), "test", 12 * 3600,
              0.01, "GPU testing, not billed"),
)

_PART_BY_NAME = {p.name: p for p in _PARTS}


def _node_weights_text(hw: _Hardware) -> str:
    """``TRESBillingWeights`` for one node type, as an admin writes it in slurm.conf.

    Cannon's rule (seed 003): a full node's memory bills as much as its cores, so the memory
    weight is cores x core TRES / node GB, written per GB to 4 decimals; GPUs by type.
    """
    core = _CPU_TRES[hw.cpu]
    text = f"CPU={core},Mem={round(mem_weight_per_gb(hw.cores, core, hw.mem_gb), 4)}G"
    if hw.gpus:
        text += f",GRES/gpu:{hw.gpu}={_GPU_TRES[hw.gpu]}"
    return text


def _weights_text(spec: _PartSpec) -> str:
    """A partition's ``TRESBillingWeights`` string."""
    if spec.kind == "requeue":
        return _REQUEUE_WEIGHTS + (",GRES/gpu=104.6" if spec.name == "gpu_requeue" else "")
    if spec.kind == "test":
        # Slurm bills an *empty* TRESBillingWeights as the CPU count, so an unbilled partition
        # spells every weight out as 0 (FASRC: test partitions are exempt from fairshare).
        gpus = "".join(f",GRES/gpu:{hw.gpu}=0" for hw in spec.hardware if hw.gpus)
        return "CPU=0,Mem=0" + gpus
    # Mixed hardware (seas_gpu) bills CPU and memory like its first node type, GPUs by type.
    text = _node_weights_text(spec.hardware[0])
    return text + "".join(f",GRES/gpu:{hw.gpu}={_GPU_TRES[hw.gpu]}" for hw in spec.hardware[1:] if hw.gpus)


def _hardware_of(spec: _PartSpec) -> tuple[_Hardware, ...]:
    """Requeue partitions span all CPU (or all GPU) hardware of the primary partitions."""
    if spec.kind != "requeue":
        return spec.hardware
    want_gpu = spec.name == "gpu_requeue"
    return tuple(hw for p in _PARTS if p.kind in ("cpu", "gpu") for hw in p.hardware
                 if bool(hw.gpus) == want_gpu)


def _build_partitions() -> tuple[Partition, ...]:
    parts = []
    for spec in _PARTS:
        hws = _hardware_of(spec)
        totals: dict[str, float] = {
            "cpu": float(sum(h.nodes * h.cores for h in hws)),
            "mem": float(sum(h.nodes * h.mem_gb * 1024 for h in hws)),
            "node": float(sum(h.nodes for h in hws)),
        }
        gpus = sum(h.nodes * h.gpus for h in hws)
        if gpus:
            totals["gres/gpu"] = float(gpus)
            for h in hws:
                if h.gpus:
                    key = f"gres/gpu:{h.gpu}"
                    totals[key] = totals.get(key, 0.0) + h.nodes * h.gpus
        parts.append(Partition(
            name=spec.name,
            billing_weights=parse_tres_billing_weights(_weights_text(spec)),
            total_cpus=int(totals["cpu"]),
            total_nodes=int(totals["node"]),
            tres_totals=totals,
            description=spec.description,
            node_types=tuple(NodeType(h.cores, float(h.mem_gb * 1024), h.gpus, h.gpu, h.nodes) for h in hws),
            max_time_s=spec.max_time_s,
            max_nodes=UNLIMITED,
        ))
    return tuple(parts)


# --- Names ----------------------------------------------------------------------------------


def _usernames(rng: np.random.Generator, n: int) -> tuple[list[str], list[str]]:
    """Unique Unix-style user names and their surnames.

    Mostly first initial + surname (``jsmith``), some first name + surname initial (``priyap``);
    a clash takes a middle initial, then a number, as sites do.
    """
    first = rng.integers(len(_FIRST), size=n)
    sur = rng.integers(len(_SURNAMES), size=n)
    short_style = rng.random(n) < 0.15
    middle = rng.integers(ord("a"), ord("z") + 1, size=n)
    taken: set[str] = set()
    names: list[str] = []
    surnames: list[str] = []
    for i in range(n):
        f, s = _FIRST[first[i]], _SURNAMES[sur[i]]
        base = f + s[0] if short_style[i] else f[0] + s
        name = base
        if name in taken:
            name = f[0] + chr(middle[i]) + s
        k = 2
        while name in taken:
            name = f"{base}{k}"
            k += 1
        taken.add(name)
        names.append(name)
        surnames.append(s)
    return names, surnames


# --- Tree -----------------------------------------------------------------------------------


@dataclass
class _Acct:
    """An account while the tree is being built."""

    name: str
    parent: int
    """Index in the account list; -1 for the root."""
    shares: int = 1
    kids: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    """User association slots (labs only)."""


def _org_accounts(rng: np.random.Generator, accounts: int) -> tuple[list[_Acct], list[int], np.ndarray]:
    """Root, schools and departments, plus how many labs each lab-holding account gets.

    Returns the account list (root first), the indices of lab holders and their lab counts.
    """
    accts = [_Acct("root", -1)]
    holders: list[int] = []
    intensity: list[float] = []
    for school, depts in _ORG:
        accts.append(_Acct(school, 0))
        s_idx = len(accts) - 1
        accts[0].kids.append(s_idx)
        if not depts:
            holders.append(s_idx)
            intensity.append(_INTENSITY.get(school, 1.0))
        for dept in depts:
            accts.append(_Acct(dept, s_idx))
            accts[s_idx].kids.append(len(accts) - 1)
            holders.append(len(accts) - 1)
            intensity.append(_INTENSITY.get(dept, 1.0))
    n_labs = accounts - (len(accts) - 1)
    if n_labs < len(holders):
        raise ValueError(f"accounts={accounts} is too few: need at least {len(accts) - 1 + len(holders)}")
    # Bigger departments in the busier fields, but every holder has at least one lab.
    weight = rng.gamma(3.0, 1.0, size=len(holders)) * np.sqrt(intensity)
    counts = 1 + rng.multinomial(n_labs - len(holders), weight / weight.sum())
    return accts, holders, counts


def _add_labs(rng: np.random.Generator, accts: list[_Acct], lab_holder: np.ndarray,
              pi_names: list[str], pi_surnames: list[str], lab_slots: list[list[int]]) -> list[str]:
    """Append the labs, named after their PI (``chem_smith_lab``), and settle account shares.

    Departments and schools hold the sum of their labs' shares (FASRC adds purchased TRES to
    the lab); three departments are ``parent`` instead. Returns the lab names.
    """
    n_inter = len(accts)
    lab_shares = _lab_shares(rng, len(lab_holder))
    taken = {a.name for a in accts}
    names = []
    for lab, holder in enumerate(lab_holder.tolist()):
        name = f"{accts[holder].name}_{pi_surnames[lab]}_lab"
        if name in taken:  # two PIs of one surname in a department
            name = f"{accts[holder].name}_{pi_names[lab]}_lab"
        taken.add(name)
        names.append(name)
        accts.append(_Acct(name, holder, int(lab_shares[lab]), slots=lab_slots[lab]))
        accts[holder].kids.append(len(accts) - 1)
    for i in range(n_inter - 1, 0, -1):  # children come after their school
        accts[i].shares = sum(accts[k].shares for k in accts[i].kids)
    depts = [i for i in range(1, n_inter) if accts[i].parent > 0]
    for i in rng.choice(depts, size=min(3, len(depts)), replace=False).tolist():
        accts[i].shares = USE_PARENT
    accts[0].shares = NO_VAL
    return names


def _lab_shares(rng: np.random.Generator, n_labs: int) -> np.ndarray:
    """FASRC shares: 200 gratis + billing TRES of purchased nodes for about a third of labs."""
    node_tres = np.array([48, 67, 74, 129, 910, 2303])  # cascade, sapphire, icelake, genoa, A100, H100 nodes
    bought = rng.random(n_labs) < 0.3
    n_nodes = rng.geometric(0.45, size=n_labs)
    kind = rng.choice(len(node_tres), size=n_labs, p=[0.3, 0.3, 0.15, 0.1, 0.1, 0.05])
    shares = 200 + np.where(bought, n_nodes * node_tres[kind], 0)
    shares[rng.choice(n_labs, size=min(2, n_labs), replace=False)] = 0  # lapsed labs keep an account
    return shares.astype(np.int64)


def _user_shares(rng: np.random.Generator, lab_of_slot: np.ndarray, is_pi: np.ndarray,
                 n_labs: int) -> np.ndarray:
    """Per-lab policy: ``parent`` (Cannon's way), all 1 (Slurm's default) or graded by role."""
    policy = rng.choice(3, size=n_labs, p=[0.55, 0.35, 0.10])[lab_of_slot]
    graded = np.where(is_pi, 10, rng.choice([1, 2, 5], size=len(lab_of_slot), p=[0.5, 0.3, 0.2]))
    shares = np.select([policy == 0, policy == 1], [USE_PARENT, 1], graded).astype(np.int64)
    # Departed users keep an association with no share until their usage decays.
    departed = rng.random(len(shares)) < 0.006
    shares[departed & ~is_pi] = 0
    return shares


def _assign_people(rng: np.random.Generator, lab_of_slot: np.ndarray, first_slot: np.ndarray,
                   n_dual: int) -> np.ndarray:
    """Person behind every user-association slot; ``n_dual`` people also sit in a second lab.

    Returns the person index (0 .. people-1) of every slot; a PI's slot is never a second one.
    """
    n = len(lab_of_slot)
    secondary = np.zeros(n, dtype=bool)
    candidates = np.flatnonzero(~first_slot)
    secondary[rng.choice(candidates, size=min(n_dual, len(candidates) // 2), replace=False)] = True
    primary = np.flatnonzero(~secondary)
    person = np.full(n, -1, dtype=np.int64)
    person[primary] = np.arange(len(primary))
    # Walk the primary slots in a random order, taking the next one from another lab.
    queue = iter(rng.permutation(primary).tolist())
    skipped: list[int] = []
    for slot in np.flatnonzero(secondary):
        pick = next((p for p in skipped if lab_of_slot[p] != lab_of_slot[slot]), None)
        if pick is not None:
            skipped.remove(pick)
        else:
            for p in queue:
                if lab_of_slot[p] != lab_of_slot[slot]:
                    pick = p
                    break
                skipped.append(p)
        person[slot] = person[pick]
    return person


def _usage(rng: np.random.Generator, lab_of_slot: np.ndarray, lab_intensity: np.ndarray,
           secondary: np.ndarray, total: float) -> np.ndarray:
    """Raw usage per user association: Pareto-like, with dormant labs and idle users."""
    n_labs = len(lab_intensity)
    lab_act = rng.lognormal(0.0, 0.8, size=n_labs) * lab_intensity
    lab_act[rng.random(n_labs) < 0.08] = 0.0
    # Calibrated so the top fifth of users hold ~82 % (0.78-0.86 over seeds) and ~30 % are idle.
    user = rng.lognormal(0.0, 1.1, size=len(lab_of_slot)) * lab_act[lab_of_slot]
    user[rng.random(len(user)) < 0.25] = 0.0
    user[secondary] *= 0.3  # a second account is usually the side project
    return np.round(user * (total / user.sum()))


def _decayed_capacity(half_life_s: int, utilisation: float = 0.75) -> float:
    """Total raw usage of a cluster in steady state: billing rate x half-life / ln 2."""
    rate = 0.0
    for spec in _PARTS:
        if spec.kind in ("cpu", "gpu"):
            for hw in spec.hardware:
                whole_node = {"cpu": hw.cores, "mem": hw.mem_gb * 1024, f"gres/gpu:{hw.gpu}": hw.gpus}
                weights = parse_tres_billing_weights(_node_weights_text(hw))
                rate += hw.nodes * float(billable_tres(whole_node, weights))
    return rate * utilisation * half_life_s / math.log(2)


def _build_tree(accts: list[_Acct], slot_user: list[str], slot_shares: np.ndarray,
                slot_usage: np.ndarray) -> tuple[AssocTree, np.ndarray]:
    """Rows in the order ``sshare -a`` prints them, account usage rolled up from the users.

    Slurm sorts an account's children users first, then sub-accounts, each by name
    (``_sort_children_list`` in slurmdb_defs.c). Returns the tree and the row of every slot.
    """
    rows: list[tuple[int, bool, str, str, int, float]] = []
    depth: list[int] = []
    slot_row = np.empty(len(slot_user), dtype=np.int64)

    def add(prow: int, acct: str, name: str, share: int, used: float) -> int:
        rows.append((prow, bool(name), acct, name, share, used))
        depth.append(depth[prow] + 1 if prow >= 0 else 0)
        return len(rows) - 1

    stack: list[tuple[int, int]] = [(0, -1)]
    while stack:
        a, prow = stack.pop()
        acct = accts[a]
        row = add(prow, acct.name, "", acct.shares, 0.0)
        if a == 0:
            add(row, "root", "root", 1, 0.0)  # every Slurm tree has root/root
        for s in sorted(acct.slots, key=lambda s: slot_user[s]):
            slot_row[s] = add(row, acct.name, slot_user[s], int(slot_shares[s]), float(slot_usage[s]))
        stack.extend((k, row) for k in sorted(acct.kids, key=lambda k: accts[k].name, reverse=True))

    # Usages are whole numbers below 2**53, so these float64 sums are exact.
    parent = np.array([r[0] for r in rows])
    usage = np.array([r[5] for r in rows])
    level = np.asarray(depth)
    for d in range(int(level.max()), 0, -1):  # deepest first, so sums are complete when used
        at = np.flatnonzero(level == d)
        np.add.at(usage, parent[at], usage[at])
    tree = AssocTree.from_rows([r[:5] + (float(u),) for r, u in zip(rows, usage)])
    return tree, slot_row


# --- Jobs -----------------------------------------------------------------------------------

_LIMITS_S = np.array([1800, 3600, 7200, 4 * 3600, 8 * 3600, 12 * 3600, _DAY, 2 * _DAY, 3 * _DAY, 7 * _DAY])
_LIMITS_P = np.array([0.06, 0.12, 0.10, 0.14, 0.12, 0.14, 0.14, 0.08, 0.07, 0.03])


def _job_shapes(rng: np.random.Generator, part: np.ndarray) -> dict[str, np.ndarray]:
    """Plausible requests on each job's partition, drawn for all jobs at once.

    Returns arrays ``cpu``, ``mem`` (MB), ``node``, ``gpu`` (count) and ``gpu_type`` (name, ""
    for none): TRES as squeue's AllocTRES names them.
    """
    n = len(part)
    hws = [_hardware_of(spec) for spec in _PARTS]
    pick = (rng.random(n) * np.array([len(hws[k]) for k in part])).astype(int)
    hw = [hws[k][i] for k, i in zip(part.tolist(), pick.tolist())]
    cores = np.array([h.cores for h in hw])
    mem_gb = np.array([h.mem_gb for h in hw])
    per_node_gpus = np.array([h.gpus for h in hw])
    gpu_type = np.array([h.gpu for h in hw], dtype=object)
    kind = np.array([_PARTS[k].kind for k in part], dtype=object)
    name = np.array([_PARTS[k].name for k in part], dtype=object)

    # CPU jobs: mostly small, some whole nodes, a few multi-node.
    options = np.stack([np.full(n, c) for c in (1, 2, 4, 8, 16, 32)] + [cores, 2 * cores, 4 * cores])
    which = rng.choice(9, size=n, p=[0.22, 0.1, 0.14, 0.14, 0.12, 0.1, 0.1, 0.05, 0.03])
    cpu = options[which, np.arange(n)]
    cpu = np.where(kind == "test", np.minimum(cpu, 16), cpu)
    mem = cpu * rng.choice([1000, 2000, 4000, 8000], size=n, p=[0.25, 0.3, 0.3, 0.15])
    mem = np.where(name == "bigmem", rng.integers(250, 1900, size=n) * 1024, mem)
    # GPU jobs: 1-8 GPUs with a few cores and a slice of memory each.
    gpu = np.where(per_node_gpus > 0, rng.choice([1, 2, 4, 8], size=n, p=[0.5, 0.2, 0.25, 0.05]), 0)
    cpu = np.where(gpu > 0, gpu * rng.choice([4, 8, 16], size=n), cpu)
    mem = np.where(gpu > 0, gpu * rng.choice([32, 64, 128], size=n) * 1024, mem)
    node = np.where(gpu > 0, -(-gpu // np.maximum(per_node_gpus, 1)), -(-cpu // cores))
    mem = np.minimum(mem, node * mem_gb * 1024)
    return {"cpu": cpu, "mem": mem, "node": node, "gpu": gpu, "gpu_type": gpu_type}


def _billing_units(part: np.ndarray, shape: dict[str, np.ndarray], partitions: dict[str, Partition],
                   mode: BillingMode) -> np.ndarray:
    """Billing TRES of every job as Slurm stores it: (uint64) of the weighted sum."""
    out = np.zeros(len(part))
    for k, spec in enumerate(_PARTS):
        at = np.flatnonzero(part == k)
        if not len(at):
            continue
        tres = {key: shape[key][at].astype(float) for key in ("cpu", "mem", "node")}
        tres["gres/gpu"] = shape["gpu"][at].astype(float)
        for gtype in set(shape["gpu_type"][at].tolist()) - {""}:
            tres[f"gres/gpu:{gtype}"] = np.where(shape["gpu_type"][at] == gtype, tres["gres/gpu"], 0.0)
        out[at] = billable_tres(tres, partitions[spec.name].billing_weights, mode)
    return np.floor(out)


def _jobs(rng: np.random.Generator, now: datetime, settings: PrioritySettings,
          partitions: dict[str, Partition], slot_weight: np.ndarray, slot_user: list[str],
          slot_account: list[str], slot_school: list[str], slot_fs: np.ndarray,
          n_running: int, n_pending: int, must: int, slot_usage: np.ndarray) -> tuple[Job, ...]:
    """Running and pending jobs, users drawn in proportion to their activity.

    ``must`` is a slot that always gets one running and one pending job (the ``me`` candidate).
    """
    n = n_running + n_pending
    running = np.arange(n) < n_running
    # Idle users submit too (they wait, pending); only active ones have jobs running.
    submitting = slot_weight + 0.02 * slot_weight.mean()
    slots = np.concatenate([
        rng.choice(len(slot_weight), size=n_running, p=slot_weight / slot_weight.sum()),
        rng.choice(len(slot_weight), size=n_pending, p=submitting / submitting.sum()),
    ])
    slots[[0, n_running] if n_pending else [0]] = must
    share = np.array([s.job_share for s in _PARTS])
    part = rng.choice(len(_PARTS), size=n, p=share / share.sum())
    # A communal partition takes only its school's users; the others go to the public GPUs.
    only = np.array([_PARTS[k].only_school for k in part], dtype=object)
    school = np.array([slot_school[s] for s in slots], dtype=object)
    part = np.where((only != "") & (only != school), _PARTS.index(_PART_BY_NAME["gpu"]), part)

    shape = _job_shapes(rng, part)
    billing = _billing_units(part, shape, partitions, billing_mode(settings.flags))
    limit = np.minimum(rng.choice(_LIMITS_S, size=n, p=_LIMITS_P),
                       np.array([_PARTS[k].max_time_s for k in part]))
    elapsed = (limit * rng.beta(1.2, 2.0, size=n)).astype(int)
    queued = np.where(running, rng.exponential(2 * 3600, size=n).astype(int) + 5,
                      np.minimum(rng.exponential(14 * 3600, size=n), 6 * _DAY).astype(int) + 30)
    ago = np.where(running, elapsed + queued, queued)  # submit time, seconds before now
    # Job ids rise with submit time, with gaps for other users' short jobs that already ended.
    order = np.lexsort((slots, -ago))
    # A running job has charged its user billing x elapsed already: never more than 80 % of the
    # user's RawUsage, so the demo's accounting records (demo_history) rebuild it.
    per_slot = np.bincount(slots[running], minlength=len(slot_usage))
    room = 0.8 * slot_usage[slots] / np.maximum(per_slot[slots], 1) / np.maximum(billing, 1e-9)
    capped = running & (elapsed > room)
    elapsed = np.where(capped, np.maximum(room, 60).astype(int), elapsed)
    ago = np.where(capped, elapsed + queued, ago)
    ids = 61_000_000 + np.cumsum(rng.integers(1, 400, size=n))

    weights = PriorityWeights.from_settings(settings)
    jobs = []
    for jid, i in zip(ids.tolist(), order.tolist()):
        slot = int(slots[i])
        submit = now - timedelta(seconds=int(ago[i]))
        tres = {"cpu": float(shape["cpu"][i]), "mem": float(shape["mem"][i]), "node": float(shape["node"][i])}
        if shape["gpu"][i]:
            tres["gres/gpu"] = tres[f"gres/gpu:{shape['gpu_type'][i]}"] = float(shape["gpu"][i])
        tres["billing"] = float(billing[i])
        priority = None
        factors: dict[str, float] = {}
        if not running[i]:
            # What sprio -l would print; partition, job size and QOS weigh 0 at this site.
            prio = job_priority(PriorityFactors(
                age=float(age_factor(float(ago[i]), settings.max_age_s)),
                fairshare=float(slot_fs[slot]),
            ), weights)
            # Rounded as sprio -l prints them (%.0f: half to even, as Python's round()).
            factors = {k: float(round(v)) for k, v in prio.parts().items() if k != "TRES"}
            priority = prio.priority
        jobs.append(Job(
            job_id=str(jid), user=slot_user[slot], account=slot_account[slot],
            partition=_PARTS[int(part[i])].name, state="RUNNING" if running[i] else "PENDING",
            tres=tres, time_limit_s=int(limit[i]), submit_time=submit,
            start_time=now - timedelta(seconds=int(elapsed[i])) if running[i] else None,
            priority=priority, factors=factors,
        ))
    return tuple(jobs)


# --- Allocations ----------------------------------------------------------------------------


def _split_int(total: int, weight: np.ndarray) -> np.ndarray:
    """Integers proportional to ``weight`` summing exactly to ``total`` (largest remainder)."""
    quota = total * weight / weight.sum()
    base = np.floor(quota).astype(np.int64)
    rest = total - int(base.sum())
    base[np.argsort(-(quota - base), kind="stable")[:rest]] += 1
    return base


def _allocations(rng: np.random.Generator, now: datetime, lab_names: list[str],
                 lab_usage: np.ndarray, lab_slots: list[list[int]], slot_user: list[str],
                 slot_usage: np.ndarray, jobs: tuple[Job, ...], partitions: dict[str, Partition],
                 flags: frozenset[str], must_lab: int) -> tuple[Allocation, ...]:
    """HADM allocations for about a tenth of the labs, in billing-hours (SU).

    Pre-debit = billable TRES x time limit of the account's running jobs, rounded up (the
    prolog's projected SUs: HADM holds the whole limit until the epilog debits the actual use).
    Debits are split by user; a few allocations ran dry and refused jobs (``failures``).
    ``must_lab`` (the ``me`` candidate's lab) always has one, so "my balance" shows something.
    """
    active = np.flatnonzero((lab_usage > 0) & (np.arange(len(lab_names)) != must_lab))
    n = min(len(active), max(3, round(len(lab_names) * 0.1)) - 1)
    chosen = np.sort(np.append(rng.choice(active, size=n, replace=False), must_lab))
    n += 1
    dry = set(rng.choice(n, size=min(3, n), replace=False).tolist())
    held: dict[str, float] = {}
    for job in jobs:
        if job.state == "RUNNING":
            su = job_billing(job, partitions[job.partition], flags) * job.time_limit_s / 3600
            held[job.account] = held.get(job.account, 0.0) + su
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    out = []
    for i, lab in enumerate(chosen):
        name = lab_names[lab]
        pre = float(math.ceil(held.get(name, 0.0)))
        granted = float(max(int(rng.choice([25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000])),
                            math.ceil(pre * 4 / 1000) * 1000))
        # Every seventh expires within a month: the site factor (seed 004) then has work to do.
        age_days = int(rng.integers(340, 360)) if i % 7 == 3 else int(rng.integers(20, 330))
        start = today - timedelta(days=age_days)
        end = start + timedelta(days=365)
        if i in dry:
            used = granted - pre - float(rng.integers(0, max(1, int(granted * 0.003))))
            failures = int(rng.integers(2, 40))
        else:
            burn = min(0.95, age_days / 365 * rng.uniform(0.4, 1.2))
            used = float(max(0, min(round(granted * burn), granted - pre)))
            failures = 0
        slots = lab_slots[lab]
        # Debits by user follow recent usage, with a floor for those whose usage has decayed.
        weight = slot_usage[slots] + 0.05 * max(float(slot_usage[slots].mean()), 1.0)
        by_user = _split_int(int(used), weight)
        out.append(Allocation(
            allocation_id=str(1000 + 7 * i + int(rng.integers(0, 7))),
            project=name, granted_su=granted, used_su=float(by_user.sum()), pre_debited_su=pre,
            start=start, end=end,
            use_by_user={slot_user[s]: float(v) for s, v in zip(slots, by_user) if v > 0},
            failures=failures,
        ))
    return tuple(out)


# --- Entry point ----------------------------------------------------------------------------

#: A site like FASRC Cannon (seed 003): Fair Tree, 3-day half-life, priority = fairshare + age
#: (20,000,000 and 10,000,000, age full after 3 days); job size, partition and QOS weigh 0.
DEMO_SETTINGS = PrioritySettings(
    algorithm="fair_tree",
    flags=frozenset(),
    decay_half_life_s=3 * _DAY,
    calc_period_s=300,
    usage_reset_period="NONE",
    max_age_s=3 * _DAY,
    weight_age=10_000_000,
    weight_fairshare=20_000_000,
    weight_jobsize=0,
    weight_partition=0,
    weight_qos=0,
)


def demo_snapshot(
    seed: int = 0,
    *,
    users: int = 2500,
    accounts: int = 300,
    now: datetime | None = None,
    me: str | None = None,
) -> Snapshot:
    """Build the demo cluster.

    Parameters
    ----------
    seed : int
        Seed of the random generator; the same seed gives the same cluster.
    users : int
        Number of user associations (people with two accounts count twice), plus ``root/root``.
    accounts : int
        Number of accounts below the root (schools, departments and labs); at least 68.
    now : datetime, optional
        The moment of the snapshot (UTC if naive); job and allocation times are relative to it.
        Default: the current time, to the second.
    me : str, optional
        A user name (usually the Unix user running fairtop) given to one user of middling
        usage who has a running and a pending job and whose lab has an allocation, so "jump to
        me" works in the demo. Only names change (and with them the order of user rows within
        their lab): usage, jobs and allocations stay as without ``me``. "" counts as None.

    Returns
    -------
    Snapshot
        Tree, Cannon-like priority settings and partitions, about ``0.23 * users`` jobs and
        HADM allocations for about a tenth of the labs.

    Raises
    ------
    ValueError
        If ``accounts`` is too small for the built-in schools and departments or ``users`` is
        smaller than the number of labs.
    """
    if now is None:
        now = datetime.now(timezone.utc).replace(microsecond=0)
    elif now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    rng = np.random.default_rng(seed)
    settings = DEMO_SETTINGS
    partitions = _build_partitions()

    accts, holders, lab_counts = _org_accounts(rng, accounts)
    n_labs = int(lab_counts.sum())
    if users < n_labs:
        raise ValueError(f"users={users} is fewer than the {n_labs} labs")
    lab_holder = np.repeat(np.asarray(holders), lab_counts)
    lab_intensity = np.array([_INTENSITY.get(accts[h].name, 1.0) for h in lab_holder])

    # User association slots: lab sizes are skewed (a few big groups, many small ones).
    size_w = rng.lognormal(0.0, 0.8, size=n_labs)
    lab_size = 1 + rng.multinomial(users - n_labs, size_w / size_w.sum())
    lab_of_slot = np.repeat(np.arange(n_labs), lab_size)
    first_slot = np.zeros(users, dtype=bool)
    first_slot[np.cumsum(lab_size) - lab_size] = True  # the PI
    person = _assign_people(rng, lab_of_slot, first_slot, round(users * 0.04))
    n_people = int(person.max()) + 1
    secondary = np.ones(users, dtype=bool)
    secondary[np.unique(person, return_index=True)[1]] = False

    names, surnames = _usernames(rng, n_people)
    slot_usage = _usage(rng, lab_of_slot, lab_intensity, secondary,
                        _decayed_capacity(settings.decay_half_life_s))
    slot_shares = _user_shares(rng, lab_of_slot, first_slot, n_labs)

    # The "me" candidate: a one-account person at the 60th percentile of active usage. It is
    # chosen, and given jobs, whether or not ``me`` is set, so ``me`` changes names only.
    single = np.bincount(person, minlength=n_people) == 1
    cand = np.flatnonzero(single[person] & (slot_usage > 0) & ~first_slot)
    me_slot = int(cand[np.argsort(slot_usage[cand], kind="stable")[int(len(cand) * 0.6)]])
    if me:
        mine = int(person[me_slot])
        if me in names:  # keep names unique: swap with whoever already has it
            names[names.index(me)] = names[mine]
        names[mine] = me

    lab_slots: list[list[int]] = [[] for _ in range(n_labs)]
    for slot, lab in enumerate(lab_of_slot.tolist()):
        lab_slots[lab].append(slot)
    pis = person[first_slot].tolist()
    lab_names = _add_labs(rng, accts, lab_holder, [names[p] for p in pis], [surnames[p] for p in pis],
                          lab_slots)

    slot_user = [names[p] for p in person]
    tree, slot_row = _build_tree(accts, slot_user, slot_shares, slot_usage)

    school = {h: accts[h].name if accts[h].parent == 0 else accts[accts[h].parent].name for h in holders}
    fs = compute(tree, settings.algorithm).fairshare[slot_row]
    by_name = {p.name: p for p in partitions}
    jobs = _jobs(rng, now, settings, by_name, slot_usage ** 0.6,
                 slot_user, [lab_names[lab] for lab in lab_of_slot],
                 [school[h] for h in lab_holder[lab_of_slot].tolist()], fs,
                 round(users * 0.14), round(users * 0.09), me_slot, slot_usage)

    lab_usage = np.bincount(lab_of_slot, weights=slot_usage, minlength=n_labs)
    allocations = _allocations(rng, now, lab_names, lab_usage, lab_slots, slot_user, slot_usage, jobs,
                               by_name, settings.flags, int(lab_of_slot[me_slot]))

    return Snapshot(
        cluster="demo",
        made_up=True,
        source=f"built-in demo cluster (seed {seed})",
        taken_at=now,
        tree=tree,
        settings=settings,
        partitions=partitions,
        jobs=jobs,
        allocations=allocations,
    )


#: How far back the demo's finished jobs reach: ten of its 3-day half-lives leave 0.1 % of a job.
HISTORY_DAYS = 30


def demo_history(snap: Snapshot) -> tuple[list[AccountedJob], datetime]:
    """Accounting records for the demo cluster (what ``sacct`` would list), and its last decay cycle.

    Every user association with usage gets one to six finished jobs over the last
    :data:`HISTORY_DAYS` days, and its running jobs are listed as running. The finished jobs'
    billing is chosen so that Slurm's decay law (:func:`tui.engine.projection.charged_usage`, the
    demo's half-life and PriorityCalcPeriod, cycles ending at the snapshot's last one) rebuilds the
    association's RawUsage exactly from them and the running jobs' share: the History pane's
    cross-check holds on the demo as on a real capture. Seeded by the tree, so the same snapshot
    always gives the same records.
    """
    from tui.engine.usage_law import charged_usage
    from tui.sources.sacct import AccountedJob

    tree = snap.tree
    if tree is None:
        raise ValueError("the PBS demo has no accounting records")
    st = snap.settings
    period, hl = max(int(st.calc_period_s), 1), int(st.decay_half_life_s)
    last = math.floor(snap.taken_at.timestamp() / period) * period
    rng = np.random.default_rng([int(tree.size), int(tree.usage_raw.sum()) % 2**32])
    parts = {p.name: p for p in snap.partitions}
    billed = [p.name for p in snap.partitions if p.billing_weights]
    rows = {(str(tree.account[i]), str(tree.user[i])): int(i) for i in np.flatnonzero(tree.is_user)}
    running: dict[int, list[AccountedJob]] = {}
    for job in snap.jobs:
        row = rows.get((job.account, job.user))
        if job.state != "RUNNING" or row is None or job.start_time is None:
            continue
        part = parts.get(job.partition)
        b = job_billing(job, part, st.flags) if part is not None and part.billing_weights \
            else float(job.tres.get("billing", job.tres.get("cpu", 1.0)))
        running.setdefault(row, []).append(AccountedJob(
            job.job_id, job.account, job.user, job.start_time, None,
            int((snap.taken_at - job.start_time).total_seconds()), b, "RUNNING", job.partition))
    out: list[AccountedJob] = []
    next_id = 40_000_000
    for row in np.flatnonzero(tree.is_user).tolist():
        mine = running.get(row, [])
        out += mine
        left = float(tree.usage_raw[row]) - sum(
            charged_usage(j.start.timestamp(), None, j.billing, last, period, hl) for j in mine
            if j.start.timestamp() <= last)
        if left <= 0:
            continue
        n = int(rng.integers(1, 7))
        # Ages like a real user's: mostly within a few half-lives (what RawUsage still holds), so
        # the fitted billing stays near what ran lately instead of a huge job weeks ago.
        ends = last - np.clip(rng.exponential(max(hl, _DAY), size=n), 60.0, HISTORY_DAYS * _DAY).round()
        starts = ends - rng.uniform(600.0, 36 * 3600.0, size=n).round()
        weight = rng.lognormal(0.0, 0.7, size=n)
        unit = np.array([charged_usage(float(s), float(e), 1.0, last, period, hl) for s, e in zip(starts, ends)])
        scale = left / float(np.dot(weight, unit))  # the law is linear in billing
        for s, e, w in zip(starts.tolist(), ends.tolist(), weight.tolist()):
            next_id += 1
            out.append(AccountedJob(str(next_id), str(tree.account[row]), str(tree.user[row]),
                                    datetime.fromtimestamp(s, timezone.utc), datetime.fromtimestamp(e, timezone.utc),
                                    int(e - s), w * scale, "COMPLETED",
                                    billed[int(rng.integers(len(billed)))] if billed else ""))
    return out, datetime.fromtimestamp(last, timezone.utc)
