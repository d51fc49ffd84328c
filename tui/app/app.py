"""FairtopApp: the shell around the panes (tabs, prompt, status line, themes, keymap)."""

from __future__ import annotations

import difflib
import gc
import importlib
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.console import RenderableType
from textual import on
from textual._compositor import ChopsUpdate
from textual.app import App, ComposeResult, InvalidThemeError
from textual.containers import Horizontal
from textual.reactive import Reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header, Static, TabbedContent, TabPane

from tui.analysis.standing import Standing
from tui.analysis.summary import UserSummary, user_summary
from tui.app import allocator, commands, themes
from tui.app.actions import TreeActions
from tui.app.clusters import Cluster, ClusterActions
from tui.app.loading import LoadActions
from tui.app.messages import StandingLoaded
from tui.app.painted import PaintedChops
from tui.app.screens.main import MainScreen
from tui.app.terminal_watch import end_with_terminal
from tui.app.tree_rows import TreeTable
from tui.app.widgets.calm_footer import CalmFooter
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.app.widgets.prompt import PromptBar
from tui.config import Settings, State
from tui.model import Snapshot

if TYPE_CHECKING:
    from tui.app.host import AppHost

BREAKDOWN_DELAY_S = 0.15
"""How long the selection must rest before the breakdown pane recomputes, once it moves in quick
succession (a held key); a move after a rest this long recomputes at once."""
PANES: dict[str, tuple[str, type[Widget] | str]] = {
    "breakdown": ("Breakdown", "tui.app.panes.breakdown:BreakdownPane"),
    "alloc": ("Allocations", "tui.app.panes.allocations:AllocationsPane"),
    "whatif": ("What-if", "tui.app.panes.whatif:WhatIfPane"),
    "history": ("History", "tui.app.panes.history:HistoryPane"),
    "jobs": ("Jobs", "tui.app.panes.jobs:JobsPane"),
}
"""Tab id -> (title, pane class or ``"module:Class"``) of the panes beside the tree. A pane is
imported and built when its tab first opens: the first frame waits for the tree alone (the
History pane's plotting library alone costs more to import than the tree pane)."""


def pane_class(spec: type[Widget] | str) -> type[Widget]:
    """The class of a :data:`PANES` entry, imported on first use."""
    if not isinstance(spec, str):
        return spec
    module, _, name = spec.partition(":")
    cls: type[Widget] = getattr(importlib.import_module(module), name)
    return cls
SIDE_BREAKDOWN_WIDTH = 180
"""From this many columns the tree tab shows the breakdown beside the tree."""
SIDE_PANE = "tui.app.panes.breakdown:BreakdownPane"
COMPACT_FOOTER = 120
"""Below this many columns the footer packs its keys closer, so every one fits."""
STATUS_TICK_S = 1.0
"""How often "updated N s ago" is redrawn for a live source."""


def fit_parts(parts: list[tuple[int, str]], width: int, sep: str = " · ") -> str:
    """Join ``(priority, text)`` parts in their order, leaving out the lowest priorities (the
    later first on equal ones) until the line fits ``width`` cells."""
    kept = list(parts)
    while len(kept) > 1 and len(sep.join(t for _, t in kept)) > width:
        drop = min(range(len(kept)), key=lambda i: (kept[i][0], -i))
        del kept[drop]
    return sep.join(t for _, t in kept)


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
                     "Rank are unknown (read the usage with --slurmrestd-sshare, --slurm or --from DIR)")
    return notes


class FairtopApp(ClusterActions, LoadActions, TreeActions, App[int]):
    """Where you stand on an HPC cluster, one pane per question."""

    CSS_PATH = "app.tcss"
    TITLE = "fairtop"
    BINDINGS = commands.bindings("app")
    COMMANDS = App.COMMANDS | {commands.FairtopCommands}

    app_focus: Reactive[bool] = Reactive(True, compute=False, repaint=False)
    """The terminal has focus (Textual's, less the whole-screen repaint on each change: 35 KB at
    200x60, a second at 256 kbit/s, each time the user switches windows; the widgets whose
    ``:focus``/``:blur`` styles change repaint themselves)."""

    def __init__(self, settings: Settings, loader: Callable[[], Snapshot], me: str,
                 state: State | None = None, live: bool = False, source_name: str = "",
                 on_reload: Callable[[], None] | None = None, clusters: list[Cluster] | None = None,
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
        self._last_built: dict[str, tuple[Snapshot, Standing, TreeTable]] = {}
        """Per cluster, the snapshot the load worker last built on, with what it built."""
        self._warned: set[str] = set()
        self._me_next = 0
        self._stale: set[str] = {"breakdown", "side"}
        """Breakdown panes (the tab's, the one beside a wide tree) behind the selection."""
        self._breakdown_timer: Timer | None = None
        self._selected_at = -1.0
        """When the selection last moved (``time.monotonic``)."""
        self._selected_row: int | None = None
        """The tree row the panes were last asked to follow."""
        self._reload_asked = False
        self._my_summary: UserSummary | None = None
        self.clusters = clusters or [Cluster("", loader, live, self.source_name, on_reload, stages)]
        """The clusters this session can show (``:cluster NAME``, ``c``); the first is shown first."""
        self.cluster_index = 0
        self.cluster_standings: dict[str, tuple[Standing, TreeTable]] = {}
        """Each cluster's last standing and tree table, shown at once when the user switches back."""
        self._cluster_loaded_at: dict[str, float] = {}
        self._use_cluster(0)
        self._theme_errors: list[str] = []
        self._panes: dict[str, Widget] = {}
        """The panes built so far, by tab id (see :data:`PANES`)."""
        self._painted = PaintedChops()
        """What the terminal shows: an update sends only what differs (over SSH, bytes are time)."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Built-in Textual themes lack our variables; app.tcss needs a value under any theme.
        return {"fairtop-me": "#504000"}

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        # Textual's one way to the terminal: pieces of lines already on screen are left out.
        if isinstance(renderable, ChopsUpdate):
            renderable = self._painted.changed_only(renderable)
        elif renderable is not None:
            self._painted.clear()  # the whole screen is drawn again
        super()._display(screen, renderable)

    def get_default_screen(self) -> MainScreen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="tree", id="tabs"):
            with TabPane("Tree", id="tree"):
                yield Static("", id="me-summary", markup=False)
                with Horizontal(id="tree-row"):
                    yield FairshareTree(id="assoc")  # and, on a wide terminal, the breakdown (_fit_side)
            for tab_id, (title, _) in PANES.items():
                yield TabPane(title, id=tab_id)  # its pane is built when it first opens
        yield Static("loading…", id="status")
        yield PromptBar(id="prompt")
        yield CalmFooter()

    def on_load(self) -> None:
        allocator.keep_large_blocks_mapped()  # a long run must not fragment the heap (allocator.py)
        # The theme before the first compose: set in on_mount, the change restyled every widget
        # once more (a tenth of the start's CPU). A missing theme is left to on_mount, which warns.
        self._theme_errors = self._register_themes()
        name = self.settings.theme or self.state.last_theme or themes.FALLBACK
        if name in self.available_themes:
            self.action_set_theme(name)
        # Read the source now, while the screen is being built: its result is handled after
        # on_mount like any message. The demo is read right here (0.05 s of CPU): the first frame
        # then has the data, instead of an empty frame drawn while a worker shares the CPU.
        if self.clusters[self.cluster_index].instant:
            self.load_now()
        else:
            self.load()

    def on_mount(self) -> None:
        # Held, not queried: App.query_one searches the active screen, which may be a modal.
        self._assoc = self.query_one(FairshareTree)
        self._tabs = self.query_one(TabbedContent)
        self._status = self.query_one("#status", Static)
        self._prompt = self.query_one(PromptBar)
        self._summary = self.query_one("#me-summary", Static)
        self._footer = self.query_one(CalmFooter)
        self._side: Widget | None = None
        self._fit_side()
        self._fit_footer()
        self.sub_title = "read-only" if self.settings.read_only else "read-write"
        self._prompt.close()
        for message in self._theme_errors:
            self.notify(message, title="Theme file skipped", severity="warning", timeout=10)
        name = self.settings.theme or self.state.last_theme or themes.FALLBACK
        if self.theme != name:
            self.action_set_theme(name)
        self._apply_keymap()
        self._assoc.focus()
        end_with_terminal(self)  # a session whose terminal went away must not run on unseen
        self.call_after_refresh(gc.enable)  # run_app holds the collector off until the first frame
        if any(c.live for c in self.clusters):  # the callbacks skip a cluster that is not live
            self.set_interval(self.settings.refresh_rate, self._refresh_live_source, name="refresh")
            self.set_interval(STATUS_TICK_S, self._tick_status, name="status-clock")

    def _register_themes(self) -> list[str]:
        """Register the theme files' themes; returns what was wrong with the others."""
        specs, errors = themes.load_specs()
        for spec in specs:
            self.register_theme(themes.to_textual_theme(spec))
        order = themes.ORDER
        self.fairtop_themes = sorted((s.name for s in specs),
                                     key=lambda n: (order.index(n) if n in order else len(order), n))
        return errors

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
        now = self.clock()
        if not message.kept:
            self.cluster_standings[message.cluster] = (message.standing, message.table)
            self._cluster_loaded_at[message.cluster] = now
        if message.cluster != self.clusters[self.cluster_index].name:
            return  # read before the user switched to another cluster: kept for switching back
        self.standing = message.standing
        snap = message.standing.snapshot
        self.title = f"fairtop · {snap.cluster}"
        mode = "read-only" if self.settings.read_only else "read-write"
        self.sub_title = f"{snap.source} · {message.standing.algorithm.replace('_', ' ')} · {mode}"
        self._loaded_at, self._refresh_error = self._cluster_loaded_at.get(message.cluster, now), None
        self._loading = message.loading
        if self._reload_asked and not message.loading:
            self._reload_asked = False
            self.notify(f"Reloaded: {self._data_age()}.", timeout=3)
        # An early stage lacks the outputs still loading: their warnings would be premature.
        for warning in () if message.loading else (*snap.warnings, *standing_notes(message.standing)):
            if warning not in self._warned:  # a live source repeats them on every refresh
                self._warned.add(warning)
                self.notify(warning, severity="warning")
        self._my_summary = user_summary(message.standing)
        self._fit_summary()
        tree = self._assoc
        tree.set_table(message.table, self.me)
        self._selected_row = tree.selected_row  # the panes follow it below (or at the last stage)
        self._stale = {"breakdown", "side"}
        if not message.loading:  # an early stage draws the tree first; the panes wait for the whole snapshot
            for tab_id in self._panes:
                if tab_id != "breakdown":
                    self._show_pane(tab_id, tree.selected_row)
            self._refresh_breakdown()
        self._update_status()
        self.call_after_refresh(allocator.return_free_memory)  # the last snapshot's pages, once drawn

    async def _build_pane(self, tab_id: str) -> bool:
        """Build and mount ``tab_id``'s pane if it is not yet; True when it was built now."""
        if tab_id not in PANES or tab_id in self._panes:
            return False
        pane = pane_class(PANES[tab_id][1])(id=f"pane-{tab_id}")
        self._panes[tab_id] = pane
        await self._tabs.query_one(f"TabPane#{tab_id}", TabPane).mount(pane)
        return True

    def _show_pane(self, tab_id: str, row: int | None) -> bool:
        """Show ``row`` in ``tab_id``'s pane; False when there is no standing or pane to show yet."""
        pane = self._side if tab_id == "side" else self._panes.get(tab_id)
        if self.standing is None or pane is None or not pane.is_mounted:
            return False
        try:
            pane.show(self.standing, row)  # type: ignore[attr-defined]
        except Exception as exc:  # a pane's bug must not take the tree down with it
            self.notify(f"{tab_id} pane: {exc!r}", severity="error")
        return True

    @on(FairshareTree.Selected)
    def _selected(self, message: FairshareTree.Selected) -> None:
        # The breakdown follows the selection, but only once it settles and only while it is on
        # screen: its worker explains the row and runs the engine 16 times (seconds at 100k rows),
        # not worth starting (and cancelling) per key. A single key (after a rest) is answered
        # at once: waiting for the rest made a Down settle 0.15 s later over SSH. A key that
        # leaves the selection where it was (Down held on the last row) changes nothing: each
        # recomputed the breakdown and redrew it (~0.1 s of the UI thread at 200x60), and keys
        # queued behind those kept it busy after the key was released.
        if message.row == self._selected_row:
            return
        self._selected_row = message.row
        self._stale = {"breakdown", "side"}
        if self._breakdown_timer is not None:
            self._breakdown_timer.stop()
            self._breakdown_timer = None
        now, rested = time.monotonic(), self._selected_at
        self._selected_at = now
        if now - rested >= BREAKDOWN_DELAY_S:
            self._refresh_breakdown()
        else:
            self._breakdown_timer = self.set_timer(BREAKDOWN_DELAY_S, self._refresh_breakdown)
        self._update_status()

    @property
    def settling(self) -> bool:
        """A key's effect still waits on a timer (the breakdown's rest, the tree's held-key
        draw): tests and benches wait for it before reading the screen."""
        return self._breakdown_timer is not None or self._assoc.draw_deferred

    def _refresh_breakdown(self) -> None:
        self._breakdown_timer = None
        active = self._tabs.active
        side = self._side is not None and self._side.display
        shown = "breakdown" if active == "breakdown" else "side" if active == "tree" and side else None
        # Stale until shown: a standing that arrives before the side pane is mounted (the demo
        # at 200 columns) is shown once the pane is (_fit_side).
        if shown in self._stale and self._show_pane(shown, self._assoc.selected_row):
            self._stale.discard(shown)

    def _fit_summary(self) -> None:
        """At most two lines: on a narrow terminal the last parts (allocation, jobs) give way."""
        summary = self._my_summary
        self._summary.display = summary is not None
        if summary is not None:
            ranked = [(-i, part) for i, part in enumerate(summary.parts)]  # the first part matters most
            # 2 lines less the padding, and room for word wrap's ragged first line
            self._summary.update(fit_parts(ranked, 2 * (self.size.width - 2) - 16))

    def _fit_footer(self) -> None:
        footer = self._footer
        footer.compact = self.size.width < COMPACT_FOOTER
        footer.show_command_palette = self.size.width >= COMPACT_FOOTER  # ctrl+p is in the help

    def on_resize(self) -> None:
        # App's own handler, which sets the size ``self.size`` reads, runs after this one: fitted
        # here, a terminal widened from 120 to 200 columns kept the narrow layout.
        self.call_next(self._fit_to_size)

    def _fit_to_size(self) -> None:
        # A wide terminal shows the breakdown beside the tree (the tab stays for narrow ones).
        if not hasattr(self, "_side"):
            return  # before on_mount
        self._fit_footer()
        self._fit_summary()
        if self._fit_side():
            self._refresh_breakdown()
        self._update_status()

    def _fit_side(self) -> bool:
        """Show the breakdown beside the tree from SIDE_BREAKDOWN_WIDTH columns; True when that
        changed. Built the first time it is needed: its plotting library costs the first frame."""
        wide = self.size.width >= SIDE_BREAKDOWN_WIDTH
        if self._side is None:
            if not wide:
                return False
            self._side = pane_class(SIDE_PANE)(id="pane-side")
            mounted = self.query_one("#tree-row", Horizontal).mount(self._side)

            async def show_when_mounted() -> None:
                await mounted
                self._refresh_breakdown()

            self.call_later(show_when_mounted)
            return True
        changed = wide != self._side.display
        self._side.display = wide
        return changed

    @on(TabbedContent.TabActivated)
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab_id = event.pane.id or ""
        built = await self._build_pane(tab_id)
        if tab_id in ("breakdown", "tree"):
            self._refresh_breakdown()
        else:  # every other pane draws the row selected now, whatever was selected when it was last shown
            self._show_pane(tab_id, self._assoc.selected_row)
        if built and self._tabs.active == tab_id and not self._prompt.display:
            self._focus_tab()  # action_show_tab could not: the pane did not exist yet

    def _tick_status(self) -> None:
        if self.live:
            self._update_status()

    def _update_status(self) -> None:
        tree = self._assoc
        if tree.table is None:
            return
        # (priority, text): when the line is too wide the lowest priorities go first.
        parts = [(2, self._data_age()), (1, f"{tree.table.size:,} {tree.table.noun}"),
                 (5, f"{len(tree.rows_shown):,} shown")]
        if self.cluster_label():
            parts.insert(0, (5, self.cluster_label()))
        if tree.sort_column:
            title = next(c.title for c in tree.columns if c.id == tree.sort_column)
            parts.append((4, f"sort {title} {'▼' if tree.sort_descending else '▲'}"))
        if tree.filter_text:
            none = "no match, " if not len(tree.rows_shown) else ""
            parts.append((6, f"filter /{tree.filter_text}/ ({none}Esc clears)"))
        row = tree.selected_row
        if row is not None and self.standing is not None and self.standing.snapshot.tree is not None:
            parts.append((3, self.standing.snapshot.tree.label(row)))
        elif row is not None and self.standing is not None and self.standing.snapshot.pbs is not None:
            parts.append((3, str(self.standing.snapshot.pbs.name[row])))
        if self.me:
            found = len(self.standing.my_rows if self.standing else ())
            parts.append((4, f"me: {self.me}" + ("" if found else " (not found)")))
        # One line of a fixed height and width: no layout (a layout repaints the tree's scrollbar).
        self._status.update(fit_parts(parts, self._status.size.width or self.size.width - 2), layout=False)

    # --- actions (declared in tui.app.commands; tree and prompt ones in tui.app.actions) -----

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen  # on the first ?, not on the first frame

        self.push_screen(HelpScreen())

    def action_policy(self) -> None:
        if self.standing is None:
            self.notify("Nothing loaded yet.", timeout=3)
            return
        from tui.app.screens.policy import PolicyScreen  # the replay and its plots: on the first :policy

        self.push_screen(PolicyScreen(self.standing, self._assoc.selected_row))

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
            names = self.fairtop_themes or sorted(self.available_themes)
            message = f"There is no theme {name!r}." + (f" Did you mean {close[0]!r}?" if close else "")
            message += f" The themes are {', '.join(names[:-1])} and {names[-1]}." if len(names) > 1 else ""
            if self.theme not in self.fairtop_themes and themes.FALLBACK in self.available_themes:
                self.theme = themes.FALLBACK  # at start-up: fall back rather than keep Textual's
                message += f" Using {themes.FALLBACK}."
            self.notify(message, title="Theme not changed", severity="warning", timeout=10)
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
        alloc = self._panes.get("alloc")
        if alloc is not None:
            alloc.refresh_feeds(force=True)  # type: ignore[attr-defined]  # the service and ledger too
        self._reload_asked = True
        self.notify(f"Reading {self.source_name or 'the source'} again…", timeout=3)
        self.load()


if TYPE_CHECKING:
    _host: type[AppHost] = FairtopApp  # mypy checks the app provides what its mixins use
