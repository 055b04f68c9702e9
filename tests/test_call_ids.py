"""Every log record written during a call carries its request id and trace id, on every HTTP adapter.

One server per adapter with tracing and the access log on; each call sends
its own ``X-Request-Id`` and ``traceparent``, so each record can be matched
to the call it belongs to. The kinds: the function's own ``logging`` line,
the failure record with its traceback, the timeout warning (gunicorn's
watchdog thread writes it; the other servers' hand-off writes it on the
server's thread) and the access-log record.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest
import requests

from funcwsgi.adapters import HTTP_ADAPTERS

from .support.logs import log_records
from .support.processes import SERVE, Server, start


@pytest.fixture(scope="module", params=list(HTTP_ADAPTERS))
def served(request, collector):
    with start(
        # 2 s: /slow runs 10 s, and a loaded machine must not make the first /log or /fail time out too.
        SERVE, "call_ids", SERVER_ADAPTER=request.param, SERVER_NUMTHREADS="4", SERVER_CALL_TIMEOUT="2", SERVER_ACCESS_LOG="true",
        TRACE_COLLECTOR_ENDPOINT=f"{collector.url}/v1/traces",
    ) as server:
        yield server


def call(server: Server, path: str) -> tuple[str, str, int]:
    """(request id, trace id, status) of one call that names both."""
    request_id, trace_id = secrets.token_hex(8), secrets.token_hex(16)
    headers = {"X-Request-Id": request_id, "traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"}
    response = requests.get(server.url + path, headers=headers, timeout=10)
    assert response.headers["X-Request-Id"] == request_id
    return request_id, trace_id, response.status_code


def record_of(server: Server, match, what: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        hits = [record for record in log_records(server.stdout) if match(record)]
        if hits:
            assert len(hits) == 1, hits
            return hits[0]
        time.sleep(0.05)
    raise AssertionError(f"no {what} record\n{server.stdout}\n{server.stderr}")


def assert_carries(record: dict[str, Any], request_id: str, trace_id: str) -> None:
    assert record.get("request_id") == request_id, record
    assert record.get("trace_id") == trace_id, record
    assert len(record.get("span_id", "")) == 16, record


def access_record(server: Server, path: str, request_id: str) -> dict[str, Any]:
    return record_of(server, lambda r: r["logger"] == "funcwsgi.access" and r.get("path") == path and r.get("request_id") == request_id, "access-log")


def test_the_functions_own_log_line(served):
    request_id, trace_id, status = call(served, "/log")
    assert status == 200
    assert_carries(record_of(served, lambda r: r["message"] == "looked up the order" and r.get("request_id") == request_id, "user"), request_id, trace_id)
    assert_carries(access_record(served, "/log", request_id), request_id, trace_id)


def test_the_failure_record_with_its_traceback(served):
    request_id, trace_id, status = call(served, "/fail")
    assert status == 500
    failure = record_of(served, lambda r: r["message"] == "Function failed on GET /fail" and r.get("request_id") == request_id, "failure")
    assert "RuntimeError: the database is down" in failure["exc_info"]
    assert_carries(failure, request_id, trace_id)
    access = access_record(served, "/fail", request_id)
    assert_carries(access, request_id, trace_id)
    assert access["bytes"] == len(b"Internal Server Error")


def test_the_timeout_warning(served):
    request_id, trace_id, status = call(served, "/slow")
    assert status == 408
    warning = record_of(served, lambda r: r["message"].startswith("Call timed out") and r.get("request_id") == request_id, "timeout")
    assert warning["message"].endswith("GET /slow")
    assert_carries(warning, request_id, trace_id)
    assert_carries(access_record(served, "/slow", request_id), request_id, trace_id)
