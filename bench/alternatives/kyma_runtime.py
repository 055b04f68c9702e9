"""A runtime shaped like Kyma's python312 image, for comparison only.

It does per call what that runtime does: bottle routes the request, Prometheus
counts the call and times it (labelled by method), and the function runs on a
new thread per call while the request thread waits on a queue for its result,
up to the call timeout. cheroot serves it with 50 threads, as there. Kyma's
per-call tracing span is left out, which only flatters this runtime.

Run: ``FUNCTION_PATH=dir FUNC_PORT=8080 python kyma_runtime.py``.
"""

from __future__ import annotations

import importlib
import os
import queue
import sys
import threading
from typing import Any

import bottle
import prometheus_client as prom

sys.path.insert(0, os.environ.get("FUNCTION_PATH", "/kubeless"))
function = getattr(importlib.import_module(os.environ.get("MOD_NAME", "handler")), os.environ.get("FUNC_HANDLER", "main"))
timeout = float(os.environ.get("FUNC_TIMEOUT", "180"))

context = {
    "function-name": os.environ.get("FUNC_NAME"),
    "namespace": os.environ.get("SERVICE_NAMESPACE"),
    "timeout": timeout,
    "runtime": "python312",
    "memory-limit": os.environ.get("FUNC_MEMORY_LIMIT"),
}

calls = prom.Counter("function_calls_total", "Number of calls to user function", ["method"])
failures = prom.Counter("function_failures_total", "Number of exceptions in user function", ["method"])
durations = prom.Histogram("function_duration_seconds", "Duration of user function in seconds", ["method"])

app = bottle.Bottle()


def make_event(request: bottle.BaseRequest) -> dict[str, Any]:
    """The ``event`` mapping: CloudEvent headers, the body (decoded when JSON), the request."""
    data: Any = request.body.read()
    if request.content_type.startswith("application/json") and data:
        data = request.json
    event = {name.lower(): value for name, value in request.headers.items() if name.lower().startswith("ce-")}
    event["data"] = data
    event["extensions"] = {"request": request}
    return event


def call_function(results: queue.Queue[Any], event: dict[str, Any]) -> None:
    try:
        results.put(function(event, context))
    except Exception as error:  # handed to the request thread, which re-raises it
        results.put(error)


@app.get("/healthz")
def healthz() -> str:
    return "OK"


@app.get("/favicon.ico")
def favicon() -> bottle.HTTPResponse:
    return bottle.HTTPResponse(status=204)


@app.get("/metrics")
def metrics() -> bytes:
    bottle.response.content_type = prom.CONTENT_TYPE_LATEST
    return prom.generate_latest(prom.REGISTRY)


@app.route("/<:re:.*>", method=["GET", "POST", "PUT", "PATCH", "DELETE"])
def handle() -> Any:
    method = bottle.request.method
    event = make_event(bottle.request)
    calls.labels(method).inc()
    with failures.labels(method).count_exceptions(), durations.labels(method).time():
        results: queue.Queue[Any] = queue.Queue()
        worker = threading.Thread(target=call_function, args=(results, event))
        worker.start()
        try:
            result = results.get(block=True, timeout=timeout)
        except queue.Empty:
            return bottle.HTTPError(408, "Timeout while processing the function")
        worker.join()
        if isinstance(result, Exception):
            raise result
        return result


if __name__ == "__main__":
    bottle.run(
        app,
        server="cheroot",
        host=os.environ.get("FUNC_HOST", "127.0.0.1"),
        port=int(os.environ.get("FUNC_PORT", "8080")),
        numthreads=int(os.environ.get("CHERRYPY_NUMTHREADS", "50")),
        quiet=True,
    )
