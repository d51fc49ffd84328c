"""sshare output cut by PrivateData, made whole enough to parse.

Under ``PrivateData=usage`` a user's ``sshare -a`` lists only their own associations (and those
of accounts they coordinate), without the root row and without the accounts above them, each
indented by how many of its listed ancestors were printed. fairtop's tree needs the root and the
path down to every row, so the missing accounts are put back from ``sacctmgr show assoc`` (which
under PrivateData still lists a user's ancestor accounts with their shares), else from the rows'
own Account cells. The rows put back carry no printed values and usage 0: the snapshot marks
them ``usage_unknown``, so they are never shown as numbers nor compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Completed", "complete", "is_partial"]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.startswith("CLUSTER:")]


def _first_lines(text: str, count: int) -> list[str]:
    """The first ``count`` lines :func:`_lines` would give, without splitting the whole text
    (20k rows: 10 ms per call otherwise, on the way to the first frame)."""
    out: list[str] = []
    start = 0
    while len(out) < count and start < len(text):
        end = text.find("\n", start)
        chunk = text[start:] if end < 0 else text[start:end + 1]
        start = len(text) if end < 0 else end + 1
        out += [line for line in chunk.splitlines() if line.strip() and not line.startswith("CLUSTER:")]
    return out[:count]


def is_partial(data: bytes | str) -> bool:
    """True when sshare -P output has rows but does not start with the root account row."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    lines = _first_lines(text, 2)
    if len(lines) < 2:
        return False
    header = lines[0].split("|")
    if "Account" not in header or "User" not in header:
        return False
    cells = lines[1].split("|")
    ia, iu = header.index("Account"), header.index("User")
    return len(cells) > max(ia, iu) and not (cells[ia].strip() == "root" and cells[iu] == "")


@dataclass
class _Node:
    account: str
    user: str
    shares: str
    line: list[str] | None = None
    children: list[_Node] = field(default_factory=list)


@dataclass(frozen=True)
class Completed:
    """The whole sshare text and which of its data rows (0-based) fairtop put back."""

    text: str
    added: tuple[int, ...]


def _lineage(assoc_text: str) -> tuple[dict[str, str], dict[str, str]]:
    """account (lower) -> parent account (lower), and account (lower) -> Share, from sacctmgr."""
    lines = _lines(assoc_text)
    if not lines:
        return {}, {}
    header = lines[0].split("|")
    if not {"Account", "User", "ParentName"} <= set(header):
        return {}, {}
    ia, iu, ip = header.index("Account"), header.index("User"), header.index("ParentName")
    ish = header.index("Share") if "Share" in header else None
    parent, shares = {}, {}
    for line in lines[1:]:
        f = line.split("|")
        if len(f) > max(ia, iu, ip) and not f[iu]:
            parent[f[ia].lower()] = f[ip].lower()
            shares[f[ia].lower()] = f[ish] if ish is not None and ish < len(f) else "1"
    return parent, shares


def complete(sshare: bytes | str, assoc: bytes | str | None = None) -> Completed:
    """``sshare`` with the root and every missing ancestor account put back, indented as a whole
    ``sshare -a`` would be; siblings in the order printed, put-back accounts after them by name."""
    text = sshare.decode("utf-8", "replace") if isinstance(sshare, bytes) else sshare
    atext = assoc.decode("utf-8", "replace") if isinstance(assoc, bytes) else (assoc or "")
    lines = _lines(text)
    header = lines[0].split("|")
    ia, iu, ish = header.index("Account"), header.index("User"), header.index("RawShares")
    iusage = header.index("RawUsage")
    parent_of, shares_of = _lineage(atext)
    root = _Node("root", "", "")
    accounts: dict[str, _Node] = {"root": root}

    def account(name: str) -> _Node:
        key = name.lower()
        if key not in accounts:
            node = _Node(name, "", shares_of.get(key, "1"))
            accounts[key] = node
            up = parent_of.get(key, "root") or "root"
            if up == key:  # a malformed lineage must not loop
                up = "root"
            account(up).children.append(node)
        return accounts[key]

    for line in lines[1:]:
        f = line.split("|")
        if len(f) <= max(ia, iu, ish):
            continue
        name = f[ia].strip()
        if f[iu]:
            account(name).children.append(_Node(name, f[iu], f[ish], f))
        else:
            node = account(name)
            node.line, node.shares = f, f[ish]
    out = [lines[0]]
    added: list[int] = []

    def emit(node: _Node, depth: int) -> None:
        if node.line is not None:
            f = list(node.line)
        else:
            f = [""] * len(header)
            f[iu], f[ish], f[iusage] = node.user, node.shares, "0"
            added.append(len(out) - 1)
        f[ia] = " " * (depth + (1 if node.user else 0)) + node.account
        out.append("|".join(f))
        users = [c for c in node.children if c.user]
        subs = [c for c in node.children if not c.user]
        for child in users + subs:
            emit(child, depth + 1 if not child.user else depth)

    if root.line is None:
        root.shares = ""
    emit(root, 0)
    return Completed("\n".join(out) + "\n", tuple(added))
