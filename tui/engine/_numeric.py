"""Small numeric helpers shared by the engine's array-or-scalar functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # numpy.typing: annotations only, not imported at run time
    from numpy.typing import NDArray


def scalar_or_array(out: NDArray[np.float64]) -> NDArray[np.float64] | float:
    """A 0-d result as a Python float (what a scalar caller passed in), else the array."""
    return float(out) if out.ndim == 0 else out
