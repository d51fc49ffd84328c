"""The app's actions on the tree and the ``:``/``/`` prompt, as a mixin of :class:`FairtopApp`.

Kept apart from ``app.py`` so each module stays one screen long; handlers use Textual's naming
convention (``on_prompt_bar_submitted``) because ``@on`` only works in message-pump classes.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING

import numpy as np

from tui.app import commands
from tui.app.tree_rows import column_id, column_names
from tui.app.widgets.prompt import PromptBar

if TYPE_CHECKING:
    from tui.app.host import AppHost


class TreeActions:
    """Filter, sort, expand, jump, and the prompt that types them."""

    _me_next: int  # assigned here, initialised by FairtopApp

    # --- prompt (k9s-style ":" and "/") -------------------------------------------------------------------------------

    def action_command_mode(self: AppHost) -> None:
        self._prompt.open("command")

    def action_filter_mode(self: AppHost) -> None:
        self._prompt.open("filter", self._assoc.filter_text)

    def on_prompt_bar_changed(self: AppHost, message: PromptBar.Changed) -> None:
        if message.mode == "filter":  # live filter; an unfinished regex only marks the input
            try:
                self._assoc.set_filter(message.value)
                message.bar.set_invalid(False)
                self._update_status()
            except re.error:
                message.bar.set_invalid(True)

    async def on_prompt_bar_submitted(self: AppHost, message: PromptBar.Submitted) -> None:
        message.bar.close()
        if message.mode == "filter":
            self.action_set_filter(message.value)
        elif message.value.strip():
            try:
                await self.run_action(commands.parse(message.value))
            except commands.CommandError as exc:
                self.notify(str(exc), severity="warning")
        self._focus_tab()

    def on_prompt_bar_cancelled(self: AppHost, message: PromptBar.Cancelled) -> None:
        message.bar.close()
        if message.mode == "filter":
            self.action_clear_filter()
        self._focus_tab()

    def _focus_tab(self: AppHost) -> None:
        """Give focus back to the active tab (focusing a hidden tab's widget would switch to it)."""
        tab_id = self._tabs.active
        if tab_id == "tree":
            self.set_focus(self._assoc)  # now: a deferred focus() would undo the next key's
        else:
            pane = self._panes.get(tab_id)
            if pane is None or not pane.is_mounted:
                return  # built when its tab opens, which focuses it then
            focusable = [w for w in pane.query("*") if w.focusable]
            self.set_focus(focusable[0] if focusable else None)

    def action_set_filter(self: AppHost, pattern: str) -> None:
        try:
            self._assoc.set_filter(pattern)
        except re.error as exc:
            self.notify(f"invalid regex {pattern!r}: {exc}", title="Filter not changed", severity="warning")
        else:
            if pattern and self._assoc.table is not None and not len(self._assoc.rows_shown):
                self.notify(f"No association matches /{pattern}/. Esc clears the filter.", severity="warning")
        self._update_status()

    def action_clear_filter(self: AppHost) -> None:
        self.action_set_filter("")

    def action_jump_me(self: AppHost) -> None:
        if not self.me:
            self.notify("no user: set --user or user = \"NAME\" in the config", severity="warning")
        elif self.standing is not None:
            rows = self.standing.my_rows
            if not len(rows):
                self.notify(f"no association for user {self.me!r} here", severity="warning")
                return
            self.action_show_tab("tree")
            self._assoc.go_to_row(int(rows[self._me_next % len(rows)]))
            self._me_next += 1
            self._update_status()

    def action_goto_user(self: AppHost, name: str) -> None:
        tree = self._assoc
        if tree.table is None:
            return
        hits = (tree.table.users == name) & tree.table.is_user
        if not hits.any():
            if name in self.account_names():  # ":user mech_vargas_lab": the account is meant
                self.notify(f"{name} is an account, not a user: shown (:account {name} goes there too).")
                self.action_goto_account(name)
                return
            users = sorted(set(tree.table.users[tree.table.is_user].tolist()))
            close = difflib.get_close_matches(name, users, n=1)
            self.notify(f"There is no user {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""),
                        severity="warning")
            return
        self.action_show_tab("tree")
        tree.go_to_row(int(hits.argmax()))
        self._update_status()

    def account_names(self: AppHost) -> list[str]:
        """Every account of the shown tree (PBS: every group), in tree order."""
        table = self._assoc.table
        return [] if table is None else [str(n) for n in table.names[~table.is_user].tolist()]

    def action_goto_account(self: AppHost, name: str) -> None:
        tree = self._assoc
        if tree.table is None:
            return
        hits = np.flatnonzero((tree.table.names == name) & ~tree.table.is_user)
        if not hits.size:
            close = difflib.get_close_matches(name, self.account_names(), n=1)
            self.notify(f"There is no account {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""),
                        severity="warning")
            return
        self.action_show_tab("tree")
        tree.go_to_row(int(hits[0]))
        self._update_status()

    def action_sort(self: AppHost, column: str) -> None:
        columns = self._assoc.columns
        key = column.strip().lower()
        found = column_id(columns, key) if key else None  # ":sort fair" is unambiguous
        if key and found is None:
            close = difflib.get_close_matches(key, column_names(columns), n=1)
            self.notify(f"no column {column!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                        severity="warning")
            return
        self._assoc.sort_by(found)
        self._update_status()

    def action_cycle_sort(self: AppHost) -> None:
        tree = self._assoc
        cycle = (None, *(c.id for c in tree.columns))
        tree.sort_by(cycle[(cycle.index(tree.sort_column) + 1) % len(cycle)])
        self._update_status()

    def action_expand_all(self: AppHost) -> None:
        self._assoc.set_expanded(None, True)
        self._update_status()

    def action_collapse_all(self: AppHost) -> None:
        self._assoc.set_expanded(None, False)
        self._update_status()
