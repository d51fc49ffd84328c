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

from tui.slurm_releases import release

__all__ = ["HIDES", "USERS_FILE", "DBD_CONFIG_FILE", "Reader", "private_data", "readers", "user_view",
           "visible_names"]

HIDES = ("usage", "jobs", "users", "accounts", "nodes", "partitions")
"""The PrivateData values that hide something fairtop captures."""

USERS_FILE = "sacctmgr_users.psv"
"""``sacctmgr -P show user withcoord format=User,AdminLevel,Coordinators``: the publisher's."""
DBD_CONFIG_FILE = "sacctmgr_config.txt"
"""``sacctmgr show configuration``: slurmdbd's PrivateData (it governs sacct and sacctmgr)."""

_PRIVATE = re.compile(r"^\s*PrivateData\s*=\s*(.*?)\s*$", re.M)
_SAME_FOR_ALL = frozenset({"scontrol_show_config.txt", "slurm.conf", "captured_at.txt", "commands.txt"})


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
        todo = [a for a in direct if a]
        while todo:
            acct = todo.pop()
            if acct not in coord:
                coord.add(acct)
                todo.extend(below.get(acct, ()))
        out[row[iu]] = Reader(row[iu], frozenset(coord), level in ("administrator", "operator"))
    return out


# --- each file's filter ------------------------------------------------------------------------------

def _sees_assoc(reader: Reader, account: str, user: str) -> bool:
    return user == reader.name or reader.owns_account(account)


def _sshare(text: str, reader: Reader) -> str:
    """Rows the reader may see, indented as sshare indents them for that reader: one space per
    listed ancestor (the client draws the tree of what it was given)."""
    lines = text.splitlines()
    if not lines:
        return text
    header = lines[0].split("|")
    if "Account" not in header or "User" not in header:
        raise ValueError("sshare output without Account and User columns")
    ia, iu = header.index("Account"), header.index("User")
    out = [lines[0]]
    stack: list[tuple[int, bool]] = []  # (printed depth, listed) of the open account rows
    for line in lines[1:]:
        cells = line.split("|")
        if len(cells) <= max(ia, iu):
            continue
        name = cells[ia]
        depth = len(name) - len(name.lstrip(" "))
        user = cells[iu]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        listed = _sees_assoc(reader, name.strip(), user)
        if not user:
            stack.append((depth, listed))
        if listed:
            shown = sum(1 for _, seen in stack[:-1 if not user else None] if seen)
            cells[ia] = " " * shown + name.strip()
            out.append("|".join(cells))
    return "\n".join(out) + "\n"


def _sacctmgr_assoc(text: str, reader: Reader, lineage: bool) -> str:
    """The reader's associations and (``lineage``) their ancestor accounts, in the file's order."""
    header, rows = _psv(text)
    if not {"Account", "User", "ParentName"} <= set(header):
        raise ValueError("sacctmgr assoc output without Account, User and ParentName")
    ia, iu, ip = header.index("Account"), header.index("User"), header.index("ParentName")
    parent_of = {r[ia].lower(): r[ip].lower() for r in rows if len(r) > max(ia, iu, ip) and not r[iu]}
    keep_acct: set[str] = set()
    keep_rows = []
    for k, row in enumerate(rows):
        if len(row) <= max(ia, iu, ip):
            continue
        if _sees_assoc(reader, row[ia], row[iu]):
            keep_rows.append(k)
            acct = row[ia].lower() if row[iu] else parent_of.get(row[ia].lower(), "")
            while lineage and acct and acct not in keep_acct:
                keep_acct.add(acct)
                acct = parent_of.get(acct, "")
    out = ["|".join(header)]
    keep = set(keep_rows)
    for k, row in enumerate(rows):
        if k in keep or (len(row) > max(ia, iu) and not row[iu] and row[ia].lower() in keep_acct):
            out.append("|".join(row))
    return "\n".join(out) + "\n"


_RECORD = re.compile(r"^ClusterName=\S* Account=(\S*) UserName=(\S*?)(?:\(\d+\))? ", re.M)


def _assoc_mgr(text: str, reader: Reader) -> str:
    """``scontrol show assoc_mgr`` with only the reader's association records."""
    starts = [m.start() for m in _RECORD.finditer(text)]
    if not starts:
        return text if "ClusterName=" not in text else ""
    head, out = text[:starts[0]], []
    for begin, end in zip(starts, [*starts[1:], len(text)]):
        m = _RECORD.match(text, begin)
        assert m is not None
        if _sees_assoc(reader, m.group(1), m.group(2)):
            out.append(text[begin:end])
    return head + "".join(out)


def _job_rows(text: str, reader: Reader, user_col: str, acct_col: str) -> str:
    header, rows = _psv(text)
    if user_col not in header:
        raise ValueError(f"no {user_col} column")
    iu = header.index(user_col)
    ia = header.index(acct_col) if acct_col in header else None
    keep = [row for row in rows if len(row) > iu and (
        row[iu] == reader.name or (ia is not None and len(row) > ia and reader.owns_account(row[ia])))]
    return "\n".join("|".join(r) for r in [header, *keep]) + "\n"


def _sprio(text: str, reader: Reader, account_of: Mapping[str, str]) -> str:
    """``sprio -l`` (fixed width, no account column): own jobs, and jobs whose account (from
    squeue) the reader coordinates."""
    lines = text.splitlines()
    if not lines:
        return text
    header = lines[0].split()
    if "USER" not in header or header[0] != "JOBID":
        raise ValueError("sprio output without JOBID and USER")
    iu = header.index("USER")
    keep = [lines[0]]
    for line in lines[1:]:
        cells = line.split()
        if len(cells) > iu and (cells[iu] == reader.name or reader.owns_account(account_of.get(cells[0], ""))):
            keep.append(line)
    return "\n".join(keep) + "\n"


def _job_accounts(squeue_text: str) -> dict[str, str]:
    header, rows = _psv(squeue_text)
    if "JOBID" not in header or "ACCOUNT" not in header:
        return {}
    ij, ia = header.index("JOBID"), header.index("ACCOUNT")
    return {r[ij]: r[ia] for r in rows if len(r) > max(ij, ia)}


def user_view(files: Mapping[str, bytes], reader: Reader, hides: Iterable[str]) -> tuple[dict[str, bytes], list[str]]:
    """What of a capture (file name -> content) ``reader`` may read under PrivateData ``hides``.

    Returns the filtered files and the names of the files left out whole. An administrator or a
    cluster that hides nothing gets every file but the publisher's own inputs.
    """
    flags = frozenset(hides)
    own_inputs = {USERS_FILE, DBD_CONFIG_FILE, USERS_FILE + ".err", DBD_CONFIG_FILE + ".err"}
    if reader.admin or not flags & set(HIDES):
        return {k: v for k, v in files.items() if k not in own_inputs}, sorted(own_inputs & set(files))
    text = {k: v.decode("utf-8", "replace") for k, v in files.items()}
    account_of = _job_accounts(text.get("squeue.txt", ""))
    version = re.search(r"^SLURM_VERSION\s*=\s*(\S+)", text.get("scontrol_show_config.txt", ""), re.M)
    lineage = release(version.group(1) if version else None).sacctmgr_lft  # ancestors listed before 23.11
    out: dict[str, bytes] = {}
    left: list[str] = []
    for name, body in text.items():
        base = name[:-4] if name.endswith(".err") else name
        try:
            kept = _filtered(base, body, reader, flags, account_of, lineage)
        except ValueError:
            kept = None  # not in the shape this module knows: fail closed
        if kept is None:
            if name not in own_inputs:
                left.append(name)
        else:
            out[name] = kept.encode() if not name.endswith(".err") else files[name]
    return out, sorted(left)


def _filtered(name: str, body: str, reader: Reader, flags: frozenset[str],
              account_of: Mapping[str, str], lineage: bool) -> str | None:
    """One file as ``reader`` may see it; None: left out whole."""
    if name in _SAME_FOR_ALL:
        return body
    if name == "sshare_a_l_P.psv":
        return _sshare(body, reader) if "usage" in flags else body
    if name == "sacctmgr_assoc_hdr.psv" or name == "sacctmgr_assoc_nolft.psv":
        return _sacctmgr_assoc(body, reader, lineage) if flags & {"users", "accounts"} else body
    if name == "assoc_mgr.txt":
        return _assoc_mgr(body, reader) if flags & {"usage", "users"} else body
    if name in ("squeue.txt", "sacct_a_P.psv"):
        if "jobs" not in flags:
            return body
        return _job_rows(body, reader, "USER" if name == "squeue.txt" else "User",
                         "ACCOUNT" if name == "squeue.txt" else "Account")
    if name == "sprio_l.txt":
        return _sprio(body, reader, account_of) if "jobs" in flags else body
    if name == "scontrol_show_node.txt":
        return None if "nodes" in flags else body
    if name == "scontrol_show_partition.txt":
        return None if "partitions" in flags else body
    return None


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
