"""A ``Static`` whose update lays the screen out again only when its height changes.

``Static.update`` asks for a layout of the whole screen each time (Textual cannot know the new
text's height). Beside a wide tree the breakdown updates a dozen of them per cursor move, and a
neighbour's text nearly always keeps each one's height: the layouts (a reflow of every widget,
then a render of what it moved) were 150-240 ms of a Down's 250 ms at 200x60 on a loaded box,
and over SSH the screen settles only when they are done.
"""

from __future__ import annotations

from textual.css.scalar import Unit
from textual.visual import VisualType
from textual.widgets import Static


class SteadyStatic(Static):
    """A ``Static`` that repaints in place when new content keeps its height, and not at all
    when the text is the same."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        if isinstance(content, str) and isinstance(self.content, str) and content == self.content:
            return  # the same text: nothing to render again (a neighbour's path shares most lines)
        width = self.content_size.width
        before = self._height(width) if layout and width > 0 else -1
        super().update(content, layout=False)
        if layout and (before < 0 or self._height(width) != before):
            self.refresh(layout=True)

    def _height(self, width: int) -> int:
        """The height the content gives the widget at ``width`` (its padding, a min-height in cells)."""
        # As Textual asks it (Widget.get_content_height): its styles serve as the rules map.
        height = self.visual.get_height(self.styles, width) + self.styles.gutter.height  # type: ignore[arg-type]
        least = self.styles.min_height
        if least is not None and least.unit == Unit.CELLS:
            height = max(height, int(least.value))
        return height
