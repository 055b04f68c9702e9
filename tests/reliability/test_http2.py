"""HTTP/2 is bounded like HTTP/1.1 on every adapter that serves it (issue 37, docs/servers.md#http2).

Each adapter in :data:`HTTP2_ADAPTERS` is started once for the module with
``SERVER_HTTP2=true``, serving ``tests/functions/h2_echo``, which writes each
call it gets to a file. Every case sends what a raw-frame client sends
(:mod:`tests.reliability.h2_client`) and checks both what the client got and
what the function saw, then that a fresh connection is answered within a
second. Where an adapter is known not to hold a case, :data:`GAPS` says why
and the case is an expected failure (strict: it fails once the gap is closed,
so the entry must go).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import requests
from hyperframe.frame import ContinuationFrame, DataFrame, HeadersFrame, PingFrame, RstStreamFrame, SettingsFrame

from funcwsgi.config import HTTP2_ADAPTERS, HTTP2_BY_DEFAULT

from ..support.logs import json_lines
from ..support.paths import REPO, function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, children, debian_tool, process_figures, run_to_exit
from .h2_client import PROTOCOL_ERROR, REFUSED_STREAM, Answer, RawH2, fresh_answer, request_fields
from .harness import CALL_TIMEOUT, CANARY, LEAKS, MAX_BODY, Served, serve

#: Every HTTP server adapter; HTTP2_ADAPTERS (read from funcwsgi/adapters/specs.py) names those serving HTTP/2: marking one there runs it here.
HTTP_ADAPTERS = ("gunicorn", "waitress", "werkzeug", "granian")
MAX_STREAMS = 20
#: SERVER_NUMTHREADS of the servers tests/reliability/harness.py starts.
THREADS = 4
HEAD_LIMIT = 64 * 1024
#: nodejs26's: node:http's head limit (http.maxHeaderSize), which its HTTP/2 keeps too (nodejs26/lib/http2.js).
NODE_HEAD_LIMIT = 16 * 1024
#: (adapter, case) -> why the adapter cannot hold it; docs/servers.md#http2 says the same.
GAPS = {
    ("granian", "unread-answers"): "granian holds a call thread for each streamed answer the client's window keeps back, with no send timeout",
    **{
        (adapter, case): "granian takes trailers it never shows the application, pseudo-header fields included"
        for adapter in ("granian", "granian-loop")
        for case in ("pseudo-header-in-trailers", "pseudo-header-in-trailers-after-a-pause")
    },
    ("granian", "reset-body-no-content-length"): "granian ends the body of a stream its client reset as if it were whole, so one without a content-length looks complete",
    **{
        ("nodejs26", case): "node:http2 drops a field whose value has CR, LF, NUL or edge whitespace and serves the request without it"
        for case in ("cr-in-value", "lf-in-value", "nul-in-value", "leading-space", "trailing-tab")
    },
    ("nodejs26", "streams-beyond-the-limit"): "node:http2 answered none of 30 streams opened at once past its limit of 20 (neither REFUSED_STREAM nor an answer within 15 s)",
}
#: A flood's frames, and the most time it may take to send them.
FLOOD_FRAMES = 100_000
FLOOD_SECONDS = 10.0
#: What a flood may add to the server's resident memory (all its processes).
FLOOD_MEMORY_KB = 32 * 1024


class H2Served:
    def __init__(self, served: Served, seen: Path, path: str) -> None:
        self.served = served
        self.seen_log = seen
        self.adapter = served.adapter + path  # as GAPS names it: granian, granian-loop
        self.host = served.server.host
        self.port = served.server.port

    def client(self, **kwargs: object) -> RawH2:
        return RawH2(self.host, self.port, **kwargs)  # type: ignore[arg-type]

    def seen(self, path: str) -> list[dict[str, object]]:
        """The calls the function got for ``path``."""
        return [call for call in json_lines(self.seen_log) if call["path"] == path]

    def memory_kb(self) -> int:
        pid = self.served.server.process.pid
        return sum(process_figures(each)["rss_kb"] for each in (pid, *children(pid)))

    def assert_answering(self) -> None:
        """A fresh HTTP/2 connection, and a fresh HTTP/1.1 one, are answered within a second."""
        answer = fresh_answer(self.host, self.port, "/fresh", timeout=1.0)
        assert answer.status == 200, f"a fresh HTTP/2 connection got {answer} within 1 s"
        LEAKS.check(f"{self.adapter} fresh h2", answer.body)
        assert self.served.get("/fresh", timeout=1).status_code == 200


#: Each adapter serves a plain function on its threads and an async one on its event loop (on gunicorn,
#: funcwsgi's edge worker serves both). nodejs26 serves tests/functions/h2_echo/handler.mjs, the same function.
SERVED = [(adapter, module) for adapter in HTTP2_ADAPTERS for module in ("handler", "handler_async")] + [("nodejs26", "handler")]


def serve_node(folder: Path, **settings: str) -> Served:
    """The nodejs26 runtime (nodejs26/bin/serve) with the settings harness.serve gives funcwsgi."""
    port = free_port()
    env = base_env(
        HANDLER_FOLDER=function_folder("h2_echo"), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port),
        SERVER_CALL_TIMEOUT=str(CALL_TIMEOUT), SERVER_MAX_BODY_SIZE=str(MAX_BODY), RELIABILITY_CANARY=CANARY, **settings,
    )
    served = Served("nodejs26", Server([str(REPO / "nodejs26" / "bin" / "serve")], env, port), folder)
    try:
        served.server.wait_ready()
    except Exception:
        served.server.stop()
        raise
    return served


def curl(url: str, *arguments: str, check: bool = True) -> tuple[str, str, subprocess.CompletedProcess[str]]:
    """Debian's curl asking ``url`` with ``arguments``: the body, the HTTP version it spoke, and the run itself."""
    result = subprocess.run([debian_tool("curl", "curl"), *arguments, "-w", "\\n%{http_version}", url], capture_output=True, text=True, timeout=10, check=check)
    body, _, version = result.stdout.rpartition("\n")
    return body, version, result


def head_limit(h2: H2Served) -> int:
    return NODE_HEAD_LIMIT if h2.adapter == "nodejs26" else HEAD_LIMIT


@pytest.fixture(scope="module", params=SERVED, ids=[f"{adapter}{'-loop' if module.endswith('async') else ''}" for adapter, module in SERVED])
def h2(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[H2Served]:
    adapter, module = request.param
    folder = tmp_path_factory.mktemp(f"h2-{adapter}")
    seen = folder / "seen.jsonl"
    settings = {"SERVER_HTTP2": "true", "SERVER_HTTP2_MAX_STREAMS": str(MAX_STREAMS), "SERVER_ACCESS_LOG": "false", "SEEN_LOG": str(seen)}
    # Nothing here tests draining, and nodejs26 still counts the calls of the streams that
    # test_unread_answers_cost_only_their_streams left behind at SIGTERM (20 s at the default).
    settings["SERVER_GRACEFUL_TIMEOUT"] = "2"
    if adapter == "nodejs26":
        served = serve_node(folder, **settings)
    else:
        served = serve(adapter, folder, scenario="h2_echo", HANDLER_MODULE_NAME=module, **settings)
    try:
        yield H2Served(served, seen, "-loop" if module.endswith("async") else "")
    finally:
        served.server.stop()


def gap(h2: H2Served, case: str) -> None:
    why = GAPS.get((h2.adapter, case))
    if why is not None:
        pytest.xfail(why)  # the case ran far enough to show the gap; what follows would hang on it


def refused(answer: Answer) -> bool:
    """Refused as RFC 9113 allows: the stream reset with PROTOCOL_ERROR, or a 400 answer."""
    return answer.reset == PROTOCOL_ERROR or answer.status == 400


def exchange(h2: H2Served, fields: list[tuple[str, str]], body: bytes | list[bytes] | None = None, **kwargs: object) -> Answer:
    with h2.client() as client:
        answer = client.answer(client.request(fields, body, **kwargs), timeout=5)  # type: ignore[arg-type]
        closed = client.goaway is not None and not answer.done
    LEAKS.check(f"{h2.adapter} h2 {fields[:4]}", *(value for _, value in answer.headers), answer.body)
    return Answer(reset=PROTOCOL_ERROR) if closed else answer


# -- ordinary traffic ------------------------------------------------------------------------


def test_a_body_in_several_frames_reaches_the_function_exactly(h2):
    fields = [*request_fields("POST", "/frames"), ("content-length", "12"), ("x-value", "a b")]
    answer = exchange(h2, fields, [b"abcd", b"efgh", b"ijkl"])
    assert answer.status == 200
    assert json.loads(answer.body)["body"] == "abcdefghijkl"
    (call,) = h2.seen("/frames")
    assert call["protocol"] == "HTTP/2"
    assert (call["body"], call["headers"]["x-value"]) == ("abcdefghijkl", "a b")


def test_a_body_without_a_content_length_reaches_the_function_exactly(h2):
    """HTTP/2 frames a body with DATA frames alone (RFC 9113 section 8.1): no content-length is needed."""
    answer = exchange(h2, request_fields("POST", "/no-length"), [b"abcd", b"efgh"])
    assert answer.status == 200
    (call,) = h2.seen("/no-length")
    # funcwsgi's environ gets the CONTENT_LENGTH of the body it read whole; nodejs26's req.headers are the
    # request's own, as for an HTTP/1.1 chunked body.
    assert (call["body"], call["headers"].get("content-length")) == ("abcdefgh", None if h2.adapter == "nodejs26" else "8")


def test_cookie_fields_are_joined_with_a_semicolon_and_a_space(h2):
    fields = [*request_fields("GET", "/cookies"), ("cookie", "a=1"), ("cookie", "b=2"), ("cookie", "c=3")]
    assert exchange(h2, fields).status == 200
    (call,) = h2.seen("/cookies")
    assert call["headers"]["cookie"] == "a=1; b=2; c=3"


def test_httpx_concurrent_streams_on_one_connection(h2):
    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(http1=False, http2=True, base_url=f"http://{h2.host}:{h2.port}", timeout=10) as client:
            return await asyncio.gather(*(client.post("/httpx", content=f"call {n}".encode()) for n in range(MAX_STREAMS)))

    responses = asyncio.run(run())
    assert {(response.status_code, response.http_version) for response in responses} == {(200, "HTTP/2")}
    assert sorted(json.loads(response.content)["body"] for response in responses) == sorted(f"call {n}" for n in range(MAX_STREAMS))
    assert len(h2.seen("/httpx")) == MAX_STREAMS


def test_curl_with_prior_knowledge(h2):
    body, version, result = curl(f"http://{h2.host}:{h2.port}/curl", "-sS", "--http2-prior-knowledge", "--data-binary", "from curl", check=False)
    assert version == "2", result
    assert json.loads(body)["body"] == "from curl"


def test_a_header_list_within_the_http1_head_limit_is_served(h2):
    count = head_limit(h2) // 1600  # 40 fields of 1 KB within 64 KiB, 10 within 16 KiB
    fields = [*request_fields("GET", "/large-head"), *((f"x-field-{n}", "v" * 1000) for n in range(count))]
    assert exchange(h2, fields).status == 200
    (call,) = h2.seen("/large-head")
    assert call["headers"][f"x-field-{count - 1}"] == "v" * 1000


# -- malformed requests ----------------------------------------------------------------------

GET = request_fields("GET", "/")
MALFORMED: dict[str, tuple[list[tuple[str, str]], bytes | list[bytes] | None, list[tuple[str, str]] | None]] = {
    # RFC 9113 section 8.1.1: content-length and the DATA frames disagree.
    "content-length-over-data": ([*request_fields("POST", "/"), ("content-length", "10")], b"abcd", None),
    "content-length-under-data": ([*request_fields("POST", "/"), ("content-length", "2")], b"abcd", None),
    "content-length-under-two-frames": ([*request_fields("POST", "/"), ("content-length", "4")], [b"abcd", b"efgh"], None),
    # Section 8.2.2: connection-specific fields.
    "connection": ([*GET, ("connection", "keep-alive")], None, None),
    "transfer-encoding": ([*request_fields("POST", "/"), ("transfer-encoding", "chunked")], b"4\r\nabcd\r\n0\r\n\r\n", None),
    "keep-alive": ([*GET, ("keep-alive", "timeout=5")], None, None),
    "proxy-connection": ([*GET, ("proxy-connection", "keep-alive")], None, None),
    "upgrade": ([*GET, ("upgrade", "websocket")], None, None),
    "te-gzip": ([*GET, ("te", "gzip")], None, None),
    # Section 8.2: field names are lowercase; section 8.2.1: field values.
    "uppercase-name": ([*GET, ("X-Upper", "1")], None, None),
    "cr-in-value": ([*GET, ("x-value", "a\rb")], None, None),
    "lf-in-value": ([*GET, ("x-value", "a\nb")], None, None),
    "nul-in-value": ([*GET, ("x-value", "a\x00b")], None, None),
    "leading-space": ([*GET, ("x-value", " a")], None, None),
    "trailing-tab": ([*GET, ("x-value", "a\t")], None, None),
    # Section 8.3: pseudo-header fields.
    "no-method": ([(":scheme", "http"), (":path", "/"), (":authority", "localhost")], None, None),
    "no-path": ([(":method", "GET"), (":scheme", "http"), (":authority", "localhost")], None, None),
    "empty-path": ([(":method", "GET"), (":scheme", "http"), (":path", ""), (":authority", "localhost")], None, None),
    "duplicate-path": ([*GET, (":path", "/again")], None, None),
    "pseudo-header-after-a-field": ([(":method", "GET"), ("x-value", "1"), (":scheme", "http"), (":path", "/")], None, None),
    "unknown-pseudo-header": ([*GET, (":protocol-x", "1")], None, None),
    "response-pseudo-header": ([*GET, (":status", "200")], None, None),
    "pseudo-header-in-trailers": (request_fields("POST", "/"), b"abcd", [(":path", "/elsewhere")]),
    # The same with the body sent and the trailers half a second later: a server that started the call
    # on the body must still not let it answer (tests/support/granian_trailers.py shows it on bare granian).
    "pseudo-header-in-trailers-after-a-pause": (request_fields("POST", "/"), b"abcd", [(":path", "/elsewhere")]),
}
#: Seconds between a case's body and its trailers (none for a case not named here).
PAUSE_BEFORE_TRAILERS = {"pseudo-header-in-trailers-after-a-pause": 0.5}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_request_is_refused_before_the_function_runs(h2, case):
    fields, body, trailers = MALFORMED[case]
    path = f"/malformed/{case}"
    fields = [(name, path) if name == ":path" and value == "/" else (name, value) for name, value in fields]
    answer = exchange(h2, fields, body, trailers=trailers, pause=PAUSE_BEFORE_TRAILERS.get(case, 0.0))
    ran = h2.seen(path)
    if ran:
        gap(h2, case)
    assert ran == [], f"{case}: the function ran with {ran}"
    assert refused(answer), f"{case}: the client got {answer}"
    h2.assert_answering()


@pytest.mark.parametrize("length", ["content-length", "no-content-length"])
def test_streams_reset_in_the_middle_of_their_bodies_cost_nothing(h2, length):
    """More streams than call threads, each reset after part of its body (a cancelled upload): no thread kept, no call."""
    path = f"/reset-body/{length}"
    fields = [*request_fields("POST", path), *([("content-length", "8")] if length == "content-length" else [])]
    for _ in range(THREADS + 2):
        with h2.client() as client:
            stream = client.request(fields, b"part", end=False)
            client.pump(lambda: False, timeout=0.1)
            client.frame(RstStreamFrame(stream, error_code=0x8))
            client.pump(lambda: False, timeout=0.1)
    h2.assert_answering()
    if h2.seen(path):
        gap(h2, f"reset-body-{length}")
    assert h2.seen(path) == []


# -- attacks ---------------------------------------------------------------------------------


def test_a_header_list_over_the_http1_head_limit_never_reaches_the_function(h2):
    """1.2 MB of fields, over CONTINUATION frames: refused like a head over 64 KiB on HTTP/1.1."""
    with h2.client() as client:
        block = client.block([*request_fields("GET", "/huge-head"), *((f"x-field-{n}", "v" * 1000) for n in range(1200))])
        stream = client.new_stream()
        frames = [block[start : start + 16384] for start in range(0, len(block), 16384)]
        client.frame(HeadersFrame(stream, frames[0], flags=["END_STREAM"]))
        for index, part in enumerate(frames[1:], 2):
            if not client.frame(ContinuationFrame(stream, part, flags=["END_HEADERS"] if index == len(frames) else [])):
                break
        answer = client.answer(stream, timeout=5)
        assert answer.status in (None, 431), answer
        assert answer.done or client.goaway is not None or client.closed
    assert h2.seen("/huge-head") == []
    h2.assert_answering()


def test_hpack_bomb(h2):
    """A 4 KB field stored in the dynamic table and referenced 4,000 times: 16 MB decoded from 8 KB."""
    with h2.client() as client:
        stored = client.block([("x-bomb", "v" * 4000)])  # literal with incremental indexing: dynamic index 62
        block = client.block(request_fields("GET", "/bomb")) + stored + b"\xbe" * 4000
        stream = client.new_stream()
        client.frame(HeadersFrame(stream, block, flags=["END_STREAM", "END_HEADERS"]))
        answer = client.answer(stream, timeout=5)
        assert answer.status in (None, 431), answer
    assert h2.seen("/bomb") == []
    h2.assert_answering()


def test_continuation_flood(h2):
    """1,000 CONTINUATION frames of 4 KB and no END_HEADERS (CVE-2024-27316): the connection is closed."""
    with h2.client() as client:
        stream = client.new_stream()
        client.frame(HeadersFrame(stream, client.block(request_fields("GET", "/continuation")), flags=["END_STREAM"]))
        started, sent = time.monotonic(), 0
        while sent < 1000 and time.monotonic() - started < FLOOD_SECONDS:
            if not client.frame(ContinuationFrame(stream, client.block([("x-more", "v" * 4000)]))):
                break
            sent += 1
        client.pump(lambda: client.goaway is not None, timeout=5)
        assert client.goaway is not None or client.closed, f"the connection is still open after {sent} CONTINUATION frames"
    assert h2.seen("/continuation") == []
    h2.assert_answering()


def test_rapid_reset(h2):
    """Streams opened and reset at once, 1,000 of them (CVE-2023-44487): the connection is closed."""
    with h2.client() as client:
        started, sent = time.monotonic(), 0
        while sent < 1000 and time.monotonic() - started < FLOOD_SECONDS:
            # The attack's shape: HEADERS and RST_STREAM in one write, so no server sees the stream
            # open without its reset (two writes let a loaded server hand a few streams over first).
            stream = client.new_stream()
            frames = client.header_frames(stream, request_fields("GET", "/rapid-reset"), end_stream=True)
            if not client.frame(*frames, RstStreamFrame(stream, error_code=0x8)):
                break
            sent += 1
        client.pump(lambda: client.goaway is not None, timeout=5)
        assert client.goaway is not None or client.closed, f"the connection is still open after {sent} resets"
    assert len(h2.seen("/rapid-reset")) <= MAX_STREAMS
    h2.assert_answering()


def flood(h2: H2Served, frame: bytes, *, settings: dict[int, int] | None = None, opener: bool = False) -> None:
    """Send FLOOD_FRAMES copies of a frame, reading nothing back, and check memory and a fresh connection."""
    before = h2.memory_kb()
    with h2.client(settings=settings) as client:
        if opener:
            client.request([*request_fields("POST", "/flood"), ("content-length", "10")], end=False)
        batch = frame * 1000
        started, sent = time.monotonic(), 0
        while sent < FLOOD_FRAMES and time.monotonic() - started < FLOOD_SECONDS:
            if not client.send(batch):
                break
            sent += 1000
        h2.assert_answering()
        grown = h2.memory_kb() - before
        assert grown < FLOOD_MEMORY_KB, f"{sent} frames grew the server by {grown} kB"
    h2.assert_answering()


def test_ping_flood(h2):
    """PINGs whose acknowledgements the client never reads (CVE-2019-9512)."""
    flood(h2, PingFrame(0, b"01234567").serialize())


def test_settings_flood(h2):
    """SETTINGS frames whose acknowledgements the client never reads (CVE-2019-9515)."""
    flood(h2, SettingsFrame(0, settings={SettingsFrame.MAX_HEADER_LIST_SIZE: 65536}).serialize())


def test_empty_frame_flood(h2):
    """Empty DATA frames on one open stream (CVE-2019-9518)."""
    flood(h2, DataFrame(1, b"").serialize(), opener=True)
    assert h2.seen("/flood") == []


def test_streams_beyond_the_announced_limit_are_refused(h2):
    with h2.client() as client:
        client.pump(lambda: SettingsFrame.MAX_CONCURRENT_STREAMS in client.server_settings, timeout=5)
        if client.server_settings[SettingsFrame.MAX_CONCURRENT_STREAMS] != MAX_STREAMS:
            gap(h2, "streams-limit")
        assert client.server_settings[SettingsFrame.MAX_CONCURRENT_STREAMS] == MAX_STREAMS
        streams = [client.request(request_fields("GET", "/sleep?s=0.05")) for _ in range(MAX_STREAMS + 10)]
        client.pump(lambda: all(client.streams[stream].done for stream in streams), timeout=15)
        answers = [client.streams[stream] for stream in streams]
    if not all(answer.status == 200 or answer.reset == REFUSED_STREAM for answer in answers):
        gap(h2, "streams-beyond-the-limit")
    assert all(answer.status == 200 or answer.reset == REFUSED_STREAM for answer in answers), answers
    assert sum(answer.reset == REFUSED_STREAM for answer in answers) >= 10
    assert len(h2.seen("/sleep")) == sum(answer.status == 200 for answer in answers)
    h2.assert_answering()


def test_unread_answers_cost_only_their_streams(h2):
    """Streams whose streamed answers the client's zero window keeps back: everyone else is still answered.

    Last in the module: an adapter that cannot hold it stops answering until
    the client goes away.
    """
    client = h2.client(settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}, auto_window=False)
    try:
        streams = [client.request(request_fields("GET", "/stream?chunks=8")) for _ in range(MAX_STREAMS)]
        client.pump(lambda: all(client.streams[stream].status for stream in streams), timeout=5)
        assert all(client.streams[stream].body == b"" for stream in streams)
        answer = fresh_answer(h2.host, h2.port, "/fresh", timeout=1.0)
        if answer.status != 200:
            gap(h2, "unread-answers")
        assert answer.status == 200, f"a fresh connection got {answer} within 1 s"
    finally:
        client.close()
    # Once the client goes away, its streams' threads come back.
    deadline = time.monotonic() + 10
    while fresh_answer(h2.host, h2.port, "/fresh", timeout=1.0).status != 200 and time.monotonic() < deadline:
        pass
    h2.assert_answering()


# -- on or off by default ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("adapter", "setting"),
    [(adapter, None) for adapter in HTTP2_ADAPTERS if adapter not in HTTP2_BY_DEFAULT]
    + [(adapter, "false") for adapter in HTTP2_BY_DEFAULT],
)
def test_http2_is_off_by_default_or_when_turned_off(adapter, setting, tmp_path):
    settings = {} if setting is None else {"SERVER_HTTP2": setting}
    served = serve(adapter, tmp_path, scenario="h2_echo", SEEN_LOG=str(tmp_path / "seen.jsonl"), **settings)
    try:
        answer = fresh_answer(served.server.host, served.server.port, "/h2", timeout=2.0)
        assert answer.status is None, f"HTTP/2 answered {answer} with SERVER_HTTP2={setting}"
        assert not (tmp_path / "seen.jsonl").exists()
        assert requests.get(served.url + "/h1", timeout=5).status_code == 200
    finally:
        served.server.stop()


@pytest.fixture(scope="module", params=HTTP2_BY_DEFAULT)
def by_default(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """An adapter serving HTTP/2 by default, started without SERVER_HTTP2."""
    folder = tmp_path_factory.mktemp(f"h2-default-{request.param}")
    served = serve(request.param, folder, scenario="h2_echo", SEEN_LOG=str(folder / "seen.jsonl"))
    with served.server:
        yield served


@pytest.mark.parametrize("flag", ["--http2-prior-knowledge", "--http2"])
def test_http2_is_on_by_default_where_the_server_bounds_it(by_default, flag):
    """Prior knowledge, and Upgrade: h2c, with Debian's curl, on the port HTTP/1.1 is served on."""
    _, version, result = curl(by_default.url + "/curl", "-s", flag)
    assert version == "2", result.stdout
    assert requests.get(by_default.url + "/h1", timeout=5).status_code == 200


def test_concurrent_streams_on_one_connection_are_each_one_call(by_default):
    async def many() -> list[httpx.Response]:
        async with httpx.AsyncClient(http1=False, http2=True, timeout=10) as client:
            return await asyncio.gather(*(client.get(f"{by_default.url}/stream-{n}", headers={"X-Request-Id": f"h2-{n}"}) for n in range(8)))

    answers = asyncio.run(many())
    assert {answer.http_version for answer in answers} == {"HTTP/2"}
    assert [answer.status_code for answer in answers] == [200] * 8
    assert [answer.headers["x-request-id"] for answer in answers] == [f"h2-{n}" for n in range(8)]
    seen = [call["path"] for call in json_lines(by_default.folder / "seen.jsonl")]
    assert sorted(path for path in seen if path.startswith("/stream-")) == sorted(f"/stream-{n}" for n in range(8))


@pytest.mark.parametrize("adapter", [adapter for adapter in HTTP_ADAPTERS if adapter not in HTTP2_ADAPTERS])
def test_http2_on_an_adapter_without_it_is_refused_with_one_line(adapter):
    result = run_to_exit(SERVE, base_env(SERVER_ADAPTER=adapter, SERVER_HTTP2="true", HANDLER_FOLDER=function_folder("h2_echo")))
    assert result.returncode == 2, result
    assert result.stderr.strip().splitlines() == [
        f"funcwsgi: error: SERVER_HTTP2=true is refused with SERVER_ADAPTER='{adapter}': HTTP/2 is served by {', '.join(HTTP2_ADAPTERS)} only"
    ]


@pytest.mark.slow("starts a bare granian and pauses before the trailers, as the upstream report's reproduction does")
def test_bare_granian_with_http2_on_serves_a_pseudo_header_in_trailers():
    """granian's own behaviour, with HTTP/2 explicitly on and nothing of funcwsgi's: the reproduction
    reported upstream (tests/support/granian_trailers.py; docs/reliability.md#reported-upstream).

    Each case (WSGI and ASGI, the trailers at once or half a second after the body) is answered 200
    with the application's whole answer, the application having seen the request's own path and its
    whole body, no trailers. Strict: once granian refuses the request this fails, and the
    pseudo-header-in-trailers gaps (GAPS) and the docs' lines about them must go.
    """
    script = REPO / "tests" / "support" / "granian_trailers.py"
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=False)
    cases = [line for line in result.stdout.splitlines() if line.startswith(("wsgi,", "asgi,"))]
    served = [line for line in cases if 'status 200, body \'{"path": "/", "body": "abcd"}\', RST_STREAM None, GOAWAY None: SERVED' in line]
    assert (result.returncode, len(cases), len(served)) == (1, 4, 4), result.stdout + result.stderr


def test_the_gaps_are_said_at_start_up(h2):
    """An adapter with a gap says so when it starts with SERVER_HTTP2=true, naming the page that explains it."""
    warned = [record["message"] for record in h2.served.records() if "docs/servers.md#http2" in record.get("message", "")]
    has_gaps = any(adapter == h2.adapter for adapter, _ in GAPS)
    assert len(warned) == (1 if has_gaps else 0), warned


# -- async def functions on gunicorn: HTTP/2 as for plain ones ---------------------------------


@pytest.fixture(scope="module")
def loop_on_gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """An async def function on the default server, as it starts by default (gunicorn, funcwsgi's edge worker)."""
    folder = tmp_path_factory.mktemp("h2-loop-gunicorn")
    served = serve("gunicorn", folder, scenario="h2_echo", HANDLER_MODULE_NAME="handler_async", SEEN_LOG=str(folder / "seen.jsonl"))
    with served.server:
        yield served


@pytest.mark.parametrize("flag", ["--http2-prior-knowledge", "--http2"])
def test_an_async_function_on_gunicorn_serves_http2_by_default(loop_on_gunicorn, flag):
    """Prior knowledge and Upgrade: h2c reach an async def function as they reach a plain one (issue 42)."""
    body, version, result = curl(loop_on_gunicorn.url + "/upgrade", "-sS", "--max-time", "5", flag, "--data-binary", "from curl")
    assert version == "2", result
    assert json.loads(body)["path"] == "/upgrade"
    assert json.loads(body)["body"] == "from curl"
    calls = [call for call in json_lines(loop_on_gunicorn.folder / "seen.jsonl") if call["path"] == "/upgrade"]
    assert calls and {call["protocol"] for call in calls} == {"HTTP/2"}
    assert loop_on_gunicorn.get("/h1").status_code == 200
