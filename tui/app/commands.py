"""The one command registry: it feeds key bindings, ``:`` command mode, the palette and help.

Every user-facing action is declared once here. ``bindings(scope)`` makes Textual ``Binding``
objects (each with an ``id`` so a ``[keymap]`` table can rebind it), ``parse`` turns a ``:`` line
into an action string, :class:`FairtopCommands` offers the same actions in the command palette,
and the help screen lists ``COMMANDS`` as they are.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Literal

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.app.tree_rows import COLUMNS


@dataclass(frozen=True)
class Command:
    """One action, however the user reaches it."""

    id: str
    """Binding id: the name to use in the config's ``[keymap]`` table."""
    title: str
    """Short label (footer, palette, help)."""
    action: str
    """Textual action run by the keys, the palette and a ``:`` command without argument."""
    keys: str | None = None
    """Default keys, comma-separated Textual key names."""
    scope: Literal["app", "tree", "alloc"] = "app"
    """``tree`` bindings only act while the association tree has focus, ``alloc`` ones while the
    allocations pane has it."""
    command: str | None = None
    """Name in ``:`` command mode."""
    aliases: tuple[str, ...] = ()
    arg: str | None = None
    """Placeholder of an optional ``:`` argument (``NAME``); None: the command takes none."""
    arg_action: str | None = None
    """Action for ``:command ARG``; ``{arg}`` becomes the quoted argument."""
    palette: bool = True
    """Offered in the command palette."""
    show: bool = False
    """Shown in the footer."""
    help: str = ""
    """One sentence for the palette, the tooltip and the help screen."""
    short: str = ""
    """The footer's label when shorter than ``title`` (the footer fits 80 columns)."""


_SORT_KEYS = ", ".join(f"{c.key} {c.title.split(' ')[0]}" for c in COLUMNS)

COMMANDS: tuple[Command, ...] = (
    Command("help", "Help", "app.help", "question_mark", command="help", show=True,
            help="List every key and command."),
    Command("command", "Command", "app.command_mode", "colon", show=True, short="Cmd",
            help="Type a command: :tree :user NAME :account NAME :alloc :whatif :jobs :policy :theme NAME "
                 ":sort COLUMN :q"),
    Command("filter", "Filter", "app.filter_mode", "slash", command="filter", arg="REGEX", show=True,
            arg_action="app.set_filter({arg})",
            help="Filter associations by name with a regular expression; Esc clears it."),
    Command("clear-filter", "Clear filter", "app.clear_filter", "escape", command="nofilter",
            help="Show every association again."),
    Command("me", "Jump to me", "app.jump_me", "m", command="me", show=True, short="Me",
            help="Move to your association (again: your next one)."),
    Command("user", "Go to user", "app.jump_me", command="user", arg="NAME",
            arg_action="app.goto_user({arg})", palette=False, help="Move to a user's first association."),
    Command("account", "Go to account", "app.command_mode", command="account", aliases=("acct",), arg="NAME",
            arg_action="app.goto_account({arg})", palette=False,
            help="Move to an account (the palette, ctrl+p, searches them by name)."),
    Command("tab-tree", "Tree", "app.show_tab('tree')", "1", command="tree", show=True,
            help="The association tree."),
    Command("tab-breakdown", "Breakdown", "app.show_tab('breakdown')", "2", command="breakdown",
            aliases=("why",), show=True, help="Why the selected association's fairshare is what it is."),
    Command("tab-alloc", "Allocations", "app.show_tab('alloc')", "3", command="alloc", show=True, short="Alloc",
            help="Service-unit balances of the selected association's projects."),
    Command("tab-whatif", "What-if", "app.show_tab('whatif')", "4", command="whatif", show=True,
            help="What a job would cost, and what it would do to the selected user's fairshare."),
    Command("tab-history", "History", "app.show_tab('history')", "5", command="history",
            help="Daily usage and decayed usage of the selected association, with dates."),
    Command("tab-jobs", "Jobs", "app.show_tab('jobs')", "6", command="jobs",
            help="Why the selected user's (else your) pending jobs wait: Slurm's reason in words, place in the "
                 "queue, the priority part holding each back, the scheduler's start estimate, what would move it."),
    Command("policy", "Policy replay", "app.policy", "P", command="policy", aliases=("replay",),
            help="Admins: replay the past weeks' jobs under another policy (half-life, algorithm, ...): "
                 "who wins, who loses, and the selected association over time."),
    Command("sort-cycle", "Sort", "app.cycle_sort", "s", command="sort", arg="COLUMN",
            arg_action="app.sort({arg})", show=True,
            help=f"Next sort column; shift+letter sorts by one ({_SORT_KEYS}), again reverses."),
    *(Command(f"sort-{c.id}", f"Sort by {c.title}", f"app.sort('{c.id}')", c.key,
              help=f"Sort siblings by {c.title}; press again to reverse.") for c in COLUMNS),
    Command("unsort", "sshare order", "app.sort('')", "0", command="unsort",
            help="Back to sshare's order."),
    Command("expand-all", "Expand all", "app.expand_all", "plus", command="expand",
            help="Expand every account."),
    Command("collapse-all", "Collapse all", "app.collapse_all", "minus", command="collapse",
            help="Collapse to the top level."),
    Command("theme", "Next theme", "app.cycle_theme", "t", command="theme", arg="NAME",
            arg_action="app.set_theme({arg})", help="Switch theme (no name: the next one)."),
    Command("reload", "Reload", "app.reload", "r", command="reload", help="Read the source again."),
    Command("cluster", "Next cluster", "app.next_cluster", "c", command="cluster", arg="NAME",
            arg_action="app.switch_cluster({arg})",
            help="Switch to another configured cluster ([[cluster]] in the config; no name: the next one)."),
    Command("quit", "Quit", "app.quit", "q", command="q", aliases=("quit", "exit"), show=True,
            help="Leave fairtop."),
    # The pane's own title names a, e and p: in the footer they pushed the app's keys past 80 columns.
    Command("alloc-all", "All allocations", "toggle_all", "a", scope="alloc", show=False,
            help="Every allocation of the cluster in one table (again: back to the selection's)."),
    Command("alloc-sort-exhaustion", "Sort: runs out", "sort_by('exhaustion')", "e", scope="alloc", show=False,
            help="All allocations: the one that runs out first at its burn rate on top."),
    Command("alloc-sort-used", "Sort: % used", "sort_by('used')", "p", scope="alloc", show=False,
            help="All allocations: the largest share used (debited and held) on top."),
    Command("cursor-up", "Up", "cursor(-1)", "up,k", scope="tree", help="Previous row."),
    Command("cursor-down", "Down", "cursor(1)", "down,j", scope="tree", help="Next row."),
    Command("page-up", "Page up", "page(-1)", "pageup", scope="tree", help="One screen up."),
    Command("page-down", "Page down", "page(1)", "pagedown", scope="tree", help="One screen down."),
    Command("first", "First row", "edge(0)", "home,g", scope="tree", help="First row."),
    Command("last", "Last row", "edge(1)", "end,G", scope="tree", help="Last row."),
    Command("columns-right", "More columns", "scroll_columns(1)", "shift+right,greater_than_sign", scope="tree",
            help="When not every column fits: show the next ones (RawUsage comes last)."),
    Command("columns-left", "Fewer columns", "scroll_columns(-1)", "shift+left,less_than_sign", scope="tree",
            help="Back to the first columns (FairShare, LevelFS, Rank)."),
    Command("toggle", "Expand/collapse", "toggle", "enter,space", scope="tree",
            help="Expand or collapse the selected account."),
    Command("collapse", "Collapse / parent", "collapse", "left,h", scope="tree",
            help="Collapse the account, or move to its parent."),
    Command("expand", "Expand / child", "expand", "right,l", scope="tree",
            help="Expand the account, or move to its first child."),
)
BY_ID = {c.id: c for c in COMMANDS}


class CommandError(ValueError):
    """A ``:`` line that names no command or lacks an argument."""


def bindings(scope: str) -> list[BindingType]:
    """Textual bindings for ``scope`` (``app``, ``tree`` or ``alloc``), with ids and tooltips."""
    out: list[BindingType] = []
    for c in COMMANDS:
        if c.scope != scope or not c.keys:
            continue
        action = c.action.removeprefix("app.") if scope == "app" else c.action
        out.append(Binding(c.keys, action, c.short or c.title, show=c.show, id=c.id, tooltip=c.help))
    return out


def parse(line: str) -> str:
    """Turn a ``:`` command line into an action string for ``App.run_action``.

    >>> parse("user alice")
    "app.goto_user('alice')"
    """
    import shlex  # only once a command is typed: not on the first frame

    try:
        words = shlex.split(line.strip().removeprefix(":"))
    except ValueError as exc:
        raise CommandError(f"cannot read {line!r}: {exc}") from None
    if not words:
        raise CommandError("empty command")
    name, args = words[0].lower(), words[1:]
    table = {n: c for c in COMMANDS if c.command for n in (c.command, *c.aliases)}
    cmd = table.get(name)
    if cmd is None:
        close = difflib.get_close_matches(name, table, n=1)
        hint = f" Did you mean :{close[0]}?" if close else " Press ? for the list."
        raise CommandError(f"unknown command :{name}.{hint}")
    if not args:
        return cmd.action
    if cmd.arg_action is None:
        raise CommandError(f":{name} takes no argument")
    return cmd.arg_action.replace("{arg}", repr(" ".join(args)))


def key_text(keys: str | None) -> str:
    """Textual key names as a person types them: ``question_mark,colon`` -> ``?, :``."""
    names = {"question_mark": "?", "colon": ":", "slash": "/", "plus": "+", "minus": "-", "escape": "Esc",
             "less_than_sign": "<", "greater_than_sign": ">"}
    return ", ".join(names.get(k, k) for k in (keys or "").split(",") if k)


def usage(cmd: Command) -> str:
    """``:name ARG`` as the help screen prints it."""
    if not cmd.command:
        return ""
    return f":{cmd.command}" + (f" [{cmd.arg}]" if cmd.arg else "")


def _palette_entries(app: object) -> Iterator[tuple[str, str, str]]:
    """(title, help, action) for everything the palette offers; the help starts with the keys
    (as the app's keymap binds them) and the ``:`` command."""
    keymap = dict(getattr(app, "_keymap", {}))
    for c in COMMANDS:
        if c.scope == "app" and c.palette and c.id not in ("command", "clear-filter"):
            how = " · ".join(x for x in (key_text(keymap.get(c.id, c.keys)), usage(c)) if x)
            yield c.title, (f"{how} · " if how else "") + c.help, c.action
    for name in sorted(getattr(app, "fairtop_themes", ())):
        yield f"Theme: {name}", f":theme {name} · Switch to the {name} theme.", f"app.set_theme({name!r})"


MAX_ACCOUNT_HITS = 50
"""Accounts the palette lists for one query (a big site has thousands)."""


class FairtopCommands(Provider):
    """The registry's actions in Textual's command palette (ctrl+p), and the tree's accounts."""

    def _run(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action)

    async def discover(self) -> Hits:
        for title, text, action in _palette_entries(self.app):
            yield DiscoveryHit(title, partial(self._run, action), help=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, text, action in _palette_entries(self.app):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=text)
        hits = 0
        for name in getattr(self.app, "account_names", lambda: [])():
            title = f"Account: {name}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(score * 0.9, matcher.highlight(title),
                          partial(self._run, f"app.goto_account({name!r})"), help=f":account {name} · Go to it.")
                hits += 1
                if hits >= MAX_ACCOUNT_HITS:
                    break
