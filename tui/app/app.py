"""FairtopApp: the shell around the panes (tabs, prompt, status line, themes, keymap)."""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, ComposeResult, InvalidThemeError
from textual.timer import Timer
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from tui.app import themes
from tui.app import commands
from tui.app.actions import TreeActions
from tui.app.loading import LoadActions
from tui.app.messages import StandingLoaded
from tui.app.panes.allocations import AllocationsPane
from tui.app.panes.breakdown import BreakdownPane
from tui.app.panes.history import HistoryPane
from tui.app.panes.whatif import WhatIfPane
from tui.app.screens.help import HelpScreen
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.app.widgets.prompt import PromptBar
from tui.config import Settings, State
from tui.model import Snapshot
from tui.analysis.standing import Standing

if TYPE_CHECKING:
    from tui.app.host import AppHost

BREAKDOWN_DELAY_S = 0.15
"""How long the selection must rest before the breakdown pane recomputes."""
PANES = {"breakdown": ("Breakdown", BreakdownPane), "alloc": ("Allocations", AllocationsPane),
         "whatif": ("What-if", WhatIfPane), "history": ("History", HistoryPane)}
"""Tab id -> (title, pane class) of the panes beside the tree."""
STATUS_TICK_S = 1.0
"""How often "updated N s ago" is redrawn for a live source."""


def standing_notes(standing: Standing) -> list[str]:
    """What the user must know about the numbers shown: cells where the engine disagrees with
    what the scheduler printed (shown as printed, marked ≠), and values the source does not have."""
    notes = []
    rec = standing.reconciliation
    if rec is not None and rec.disagreements:
        d = rec.disagreements[0]
        notes.append(f"{len(rec.disagreements)} of {rec.checked:,} printed cells differ from fairtop's engine "
                     f"(shown as the scheduler printed them, marked ≠), e.g. {d.label} {d.column}: "
                     f"printed {d.printed}, engine {d.ours}")
    caps = standing.snapshot.capabilities
    if caps is not None and "usage" not in caps and standing.snapshot.tree is not None:
        notes.append(f"{standing.snapshot.source} gives no usage: RawUsage, EffectvUsage, FairShare, LevelFS and "
                     "Rank are unknown (read the usage with --slurm or --from DIR)")
    return notes


class FairtopApp(LoadActions, TreeActions, App[int]):
    """Where you stand on an HPC cluster, one pane per question."""

    CSS_PATH = "app.tcss"
    TITLE = "fairtop"
    BINDINGS = commands.bindings("app")
    COMMANDS = App.COMMANDS | {commands.FairtopCommands}

    def __init__(self, settings: Settings, loader: Callable[[], Snapshot], me: str,
                 state: State | None = None, live: bool = False, source_name: str = "",
                 on_reload: Callable[[], None] | None = None,
                 stages: Callable[[], Iterable[tuple[Snapshot, tuple[str, ...]]]] | None = None) -> None:
        super().__init__()
        self.on_reload = on_reload
        """Called on ``r`` before the reload: a live source then asks every command again
        (sshare included) instead of waiting for its cadence."""
        self.settings = settings
        """The merged configuration (read-only here)."""
        self.loader = loader
        """Reads the source; runs in a worker thread."""
        self.stages = stages
        """Reads the source in stages (a live source: the tree from sshare first), used instead of
        ``loader`` when given; also in the worker thread."""
        self.me = me
        """The user whose rows are highlighted and whom ``m`` jumps to."""
        self.state = state or State()
        """What fairtop remembers; the caller saves it after the run."""
        self.standing: Standing | None = None
        """The current standing; None until the first load finishes."""
        self.live = live
        """Re-read the source every ``settings.refresh_rate`` seconds (the registry's live
        sources); demo and saved folders are read once, and the status line shows their time."""
        self.source_name = source_name or settings.source
        """``name`` or ``name:value`` of the source, remembered in the state file."""
        self.clock: Callable[[], float] = time.monotonic
        """Seconds, for "updated N s ago" (tests replace it)."""
        self.fairtop_themes: list[str] = []
        self._loaded_at: float | None = None
        self._refresh_error: str | None = None
        self._loading: tuple[str, ...] = ()
        self._warned: set[str] = set()
        self._me_next = 0
        self._breakdown_stale = True
        self._breakdown_timer: Timer | None = None

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Built-in Textual themes lack our variables; app.tcss needs a value under any theme.
        return {"fairtop-me": "#504000"}

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="tree", id="tabs"):
            with TabPane("Tree", id="tree"):
                yield FairshareTree(id="assoc")
            for tab_id, (title, pane) in PANES.items():
                with TabPane(title, id=tab_id):
                    yield pane(id=f"pane-{tab_id}")
        yield Static("loading…", id="status")
        yield PromptBar(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        # Held, not queried: App.query_one searches the active screen, which may be a modal.
        self._assoc = self.query_one(FairshareTree)
        self._tabs = self.query_one(TabbedContent)
        self._status = self.query_one("#status", Static)
        self._prompt = self.query_one(PromptBar)
        self.sub_title = "read-only" if self.settings.read_only else "read-write"
        self._prompt.close()
        self._register_themes()
        self.action_set_theme(self.settings.theme or self.state.last_theme or themes.FALLBACK)
        self._apply_keymap()
        self._assoc.focus()
        self.load()
        if self.live:
            self.set_interval(self.settings.refresh_rate, self._refresh_live_source, name="refresh")
            self.set_interval(STATUS_TICK_S, self._update_status, name="status-clock")

    def _register_themes(self) -> None:
        specs, errors = themes.load_specs()
        for message in errors:
            self.notify(message, title="Theme file skipped", severity="warning", timeout=10)
        for spec in specs:
            self.register_theme(themes.to_textual_theme(spec))
        order = themes.ORDER
        self.fairtop_themes = sorted((s.name for s in specs),
                                     key=lambda n: (order.index(n) if n in order else len(order), n))

    def _apply_keymap(self) -> None:
        keymap = self.settings.keymap
        unknown = [k for k in keymap if k not in commands.BY_ID]
        for key in unknown:
            close = difflib.get_close_matches(key, commands.BY_ID, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            self.notify(f"[keymap] {key!r} is not a binding id.{hint}", severity="warning")
        self.set_keymap({k: v for k, v in keymap.items() if k not in unknown})

    # --- loading -------------------------------------------------------------------------------

    def on_standing_loaded(self, message: StandingLoaded) -> None:
        self.standing = message.standing
        snap = message.standing.snapshot
        self.title = f"fairtop · {snap.cluster}"
        mode = "read-only" if self.settings.read_only else "read-write"
        self.sub_title = f"{snap.source} · {message.standing.algorithm.replace('_', ' ')} · {mode}"
        self._loaded_at, self._refresh_error = self.clock(), None
        self._loading = message.loading
        # An early stage lacks the outputs still loading: their warnings would be premature.
        for warning in () if message.loading else (*snap.warnings, *standing_notes(message.standing)):
            if warning not in self._warned:  # a live source repeats them on every refresh
                self._warned.add(warning)
                self.notify(warning, severity="warning")
        tree = self._assoc
        tree.set_table(message.table, self.me)
        self._breakdown_stale = True
        if not message.loading:  # an early stage draws the tree first; the panes wait for the whole snapshot
            for tab_id in PANES:
                if tab_id != "breakdown":
                    self._show_pane(tab_id, tree.selected_row)
            self._refresh_breakdown()
        self._update_status()

    def _show_pane(self, tab_id: str, row: int | None) -> None:
        if self.standing is None:
            return
        try:
            self._tabs.query_one(f"#pane-{tab_id}").show(self.standing, row)  # type: ignore[attr-defined]
        except Exception as exc:  # a pane's bug must not take the tree down with it
            self.notify(f"{tab_id} pane: {exc!r}", severity="error")

    @on(FairshareTree.Selected)
    def _selected(self, message: FairshareTree.Selected) -> None:
        # The breakdown follows the selection, but only once it settles and only while it is on
        # screen: its worker explains the row and runs the engine 16 times (seconds at 100k rows),
        # not worth starting (and cancelling) per key.
        self._breakdown_stale = True
        if self._breakdown_timer is not None:
            self._breakdown_timer.stop()
        self._breakdown_timer = self.set_timer(BREAKDOWN_DELAY_S, self._refresh_breakdown)
        self._update_status()

    def _refresh_breakdown(self) -> None:
        if self._breakdown_stale and self._tabs.active == "breakdown":
            self._breakdown_stale = False
            self._show_pane("breakdown", self._assoc.selected_row)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab_id = event.pane.id or ""
        if tab_id == "breakdown":
            self._refresh_breakdown()
        elif tab_id in ("alloc", "whatif"):
            self._show_pane(tab_id, self._assoc.selected_row)

    def _update_status(self) -> None:
        tree = self._assoc
        if tree.table is None:
            return
        parts = [self._data_age(), f"{tree.table.size:,} {tree.table.noun}", f"{len(tree.rows_shown):,} shown"]
        if tree.sort_column:
            title = next(c.title for c in tree.columns if c.id == tree.sort_column)
            parts.append(f"sort {title} {'▼' if tree.sort_descending else '▲'}")
        if tree.filter_text:
            parts.append(f"filter /{tree.filter_text}/ (Esc clears)")
        row = tree.selected_row
        if row is not None and self.standing is not None and self.standing.snapshot.tree is not None:
            parts.append(self.standing.snapshot.tree.label(row))
        elif row is not None and self.standing is not None and self.standing.snapshot.pbs is not None:
            parts.append(str(self.standing.snapshot.pbs.name[row]))
        if self.me:
            found = len(self.standing.my_rows if self.standing else ())
            parts.append(f"me: {self.me}" + ("" if found else " (not found)"))
        self._status.update(" · ".join(parts))

    # --- actions (declared in tui.app.commands; tree and prompt ones in tui.app.actions) -----

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_show_tab(self, tab_id: str) -> None:
        self._tabs.active = tab_id
        # A pane's scroll area takes the arrow keys. Not while the prompt is open: in a burst
        # such as "1/chem" the "/" can open it before the "1" arrives here.
        if not self._prompt.display:
            self._focus_tab()

    def action_set_theme(self, name: str) -> None:
        try:
            self.theme = name
        except InvalidThemeError:
            close = difflib.get_close_matches(name, self.available_themes, n=1)
            message = f"no theme {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
            if self.theme not in self.fairtop_themes and themes.FALLBACK in self.available_themes:
                self.theme = themes.FALLBACK  # at start-up: fall back rather than keep Textual's
                message += f" Using {themes.FALLBACK!r}."
            self.notify(message, severity="warning")
            return
        self.state.last_theme = name

    def action_cycle_theme(self) -> None:
        names = self.fairtop_themes or [self.theme]
        i = names.index(self.theme) + 1 if self.theme in names else 0
        self.action_set_theme(names[i % len(names)])
        self.notify(f"theme {self.theme}", timeout=2)

    def action_reload(self) -> None:
        if self.on_reload is not None:
            self.on_reload()
        self.load()


if TYPE_CHECKING:
    _host: type[AppHost] = FairtopApp  # mypy checks the app provides what its mixins use
