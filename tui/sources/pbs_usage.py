"""PBS fairshare usage input, in any of three shapes (detected from the bytes).

* The scheduler's binary usage file, version 2 (``$PBS_HOME/sched_priv/usage``): a 24-byte
  header ``{char tag[9] = "PBS_MAG!"; pad; double version = 2}``, ``time_t last_decay``, then
  64-byte records ``{char name[50]; pad; double usage}`` in host byte order (spec section 7.3).
* Saved ``pbsfs`` (or ``pbsfs -p``) output: ``name : Grp: .. cgrp: .. Shares: .. Usage: .. Perc: ..%``.
* Plain ``entity usage`` lines (``#`` comments and blank lines allowed).

Everything wrong raises :class:`~tui.sources.errors.InputError` naming the input and line (or
byte offset for the binary file); nothing else escapes.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Literal

from tui.sources.errors import InputError

USAGE_MAGIC = b"PBS_MAG!"
#: ``USAGE_NAME_MAX``: the name field of a v2 record, NUL included.
NAME_MAX = 50
_HEADER = 24
_RECORD = 64
#: 2000-01-01: OpenPBS rejects a non-zero ``last_decay`` before this as a corrupt header.
_MIN_LAST_DECAY = 946713600

# is_valid_pbs_name: POSIX.1 user-name characters plus ' ' and ':' (egroup:euser entities)
_VALID_NAME = re.compile(r"[A-Za-z0-9._ :-]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LISTING_SHAPE = "name : Grp: .. cgrp: .. Shares: .. Usage: .. Perc: ..%"
_UNITS = re.compile(r"^Fairshare usage units are in:\s?(?P<res>.*)$")
_LISTING = re.compile(
    r"^(?P<name>\S.*?)\s*:\s*Grp:\s*(?P<grp>[+-]?[0-9]+)\s+cgrp:\s*(?P<cgrp>[+-]?[0-9]+)\s*"
    r"Shares:\s*(?P<shares>[+-]?[0-9]+)\s+Usage:\s*(?P<usage>\S+)\s+Perc:\s*(?P<perc>\S+?)%\s*$"
)


@dataclass(frozen=True)
class UsageRecord:
    """One entity's usage as read: ``line`` is the 1-based line (text) or record number (binary)."""

    name: str
    usage: float
    line: int


@dataclass(frozen=True)
class UsageInput:
    """A parsed usage input.

    Attributes
    ----------
    kind : {"binary", "pbsfs", "records"}
        Which shape the bytes had.
    records : tuple of UsageRecord
        In input order; usage in ``fairshare_usage_res`` units.
    usage_res : str or None
        Units named by a ``pbsfs`` header line.
    last_decay : int or None
        Epoch seconds from a binary header.
    source : str
        The input's name, for messages raised after parsing.
    """

    kind: Literal["binary", "pbsfs", "records"]
    records: tuple[UsageRecord, ...]
    usage_res: str | None = None
    last_decay: int | None = None
    source: str = "usage"


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text of ``data``, or an :class:`InputError` that says where it stops being text."""
    if not data.strip():
        raise InputError(source, "file is empty")
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise InputError(source, "binary data (NUL byte) in a text file", line)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(source, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line) from None


def parse_usage_value(token: str, source: str, line: int | None) -> float:
    """A usage number: decimal, finite, >= 0 (usage units)."""
    if not _NUMBER.fullmatch(token):
        raise InputError(source, f"usage {token!r} is not a number", line)
    value = float(token)
    if not math.isfinite(value):
        raise InputError(source, f"usage {token} is out of range", line)
    if value < 0:
        raise InputError(source, f"usage {token} is negative", line)
    return value


def check_entity_name(name: str, source: str, line: int | None) -> str:
    """``name`` if OpenPBS ``is_valid_pbs_name`` accepts it for a usage record."""
    if not _VALID_NAME.fullmatch(name):
        raise InputError(source, f"invalid entity name {name!r} (letters, digits, . - _ : and space only)",
                         line)
    if len(name.encode()) >= NAME_MAX:
        raise InputError(source, f"entity name {name!r} is longer than {NAME_MAX - 1} characters", line)
    return name


def _check_unique(records: list[UsageRecord], source: str) -> None:
    seen: dict[str, int] = {}
    for r in records:
        if r.name in seen:
            raise InputError(source, f"entity {r.name} appears twice (first on line {seen[r.name]})", r.line)
        seen[r.name] = r.line


def parse_binary(data: bytes, source: str) -> UsageInput:
    """Records of a version-2 binary usage file (host byte order; big-endian detected)."""
    if len(data) < _HEADER + 8:
        raise InputError(source, f"usage file header is truncated ({len(data)} bytes, need {_HEADER + 8})")
    if data[8] != 0:
        raise InputError(source, "usage file tag is not NUL-terminated after PBS_MAG!")
    order = "<"
    (version,) = struct.unpack_from("<d", data, 16)
    if version != 2.0 and struct.unpack_from(">d", data, 16)[0] == 2.0:
        order = ">"  # written on a big-endian host
    elif version != 2.0:
        raise InputError(source, f"usage file version {version!r} is not supported (only 2)")
    (last_decay,) = struct.unpack_from(order + "q", data, _HEADER)
    if last_decay != 0 and last_decay <= _MIN_LAST_DECAY:
        raise InputError(source, f"invalid usage file header: last_decay {last_decay} is before 2000")
    body = data[_HEADER + 8 :]
    if len(body) % _RECORD:
        raise InputError(source, f"truncated record at byte {_HEADER + 8 + len(body) // _RECORD * _RECORD}")
    records = []
    for k in range(len(body) // _RECORD):
        raw = body[k * _RECORD : k * _RECORD + NAME_MAX]
        where = f"record {k + 1} (byte {_HEADER + 8 + k * _RECORD})"
        if b"\0" not in raw:
            raise InputError(source, f"{where}: entity name is not NUL-terminated")
        name = raw[: raw.index(b"\0")].decode("ascii", errors="replace")
        if not name or not _VALID_NAME.fullmatch(name):
            raise InputError(source, f"{where}: invalid entity name {name!r}")
        (usage,) = struct.unpack_from(order + "d", body, k * _RECORD + 56)
        if not (math.isfinite(usage) and usage >= 0):
            raise InputError(source, f"{where}: usage {usage!r} of {name} is not a number >= 0")
        records.append(UsageRecord(name, usage, k + 1))
    _check_unique(records, source)
    return UsageInput("binary", tuple(records), last_decay=last_decay, source=source)


def _parse_listing(lines: list[str], source: str) -> UsageInput:
    records: list[UsageRecord] = []
    usage_res = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if m := _UNITS.match(line.strip()):
            usage_res = m["res"].strip()
            continue
        m = _LISTING.match(line.strip())
        if m is None:
            raise InputError(source, f"not a pbsfs line (expected {_LISTING_SHAPE})", n)
        name = check_entity_name(m["name"], source, n)
        records.append(UsageRecord(name, parse_usage_value(m["usage"], source, n), n))
    if not records:
        raise InputError(source, "pbsfs output without any entity line")
    _check_unique(records, source)
    return UsageInput("pbsfs", tuple(records), usage_res=usage_res, source=source)


def _parse_records(lines: list[str], source: str) -> UsageInput:
    records: list[UsageRecord] = []
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 2:
            raise InputError(source, f"expected 'entity usage', got {len(fields)} fields", n)
        name = check_entity_name(fields[0], source, n)
        records.append(UsageRecord(name, parse_usage_value(fields[1], source, n), n))
    if not records:
        raise InputError(source, "no usage records (only comments or blank lines)")
    _check_unique(records, source)
    return UsageInput("records", tuple(records), source=source)


def parse_usage(data: bytes, source: str) -> UsageInput:
    """Parse usage bytes of any supported shape (see the module docstring).

    Parameters
    ----------
    data : bytes
        The whole input.
    source : str
        Name for messages (usually the path).

    Raises
    ------
    InputError
        Empty, not text and not a v2 usage file, or any malformed line or record.
    """
    if data.startswith(USAGE_MAGIC):
        return parse_binary(data, source)
    if b"\0" in data[:64]:  # binary, but not a v2 file: OpenPBS's headerless v1 or junk
        raise InputError(source, "binary data without the PBS_MAG! header "
                                 "(version-1 usage files are not supported)")
    text = decode_text(data, source)
    lines = text.split("\n")  # only \n ends a line, so numbers match an editor's
    if any(_UNITS.match(s.strip()) or " Grp:" in s for s in lines):
        return _parse_listing(lines, source)
    return _parse_records(lines, source)
