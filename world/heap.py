"""Giving freed memory back to the system.

glibc keeps the heap pages a process freed (a trained model's tensors, an encoder's buffers) for its
next allocations, so a process that is done with something large still holds its pages: its RSS, and
the peak of whatever it does next, stay as high. `give_back` collects what Python still holds in
cycles, then asks glibc to return the free pages.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc


def give_back() -> None:
    """Collect garbage, then return the heap's free pages to the system (glibc's `malloc_trim`;
    elsewhere, musl or macOS, only the collection)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
