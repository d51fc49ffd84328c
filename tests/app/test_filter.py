"""The tree filter's vectorised plain-text path gives exactly what the regex path gives."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.app.conftest import small_demo
from tui.analysis.standing import build_standing
from tui.app import tree_rows as tr


@pytest.fixture(scope="module")
def table() -> tr.TreeTable:
    return tr.TreeTable.from_standing(build_standing(small_demo()(), "alice"))


@pytest.mark.parametrize("pattern",
                         ["a", "ch", "CHEM", "Chem", "lab", "al-", "_lab", "zzz", "", "a.b", "^chem", "lab$"])
def test_plain_text_path_matches_regex_path(table: tr.TreeTable, pattern: str) -> None:
    assert table.names_lower is not None
    slow = replace(table, names_lower=None)  # forces re.search on every name
    np.testing.assert_array_equal(tr.filter_mask(table, pattern), tr.filter_mask(slow, pattern))


def test_long_names_skip_the_lower_case_copy() -> None:
    names = np.array(["x" * 10_000] * 1_000, dtype=object)
    assert tr.lower_names(names) is None
    assert tr.lower_names(np.array(["Ab", "c"], dtype=object)).tolist() == ["ab", "c"]


def test_invalid_regex_still_raises(table: tr.TreeTable) -> None:
    import re

    with pytest.raises(re.error):
        tr.filter_mask(table, "(")
