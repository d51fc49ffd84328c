"""PBS Professional fairshare input -> :class:`tui.model.PbsTree`.

``resource_group`` (``$PBS_HOME/sched_priv/resource_group``) holds one entity a line,
``name cgroup parent shares`` separated by spaces or tabs; lines whose first non-blank character
is ``#`` or ``*`` and blank lines are skipped (OpenPBS ``parse_group`` / ``skip_line``). Where
OpenPBS logs ``resgroup: error on line N`` and carries on without the line, fairtop refuses the
file with an :class:`~tui.sources.errors.InputError` naming the line: a tree silently missing a
branch would show wrong percentages for everyone.

Usage comes from :mod:`tui.sources.pbs_usage` (binary file, ``pbsfs`` output or ``entity usage``
lines) and is placed with the engine's load rule (:func:`tui.engine.pbs_tree.load_usage`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from tui.engine.pbs_tree import ROOT_NAME, UNKNOWN_NAME, GroupEntry, build_tree, load_usage, set_usage
from tui.model import PbsTree
from tui.sources.errors import InputError
from tui.sources.pbs_usage import UsageInput, decode_text, parse_usage

#: ``parse_group`` reads with ``fgets(buf, 256, fp)``: longer lines are split by OpenPBS.
MAX_LINE_BYTES = 255
INT_MAX = 2**31 - 1
_INT = re.compile(r"[+-]?[0-9]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _int_field(token: str, what: str, source: str, line: int) -> int:
    """A C ``int`` read with ``strtol(.., 10)`` that must consume the whole token."""
    if not _INT.fullmatch(token):
        hint = " (Windows line ends? OpenPBS reads the CR as part of the field)" if "\r" in token else ""
        raise InputError(source, f"{what} {token.strip()!r} is not an integer{hint}", line)
    value = int(token)
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise InputError(source, f"{what} {token} does not fit a 32-bit integer", line)
    return value


def _forward_reference(name: str, parent: str, defined_at: dict[str, tuple[int, str]]) -> str:
    """Explain a parent that is defined only further down: a cycle or an ordering problem."""
    seen = [name, parent]
    cur = parent
    while cur in defined_at and defined_at[cur][1] not in ("root", ROOT_NAME):
        cur = defined_at[cur][1]
        if cur in seen:
            return "cycle: " + " -> ".join(seen[seen.index(cur):] + [cur])
        seen.append(cur)
    line = defined_at[parent][0]
    return f"parent {parent} of {name} is defined only later, on line {line} (a parent must come first)"


def parse_resource_group(data: bytes, source: str) -> list[tuple[int, GroupEntry]]:
    """Entries of a ``resource_group`` file with their 1-based line numbers, in file order.

    Parameters
    ----------
    data : bytes
        File content.
    source : str
        Name for messages (usually the path).

    Raises
    ------
    InputError
        Empty or non-text file; a line with a missing field, a non-integer or out-of-range
        ``cgroup``/``shares``, negative shares, a duplicate name, a parent that is undefined,
        defined later or part of a cycle, sibling shares summing past a C ``int``, or a line
        longer than OpenPBS's 255-byte buffer.
    """
    lines = decode_text(data, source).split("\n")
    parsed: list[tuple[int, list[str]]] = []
    for n, line in enumerate(lines, 1):
        if len(line.encode()) > MAX_LINE_BYTES:
            raise InputError(source, f"line is longer than {MAX_LINE_BYTES} bytes (OpenPBS would split it)",
                             n)
        text = line.strip()
        if not text or text[0] in "#*":
            continue
        fields = [f for f in re.split(r"[ \t]+", line) if f]
        if len(fields) < 4:
            names = ("name", "cgroup", "parent", "shares")
            missing = names[len(fields)]
            raise InputError(source, f"missing field '{missing}' (expected: name cgroup parent shares)", n)
        parsed.append((n, fields[:4]))  # strtok reads four fields; the rest is ignored, as in OpenPBS
    if not parsed:
        raise InputError(source, "no entities (only comments or blank lines)")

    defined_at: dict[str, tuple[int, str]] = {}
    for n, (name, _, parent, _) in parsed:
        defined_at.setdefault(name, (n, parent))
    known = {ROOT_NAME: 0, UNKNOWN_NAME: 0}
    sibling_total: dict[str, int] = {}
    out: list[tuple[int, GroupEntry]] = []
    for n, (name, cgroup_tok, parent, shares_tok) in parsed:
        if _CONTROL.search(name):
            raise InputError(source, f"entity name {name!r} contains a control character", n)
        if name in known:
            first = f" (first on line {known[name]})" if known[name] else f" ({name} is built in)"
            raise InputError(source, f"entity {name} is not unique{first}", n)
        key = ROOT_NAME if parent == "root" else parent
        if parent == name:
            raise InputError(source, f"cycle: {name} is its own parent", n)
        if key not in known:
            if parent in defined_at and defined_at[parent][0] > n:
                raise InputError(source, _forward_reference(name, parent, defined_at), n)
            raise InputError(source, f"parent {parent} of {name} is not defined", n)
        cgroup = _int_field(cgroup_tok, "cgroup", source, n)
        shares = _int_field(shares_tok, "shares", source, n)
        if shares < 0:
            raise InputError(source, f"shares {shares} is negative", n)
        sibling_total[key] = sibling_total.get(key, 0) + shares
        if sibling_total[key] > INT_MAX:
            raise InputError(source, f"shares under {parent} add up past {INT_MAX} (a C int in OpenPBS)", n)
        known[name] = n
        out.append((n, GroupEntry(name, cgroup, parent, shares)))
    return out


def tree_from_inputs(
    groups: list[tuple[int, GroupEntry]],
    usage: UsageInput | None,
    unknown_shares: int = 0,
    usage_res: str = "cput",
) -> PbsTree:
    """Build the tree and place usage, as the scheduler would after reading both files.

    A binary file or ``entity usage`` lines go through the load rule in order. A ``pbsfs``
    listing shows every node's usage as it stood, so its leaves are loaded (in reverse, which
    recreates the listed order of entities under ``unknown``) and then every listed node keeps
    exactly the listed value.
    """
    if not 0 <= unknown_shares <= INT_MAX:
        raise ValueError("unknown_shares must be a non-negative C int")
    tree = build_tree((e for _, e in groups), unknown_shares, usage_res)
    if usage is None:
        return tree
    if usage.usage_res:
        tree = replace(tree, usage_res=usage.usage_res)
    if usage.kind != "pbsfs":
        tree = load_usage(tree, ((r.name, r.usage) for r in usage.records), last_decay=usage.last_decay)
    else:
        internal = set(tree.name[tree.parent[1:]]) | {ROOT_NAME, UNKNOWN_NAME}
        in_tree = set(tree.name)
        leaves = [(r.name, r.usage) for r in reversed(usage.records)
                  if r.name not in internal and (r.usage != 1 or r.name not in in_tree)]
        tree = set_usage(load_usage(tree, leaves), {r.name: r.usage for r in usage.records})
    if not np.all(np.isfinite(tree.usage)):
        raise InputError(usage.source, "usage values add up past the largest double")
    return tree


def read_pbs(
    resource_group: str | Path,
    usage: str | Path | None = None,
    unknown_shares: int = 0,
    usage_res: str = "cput",
) -> PbsTree:
    """Read ``resource_group`` and (optionally) a usage input from disk into a :class:`PbsTree`.

    Parameters
    ----------
    resource_group : path
        The ``resource_group`` file.
    usage : path, optional
        Binary usage file, saved ``pbsfs`` output, or ``entity usage`` lines.
    unknown_shares : int
        ``unknown_shares`` from ``sched_config`` (OpenPBS default 0).
    usage_res : str
        ``fairshare_usage_res`` for display, unless a ``pbsfs`` header names it.

    Raises
    ------
    InputError
        Any unreadable or malformed input (never another exception for bad content).
    """
    groups = parse_resource_group(_read(resource_group), str(resource_group))
    parsed = None if usage is None else parse_usage(_read(usage), str(usage))
    return tree_from_inputs(groups, parsed, unknown_shares, usage_res)


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None
