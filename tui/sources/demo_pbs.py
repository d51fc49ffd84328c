"""The built-in PBS Professional demo site (``fairtop --demo pbs``).

A made-up university machine run by OpenPBS with ``fair_share: true``: five divisions, two or
three projects each, and about 130 users with ``cput`` usage (CPU-seconds), plus a few guest
accounts that are in the usage file but not in ``resource_group`` (the scheduler files them
under ``unknown``, which gets ``unknown_shares: 5``).

The site is written out as the two texts a real server holds -- ``resource_group`` lines and
``entity usage`` lines -- and read back through :func:`tui.sources.pbs.parse_resource_group`,
:func:`tui.sources.pbs_usage.parse_usage` and :func:`tui.sources.pbs.tree_from_inputs`, so the
demo goes through exactly the code a saved PBS folder does. Deterministic: the same arguments
give the same site.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from tui.model import Snapshot
from tui.sources.demo import _usernames
from tui.sources.pbs import parse_resource_group, tree_from_inputs
from tui.sources.pbs_usage import parse_usage

__all__ = ["DIVISIONS", "UNKNOWN_SHARES", "GUESTS", "demo_pbs_texts", "demo_pbs_snapshot"]

#: (division, cgroup, shares, ((project, shares, users), ...)).
DIVISIONS: tuple[tuple[str, int, int, tuple[tuple[str, int, int], ...]], ...] = (
    ("physics", 100, 30, (("astro", 50, 12), ("condmat", 30, 10), ("hep", 20, 8))),
    ("chemistry", 200, 25, (("quantchem", 60, 11), ("moldyn", 40, 9))),
    ("biology", 300, 20, (("genomics", 55, 12), ("structbio", 45, 8), ("neuro", 25, 6))),
    ("engineering", 400, 15, (("cfd", 70, 14), ("materials", 30, 9))),
    ("climate", 500, 10, (("ocean", 50, 10), ("atmos", 50, 12))),
)
#: ``unknown_shares`` in the demo's ``sched_config``.
UNKNOWN_SHARES = 5
#: Entities with usage but no ``resource_group`` line: they land under ``unknown``.
GUESTS = ("guest01", "guest02", "visitor")
#: A middling user: the one renamed to ``me`` (project index, user index within it).
_ME_SLOT = ("quantchem", 3)


def demo_pbs_texts(seed: int = 0, me: str | None = None) -> tuple[str, str]:
    """The demo site's ``resource_group`` text and its ``entity usage`` lines.

    Parameters
    ----------
    seed : int
        Seed of the random generator (user names, shares and usage).
    me : str, optional
        A user name given to one user of middling usage in ``quantchem`` (only the name changes).

    Returns
    -------
    (str, str)
        ``resource_group`` (``name cgroup parent shares``, parents first) and usage lines
        (``name cput-seconds``; users without usage are left out, as the scheduler's file does).
    """
    rng = np.random.default_rng(seed)
    n_users = sum(n for _, _, _, projects in DIVISIONS for _, _, n in projects)
    names, _ = _usernames(rng, n_users)
    if me:
        names = [n + "2" if n == me else n for n in names]  # ``me`` must stay unique
    groups = ["# resource_group of the fairtop demo PBS site: name cgroup parent shares",
              "# divisions, then their projects, then the users of each project"]
    usage = ["# usage in cput (CPU-seconds), as pbsfs would list the leaves"]
    k = 0
    for d_name, d_cgroup, d_shares, projects in DIVISIONS:
        groups.append(f"{d_name}\t{d_cgroup}\troot\t{d_shares}")
        for p, (p_name, p_shares, n) in enumerate(projects):
            p_cgroup = d_cgroup + 10 * (p + 1)
            groups.append(f"{p_name}\t{p_cgroup}\t{d_name}\t{p_shares}")
            intensity = rng.lognormal(0.0, 0.8)  # some projects run far more than others
            for u in range(n):
                user = me if me and (p_name, u) == _ME_SLOT else names[k]
                k += 1
                shares = int(rng.choice([1, 1, 1, 2, 5, 10]))
                groups.append(f"{user}\t{1000 + k}\t{p_name}\t{shares}")
                if rng.random() < 0.15 and (p_name, u) != _ME_SLOT:
                    continue  # no usage this period
                cput = rng.lognormal(np.log(4.0e5 * intensity), 1.3)
                usage.append(f"{user} {cput:.0f}")
    for g, guest in enumerate(GUESTS):
        usage.append(f"{guest} {20000 * (g + 1) + 4321}")
    return "\n".join(groups) + "\n", "\n".join(usage) + "\n"


def demo_pbs_snapshot(seed: int = 0, me: str | None = None, now: datetime | None = None) -> Snapshot:
    """The demo PBS site as a snapshot (``snapshot.pbs``; no Slurm tree, partitions or jobs).

    Parameters
    ----------
    seed : int
        As :func:`demo_pbs_texts`.
    me : str, optional
        As :func:`demo_pbs_texts`; "" counts as None.
    now : datetime, optional
        The snapshot's time (UTC if naive); default the current time, to the second.
    """
    if now is None:
        now = datetime.now(timezone.utc).replace(microsecond=0)
    elif now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    groups_text, usage_text = demo_pbs_texts(seed, me or None)
    groups = parse_resource_group(groups_text.encode(), "demo resource_group")
    usage = parse_usage(usage_text.encode(), "demo usage")
    tree = tree_from_inputs(groups, usage, unknown_shares=UNKNOWN_SHARES, usage_res="cput")
    return Snapshot(cluster="demo-pbs", source="demo (PBS Professional)", taken_at=now, pbs=tree, made_up=True)
