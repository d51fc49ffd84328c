"""PaintedChops: an update sends only the pieces of lines the terminal does not already show."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from tui.app.painted import PaintedChops

BOLD = Style(bold=True)


def update(lines: list[dict[int, Strip]], spans: list[tuple[int, int, int]] | None = None) -> ChopsUpdate:
    """Lines of chops (start column -> strip) as the compositor hands them over."""
    ends = [[x + s.cell_length for x, s in line.items()] for line in lines]
    if spans is None:
        spans = [(y, 0, max(ends[y])) for y in range(len(lines))]
    return ChopsUpdate([dict(line) for line in lines], spans, ends)


def sent(u: ChopsUpdate | None) -> list[tuple[int, int, str]]:
    """(line, column, text) of each chop the update still draws."""
    if u is None:
        return []
    return [(y, x, strip.text) for y, _, _ in u.spans for x, strip in u.chops[y].items() if strip is not None]


def strip(text: str, style: Style | None = None) -> Strip:
    return Strip([Segment(text, style)])


def test_what_is_on_screen_is_not_sent_again() -> None:
    painted = PaintedChops()
    frame = [{0: strip("tree row 1"), 10: strip("| pane 1")}, {0: strip("tree row 2"), 10: strip("| pane 2")}]
    assert sent(painted.changed_only(update(frame))) == [(0, 0, "tree row 1"), (0, 10, "| pane 1"),
                                                         (1, 0, "tree row 2"), (1, 10, "| pane 2")]
    assert painted.changed_only(update(frame)) is None  # the same frame again: nothing to send
    frame[1][10] = strip("| pane 2!")
    assert sent(painted.changed_only(update(frame))) == [(1, 10, "| pane 2!")]


def test_a_style_change_alone_is_sent() -> None:
    painted = PaintedChops()
    painted.changed_only(update([{0: strip("row")}]))
    assert sent(painted.changed_only(update([{0: strip("row", BOLD)}]))) == [(0, 0, "row")]


def test_a_piece_drawn_over_is_sent_again() -> None:
    painted = PaintedChops()
    line = {0: strip("0123456789")}
    painted.changed_only(update([line]))
    # A toast drew over columns 4-6 (a chop of its own), then went away: the line is whole again.
    painted.changed_only(update([{0: strip("0123"), 4: strip("XYZ"), 7: strip("789")}]))
    assert sent(painted.changed_only(update([line]))) == [(0, 0, "0123456789")]
    # Part of a chop (a span that crops it) is drawn, and forgotten: the whole chop is sent next time.
    painted.changed_only(update([{0: strip("abcdefghij")}], spans=[(0, 2, 5)]))
    assert sent(painted.changed_only(update([line]))) == [(0, 0, "0123456789")]


def test_a_whole_screen_redraw_forgets_everything() -> None:
    painted = PaintedChops()
    frame = [{0: strip("row")}]
    painted.changed_only(update(frame))
    painted.clear()
    assert sent(painted.changed_only(update(frame))) == [(0, 0, "row")]


def test_a_changed_chop_sends_the_cells_that_differ() -> None:
    painted = PaintedChops()
    before = "mech_vargas_lab/alice ranks 874 of 2,501: fairshare 0.349460"
    after = "mech_vargas_lab/bruno ranks 874 of 2,501: fairshare 0.349460"
    painted.changed_only(update([{3: strip(before)}]))
    assert sent(painted.changed_only(update([{3: strip(after)}]))) == [(0, 3 + 16, "bruno")]
    # the terminal now shows `after` whole: the same again sends nothing, the old text all of its cells
    assert painted.changed_only(update([{3: strip(after)}])) is None
    assert sent(painted.changed_only(update([{3: strip(before)}]))) == [(0, 3 + 16, "alice")]
    # from the first changed cell to the last: what lies between is sent too
    spread = before.replace("alice", "aliCe").replace("0.349460", "0.349461")
    assert sent(painted.changed_only(update([{3: strip(spread)}]))) == [(0, 3 + 19, spread[19:])]


def test_a_cut_keeps_whole_characters_and_styles() -> None:
    painted = PaintedChops()
    painted.changed_only(update([{0: strip("usage 7,099,364 of 388,484,468 total")}]))
    # a style change is a change: the cells whose style differs are sent, with their style
    restyled = Strip([Segment("usage "), Segment("7,099,364", BOLD), Segment(" of 388,484,468 total")])
    out = painted.changed_only(update([{0: restyled}]))
    assert sent(out) == [(0, 6, "7,099,364")]
    assert out is not None and list(out.chops[0][6])[0].style == BOLD
    # wide characters are never cut in two: such a chop is sent whole
    wide = "用户 7,099,364 of 388,484,468 total"
    painted.changed_only(update([{0: strip(wide)}]))
    assert sent(painted.changed_only(update([{0: strip(wide.replace("7", "8"))}]))) == [
        (0, 0, wide.replace("7", "8"))]
    # a change of a few cells in a short chop is sent whole (a cut would save less than its cost)
    painted.changed_only(update([{0: strip("0.349")}]))
    assert sent(painted.changed_only(update([{0: strip("0.350")}]))) == [(0, 0, "0.350")]
