"""Slurm's text forms of numbers: durations (``time_str2secs``) and ``TRESBillingWeights``.

Parsers belong to the sources: the engine takes numbers. Their inverse, where fairtop writes
one, is in :mod:`tui.formats.tres`.
"""

from __future__ import annotations

import re

from tui.engine.billing import normalize_tres_name

__all__ = ["parse_slurm_minutes", "parse_slurm_time", "parse_tres_billing_weights"]

#: Unit suffixes and their power of 1024 (``get_unit_type``: "\\0KMGTP").
_UNITS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5}
#: TRES types whose base unit is the megabyte (``slurmdb_get_tres_base_unit``).
_MEGA_BASE = frozenset({"mem", "bb"})
#: A C ``strtod`` decimal number (inf/nan/hex are refused here on purpose: no site means them).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

_TIMESPEC = re.compile(r"[0-9:\-]+")


def parse_slurm_time(text: str) -> int | None:
    """Parse a Slurm duration (``time_str2secs``) into seconds.

    Accepted forms: ``min``, ``min:sec``, ``hr:min:sec``, ``days-hr``, ``days-hr:min``,
    ``days-hr:min:sec``; ``INFINITE``/``UNLIMITED``/``-1`` mean no limit.

    Parameters
    ----------
    text : str
        E.g. ``"7-0"`` (7 days), ``"14-00:00:00"``, ``"90"`` (90 minutes), ``"5:30"``
        (5 min 30 s).

    Returns
    -------
    int or None
        Seconds; ``None`` for an infinite value.

    Raises
    ------
    ValueError
        For anything Slurm would reject (``NO_VAL``).
    """
    s = text.strip()
    if s.upper() in ("-1", "INFINITE", "UNLIMITED"):
        return None
    # Slurm's sscanf would read a leading '-' as a negative day count; no option wants that.
    if not s or s.startswith("-") or not _TIMESPEC.fullmatch(s) or not _valid_timespec(s):
        raise ValueError(
            f"not a Slurm time {text!r}: expected minutes, min:sec, hr:min:sec, "
            "days-hr, days-hr:min or days-hr:min:sec"
        )
    if "-" in s:
        days, _, rest = s.partition("-")
        parts = [int(x) if x else 0 for x in rest.split(":")] if rest else []
        h, m, sec = (parts + [0, 0, 0])[:3]
        return int(days or 0) * 86400 + h * 3600 + m * 60 + sec
    parts = [int(x) if x else 0 for x in s.split(":")]
    if len(parts) == 3:
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 60


def _valid_timespec(s: str) -> bool:
    """``_is_valid_timespec`` in parse_time.c: digit groups vs dashes and colons."""
    digits = len(re.findall(r"[0-9]+", s))
    dash, colon = s.count("-"), s.count(":")
    if not digits or dash > 1 or colon > 2:
        return False
    if dash and ":" in s.split("-", 1)[0]:
        return False  # a colon before the dash
    need = {1: 3, 2: 4} if dash else {1: 2, 2: 3}
    return digits >= need.get(colon, 0)


def parse_slurm_minutes(text: str) -> int | None:
    """Parse a Slurm duration the way slurm.conf time options are read (``time_str2mins``).

    Seconds round up to whole minutes, so the result in seconds is a multiple of 60. This is
    how ``PriorityDecayHalfLife``, ``PriorityMaxAge`` and job time limits are stored.

    Parameters
    ----------
    text : str
        A Slurm duration, see :func:`parse_slurm_time`.

    Returns
    -------
    int or None
        Whole minutes; ``None`` for an infinite value.
    """
    secs = parse_slurm_time(text)
    return None if secs is None else (secs + 59) // 60




def parse_tres_billing_weights(text: str | None) -> dict[str, float]:
    """Parse a ``TRESBillingWeights`` string into weights per TRES base unit.

    A unit suffix K/M/G/T/P divides the weight by 1024**k relative to the TRES base unit: memory
    and burst buffers count in MB, so ``Mem=0.25G`` is 0.25/1024 per MB (0.25 per GB), and
    ``Mem=0.25M`` is 0.25 per MB; for other TRES the base is a count, so ``CPU=1K`` is
    1/1024 per CPU. A suffix at or below the base unit (``Mem=2K``) changes nothing, as in
    Slurm. Only the first character after the number is read (``Mem=0.25GB`` = ``0.25G``).

    Parameters
    ----------
    text : str or None
        E.g. ``"CPU=1.0,Mem=0.25G,GRES/gpu=2.0"``. Empty or None: no weights.

    Returns
    -------
    dict of str to float
        ``{"cpu": 1.0, "mem": 0.000244140625, "gres/gpu": 2.0}``. A TRES listed twice keeps
        its last weight (Slurm overwrites the array slot).

    Raises
    ------
    ValueError
        On an entry without ``=``, without a number, or with an unknown unit suffix. (Slurm
        also refuses TRES types the cluster does not track; that is not known here.)
    """
    weights: dict[str, float] = {}
    if not text or not text.strip():
        return weights
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue  # strtok skips empty fields
        tres, sep, value = item.partition("=")
        if not sep or not tres.strip() or not value.strip():
            raise ValueError(f"TRESBillingWeights entry {item!r} is not TYPE[/NAME]=WEIGHT[K|M|G|T|P]")
        key = normalize_tres_name(tres)
        value = value.strip()
        m = _NUMBER.match(value)
        if not m:
            raise ValueError(f"TRESBillingWeights entry {item!r}: {value!r} is not a number")
        weight = float(m.group())
        rest = value[m.end() :]
        if rest:
            unit = rest[0].upper()
            if unit not in _UNITS:
                raise ValueError(
                    f"TRESBillingWeights entry {item!r}: unknown unit {rest[0]!r} (use K, M, G, T or P)"
                )
            base = 2 if key.split("/", 1)[0] in _MEGA_BASE else 0
            steps = _UNITS[unit] - base
            if steps > 0:
                weight /= 1024.0**steps
        weights[key] = weight
    return weights


