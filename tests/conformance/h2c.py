"""The kit's HTTP/2 client: h2 on a plain socket, the connection opened with the preface (h2c, prior knowledge).

Not httpx's HTTP/2: it sends a request's whole body before it reads the
answer, so a server that answers early (a 413 for a declared length over the
limit, then RST_STREAM NO_ERROR, as RFC 9113 section 8.1 allows) leaves it
waiting for a flow-control window that never opens. This client, like curl,
reads while it sends, and stops sending once the answer is complete. An
answer is an ``httpx.Response``, read whole: what the checks read of a
requests response is there too.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import httpx

NO_ERROR = 0x0


class H2cError(ConnectionError):
    """The stream or the connection ended before its answer was complete; ``received`` is the body that came."""

    def __init__(self, message: str, received: bytes = b"") -> None:
        super().__init__(message)
        self.received = received


class H2cConnection:
    """One HTTP/2 connection; its requests are streams, one after another."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.closed = False
        self.used = time.monotonic()
        self._flush()

    def _flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.h2.close_connection()
                self._flush()
            except (OSError, h2.exceptions.ProtocolError):
                pass
        self.sock.close()

    def request(self, method: str, url: str, headers: Mapping[str, str] | None, content: bytes | Iterable[bytes] | None, timeout: float) -> httpx.Response:
        try:
            return self._exchange(method, url, headers or {}, content, timeout)
        except BaseException:
            self.close()  # a connection left mid-stream is not used again
            raise
        finally:
            self.used = time.monotonic()

    def _exchange(self, method: str, url: str, headers: Mapping[str, str], content: bytes | Iterable[bytes] | None, timeout: float) -> httpx.Response:
        parts = urlsplit(url)
        fields = [(":method", method), (":scheme", "http"), (":authority", parts.netloc), (":path", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))]
        fields += [(name.lower(), str(value)) for name, value in headers.items()]
        if isinstance(content, (bytes, bytearray)):
            pending = bytearray(content)
            fields.append(("content-length", str(len(content))))  # as httpx and curl declare a body they hold
        else:  # chunks, as they come: no content-length
            pending = bytearray(b"".join(content)) if content is not None else bytearray()
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, fields, end_stream=not pending)
        self._flush()
        status, answer_headers, body, answered = 0, [], bytearray(), False
        deadline = time.monotonic() + timeout
        while not answered:
            while pending:  # what the windows allow, then the answer's events
                size = min(self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size, len(pending))
                if size <= 0:
                    break
                self.h2.send_data(stream, bytes(pending[:size]), end_stream=size == len(pending))
                del pending[:size]
                self._flush()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{method} {url}: no whole answer within {timeout:g} s")
            self.sock.settimeout(left)
            data = self.sock.recv(65536)
            if not data:
                self.closed = True
                raise H2cError(f"{method} {url}: the server closed the connection before the answer was complete", bytes(body))
            for event in self.h2.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    answer_headers = [(str(name), str(value)) for name, value in event.headers]
                    status = int(dict(answer_headers)[":status"])
                elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                    body += event.data
                    self.h2.acknowledge_received_data(event.flow_controlled_length, stream)
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    answered = True
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream and not (answered and event.error_code == NO_ERROR):
                    raise H2cError(f"{method} {url}: the server reset the stream ({event.error_code!r})", bytes(body))
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.closed = True  # no new stream on it; one the GOAWAY counts in is still answered
                    if not answered and (event.error_code != NO_ERROR or event.last_stream_id is None or event.last_stream_id < stream):
                        raise H2cError(f"{method} {url}: the server closed the connection ({event.error_code!r})", bytes(body))
            self._flush()
        if pending:  # answered early: the rest of the body is not wanted (RFC 9113 section 8.1)
            try:
                self.h2.reset_stream(stream, NO_ERROR)
                self._flush()
            except h2.exceptions.StreamClosedError:
                pass
        kept = [(name, value) for name, value in answer_headers if not name.startswith(":")]
        # As a stream: given content=, httpx would add a content-length the server never sent.
        response = httpx.Response(status, headers=kept, stream=httpx.ByteStream(bytes(body)), request=httpx.Request(method, url), extensions={"http_version": b"HTTP/2"})
        response.read()
        return response


def request_arguments(kwargs: dict[str, Any]) -> tuple[Mapping[str, str] | None, bytes | Iterable[bytes] | None, float, str]:
    """requests' arguments (headers, data, json, params, timeout) as this client takes them: headers, content, timeout, query."""
    headers = dict(kwargs.pop("headers", None) or {})
    timeout = float(kwargs.pop("timeout", 30))
    query = httpx.QueryParams(kwargs.pop("params", None) or {})
    data, json_body = kwargs.pop("data", None), kwargs.pop("json", None)
    if kwargs:
        raise TypeError(f"the kit's HTTP/2 client does not take {sorted(kwargs)}")
    content: bytes | Iterable[bytes] | None = None
    if json_body is not None or isinstance(data, Mapping):
        built = httpx.Request("POST", "http://kit/", json=json_body, data=data if isinstance(data, Mapping) else None)
        content = built.read()
        headers.setdefault("Content-Type", built.headers["content-type"])
    elif isinstance(data, str):
        content = data.encode()
    elif data is not None:
        content = data
    return headers, content, timeout, str(query)
