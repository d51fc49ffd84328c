"""A ColdFront site's publisher: every user's ColdFront allocations without a token per user.

One staff token, on the publisher's host only, reads every allocation with its users
(``/api/allocations/?allocation_users=true``) and every project with its users and allocation ids
(``/api/projects/?project_users=true&allocations=true``: the allocation's project is given by id
there, not by a title that need not be unique). For each user it keeps what ColdFront's own API
would show them, and less:

* allocations of projects (status New or Active) they lead (PI) or manage (an Active project user
  whose role is a Manager), and those they are an Active allocation user of (ColdFront 1.1.10's
  rule, with the manager's status checked too);
* of each, its id, project, resource and status, and only the usage attributes ColdFront makes
  public (plus the site's ``coldfront_public_attributes``) and ``slurm_account_name``: never a
  private attribute (not even to staff), never the allocation's other users.

Files follow the PrivateData layout's modes (``docs/admin/private-data.md``): ``DIR/users/`` 0711
(it cannot be listed), ``DIR/users/NAME/`` 0755, ``DIR/users/NAME/coldfront.json`` 0400 owned by
NAME, replaced atomically each round; a user with nothing any more gets an empty list, not stale
numbers. Giving files away needs root or CAP_CHOWN. A user without a Unix account is skipped.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

from tui.allocations.client import ApiError
from tui.allocations.coldfront import ACCOUNT_ATTRIBUTE, PUBLISHED_FILE, PUBLISHED_USERS, PUBLIC_USAGE, ColdFrontClient

__all__ = ["publish", "read_site", "who_sees"]

USERS, FILE = PUBLISHED_USERS, PUBLISHED_FILE
ACTIVE_PROJECTS = ("New", "Active")


async def read_site(url: str, *, token: str, timeout: float, ca_file: str | None = None,
                    transport: httpx.AsyncBaseTransport | None = None) -> tuple[str, list[Any], list[Any]]:
    """(site URL, every allocation with its users and attributes, every project with its users
    and allocation ids), read with a staff token; another token is refused in one line."""
    async with ColdFrontClient(url, token=token, timeout=httpx.Timeout(timeout, connect=min(timeout, 3.0)),
                               ca_file=ca_file, transport=transport) as cf:
        if not await cf.is_staff():
            raise ApiError(403, f"ColdFront {cf.site}: the publisher needs a staff token (its holder may list "
                                "/api/users/); this one is a user's")
        allocations = await cf._get("/api/allocations/", {"allocation_attributes": "true",
                                                           "allocation_users": "true"})
        projects = await cf._get("/api/projects/", {"project_users": "true", "allocations": "true"})
    if not isinstance(allocations, list) or not isinstance(projects, list):
        raise ApiError(200, f"ColdFront {cf.site}: /api/allocations/ or /api/projects/ is not a list")
    return cf.site, allocations, projects


def _rows(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def who_sees(allocations: Sequence[Mapping[str, Any]],
             projects: Sequence[Mapping[str, Any]]) -> dict[str, set[int]]:
    """User name -> the ids of the allocations they may see (module docstring)."""
    seen: dict[str, set[int]] = {}
    for p in projects:
        if p.get("status") not in ACTIVE_PROJECTS:
            continue
        ids = {a["id"] for a in _rows(p.get("allocations")) if isinstance(a.get("id"), int)}
        people = {str(p["pi"])} if p.get("pi") else set()
        people |= {str(u["user"]) for u in _rows(p.get("project_users"))
                   if "Manager" in str(u.get("role", "")) and u.get("status") == "Active" and u.get("user")}
        for name in people:
            seen.setdefault(name, set()).update(ids)
    in_active = {i for p in projects if p.get("status") in ACTIVE_PROJECTS
                 for i in (a.get("id") for a in _rows(p.get("allocations"))) if isinstance(i, int)}
    for a in allocations:
        if a.get("id") not in in_active:
            continue
        for u in _rows(a.get("allocation_users")):
            if u.get("status") == "Active" and u.get("user"):
                seen.setdefault(str(u["user"]), set()).add(a["id"])
    return seen


def _public_row(row: Mapping[str, Any], public: set[str]) -> dict[str, Any]:
    """An allocation as published: no other users, no attribute but the public usage ones and
    the Slurm account."""
    attrs = [{"allocation_attribute_type": a.get("allocation_attribute_type"), "value": a.get("value"),
              "usage": a.get("usage")} for a in _rows(row.get("allocation_attributes"))
             if a.get("allocation_attribute_type") == ACCOUNT_ATTRIBUTE
             or (a.get("allocation_attribute_type") in public and a.get("usage") is not None)]
    return {"id": row["id"], "project": row.get("project"), "resource": row.get("resource"),
            "status": row.get("status"), "allocation_attributes": attrs}


def _uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def _write_owned(path: Path, data: bytes, uid: int) -> None:
    """``path`` replaced atomically by a file of ``data``, mode 0400, owned by ``uid`` from its first byte."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
    try:
        os.fchown(fd, uid, -1)
        os.fchmod(fd, 0o400)
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _folder(path: Path, mode: int) -> None:
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, mode)


def publish(folder: Path, site: str, allocations: Sequence[Mapping[str, Any]], projects: Sequence[Mapping[str, Any]],
            *, public: Iterable[str] = (), at: datetime | None = None,
            uid_of: Callable[[str], int | None] = _uid) -> tuple[int, list[str]]:
    """Write each user's file under ``folder``; (files written, users skipped: no Unix account)."""
    at = at or datetime.now(timezone.utc)
    shown = set(PUBLIC_USAGE) | set(public)
    by_id = {a["id"]: a for a in allocations if isinstance(a.get("id"), int)}
    seen = who_sees(allocations, projects)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    people = folder / USERS
    _folder(people, 0o711)
    before = {p.name for p in people.iterdir() if p.is_dir()}
    written, skipped = 0, []
    for name in sorted(set(seen) | before):
        uid = uid_of(name)
        if uid is None or "/" in name or name.startswith("."):
            skipped.append(name)
            continue
        rows = [_public_row(by_id[i], shown) for i in sorted(seen.get(name, ())) if i in by_id]
        doc = {"coldfront": site, "read_at": at.isoformat(), "user": name, "allocations": rows}
        _folder(people / name, 0o755)
        _write_owned(people / name / FILE, json.dumps(doc, indent=1).encode(), uid)
        written += 1
    return written, skipped
