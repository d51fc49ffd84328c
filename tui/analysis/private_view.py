"""What the breakdown and the planner can say about a snapshot that PrivateData cut to one user's
view (:attr:`tui.model.Snapshot.private`): the scheduler's printed numbers of the rows the user
may see, the publisher's ranking where there is one, and plainly what is missing. No Textual."""

from __future__ import annotations

from tui.analysis.standing import Standing

__all__ = ["private_breakdown", "private_whatif"]

_COLUMNS = ("NormShares", "RawUsage", "EffectvUsage", "LevelFS", "FairShare")


def _hides(standing: Standing) -> str:
    private = standing.snapshot.private
    return ",".join(sorted(private.hides)) if private is not None and private.hides else "usage"


def private_breakdown(standing: Standing, row: int) -> tuple[str, list[str]]:
    """Title and lines for the breakdown of ``row`` in a PrivateData view."""
    snap, tree = standing.snapshot, standing.snapshot.tree
    assert tree is not None and snap.private is not None
    label = tree.label(row)
    hides = _hides(standing)
    lines: list[str] = []
    if row in snap.usage_unknown:
        lines.append(f"PrivateData={hides} hides {label} from {snap.private.reader or 'you'}: only its name and "
                     "shares are listed (sacctmgr), not its usage or fairshare.")
        return f"Why {label} has its fairshare: unknown", lines
    printed = snap.printed or {}
    cells = [f"{c} {printed[c][row]}" for c in _COLUMNS if c in printed and printed[c][row] != ""]
    lines.append("As sshare printed it: " + (" · ".join(cells) if cells else "nothing"))
    ranking = snap.private.ranking.get(str(tree.account[row])) if tree.is_user[row] else None
    if ranking:
        lines.append("Among all users, as the site's publisher ranked it from the whole tree: " + " · ".join(ranking))
    lines += [
        "",
        f"PrivateData={hides}: the cluster shows you only your own associations (and those of accounts you "
        "coordinate), so fairtop cannot rebuild the levels above this one: their formulas need every sibling's "
        "shares and usage. The numbers above are the scheduler's own.",
    ]
    if not ranking:
        lines.append("Your place among all users needs everyone's usage: a site publisher ('fairtop capture "
                     "--every', see docs/admin/private-data.md) computes it for each user without showing the others.")
    return f"Why {label} has its fairshare · PrivateData view", lines


def private_whatif(standing: Standing) -> str:
    """Why the planner cannot project under a PrivateData view."""
    return (f"What if I run these jobs? Not from this view: PrivateData={_hides(standing)} hides the other "
            "associations' usage, and a projection of fairshare and rank re-ranks every user over time. "
            "Your own usage and jobs are in the tree and History; an administrator (or a view published to "
            "an admin group) can plan with the whole tree.")
