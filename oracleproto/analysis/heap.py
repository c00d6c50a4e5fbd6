"""Give the C heap's free pages back before the analysis pass, and keep its large buffers off it.

Why (docs/design/performance.md, "Analysis memory"): a run or replay ends with tens of MiB of freed
but resident heap pages (glibc keeps what the agent loops freed), and glibc's dynamic mmap
threshold, raised by those frees, puts each plot's 13 MB render buffer on the heap, where the next
figure's small allocations split it — every figure then grew the heap anew, so the pass's peak
depended on how the run had left the heap. With the free pages returned and buffers of 1 MiB and
more served by ``mmap`` (returned to the system when freed), the pass adds the same few tens of MiB
whatever the run's size. Only on glibc; elsewhere, or if the call fails, nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys

#: ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (glibc's malloc.h).
M_MMAP_THRESHOLD = -3
#: Allocations from this size up get their own mapping (glibc's default starts at 128 KiB and rises
#: with every freed mapping, up to 32 MiB).
MMAP_THRESHOLD_BYTES = 1 << 20


def release_heap() -> bool:
    """Return free heap pages to the system and fix the mmap threshold (glibc only; True if done)."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False
