"""One rule for tests that need something outside the clone (a built scheduler, a server, a
program from Debian, root, ``../shared/``): where it is missing they skip with one line naming it,
so ``./dev test`` passes wherever a newcomer runs it; in CI as root (``CI`` set and uid 0, where
``.ci/run`` installs and starts all of it) a missing thing fails the test instead.

    pytestmark = needs(program("promtool", "apt-get install prometheus"))   # module or test mark
    missing("no PostgreSQL: ...")                                             # inside a fixture/test

The mark is applied by ``pytest_runtest_setup`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

#: CI as root: everything a test needs was installed and started by .ci/run, so a gap is a failure.
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no") and os.geteuid() == 0


def missing(what: str) -> NoReturn:
    """Skip with ``what`` (one line), or fail with it in CI as root."""
    what = " ".join(what.split())  # one line, whatever the caller built
    if IN_CI:
        pytest.fail(f"missing in CI: {what}", pytrace=False)
    raise pytest.skip.Exception(what, _use_item_location=True)  # -ra names the test, not this line


def needs(*gaps: str | None) -> pytest.MarkDecorator:
    """A mark for tests that need what ``gaps`` name (``None``: present); see ``missing``."""
    return pytest.mark.needs(*[gap for gap in gaps if gap])


def apply(item: pytest.Item) -> None:
    """The ``needs`` marks of ``item``: the first gap skips (or fails in CI as root)."""
    for mark in item.iter_markers("needs"):
        for gap in mark.args:
            missing(gap)


def program(name: str, how: str, path: str | None = None) -> str | None:
    """``None`` if ``name`` is on PATH (or on ``path``), else the line saying so and ``how`` to get it."""
    return None if shutil.which(name, path=path) else f"no {name} on PATH ({how})"


def file(path: Path | str, how: str) -> str | None:
    """``None`` if ``path`` exists, else the line saying so and ``how`` to get it."""
    return None if Path(path).exists() else f"no {path} ({how})"


def root(why: str) -> str | None:
    """``None`` as root, else the line saying ``why`` root is needed."""
    return None if os.geteuid() == 0 else f"not root: {why}"


def env(name: str, how: str) -> str | None:
    """``None`` if the environment names ``name``, else the line saying so and ``how``."""
    return None if os.environ.get(name) else f"{name} not set ({how})"
