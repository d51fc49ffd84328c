"""Rows as JSON and CSV (``fairtop report --format json|csv``, ``history``, PBS rows).

Two shapes come in. Rows of dicts (small tables: PBS, history) go through the ``json`` module's
C encoder and ``csv``. Columns of printed text (the Slurm report: 200k associations) are
written without building a dict per row: each cell is already the text sshare prints, so it
becomes a JSON number literal as it stands, and the cells that are not numbers map to fixed
JSON values (:data:`JSON_SPECIAL`). One row per line in both formats.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from json.encoder import encode_basestring_ascii  # the C function (c_encode_basestring_ascii)
from typing import Any, TextIO

__all__ = ["JSON_SPECIAL", "cluster_column", "format_csv", "format_json", "with_cluster", "write_columns_csv",
           "write_columns_json"]

JSON_SPECIAL = {"": "null", "inf": '"inf"', "parent": '"parent"'}
"""Cells of a numeric column that are not JSON numbers: an empty cell (sshare prints nothing) is
``null``; ``inf`` (JSON has no infinity) is the string ``"inf"``; ``parent`` shares stay a string."""


def with_cluster(cluster: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with ``cluster`` as their first key (multi-cluster json and csv)."""
    return [{"cluster": cluster, **row} for row in rows]


def cluster_column(cluster: str, table: str, width: int) -> str:
    """A text table with a first column ``Cluster`` (``width`` wide): a header line (the one above
    a line of dashes) gets the title, the dashes line more dashes, ``#`` and blank lines stay as
    they are, every other line the cluster's name."""
    lines = table.splitlines()

    def dashes(i: int) -> bool:
        return 0 <= i < len(lines) and lines[i].strip() != "" and set(lines[i].strip()) <= {"-", " "}

    out = []
    for i, line in enumerate(lines):
        if line.startswith("#") or not line.strip():
            out.append(line)
        elif dashes(i):
            out.append("-" * width + " " + line)
        else:
            out.append(f"{'Cluster' if dashes(i + 1) else cluster:<{width}} {line}")
    return "\n".join(out) + "\n"


def format_json(rows: list[dict[str, Any]]) -> str:
    """One JSON array, one object per row and per line (the C encoder: ``indent`` would fall
    back to the pure-Python one)."""
    if not rows:
        return "[]\n"
    return "[\n" + ",\n".join(map(json.dumps, rows)) + "\n]\n"


def format_csv(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV with a header (``columns``, else the first row's keys); None becomes an empty cell."""
    out = io.StringIO()
    names = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()


_PLAIN = re.compile(r"[ !#-\[\]-~]*")
"""Text that JSON quotes as it stands: printable ASCII without '"' and '\\'."""


def _json_cells(cells: list[str], text: bool) -> Iterable[str]:
    if text:
        return map(encode_basestring_ascii, cells)
    if not any(special in cells for special in JSON_SPECIAL):  # a scan in C: most columns have none
        return cells
    return map(JSON_SPECIAL.get, cells, cells)  # the cell itself when it is not special


def _json_block(columns: Mapping[str, list[str]], text: Sequence[str]) -> str:
    """The rows of one block as JSON objects, each followed by ",\n"."""
    pieces: list[Iterable[str]] = []  # key, cell, key, cell, ..., end: joined in C, no per-row format
    close = ""  # the quote that ends the previous cell when its quotes are in the keys
    for j, name in enumerate(columns):
        cells = columns[name]
        # names are almost always plain: their quotes then go into the keys, not into 200k cells
        plain = name in text and _PLAIN.fullmatch("".join(cells)) is not None
        key = close + ("{" if j == 0 else ", ") + json.dumps(name) + ": " + ('"' if plain else "")
        pieces += [repeat(key), cells if plain else _json_cells(cells, name in text)]
        close = '"' if plain else ""
    pieces.append(repeat(close + "},\n"))
    return "".join(chain.from_iterable(zip(*pieces)))


def write_columns_json(blocks: Iterable[Mapping[str, list[str]]], text: Sequence[str], out: TextIO) -> None:
    """A JSON array of objects, one per row and line, from blocks of columns of printed cells.

    ``text`` names the columns that are strings (JSON-quoted). Every other cell must be a JSON
    number literal as printed (``%f``, an integer) or a key of :data:`JSON_SPECIAL`.
    """
    out.write("[")
    sep = "\n"
    for block in blocks:
        body = _json_block(block, text)
        if body:
            out.write(sep + body[:-2])
            sep = ",\n"
    out.write("\n]\n")


def _needs_quotes(text: str) -> bool:
    return any(c in text for c in ',"\n\r')


def _csv_cell(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"' if _needs_quotes(cell) else cell


def write_columns_csv(blocks: Iterable[Mapping[str, list[str]]], columns: Sequence[str], out: TextIO) -> None:
    """CSV with a header (``columns``) from blocks of columns of printed cells, quoted only where
    a cell needs it."""
    out.write(",".join(columns) + "\n")
    for block in blocks:
        cols = [list(map(_csv_cell, c)) if _needs_quotes("".join(c)) else c for c in block.values()]
        if cols and cols[0]:
            out.write("\n".join(map(",".join, zip(*cols))) + "\n")
