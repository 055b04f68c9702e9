"""C7: the four start-up lines, byte for byte, once, before serving; the function's logs on stdout."""

from __future__ import annotations

import json
import uuid


def test_the_four_startup_lines_come_first_exactly(runtime):
    expected = [
        f"Importing function sources from {runtime.module_file()}:main",
        "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
        f"Publisher Proxy available on address http://127.0.0.1:{runtime.publisher_port}/publish",
        f"Starting {runtime.launcher.runtime_name} server 127.0.0.1:{runtime.process.port}",
    ]
    lines = runtime.read_log().splitlines()
    assert lines[:4] == expected, lines[:8]


def test_the_startup_lines_are_printed_once(runtime):
    lines = runtime.read_log().splitlines()
    for prefix in ("Importing function sources", "Tracing ", "Publisher Proxy ", "Starting "):
        assert sum(line.startswith(prefix) for line in lines) == 1, (prefix, lines[:10])


def test_a_line_the_function_logs_is_a_json_record_on_stdout(runtime):
    marker = uuid.uuid4().hex
    response = runtime.get(f"/log?id={marker}", headers={"X-Request-Id": f"kit-{marker}"})
    assert response.text == "logged"
    runtime.wait_for_log(f"conformance log line {marker}")
    records = [r for r in runtime.log_records() if r.get("message") == f"conformance log line {marker}"]
    assert len(records) == 1, runtime.read_log()[-2000:]
    record = records[0]
    assert record["level"] == "INFO"
    assert record["function"] == runtime.settings.func_name and record["namespace"] == runtime.settings.namespace
    assert record["request_id"] == f"kit-{marker}"
    assert record["timestamp"].endswith("Z") and "T" in record["timestamp"]
    json.dumps(record)
