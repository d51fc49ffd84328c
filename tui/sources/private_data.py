"""Slurm's PrivateData applied to a capture: of a whole cluster's outputs, what one user's own
commands would show that user.

A publisher (``fairtop capture --every``) runs as root or SlurmUser and sees everything. Where
the cluster sets ``PrivateData``, each user must get from it no more than their own ``sshare``,
``sacctmgr``, ``scontrol show assoc_mgr``, ``squeue``, ``sprio`` and ``sacct`` print them. The rules,
read from Slurm's source and checked against each release's commands in the sandbox tests:

- ``usage`` (``assoc_mgr_get_shares`` in src/common/assoc_mgr.c): an association is listed when
  it is the user's own (UserName equal, case-sensitive) or its account is one the user
  coordinates (case-insensitive; coordinating an account covers its sub-accounts). The same
  holds for ``scontrol show assoc_mgr``.
- ``users``/``accounts`` (slurmdbd): ``sacctmgr show assoc`` lists those associations; up to
  23.11 also their ancestor accounts (names and shares, no usage: seen on 22.05), from 23.11,
  whose slurmdbd finds associations by lineage instead of LFT/RGT, not (seen on 26.05).
- ``jobs``: ``squeue``, ``sprio`` and ``sacct`` list the user's own jobs and those charged to an
  account they coordinate.
- ``nodes``, ``partitions``: the user view leaves out ``scontrol show node``/``partition`` whole
  (Slurm filters them by AllowGroups/AllowAccounts, which a capture cannot judge per user).

Operators and administrators (``sacctmgr show user`` AdminLevel), root and SlurmUser see
everything. A file this module does not know how to filter is left out of a user view (fail
closed), and so are the publisher's own inputs (the user and coordinator list, slurmdbd's
configuration). Pure text in, text out: no files, no commands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from tui.slurm_releases import release
from tui.sources.zone import ZONE_FILE

__all__ = ["HIDES", "USERS_FILE", "DBD_CONFIG_FILE", "Capture", "Reader", "private_data", "readers", "user_view",
           "visible_names"]

HIDES = ("usage", "jobs", "users", "accounts", "nodes", "partitions")
"""The PrivateData values that hide something fairtop captures."""

USERS_FILE = "sacctmgr_users.psv"
"""``sacctmgr -P show user withcoord format=User,AdminLevel,Coordinators``: the publisher's."""
DBD_CONFIG_FILE = "sacctmgr_config.txt"
"""``sacctmgr show configuration``: slurmdbd's PrivateData (it governs sacct and sacctmgr)."""

_PRIVATE = re.compile(r"^\s*PrivateData\s*=\s*(.*?)\s*$", re.M)
_SAME_FOR_ALL = frozenset({"scontrol_show_config.txt", "slurm.conf", "captured_at.txt", "commands.txt", ZONE_FILE})


def private_data(*configs: bytes | str | None) -> frozenset[str]:
    """The union of every ``PrivateData = a,b`` line in ``configs`` (``scontrol show config``,
    ``sacctmgr show configuration``), lower-cased; ``none`` and ``(null)`` add nothing."""
    out: set[str] = set()
    for text in configs:
        if text is None:
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        for m in _PRIVATE.finditer(text):
            out.update(v.strip().lower() for v in m.group(1).split(",") if v.strip())
    return frozenset(out - {"none", "(null)"})


@dataclass(frozen=True)
class Reader:
    """One user as Slurm judges what they may read."""

    name: str
    coord: frozenset[str] = frozenset()
    """Accounts they coordinate, lower-cased, sub-accounts included."""
    admin: bool = False
    """AdminLevel Operator or Administrator (or root): sees everything."""

    def owns_account(self, account: str) -> bool:
        return account.strip().lower() in self.coord


def _psv(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return [], []
    return lines[0].split("|"), [line.split("|") for line in lines[1:]]


def _children(assoc_text: str) -> dict[str, list[str]]:
    """Account (lower-cased) -> its sub-accounts, from ``sacctmgr show assoc`` (account rows)."""
    header, rows = _psv(assoc_text)
    if not {"Account", "User", "ParentName"} <= set(header):
        return {}
    ia, iu, ip = header.index("Account"), header.index("User"), header.index("ParentName")
    out: dict[str, list[str]] = {}
    for row in rows:
        if len(row) > max(ia, iu, ip) and not row[iu] and row[ip]:
            out.setdefault(row[ip].lower(), []).append(row[ia].lower())
    return out


def readers(users_text: bytes | str, assoc_text: bytes | str) -> dict[str, Reader]:
    """Every user of ``sacctmgr show user withcoord`` as a :class:`Reader` (coordinated accounts
    closed over their sub-accounts, from ``sacctmgr show assoc``)."""
    users = users_text.decode("utf-8", "replace") if isinstance(users_text, bytes) else users_text
    assoc = assoc_text.decode("utf-8", "replace") if isinstance(assoc_text, bytes) else assoc_text
    header, rows = _psv(users)
    if "User" not in header:
        raise ValueError("not 'sacctmgr -P show user withcoord' output: no User column")
    iu = header.index("User")
    ia = header.index("Admin") if "Admin" in header else None
    ic = header.index("Coord Accounts") if "Coord Accounts" in header else None
    below = _children(assoc)
    out: dict[str, Reader] = {}
    for row in rows:
        if len(row) <= iu or not row[iu]:
            continue
        level = row[ia].strip().lower() if ia is not None and ia < len(row) else ""
        direct = [a.strip().lower() for a in row[ic].split(",")] if ic is not None and ic < len(row) else []
        coord: set[str] = set()
        pending = [a for a in direct if a]
        while pending:
            acct = pending.pop()
            if acct not in coord:
                coord.add(acct)
                pending.extend(below.get(acct, ()))
        out[row[iu]] = Reader(row[iu], frozenset(coord), level in ("administrator", "operator"))
    return out


# --- the capture, indexed once: each reader's view costs their own rows only --------------------------

@dataclass
class _Keyed:
    """One file's records with whose they are: header text kept whole, then records (each with a
    user, an account and its text), indexed by user and by lower-cased account."""

    head: str
    users: list[str]
    accounts: list[str]
    texts: list[str]
    up: list[tuple[int, ...]] | None = None
    """Per record, the records of the accounts above it (sshare, sacctmgr), nearest last."""

    def __post_init__(self) -> None:
        self.by_user: dict[str, list[int]] = {}
        self.by_account: dict[str, list[int]] = {}
        for k, (user, account) in enumerate(zip(self.users, self.accounts)):
            self.by_user.setdefault(user, []).append(k)
            self.by_account.setdefault(account.lower(), []).append(k)

    def mine(self, reader: Reader) -> list[int]:
        """Records that are the reader's own or in an account they coordinate, in file order."""
        got = set(self.by_user.get(reader.name, ()))
        for account in reader.coord:
            got.update(self.by_account.get(account, ()))
        return sorted(got)


def _lines_keyed(text: str, user_col: str, acct_col: str, what: str) -> _Keyed:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return _Keyed(text, [], [], [])
    header = lines[0].split("|")
    if user_col not in header or acct_col not in header:
        raise ValueError(f"{what} without {user_col} and {acct_col} columns")
    iu, ia = header.index(user_col), header.index(acct_col)
    rows = [(line, line.split("|")) for line in lines[1:]]
    rows = [(line, c) for line, c in rows if len(c) > max(iu, ia)]
    return _Keyed(lines[0] + "\n", [c[iu] for _, c in rows], [c[ia].strip() for _, c in rows], [r for r, _ in rows])


def _sshare_keyed(text: str) -> _Keyed:
    keyed = _lines_keyed(text, "User", "Account", "sshare output")
    stack: list[tuple[int, int]] = []  # (printed depth, record) of the open account rows
    up: list[tuple[int, ...]] = []
    ia = keyed_index(keyed.head, "Account") if keyed.texts else 0
    for k, line in enumerate(keyed.texts):
        name = line.split("|")[ia]
        depth = len(name) - len(name.lstrip(" "))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        up.append(tuple(r for _, r in stack))
        if not keyed.users[k]:
            stack.append((depth, k))
    keyed.up = up
    return keyed


def keyed_index(head: str, column: str) -> int:
    return head.rstrip("\n").split("|").index(column)


def _sacctmgr_keyed(text: str) -> _Keyed:
    keyed = _lines_keyed(text, "User", "Account", "sacctmgr assoc output")
    ip = keyed_index(keyed.head, "ParentName") if keyed.head.strip() else 0
    if keyed.head.strip() and "ParentName" not in keyed.head.split("|"):
        raise ValueError("sacctmgr assoc output without ParentName")
    account_row = {a.lower(): k for k, (u, a) in enumerate(zip(keyed.users, keyed.accounts)) if not u}
    parent = {k: keyed.texts[k].split("|")[ip].lower() for k in account_row.values()}
    up: list[tuple[int, ...]] = []
    for k, (user, account) in enumerate(zip(keyed.users, keyed.accounts)):
        chain: list[int] = []
        acct = account.lower() if user else parent.get(k, "")
        while acct in account_row and account_row[acct] not in chain and len(chain) < 64:
            chain.append(account_row[acct])
            acct = parent.get(account_row[acct], "")
        up.append(tuple(reversed(chain)))
    keyed.up = up
    return keyed


_RECORD = re.compile(r"^ClusterName=\S* Account=(\S*) UserName=(\S*?)(?:\(\d+\))? ", re.M)


def _assoc_mgr_keyed(text: str) -> _Keyed:
    starts = [m.start() for m in _RECORD.finditer(text)]
    if not starts:
        if "ClusterName=" in text:
            raise ValueError("assoc_mgr records in a shape this module does not know")
        return _Keyed(text, [], [], [])
    users, accounts, texts = [], [], []
    for begin, end in zip(starts, [*starts[1:], len(text)]):
        m = _RECORD.match(text, begin)
        assert m is not None
        users.append(m.group(2))
        accounts.append(m.group(1))
        texts.append(text[begin:end])
    return _Keyed(text[:starts[0]], users, accounts, texts)


def _sprio_keyed(text: str, account_of: Mapping[str, str]) -> _Keyed:
    """``sprio -l`` (fixed width, no account column): the account from squeue by job id."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return _Keyed(text, [], [], [])
    header = lines[0].split()
    if "USER" not in header or header[0] != "JOBID":
        raise ValueError("sprio output without JOBID and USER")
    iu = header.index("USER")
    rows = [(line, line.split()) for line in lines[1:]]
    rows = [(line, c) for line, c in rows if len(c) > iu]
    return _Keyed(lines[0] + "\n", [c[iu] for _, c in rows], [account_of.get(c[0], "") for _, c in rows],
                  [line for line, _ in rows])


def _job_accounts(squeue_text: str) -> dict[str, str]:
    header, rows = _psv(squeue_text)
    if "JOBID" not in header or "ACCOUNT" not in header:
        return {}
    ij, ia = header.index("JOBID"), header.index("ACCOUNT")
    return {r[ij]: r[ia] for r in rows if len(r) > max(ij, ia)}


class Capture:
    """A whole capture (file name -> content) indexed once for every reader's view."""

    def __init__(self, files: Mapping[str, bytes], hides: Iterable[str]) -> None:
        self.files = dict(files)
        self.hides = frozenset(hides)
        text = {k: v.decode("utf-8", "replace") for k, v in files.items() if not k.endswith(".err")}
        version = re.search(r"^SLURM_VERSION\s*=\s*(\S+)", text.get("scontrol_show_config.txt", ""), re.M)
        self.lineage = release(version.group(1) if version else None).sacctmgr_lft  # ancestors before 23.11
        account_of = _job_accounts(text.get("squeue.txt", ""))
        makers = {"sshare_a_l_P.psv": _sshare_keyed,
                  "sacctmgr_assoc_hdr.psv": _sacctmgr_keyed, "sacctmgr_assoc_nolft.psv": _sacctmgr_keyed,
                  "assoc_mgr.txt": _assoc_mgr_keyed,
                  "squeue.txt": lambda t: _lines_keyed(t, "USER", "ACCOUNT", "squeue output"),
                  "sacct_a_P.psv": lambda t: _lines_keyed(t, "User", "Account", "sacct output"),
                  "sprio_l.txt": lambda t: _sprio_keyed(t, account_of)}
        self.keyed: dict[str, _Keyed | None] = {}
        for name, body in text.items():
            if name in makers:
                try:
                    self.keyed[name] = makers[name](body)
                except (ValueError, IndexError):
                    self.keyed[name] = None  # not in the shape this module knows: left out of views

    def _cut(self, name: str) -> bool:
        """Does PrivateData cut this file (else every user sees it whole)?"""
        flags = self.hides
        return {"sshare_a_l_P.psv": "usage" in flags,
                "sacctmgr_assoc_hdr.psv": bool(flags & {"users", "accounts"}),
                "sacctmgr_assoc_nolft.psv": bool(flags & {"users", "accounts"}),
                "assoc_mgr.txt": bool(flags & {"usage", "users"}),
                "squeue.txt": "jobs" in flags, "sacct_a_P.psv": "jobs" in flags,
                "sprio_l.txt": "jobs" in flags}.get(name, True)

    @cached_property
    def shared(self) -> dict[str, bytes]:
        """Files every user sees whole under these PrivateData (and the config), by name: found
        once per capture, not once per reader."""
        out = {}
        for name, body in self.files.items():
            base = name[:-4] if name.endswith(".err") else name
            if base in _SAME_FOR_ALL or (base in self.keyed and not self._cut(base)) or (
                    base == "scontrol_show_node.txt" and "nodes" not in self.hides) or (
                    base == "scontrol_show_partition.txt" and "partitions" not in self.hides):
                out[name] = body
        return out

    def view(self, reader: Reader) -> tuple[dict[str, bytes], list[str]]:
        """What ``reader`` may read: (files, names left out whole). Files every user sees whole
        are in :meth:`shared`, not here, except for an administrator or a cluster hiding nothing."""
        own_inputs = {USERS_FILE, DBD_CONFIG_FILE, USERS_FILE + ".err", DBD_CONFIG_FILE + ".err"}
        if reader.admin or not self.hides & set(HIDES):
            return {k: v for k, v in self.files.items() if k not in own_inputs}, sorted(own_inputs & set(self.files))
        shared = self.shared
        out: dict[str, bytes] = {}
        left: list[str] = []
        for name in self.files:
            base = name[:-4] if name.endswith(".err") else name
            if name in shared or name in own_inputs:
                continue
            keyed = self.keyed.get(base)
            if base not in self.keyed or keyed is None:
                left.append(name)
            elif name.endswith(".err"):
                out[name] = self.files[name]
            else:
                out[name] = self._select(base, keyed, reader).encode()
        return out, sorted(left)

    def _select(self, name: str, keyed: _Keyed, reader: Reader) -> str:
        mine = keyed.mine(reader)
        if name == "sshare_a_l_P.psv":
            assert keyed.up is not None
            shown = set(mine)
            ia = keyed_index(keyed.head, "Account")
            lines = []
            for k in mine:
                cells = keyed.texts[k].split("|")
                cells[ia] = " " * sum(1 for a in keyed.up[k] if a in shown) + cells[ia].strip()
                lines.append("|".join(cells))
            return keyed.head + "".join(line + "\n" for line in lines)
        if name.startswith("sacctmgr_assoc") and self.lineage:
            assert keyed.up is not None
            mine = sorted(set(mine).union(*(keyed.up[k] for k in mine)))
        joined = "" if name == "assoc_mgr.txt" else "\n"
        return keyed.head + "".join(keyed.texts[k] + joined for k in mine)


def user_view(files: Mapping[str, bytes], reader: Reader, hides: Iterable[str]) -> tuple[dict[str, bytes], list[str]]:
    """What of a capture (file name -> content) ``reader`` may read under PrivateData ``hides``:
    the filtered files with those every user sees whole, and the names of the files left out.
    (A publisher making many views indexes the capture once: :class:`Capture`.)"""
    capture = Capture(files, hides)
    view, left = capture.view(reader)
    if reader.admin or not capture.hides & set(HIDES):
        return view, left
    return {**capture.shared, **view}, left


def visible_names(files: Mapping[str, bytes]) -> set[str]:
    """Every association, user and account name and job id the outputs of a capture show
    (what a test compares between a user view and the user's own commands)."""
    names: set[str] = set()
    for name, data in files.items():
        text = data.decode("utf-8", "replace")
        if name in ("sshare_a_l_P.psv", "sacctmgr_assoc_hdr.psv", "sacctmgr_assoc_nolft.psv"):
            header, rows = _psv(text)
            for col in ("Account", "User"):
                if col in header:
                    i = header.index(col)
                    names.update(f"{col.lower()}:{r[i].strip()}" for r in rows if len(r) > i and r[i].strip())
        elif name == "assoc_mgr.txt":
            for m in _RECORD.finditer(text):
                names.add(f"account:{m.group(1)}")
                if m.group(2):
                    names.add(f"user:{m.group(2)}")
        elif name in ("squeue.txt", "sacct_a_P.psv"):
            header, rows = _psv(text)
            cols = {"JOBID": "job", "JobID": "job", "USER": "user", "User": "user", "ACCOUNT": "account",
                    "Account": "account"}
            for col, kind in cols.items():
                if col in header:
                    i = header.index(col)
                    names.update(f"{kind}:{r[i].strip()}" for r in rows if len(r) > i and r[i].strip())
        elif name == "sprio_l.txt":
            lines = text.splitlines()
            if lines and "USER" in lines[0].split():
                iu = lines[0].split().index("USER")
                for line in lines[1:]:
                    cells = line.split()
                    if len(cells) > iu:
                        names.update((f"job:{cells[0]}", f"user:{cells[iu]}"))
    return names
