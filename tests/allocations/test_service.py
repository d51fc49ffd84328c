"""The service on 127.0.0.1 (a real uvicorn subprocess) over SQLite and PostgreSQL: the contract,
roles, bad bodies, the async client and ``fairtop balance``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import httpx
import pytest

from tui.allocations.client import AllocationClient, ApiError, ApiUnavailable, to_model

from .services import ADMIN, ROOT, STANDARD, SUPER, Server, free_port

ALICE, BOB = list(STANDARD)  # alice: gid 7001; bob: gids 7002, 7003
YEAR = date.today().year


def _client(url: str, token: str | None = SUPER) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"} if token else {}, timeout=10)


def _seed(url: str) -> dict[str, int]:
    """Two projects (gids 7001 and 7002), one current cpu allocation each, a job in each."""
    su = _client(url)
    ids = {}
    for name, gid in (("chem", 7001), ("phys", 7002)):
        r = su.post("/project", json={"name": name, "gid": gid, "account": name})
        assert r.status_code == 201, r.text
        pid = r.json()["id"]
        r = su.post("/alloc", json={"project": pid, "resource": "cpu", "category": "startup",
                                    "start": f"{YEAR}-01-01", "end": f"{YEAR}-12-31"})
        assert r.status_code == 201, r.text
        aid = r.json()["id"]
        assert su.post(f"/alloc/{aid}/credit", json={"su_hours": 10}).status_code == 201
        r = su.post("/job", json={"job_id": f"{name}-1", "uid": 5000, "gid": gid, "resource": "cpu", "minutes": 30})
        assert r.status_code == 201, r.text
        ids[f"{name}_project"], ids[f"{name}_alloc"] = pid, aid
    return ids


def test_contract(service) -> None:
    ids = _seed(service.url)
    su = _client(service.url)
    a = su.get(f"/alloc/{ids['chem_alloc']}").json()
    assert {k: a[k] for k in ("credits", "predebits", "debits", "balance")} == \
        {"credits": 600, "predebits": 30, "debits": 0, "balance": 570}
    assert set(a) >= {"id", "project", "resource", "category", "start", "end", "credits", "predebits", "debits",
                      "balance"}
    assert su.get("/project", params={"gid": 7002}).json()[0]["name"] == "phys"
    assert su.get(f"/project/{ids['chem_project']}").json()["gid"] == 7001
    # overlap 409, overdraw 402 (recorded), no allocation 404, job id again 409
    r = su.post("/alloc", json={"project": ids["chem_project"], "resource": "cpu", "category": "x",
                                "start": f"{YEAR}-06-01", "end": f"{YEAR + 1}-05-31"})
    assert r.status_code == 409 and "overlaps" in r.json()["error"]
    r = su.post("/job", json={"job_id": "big", "uid": 5000, "gid": 7001, "resource": "cpu", "minutes": 571})
    assert r.status_code == 402 and r.json()["balance"] == 570
    name, stay = r.headers["server-timing"].split(";dur=")  # what it stayed, beside what the client waited
    assert name == "app" and 0 <= float(stay) < 1000 * r.elapsed.total_seconds()
    assert [f["job_id"] for f in su.get("/failure").json()] == ["big"]
    r = su.post("/job", json={"job_id": "g", "uid": 5000, "gid": 7001, "resource": "gpu", "minutes": 1})
    assert r.status_code == 404
    r = su.post("/job", json={"job_id": "chem-1", "uid": 5000, "gid": 7001, "resource": "cpu", "minutes": 1})
    assert r.status_code == 409
    # completion: seconds round up, the rest comes back
    r = su.put("/job/chem-1", json={"state": "completed", "seconds": 1201})
    assert r.status_code == 200 and r.json()["billed"] == 21
    assert su.get(f"/alloc/{ids['chem_alloc']}").json()["balance"] == 600 - 21
    assert su.put("/job/nope", json={"state": "completed", "minutes": 1}).status_code == 404
    assert [j["job_id"] for j in su.get("/job", params={"gid": 7001}).json()] == ["chem-1"]
    assert su.get("/job/chem-1").json()["status"] == "completed"
    assert su.get("/health").json()["status"] == "ok"


def test_roles_and_cross_project_reads_denied(service) -> None:
    ids = _seed(service.url)
    alice = _client(service.url, ALICE)
    # own project: visible
    assert [p["name"] for p in alice.get("/project").json()] == ["chem"]
    assert [a["project_name"] for a in alice.get("/alloc").json()] == ["chem"]
    assert [j["job_id"] for j in alice.get("/job").json()] == ["chem-1"]
    assert alice.get(f"/alloc/{ids['chem_alloc']}").status_code == 200
    # every cross-project read is denied: 404 for a record, 403 for a filter on another gid
    denied = [alice.get(f"/project/{ids['phys_project']}"), alice.get(f"/alloc/{ids['phys_alloc']}"),
              alice.get("/job/phys-1"), alice.get("/project", params={"gid": 7002}),
              alice.get("/alloc", params={"gid": 7002}), alice.get("/job", params={"gid": 7002}),
              alice.get("/failure", params={"gid": 7002})]
    assert [r.status_code for r in denied] == [404, 404, 404, 403, 403, 403, 403]
    assert all("error" in r.json() for r in denied)
    assert alice.get("/alloc", params={"project": ids["phys_project"]}).json() == []
    # standard and admin users cannot change anything
    admin = _client(service.url, ADMIN)
    for who in (alice, admin):
        assert who.post("/project", json={"name": "x", "gid": 1, "account": "x"}).status_code == 403
        assert who.post(f"/alloc/{ids['chem_alloc']}/credit", json={"minutes": 5}).status_code == 403
        assert who.post("/job", json={"job_id": "z", "uid": 1, "gid": 7001, "resource": "cpu",
                                      "minutes": 1}).status_code == 403
        assert who.put("/job/chem-1", json={"state": "completed", "minutes": 1}).status_code == 403
    # admins read everything
    assert len(admin.get("/alloc").json()) == 2 and admin.get("/job/phys-1").status_code == 200
    # bob is in two gids: sees phys only (no project has 7003)
    assert [p["name"] for p in _client(service.url, BOB).get("/project").json()] == ["phys"]
    # missing or unknown credentials
    for headers in ({}, {"Authorization": "Bearer nope-nope-nope"}, {"Authorization": "Basic x"}):
        r = httpx.get(service.url + "/alloc", headers=headers)
        assert r.status_code == 401 and "error" in r.json()


BAD_BODIES = [
    ("POST", "/project", b"{"),
    ("POST", "/project", b"[]"),
    ("POST", "/project", json.dumps({"name": "a", "gid": "7", "account": "a"}).encode()),
    ("POST", "/project", json.dumps({"name": "a\u0000b", "gid": 7, "account": "a"}).encode()),
    ("POST", "/project", json.dumps({"name": "a", "gid": 2**40, "account": "a"}).encode()),
    ("POST", "/project", json.dumps({"name": "a", "gid": 7, "account": "a", "x": 1}).encode()),
    ("POST", "/alloc", json.dumps({"project": 1, "resource": "tpu", "category": "c", "start": "2026-01-01",
                                   "end": "2026-02-01"}).encode()),
    ("POST", "/alloc", json.dumps({"project": 1, "resource": "cpu", "category": "c", "start": "2026-02-30",
                                   "end": "2026-03-01"}).encode()),
    ("POST", "/alloc", json.dumps({"project": 1, "resource": "cpu", "category": "c", "start": "2026-03-01",
                                   "end": "2026-02-01"}).encode()),
    ("POST", "/alloc/1/credit", json.dumps({"minutes": -5}).encode()),
    ("POST", "/alloc/1/credit", json.dumps({"minutes": 1.5}).encode()),
    ("POST", "/alloc/1/credit", json.dumps({"minutes": 1, "su_hours": 1}).encode()),
    ("POST", "/alloc/1/credit", json.dumps({"minutes": 10**30}).encode()),
    ("POST", "/alloc/99999999999999999999/credit", json.dumps({"minutes": 1}).encode()),
    ("POST", "/job", json.dumps({"job_id": "", "uid": 1, "gid": 1, "resource": "cpu", "minutes": 1}).encode()),
    ("POST", "/job", json.dumps({"job_id": "1", "uid": 1, "gid": 1, "resource": "cpu"}).encode()),
    ("POST", "/job", json.dumps({"job_id": "1", "uid": True, "gid": 1, "resource": "cpu", "minutes": 1}).encode()),
    ("POST", "/job", "\udcff".encode("utf-8", "surrogatepass")),
    ("PUT", "/job/1", json.dumps({"state": "exploded", "minutes": 1}).encode()),
    ("PUT", "/job/a%20b", json.dumps({"state": "completed", "minutes": 1}).encode()),
    ("GET", "/alloc?active=2026-13-01", b""),
    ("GET", "/project?gid=-1", b""),
    ("GET", "/project/0", b""),
]


def test_bad_bodies_get_4xx_with_a_json_error(service) -> None:
    _seed(service.url)
    su = _client(service.url)
    for method, path, body in BAD_BODIES:
        r = su.request(method, path, content=body, headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (method, path, body, r.status_code, r.text)
        assert r.json()["error"], (method, path, body)


def test_post_job_answered_in_front_of_fastapi_keeps_its_contract(service) -> None:
    """POST /job is a plain ASGI route (tui.allocations.predebit_route): FastAPI still describes
    it, its answers match the stored record, and its refusals are FastAPI-shaped JSON."""
    ids = _seed(service.url)
    su = _client(service.url)
    post = su.get("/openapi.json").json()["paths"]["/job"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/JobIn"
    assert set(post["responses"]) >= {"201", "402", "404", "409", "422"}
    r = su.post("/job", json={"job_id": "chem-2", "uid": 5001, "gid": 7001, "resource": "cpu", "seconds": 61})
    assert r.status_code == 201 and r.headers["content-type"] == "application/json"
    job = r.json()
    assert (job["minutes"], job["balance"], job["alloc_id"]) == (2, 568, ids["chem_alloc"])  # 600 - 30 - 2
    assert job == {**su.get("/job/chem-2").json(), "balance": 568}
    r = su.post("/job", json={"job_id": "chem-3", "uid": 1, "gid": 7001, "resource": "cpu", "minutes": 1,
                              "seconds": 60})
    assert r.status_code == 422
    assert r.json()["error"] == "body: Value error, give exactly one of 'minutes' and 'seconds'"
    r = su.post("/job", json={"job_id": "chem 3", "uid": 1, "gid": 7001, "resource": "cpu", "minutes": 1})
    assert r.status_code == 422 and r.json()["error"].startswith("job_id: String should match pattern")
    r = su.post("/job", content=b'{"job_id": "x"}', headers={"Content-Type": "text/plain"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "model_type"
    assert su.post("/job", content=b"").json()["error"] == "body: Field required"
    assert su.post("/job", content=b" " * 70_000).status_code == 413
    r = httpx.post(service.url + "/job", json={"job_id": "z"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer" and r.json()["error"]
    assert su.get(f"/alloc/{ids['chem_alloc']}").json()["balance"] == 568  # nothing refused was held


async def test_async_client_against_the_service(service) -> None:
    ids = _seed(service.url)
    async with AllocationClient(service.url, token=SUPER) as api:
        job = await api.predebit("c2", 5001, 7001, "cpu", 40)
        assert (job.status, job.minutes, job.balance) == ("executing", 40, 530)
        with pytest.raises(ApiError) as err:
            await api.predebit("c3", 5001, 7001, "cpu", 10_000)
        assert err.value.status == 402
        done = await api.complete("c2", "completed", 15)
        assert done.billed == 15
        assert (await api.complete("c2", "completed", 15)).billed == 15  # a repeat is harmless
        rec = await api.allocation(ids["chem_alloc"])
        model = to_model(rec, user_names=False)
        assert model.granted_su == 10 and model.used_su == 0.25 and model.pre_debited_su == 0.5
        assert model.use_by_user == {"5001": 0.25}
        assert [p.name for p in await api.projects()] == ["chem", "phys"]
        assert len(await api.failures()) == 1
    async with AllocationClient(service.url, token=ALICE) as api:
        with pytest.raises(ApiError) as err:
            await api.allocation(ids["phys_alloc"])
        assert err.value.status == 404


async def test_client_reads_retry_and_give_up_when_down() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with AllocationClient(url, token=SUPER, max_retries=1, timeout=1.0) as api:
        with pytest.raises(ApiUnavailable):
            await api.allocations()


async def test_client_retries_reads_on_503_and_settles_a_lost_predebit_by_its_job_id() -> None:
    """Reads are retried; a pre-debit whose answer is lost is read back by its job id and sent
    again only while the read says it did not land, a bounded number of times."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.path}")
        if request.method == "POST":
            raise httpx.ReadTimeout("lost", request=request)
        if request.url.path == "/alloc" and calls.count("GET /alloc") < 3:
            return httpx.Response(503, json={"error": "busy"}, headers={"Retry-After": "0"})
        if request.url.path.startswith("/job/"):
            return httpx.Response(404, json={"error": "no pre-debit"})
        return httpx.Response(200, json=[])

    async with AllocationClient("http://test", token=SUPER, transport=httpx.MockTransport(handler),
                                max_retries=2) as api:
        assert await api.allocations() == []
        with pytest.raises(ApiUnavailable, match="not acknowledged after 3 tries"):
            await api.predebit("j1", 1, 1, "cpu", 5)
    assert calls.count("GET /alloc") == 3
    assert calls.count("POST /job") == 4 and calls.count("GET /job/j1") == 3


async def test_a_lost_predebit_that_landed_is_read_not_sent_again() -> None:
    """The first instance takes the pre-debit and dies before answering: the client reads it on
    the second (same values: that record; other values: 409) and never sends it again."""
    calls: list[str] = []
    landed = {"job_id": "j1", "alloc_id": 1, "uid": 1, "gid": 1, "minutes": 5, "status": "executing",
              "actual": None, "billed": None, "created": "2026-11-24T00:00:00+00:00", "resolved": None}

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.host} {request.url.path}")
        if request.url.host == "a":
            raise httpx.RemoteProtocolError("server disconnected", request=request)
        if request.method == "POST":
            return httpx.Response(409, json={"error": "job j1 was already pre-debited"})
        return httpx.Response(200, json=landed)

    async with AllocationClient("http://a, http://b", token=SUPER, transport=httpx.MockTransport(handler)) as api:
        rec = await api.predebit("j1", 1, 1, "cpu", 5)
        assert (rec.job_id, rec.minutes, api.url) == ("j1", 5, "http://b")
        with pytest.raises(ApiError) as err:  # the client stays with b; a true duplicate is a 409
            await api.predebit("j1", 1, 1, "cpu", 6)
    assert err.value.status == 409
    assert calls == ["POST a /job", "GET b /job/j1", "POST b /job"]


def test_balance_command(service, db) -> None:
    _seed(service.url)
    env = dict(os.environ, FAIRTOP_ALLOC_TOKEN=ALICE)
    run = subprocess.run([sys.executable, "-m", "tui.cli", "balance", "--url", service.url, "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [(r["project_name"], r["balance"]) for r in rows] == [("chem", 570)]
    run = subprocess.run([sys.executable, "-m", "tui.cli", "balance", "--db", db, "--project", "phys"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    head, row = run.stdout.splitlines()
    assert head.split()[:3] == ["id", "project", "resource"]
    assert row.split()[1:3] == ["phys", "cpu"] and row.split()[6:10] == ["10.0", "0.0", "0.5", "9.5"]
    run = subprocess.run([sys.executable, "-m", "tui.cli", "balance"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, env={k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_ALLOC")})
    assert run.returncode == 2 and "--db" in run.stderr


def test_first_contact_without_the_extra_is_one_line(tmp_path: Path, tokens_file: Path) -> None:
    """``serve-allocations`` where fastapi is not installed (hidden here): one line naming the
    extra, exit 2, no traceback."""
    code = ("import sys; sys.modules['fastapi'] = None\n"
            "from tui.cli import main\n"
            f"sys.exit(main(['serve-allocations', '--db', {str(tmp_path / 'l.db')!r}, '--auth', 'token', "
            f"'--tokens', {str(tokens_file)!r}]))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr == ("fairtop: serve-allocations needs fastapi: install fairtop[allocations] "
                          "(pip install 'fairtop[allocations]')\n")


def test_a_new_ledger_file_starts_at_the_current_schema_an_old_one_needs_migrate(tmp_path: Path,
                                                                               tokens_file: Path) -> None:
    from tui.allocations.ledger import Ledger, _SqliteStore, schema_sections

    fresh = Server(str(tmp_path / "new.db"), ["--auth", "token", "--tokens", str(tokens_file)]).start(migrate=False)
    try:
        health = httpx.get(fresh.url + "/health", timeout=10).json()
        assert (health["schema"], health["store"]) == (len(schema_sections()), "sqlite")
    finally:
        fresh.stop()
    old_path = str(tmp_path / "old.db")
    Ledger(_SqliteStore(old_path)).migrate(target=2)  # the file as an older fairtop left it
    with pytest.raises(RuntimeError, match="--migrate"):
        Server(old_path, ["--auth", "token", "--tokens", str(tokens_file)]).start(migrate=False)
