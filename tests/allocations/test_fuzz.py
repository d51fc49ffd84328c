"""Requests generated from the service's own OpenAPI description (schemathesis, valid and invalid
bodies, parameters and paths) against the real server: every answer is JSON and never 5xx."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from .services import SUPER, Server, write_tokens

HEADERS = {"Authorization": f"Bearer {SUPER}"}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("fuzz")
    server = Server(str(tmp / "ledger.db"), ["--auth", "token", "--tokens", str(write_tokens(tmp / "t.toml"))])
    server.start()
    year = date.today().year
    with httpx.Client(base_url=server.url, headers=HEADERS) as su:  # records for the paths to find
        su.post("/project", json={"name": "chem", "gid": 7001, "account": "chem"})
        su.post("/alloc", json={"project": 1, "resource": "cpu", "category": "c", "start": f"{year}-01-01",
                                "end": f"{year}-12-31"})
        su.post("/alloc/1/credit", json={"minutes": 10_000})
        su.post("/job", json={"job_id": "1", "uid": 1, "gid": 7001, "resource": "cpu", "minutes": 5})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def api_schema(fuzz_server: Server):
    return schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_fuzzed_requests_never_get_5xx(case) -> None:
    response = case.call(headers=HEADERS, timeout=10)
    assert response.status_code < 500, (case.method, case.formatted_path, case.body, response.text)
    if response.status_code >= 400:
        assert response.json()["error"], response.text
