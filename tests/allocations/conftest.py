"""Fixtures: the ledger on SQLite and on a real PostgreSQL, the real service on 127.0.0.1, munged.

PostgreSQL: ``$FAIRTOP_TEST_PG`` (a server URL where databases may be created; ``.ci/run`` sets it)
or a throwaway cluster started here (root and Debian's ``postgresql`` needed). munge:
``$FAIRTOP_TEST_MUNGE_SOCKET`` or a munged started here. When neither is possible the tests that
need them skip with one line (``-ra`` lists them), or fail in CI as root (tests/needs.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NoReturn
from pathlib import Path

import pytest

from tests.needs import missing

from .services import Munged, PgCluster, Server, create_database, write_tokens


def _loud_skip(what: str, why: str) -> NoReturn:
    missing(f"no {what}: {why}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    url = os.environ.get("FAIRTOP_TEST_PG")
    if url:
        yield url
        return
    try:
        cluster = PgCluster().start()
    except Exception as exc:  # not root, not installed, failed to start
        _loud_skip("PostgreSQL", str(exc))
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture()
def pg_url(pg_server: str) -> str:
    return create_database(pg_server)


@pytest.fixture(scope="session")
def munge_socket() -> Iterator[str]:
    sock = os.environ.get("FAIRTOP_TEST_MUNGE_SOCKET")
    if sock:
        yield sock
        return
    if os.geteuid() != 0:
        _loud_skip("munge", "starting munged needs root")
    try:
        munged = Munged().start()
    except Exception as exc:
        _loud_skip("munge", str(exc))
    try:
        yield munged.socket
    finally:
        munged.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty ledger location on each store."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture()
def ledger(db: str):
    from tui.allocations.ledger import open_ledger

    led = open_ledger(db, migrate=True)
    yield led
    led.close()


@pytest.fixture(scope="session")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tokens(tmp_path_factory.mktemp("tokens") / "tokens.toml")


@pytest.fixture()
def service(db: str, tokens_file: Path) -> Iterator[Server]:
    server = Server(db, ["--auth", "token", "--tokens", str(tokens_file)]).start()
    try:
        yield server
    finally:
        server.stop()
