"""Stopping concurrent work cleanly: the first failure stops every worker, and the items in flight
are bounded."""

from __future__ import annotations

import pytest

from agents.breaker import EndpointUnreachable


def test_run_concurrently_stops_every_worker_at_the_first_failure() -> None:
    import asyncio

    from graphs.concurrency import run_concurrently

    started: list[int] = []
    finished: list[int] = []
    cancelled: list[int] = []

    async def work(item: int) -> int:
        started.append(item)
        if item == 2:
            raise EndpointUnreachable("down")
        try:
            await asyncio.sleep(0 if item == 0 else 5)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise
        return item

    with pytest.raises(EndpointUnreachable, match="down"):
        asyncio.run(run_concurrently(range(10), work, finished.append, concurrency=2))
    assert finished == [0]  # recorded before the failure, kept
    assert started == [0, 1, 2] and cancelled == [1]  # item 1 was in flight: cancelled and awaited


def test_run_concurrently_bounds_the_items_in_flight() -> None:
    import asyncio

    from graphs.concurrency import run_concurrently

    in_flight, peak, results = 0, 0, []

    async def work(item: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return item * 2

    asyncio.run(run_concurrently(range(20), work, results.append, concurrency=3))
    assert sorted(results) == [2 * i for i in range(20)] and peak == 3
