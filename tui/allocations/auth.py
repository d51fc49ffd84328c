"""Who is asking: bearer tokens (development, tests) or MUNGE credentials (a real cluster).

* ``token``: a TOML file of ``[[token]]`` entries with ``token``, ``uid``, ``gids`` (a list) and
  ``role`` (``superuser``, ``admin`` or ``standard``); requests carry ``Authorization: Bearer T``.
* ``munge``: requests carry ``X-Munge-Cred``; the local munged decodes it (the ``unmunge``
  command, run with an argument list and the credential on stdin, never a shell) and gives the
  uid; the gids come from the system's group database; the role from the configured superusers
  and admins (user names or uids). munged refuses a replayed credential, so a client mints one
  per request (``munge -n``).

Either way a missing or unknown credential is an :class:`AuthError` (401).
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui.security.file_modes import read_secret

__all__ = ["Principal", "AuthError", "TokenAuth", "MungeAuth", "ROLES", "load_tokens"]

ROLES = ("superuser", "admin", "standard")


class AuthError(Exception):
    """No credential, or one that does not verify (HTTP 401)."""


@dataclass(frozen=True)
class Principal:
    uid: int
    gids: frozenset[int]
    role: str

    @property
    def sees_all(self) -> bool:
        """Superusers and admins read every record; standard users only their gids'."""
        return self.role in ("superuser", "admin")

    @property
    def visible_gids(self) -> frozenset[int] | None:
        return None if self.sees_all else self.gids


def load_tokens(path: str | Path) -> dict[str, Principal]:
    """Read a tokens file; raises ``ValueError`` naming the file and the entry on bad input, and
    :class:`tui.security.file_modes.SecretFileError` (a ``ValueError``) when its group or others may read it."""
    path = Path(path)
    try:
        data = tomllib.loads(read_secret(path, "tokens file"))  # SecretFileError: others may read it
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not TOML: {exc}") from None
    entries = data.get("token")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: needs [[token]] entries with token, uid, gids and role")
    tokens: dict[str, Principal] = {}
    for n, entry in enumerate(entries, 1):
        where = f"{path}: [[token]] #{n}"
        unknown = set(entry) - {"token", "uid", "gids", "role"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        token, uid, gids, role = entry.get("token"), entry.get("uid"), entry.get("gids", []), entry.get("role")
        if not isinstance(token, str) or len(token) < 8:
            raise ValueError(f"{where}: 'token' must be a string of at least 8 characters")
        if not isinstance(uid, int) or isinstance(uid, bool) or uid < 0:
            raise ValueError(f"{where}: 'uid' must be an integer >= 0")
        if not isinstance(gids, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in gids):
            raise ValueError(f"{where}: 'gids' must be a list of integers")
        if role not in ROLES:
            raise ValueError(f"{where}: 'role' must be one of {', '.join(ROLES)}, got {role!r}")
        if token in tokens:
            raise ValueError(f"{where}: the token is listed twice")
        tokens[token] = Principal(uid, frozenset(gids), role)
    return tokens


class TokenAuth:
    scheme = "token"

    def __init__(self, tokens: dict[str, Principal]) -> None:
        self._tokens = tokens

    def authenticate(self, authorization: str | None, munge_cred: str | None) -> Principal:
        if not authorization:
            raise AuthError("missing 'Authorization: Bearer TOKEN'")
        kind, _, token = authorization.partition(" ")
        principal = self._tokens.get(token.strip()) if kind.lower() == "bearer" else None
        if principal is None:
            raise AuthError("unknown token")
        return principal


_FIELD = re.compile(r"^([A-Z]+):\s+(\S+)\s*$", re.M)


def _ids(names: Iterable[str | int]) -> frozenset[int]:
    out = set()
    for name in names:
        if isinstance(name, int) or str(name).isdigit():
            out.add(int(name))
        else:
            try:
                out.add(pwd.getpwnam(str(name)).pw_uid)
            except KeyError:
                raise ValueError(f"unknown user {name!r}") from None
    return frozenset(out)


_GID_CACHE: dict[int, tuple[float, frozenset[int]]] = {}
_GID_TTL = 60.0


def system_gids(uid: int, primary: int | None = None) -> frozenset[int]:
    """The uid's groups from the system (passwd + group databases, through NSS, so LDAP/SSSD
    too), cached for a minute per uid."""
    now = time.monotonic()
    hit = _GID_CACHE.get(uid)
    if hit and now - hit[0] < _GID_TTL:
        return hit[1]
    try:
        pw = pwd.getpwuid(uid)
    except KeyError:
        return frozenset([primary] if primary is not None else [])
    gids = frozenset(os.getgrouplist(pw.pw_name, pw.pw_gid))
    _GID_CACHE[uid] = (now, gids)
    return gids


class MungeAuth:
    scheme = "munge"

    def __init__(self, superusers: Iterable[str | int] = (), admins: Iterable[str | int] = (),
                 socket: str | None = None, unmunge: str = "unmunge", timeout: float = 5.0) -> None:
        self.superusers = _ids(superusers)
        self.admins = _ids(admins)
        self.socket = socket
        self.unmunge = unmunge
        self.timeout = timeout

    def decode(self, cred: str) -> tuple[int, int]:
        """(uid, gid) of a credential, verified by munged; :class:`AuthError` otherwise."""
        if not cred or len(cred) > 8192 or not cred.isascii():
            raise AuthError("malformed MUNGE credential")
        argv = [self.unmunge, "--numeric", "--keys", "STATUS,UID,GID", "--metadata", "-", "--output", "/dev/null"]
        if self.socket:
            argv += ["--socket", self.socket]
        try:
            proc = subprocess.run(argv, input=cred.encode("ascii"), capture_output=True, timeout=self.timeout,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AuthError(f"cannot verify the MUNGE credential: {exc}") from None
        meta = dict(_FIELD.findall(proc.stdout.decode("utf-8", "replace")))
        if proc.returncode != 0 or meta.get("STATUS") != "0":
            why = proc.stderr.decode("utf-8", "replace").strip().removeprefix("unmunge: Error: ")
            raise AuthError(f"MUNGE credential refused: {why or 'unmunge failed'}")
        if not meta.get("UID", "").isdigit() or not meta.get("GID", "").isdigit():
            raise AuthError("MUNGE credential without uid")
        return int(meta["UID"]), int(meta["GID"])

    def authenticate(self, authorization: str | None, munge_cred: str | None) -> Principal:
        if not munge_cred:
            raise AuthError("missing X-Munge-Cred header")
        uid, gid = self.decode(munge_cred.strip())
        role = "superuser" if uid in self.superusers else "admin" if uid in self.admins else "standard"
        return Principal(uid, system_gids(uid, gid), role)
