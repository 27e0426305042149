"""A resumed gate hands the memory its rebuild freed back to the system
(``hand_back_freed_memory``).

A resume unpickles the snapshot (a buffer of 31 MB at 100,000 workers, and columns of one
value per worker) and replays pages of events: buffers freed in among the gate's own objects,
which glibc keeps in its heap, where the next allocations may or may not reuse them. The
resumed gate then holds more than the gate that served the same calls. ``malloc_trim``
returns the heap's free pages, wherever they lie. Measured on a gate of 100,000 workers
rebuilt from its snapshot and 61,751 later events (2026-12-07): 205.6 MB, 199.2 MB after it.
(Fixing glibc's mmap threshold at 128 KiB gave 188.4 MB, but every larger allocation of the
serving gate then costs a mapping of its own: 3,679-5,081 requests a second against
4,489-5,569 without, in alternating runs of ``benchmarks.gate_load`` at 100,000 workers.)
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["hand_back_freed_memory"]


def hand_back_freed_memory() -> bool:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim(0)``); whether
    any were returned (False where the C library is not glibc: nothing is done there)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))
