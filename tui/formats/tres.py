"""``TRESBillingWeights`` written back as text (the inverse of the sources' parser)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["format_tres_billing_weights"]


def format_tres_billing_weights(weights: Mapping[str, float]) -> str:
    """Inverse of :func:`tui.sources.slurm_units.parse_tres_billing_weights` without unit suffixes (``repr`` floats).

    Parameters
    ----------
    weights : mapping of str to float
        Weights per base unit.

    Returns
    -------
    str
        ``"cpu=1.0,mem=0.000244140625"``; parsing it gives the same weights back.
    """
    return ",".join(f"{k}={float(v)!r}" for k, v in weights.items())
