"""The event loop's deadline sweep, in-process: on time is judged in the sweep's own looks."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise

import pytest

from funcwsgi.eventloop.bridge import run_bridged
from funcwsgi.timeouts import Expired, deadline_in
from funcwsgi.timeouts.cancelling import DeadlineSweep, wait_until_deadline

DEADLINE = 0.1


def test_a_call_is_cancelled_at_the_first_look_past_its_deadline():
    """A busy machine stretches the wall clock, not the count of looks: no look past the
    deadline goes by without cancelling, and the looks come every TICK (0.02 s).

    Mutations caught, every run: cancelling 0.4 s past the deadline (``deadline + 0.4 <= now``:
    about twenty looks past it), and a sweep looking every 0.5 s (``TICK = 0.5``).
    """
    looks: list[tuple[float, bool]] = []  # (when the look began, whether the call was cancelled by then)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        sweep = DeadlineSweep(loop)
        sweep_once = sweep.sweep

        def looking() -> None:
            began = time.monotonic()
            sweep_once()
            looks.append((began, task in sweep.expired))

        sweep.sweep = looking  # type: ignore[method-assign]  # call_later finds it on the instance
        task = loop.create_task(asyncio.sleep(10))
        deadline = deadline_in(DEADLINE)
        due = deadline.at
        sweep.calls[task] = deadline
        sweep.start()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert sweep.was_expired(task)
        cancelling = next(index for index, (_, cancelled) in enumerate(looks) if cancelled)
        late = [began - due for began, _ in looks[:cancelling] if began >= due]
        assert late == [], f"{len(late)} looks past the deadline went by before the one that cancelled"
        gaps = [later - earlier for (earlier, _), (later, _) in pairwise(looks)]
        assert gaps and min(gaps) < 0.1, gaps  # five ticks; a sweep looking every 0.5 s never gets below it

    asyncio.run(scenario())


def test_a_call_added_after_one_with_a_later_deadline_is_cancelled_at_its_own():
    """The sweep looks at the calls in the order of their deadlines and stops at the first not due; a call
    whose deadline is earlier than one already added is looked at too.

    Mutation caught: such a call left behind the later deadline (cancelled at 10 s, not at 0.1 s).
    """

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        later = loop.create_task(run_bridged(wait_until_deadline, asyncio.sleep(10), deadline_in(10), "later"))
        await asyncio.sleep(0)  # the later call awaits first
        earlier = loop.create_task(run_bridged(wait_until_deadline, asyncio.sleep(10), deadline_in(DEADLINE), "earlier"))
        with pytest.raises(Expired):
            await asyncio.wait_for(earlier, 5)
        assert not later.done()
        later.cancel()
        with pytest.raises(asyncio.CancelledError):
            await later

    asyncio.run(scenario())
