"""A resumed gate hands the memory its rebuild freed back to the system
(``hand_back_freed_memory``): glibc keeps freed buffers in its heap, below the objects
allocated after them."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import screener

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: The memory a process still holds after it freed forty 1 MiB buffers from its heap (a large
#: buffer freed first raises glibc's mmap threshold above them, as a snapshot's bytes do), then
#: after ``hand_back_freed_memory``.
PROBE = textwrap.dedent(
    """
    from screener.gate_service.malloc import hand_back_freed_memory

    def rss_mb():
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmRSS"))
        return int(line.split()[1]) / 1024

    before = rss_mb()
    big = b"x" * (8 << 20)
    del big
    blocks = [b"y" * (1 << 20) for _ in range(40)]
    pin = b"p" * 5000  # allocated after them: the heap cannot shrink from its top
    del blocks
    held = rss_mb() - before
    assert hand_back_freed_memory()
    print(held, rss_mb() - before)
    """
)


@pytest.mark.subprocess
@pytest.mark.skipif(not GLIBC, reason="glibc's malloc_trim: other C libraries are left alone")
def test_the_heap_pages_freed_go_back_to_the_system() -> None:
    source = str(Path(screener.__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": source}, timeout=60,
    )  # fmt: skip
    held, after = map(float, done.stdout.split())
    assert held > 4.0  # what glibc keeps: the reason for the call
    assert after < 1.0
