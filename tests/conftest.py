"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``needs(...)`` skip (or fail in CI as root) on what is missing: tests/needs.py."""
    from tests.needs import apply

    apply(item)
