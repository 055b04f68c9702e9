"""Awaiting a function's coroutine on the loop: the first step taken at once, the rest awaited by the call's task."""

from __future__ import annotations

import asyncio
import json

from funcwsgi import make_app
from funcwsgi.eventloop.coroutines import Resumed

from ..support.paths import function_folder
from .test_asgi import scope


def _started(coroutine):
    """``coroutine`` after its first step, as the call's greenlet leaves it: (the coroutine, what it waits for)."""
    return coroutine, coroutine.send(None)


async def _in_a_task(awaitable):
    return await asyncio.get_running_loop().create_task(_await(awaitable))


async def _await(awaitable):
    return await awaitable


def test_a_resumed_coroutine_goes_on_from_where_its_first_step_stopped():
    async def waits_twice():
        await asyncio.sleep(0)
        await asyncio.sleep(0.001)
        return "done"

    async def main():
        return await _in_a_task(Resumed(*_started(waits_twice())))

    assert asyncio.run(main()) == "done"


def test_a_cancellation_reaches_the_function_at_the_await_its_first_step_stopped_at():
    seen = []

    async def waits():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled at the first await")
            raise

    async def main():
        task = asyncio.get_running_loop().create_task(_await(Resumed(*_started(waits()))))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "not cancelled"

    assert asyncio.run(main()) == "cancelled"
    assert seen == ["cancelled at the first await"]


def test_a_function_that_catches_the_cancellation_may_wait_again_and_answer():
    async def carries_on():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.001)
            return "answered after all"

    async def main():
        task = asyncio.get_running_loop().create_task(_await(Resumed(*_started(carries_on()))))
        await asyncio.sleep(0.01)
        task.cancel()
        return await task

    assert asyncio.run(main()) == "answered after all"


def _serve(app, path):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    async def call():
        await asyncio.get_running_loop().create_task(app(scope(path=path), receive, send))

    asyncio.run(call())
    assert sent[0]["status"] == 200, sent
    return json.loads(sent[-1]["body"])


def test_coroutines_run_at_once_in_the_calls_greenlet_until_one_waits():
    app = make_app(environ={}, handler_folder=function_folder("async_waits_sometimes")).asgi
    assert _serve(app, "/")["first_step_in_greenlet"] is True
    assert _serve(app, "/") == {"first_step_in_greenlet": True, "path": "/"}
    assert _serve(app, "/wait") == {"first_step_in_greenlet": True, "path": "/wait"}  # it waited: the task took over
    # From then on the call's task takes every coroutine from its start.
    assert _serve(app, "/")["first_step_in_greenlet"] is False
    assert _serve(app, "/wait")["first_step_in_greenlet"] is False
