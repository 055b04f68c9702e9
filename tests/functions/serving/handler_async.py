"""The serving function's async twin (HANDLER_MODULE_NAME=handler_async): the same paths, served on the event loop.

Where the sync twin blocks a thread, this one awaits: ``/forever`` awaits a
long sleep and ``/spin`` yields to the loop in a busy loop, so the call
timeout can cancel both. ``/cancelled`` reports what the last cancelled call
saw; ``/block`` blocks the loop itself (sync code in ``async def``).
"""

import asyncio
import threading
import time

# The hooks, helpers and the answers that wait for nothing are the sync twin's, next to this file.
from handler import ANSWERED_ALIKE, _record, _thread_state, alive, ready, start, stop  # noqa: F401 - the runtime reads the hooks from here

import sdk

_cancellations = []  # what each cancelled call saw, for /cancelled


async def main(req, res):
    action = req.path.strip("/")
    if action == "sleep":
        _record("sleeping")
        await asyncio.sleep(float(req.args.get("s", "1")))
        return "slept"
    if action in ("forever", "spin"):
        try:
            if action == "forever":
                await asyncio.sleep(3600)
            while True:  # busy, but it yields to the loop
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            _cancellations.append({"path": req.path, "request_id": req.headers.get("X-Request-Id"), "at": time.monotonic()})
            raise
    if action == "cancelled":
        return {"cancellations": _cancellations, "tasks": len(asyncio.all_tasks()), "now": time.monotonic()}
    if action == "block":
        time.sleep(float(req.args.get("s", "1")))
        return "blocked the loop"
    if action in ANSWERED_ALIKE:
        return ANSWERED_ALIKE[action](req)
    if action == "traced":
        with sdk.get_tracer().start_as_current_span("work"):
            await asyncio.sleep(0)
            return "traced"
    if action == "observed":
        return await observed(req)
    if action == "context":
        await asyncio.sleep(0)
        _thread_state.calls = getattr(_thread_state, "calls", 0) + 1
        return {"path": sdk.get_request().path, "thread": threading.get_ident(), "thread_calls": _thread_state.calls}
    if action == "interleaved":
        # Many calls at once: each must keep seeing its own request, id and span across awaits.
        mine = req.args["n"]
        for _ in range(3):
            await asyncio.sleep(float(req.args.get("s", "0.01")))
            seen = sdk.get_request()
            if seen.args["n"] != mine:
                return {"mixed": True, "mine": mine, "seen": seen.args["n"]}, 500
        return {"n": mine, "request_id": seen.headers.get("X-Request-Id")}
    return "hello"


async def observed(req):
    """/observed: what the call sees of itself after awaits: its request, span, and a published event."""
    from opentelemetry import trace

    n = req.args["n"]
    await asyncio.sleep(0.02)
    sdk.get_logger().info("call %s", n)
    await sdk.emit_cloud_event_async("call.seen", "/serving-async", {"n": n})
    await asyncio.sleep(0.01)
    context = trace.get_current_span().get_span_context()
    seen = sdk.get_request()
    return {
        "n": seen.args["n"],
        "request_id": seen.headers.get("X-Request-Id"),
        "trace_id": format(context.trace_id, "032x"),
    }
