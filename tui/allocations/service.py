"""The allocation service: the ledger over HTTP (FastAPI, served by uvicorn).

The contract of issue 10 (amounts are integer resource-minutes)::

    POST /project              {"name", "gid", "account"}                       201 the project
    GET  /project[?gid=N]                                                       list
    GET  /project/{id}                                                          the project
    POST /alloc                {"project", "resource", "category", "start", "end"}  201; 409 overlap
    GET  /alloc[?project=&gid=&active=YYYY-MM-DD]                               list
    GET  /alloc/{id}                                                            the allocation and balance
    POST /alloc/{id}/credit    {"minutes": int} or {"su_hours": int}            201 the allocation
    POST /job                  {"job_id", "uid", "gid", "resource", "minutes"|"seconds"}
                               201 pre-debit; 402 overdraw; 404 no allocation; 409 job id seen
    PUT  /job/{job_id}         {"state", "minutes"|"seconds"}                   200 the job
    GET  /job[?gid=&uid=&status=], GET /job/{job_id}, GET /failure[?gid=]       lists / the job
    GET  /health                                                                no credential needed;
                               503 with ``error`` while the store refuses writes (its standby gone)

Roles: superusers create and change; admins read everything; standard users read only the
records of their own gids (another project's record answers 404, a filter on another gid 403).
Every refused request answers 4xx with a JSON ``error``; a bad body 422 with ``error`` and the
validator's ``detail``. A store that does not answer is 503.
"""


import functools
import json
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from tui.allocations.admission import DEFAULT_FLOOR, DEFAULT_WAIT_S, Admission, STORE_RETRY_AFTER_S
from tui.allocations.auth import AuthError, MungeAuth, Principal, TokenAuth, load_tokens
from tui.allocations.group_commit import GroupCommit
from tui.allocations.ledger import (
    MAX_MINUTES,
    Invalid,
    Ledger,
    LedgerError,
    minutes_from_seconds,
    open_ledger,
    schema_sections,
)
from tui.allocations.predebit_route import PredebitRoute, validation_error
from tui.allocations.records import (
    AllocationRecord,
    FailureRecord,
    JobRecord,
    ProjectRecord,
)

__all__ = ["create_app", "serve", "ServeOptions", "app_from_env"]

log = logging.getLogger("fairtop.allocations")

Name = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:+ -]+$")]
JobId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:+-]+$")]
DateText = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
Id = Annotated[int, Field(ge=1, le=2**53)]
UnixId = Annotated[int, Field(ge=0, le=2**32 - 1)]
Minutes = Annotated[int, Field(ge=0, le=MAX_MINUTES)]
Seconds = Annotated[int, Field(ge=0, le=MAX_MINUTES * 60)]
Resource = Literal["cpu", "gpu"]
State = Literal["completed", "failed", "node_fail", "cancelled"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ProjectIn(_Body):
    name: Name
    gid: UnixId
    account: Name


class AllocIn(_Body):
    project: Id
    resource: Resource
    category: Text
    start: DateText
    end: DateText

    @model_validator(mode="after")
    def _dates(self) -> "AllocIn":
        for name in ("start", "end"):
            try:
                date.fromisoformat(getattr(self, name))
            except ValueError:
                raise ValueError(f"{name} is not a date: {getattr(self, name)!r}") from None
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        return self


class CreditIn(_Body):
    minutes: Annotated[int, Field(ge=1, le=MAX_MINUTES)] | None = None
    su_hours: Annotated[int, Field(ge=1, le=MAX_MINUTES // 60)] | None = None

    @model_validator(mode="after")
    def _one(self) -> "CreditIn":
        if (self.minutes is None) == (self.su_hours is None):
            raise ValueError("give exactly one of 'minutes' and 'su_hours'")
        return self

    def total(self) -> int:
        return self.minutes if self.minutes is not None else (self.su_hours or 0) * 60


def _one_amount(minutes: int | None, seconds: int | None) -> int:
    if (minutes is None) == (seconds is None):
        raise ValueError("give exactly one of 'minutes' and 'seconds'")
    return minutes if minutes is not None else minutes_from_seconds(seconds or 0)


class JobIn(_Body):
    job_id: JobId
    uid: UnixId
    gid: UnixId
    resource: Resource
    minutes: Minutes | None = None
    seconds: Seconds | None = None

    @model_validator(mode="after")
    def _amount(self) -> "JobIn":
        _one_amount(self.minutes, self.seconds)
        return self


class JobEnd(_Body):
    state: State
    minutes: Minutes | None = None
    seconds: Seconds | None = None

    @model_validator(mode="after")
    def _amount(self) -> "JobEnd":
        _one_amount(self.minutes, self.seconds)
        return self


class Error(BaseModel):
    error: str
    detail: Any = None


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Error} for code in (400, 401, 402, 403, 404, 409, 422, 503)
}


class _Denied(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message


def _error(status: int, message: str, /, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 503:  # the store did not answer
        headers = {"Retry-After": str(STORE_RETRY_AFTER_S)}
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def create_app(ledger: Ledger, auth: TokenAuth | MungeAuth, threads: int = 16,
               admit_floor: int = DEFAULT_FLOOR, admit_wait_s: float = DEFAULT_WAIT_S) -> Admission:
    """The service's ASGI app over ``ledger`` with ``auth``: FastAPI behind the lean ``POST /job``
    (:mod:`tui.allocations.predebit_route`), behind the overload bound
    (:mod:`tui.allocations.admission`); ``.app.app`` is the FastAPI app."""
    app = FastAPI(title="fairtop allocations", version=str(schema_sections()[-1][0]),
                  description=__doc__.split("\n\n")[0], responses=_ERRORS)

    @app.exception_handler(LedgerError)
    async def _ledger_error(request: Request, exc: LedgerError) -> JSONResponse:
        return _error(exc.status, exc.message, **exc.extra)

    @app.exception_handler(_Denied)
    async def _denied(request: Request, exc: _Denied) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(AuthError)
    async def _unauthorized(request: Request, exc: AuthError) -> JSONResponse:
        return _error(401, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, detail = validation_error(list(exc.errors()))
        return _error(422, message, detail=detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:  # pragma: no cover - a bug
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return _error(500, f"internal error: {type(exc).__name__}")

    limiter = anyio.CapacityLimiter(threads)
    group = GroupCommit(ledger)  # pre-debits: one commit for those that arrive together

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One hop to a worker thread per request (the ledger blocks on its store)."""
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=limiter)

    async def principal(authorization: Annotated[str | None, Header()] = None,
                        x_munge_cred: Annotated[str | None, Header()] = None) -> Principal:
        if isinstance(auth, TokenAuth):  # a dict lookup: no thread needed
            return auth.authenticate(authorization, x_munge_cred)
        return await call(auth.authenticate, authorization, x_munge_cred)

    Who = Annotated[Principal, Depends(principal)]

    async def superuser(who: Who) -> Principal:
        if who.role != "superuser":
            raise _Denied(403, f"uid {who.uid} ({who.role}) may not change the ledger")
        return who

    Super = Annotated[Principal, Depends(superuser)]

    def own_gid(who: Principal, gid: int | None) -> None:
        if gid is not None and not who.sees_all and gid not in who.gids:
            raise _Denied(403, f"uid {who.uid} is not in gid {gid}")

    @app.get("/health", responses={503: {"model": Error}})
    async def health() -> Any:
        """200 while the ledger takes writes; 503 with ``error`` saying why while it refuses them
        (PostgreSQL's commits wait for a synchronous standby that is gone)."""
        state = {"status": "ok", "schema": await call(ledger.schema_version), "store": ledger.dialect}
        refused = await call(ledger.writes_refused)
        if refused:
            return _error(503, refused, **{**state, "status": "writes refused"})
        return state

    @app.post("/project", status_code=201, response_model=ProjectRecord)
    async def create_project(body: ProjectIn, who: Super) -> dict[str, Any]:
        return await call(ledger.create_project, body.name, body.gid, body.account)

    @app.get("/project", response_model=list[ProjectRecord])
    async def list_projects(who: Who, gid: Annotated[UnixId | None, Query()] = None) -> list[dict[str, Any]]:
        own_gid(who, gid)
        return await call(ledger.projects, who.visible_gids, gid=gid)

    @app.get("/project/{project_id}", response_model=ProjectRecord)
    async def get_project(project_id: Annotated[Id, Path()], who: Who) -> dict[str, Any]:
        return await call(ledger.project, project_id, who.visible_gids)

    @app.post("/alloc", status_code=201, response_model=AllocationRecord)
    async def create_alloc(body: AllocIn, who: Super) -> dict[str, Any]:
        return await call(ledger.create_allocation, body.project, body.resource, body.category, body.start, body.end)

    @app.get("/alloc", response_model=list[AllocationRecord])
    async def list_allocs(who: Who, project: Annotated[Id | None, Query()] = None,
                    gid: Annotated[UnixId | None, Query()] = None,
                    active: Annotated[DateText | None, Query()] = None) -> list[dict[str, Any]]:
        own_gid(who, gid)
        if active is not None:
            try:
                date.fromisoformat(active)
            except ValueError:
                raise Invalid(f"active is not a date: {active!r}") from None
        return await call(ledger.allocations, who.visible_gids, project=project, gid=gid, active_on=active)

    @app.get("/alloc/{alloc_id}", response_model=AllocationRecord)
    async def get_alloc(alloc_id: Annotated[Id, Path()], who: Who) -> dict[str, Any]:
        return await call(ledger.allocation, alloc_id, who.visible_gids)

    @app.post("/alloc/{alloc_id}/credit", status_code=201, response_model=AllocationRecord)
    async def credit(alloc_id: Annotated[Id, Path()], body: CreditIn, who: Super) -> dict[str, Any]:
        return await call(ledger.credit, alloc_id, body.total())

    async def run_predebit(body: JobIn) -> dict[str, Any]:
        minutes = _one_amount(body.minutes, body.seconds)
        return await group.predebit(body.job_id, body.uid, body.gid, body.resource, minutes)

    @app.post("/job", status_code=201, response_model=JobRecord)
    async def predebit(body: JobIn, who: Super) -> dict[str, Any]:
        """Answered by :class:`PredebitRoute` in front of FastAPI; declared here for the OpenAPI
        description (and for an app mounted without the route)."""
        return await run_predebit(body)

    @app.put("/job/{job_id}", response_model=JobRecord)
    async def complete(job_id: Annotated[JobId, Path()], body: JobEnd, who: Super) -> dict[str, Any]:
        return await call(ledger.complete, job_id, body.state, _one_amount(body.minutes, body.seconds))

    @app.get("/job", response_model=list[JobRecord])
    async def list_jobs(who: Who, gid: Annotated[UnixId | None, Query()] = None,
                  uid: Annotated[UnixId | None, Query()] = None,
                  status: Annotated[Literal["executing", "completed", "failed", "node_fail", "cancelled"] | None,
                                    Query()] = None) -> list[dict[str, Any]]:
        own_gid(who, gid)
        return await call(ledger.jobs, who.visible_gids, gid=gid, uid=uid, status=status)

    @app.get("/job/{job_id}", response_model=JobRecord)
    async def get_job(job_id: Annotated[JobId, Path()], who: Who) -> dict[str, Any]:
        return await call(ledger.job, job_id, who.visible_gids)

    @app.get("/failure", response_model=list[FailureRecord])
    async def list_failures(who: Who, gid: Annotated[UnixId | None, Query()] = None) -> list[dict[str, Any]]:
        own_gid(who, gid)
        return await call(ledger.failures, who.visible_gids, gid=gid)

    return Admission(PredebitRoute(app, JobIn, principal, run_predebit), floor=admit_floor, wait_s=admit_wait_s)


@dataclass(frozen=True)
class ServeOptions:
    """What ``fairtop serve-allocations`` was told (JSON-able: worker processes rebuild from it)."""

    db: str
    auth: str = "munge"
    tokens: str | None = None
    superusers: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()
    munge_socket: str | None = None
    pool: int = 8
    tls_cert: str | None = None
    """Serve HTTPS with this certificate and ``tls_key`` (checked by the CLI before)."""
    tls_key: str | None = None
    admit_floor: int = DEFAULT_FLOOR
    """The most requests in progress never refused for being late (:mod:`tui.allocations.admission`)."""
    admit_wait_s: float = DEFAULT_WAIT_S
    """Overloaded, let in only what the measured rate answers in this long (0: ``admit_floor`` alone)."""

    def build_auth(self) -> TokenAuth | MungeAuth:
        """Raises ``ValueError`` with a readable message on a bad tokens file or user."""
        if self.auth == "token":
            if not self.tokens:
                raise ValueError("--auth token needs --tokens FILE")
            return TokenAuth(load_tokens(self.tokens))
        return MungeAuth(self.superusers, self.admins, socket=self.munge_socket)


_ENV = "FAIRTOP_ALLOC_SERVE"


def app_from_env() -> Admission:
    """The app of one worker process (``--workers N``), from the options in ``$FAIRTOP_ALLOC_SERVE``."""
    data = json.loads(os.environ[_ENV])
    opts = ServeOptions(**{**data, "superusers": tuple(data["superusers"]), "admins": tuple(data["admins"])})
    return create_app(open_ledger(opts.db, pool_size=opts.pool), opts.build_auth(), admit_floor=opts.admit_floor,
                      admit_wait_s=opts.admit_wait_s)


def serve(opts: ServeOptions, host: str, port: int, *, workers: int = 1, log_level: str = "warning",
          ready: Callable[[int, str], None] | None = None) -> None:
    """Run the service until interrupted. One process by default (the ledger's calls run in its
    thread pool); ``workers`` > 1 starts that many uvicorn worker processes on one socket (for
    PostgreSQL; SQLite allows one writer at a time anyway). ``ready`` is called with the bound
    port and the store's dialect once listening."""
    import socket

    import uvicorn

    from tui.security.tls import clear_text_warning

    ledger = open_ledger(opts.db, pool_size=opts.pool)
    auth = opts.build_auth()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    if not opts.tls_cert:
        what = "bearer tokens" if opts.auth == "token" else "MUNGE credentials"
        clear_text_warning("serve-allocations", host, sock.getsockname()[1], f"{what} and the ledger's records")
    tls: dict[str, Any] = {"ssl_certfile": opts.tls_cert, "ssl_keyfile": opts.tls_key} if opts.tls_cert else {}
    if ready is not None:
        ready(sock.getsockname()[1], ledger.dialect)
    if workers > 1:
        ledger.close()
        os.environ[_ENV] = json.dumps(asdict(opts))
        config = uvicorn.Config("tui.allocations.service:app_from_env", factory=True, workers=workers,
                                log_level=log_level, access_log=False, timeout_graceful_shutdown=5, fd=sock.fileno(),
                                **tls)
        from uvicorn.supervisors import Multiprocess

        try:
            Multiprocess(config, sockets=[sock]).run()
        except KeyboardInterrupt:
            pass
        return
    app = create_app(ledger, auth, admit_floor=opts.admit_floor, admit_wait_s=opts.admit_wait_s)
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False,
                                           timeout_graceful_shutdown=5, fd=sock.fileno(), **tls))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
