"""The footer is built once for a burst of binding changes (tui/app/widgets/calm_footer.py).

The stock Footer rebuilt its eleven keys for each of the five binding changes of the start (55 keys
made, each styled), about 0.1 s of the start's CPU; the calm one rebuilds once a burst, and still
shows the bindings as they end up.
"""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tests.app.conftest import ready
from tests.app.test_first_screen import demo_app
from tui.app.widgets.calm_footer import CalmFooter


def _shown(app) -> list[str]:  # noqa: ANN001
    return [key.key_display for key in app.query_one(CalmFooter).query(FooterKey)]


async def test_the_start_builds_the_footer_at_most_twice_and_it_shows_the_tree_keys(monkeypatch) -> None:  # noqa: ANN001
    made: list[FooterKey] = []
    init = FooterKey.__init__

    def counted(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(FooterKey, "__init__", counted)
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause(0.2)
        shown = _shown(app)
        assert shown[:3] == ["?", ":", "/"]  # Help, Cmd, Filter: the tree's keys
        assert 0 < len(made) <= 2 * len(shown)  # the stock Footer: 3 builds here, 5 in a real terminal


async def test_a_burst_of_changes_ends_with_the_last_bindings() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        before = _shown(app)
        for _ in range(3):  # the prompt opens and closes three times before a frame is drawn
            await pilot.press("colon")
            await pilot.press("escape")
        await pilot.press("colon")  # and stays open
        await ready(pilot)
        await pilot.pause(0.2)
        assert _shown(app) != before
        await pilot.press("escape")
        await ready(pilot)
        await pilot.pause(0.2)
        assert _shown(app) == before
