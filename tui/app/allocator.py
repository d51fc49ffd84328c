"""glibc malloc settings for a long-running app that swaps large snapshots in and out.

Each capture of 20,000 associations allocates arrays and strings of 160 kB to several MB and
frees the previous capture's. glibc raises its mmap threshold to the size of any mmapped block
that is freed (up to 32 MB), so after the first swap those blocks come from the heap and what
they leave there stays resident: 32-34 MB of heap instead of 21 MB plus 6 MB mapped, 8 MB more
resident memory (bench/README.md, "Why the app's memory stepped"). A fixed threshold keeps
every block the heap has no room for mapped (freed = returned at once); ``malloc_trim`` returns
the free pages left in the heap after a snapshot is swapped in. Both are no-ops off glibc.
(The late steps of the soak were Python's own arenas, not these: see tui/app/loading.py.)
"""

from __future__ import annotations

import ctypes
import os
from functools import cache

M_MMAP_THRESHOLD = -3
"""mallopt's parameter number (malloc.h). Setting it also turns off the dynamic raise."""
MMAP_THRESHOLD = 128 * 1024
"""glibc's own starting value: blocks from 128 kB up are mmapped, for good."""


class MallInfo(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (bytes): ``arena`` the heaps' size, ``hblks``/``hblkhd`` the
    mmapped blocks and their bytes, ``uordblks`` in use and ``fordblks`` free in the heaps."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


@cache
def _libc() -> ctypes.CDLL | None:
    try:  # glibc answers "glibc 2.36"; musl and other systems do not know the name
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
    except (ValueError, OSError, AttributeError):
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def keep_large_blocks_mapped() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD`; False where there is no glibc."""
    libc = _libc()
    return libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1


def return_free_memory() -> bool:
    """Give the heap's free pages back to the system (``malloc_trim(0)``); False when none were,
    or where there is no glibc."""
    libc = _libc()
    return libc is not None and libc.malloc_trim(ctypes.c_size_t(0)) == 1


def heap() -> MallInfo | None:
    """What glibc's malloc holds now (all arenas), for the soak bench and tests; None off glibc."""
    libc = _libc()
    if libc is None:
        return None
    libc.mallinfo2.restype = MallInfo
    return libc.mallinfo2()
