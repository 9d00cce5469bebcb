"""The interpreter tuned for a run: the garbage collector's thresholds and BLAS's threads."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from threadpoolctl import ThreadpoolController

GC_THRESHOLDS = (1_000_000, 50, 1000)  # see tuned()


@cache
def _blas() -> ThreadpoolController:
    """Return the controller of the thread pools of the loaded libraries (made once)."""
    return ThreadpoolController()


@contextmanager
def tuned() -> Iterator[None]:
    """Run a block with the garbage collector tuned for large lobbies, BLAS on one thread.

    **BLAS.** numpy's BLAS (OpenBLAS) starts a thread per core for a large enough matrix
    product, such as the global assignment's over a large pool; a lobby's products are
    small and frequent, so the threads mostly wait for each other, and replications run in
    parallel compete with them for the cores. The block limits BLAS to one thread
    (threadpoolctl) and restores the limit afterwards.

    **The garbage collector.** Python's cyclic collector scans the young objects every
    ``threshold0`` net allocations (allocations minus deallocations) and, every few of
    those, older ones; with 10^5
    players alive one scan takes a large part of a second. At the default (700) that
    dominated the run (349 us per game against 112 us at 100,000 players). The model makes
    no cyclic garbage (``gc.collect()`` finds none after an hour of a 1v1 or a free-for-all
    lobby): its objects are freed by reference counting, and what mostly moves the count
    are the buffered record rows (up to a few times ``records.flush_rows``). At 100,000
    net allocations a scan still ran at nearly every flush; at 1,000,000 they are rare
    (1v1 at 100,000 players, 30 simulated minutes: 104 -> 93 us of CPU per game), and
    a run writes its final records inside the block too. The previous thresholds are restored
    afterwards (blocks may nest).
    """
    previous = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        with _blas().limit(limits=1, user_api="blas"):
            yield
    finally:
        gc.set_threshold(*previous)
