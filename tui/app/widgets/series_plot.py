"""A plot of dated series, handed its data at once and configured only when it is drawn.

Configuring a plotext figure is not free: it parses every date string with ``strptime`` and
deep-copies its settings (~4 ms per series at 121 steps). A pane that hands six plots a new
result would pay that for all six on the UI thread in one callback, though only the one or two
plots in view are drawn; :class:`SeriesPlot` keeps the data and builds its figure in
:meth:`render`, so only the plots on screen cost anything, each in its own render.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.app import RenderResult
from textual_plotext import PlotextPlot


@dataclass(frozen=True)
class Figure:
    """What a :class:`SeriesPlot` draws: one line per ``(label, values)`` over ``dates``."""

    title: str
    dates: Sequence[str]
    """x values as ``date_form`` strings (``input_form``), one per value of each line."""
    lines: Sequence[tuple[str, Sequence[float]]]
    input_form: str = "d/m/Y H:M"
    output_form: str = "d/m"


class SeriesPlot(PlotextPlot):
    """A :class:`PlotextPlot` whose figure is applied when it is next drawn, not when it is set."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002 - Textual's
        super().__init__(id=id, classes=classes)
        self._figure: Figure | None = None
        self._applied: Figure | None = None

    def show_figure(self, figure: Figure) -> None:
        """Draw ``figure`` from the next frame this plot is on screen."""
        self._figure = figure
        self.refresh()

    def render(self) -> RenderResult:
        figure = self._figure
        if figure is not None and figure is not self._applied:
            plt = self.plt
            plt.clear_data()
            plt.clear_figure()
            plt.date_form(figure.input_form, figure.output_form)
            for label, values in figure.lines:
                plt.plot(list(figure.dates), list(values), marker="braille", label=label)
            plt.title(figure.title)
            self._applied = figure
        return super().render()
