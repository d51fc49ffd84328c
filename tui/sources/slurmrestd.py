"""Live Slurm over slurmrestd: associations, shares and partitions as a :class:`~tui.model.Snapshot`.

One synchronous :class:`httpx.Client` per source (the app calls sources from thread workers, as it
does :mod:`tui.sources.slurm_cli`). It talks to slurmrestd over a unix socket (``rest_auth/local``:
the caller's own uid) or to a URL with a JWT (``X-SLURM-USER-NAME`` / ``X-SLURM-USER-TOKEN``; the
token from the argument or ``$SLURM_JWT``).

What the real Slurm 22.05.8 slurmrestd offers (sandbox, probed with GET only)
-----------------------------------------------------------------------------
- ``/openapi`` and ``/openapi/v3`` return the same 514 kB OpenAPI 3.0.3 document (it also lists
  ``/openapi.json`` and ``/openapi.yaml``). Its paths offer plugin versions **v0.0.36, v0.0.37 and
  v0.0.38** for both ``slurm/`` and ``slurmdb/``; every v0.0.36 operation is marked deprecated.
  fairtop picks v0.0.38 for both.
- ``slurmdb/v0.0.38/associations``: account, user (null for account rows), parent_account (set
  on account rows only, null on the root and on user rows), partition, cluster, flags,
  ``shares_raw``. The ``parent`` fairshare is ``shares_raw = 2147483647`` (= ``USE_PARENT``,
  ``SLURMDB_FS_USE_PARENT``), and the root association's ``shares_raw`` is 1, where sshare prints
  nothing (``NO_VAL`` in fairtop). **No** ``lft``/``rgt``, so no ``sibling_order``.
- Raw usage and fairshare are **not available**: the schema declares a ``usage`` object
  (``raw_usage``, ``fairshare_factor``, ``fairshare_level``, ...) but slurmdbd fills none of it;
  every association has ``"usage": null`` (all ten committed captures, including those with
  usage, and the live server). There is no ``slurm/v0.0.3x/shares`` endpoint (GET gives 404) and no
  slurmctld config endpoint. Usage is therefore set to 0 with a snapshot warning; a
  server that does send ``usage.raw_usage``, or offers ``slurm/vX/shares`` (23.11's v0.0.40), gets
  real usage.
- ``slurmdb/v0.0.38/config`` is slurmdbd's dump (clusters, TRES, accounts, users, QOS, wckeys,
  associations), not slurm.conf: no PriorityFlags, weights or decay. Priority settings are not
  offered at all, so the defaults of :class:`~tui.model.PrioritySettings` are used, with a warning.
- ``slurm/v0.0.38/partitions``: ``billing_weights`` is the TRESBillingWeights string
  (``"CPU=1000000"``, ``""`` when unset), ``tres`` the TRES string, plus ``total_cpus``,
  ``total_nodes``, ``priority_job_factor``.
- ``slurm/v0.0.38/jobs``: slurmctld's job list (finished jobs too, until MinJobAge): ``job_state``,
  ``user_name``, ``account``, ``partition``, ``priority`` (what ``squeue %Q`` and sprio's PRIORITY
  print), ``tres_req_str``/``tres_alloc_str``, ``time_limit`` in minutes, epoch times. No weighted
  priority parts (no sprio endpoint), so pending jobs carry their total only.
- Errors: an unknown path gives 404 with a plain-text body; a query that finds nothing
  (``associations?cluster=nosuch``) gives **HTTP 500** with ``errors: [{"error": "Nothing found
  with query", "error_number": 9003, "description": ..., "source": ...}]``. Such a Slurm-level 500
  is not retried (it would answer the same); a 500 without a Slurm error body, 502-504, 408 and 429
  are.

The tree is built in sshare's order (children of an account: users first, then sub-accounts, each
sorted by name with strcmp, then by partition), so it equals ``parse_sshare`` of ``sshare -a -l -P``
row for row.
"""

from __future__ import annotations

import getpass
import json
import math
import os
import pwd
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

import httpx
import numpy as np

from tui.security.file_modes import SecretFileError, read_secret
from tui.model import (
    MAX_SHARES,
    NO_VAL,
    UNLIMITED,
    USE_PARENT,
    AssocTree,
    Job,
    ModelError,
    Partition,
    PrioritySettings,
    Snapshot,
)
from tui.slurm_releases import SlurmRelease, release
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.slurm_text import parse_tres_counts
from tui.sources.slurm_units import parse_tres_billing_weights
from tui.security.tls import TlsConfigError, client_context, failure

__all__ = [
    "SUPPORTED_VERSIONS",
    "DEFAULT_TIMEOUT",
    "ApiUnavailable",
    "ApiError",
    "ApiVersions",
    "RestTree",
    "RestClient",
    "pick_versions",
    "tree_from_associations",
    "partitions_from_json",
    "jobs_from_json",
    "usage_from_shares",
    "live_snapshot",
    "read",
    "RestRead",
    "LiveRest",
    "attach_jobs",
    "JOB_STATES",
]

#: Plugin versions whose association/partition/shares shapes fairtop reads (newest wins).
SUPPORTED_VERSIONS = ("v0.0.36", "v0.0.37", "v0.0.38", "v0.0.39", "v0.0.40", "v0.0.41", "v0.0.42", "v0.0.43",
                      "v0.0.44", "v0.0.45")
#: A whole site's associations can be tens of MB of JSON from slurmdbd: a generous read timeout,
#: a short connect one (a dead socket should fail fast).
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=3.0)
DEFAULT_RETRIES = 2
_MAX_BACKOFF = 8.0
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_PATH = re.compile(r"^/(slurmdb|slurm)/(v[0-9]+\.[0-9]+\.[0-9]+)/([a-z_]+)/?$")


class ApiUnavailable(SourceUnavailable):
    """slurmrestd did not answer: no socket, refused, timed out."""


class ApiError(SourceUnavailable):
    """slurmrestd answered with an HTTP error status.

    Attributes
    ----------
    status : int
        The HTTP status.
    detail : str
        The server's ``errors[].error`` texts (or the start of a non-JSON body).
    """

    def __init__(self, endpoint: str, status: int, detail: str) -> None:
        self.endpoint = endpoint
        self.status = status
        self.detail = detail
        super().__init__(f"slurmrestd {endpoint}: HTTP {status}" + (f": {detail}" if detail else ""))


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v[1:].split("."))


def _errors_text(doc: Any) -> str:
    """The ``errors[]`` of a Slurm response as one line ("" if none)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("errors"), list):
        return ""
    parts = []
    for err in doc["errors"]:
        if isinstance(err, Mapping):
            text = str(err.get("error") or "")
            desc = str(err.get("description") or "")
            # 22.05 puts the same idea in both ("Nothing found" / "Nothing found with query")
            parts.append(text if not desc or desc in text else f"{text} ({desc})" if text else desc)
        elif isinstance(err, str):
            parts.append(err)
    return "; ".join(p for p in parts if p)


class RestClient:
    """A GET-only slurmrestd client with bounded retries.

    Parameters
    ----------
    socket : str, optional
        Path of slurmrestd's unix socket (``rest_auth/local``). Exclusive with ``url``.
    url : str, optional
        Base URL of slurmrestd (``rest_auth/jwt``), e.g. ``http://head:6820``.
    token : str, optional
        JWT for ``url``; default ``$SLURM_JWT``.
    user : str, optional
        ``X-SLURM-USER-NAME`` for ``url``; default the login name, ``""`` to omit the header.
    timeout : httpx.Timeout
        Per request.
    retries : int
        Extra attempts after a connect error or a transient HTTP status (GET is idempotent).
    transport : httpx.BaseTransport, optional
        Replaces the network (tests pass :class:`httpx.MockTransport`).
    sleep : callable
        Waits between attempts (tests pass a no-op).
    ca_file : str, optional
        The CAs (PEM) an ``https://`` URL is verified against; None: the system's CAs
        (:func:`tui.security.tls.client_context`, as fairtop's other clients; never certifi's bundle).
    """

    def __init__(self, socket: str | None = None, url: str | None = None, *, token: str | None = None,
                 user: str | None = None, timeout: httpx.Timeout = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, ca_file: str | None = None) -> None:
        if (socket is None) == (url is None):
            raise ValueError("give exactly one of socket= or url=")
        headers = {"Accept": "application/json"}
        if socket is not None:
            self.where = f"unix socket {socket}"
            base = "http://localhost"
            if transport is None:
                if not os.path.exists(socket):
                    raise ApiUnavailable(f"slurmrestd: no socket at {socket} (is slurmrestd running?)")
                transport = httpx.HTTPTransport(uds=socket)
        else:
            assert url is not None
            self.where = url
            base = url.rstrip("/")
            token = token if token is not None else (os.environ.get("SLURM_JWT") or _token_file())
            if not token:
                raise ApiUnavailable(f"slurmrestd {url}: no JWT (set SLURM_JWT, e.g. from 'scontrol token', or "
                                     f"{TOKEN_FILE_VAR} to a file holding one)")
            user = getpass.getuser() if user is None else user
            headers["X-SLURM-USER-TOKEN"] = token
            if user:
                headers["X-SLURM-USER-NAME"] = user
        self.retries = max(0, retries)
        self._sleep = sleep
        self._ca_file = ca_file
        try:
            verify = client_context(ca_file)
        except TlsConfigError as exc:
            raise ApiUnavailable(f"slurmrestd {self.where}: {exc}") from None
        self._client = httpx.Client(base_url=base, headers=headers, timeout=timeout, transport=transport,
                                    verify=verify, follow_redirects=False)

    def __enter__(self) -> RestClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def _backoff(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds before the next attempt: Retry-After if given (capped), else 0.5 s * 2**n +-25 %."""
        if response is not None:
            after = response.headers.get("Retry-After", "")
            try:
                return min(max(float(after), 0.0), _MAX_BACKOFF)
            except ValueError:
                pass
        return min(0.5 * 2**attempt, _MAX_BACKOFF) * (1 - 0.25 * random.random())

    def get_json(self, path: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """GET ``path`` and return the JSON object.

        Raises
        ------
        ApiUnavailable
            Connection refused, socket gone, timeout (after the retries).
        ApiError
            An HTTP status >= 400 (after the retries for transient ones).
        InputError
            A 2xx body that is not a JSON object.
        """
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._client.get(path, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                refused = failure(exc, self._ca_file)
                if refused:  # a certificate refused is a mistake or an attack: not retried
                    raise ApiUnavailable(f"slurmrestd {self.where}: {refused}") from None
                if attempt < self.retries:
                    self._sleep(self._backoff(attempt, None))
                    attempt += 1
                    continue
                raise ApiUnavailable(f"slurmrestd {path}: cannot connect to {self.where}: {exc}") from None
            except httpx.TimeoutException:
                # a read timeout means slurmrestd (or slurmdbd behind it) is busy: asking again
                # would only double the wait
                raise ApiUnavailable(f"slurmrestd {path}: no answer from {self.where} (timed out)") from None
            except httpx.HTTPError as exc:
                raise ApiUnavailable(f"slurmrestd {path}: {type(exc).__name__}: {exc}") from None
            status = response.status_code
            if status >= 400:
                doc = _maybe_json(response)
                detail = _errors_text(doc) or _body_start(response)
                # a 500 carrying Slurm errors ("Nothing found with query") is an answer, not a glitch
                slurm_answer = status == 500 and bool(_errors_text(doc))
                if status in _RETRY_STATUS and not slurm_answer and attempt < self.retries:
                    self._sleep(self._backoff(attempt, response))
                    attempt += 1
                    continue
                raise ApiError(path, status, detail)
            try:
                doc = json.loads(response.content)
            except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
                raise InputError(f"slurmrestd {path}", f"not JSON: {exc}") from None
            if not isinstance(doc, dict):
                raise InputError(f"slurmrestd {path}", f"expected a JSON object, got {type(doc).__name__}")
            return doc


#: A file holding the JWT (what ``scontrol token`` prints, with or without ``SLURM_JWT=``), for
#: a site that keeps tokens out of the environment; read only when ``$SLURM_JWT`` is unset.
TOKEN_FILE_VAR = "FAIRTOP_SLURM_JWT_FILE"


def _token_file() -> str:
    """The JWT of the file ``$FAIRTOP_SLURM_JWT_FILE`` names ("" when none is named); an error
    names the file, never its content. A file its group or others may read is refused."""
    path = os.environ.get(TOKEN_FILE_VAR, "")
    if not path:
        return ""
    try:
        text = read_secret(path, "token file")
    except SecretFileError as exc:
        raise ApiUnavailable(f"{TOKEN_FILE_VAR}: {exc}") from None
    return text.removeprefix("SLURM_JWT=").strip()


def _maybe_json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _body_start(response: httpx.Response) -> str:
    text = response.content[:200].decode("utf-8", "replace").strip()
    return " ".join(text.split())


@dataclass(frozen=True)
class ApiVersions:
    """Paths chosen from the server's OpenAPI document (``None``: not offered in a known version)."""

    associations: str
    partitions: str | None
    shares: str | None
    offered: tuple[str, ...]
    """Every ``slurm/vX`` and ``slurmdb/vX`` the server lists, e.g. ``("slurm/v0.0.38", ...)``."""
    jobs: str | None = None
    """slurmctld's job list (``slurm/vX/jobs``), where the pending jobs come from."""

    @property
    def slurmdb(self) -> str:
        return self.associations.split("/")[2]

    @property
    def slurm(self) -> str | None:
        return None if self.partitions is None else self.partitions.split("/")[2]


def pick_versions(openapi: Mapping[str, Any], source: str = "slurmrestd /openapi") -> ApiVersions:
    """Choose the newest understood ``slurmdb/vX/associations``, ``slurm/vX/partitions``, ``slurm/vX/shares``
    and ``slurm/vX/jobs``.

    Parameters
    ----------
    openapi : mapping
        The server's OpenAPI document (only ``paths`` is read).
    source : str
        Name for errors.

    Raises
    ------
    InputError
        No ``paths`` object.
    SourceUnavailable
        No associations endpoint in a version fairtop understands; the message lists what the
        server offers.
    """
    paths = openapi.get("paths")
    if not isinstance(paths, Mapping):
        raise InputError(source, "no 'paths' object: not an OpenAPI document")
    found: dict[tuple[str, str], dict[str, str]] = {}  # (plugin, endpoint) -> version -> path
    offered: set[str] = set()
    for path in paths:
        m = _PATH.match(str(path))
        if not m:
            continue
        plugin, version, endpoint = m.groups()
        offered.add(f"{plugin}/{version}")
        if version in SUPPORTED_VERSIONS:
            found.setdefault((plugin, endpoint), {})[version] = str(path)

    def newest(plugin: str, endpoint: str) -> str | None:
        versions = found.get((plugin, endpoint), {})
        return versions[max(versions, key=_version_key)] if versions else None

    ordered = tuple(sorted(offered, key=lambda s: (s.split("/")[0], _version_key(s.split("/")[1]))))
    assoc = newest("slurmdb", "associations")
    if assoc is None:
        raise SourceUnavailable(
            "slurmrestd offers no slurmdb associations endpoint fairtop understands "
            f"({', '.join(SUPPORTED_VERSIONS)}); it offers: {', '.join(ordered) or 'no slurm/slurmdb versions'}")
    return ApiVersions(assoc, newest("slurm", "partitions"), newest("slurm", "shares"), ordered,
                       newest("slurm", "jobs"))


# --------------------------------------------------------------------------------------------
# JSON -> model
# --------------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A JSON number, or v0.0.39+'s ``{"set": true, "infinite": false, "number": n}``; else None."""
    if isinstance(value, Mapping):
        if value.get("set") is False or value.get("infinite") is True:
            return None
        value = value.get("number")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # Python's json accepts NaN/Infinity; Slurm never sends them
    return value


def _text(rec: Mapping[str, Any], key: str, source: str, what: str) -> str:
    value = rec.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(source, f"{what}: '{key}' is {type(value).__name__}, expected a string")
    return value


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _shares(rec: Mapping[str, Any], source: str, what: str) -> int:
    raw = rec.get("shares_raw", rec.get("shares"))
    if raw == "parent":
        return USE_PARENT
    value = _number(raw)
    if value is None or value != int(value) or not 0 <= value <= MAX_SHARES:
        raise InputError(source, f"{what}: shares_raw {raw!r} is not a whole number of shares")
    return int(value)


@dataclass
class _Assoc:
    account: str
    user: str
    partition: str
    parent: str
    shares: int
    usage: float | None
    """Raw usage as sent (an int stays exact up to uint64 on the way to long double)."""
    lft: int | None


def _records(assocs: Any, source: str, cluster: str | None) -> tuple[list[_Assoc], str, list[str]]:
    """Validated association records of one cluster (the only one, or ``cluster``)."""
    if not isinstance(assocs, list):
        raise InputError(source, "'associations' is missing or not a list")
    clusters: dict[str, list[Mapping[str, Any]]] = {}
    for k, rec in enumerate(assocs):
        if not isinstance(rec, Mapping):
            raise InputError(source, f"association #{k} is {type(rec).__name__}, expected an object")
        flags = rec.get("flags")
        if isinstance(flags, list) and "DELETED" in flags:
            continue
        clusters.setdefault(_text(rec, "cluster", source, f"association #{k}"), []).append(rec)
    warnings: list[str] = []
    if cluster is None:
        if not clusters:
            raise InputError(source, "no associations")
        cluster = sorted(clusters)[0]
        if len(clusters) > 1:
            warnings.append(f"{source}: associations of clusters {', '.join(sorted(clusters))}; showing {cluster}")
    elif cluster not in clusters:
        raise InputError(source, f"no associations of cluster {cluster!r} (found: {', '.join(sorted(clusters))})")
    out = []
    for rec in clusters[cluster]:
        account = _text(rec, "account", source, "association")
        user = _text(rec, "user", source, f"association of {account!r}")
        what = f"association {account}/{user}" if user else f"account {account!r}"
        if not account:
            raise InputError(source, f"{what}: empty account")
        usage = _number(_dig(rec, "usage", "raw_usage"))
        lft = _number(rec.get("lft"))
        out.append(_Assoc(account, user, _text(rec, "partition", source, what),
                          _text(rec, "parent_account", source, what), _shares(rec, source, what),
                          None if usage is None or usage < 0 else usage,
                          int(lft) if lft is not None and lft == int(lft) and 0 <= lft < 2**63 else None))
    return out, cluster, warnings


def _sort_key(rec: _Assoc) -> tuple[int, bytes, bytes]:
    # sshare's sort_assoc_dec: users before accounts, then strcmp on the name, then the partition
    return (0 if rec.user else 1, (rec.user or rec.account).encode(), rec.partition.encode())


@dataclass(frozen=True, eq=False)
class RestTree:
    """The tree built from ``associations[]`` and what came with it."""

    tree: AssocTree
    """Raw usage from ``usage.raw_usage`` if every association carries it, else zeros;
    ``sibling_order`` from ``lft`` if every association carries it, else None."""
    cluster: str
    """The cluster shown."""
    partitions: list[str]
    """Partition of each row ("" for none)."""
    usage_known: bool
    """Whether every association carried ``usage.raw_usage``."""
    warnings: list[str]
    """Clusters not shown."""


def tree_from_associations(assocs: Any, source: str = "slurmrestd associations",
                           cluster: str | None = None) -> RestTree:
    """Build the association tree in sshare's pre-order from ``associations[]`` JSON.

    Parameters
    ----------
    assocs : list of dict
        The ``associations`` array of ``slurmdb/vX/associations`` (v0.0.36-v0.0.40).
    source : str
        Name for errors (the endpoint).
    cluster : str, optional
        Which cluster's associations; default the only one (else the first by name, with a warning).

    Returns
    -------
    RestTree

    Raises
    ------
    InputError
        A record of the wrong shape, no root, a duplicate, an account whose parent has no
        association, or a cycle.
    """
    records, cluster, warnings = _records(assocs, source, cluster)
    accounts: dict[str, _Assoc] = {}
    children: dict[str, list[_Assoc]] = {}
    seen: set[tuple[str, str, str]] = set()
    root: _Assoc | None = None
    for rec in records:
        key = (rec.account, rec.user, rec.partition)
        if key in seen:
            raise InputError(source, f"association {rec.account}/{rec.user} listed twice")
        seen.add(key)
        if rec.user:
            children.setdefault(rec.account, []).append(rec)
        elif rec.account == "root" and not rec.parent:
            root = rec
        else:
            if not rec.parent:
                raise InputError(source, f"account {rec.account!r} has no parent_account")
            accounts[rec.account] = rec
            children.setdefault(rec.parent, []).append(rec)
    if root is None:
        raise InputError(source, f"no root association for cluster {cluster!r}")
    accounts["root"] = root
    for name in children:
        if name not in accounts:
            kid = children[name][0]
            raise InputError(source, f"{'user ' + kid.user if kid.user else 'account ' + repr(kid.account)} "
                                     f"is under account {name!r}, which has no association")

    rows: list[_Assoc] = []
    parent: list[int] = []
    stack: list[tuple[_Assoc, int]] = [(root, -1)]
    while stack:  # iterative: a deep tree must not hit the recursion limit
        rec, up = stack.pop()
        row = len(rows)
        rows.append(rec)
        parent.append(up)
        if not rec.user:
            kids = sorted(children.get(rec.account, ()), key=_sort_key)
            stack.extend((kid, row) for kid in reversed(kids))
    if len(rows) != len(records):
        lost = sorted(r.account for r in records if not r.user and r not in rows)
        raise InputError(source, f"accounts not reachable from root (a parent cycle?): {', '.join(lost)}")

    usage_known = all(r.usage is not None for r in rows)
    lft_known = all(r.lft is not None for r in rows)
    shares = [r.shares for r in rows]
    shares[0] = NO_VAL  # sshare prints no RawShares for root; slurmdbd stores 1
    try:
        tree = AssocTree(
            parent=np.asarray(parent, dtype=np.int64),
            is_user=np.asarray([bool(r.user) for r in rows], dtype=bool),
            account=np.asarray([r.account for r in rows], dtype=object),
            user=np.asarray([r.user for r in rows], dtype=object),
            shares_raw=np.asarray(shares, dtype=np.int64),
            usage_raw=np.asarray([r.usage or 0.0 for r in rows] if usage_known else np.zeros(len(rows)),
                                 dtype=np.longdouble),
            sibling_order=np.asarray([r.lft for r in rows], dtype=np.int64) if lft_known else None,
        )
    except ModelError as exc:
        raise InputError(source, str(exc)) from None
    return RestTree(tree, cluster, [r.partition for r in rows], usage_known, warnings)


def usage_from_shares(doc: Mapping[str, Any], tree: AssocTree, partitions: list[str] | None = None,
                      source: str = "slurmrestd shares") -> tuple[np.ndarray, list[str]]:
    """Raw usage per tree row from ``slurm/vX/shares`` (v0.0.40+: ``shares.shares[]``).

    Entries of type ``USER`` are keyed (parent account, user), ``ASSOCIATION`` entries (account).

    Returns
    -------
    usage : longdouble array
        Raw usage per row (0 for rows the response lacks).
    warnings : list of str
        Rows without an entry.

    Raises
    ------
    InputError
        No ``shares`` list or entries of the wrong shape.
    """
    entries = doc.get("shares")
    if isinstance(entries, Mapping):
        entries = entries.get("shares")
    if not isinstance(entries, list):
        raise InputError(source, "no 'shares' list")
    by_key: dict[tuple[str, str, str], float] = {}
    for k, e in enumerate(entries):
        if not isinstance(e, Mapping):
            raise InputError(source, f"shares entry #{k} is not an object")
        name = _text(e, "name", source, f"shares entry #{k}")
        parent = _text(e, "parent", source, f"shares entry #{k}")
        part = _text(e, "partition", source, f"shares entry #{k}")
        kind = e.get("type")
        is_user = ("USER" in kind) if isinstance(kind, list) else kind == "USER"
        value = _number(e.get("usage"))
        if value is None or value < 0:
            raise InputError(source, f"shares entry {name!r}: usage {e.get('usage')!r} is not a number >= 0")
        # v0.0.40+ also send the billing TRES usage with 6 decimals; it is the same usage where the
        # integer (sshare's truncated RawUsage) agrees with it: take the finer one
        billing = next((_number(t.get("value")) for t in (_dig(e, "tres", "usage") or [])
                        if isinstance(t, Mapping) and t.get("name") == "billing"), None)
        if billing is not None and int(billing) == int(value):
            value = billing
        by_key[(parent, name, part) if is_user else (name, "", part)] = value
    parts = partitions or [""] * tree.size
    usage = np.zeros(tree.size, dtype=np.longdouble)
    missing = []
    for i in range(tree.size):
        key = (str(tree.account[i]), str(tree.user[i]), parts[i])
        if key in by_key:
            usage[i] = by_key[key]
        else:
            missing.append(tree.label(i))
    warnings = [f"{source}: no usage for {len(missing)} associations ({', '.join(missing[:5])}"
                f"{', ...' if len(missing) > 5 else ''}); counted as 0"] if missing else []
    return usage, warnings


def _cell(value: Any) -> str:
    """A /shares number as sshare prints it (``%f``; ``inf``); "" for an unset one."""
    if isinstance(value, Mapping):
        if value.get("infinite") is True:
            return "inf"
        if value.get("set") is False:
            return ""
    number = _number(value)
    return "" if number is None else f"{number:f}"


def _dampening(rows: list[Mapping[str, Any]], tree: AssocTree) -> int | None:
    """FairShareDampeningFactor from classic /shares values: slurmctld's factor is
    ``2**(-(E/S)/d)``, so each user with usage gives ``d = -(E/S) / log2(F)``; Slurm's d is a
    whole number. None when no user has usage (d then changes nothing shown)."""
    seen: list[int] = []
    for i, r in enumerate(rows):
        if not tree.is_user[i]:
            continue
        e, n, f = (_number(_dig(r, *k)) for k in (("effective_usage",), ("shares_normalized",),
                                                  ("fairshare", "factor")))
        if e and n and f and 0 < f < 1:
            seen.append(round(-(e / n) / math.log2(f)))
    return max(set(seen), key=seen.count) if seen else None


def printed_from_shares(doc: Mapping[str, Any], tree: AssocTree, partitions: list[str] | None,
                        release: SlurmRelease, source: str = "slurmrestd shares",
                        ) -> tuple[dict[str, tuple[str, ...]] | None, PrioritySettings | None]:
    """sshare's printed columns from ``slurm/vX/shares`` (v0.0.40+), row-aligned with ``tree``:
    the server's own doubles in sshare's ``%f``, with the blanks ``release``'s sshare leaves
    (FairShare of accounts under Fair Tree, and from 25.11 under classic; LevelFS of the root
    and ``parent`` rows, none under classic), and the settings the values reveal: under classic
    slurmctld never sets a LevelFS (0 on every row, set), under Fair Tree it does; classic's
    dampening from its factors (:func:`_dampening`). None when an entry is missing."""
    entries = doc.get("shares")
    if isinstance(entries, Mapping):
        entries = entries.get("shares")
    if not isinstance(entries, list):
        return None, None
    by_key: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for e in entries:
        if not isinstance(e, Mapping):
            return None, None
        kind = e.get("type")
        is_user = ("USER" in kind) if isinstance(kind, list) else kind == "USER"
        name, parent, part = (str(e.get(k) or "") for k in ("name", "parent", "partition"))
        by_key[(parent, name, part) if is_user else (name, "", part)] = e
    parts = partitions or [""] * tree.size
    found = [by_key.get((str(tree.account[i]), str(tree.user[i]), parts[i])) for i in range(tree.size)]
    rows = [r for r in found if r is not None]
    if len(rows) != tree.size:
        return None, None
    levels = [_dig(r, "fairshare", "level") for r in rows]
    classic = all(isinstance(v, Mapping) and v.get("set") is True and _number(v) == 0 for v in levels)
    settings = PrioritySettings(algorithm="classic", dampening=_dampening(rows, tree) or 1) if classic \
        else PrioritySettings(algorithm="fair_tree")
    out: dict[str, list[str]] = {h: [] for h in ("NormShares", "RawUsage", "EffectvUsage", "FairShare")}
    if not classic:
        out["LevelFS"] = []
    users_only = not classic or release.controller_classic_fairshare
    # Before 25.11 slurmctld computes no classic factor (/shares sends 0): sshare computed it from
    # E, S and FairShareDampeningFactor, which the REST API does not carry. Not shown as given.
    no_factor = classic and not release.controller_classic_fairshare
    if no_factor:
        del out["FairShare"]
        settings = PrioritySettings(algorithm="classic")
    for i, r in enumerate(rows):
        out["NormShares"].append(_cell(r.get("shares_normalized")))
        usage = _number(r.get("usage"))
        out["RawUsage"].append("" if usage is None else str(int(usage)))
        out["EffectvUsage"].append(_cell(r.get("effective_usage")))
        if not no_factor:
            out["FairShare"].append(_cell(_dig(r, "fairshare", "factor")) if tree.is_user[i] or not users_only else "")
        if not classic:
            blank = i == 0 or tree.shares_raw[i] == USE_PARENT
            out["LevelFS"].append("" if blank else _cell(_dig(r, "fairshare", "level")))
    return {h: tuple(v) for h, v in out.items()}, settings


def partitions_from_json(doc: Mapping[str, Any], source: str = "slurmrestd partitions") -> list[Partition]:
    """Partitions from ``slurm/vX/partitions`` (v0.0.36-v0.0.38 flat fields; v0.0.40 nested ones).

    Raises
    ------
    InputError
        No ``partitions`` list, a partition without a name, or bad TRESBillingWeights.
    """
    items = doc.get("partitions")
    if not isinstance(items, list):
        raise InputError(source, "'partitions' is missing or not a list")
    out = []
    for k, p in enumerate(items):
        if not isinstance(p, Mapping) or not isinstance(p.get("name"), str) or not p["name"]:
            raise InputError(source, f"partition #{k} has no name")
        name = p["name"]
        weights = p.get("billing_weights", _dig(p, "tres", "billing_weights"))
        tres = p.get("tres")
        tres = _dig(tres, "configured") if isinstance(tres, Mapping) else tres
        try:
            billing = parse_tres_billing_weights(weights if isinstance(weights, str) else "")
        except ValueError as exc:
            raise InputError(source, f"partition {name}: billing_weights: {exc}") from None
        cpus = _number(p.get("total_cpus", _dig(p, "cpus", "total")))
        nodes = _number(p.get("total_nodes", _dig(p, "nodes", "total")))
        factor = _number(p.get("priority_job_factor", _dig(p, "priority", "job_factor")))
        out.append(Partition(
            name=name,
            billing_weights=billing,
            total_cpus=int(cpus or 0),
            total_nodes=int(nodes or 0),
            priority_job_factor=1 if factor is None else int(factor),
            tres_totals=parse_tres_counts(tres if isinstance(tres, str) else "", source),
            max_time_s=_limit(p.get("max_time_limit"), 60),
            max_nodes=_limit(p.get("maximum_nodes_per_job"), 1),
            node_list=p["nodes"] if isinstance(p.get("nodes"), str) else "",
        ))
    return out


#: The job states squeue lists by default and fairtop keeps (a finished job is in the usage already).
JOB_STATES = ("PENDING", "RUNNING")


def _epoch(value: Any) -> datetime | None:
    seconds = _number(value)
    return datetime.fromtimestamp(seconds, timezone.utc) if seconds else None


def _said(rec: Mapping[str, Any], key: str) -> str | None:
    """An optional text field as slurmrestd gave it: None when absent, empty or not a string (the
    fields why a job waits differ between API versions; none of them is worth refusing a job)."""
    value = rec.get(key)
    return value.strip() or None if isinstance(value, str) else None


def _user_of(uid: Any) -> str:
    """The login name of ``uid`` in this machine's user database ("" when unknown): v0.0.36 of
    22.05 gives a job's ``user_id`` only, as squeue does before it looks the name up."""
    number = _number(uid)
    if number is None:
        return ""
    try:
        return pwd.getpwuid(int(number)).pw_name
    except (KeyError, OverflowError, ValueError):
        return ""


def jobs_from_json(doc: Mapping[str, Any], source: str = "slurmrestd jobs") -> list[Job]:
    """Pending and running jobs from ``slurm/vX/jobs`` (v0.0.38 flat fields; v0.0.40's
    ``{"set": ..., "number": ...}`` numbers and state lists).

    A job without ``user_name`` (v0.0.36 of 22.05 sends it empty) gets the name of its
    ``user_id`` from this machine's user database, as squeue itself does.

    ``priority`` is the job's priority as slurmctld holds it (what ``squeue %Q`` and ``sprio``'s
    PRIORITY print). The API has no weighted parts (no sprio), so ``factors`` stays empty.
    TRES are the allocated ones of a running job, else the requested ones (as squeue's).

    Raises
    ------
    InputError
        No ``jobs`` list, or a job without an id, user or account.
    """
    items = doc.get("jobs")
    if not isinstance(items, list):
        raise InputError(source, "'jobs' is missing or not a list")
    out = []
    for k, j in enumerate(items):
        if not isinstance(j, Mapping):
            raise InputError(source, f"job #{k} is {type(j).__name__}, expected an object")
        state = j.get("job_state")
        states = [x for x in state if isinstance(x, str)] if isinstance(state, list) else [state]
        kept = [x for x in states if x in JOB_STATES]
        if not kept:
            continue
        job_id = _number(j.get("job_id"))
        if job_id is None:
            raise InputError(source, f"job #{k} has no job_id")
        what = f"job {int(job_id)}"
        user, account = _text(j, "user_name", source, what), _text(j, "account", source, what)
        if not user:  # v0.0.36 (22.05) sends "user_name": "" and the user_id only
            user = _user_of(j.get("user_id"))
        if not user or not account:
            raise InputError(source, f"{what}: no user_name or account")
        tres_key = "tres_alloc_str" if kept[0] == "RUNNING" else "tres_req_str"
        tres = parse_tres_counts(_text(j, tres_key, source, what), f"{source} {what} {tres_key}")
        prio = _number(j.get("priority"))
        limit = _number(j.get("time_limit"))  # minutes
        pending = kept[0] == "PENDING"
        # squeue's Reason: the controller's description when it set one, else the reason code
        reason = (_said(j, "state_description") or _said(j, "state_reason")) if pending else None
        out.append(Job(
            job_id=str(int(job_id)), user=user, account=account, partition=_text(j, "partition", source, what),
            state=kept[0], tres=tres, time_limit_s=int(limit) * 60 if limit is not None else 0,
            submit_time=_epoch(j.get("submit_time")),
            start_time=_epoch(j.get("start_time")),  # a pending job's: the scheduler's estimate (0: none)
            priority=None if prio is None else int(prio),
            reason=reason, qos=_said(j, "qos"), dependency=_said(j, "dependency") if pending else None,
            req_nodes=_said(j, "required_nodes") if pending else None,
            eligible_time=_epoch(j.get("eligible_time")) if pending else None,
        ))
    return out


def attach_jobs(jobs: list[Job], tree: AssocTree, source: str) -> list[str]:
    """Warnings for jobs whose association (account, user) is not in the tree."""
    known = {(str(tree.account[i]), str(tree.user[i])) for i in np.flatnonzero(tree.is_user)}
    lost = [j for j in jobs if (j.account, j.user) not in known]
    if not lost:
        return []
    names = ", ".join(f"{j.job_id} ({j.account}/{j.user})" for j in lost[:5])
    return [f"{source}: {len(lost)} job(s) belong to no association in the tree: {names}"
            + (", ..." if len(lost) > 5 else "")]


def _limit(value: Any, unit: int) -> int | None:
    """A v0.0.36-v0.0.38 flat limit (-1: UNLIMITED; MaxTime in minutes); None when absent."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return UNLIMITED if value < 0 or value >= 0xFFFFFFFE else int(value) * unit


def _release_of(doc: Any) -> str | None:
    """The Slurm release a response's ``meta`` names (v0.0.38: ``meta.Slurm.release``; v0.0.40+:
    ``meta.slurm.release``)."""
    meta = doc.get("meta") if isinstance(doc, Mapping) else None
    for key in ("slurm", "Slurm"):
        found = _dig(meta, key, "release")
        if isinstance(found, str) and found:
            return found
    return None


def _openapi(client: RestClient) -> dict[str, Any]:
    # /openapi/v3 first: newer slurmrestd deprecates plain /openapi; 22.05 serves both identically
    try:
        return client.get_json("/openapi/v3")
    except ApiError as exc:
        if exc.status != 404:
            raise
    return client.get_json("/openapi")


def live_snapshot(socket: str | None = None, url: str | None = None, *, token: str | None = None,
                  user: str | None = None, cluster: str | None = None,
                  timeout: httpx.Timeout = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES,
                  transport: httpx.BaseTransport | None = None,
                  sleep: Callable[[float], None] = time.sleep) -> Snapshot:
    """Read associations (and usage, partitions, jobs where offered) from slurmrestd.

    As :func:`read`, the snapshot only.
    """
    return read(socket, url, token=token, user=user, cluster=cluster, timeout=timeout, retries=retries,
                transport=transport, sleep=sleep).snapshot


@dataclass(frozen=True)
class RestRead:
    """What one read of slurmrestd gave."""

    snapshot: Snapshot
    row_partitions: list[str]
    """The association partition of every tree row ("" for none), to match other sources' rows."""
    usage_known: bool
    """Whether the server gave raw usage (22.05 never does)."""
    versions: ApiVersions | None = None
    """The endpoints used (read again for the jobs alone)."""
    job_warnings: tuple[str, ...] = ()
    """The snapshot's warnings about the jobs (replaced when the jobs alone are read again)."""


def _read_jobs(client: RestClient, versions: ApiVersions, tree: AssocTree) -> tuple[list[Job], list[str]]:
    if versions.jobs is None:
        return [], ["jobs unknown: the server offers no slurm/vX/jobs fairtop understands"]
    try:
        jobs = jobs_from_json(client.get_json(versions.jobs), f"slurmrestd {versions.jobs}")
    except ApiUnavailable:
        raise  # a server that stopped answering is an error, not a warning beside an old tree
    except (SourceUnavailable, InputError) as exc:
        return [], [f"jobs unknown: {exc}"]
    return jobs, attach_jobs(jobs, tree, f"slurmrestd {versions.jobs}")


def read(socket: str | None = None, url: str | None = None, *, token: str | None = None,
         user: str | None = None, cluster: str | None = None,
         timeout: httpx.Timeout = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES,
         transport: httpx.BaseTransport | None = None,
         sleep: Callable[[float], None] = time.sleep, ca_file: str | None = None) -> RestRead:
    """Read associations (and usage, partitions, jobs where offered) from slurmrestd.

    Parameters
    ----------
    socket, url, token, user, timeout, retries, transport, sleep, ca_file
        As :class:`RestClient`.
    cluster : str, optional
        Cluster whose associations to show (default: the only one).

    Returns
    -------
    RestRead
        The snapshot, with warnings for everything the server did not provide (usage on 22.05,
        priority settings always, partitions or jobs when not offered or refused).

    Raises
    ------
    SourceUnavailable
        No connection, an HTTP error on the associations, or no understood API version.
    InputError
        A response of the wrong shape (naming the endpoint).
    """
    warnings: list[str] = []
    with RestClient(socket, url, token=token, user=user, timeout=timeout, retries=retries,
                    transport=transport, sleep=sleep, ca_file=ca_file) as client:
        versions = pick_versions(_openapi(client))
        path = versions.associations
        doc = client.get_json(path, {"cluster": cluster} if cluster else None)
        if _errors_text(doc):
            warnings.append(f"slurmrestd {path}: {_errors_text(doc)}")
        assocs = doc.get("associations")
        built = tree_from_associations(assocs, f"slurmrestd {path}", cluster)
        tree, cluster_name = built.tree, built.cluster
        warnings += built.warnings
        usage_known = built.usage_known
        version = _release_of(doc)
        printed: dict[str, tuple[str, ...]] | None = None
        settings = PrioritySettings()
        if not built.usage_known:
            if versions.shares is not None:
                try:
                    shares = client.get_json(versions.shares)
                    usage, more = usage_from_shares(shares, tree, built.partitions,
                                                    source=f"slurmrestd {versions.shares}")
                    warnings += more
                    printed, read_settings = printed_from_shares(shares, tree, built.partitions, release(version))
                    if read_settings is not None:
                        settings = read_settings
                    if printed is not None and "FairShare" not in printed:
                        warnings.append(f"FairShare of slurmrestd {versions.shares} unknown: Slurm {version or '?'} "
                                        "computes no classic factor in slurmctld (sshare computes it itself, with "
                                        "FairShareDampeningFactor, which the API does not give): the engine's shown, "
                                        "dampening 1 assumed")
                    tree = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw,
                                     usage, tree.sibling_order)
                    usage_known = True
                except (SourceUnavailable, InputError) as exc:
                    warnings.append(f"usage unknown (shown as 0): {exc}")
            else:
                warnings.append(f"usage unknown (shown as 0): slurmrestd {versions.slurmdb} associations carry no "
                                "raw usage and the server offers no slurm/vX/shares endpoint")
        if tree.sibling_order is None and not release(version).lineage_order:  # 23.11+: the names' order
            warnings.append("slurmrestd gives no association lft: Fair Tree ties between sibling accounts "
                            "follow the sshare (name) order")
        partitions: list[Partition] = []
        if versions.partitions is None:
            warnings.append("partitions unknown: the server offers no slurm/vX/partitions fairtop understands")
        else:
            try:
                partitions = partitions_from_json(client.get_json(versions.partitions),
                                                  f"slurmrestd {versions.partitions}")
            except (SourceUnavailable, InputError) as exc:
                warnings.append(f"partitions unknown: {exc}")
        jobs, job_warnings = _read_jobs(client, versions, tree)
        warnings += job_warnings
    warnings.append("priority settings unknown (defaults assumed): slurmrestd does not expose slurm.conf's "
                    "PriorityFlags, weights or decay" + (
                        f"; {settings.algorithm.replace('_', ' ')} (dampening {settings.dampening}) read from "
                        "/shares' values" if printed is not None else ""))
    snap = Snapshot(
        cluster=cluster_name,
        source=f"slurmrestd {client.where} (slurmdb {versions.slurmdb}"
               + (f", slurm {versions.slurm})" if versions.slurm else ")"),
        taken_at=datetime.now(timezone.utc),
        tree=tree,
        settings=settings,
        partitions=tuple(partitions),
        jobs=tuple(jobs),
        warnings=tuple(warnings),
        printed=printed,
        scheduler_version=version,
    )
    return RestRead(snap, built.partitions, usage_known, versions, tuple(job_warnings))


class LiveRest:
    """slurmrestd read on a cadence: the jobs (slurmctld) at every read, the associations
    (slurmdbd) and partitions every ``slow_s`` seconds or after :meth:`refresh_now`, as the live
    source reads sacctmgr, so a session does not query slurmdbd every refresh.

    Parameters
    ----------
    socket, url, token, user, cluster, timeout, retries, transport, sleep
        As :func:`read`.
    slow_s : float
        Seconds between reads of the associations and partitions.
    clock : callable
        Monotonic seconds (tests pass their own).
    """

    slow_s_default = 600.0
    """Seconds between reads of the associations (slurmdbd) and partitions, as sacctmgr's."""

    def __init__(self, socket: str | None = None, url: str | None = None, *, slow_s: float = slow_s_default,
                 clock: Callable[[], float] = time.monotonic, **kw: Any) -> None:
        self.where: dict[str, Any] = {"socket": socket, "url": url, **kw}
        self.slow_s = slow_s
        self.clock = clock
        self._kept: tuple[float, RestRead] | None = None
        self._force = False

    def refresh_now(self) -> None:
        """Read the associations and partitions again at the next read (``r``)."""
        self._force = True

    def read(self) -> RestRead:
        """Everything when due, else the kept tree and partitions with the jobs read now.

        Raises
        ------
        SourceUnavailable, InputError
            As :func:`read`; when only the jobs are read, a server that does not answer raises
            (:class:`ApiUnavailable`) and a refused or unreadable job list becomes a warning.
        """
        now = self.clock()
        if self._kept is None or self._force or now - self._kept[0] >= self.slow_s:
            self._force = False
            self._kept = (now, read(**self.where))
            return self._kept[1]
        kept = self._kept[1]
        snap, versions = kept.snapshot, kept.versions
        assert snap.tree is not None and versions is not None  # read() sets both
        keys = ("token", "user", "timeout", "retries", "transport", "sleep", "ca_file")
        with RestClient(self.where["socket"], self.where["url"],
                        **{k: self.where[k] for k in keys if k in self.where}) as client:
            jobs, job_warnings = _read_jobs(client, versions, snap.tree)
        old = set(kept.job_warnings)
        warnings = (*[w for w in snap.warnings if w not in old], *job_warnings)
        fresh = replace(snap, jobs=tuple(jobs), warnings=warnings, taken_at=datetime.now(timezone.utc))
        return RestRead(fresh, kept.row_partitions, kept.usage_known, versions, tuple(job_warnings))
