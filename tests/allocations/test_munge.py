"""``--auth munge`` against a real munged: the uid from the credential, gids from the system, roles
from the command line; replayed, forged and missing credentials are 401."""

from __future__ import annotations

import grp
import pwd
from datetime import date
from pathlib import Path

import httpx
import pytest

from tui.allocations.auth import AuthError, MungeAuth

from .services import Server, munge_credential

NOBODY = pwd.getpwnam("nobody")
NOBODY_GID = NOBODY.pw_gid


_cred = munge_credential


def test_unmunge_gives_the_uid(munge_socket: str) -> None:
    auth = MungeAuth(superusers=["root"], socket=munge_socket)
    root = auth.authenticate(None, _cred(munge_socket))
    assert (root.uid, root.role) == (0, "superuser")
    nobody = auth.authenticate(None, _cred(munge_socket, "nobody"))
    assert (nobody.uid, nobody.role) == (NOBODY.pw_uid, "standard")
    assert NOBODY_GID in nobody.gids
    for bad in ("", "MUNGE:garbage:", "x" * 10000, "caf\u00e9"):
        with pytest.raises(AuthError):
            auth.authenticate(None, bad)


def test_service_with_munge(munge_socket: str, tmp_path: Path) -> None:
    server = Server(str(tmp_path / "l.db"), ["--auth", "munge", "--superuser", "root",
                                              "--munge-socket", munge_socket]).start()
    try:
        def call(method: str, path: str, user: str | None = None, cred: str | None = None, **kw) -> httpx.Response:
            headers = {"X-Munge-Cred": cred or _cred(munge_socket, user)}
            return httpx.request(method, server.url + path, headers=headers, timeout=10, **kw)

        year = date.today().year
        group = grp.getgrgid(NOBODY_GID).gr_name
        assert call("POST", "/project", json={"name": group, "gid": NOBODY_GID, "account": group}).status_code == 201
        assert call("POST", "/project", json={"name": "other", "gid": 4242, "account": "other"}).status_code == 201
        r = call("POST", "/alloc", json={"project": 2, "resource": "cpu", "category": "c",
                                         "start": f"{year}-01-01", "end": f"{year}-12-31"})
        assert r.status_code == 201
        # nobody: a standard user who sees its own gid's project only, and cannot write
        assert [p["gid"] for p in call("GET", "/project", "nobody").json()] == [NOBODY_GID]
        assert call("GET", "/alloc/1", "nobody").status_code == 404
        assert call("GET", "/project", "nobody", params={"gid": 4242}).status_code == 403
        assert call("POST", "/project", "nobody", json={"name": "x", "gid": 1, "account": "x"}).status_code == 403
        # the pre-debit (answered in front of FastAPI) checks the credential and the role alike
        assert call("POST", "/alloc/1/credit", json={"minutes": 50}).status_code == 201
        job = {"job_id": "m1", "uid": 0, "gid": 4242, "resource": "cpu", "minutes": 20}
        assert call("POST", "/job", "nobody", json=job).status_code == 403
        cred = _cred(munge_socket)
        r = call("POST", "/job", cred=cred, json=job)
        assert r.status_code == 201 and r.json()["balance"] == 30
        assert call("POST", "/job", cred=cred, json={**job, "job_id": "m2"}).status_code == 401  # replayed
        # a credential is good once; forged or missing ones are refused
        cred = _cred(munge_socket)
        assert call("GET", "/project", cred=cred).status_code == 200
        replay = call("GET", "/project", cred=cred)
        assert replay.status_code == 401 and "error" in replay.json()
        assert call("GET", "/project", cred="MUNGE:AwQFAAD=:").status_code == 401
        assert httpx.get(server.url + "/project").status_code == 401
    finally:
        server.stop()
