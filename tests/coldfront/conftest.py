"""The real ColdFront of tests/coldfront/site.py, started once per session; skipped with one line
where it cannot be built (failed in CI as root: tests/needs.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.coldfront.site import BuildFailed, Site, serve
from tests.needs import missing


@pytest.fixture(scope="session")
def coldfront(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """ColdFront 1.1.10 with its test data and tests/coldfront/populate.py's, on 127.0.0.1."""
    try:
        with serve(tmp_path_factory.mktemp("coldfront")) as site:
            yield site
    except BuildFailed as exc:
        missing(f"no ColdFront for the tests: {exc} (python -m tests.coldfront.site builds it)")
