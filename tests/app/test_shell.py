"""Pilot tests of the app shell: themes, help, palette, keymap, worker failures, pane slots."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widget import Widget

from tests.app.conftest import ME, SIZE, ready, small_demo
from tui.app import commands, themes
from tui.app.screens.help import HelpScreen
from tui.app.widgets.fairshare_tree import HELD_KEY_S, FairshareTree
from tui.sources.errors import SourceUnavailable


async def test_theme_switch_by_key_and_command(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        assert app.theme == "dark"
        await pilot.press("t")
        assert app.theme == "light"
        await pilot.press("colon", *"theme ansi16", "enter")
        assert app.theme == "ansi16" and app.state.last_theme == "ansi16"
        assert app.current_theme.ansi
        await pilot.press("colon", *"theme ansi15", "enter")
        assert app.theme == "ansi16"
        # one sentence, naming the themes that exist
        assert any(n.message.startswith("There is no theme 'ansi15'. Did you mean 'ansi16'? The themes are dark, ")
                   and "ansi16" in n.message.split("The themes are")[1] for n in app._notifications)


async def test_bad_theme_file_falls_back_to_dark(make_app, tmp_path: Path, monkeypatch) -> None:
    bad = tmp_path / "themes"
    bad.mkdir()
    (bad / "broken.toml").write_text('primary = "not-a-colour"\n')
    monkeypatch.setattr(themes, "theme_dirs", lambda: [bad, *THEME_DIRS])
    app = make_app(theme="broken")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        assert app.theme == "dark"
        messages = [n.message for n in app._notifications]
        assert any("broken.toml" in m and "primary" in m for m in messages)
        assert any("There is no theme 'broken'." in m for m in messages)


THEME_DIRS = themes.theme_dirs()


async def test_help_lists_the_registry(make_app) -> None:
    app = make_app(keymap={"me": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(file=io.StringIO(), width=160, record=True)
        console.print(app.screen.query_one("Static").content)
        text = console.export_text()
        for c in commands.COMMANDS:
            assert c.help.split(" ")[0] in text
        assert ":user [NAME]" in text and "x" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_keymap_rebinds_and_warns(make_app) -> None:
    app = make_app(keymap={"me": "x", "jump": "y"})
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("x")
        tree = app.query_one(FairshareTree)
        assert tree.table.users[tree.selected_row] == ME
        messages = [n.message for n in app._notifications]
        assert any("'jump' is not a binding id" in m for m in messages), messages


async def test_palette_offers_registry_actions(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        provider = commands.FairtopCommands(app.screen)
        titles = [str(hit.text) async for hit in provider.search("jump")]
        assert "Jump to me" in titles
        themes_found = [str(hit.text) async for hit in provider.search("theme ansi")]
        assert "Theme: ansi16" in themes_found


async def test_worker_failure_is_a_notification(make_app) -> None:
    def broken() -> None:
        raise SourceUnavailable("sshare: command not found")

    app = make_app(loader=broken)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert any("sshare: command not found" in n.message for n in app._notifications)
        assert "could not load" in str(app.query_one("#status").render())
        await pilot.press("m", "down", "slash", "x", "enter")  # keys on an empty tree do nothing
        assert app.is_running


async def test_breakdown_pane_follows_selection(make_app, monkeypatch) -> None:
    calls: list[int | None] = []

    class FakeBreakdown(Widget):
        def show(self, standing, row) -> None:  # noqa: ANN001
            calls.append(row)

    from tui.app import app as app_module

    monkeypatch.setitem(app_module.PANES, "breakdown", ("Breakdown", FakeBreakdown))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert not app.query("#pane-breakdown")  # built when its tab first opens
        await pilot.press("down", "down")
        await pilot.pause(0.3)
        assert calls == []  # hidden: nothing to compute yet
        tree = app.query_one(FairshareTree)
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(app.query_one("#pane-breakdown"), FakeBreakdown)
        assert calls == [tree.selected_row]
        await pilot.press("1", "down", "down", "2")
        await pilot.pause()
        assert calls[-1] == tree.selected_row and len(calls) == 2
        await pilot.press("1", "down", "2")  # shown again right away, once
        await pilot.pause(0.3)
        assert calls[-1] == tree.selected_row and len(calls) == 3


async def test_large_tree_stays_virtual(make_app) -> None:
    app = make_app(loader=small_demo(users=20000))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("plus", "end")
        await pilot.pause(3 * HELD_KEY_S)  # two keys this quick are a held key: the tree is drawn when it rests
        tree = app.query_one(FairshareTree)
        assert len(tree.rows_shown) == tree.table.size > 20000
        assert tree.cursor == len(tree.rows_shown) - 1
        last = str(tree.table.names[tree.rows_shown[-1]])
        assert last in tree.render_line(tree.size.height - 1).text
        assert len(tree.children) == 0


def test_parse_commands() -> None:
    assert commands.parse(":user alice") == "app.goto_user('alice')"
    assert commands.parse("user") == "app.jump_me"
    assert commands.parse("quit") == "app.quit"
    assert commands.parse("theme light") == "app.set_theme('light')"
    assert commands.parse("filter ^chem") == "app.set_filter('^chem')"
    for bad, hint in (("aloc", ":alloc"), ("tree x", "no argument")):
        try:
            commands.parse(bad)
        except commands.CommandError as exc:
            assert hint in str(exc)
        else:
            raise AssertionError(bad)


def test_every_binding_has_id_and_tooltip() -> None:
    for scope in ("app", "tree"):
        for b in commands.bindings(scope):
            assert b.id and b.tooltip
    ids = [c.id for c in commands.COMMANDS]
    assert len(ids) == len(set(ids))


def test_screenshot_script(tmp_path: Path) -> None:
    """The README's screenshots come from the real app; every shipped theme renders."""
    import runpy

    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "screenshots" / "make.py"))
    assert script["main"]([str(tmp_path)]) == 0
    for stem, _, _ in script["SHOTS"]:
        svg = (tmp_path / f"{stem}.svg").read_text()
        assert "Account" in svg or "Help" in svg


async def test_every_tab_has_a_key_and_a_command(make_app) -> None:
    """1-6 and :tree ... :jobs open the six tabs (History had neither a key nor a command)."""
    from textual.widgets import TabbedContent

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tabs = app.query_one(TabbedContent)
        for key, tab in zip("652341", ("jobs", "history", "breakdown", "alloc", "whatif", "tree")):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab
        for word, tab in (("history", "history"), ("jobs", "jobs"), ("why", "breakdown"), ("tree", "tree")):
            await pilot.press(":", *word, "enter")
            await pilot.pause()
            assert tabs.active == tab
