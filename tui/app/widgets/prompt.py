"""The one-line prompt at the bottom: ``:`` command mode and ``/`` filter, as in k9s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label

Mode = Literal["command", "filter"]


class PromptInput(Input):
    """The prompt's input; Esc cancels instead of reaching the app."""

    BINDINGS = [
        Binding("enter", "submit", "Run", id="prompt-run", tooltip="Run the command or apply the filter."),
        Binding("escape", "cancel", "Cancel", id="prompt-cancel", tooltip="Close the prompt (a filter is cleared)."),
    ]

    def action_cancel(self) -> None:
        bar = self.parent
        if isinstance(bar, PromptBar):
            bar.post_message(PromptBar.Cancelled(bar, bar.mode))


class PromptBar(Horizontal):
    """Hidden until ``:`` or ``/``; posts :class:`Submitted`, :class:`Changed` or :class:`Cancelled`."""

    @dataclass
    class Submitted(Message):
        bar: PromptBar
        mode: Mode
        value: str

    @dataclass
    class Changed(Message):
        bar: PromptBar
        mode: Mode
        value: str

    @dataclass
    class Cancelled(Message):
        bar: PromptBar
        mode: Mode

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode: Mode = "command"
        """What the typed line is: a ``:`` command or a ``/`` filter."""

    def compose(self) -> ComposeResult:
        yield Label(":", id="prompt-label")
        yield PromptInput(id="prompt-input", compact=True)

    def open(self, mode: Mode, value: str = "") -> None:
        """Show the prompt in ``mode`` with ``value`` typed, and focus it."""
        self.mode = mode
        self.query_one(Label).update(":" if mode == "command" else "/")
        inp = self.query_one(PromptInput)
        inp.placeholder = ("tree | user NAME | alloc | whatif | theme NAME | sort COLUMN | q"
                           if mode == "command" else "regex on account and user names (Esc clears)")
        inp.value = value
        inp.remove_class("-invalid")
        self.display = True
        # Focus now, not via focus()'s call_later: keys typed right after ":" are already queued
        # and must reach the input, not trigger the tree's single-letter bindings.
        self.screen.set_focus(inp)

    def close(self) -> None:
        self.display = False

    def set_invalid(self, invalid: bool) -> None:
        self.query_one(PromptInput).set_class(invalid, "-invalid")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self, self.mode, event.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, self.mode, event.value))
