"""The one ASGI bridge, in process, on the server-thread side (the loop side runs under real servers in
tests/compat/test_knative.py and tests/adapters/test_event_loop.py)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from funcwsgi.compat.asgi_app import BACKLOG, AppCall, scope_of
from funcwsgi.testing import FunctionClient

from ..support.paths import function_folder
from ..support.wsgi import StartResponse


def respond(app: Any, body: bytes = b"", method: str = "GET") -> tuple[str, list[tuple[str, str]], Any]:
    """(status, headers, body iterable) of ``app`` called through the bridge, as the stack calls it."""
    started = StartResponse()
    call = AppCall(app, "handle", scope_of({"REQUEST_METHOD": method, "PATH_INFO": "/"}), body)
    answer = call({"REQUEST_METHOD": method}, started)
    return started.calls[0][0], started.calls[0][1], answer


def start(status: int = 200, *headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"type": "http.response.start", "status": status, "headers": list(headers)}


def piece(body: bytes, more: bool = True) -> dict[str, Any]:
    return {"type": "http.response.body", "body": body, "more_body": more}


def test_a_whole_answer_is_one_chunk_with_its_length():
    async def app(scope, receive, send):
        message = await receive()
        await send(start(201, (b"x-seen", scope["path"].encode())))
        await send(piece(b"got ", True))
        await send(piece(message["body"], False))

    status, headers, body = respond(app, b"it", "POST")
    assert (status, list(body)) == ("201 Created", [b"got it"])
    assert ("x-seen", "/") in headers and ("Content-Length", "6") in headers


def test_repeated_headers_stay_repeated():
    async def app(scope, receive, send):
        await send(start(200, (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2")))
        await send(piece(b"", False))

    _, headers, _ = respond(app)
    assert [value for name, value in headers if name == "set-cookie"] == ["a=1", "b=2"]


def test_a_streamed_body_comes_chunk_by_chunk_as_the_app_sends_it():
    # In lockstep, not against a clock: the app sends its next piece only once the stack has taken
    # this one. A bridge that gathered the body before answering would never hand it one (the wait
    # gives up after 5 s, and says so).
    taken = [threading.Event() for _ in range(3)]
    waited: list[bool] = []

    async def app(scope, receive, send):
        await send(start())
        for n in range(3):
            await send(piece(f"{n}".encode()))
            waited.append(await asyncio.to_thread(taken[n].wait, 5))
        await send(piece(b"end", False))

    _, headers, body = respond(app)
    assert not any(name.lower() == "content-length" for name, _ in headers)
    chunks = []
    for chunk in body:
        if len(chunks) < len(taken):
            taken[len(chunks)].set()
        chunks.append(chunk)
    assert chunks == [b"0", b"1", b"2", b"end"]
    assert waited == [True, True, True]  # each taken before the app sent the next


def test_the_apps_send_waits_when_the_stack_falls_behind():
    sent = []

    async def app(scope, receive, send):
        await send(start())
        for n in range(100):
            await send(piece(b"x"))
            sent.append(n)
        await send(piece(b"", False))

    _, _, body = respond(app)
    chunks = iter(body)
    next(chunks)
    # The app runs ahead to the backlog (polled: a busy machine may take a while) ...
    deadline = time.monotonic() + 5
    while len(sent) < BACKLOG and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # ... and, given time to go on, does not
    assert BACKLOG <= len(sent) <= BACKLOG + 2
    assert sum(1 for _ in chunks) == 99


def test_closing_the_body_early_cancels_the_app_and_waits_for_it():
    seen = []

    async def app(scope, receive, send):
        await send(start())
        try:
            while True:
                await send(piece(b"tick"))
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    _, _, body = respond(app)
    assert next(iter(body)) == b"tick"
    body.close()  # what a server does when the client has gone
    assert seen == ["cancelled"]


def test_after_the_body_receive_says_disconnect_once_the_response_is_over():
    heard: list[str] = []

    async def app(scope, receive, send):
        assert (await receive())["body"] == b"request"
        await send(start())
        await send(piece(b"a", False))
        heard.append((await receive())["type"])

    _, _, body = respond(app, b"request", "POST")
    assert list(body) == [b"a"]
    deadline = time.monotonic() + 2
    while not heard and time.monotonic() < deadline:
        time.sleep(0.01)
    assert heard == ["http.disconnect"]


@pytest.mark.parametrize(
    "first, message",
    [
        pytest.param(None, "handle() returned without sending http.response.start", id="returned-early"),
        pytest.param(piece(b"x"), "handle() sent 'http.response.body' before http.response.start", id="body-first"),
    ],
)
def test_an_app_that_breaks_the_protocol_before_its_response_is_an_error_naming_it(first, message):
    async def broken(scope, receive, send):
        if first is not None:
            await send(first)

    with pytest.raises(RuntimeError) as raised:
        respond(broken)
    assert str(raised.value) == message


def test_the_apps_own_exception_before_its_response_reaches_the_errors_layer():
    async def app(scope, receive, send):
        raise LookupError("detail")

    with pytest.raises(LookupError, match="detail"):
        respond(app)


def cut_after(app: Any, first: bytes, error: type[BaseException], match: str) -> None:
    """The body of ``app`` gives ``first``, then raises ``error``."""
    chunks = iter(respond(app)[2])
    assert next(chunks) == first
    with pytest.raises(error, match=match):
        next(chunks)


def test_a_failure_after_the_response_started_ends_the_body_with_it():
    async def app(scope, receive, send):
        await send(start())
        await send(piece(b"first"))
        raise LookupError("midway")

    cut_after(app, b"first", LookupError, "midway")


def test_an_app_that_returns_before_finishing_its_body_cuts_it_short():
    async def app(scope, receive, send):
        await send(start())
        await send(piece(b"half"))

    cut_after(app, b"half", RuntimeError, "returned before finishing its response")


def test_a_body_is_taken_on_another_thread_than_the_one_that_started_the_call():
    """The pooled timeout's shape: a pool thread runs the call, the server's thread sends the body."""

    async def app(scope, receive, send):
        await send(start())
        for n in range(3):
            await send(piece(str(n).encode()))
            await asyncio.sleep(0.01)
        await send(piece(b"", False))

    _, _, body = respond(app)
    taken: list[bytes] = []
    other = threading.Thread(target=lambda: taken.extend(body))
    other.start()
    other.join(5)
    assert taken == [b"0", b"1", b"2"]


def test_scope_of_a_wsgi_environ():
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/caf\u00c3\u00a9/a b",  # WSGI's latin-1 view of the UTF-8 path /café/a b
        "RAW_URI": "/caf%C3%A9/a%20b?x=1",
        "QUERY_STRING": "x=1",
        "SCRIPT_NAME": "/mount",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "8080",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "5000",
        "CONTENT_TYPE": "text/plain",
        "CONTENT_LENGTH": "2",
        "HTTP_X_CUSTOM": "v",
        "wsgi.url_scheme": "http",
    }
    scope = scope_of(environ)
    assert (scope["method"], scope["path"], scope["raw_path"], scope["query_string"]) == ("POST", "/café/a b", b"/caf%C3%A9/a%20b", b"x=1")
    assert (scope["root_path"], scope["server"], scope["client"], scope["http_version"]) == ("/mount", ("localhost", 8080), ("127.0.0.1", 5000), "1.1")
    assert sorted(scope["headers"]) == [(b"content-length", b"2"), (b"content-type", b"text/plain"), (b"x-custom", b"v")]
    assert scope_of({"PATH_INFO": "/a b"})["raw_path"] == b"/a%20b"  # no raw URI from the server: quoted again


def test_on_threads_a_knative_instance_runs_on_the_process_asgi_loop(monkeypatch):
    monkeypatch.setenv("GREETING", "hi")  # start(cfg) gets the process's environment, as func-python's does
    with FunctionClient(function_folder("knative_loop")) as client:
        status = client.get("/status").json
        assert (status["greeting"], status["thread"]) == ("hi", "funcwsgi-asgi-loop")
        assert client.get("/stream?n=2&gap=0").text == "piece 0\npiece 1\nend\n"
        failed = client.get("/fail")
        assert (failed.status_code, failed.text) == (500, "Internal Server Error")
        assert client.get("/health/readiness").status_code == 200


def test_a_failure_after_the_whole_response_is_logged(caplog):
    async def app(scope, receive, send):
        await send(start())
        await send(piece(b"all of it", False))
        await asyncio.sleep(0.01)
        raise LookupError("after the answer")

    _, _, body = respond(app)
    assert body == [b"all of it"]
    deadline = time.monotonic() + 2
    while "failed after its response was sent" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "handle() failed after its response was sent" in caplog.text
    assert "after the answer" in caplog.text  # with its traceback
