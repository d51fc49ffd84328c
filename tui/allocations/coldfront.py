"""ColdFront as an allocation source: its REST API (``coldfront.plugins.api``, ColdFront 1.1),
read with the user's own token, for the Allocations pane, ``fairtop standing`` and ``fairtop balance``.

What the API gives, and what fairtop makes of it:

* ``GET /api/allocations/?allocation_attributes=true&show_all=false`` lists the allocations of the
  token's holder: those of projects they lead (PI) or manage (a "Manager" role), and (1.1.10) those
  they are an active user of; ``show_all=false`` keeps a staff member to their own too. Each
  allocation: id, project title, resources, status, attributes with ``value`` and ``usage``. It
  does not page.
* **Budget and usage**: an attribute type with usage (``has_usage``: Core Usage (Hours),
  Accelerator Usage (Hours), ...) carries the budget as ``value`` (text, e.g. ``"150000"``) and
  what XDMoD last reported as ``usage`` (a number, ``0.0`` until ``coldfront xdmod_usage`` runs).
  A value that is not a number is kept as text, never shown as one.
* **Private attributes**: the API hands a non-staff user every attribute, private ones
  (``slurm_specs``, ``Paid ... (Hours)``, ``Purchase Order Number``) among them, and does not say
  which are private. So, for a user who is not staff, only the usage attributes ColdFront makes
  public by default (:data:`PUBLIC_USAGE`) and those the site lists in
  ``coldfront_public_attributes`` are kept, plus ``slurm_account_name`` (public by default); the
  rest is dropped here, at the boundary. Staff (the token's holder may read ``/api/users/``, which
  is for staff only) keep every usage attribute and ``slurm_specs``.
* **End date**: the API does not give it, nor start dates (the serializer's fields are id, project,
  resource, status, users, attributes; no other endpoint serializes an allocation's dates). What it
  gives is the status ColdFront derives from the end date: its daily task marks an allocation
  ``Expired`` once its end date has passed. So an Expired allocation is shown as ended, and any
  other's end as unknown, with the allocation's page in ColdFront that shows it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from tui.allocations.client import DEFAULT_TIMEOUT, ApiError, JsonClient

__all__ = ["ACCOUNT_ATTRIBUTE", "PUBLIC_USAGE", "PUBLISHED_FILE", "PUBLISHED_USERS", "ColdFrontAllocation",
           "ColdFrontClient", "ColdFrontView", "UsageAttribute", "parse_allocations", "published_view",
           "read_coldfront", "site_url"]

PUBLIC_USAGE = ("Core Usage (Hours)", "Accelerator Usage (Hours)", "Cloud Storage Quota (TB)")
"""The usage attribute types ColdFront creates public (``coldfront add_allocation_defaults``)."""
ACCOUNT_ATTRIBUTE = "slurm_account_name"
"""The Slurm account an allocation's jobs run under (public by default)."""
SPECS_ATTRIBUTE = "slurm_specs"
"""What ``coldfront slurm_dump`` writes onto the account's line (private: staff only)."""
EXPIRED = "Expired"
"""The status ColdFront's daily task sets once an allocation's end date has passed."""
PUBLISHED_USERS, PUBLISHED_FILE = "users", "coldfront.json"
"""Where a site's publisher (:mod:`tui.allocations.coldfront_publish`) puts a user's view:
``DIR/users/NAME/coldfront.json``."""
_STAFF_PROBE = "/api/users/?username=fairtop-staff-probe"
"""An endpoint for staff only (``IsAdminUser``), asked for a user that does not exist: 200 and
``[]`` for staff, 403 for anyone else, cheap either way."""


@dataclass(frozen=True)
class UsageAttribute:
    """One usage attribute of an allocation: the budget ColdFront grants and the usage it knows."""

    name: str
    """E.g. ``Core Usage (Hours)``."""
    budget: float | None
    """The attribute's value as a number; None when it is not one (see :attr:`budget_text`)."""
    budget_text: str
    """The value as ColdFront holds it."""
    usage: float | None
    """What XDMoD last reported (``coldfront xdmod_usage``); None: ColdFront has no usage record."""
    public: bool = True
    """Public by ColdFront's defaults or the site's list; False: kept only because the reader is
    staff (never served beyond them: not in the metrics)."""

    @property
    def unit(self) -> str:
        """The unit in the name's brackets (``Hours``, ``TB``), "" when it has none."""
        head, _, tail = self.name.rpartition("(")
        return tail.rstrip(")").strip() if head and tail.endswith(")") else ""


@dataclass(frozen=True)
class ColdFrontAllocation:
    """One ColdFront allocation as the token's holder may see it."""

    id: int
    project: str
    """The project's title."""
    resource: str
    """The resources, as ColdFront lists them (``University HPC``, or several joined by commas)."""
    status: str
    """``Active``, ``Expired``, ``Renewal Requested``, ``New``, ..."""
    usage: tuple[UsageAttribute, ...]
    slurm_account: str | None
    """``slurm_account_name``: the Slurm account of its jobs; None when it has none."""
    page: str
    """The allocation's page in ColdFront (it shows the dates the API does not give)."""
    slurm_specs: str | None = None
    """``slurm_specs`` (private): only for staff, else None."""

    @property
    def ended(self) -> bool:
        """ColdFront marked it Expired: its end date has passed."""
        return self.status == EXPIRED

    def end_text(self) -> str:
        """What is known of its end date, in words."""
        if self.ended:
            return "ended: ColdFront marked it Expired (its end date passed; the API gives no date)"
        return f"end date unknown: ColdFront's API does not give it; see {self.page}"


@dataclass(frozen=True)
class ColdFrontView:
    """What one read of ColdFront gave the token's holder."""

    url: str
    staff: bool
    """The token's holder is ColdFront staff (private attributes kept)."""
    allocations: tuple[ColdFrontAllocation, ...]
    published_at: datetime | None = None
    """When the site's publisher read ColdFront (None: read now, with the user's own token)."""


def site_url(url: str) -> str:
    """ColdFront's base URL: given with or without ``/api`` and trailing slashes."""
    url = url.strip().rstrip("/")
    return url[: -len("/api")] if url.endswith("/api") else url


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


def _text(row: Mapping[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, (str, int, float)):
        raise ApiError(200, f"{where}: {key} is not text: {value!r}")
    return str(value)


def parse_allocations(rows: Any, *, site: str, staff: bool,
                      public: Sequence[str] = ()) -> tuple[ColdFrontAllocation, ...]:
    """The API's answer as records, private attributes dropped unless ``staff``; ``public``:
    the site's further public usage attributes (``coldfront_public_attributes``)."""
    if not isinstance(rows, list):
        raise ApiError(200, f"ColdFront's /api/allocations/ answered {type(rows).__name__}, not a list")
    shown = set(PUBLIC_USAGE) | set(public)
    out = []
    for i, row in enumerate(rows):
        where = f"allocation #{i + 1}"
        if not isinstance(row, dict) or not isinstance(row.get("id"), int):
            raise ApiError(200, f"ColdFront's {where} is not an allocation: {row!r:.80}")
        attrs = row.get("allocation_attributes") or []
        if not isinstance(attrs, list):
            raise ApiError(200, f"ColdFront's {where}: allocation_attributes is not a list")
        usage: list[UsageAttribute] = []
        account = specs = None
        for a in attrs:
            if not isinstance(a, dict):
                continue
            name = _text(a, "allocation_attribute_type", where)
            value = _text(a, "value", where)
            if name == ACCOUNT_ATTRIBUTE:
                account = value or None
            elif name == SPECS_ATTRIBUTE and staff:
                specs = value
            elif a.get("usage") is not None and (staff or name in shown):
                usage.append(UsageAttribute(name, _number(value), value, _number(a["usage"]), name in shown))
        out.append(ColdFrontAllocation(
            id=row["id"], project=_text(row, "project", where), resource=_text(row, "resource", where),
            status=_text(row, "status", where), usage=tuple(usage), slurm_account=account,
            page=f"{site}/allocation/{row['id']}/", slurm_specs=specs))
    return tuple(out)


class ColdFrontClient(JsonClient):
    """``async with ColdFrontClient(url, token=T) as cf: await cf.view()``: the token holder's
    allocations (``Authorization: Token T``, as ColdFront's REST framework expects)."""

    def __init__(self, url: str, *, token: str, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 max_retries: int = 0, transport: httpx.AsyncBaseTransport | None = None,
                 ca_file: str | None = None, public: Sequence[str] = ()) -> None:
        self.site = site_url(url)
        super().__init__(self.site, timeout=timeout, max_retries=max_retries, transport=transport, ca_file=ca_file)
        self._token = token
        self._public = tuple(public)

    async def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self._token}"}

    async def is_staff(self) -> bool:
        """The token's holder is staff: ColdFront lets them list users (anyone else: 403)."""
        try:
            await self._get(_STAFF_PROBE)
        except ApiError as exc:
            if exc.status == 403:
                return False
            raise
        return True

    async def view(self) -> ColdFrontView:
        """The token holder's allocations. A wrong or revoked token is :class:`ApiError` 401."""
        try:
            rows = await self._get("/api/allocations/", {"allocation_attributes": "true", "show_all": "false"})
        except ApiError as exc:
            if exc.status in (401, 403):
                raise ApiError(exc.status, f"ColdFront {self.site} refused the token ({exc.message}): make a new "
                               "one on your ColdFront profile page (API token) and put it in the token file",
                               exc.body) from None
            raise
        staff = await self.is_staff()
        return ColdFrontView(self.site, staff, parse_allocations(rows, site=self.site, staff=staff,
                                                                 public=self._public))


def published_view(folder: str | Path, user: str, public: Sequence[str] = ()) -> ColdFrontView:
    """The view the site's publisher wrote for ``user`` in ``folder`` (:class:`ApiError` when
    there is none or it is not such a file)."""
    path = Path(folder).expanduser() / PUBLISHED_USERS / user / PUBLISHED_FILE
    try:
        doc = json.loads(path.read_bytes())
        at = datetime.fromisoformat(doc["read_at"])
        site = str(doc["coldfront"])
    except OSError as exc:
        raise ApiError(404, f"no ColdFront allocations published for {user} ({path}: {exc.strerror or exc})") \
            from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ApiError(200, f"{path}: not a ColdFront file of fairtop's publisher ({exc})") from None
    return ColdFrontView(site, False, parse_allocations(doc.get("allocations"), site=site, staff=False,
                                                        public=public), published_at=at)


async def read_coldfront(url: str, *, token: str, timeout: float, ca_file: str | None = None,
                         public: Sequence[str] = (), transport: httpx.AsyncBaseTransport | None = None,
                         published: str | None = None, user: str = "") -> ColdFrontView:
    """One read of ColdFront (no retry: the pane asks again later), within ``timeout`` seconds
    per request; an https site verified against ``ca_file`` or the system's CAs. With
    ``published`` (no token: the site publishes), ``user``'s file in that folder instead."""
    if published:
        return published_view(published, user, public)
    async with ColdFrontClient(url, token=token, timeout=httpx.Timeout(timeout, connect=min(timeout, 3.0)),
                               ca_file=ca_file, public=public, transport=transport) as cf:
        return await cf.view()
