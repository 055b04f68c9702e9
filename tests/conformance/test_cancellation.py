"""C16: sdk.cancelled() once the client left or the call timed out; cancelled calls counted by cause."""

from __future__ import annotations

import re
import socket
import time
import uuid

from ..support.polling import wait_for


def cancelled_count(runtime, cause: str) -> float:
    text = runtime.get("/metrics").text
    found = re.search(rf'^function_cancelled_total\{{cause="{cause}"\}} (\S+)$', text, flags=re.MULTILINE)
    assert found, text[-2000:]
    return float(found.group(1))


def request_bytes(runtime, path: str) -> bytes:
    """A GET of ``path`` as the runtime's protocol sends it; over h2c a connection's opening and one stream."""
    if runtime.launcher.protocol != "h2c":
        return f"GET {path} HTTP/1.1\r\nHost: kit\r\n\r\n".encode()
    import h2.config
    import h2.connection

    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    connection.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", "kit"), (":path", path)], end_stream=True)
    return connection.data_to_send()


def test_a_call_whose_client_stays_is_not_cancelled(runtime):
    assert runtime.get("/cancel?seconds=0.3").text == "not cancelled"


def test_a_client_that_leaves_cancels_its_call_within_half_a_second(runtime):
    before = cancelled_count(runtime, "client")
    marker = uuid.uuid4().hex
    host, port = runtime.url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as client:
        client.sendall(request_bytes(runtime, f"/cancel?seconds=10&id={marker}"))
        time.sleep(0.3)  # the function is running
        left = time.monotonic()
    runtime.wait_for_log(f"conformance cancelled {marker}", timeout=5)
    noticed = time.monotonic() - left
    assert noticed < 1.0, f"the function saw the client leave {noticed:.2f} s after it did"  # 0.5 s, and the log's poll
    wait_for(lambda: cancelled_count(runtime, "client") == before + 1, 5, "function_cancelled_total{cause=client} counting the call")


def test_a_call_past_the_timeout_is_counted_cancelled_by_timeout(runtime):
    before = cancelled_count(runtime, "timeout")
    assert runtime.get("/sleep?seconds=4").status_code == 408
    wait_for(lambda: cancelled_count(runtime, "timeout") == before + 1, 5, "function_cancelled_total{cause=timeout} counting the call")


def test_a_client_that_resets_its_stream_cancels_its_call(runtime):
    """Over HTTP/2 a client leaves one call by resetting its stream (RST_STREAM CANCEL) and keeps the
    connection for its other calls, as Knative's queue-proxy does when its caller goes away."""
    import h2.config
    import h2.connection

    before = cancelled_count(runtime, "client")
    marker = uuid.uuid4().hex
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    fields = [(":method", "GET"), (":scheme", "http"), (":authority", "kit"), (":path", f"/cancel?seconds=10&id={marker}")]
    connection.send_headers(1, fields, end_stream=True)
    with socket.create_connection(("127.0.0.1", runtime.process.port), timeout=5) as client:
        client.sendall(connection.data_to_send())
        time.sleep(0.3)  # the function is running
        connection.reset_stream(1, 0x8)  # CANCEL
        client.sendall(connection.data_to_send())
        left = time.monotonic()
        runtime.wait_for_log(f"conformance cancelled {marker}", timeout=5)
        noticed = time.monotonic() - left
    assert noticed < 1.0, f"the function saw its stream reset {noticed:.2f} s after it was"
    wait_for(lambda: cancelled_count(runtime, "client") == before + 1, 5, "function_cancelled_total{cause=client} counting the call")
