"""C7: the start-up lines, printed once, in order, before serving."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

LINES = [
    re.compile(r"^Importing function sources from \S+:main$"),
    re.compile(r"^(Tracing configured with endpoint \S+|Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set)$"),
    re.compile(r"^(Publisher Proxy available on address \S+|Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set)$"),
    re.compile(r"^Starting \S+ server \S+:(\d+)$"),
]


def test_startup_lines(runtime):
    if runtime.read_log is None:
        pytest.skip("no --runtime-log given")
    lines = [line.strip() for line in runtime.read_log().splitlines()]
    first = next((i for i, line in enumerate(lines) if LINES[0].match(line)), None)
    assert first is not None, "no 'Importing function sources from' line"
    found = [line for line in lines[first:] if any(p.match(line) for p in LINES)][:4]
    assert [bool(p.match(line)) for p, line in zip(LINES, found, strict=False)] == [True] * 4, found
    port = LINES[3].match(found[3]).group(1)
    assert int(port) == urlsplit(runtime.url).port
    assert sum(bool(LINES[0].match(line)) for line in lines) == 1, "printed more than once"


def test_function_logs_reach_stdout(runtime):
    if runtime.read_log is None:
        pytest.skip("no --runtime-log given")
    import time
    import uuid

    marker = uuid.uuid4().hex
    assert runtime.get(f"/log?id={marker}").text == "logged"
    deadline = time.monotonic() + 5
    while f"conformance log line {marker}" not in runtime.read_log():
        assert time.monotonic() < deadline, "the function's log line did not appear"
        time.sleep(0.05)
