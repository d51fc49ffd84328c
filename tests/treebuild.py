"""Build association trees for tests from a compact indented text (parents first)."""

from __future__ import annotations

from tui.model import NO_VAL, USE_PARENT, AssocTree


def tree_from_text(text: str, order: list[str] | None = None) -> AssocTree:
    """Lines ``<indent>name shares [usage]``; a name starting with ``@`` is a user.

    Indentation is two spaces per level below root; account usage is the sum of its users'
    (as Slurm rebuilds it). ``order`` lists account names in Slurm's children_list order
    (default: row order).
    """
    rows: list[list] = [[-1, False, "root", "", NO_VAL, 0.0]]
    stack = [0]
    for line in text.strip("\n").splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2 + 1
        name, shares, *usage = line.split()
        del stack[depth:]
        parent = stack[depth - 1]
        user = name.startswith("@")
        acct = rows[parent][2]
        rows.append([parent, user, acct if user else name, name[1:] if user else "",
                     USE_PARENT if shares == "parent" else int(shares), float(usage[0]) if usage else 0.0])
        if not user:
            stack.append(len(rows) - 1)
    for i in range(len(rows) - 1, 0, -1):  # accounts' usage = sum of children
        if not rows[i][1] and rows[i][5] == 0:
            rows[i][5] = sum(r[5] for r in rows if r[0] == i)
    rows[0][5] = sum(r[5] for r in rows if r[0] == 0)
    key = None
    if order is not None:
        rank = {name: k for k, name in enumerate(order)}
        key = [i + len(order) if r[1] else rank.get(r[2], i + len(order)) for i, r in enumerate(rows)]
    return AssocTree.from_rows([tuple(r) for r in rows], key)
