"""The ``?`` help panel, listing the command registry as it is (keymap changes included)."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.app.commands import COMMANDS, usage


def _keys(app_keymap: dict[str, str], command_id: str, default: str | None) -> str:
    keys = app_keymap.get(command_id, default) or ""
    return ", ".join(k.replace("question_mark", "?").replace("colon", ":").replace("slash", "/")
                     .replace("plus", "+").replace("minus", "-").replace("escape", "Esc") for k in keys.split(",") if k)


class HelpScreen(ModalScreen[None]):
    """Every key and ``:`` command, from :data:`tui.app.commands.COMMANDS`."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        keymap = dict(getattr(self.app, "_keymap", {}))
        table = Table(expand=True, box=None, pad_edge=False, header_style="bold")
        for title in ("Keys", "Command", "Action", "Id"):
            table.add_column(title, no_wrap=title != "Action", ratio=3 if title == "Action" else None)
        for scope, heading in (("app", "Everywhere"), ("tree", "In the tree"), ("alloc", "In the allocations pane")):
            table.add_row(f"[b]{heading}[/b]", "", "", "")
            for c in COMMANDS:
                if c.scope == scope:
                    table.add_row(_keys(keymap, c.id, c.keys), usage(c), c.help, c.id)
        table.add_row("", "", "", "")
        table.add_row("ctrl+p", "", "Command palette: every action above, searchable.", "")
        with VerticalScroll(id="help-box") as box:
            box.border_title = "Help · Esc closes · rebind keys with \\[keymap] id = \"keys\" in the config"
            yield Static(table)
