"""Job priorities as ``sprio -l`` and ``sprio -n -l`` print them (cells before padding)."""

from __future__ import annotations

from tui.engine.priority import JobPriority

__all__ = ["format_sprio_value", "sprio_columns", "sprio_normalized_columns"]


def format_sprio_value(value: float) -> str:
    """``%.0f`` as C prints it: nearest integer, ties to even (143 for 142.857, 2 for 2.5)."""
    return f"{value:.0f}"


def sprio_columns(prio: JobPriority) -> dict[str, str]:
    """The cells ``sprio -l`` prints for this job (before padding to column width).

    Returns
    -------
    dict of str to str
        Keys PRIORITY, SITE, AGE, ASSOC, FAIRSHARE, JOBSIZE, PARTITION, QOS, NICE, TRES.
        Weighted parts use ``%.0f`` (round half to even, like C's printf); TRES is
        ``name=%.0f`` pairs joined by commas.
    """
    return {
        "PRIORITY": str(prio.sprio_priority),
        "SITE": str(prio.site),
        "AGE": format_sprio_value(prio.age),
        "ASSOC": format_sprio_value(prio.assoc),
        "FAIRSHARE": format_sprio_value(prio.fairshare),
        "JOBSIZE": format_sprio_value(prio.jobsize),
        "PARTITION": format_sprio_value(prio.partition),
        "QOS": format_sprio_value(prio.qos),
        "NICE": str(prio.nice),
        "TRES": ",".join(f"{k}={format_sprio_value(v)}" for k, v in prio.tres.items()),
    }

def sprio_normalized_columns(prio: JobPriority) -> dict[str, str]:
    """The cells ``sprio -n -l`` prints: factors ``%.7f``, PRIORITY ``%16.14f``, TRES ``%.2f``.

    Each factor is the weighted part divided by its weight (0 when the weight is 0), as
    sprio does on the client side.
    """
    w = prio.weights

    def norm(part: float, weight: float) -> str:
        return f"{(part / weight if weight else 0.0):.7f}"

    return {
        "PRIORITY": f"{prio.sprio_normalized:16.14f}",
        "SITE": str(prio.site),
        "AGE": norm(prio.age, w.age),
        "ASSOC": norm(prio.assoc, w.assoc),
        "FAIRSHARE": norm(prio.fairshare, w.fairshare),
        "JOBSIZE": norm(prio.jobsize, w.jobsize),
        "PARTITION": norm(prio.partition, w.partition),
        "QOS": norm(prio.qos, w.qos),
        "NICE": str(prio.nice),
        "TRES": ",".join(f"{k}={v / w.tres[k]:.2f}" for k, v in prio.tres.items()),
    }
