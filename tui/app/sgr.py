"""An update's pieces of lines in fewer bytes: only the style changes, not every style whole.

Textual writes each segment of a strip as ``ESC[<whole style>m text ESC[0m``: a tree row of ten
columns in one style sends that style ten times (~24 bytes each in 256 colours), and a run of
padding spaces sends its own style although only its background shows. :class:`CompactChops`
draws the same cells: it keeps the terminal's current style between segments and sends only
the parameters that change (a reset only when an attribute must go), and spaces whose
foreground cannot show (no underline, reverse, strike, frame or overline) are written in the
current style when its background is theirs. Nothing else differs from Textual's
``ChopsUpdate``: the same chops, each at its absolute cursor position.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import SGR_STYLES, Strip

_SHOWS_ON_BLANK = sum(1 << bit for bit in (3, 6, 8, 9, 10, 11, 12))
"""Attribute bits that show on a space: underline, reverse, strike, underline2, frame, encircle, overline."""

_Sgr = tuple[int, tuple[str, ...], tuple[str, ...]]
"""A style as the terminal holds it: attribute bits, foreground codes, background codes."""
_RESET: _Sgr = (0, (), ())


def _sgr(style: Style, color_system: ColorSystem, cache: dict[Style, _Sgr]) -> _Sgr:
    sgr = cache.get(style)
    if sgr is None:
        color, bgcolor = style._color, style._bgcolor
        sgr = cache[style] = (
            style._attributes & style._set_attributes,
            tuple(color.downgrade(color_system).get_ansi_codes()) if color is not None else (),
            tuple(bgcolor.downgrade(color_system).get_ansi_codes(False)) if bgcolor is not None else (),
        )
    return sgr


def _change(old: _Sgr | None, new: _Sgr) -> str:
    """The SGR parameters that turn ``old`` (None: unknown) into ``new``; empty when equal."""
    attrs, fg, bg = new
    if old is None or old[0] & ~attrs:  # an attribute must go (or the state is unknown): start afresh
        params = ["0"]
        old = _RESET
    else:
        params = []
    params += [SGR_STYLES[bit] for bit in range(attrs.bit_length()) if attrs & ~old[0] & (1 << bit)]
    if fg != old[1]:
        params += fg or ("39",)
    if bg != old[2]:
        params += bg or ("49",)
    return ";".join(params)


def render_compact(strips: list[tuple[int, int, Strip]], color_system: ColorSystem) -> str:
    """``(x, y, strip)`` drawn in turn, each at its place, in as few bytes as keep the cells.

    The terminal's style before is taken as unknown (the first change starts with a reset) and
    is reset at the end, as Textual leaves it.
    """
    out: list[str] = []
    cache: dict[Style, _Sgr] = {}
    state: _Sgr | None = None
    for x, y, strip in strips:
        out.append(f"\x1b[{y + 1};{x + 1}H")
        for text, style, control in strip:
            if control or not text:
                continue
            if style is not None and style._link:  # a hyperlink: Textual's own form, then a known state
                if state != _RESET:
                    out.append("\x1b[0m")
                out.append(Strip.render_style(style, text, color_system))
                state = _RESET
                continue
            new = _RESET if style is None else _sgr(style, color_system, cache)
            if (state is not None and not text.strip(" ") and not (new[0] | state[0]) & _SHOWS_ON_BLANK
                    and new[2] == state[2]):
                out.append(text)  # spaces: only their background shows, and it is the current one
                continue
            if params := _change(state, new):
                out.append(f"\x1b[{params}m")
            state = new
            out.append(text)
    if state != _RESET:
        out.append("\x1b[0m")
    return "".join(out)


class CompactChops(ChopsUpdate):
    """A ``ChopsUpdate`` written with :func:`render_compact`."""

    def render_segments(self, console: Console) -> str:
        strips: list[tuple[int, int, Strip]] = []
        for y, x1, x2 in self.spans:
            for end, (x, strip) in zip(self.chop_ends[y], self.chops[y].items()):
                if strip is None or x >= x2 or end <= x1:
                    continue  # (Textual sends a chop starting at x2 as a bare cursor move)
                strips.append((x, y, strip if end <= x2 else strip.crop(0, x2 - x)))
        return render_compact(strips, console._color_system or ColorSystem.TRUECOLOR)
