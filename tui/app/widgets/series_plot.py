"""A plot of dated series whose figure is built off the UI thread, and only when it is on screen.

Building a plotext figure is not cheap: it parses every date string with ``strptime``, deep-copies
its settings and lays out the canvas in Python (20-40 ms per plot of two 121-step lines at 120
columns). A pane that gave six plots a new result would pay that on the UI thread, all in one
callback, though only the one or two plots in view are drawn. :class:`SeriesPlot` keeps the data;
when it is drawn (Textual renders only what is on screen) it builds the figure in a thread at its
size and theme and shows it when ready, the previous figure meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import RenderResult
from textual.geometry import Size
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

#: plotext keeps module-level state (its theme table, its default figure): one build at a time.
_BUILD_LOCK = threading.Lock()


@dataclass(frozen=True, eq=False)
class Figure:
    """What a :class:`SeriesPlot` draws: one line per ``(label, values)`` over ``dates``."""

    title: str
    dates: Sequence[str]
    """x values as ``input_form`` date strings, one per value of each line."""
    lines: Sequence[tuple[str, Sequence[float]]]
    input_form: str = "d/m/Y H:M"
    output_form: str = "d/m"

    def build(self, size: Size, theme: str) -> Text:
        """The figure drawn at ``size`` in plotext theme ``theme`` (any thread)."""
        with _BUILD_LOCK:
            plt = Plot()
            plt.date_form(self.input_form, self.output_form)
            for label, values in self.lines:
                plt.plot(list(self.dates), list(values), marker="braille", label=label)
            plt.title(self.title)
            plt.plotsize(size.width, size.height)
            plt._set_size(size.width, size.height)  # as PlotextPlot.render does (textual-plotext issue 5)
            plt.theme(theme)
            return Text.from_ansi(plt.build())


@dataclass(frozen=True, eq=False)
class _Built:
    figure: Figure
    size: Size
    theme: str

    def fits(self, figure: Figure | None, size: Size, theme: str) -> bool:
        return figure is self.figure and size == self.size and theme == self.theme


class SeriesPlot(PlotextPlot):
    """A :class:`PlotextPlot` given a whole :class:`Figure`, built in a thread when drawn."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002 - Textual's
        super().__init__(id=id, classes=classes)
        self.figure: Figure | None = None
        """The figure to show (None: an empty plot)."""
        self.built: tuple[_Built, Text] | None = None
        """The last figure built, for what size and theme, and its text."""
        self._building: _Built | None = None

    def show_figure(self, figure: Figure) -> None:
        """Show ``figure`` once it is built (the one before it meanwhile)."""
        self.figure = figure
        self.refresh()

    def render(self) -> RenderResult:
        figure = self.figure
        if figure is None:
            return super().render()
        size, theme = self.size, self._get_plotext_theme_name(self.app.theme)
        if self.built is not None and self.built[0].fits(figure, size, theme):
            return self.built[1]
        if self._building is None or not self._building.fits(figure, size, theme):
            self._building = _Built(figure, size, theme)
            self._build(self._building)
        return self.built[1] if self.built is not None else Text("")

    @work(thread=True, exclusive=True, group="plot-build", exit_on_error=False,
          description="build a plot's figure")
    def _build(self, wanted: _Built) -> None:
        text = wanted.figure.build(wanted.size, wanted.theme)
        self.app.call_from_thread(self._built_one, wanted, text)

    def _built_one(self, wanted: _Built, text: Text) -> None:
        if wanted is self._building:  # not overtaken by a newer figure, size or theme
            self.built, self._building = (wanted, text), None
            self.refresh()
