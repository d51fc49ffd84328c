"""Salted, slow password hashes for ``serve-metrics``' basic auth (``fairtop hash-password``).

Prometheus exporters' web config stores bcrypt hashes (``basic_auth_users``). fairtop stores
``pbkdf2-sha256$ITERATIONS$SALT$HASH`` (salt and hash in unpadded base64): PBKDF2-HMAC-SHA256
from the standard library, so no C extension joins the dependencies, and like bcrypt it is slow
on purpose (600,000 iterations, OWASP's 2023 figure): a config file that leaks costs an attacker
about a third of a second a guess per core, where one salted SHA-256 would cost nanoseconds.
What is slow for an attacker is slow for each scrape too, so, as exporter-toolkit does, a
password once verified is remembered for the process (keyed by an HMAC under a per-process
random key, never the password itself); an unknown user is checked against a dummy hash, so
the time taken does not say which users exist.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import threading

__all__ = ["ITERATIONS", "PasswordCheck", "hash_password", "is_hash", "verify"]

ITERATIONS = 600_000
_SCHEME = "pbkdf2-sha256"
_FORMAT = re.compile(r"pbkdf2-sha256\$([0-9]{4,9})\$([A-Za-z0-9+/]{16,})\$([A-Za-z0-9+/]{43})")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """The stored form of ``password`` (a fresh 16-byte salt unless given)."""
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return f"{_SCHEME}${iterations}${_b64(salt)}${_b64(digest)}"


def is_hash(text: str) -> bool:
    """``text`` is a hash :func:`hash_password` made (not a password written in clear)."""
    return _FORMAT.fullmatch(text) is not None


def verify(password: str, stored: str) -> bool:
    """``password`` matches ``stored`` (constant-time comparison)."""
    m = _FORMAT.fullmatch(stored)
    if m is None:
        return False
    iterations, salt, want = int(m.group(1)), _unb64(m.group(2)), _unb64(m.group(3))
    got = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return hmac.compare_digest(got, want)


class PasswordCheck:
    """Basic auth's users (name -> stored hash), with verified passwords remembered."""

    def __init__(self, users: dict[str, str]) -> None:
        bad = [name for name, stored in users.items() if not is_hash(stored)]
        if bad:
            raise ValueError(f"metrics_basic_auth_users.{bad[0]} is not a pbkdf2-sha256 hash: make one with "
                             "'fairtop hash-password' (a password is never stored in clear; bcrypt is not read)")
        self.users = dict(users)
        self._key = os.urandom(32)
        self._ok: set[bytes] = set()
        self._lock = threading.Lock()
        rounds = [int(stored.split("$")[1]) for stored in users.values()] or [ITERATIONS]
        self._dummy = hash_password("", iterations=max(rounds), salt=b"\0" * 16)  # as slow as a real check

    def __call__(self, user: str, password: str) -> bool:
        stored = self.users.get(user)
        mark = hmac.new(self._key, f"{user}\0{password}\0{stored}".encode("utf-8", "surrogateescape"),
                        "sha256").digest()
        with self._lock:
            if mark in self._ok:
                return True
        ok = verify(password, stored if stored is not None else self._dummy) and stored is not None
        if ok:
            with self._lock:
                if len(self._ok) > 1024:  # many users rotating passwords: forget, verify again
                    self._ok.clear()
                self._ok.add(mark)
        return ok
