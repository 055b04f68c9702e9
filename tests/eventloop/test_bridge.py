"""eventloop/bridge.py: a call's stack in a greenlet, its waits handed to the loop."""

from __future__ import annotations

import asyncio
import gc
import weakref

from funcwsgi.eventloop.bridge import run_bridged, wait_for


class Request:
    """Stands for what a call is given (its exchange, its environ): weakly referable."""


def waits_then_answers(request: Request) -> str:
    wait_for(asyncio.sleep(0))
    return "answered"


def test_an_idle_greenlet_keeps_nothing_of_the_calls_it_ran():
    # The greenlets are kept for the next calls: one that held its last call's arguments would hold its
    # connection and its request's body for as long as it stays idle, as many as ran at the busiest moment.
    async def calls() -> list[weakref.ref[Request]]:
        given = [Request() for _ in range(3)]
        answers = await asyncio.gather(*(run_bridged(waits_then_answers, request) for request in given))
        assert answers == ["answered"] * 3
        return [weakref.ref(request) for request in given]

    was_enabled = gc.isenabled()
    gc.disable()  # freed by reference counting, or held
    try:
        refs = asyncio.run(calls())
        assert [ref() for ref in refs] == [None, None, None]
    finally:
        if was_enabled:
            gc.enable()
