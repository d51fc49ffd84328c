"""The app's glibc malloc settings (tui/app/allocator.py), each in a fresh interpreter: they are
process-wide, and the test process's heap has a history of its own.

The cause of the app soak's late steps in resident memory (bench/README.md): once a large mmapped
block is freed, glibc serves later blocks of that size from the heap, where they fragment."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

from tui.app import allocator

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(allocator.heap() is None, reason="needs glibc's malloc")

_PRELUDE = """
import ctypes, sys
from tui.app import allocator
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def rss_kb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:"))
"""

# After a freed block larger than it, does a block the heap cannot hold get its own mapping?
_LARGE_BLOCK = _PRELUDE + """
from tests.resources import large_blocks_mapped
if sys.argv[1] == "tuned":
    assert allocator.keep_large_blocks_mapped()
print(large_blocks_mapped())
"""

# 40 MB of 2 kB blocks freed, all but the last (which keeps the heap's top where it is).
_FREED_IN_THE_HEAP = _PRELUDE + """
blocks = [libc.malloc(2000) for _ in range(20_000)]
for b in blocks[:-1]:
    libc.free(b)
before = rss_kb()
returned = allocator.return_free_memory()
print(returned, before - rss_kb())
"""


def _run(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.strip()


def test_a_large_block_stays_mapped_after_a_larger_one_was_freed() -> None:
    assert _run(_LARGE_BLOCK, "tuned") == "True"
    # glibc's default, which the setting exists to avoid: the freed block raised its threshold.
    assert _run(_LARGE_BLOCK, "default") == "False"


def test_free_pages_inside_the_heap_are_returned() -> None:
    returned, dropped_kb = _run(_FREED_IN_THE_HEAP).split()
    assert returned == "True"
    assert int(dropped_kb) > 30_000, f"resident memory fell by {dropped_kb} kB of the 40 MB freed"


def test_the_heap_reads_as_glibc_counts_it() -> None:
    info = allocator.heap()
    assert info is not None and info.uordblks > 0 and info.arena >= info.uordblks
    assert ctypes.sizeof(allocator.MallInfo) == 10 * ctypes.sizeof(ctypes.c_size_t)
