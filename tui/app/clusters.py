"""Several clusters in one session: ``:cluster NAME`` and ``c`` switch between them.

A mixin of :class:`FairtopApp`, like :mod:`tui.app.loading`. Each cluster (a ``[[cluster]]``
table of the config, or ``--slurm --cluster a,b``) has its own source; the app reads the one
shown. The last standing of each cluster is kept, so switching back shows it at once (a live
cluster is then read again); a load that finishes after the user switched away is dropped.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from tui.app.cluster_choice import Cluster
from tui.app.messages import StandingLoaded

if TYPE_CHECKING:
    from tui.analysis.standing import Standing
    from tui.app.host import AppHost


class ClusterActions:
    """Switching clusters; the app holds ``clusters`` and ``cluster_index``."""

    standing: Standing | None  # assigned here, initialised by FairtopApp
    cluster_index: int

    def _use_cluster(self: AppHost, index: int) -> None:
        """Make cluster ``index`` the one read and shown (no reload here)."""
        cluster = self.clusters[index]
        self.cluster_index = index
        self.loader, self.live = cluster.loader, cluster.live
        self.stages = cluster.stages
        self.source_name, self.on_reload = cluster.source_name or self.settings.source, cluster.on_reload

    def cluster_label(self: AppHost) -> str:
        """``cluster NAME (i/n)`` for the status line; "" with one unnamed source."""
        if len(self.clusters) < 2 and not self.clusters[self.cluster_index].name:
            return ""
        name = self.clusters[self.cluster_index].name or "?"
        of = f" ({self.cluster_index + 1}/{len(self.clusters)})" if len(self.clusters) > 1 else ""
        return f"cluster {name}{of}"

    def action_switch_cluster(self: AppHost, name: str) -> None:
        """``:cluster NAME``: show that cluster (its last data at once, then a fresh read)."""
        names = [c.name for c in self.clusters]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.notify(f"no cluster {name!r} (configured: {', '.join(names) or 'none'}){hint}", severity="warning")
            return
        self._show_cluster(names.index(name))

    def action_next_cluster(self: AppHost) -> None:
        """``c``: the next configured cluster (says so when there is only one)."""
        if len(self.clusters) < 2:
            self.notify("one cluster only: list several as [[cluster]] tables in the config "
                        "(or --slurm --cluster a,b)", timeout=4)
            return
        self._show_cluster((self.cluster_index + 1) % len(self.clusters))

    def _show_cluster(self: AppHost, index: int) -> None:
        if index == self.cluster_index:
            return
        self._use_cluster(index)
        kept = self.cluster_standings.get(self.clusters[index].name)
        if kept is not None:
            self.post_message(StandingLoaded(*kept, cluster=self.clusters[index].name, kept=True))
        else:
            self.standing = None
            self._status.update(f"{self.cluster_label()} · loading…")
        if kept is None or self.live:
            self.load()


__all__ = ["Cluster", "ClusterActions"]
