"""Files whose permissions say what they mean, whatever the umask.

A file fairtop creates gets the mode its content calls for, set on the open descriptor
(``os.open(..., mode)`` then ``fchmod``: the umask of a systemd unit or a login shell can then
neither widen nor narrow it). What fairtop reads as a secret (a bearer token, a tokens file, a
TLS key) is refused when others may read it, as ssh refuses a private key.

* :data:`PRIVATE` (0600): the user's state file, a new SQLite ledger, token files.
* :data:`PUBLIC` (0644) and :data:`PUBLIC_DIR` (0755): what every user is meant to read (the
  published balances; captures, until their permissions follow PrivateData).
* :data:`GROUP` (0640) and :data:`TRAVERSE_DIR` (0711): what one group is meant to read, in a
  folder others may pass through but not list (the balances published ``--by-group``).

An existing folder keeps its mode: an administrator's ``chmod``/``chgrp`` is a decision.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["GROUP", "PRIVATE", "PRIVATE_DIR", "PUBLIC", "PUBLIC_DIR", "TRAVERSE_DIR", "SecretFileError",
           "check_secret_mode", "create_file", "make_dir", "read_secret", "write_atomic", "write_file"]

PRIVATE = 0o600
PRIVATE_DIR = 0o700
PUBLIC = 0o644
PUBLIC_DIR = 0o755
GROUP = 0o640
TRAVERSE_DIR = 0o711


class SecretFileError(ValueError):
    """A secret file that cannot be used: unreadable, or readable by others (one line)."""


def make_dir(path: str | Path, mode: int) -> Path:
    """``path`` and its missing parents; a folder created here gets ``mode`` exactly (an
    existing one is left as it is)."""
    path = Path(path)
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
        except FileExistsError:
            if not path.is_dir():
                raise
            return path  # created meanwhile by someone else: theirs
        os.chmod(path, mode)
    return path


def _write_fd(fd: int, data: bytes, mode: int, group: int | None = None) -> None:
    with os.fdopen(fd, "wb") as f:
        if group is not None:  # before the mode (chown may clear set-id bits) and before any byte
            os.fchown(f.fileno(), -1, group)
        os.fchmod(f.fileno(), mode)
        f.write(data)


def write_file(path: str | Path, data: bytes | str, mode: int) -> None:
    """Create or replace the contents of ``path`` (in place, not atomically) with mode ``mode``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _write_fd(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode), raw, mode)


def write_atomic(path: str | Path, data: bytes | str, mode: int, group: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (a sibling written with ``mode``, then renamed
    over it): a reader sees the old file or the new one, never half of one, and never a moment
    with a wider mode. ``group``: the file's group, set before its first byte (PermissionError
    without root, CAP_CHOWN or membership of it; nothing is left behind)."""
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    for n in range(100):
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{n}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                         mode if group is None else mode & 0o700)  # the group may not be ours yet
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{target}: no free temporary name beside it")
    try:
        _write_fd(fd, raw, mode, group)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def create_file(path: str | Path, mode: int) -> bool:
    """Create ``path`` empty with ``mode`` if it does not exist (True when created here); for
    files another library opens afterwards (SQLite keeps the mode of the file it finds, and gives
    its -wal and -shm files the same)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except FileExistsError:
        return False
    os.fchmod(fd, mode)
    os.close(fd)
    return True


def check_secret_mode(path: str | Path, st_mode: int, what: str, others_only: bool = False) -> None:
    """Refuse a secret others may read, with the ``chmod`` that fixes it. ``others_only``: a
    group may read it (a TLS key in Debian's ``ssl-cert`` group), others may not."""
    mask = 0o004 if others_only else 0o044
    if st_mode & mask:
        fix = "640" if others_only else "600"
        raise SecretFileError(f"{what} {path} is readable by others (mode {stat.S_IMODE(st_mode):04o}); "
                              f"chmod {fix} {path}")


def read_secret(path: str | Path, what: str = "token file") -> str:
    """The stripped text of a secret file, after checking on the open file that neither its
    group nor others can read it. :class:`SecretFileError` names the file, never its content."""
    try:
        fd = os.open(Path(path).expanduser(), os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise SecretFileError(f"{what} {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        check_secret_mode(path, os.fstat(f.fileno()).st_mode, what)
        raw = f.read()
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise SecretFileError(f"{what} {path}: not UTF-8 text") from None
