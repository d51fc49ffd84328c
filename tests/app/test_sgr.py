"""CompactChops draws what Textual's ChopsUpdate draws, in fewer bytes.

The real check is a terminal's: both renderings are written into tmux and its cells read back
(``capture-pane -e``). A space's foreground and bold cannot show, so blank cells compare by
what can (background, reverse, underline, strike); every other cell by all of it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from rich.color import ColorSystem
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from tests.needs import needs, program
from tui.app.sgr import CompactChops, render_compact

ROW = Style(color="color(188)", bgcolor="color(16)")
BOLD = Style(bold=True, color="color(188)", bgcolor="color(58)")
BAR = Style(bold=True, color="color(215)", bgcolor="color(16)")


def _strips() -> list[Strip]:
    """Lines as the app draws them: a tree row of many same-style cells, a bold row and its
    bar, padding in a plain style, unstyled text, reverse and underlined spaces, a link."""
    return [
        Strip([Segment("  alice   ", BOLD), *(Segment(f" {v:>9}", BOLD) for v in (1, 22, 333)),
               Segment(" ", BOLD), Segment("██▊·····", BAR), Segment("   ", Style(bgcolor="color(16)"))]),
        Strip([Segment(" anthonyj ", ROW), *(Segment(f" {v:>9}", ROW) for v in (4, 55, 666)),
               Segment("   ", Style(bold=True, bgcolor="color(16)")), Segment("plain", None),
               Segment("  ", Style(reverse=True, color="color(23)", bgcolor="color(16)")),
               Segment("  ", Style(underline=True, bgcolor="color(16)")), Segment("x", ROW)]),
        Strip([Segment("computing", Style(italic=True, color="#ff8800")), Segment("  ", Style(bgcolor="#000000")),
               Segment("done", Style(strike=True, bold=True)), Segment(" ", Style(dim=True, bgcolor="#000000")),
               Segment("link", Style(link="https://example.org", color="color(1)")), Segment("end", ROW)]),
    ]


def _update() -> tuple[list[dict[int, Strip | None]], list[tuple[int, int, int]], list[list[int]]]:
    strips = _strips()
    chops: list[dict[int, Strip | None]] = [{2: strip} for strip in strips]
    return chops, [(y, 0, 80) for y in range(len(strips))], [[2 + s.cell_length] for s in strips]


def test_a_row_in_one_style_sends_its_style_once() -> None:
    row = Strip([Segment(f" {v:>9}", ROW) for v in range(10)])
    out = render_compact([(0, 4, row)], ColorSystem.EIGHT_BIT)
    assert out == "\x1b[5;1H\x1b[0;38;5;188;48;5;16m" + "".join(f" {v:>9}" for v in range(10)) + "\x1b[0m"
    assert len(out) < len(row.render_style(ROW, "", ColorSystem.EIGHT_BIT)) * 2 + 110  # Textual: ~10 styles


def test_it_sends_fewer_bytes_than_textual() -> None:
    console = _console()
    ours = CompactChops(*_update()).render_segments(console)
    textual = ChopsUpdate(*_update()).render_segments(console)
    assert len(ours) < 0.7 * len(textual), (len(ours), len(textual))


def _console():  # noqa: ANN202 - a Rich console in 256 colours, as tmux's
    from rich.console import Console

    return Console(color_system="256", force_terminal=True)


_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_ON_BLANK = ("bg", "4", "7", "9", "21", "53")
"""What shows of a space's style: background, underline, reverse, strike, double underline, overline."""


def _cells(captured: str) -> list[list[tuple[str, tuple[str, ...]]]]:
    """tmux's ``capture-pane -e`` lines as (character, what shows of its style) cells."""
    rows = []
    for line in captured.split("\n"):
        state: dict[str, str] = {}
        cells = []
        pos = 0
        for m in _SGR.finditer(line + "\x1b[m"):
            for ch in line[pos:m.start()]:
                shown = state if ch != " " else {k: v for k, v in state.items() if k in _ON_BLANK}
                cells.append((ch, tuple(sorted(shown.items()))))
            pos = m.end()
            params = (m.group(1) or "0").split(";")
            i = 0
            while i < len(params):
                p = params[i]
                if p in ("38", "48"):
                    key, n = ("fg" if p == "38" else "bg"), (3 if params[i + 1] == "5" else 5)
                    state[key] = ";".join(params[i + 1:i + n])
                    i += n
                    continue
                if p == "0":
                    state.clear()
                elif p in ("39", "49"):
                    state.pop("fg" if p == "39" else "bg", None)
                elif p.startswith(("3", "9")) and len(p) == 2:
                    state["fg"] = p
                elif p.startswith(("4", "10")) and len(p) >= 2 and p not in ("4",):
                    state["bg"] = p
                elif p in ("22", "23", "24", "25", "27", "28", "29"):
                    for off in {"22": "12", "23": "3", "24": "4", "25": "5", "27": "7", "28": "8", "29": "9"}[p]:
                        state.pop(off, None)
                else:
                    state[p] = "on"
                i += 1
        rows.append(cells)
    return rows


def _in_tmux(data: str, tmp: Path) -> str:
    socket = f"fairtop-sgr-{uuid.uuid4().hex[:8]}"
    path = tmp / f"{socket}.out"
    path.write_text("\x1b[2J" + data)
    script = "import sys, time; sys.stdout.write(open(sys.argv[1]).read()); sys.stdout.flush(); time.sleep(30)"
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-x", "90", "-y", "6", sys.executable, "-c", script, str(path)],
                   check=True)
    try:
        time.sleep(0.5)
        return subprocess.run([*tmux, "capture-pane", "-e", "-p", "-t", "0"], capture_output=True, text=True,
                              check=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


@needs(program("tmux", "apt-get install tmux; .ci/run does so as root"))
def test_a_terminal_shows_the_same_cells(tmp_path: Path) -> None:
    console = _console()
    ours = _cells(_in_tmux(CompactChops(*_update()).render_segments(console), tmp_path))
    textual = _cells(_in_tmux(ChopsUpdate(*_update()).render_segments(console), tmp_path))
    assert any(ch == "█" for row in ours for ch, _ in row)  # the lines were drawn
    assert ours == textual
