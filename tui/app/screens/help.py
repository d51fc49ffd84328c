"""The ``?`` help panel, listing the command registry as it is (keymap changes included)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.app.commands import COMMANDS, key_text, usage


def _keys(app_keymap: dict[str, str], command_id: str, default: str | None) -> str:
    return key_text(app_keymap.get(command_id, default))


NARROW_HELP = 110
"""Below this many columns the help drops its Id column."""


class HelpScreen(ModalScreen[None]):
    """Every key and ``:`` command, from :data:`tui.app.commands.COMMANDS`."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        keymap = dict(getattr(self.app, "_keymap", {}))
        # Narrow terminals: no Id column (each id follows its action, dimmed), so the
        # sentences keep enough width to read; the box takes the whole screen.
        narrow = self.app.size.width < NARROW_HELP
        titles = ("Keys", "Command", "Action") if narrow else ("Keys", "Command", "Action", "Id")
        table = Table(expand=True, box=None, pad_edge=False, header_style="bold")
        for title in titles:
            table.add_column(title, no_wrap=title != "Action", ratio=3 if title == "Action" else None,
                             max_width=None if title == "Action" else 18 if narrow else None)
        blank = ("",) * (len(titles) - 1)
        for scope, heading in (("app", "Everywhere"), ("tree", "In the tree"), ("alloc", "In the allocations pane")):
            table.add_row(f"[b]{heading}[/b]", *blank)
            for c in COMMANDS:
                if c.scope == scope:
                    keys, cmd = escape(_keys(keymap, c.id, c.keys)), escape(usage(c))
                    if narrow:
                        table.add_row(keys, cmd, f"{escape(c.help)} [dim]({c.id})[/dim]")
                    else:
                        table.add_row(keys, cmd, escape(c.help), c.id)
        table.add_row("", *blank)
        table.add_row("ctrl+p", "", "Command palette: every action above and the accounts, searchable.",
                      *blank[2:])
        with VerticalScroll(id="help-box", classes="-narrow" if narrow else "") as box:
            box.border_title = "Help · Esc closes · rebind keys with \\[keymap] id = \"keys\" in the config"
            yield Static(table)
