"""Textual's Footer, recomposed once for a burst of binding changes instead of once for each.

At start-up the screen's bindings change five times before the first frame (focus, the tabs, the
prompt bar closing): the stock Footer schedules a recompose for each, and each builds and styles
its eleven keys again (bench/README.md, issue 33). Here a change schedules a recompose only if none
is waiting; the one that runs reads the bindings as they are by then.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class CalmFooter(Footer):
    _recompose_waiting = False

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._recompose_waiting:
            self._recompose_waiting = True
            self.call_after_refresh(self._recompose_now)

    async def _recompose_now(self) -> None:
        self._recompose_waiting = False  # a change from here on waits for the next one
        await self.recompose()
