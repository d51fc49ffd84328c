"""An async client of the allocation service (httpx), for the app's workers and ``fairtop balance``.

* One service URL, or several instances of it on one ledger (``allocation_url = "http://a:8642,
  http://b:8642"``): requests go to the instance in use; one that cannot be reached is left for
  the next at once (no back-off between instances), and the client stays with the one that answers.
* Timeouts on every request (``httpx.Timeout(10, connect=3)`` unless given).
* Reads (GET) are retried with backoff (0.5 s * 2**n, capped at 8 s, 25 % jitter; ``Retry-After``
  honoured up to 60 s, plus up to 25 %) on transport errors and 408/429/502/503/504, after every
  instance was tried.
* Writes are sent once, to another instance only when the first refused the connection (nothing
  was sent). A pre-debit whose answer was lost is settled by its job id: the client asks
  ``GET /job/{job_id}`` (a read, any instance) whether it landed, and sends it again only if it did
  not; the ledger takes a job id once, so a pre-debit that landed meanwhile answers 409 and is read.
* ``https://`` instances are verified against the system's CAs or ``ca_file`` (:mod:`tui.security.tls`);
  a certificate or handshake that TLS refuses is :class:`TlsRefused` at once, one line naming
  the URL and the reason: not retried, and no other instance is tried (a wrong certificate is a
  mistake or an attack to be seen, not an outage to route around). https and http instances are
  never mixed, and redirects are not followed: a client told https never sends a token in clear.
* Answers become frozen dataclasses at the boundary; failures are :class:`ApiUnavailable` (no
  answer) or :class:`ApiError` (an answer with status and message).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Self

import httpx

from tui.allocations.errors import AllocationError
from tui.allocations.records import (
    AllocationRecord,
    FailureRecord,
    JobRecord,
    ProjectRecord,
)
from tui.allocations.records import build as _build
from tui.model import Allocation
from tui.security.tls import TlsConfigError, check_schemes, client_context, failure

__all__ = ["AllocationClient", "JsonClient", "ApiError", "ApiUnavailable", "TlsRefused", "service_urls",
           "ProjectRecord", "AllocationRecord", "JobRecord", "FailureRecord", "to_model"]

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=3.0)
RETRY_STATUS = frozenset({408, 429, 502, 503, 504})


class ApiUnavailable(AllocationError):
    """The service did not answer (refused, timed out, dropped) after the retries allowed."""


class TlsRefused(ApiUnavailable):
    """TLS refused the service: its certificate (unknown CA, wrong host) or the handshake."""


class ApiError(AllocationError):
    """The service answered with an error status."""

    def __init__(self, status: int, message: str, body: Any = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status, self.message, self.body = status, message, body


def _user_name(uid: str) -> str:
    import pwd

    try:
        return pwd.getpwuid(int(uid)).pw_name
    except (KeyError, ValueError):
        return uid


def to_model(rec: AllocationRecord | Mapping[str, Any], *, user_names: bool = True) -> Allocation:
    """An allocation of the ledger as the snapshot's :class:`tui.model.Allocation` (SU-hours)."""
    r: AllocationRecord = _build(AllocationRecord, rec) if isinstance(rec, Mapping) else rec
    day = lambda s: datetime.fromisoformat(s).replace(tzinfo=timezone.utc)  # noqa: E731
    return Allocation(
        allocation_id=str(r.id), project=r.account or r.project_name,
        granted_su=r.credits / 60, used_su=r.debits / 60, pre_debited_su=r.predebits / 60,
        start=day(r.start), end=day(r.end),
        use_by_user={(_user_name(u) if user_names else u): m / 60 for u, m in r.debits_by_uid.items()},
        failures=r.failures,
    )


async def munge_credential(socket: str | None = None, munge: str = "munge") -> str:
    """A fresh MUNGE credential from the local munged (``munge -n``)."""
    argv = [munge, "--no-input"] + (["--socket", socket] if socket else [])
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise ApiUnavailable(f"munge: {err.decode(errors='replace').strip() or 'failed'}")
    return out.decode().strip()


def service_urls(url: str | Sequence[str]) -> tuple[str, ...]:
    """The instances ``allocation_url`` names: one URL, or several separated by commas or spaces."""
    parts = url.replace(",", " ").split() if isinstance(url, str) else [u.strip() for u in url]
    return tuple(u.rstrip("/") for u in parts if u)


class JsonClient:
    """The HTTP core of fairtop's JSON API clients: instances, TLS, timeouts, reads retried with
    backoff, errors as :class:`ApiUnavailable`/:class:`ApiError`. A client of one API adds its
    credential (:meth:`_headers`) and its reads."""

    def __init__(self, base_url: str | Sequence[str], *, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 max_retries: int = 3, transport: httpx.AsyncBaseTransport | None = None,
                 ca_file: str | None = None) -> None:
        self.max_retries = max_retries
        self._urls = service_urls(base_url) or ("",)
        self._at = 0  # the instance in use
        self._ca_file = ca_file
        try:
            check_schemes(self._urls)
            verify = client_context(ca_file)  # for http URLs too: httpx would load certifi's bundle anyway
        except TlsConfigError as exc:
            raise TlsRefused(str(exc)) from None
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, verify=verify, follow_redirects=False)

    @property
    def url(self) -> str:
        """The instance in use."""
        return self._urls[self._at]

    def _next_instance(self) -> None:
        self._at = (self._at + 1) % len(self._urls)

    async def _request(self, method: str, path: str, *, resend: bool, **kwargs: Any) -> httpx.Response:
        """``method path`` on the instance in use; on one that refuses the connection (nothing
        was sent), or on any transport error when ``resend``, on the next, each instance once."""
        for tried in range(len(self._urls)):
            try:
                return await self._http.request(method, self.url + path, headers=await self._headers(), **kwargs)
            except httpx.TransportError as exc:
                refused = failure(exc, self._ca_file)
                if refused:
                    raise TlsRefused(f"{self.url}: {refused}") from None
                if tried == len(self._urls) - 1 or not (resend or isinstance(exc, httpx.ConnectError)):
                    raise
                self._next_instance()
        raise AssertionError("unreachable")  # the loop returns or raises

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _headers(self) -> dict[str, str]:
        """The credential sent with every request (none here)."""
        return {}

    @staticmethod
    def _raise_for(resp: httpx.Response) -> Any:
        try:
            body = resp.json()
        except ValueError:
            body = None
        if resp.status_code >= 400:
            message = body.get("error") or body.get("detail") if isinstance(body, dict) else None
            raise ApiError(resp.status_code, str(message or resp.reason_phrase), body)
        return body

    @staticmethod
    def retry_delay(attempt: int, resp: httpx.Response | None = None) -> float:
        """Seconds before retry ``attempt`` (0-based): Retry-After if given, else backoff."""
        if resp is not None:
            try:
                after = float(resp.headers.get("retry-after", ""))
                if 0 <= after <= 60:  # a little later than asked: the clients refused together part
                    return after * (1 + 0.25 * random.random())
            except ValueError:
                pass
        return min(0.5 * 2**attempt, 8.0) * (1 - 0.25 * random.random())

    async def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        params = {k: v for k, v in (params or {}).items() if v is not None}
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            resp = None
            try:
                resp = await self._request("GET", path, resend=True, params=params)
                if resp.status_code not in RETRY_STATUS:
                    return self._raise_for(resp)
                last = ApiError(resp.status_code, resp.reason_phrase)
                if len(self._urls) > 1:  # this instance is unwell: the next one, at once
                    self._next_instance()
                    continue
            except httpx.TransportError as exc:
                last = exc
            if attempt < self.max_retries:
                await asyncio.sleep(self.retry_delay(attempt, resp))
        if isinstance(last, ApiError):
            raise ApiUnavailable(f"GET {path}: {last}")
        raise ApiUnavailable(f"GET {path}: {type(last).__name__}: {last}") from last

    async def _send(self, method: str, path: str, body: Mapping[str, Any]) -> Any:
        """A write, sent once (to another instance only if refused: PUT /job is safe to repeat)."""
        try:
            resp = await self._request(method, path, resend=method == "PUT", json=dict(body))
        except httpx.TransportError as exc:
            raise ApiUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return self._raise_for(resp)


class AllocationClient(JsonClient):
    """``async with AllocationClient(url, token=T) as api: await api.allocations()``; ``url`` may
    name several instances (:func:`service_urls`)."""

    def __init__(self, base_url: str | Sequence[str], *, token: str | None = None, munge: bool = False,
                 munge_socket: str | None = None, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 max_retries: int = 3, transport: httpx.AsyncBaseTransport | None = None,
                 ca_file: str | None = None) -> None:
        super().__init__(base_url, timeout=timeout, max_retries=max_retries, transport=transport, ca_file=ca_file)
        self._token, self._munge, self._munge_socket = token, munge, munge_socket

    async def _headers(self) -> dict[str, str]:
        if self._munge:
            return {"X-Munge-Cred": await munge_credential(self._munge_socket)}
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    # -- reads ----------------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        return await self._get("/health")

    async def projects(self, gid: int | None = None) -> list[ProjectRecord]:
        return [_build(ProjectRecord, p) for p in await self._get("/project", {"gid": gid})]

    async def project(self, project_id: int) -> ProjectRecord:
        return _build(ProjectRecord, await self._get(f"/project/{project_id}"))

    async def allocations(self, *, project: int | None = None, gid: int | None = None,
                          active: str | None = None) -> list[AllocationRecord]:
        rows = await self._get("/alloc", {"project": project, "gid": gid, "active": active})
        return [_build(AllocationRecord, a) for a in rows]

    async def allocation(self, alloc_id: int) -> AllocationRecord:
        return _build(AllocationRecord, await self._get(f"/alloc/{alloc_id}"))

    async def job(self, job_id: str) -> JobRecord:
        return _build(JobRecord, await self._get(f"/job/{job_id}"))

    async def jobs(self, *, gid: int | None = None, uid: int | None = None,
                   status: str | None = None) -> list[JobRecord]:
        return [_build(JobRecord, j) for j in await self._get("/job", {"gid": gid, "uid": uid, "status": status})]

    async def failures(self, gid: int | None = None) -> list[FailureRecord]:
        return [_build(FailureRecord, f) for f in await self._get("/failure", {"gid": gid})]

    # -- writes (sent once) ---------------------------------------------------------------

    async def create_project(self, name: str, gid: int, account: str | None = None) -> ProjectRecord:
        return _build(ProjectRecord, await self._send("POST", "/project",
                                                      {"name": name, "gid": gid, "account": account or name}))

    async def create_allocation(self, project: int, resource: str, category: str, start: str,
                                end: str) -> AllocationRecord:
        body = {"project": project, "resource": resource, "category": category, "start": start, "end": end}
        return _build(AllocationRecord, await self._send("POST", "/alloc", body))

    async def credit(self, alloc_id: int, minutes: int) -> AllocationRecord:
        return _build(AllocationRecord, await self._send("POST", f"/alloc/{alloc_id}/credit", {"minutes": minutes}))

    async def predebit(self, job_id: str, uid: int, gid: int, resource: str, minutes: int) -> JobRecord:
        """Pre-debit a starting job. Raises :class:`ApiError` 402 (would overdraw), 404 (no
        allocation) or 409 (job id seen before with other values). If the answer is lost (the
        instance died, timed out or had no store), settles it by the job id (module docstring)."""
        body = {"job_id": job_id, "uid": uid, "gid": gid, "resource": resource, "minutes": minutes}
        try:
            resp = await self._request("POST", "/job", resend=False, json=body)
        except httpx.ConnectError as exc:  # no instance took the connection: nothing was sent
            raise ApiUnavailable(f"POST /job: {exc}") from exc
        except httpx.TransportError as exc:
            return await self._settle(body, exc)
        if resp.status_code in RETRY_STATUS:  # e.g. 503, its store did not answer: it may have landed
            return await self._settle(body, ApiError(resp.status_code, resp.reason_phrase))
        return _build(JobRecord, self._raise_for(resp))

    async def _settle(self, body: dict[str, Any], cause: Exception) -> JobRecord:
        """A pre-debit whose answer was lost: the landed record if it landed (with the same
        values), else the answer to sending it again, which lands at most once."""
        job_id = body["job_id"]
        if len(self._urls) > 1:
            self._next_instance()
        for attempt in range(self.max_retries + 1):
            try:
                rec = await self.job(job_id)
            except ApiUnavailable as exc:
                raise ApiUnavailable(f"pre-debit of job {job_id} not acknowledged ({type(cause).__name__}) "
                                     f"and no instance says whether it landed: check GET /job/{job_id}") from exc
            except ApiError as exc:
                if exc.status != 404:
                    raise
            else:
                if (rec.uid, rec.gid, rec.minutes) != (body["uid"], body["gid"], body["minutes"]):
                    raise ApiError(409, f"job {job_id} was pre-debited with other values") from cause
                return rec
            try:  # it did not land (yet): send it again
                resp = await self._request("POST", "/job", resend=False, json=body)
            except httpx.TransportError as exc:
                cause = exc
            else:
                if resp.status_code not in RETRY_STATUS and resp.status_code != 409:
                    return _build(JobRecord, self._raise_for(resp))
                cause = ApiError(resp.status_code, resp.reason_phrase)  # 409: it landed meanwhile
            if attempt < self.max_retries and not (isinstance(cause, ApiError) and cause.status == 409):
                await asyncio.sleep(self.retry_delay(attempt))
        raise ApiUnavailable(f"pre-debit of job {job_id} not acknowledged after {self.max_retries + 1} tries "
                             f"({type(cause).__name__}): check GET /job/{job_id}") from cause

    async def complete(self, job_id: str, state: str, minutes: int) -> JobRecord:
        """Debit a finished job (safe to repeat with the same values: the service answers the
        stored record)."""
        return _build(JobRecord, await self._send("PUT", f"/job/{job_id}", {"state": state, "minutes": minutes}))
