"""Running many graph invocations at bounded concurrency, stopping cleanly at the first failure."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def run_concurrently(
    items: Iterable[T],
    work: Callable[[T], Awaitable[R]],
    done: Callable[[R], None],
    concurrency: int,
) -> None:
    """`work(item)` for every item, at most `concurrency` at once; `done(result)` as each finishes
    (on the event loop, so it may append to a log without a lock).

    `concurrency` workers take items from one queue. When one item fails (e.g. the LLM endpoint is
    unreachable) the other workers are cancelled and awaited before the error propagates: the run
    stops at once, no task is left unawaited, and whatever `done` recorded stays for a rerun.
    """
    queue = iter(items)

    async def worker() -> None:
        for item in queue:  # shared: each item is taken by exactly one worker
            done(await work(item))

    workers = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
