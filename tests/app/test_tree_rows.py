"""Tree-table helpers the tree widget calls on the UI thread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from tui.app.tree_rows import SortKeys, ancestors_mask, decimal_cells

#  0 root
#  ├─ 1 a ─┬─ 3 a1 ── 5 x
#  │       └─ 4 a2
#  └─ 2 b ─── 6 y
PARENT = np.array([-1, 0, 0, 1, 1, 3, 2])


def table() -> SimpleNamespace:
    return SimpleNamespace(size=len(PARENT), parent=PARENT)


def test_ancestors_mask_marks_every_proper_ancestor_once() -> None:
    def marked(*rows: int) -> list[int]:
        return np.flatnonzero(ancestors_mask(table(), np.array(rows, dtype=np.int64))).tolist()  # type: ignore[arg-type]

    assert marked(5) == [0, 1, 3]
    assert marked(5, 4, 5) == [0, 1, 3]  # repeats and shared ancestors
    assert marked(6, 4) == [0, 1, 2]
    assert marked(0) == []  # the root has none
    assert marked(3, 5) == [0, 1, 3]  # a row is marked when it is another's ancestor
    assert marked() == []


def test_ancestors_mask_does_not_import_numpy_ma() -> None:
    # np.unique (numpy >= 2.3) imports numpy.ma at its first call: 25 file calls on the first frame.
    code = ("import sys, numpy as np; from tests.app.test_tree_rows import table; "
            "from tui.app.tree_rows import ancestors_mask; ancestors_mask(table(), np.array([5, 6])); "
            "print('numpy.ma' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.stdout.split() == ["False"]


def test_decimal_cells_are_what_numpy_prints() -> None:
    for values in (np.array([0, 9, 10, 99, 100, 4294967295]), np.arange(20_001), np.array([], dtype=np.int64),
                   np.random.default_rng(7).integers(0, 2**32, 1000), np.array([-3, 5]), np.array([2**40, 1])):
        assert decimal_cells(values).tolist() == values.astype(str).tolist()
    assert decimal_cells(np.array([7, 120])).tolist() == ["7", "120"]


def test_sort_keys_are_made_when_first_read_and_kept() -> None:
    made: list[str] = []

    def key(name: str, value: float) -> np.ndarray:
        made.append(name)
        return np.array([value])

    keys = SortKeys({"a": lambda: key("a", 1.0), "b": lambda: key("b", 2.0)})
    assert made == [] and list(keys) == ["a", "b"] and len(keys) == 2
    assert keys["b"].tolist() == [2.0] and keys["b"].tolist() == [2.0] and made == ["b"]
    keys.make("b", lambda: key("b2", 3.0))
    keys["a"] = np.array([5.0])
    assert keys["a"].tolist() == [5.0] and keys["b"].tolist() == [3.0] and made == ["b", "b2"]
