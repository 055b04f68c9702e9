"""`funcwsgi invoke`'s arguments: refused in one line before anything is sent, or sent as the user typed them."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

#: A URL nothing is asked of: every case below is refused before a connection is tried.
NOWHERE = "http://127.0.0.1:1/"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        pytest.param(["http://127.0.0.1:99999/"], "URL 'http://127.0.0.1:99999/' is invalid: expected a port from 1 to 65535 after the host", id="port-range"),
        pytest.param(["http://127.0.0.1:abc/"], "URL 'http://127.0.0.1:abc/' is invalid: expected a port from 1 to 65535 after the host", id="port-text"),
        pytest.param(["http://[::1/"], "URL 'http://[::1/' is invalid: expected http://HOST:PORT/PATH (Invalid IPv6 URL)", id="ipv6"),
        pytest.param(
            ["http://a b/"],
            "URL 'http://a b/' is invalid: expected http://HOST:PORT/PATH, without spaces or control characters (percent-encode them, e.g. %20)",
            id="space",
        ),
        pytest.param(
            ["http://a\r\nb/"],
            "URL 'http://a\\r\\nb/' is invalid: expected http://HOST:PORT/PATH, without spaces or control characters (percent-encode them, e.g. %20)",
            id="crlf",
        ),
        pytest.param(["http://\udcff/"], "URL 'http://\\xff/' is invalid: expected a host name or IP address", id="host-not-utf8"),
        pytest.param(
            [NOWHERE, "--timeout", "-1"], "--timeout -1 is invalid: expected a number of seconds above 0 and at most 86400, such as 60", id="timeout-negative"
        ),
        pytest.param(
            [NOWHERE, "--timeout", "nan"], "--timeout nan is invalid: expected a number of seconds above 0 and at most 86400, such as 60", id="timeout-nan"
        ),
        pytest.param(
            [NOWHERE, "--timeout", "1e300"],
            "--timeout 1e+300 is invalid: expected a number of seconds above 0 and at most 86400, such as 60",
            id="timeout-huge",
        ),
        pytest.param(
            [NOWHERE, "--header", "X: a\r\nY: b"],
            "--header 'X: a\\r\\nY: b' is invalid: expected a value without control characters (CR, LF, NUL)",
            id="header-crlf",
        ),
        pytest.param(
            [NOWHERE, "--header", "X-\udcff: 1"],
            "--header 'X-\\xff: 1' is invalid: expected a name of letters, digits and !#$%&'*+-.^_`|~ before the ':'",
            id="header-name-not-utf8",
        ),
        pytest.param(
            [NOWHERE, "--method", "GET\r\n"], "--method 'GET\\r\\n' is invalid: expected an HTTP method such as GET, POST or DELETE", id="method-crlf"
        ),
        pytest.param(
            [NOWHERE, "--cloudevent", "--source", "a\nb"],
            "--source 'a\\nb' is invalid: expected a non-empty CloudEvent attribute without control characters",
            id="event-source-lf",
        ),
        pytest.param(
            [NOWHERE, "--cloudevent", "--type", ""],
            "--type '' is invalid: expected a non-empty CloudEvent attribute without control characters",
            id="event-type-empty",
        ),
    ],
)
def test_a_bad_argument_is_one_line_naming_it(call, args: list[str], line: str):
    status, out, err = call("invoke", *args)
    assert (status, out, err) == (2, "", f"funcwsgi: error: {line}\n")


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 200 and keeps the request line, headers and body as bytes."""

    seen: list[tuple[bytes, dict[str, bytes], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        # The headers as sent: http.server decodes them as Latin-1, which gives each byte back.
        headers = {name.lower(): value.encode("latin-1") for name, value in self.headers.items()}
        self.seen.append((self.requestline.encode("latin-1"), headers, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Recorder.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_bytes_that_are_not_utf8_are_sent_as_typed(call, recorder: str):
    """The command line gives such a byte as a lone surrogate: data, header values and the path carry the byte itself."""
    status, _, err = call("invoke", f"{recorder}/caf\udce9?name=Jos\u00e9", "--data", "\udcff", "--header", "X-Note: caf\udce9 \u00e9")
    assert status == 0, err
    [(line, headers, body)] = Recorder.seen
    assert line == b"POST /caf%E9?name=Jos%C3%A9 HTTP/1.1"
    assert body == b"\xff"
    assert headers["content-type"] == b"application/octet-stream", "not UTF-8 text"
    assert headers["x-note"] == b"caf\xe9 \xc3\xa9"
