"""The zone of a cluster's wall-clock times: sacct's Start and End, resets at local midnight.

sacct prints times in the zone of the process that runs it, without saying which. A capture
read on another machine (or by someone whose ``TZ`` differs) must read them in the zone they were
printed in, so ``fairtop capture`` saves that zone as :data:`ZONE_FILE`: an IANA name
(``Europe/Berlin``, daylight saving included) where this machine names one, else the UTC offset
of the capture's moment (``+01:00``). A capture without the file is read in this machine's zone.
"""

from __future__ import annotations

import os
import re
import time
from datetime import timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tui.sources.errors import InputError

__all__ = ["ZONE_FILE", "local_zone_name", "saved_zone", "zone_named"]

ZONE_FILE = "timezone.txt"
"""A capture's zone of its printed times: one line, an IANA name or ``+HH:MM``."""

_OFFSET = re.compile(r"^([+-])([0-9]{2}):?([0-9]{2})$")


def zone_named(name: str, source: str = ZONE_FILE) -> tzinfo:
    """The zone a :data:`ZONE_FILE` line names: ``UTC``, ``+HH:MM`` or an IANA name.

    Raises
    ------
    InputError
        A name this machine's zone database does not know.
    """
    text = name.strip()
    m = _OFFSET.match(text)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    if text in ("UTC", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(source, f"unknown time zone {text!r} (an IANA name such as Europe/Berlin, "
                                 "or +HH:MM)") from None


def _known(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def local_zone_name() -> str:
    """This process's zone, as sacct run from it prints times: ``TZ`` when it names a zone, else
    ``/etc/localtime``'s link into the zone database, else ``/etc/timezone``; failing all, the UTC
    offset now (right until the next daylight-saving change)."""
    given = os.environ.get("TZ")
    if given is not None:
        name = given.lstrip(":")
        if name in ("", "UTC", "UTC0", "GMT", "GMT0"):
            return "UTC"
        if _known(name):
            return name
    else:
        try:
            link = os.path.realpath("/etc/localtime")
        except OSError:
            link = ""
        _, sep, name = link.partition("/zoneinfo/")
        if sep and _known(name):
            return "UTC" if name in ("Etc/UTC", "UTC", "Etc/UCT", "UCT") else name
        try:
            name = Path("/etc/timezone").read_text().strip()
        except OSError:
            name = ""
        if name and _known(name):
            return name
    offset = time.strftime("%z", time.localtime())  # "+0100"
    return f"{offset[:3]}:{offset[3:]}" if offset else "UTC"


def saved_zone(folder: str | Path) -> tzinfo | None:
    """A capture folder's zone (:data:`ZONE_FILE`), or None when it saved none (then this machine's).

    Raises
    ------
    InputError
        The file names no zone this machine knows.
    """
    path = Path(folder) / ZONE_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None
    return zone_named(text, str(path))
