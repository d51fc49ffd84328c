"""What a long-running process holds, read from /proc: resident memory, open file descriptors and
child processes. The soak tests and benches sample these before and after a long run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Held:
    """One sample of a process: resident memory (kB, VmRSS), open fds, live children."""

    rss_kb: int
    fds: int
    children: int


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for process {pid}")


def open_fds(pid: int) -> int:
    return sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())


def children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (their parent id in /proc/N/stat)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = stat.read_text().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue  # ended meanwhile
        if ppid == str(pid):
            found.append(int(stat.parent.name))
    return found


def held(pid: int) -> Held:
    return Held(rss_kb(pid), open_fds(pid), len(children(pid)))


def flat(warm_up: list[Held], samples: list[Held], growth: float = 0.10) -> list[str]:
    """What grew after warm-up: resident memory by more than ``growth`` over the last warm-up
    sample (the highest sample after), or fds or children at the end (the last sample, taken at
    rest: a load in progress holds its files open for a moment) beyond the most of warm-up (a
    pool's threads come and go, each with its store connection). Empty when the run stayed flat."""
    grew = []
    warm, top = warm_up[-1].rss_kb, max(s.rss_kb for s in samples)
    if top > warm * (1 + growth):
        grew.append(f"resident memory {warm:,} kB after warm-up -> {top:,} kB")
    for what, before, after in (("open fds", max(s.fds for s in warm_up), samples[-1].fds),
                                ("child processes", max(s.children for s in warm_up), samples[-1].children)):
        if after > before:
            grew.append(f"{what} at most {before} in warm-up -> {after}")
    return grew



def large_blocks_mapped() -> bool | None:
    """Whether glibc's malloc maps a large block of its own (freed = returned at once) when its
    heap has no room for it, even after a larger mapped block was freed: by default that raises
    glibc's threshold to the freed block's size, and later blocks below it grow the heap, where
    they fragment. The app fixes the threshold (tui/app/allocator.py). None when the heap holds
    so much free space (a long test process) that no block under the highest dynamic threshold
    is too large for it: the probe cannot tell there."""
    import ctypes

    from tui.app.allocator import heap

    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    largest = 30 << 20  # under glibc's highest dynamic threshold (32 MB on 64-bit)
    libc.free(libc.malloc(largest))
    before = heap()
    assert before is not None, "needs glibc's malloc"
    size = before.fordblks + (256 << 10)  # more than all the heap's free space: it cannot be carved
    if size >= largest:
        return None
    block = libc.malloc(size)
    after = heap()
    libc.free(block)
    assert after is not None
    return after.hblks == before.hblks + 1
