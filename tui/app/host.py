"""What the app's mixins need of the app they are mixed into.

:mod:`tui.app.actions` and :mod:`tui.app.loading` are mixins of :class:`~tui.app.app.FairtopApp`.
Their methods annotate ``self: AppHost``, so they type-check without importing ``app.py`` (which
imports them): no import cycle, not even under ``TYPE_CHECKING``. FairtopApp satisfies this
protocol structurally; mypy checks it wherever a mixin method is used on the app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.widget import Widget
    from textual.widgets import Static, TabbedContent
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from tui.analysis.standing import Standing
    from tui.app.cluster_choice import Cluster
    from tui.app.tree_rows import TreeTable
    from tui.app.widgets.fairshare_tree import FairshareTree
    from tui.app.widgets.prompt import PromptBar
    from tui.config import Settings
    from tui.model import Snapshot


class AppHost(Protocol):
    """The attributes and methods of FairtopApp (and of its two mixins) that the mixins use."""

    me: str
    settings: Settings
    standing: Standing | None
    live: bool
    loader: Callable[[], Snapshot]
    source_name: str
    on_reload: Callable[[], None] | None
    clusters: list[Cluster]
    cluster_index: int
    cluster_standings: dict[str, tuple[Standing, TreeTable]]
    stages: Callable[[], Iterable[tuple[Snapshot, tuple[str, ...]]]] | None
    clock: Callable[[], float]
    _assoc: FairshareTree
    _tabs: TabbedContent
    _panes: dict[str, Widget]
    _status: Static
    _prompt: PromptBar
    _loaded_at: float | None
    _refresh_error: str | None
    _loading: tuple[str, ...]
    _last_built: dict[str, tuple[Snapshot, Standing, TreeTable]]
    _me_next: int

    # Textual's App
    @property
    def workers(self) -> WorkerManager: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None) -> None: ...

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True) -> None: ...

    async def run_action(self, action: str) -> bool: ...

    def post_message(self, message: Message) -> bool: ...

    # FairtopApp
    def _update_status(self) -> None: ...

    def action_show_tab(self, tab_id: str) -> None: ...

    # the mixins, calling each other's methods
    def load(self) -> Worker[None]: ...

    def load_now(self) -> None: ...

    def _read_source(self, cancelled: Callable[[], bool]) -> None: ...

    def cluster_label(self) -> str: ...

    def _use_cluster(self, index: int) -> None: ...

    def _show_cluster(self, index: int) -> None: ...

    def _worker_failed(self, worker: Worker, error: BaseException | None) -> None: ...

    def _focus_tab(self) -> None: ...

    def action_set_filter(self, pattern: str) -> None: ...

    def action_clear_filter(self) -> None: ...

    def account_names(self) -> list[str]: ...

    def action_goto_account(self, name: str) -> None: ...
