"""h2c on funcwsgi's edge worker (funcwsgi/adapters/gunicorn/http2.py), on real gunicorn processes.

What every HTTP/2 server must hold is in tests/reliability/test_http2.py and
the conformance kit over h2c; here is what is the edge's own: the
``Upgrade: h2c`` hand-over with a body, streams of one connection running at
once, a malformed stream costing only itself, the send timeout on a stream
whose window stays shut, a body past the limit without a ``content-length``,
answers larger than the windows, and the peers that may speak HTTP/2. One
test runs the edge in this process, on a loop in a thread as the worker runs
it, to see when calls start against the loop's reads.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import hpack
import pytest
from gunicorn.config import Config as GunicornConfig
from hyperframe.frame import SettingsFrame, WindowUpdateFrame

from funcwsgi.adapters.gunicorn import gunicorn_settings
from funcwsgi.adapters.gunicorn.edge import Edge
from funcwsgi.adapters.gunicorn.http1 import Http1Connection
from funcwsgi.adapters.gunicorn.http2 import Http2Connection
from funcwsgi.adapters.gunicorn.http2_on_demand import install
from funcwsgi.application import FunctionService
from funcwsgi.config import Config
from funcwsgi.handler.loader import load_function

from ...reliability.h2_client import PREFACE, PROTOCOL_ERROR, REFUSED_STREAM, RawH2, request_fields
from ...support.logs import json_lines
from ...support.paths import FUNCTIONS
from ...support.processes import BIN, Server, debian_tool, start

EDGE = [str(BIN / "gunicorn"), "-c", "python:funcwsgi.gunicorn_conf", "-k", "funcwsgi.adapters.gunicorn.worker.HttpEdgeWorker", "funcwsgi:app"]
CANCEL = 0x8
MAX_BODY = 4096
SEND_TIMEOUT = 1.0
KEEPALIVE = 2.0


@pytest.fixture(scope="module")
def seen_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("edge-h2") / "seen.jsonl"


@pytest.fixture(scope="module")
def server(seen_log: Path) -> Iterator[Server]:
    settings = {
        "SERVER_NUMTHREADS": "4",
        "SERVER_HTTP2_MAX_STREAMS": "8",
        "SERVER_MAX_BODY_SIZE": str(MAX_BODY),
        "SERVER_SEND_TIMEOUT": str(SEND_TIMEOUT),
        "SERVER_KEEPALIVE_TIMEOUT": str(KEEPALIVE),
        "SEEN_LOG": str(seen_log),
    }
    with start(EDGE, "h2_echo", **settings) as running:
        yield running


def seen(log: Path, path: str) -> list[dict[str, object]]:
    return [call for call in json_lines(log) if call["path"] == path]


def upgraded(port: int, path: str, body_parts: list[bytes]) -> tuple[bytes, int, bytes]:
    """An HTTP/1.1 request asking Upgrade: h2c (the h2 library as the client): the 101's head, and stream 1's status and body."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    settings = client.initiate_upgrade_connection()
    assert settings is not None
    body = b"".join(body_parts)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: edge\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        f"HTTP2-Settings: {settings.decode()}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head + body_parts[0])
        for part in body_parts[1:]:
            time.sleep(0.1)  # the body in parts, as a slow client sends it
            sock.sendall(part)
        received = b""
        while b"\r\n\r\n" not in received:
            received += sock.recv(65536)
        switching, _, rest = received.partition(b"\r\n\r\n")
        sock.sendall(client.data_to_send())  # the preface, after the 101 (RFC 7540 section 3.5)
        status, answer, ended = 0, b"", False
        events = client.receive_data(rest) if rest else []
        while True:
            for event in events:
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 1:
                    status = int(dict(event.headers)[b":status"])
                elif isinstance(event, h2.events.DataReceived) and event.stream_id == 1:
                    answer += event.data
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == 1:
                    ended = True
            sock.sendall(client.data_to_send())
            if ended:
                return switching, status, answer
            data = sock.recv(65536)
            assert data, "the connection closed before stream 1 was answered"
            events = client.receive_data(data)


def test_an_upgrade_request_with_a_body_is_stream_1(server, seen_log):
    """RFC 7540 section 3.2: 101, then the upgrading request answered on stream 1, its body read over HTTP/1.1."""
    switching, status, answer = upgraded(server.port, "/upgraded", [b"half", b" and half"])
    assert switching.startswith(b"HTTP/1.1 101 ") and b"upgrade: h2c" in switching.lower(), switching
    assert status == 200 and json.loads(answer)["body"] == "half and half"
    (call,) = seen(seen_log, "/upgraded")
    assert (call["protocol"], call["body"]) == ("HTTP/2", "half and half")
    assert not {"upgrade", "http2-settings", "connection"} & set(call["headers"])  # HTTP/1.1's own fields stay behind


def test_the_streams_of_one_connection_are_called_at_once(server):
    """Each stream is its own call, on its own thread: four calls of a second each take about a second, not four."""
    with RawH2("127.0.0.1", server.port) as client:
        began = time.monotonic()
        streams = [client.get("/sleep?s=1") for _ in range(4)]
        client.pump(lambda: all(client.streams[stream].done for stream in streams), timeout=10)
        took = time.monotonic() - began
        assert [client.streams[stream].status for stream in streams] == [200] * 4
    assert took < 3.0, f"four one-second calls on one connection took {took:.1f} s"


@pytest.mark.parametrize(
    "fields, trailers",
    [
        pytest.param([*request_fields("GET", "/malformed"), ("X-Upper", "1")], None, id="uppercase-name"),
        pytest.param([*request_fields("GET", "/malformed"), ("connection", "keep-alive")], None, id="connection-specific"),
        pytest.param([*request_fields("GET", "/malformed"), ("x-value", " padded")], None, id="edge-whitespace"),
        pytest.param(request_fields("POST", "/malformed"), [(":path", "/elsewhere")], id="pseudo-header-in-trailers"),
    ],
)
def test_a_malformed_stream_is_reset_alone_and_the_connection_serves_on(server, seen_log, fields, trailers):
    with RawH2("127.0.0.1", server.port) as client:
        bad = client.request(fields, b"body" if trailers else None, trailers=trailers)
        assert client.answer(bad).reset == PROTOCOL_ERROR
        good = client.get("/after-malformed")
        assert client.answer(good).status == 200
        assert client.goaway is None
    assert seen(seen_log, "/malformed") == []


def test_streams_past_the_limit_are_refused_and_the_connection_serves_on(server):
    with RawH2("127.0.0.1", server.port) as client:
        client.pump(lambda: SettingsFrame.MAX_CONCURRENT_STREAMS in client.server_settings)
        assert client.server_settings[SettingsFrame.MAX_CONCURRENT_STREAMS] == 8
        streams = [client.get("/sleep?s=0.3") for _ in range(12)]
        client.pump(lambda: all(client.streams[stream].done for stream in streams), timeout=10)
        answers = [client.streams[stream] for stream in streams]
        assert sum(answer.status == 200 for answer in answers) == 8
        assert sum(answer.reset == REFUSED_STREAM for answer in answers) == 4
        assert client.answer(client.get("/after-refusals")).status == 200
        assert client.goaway is None


def test_a_stream_whose_window_stays_shut_is_reset_after_the_send_timeout(server):
    """The client takes nothing of one answer: that stream is reset (CANCEL); the connection and its other streams live on."""
    with RawH2("127.0.0.1", server.port, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}, auto_window=False) as client:
        began = time.monotonic()  # before the request: the server's clock for the stall cannot start earlier
        stalled = client.get("/stream?chunks=4")
        client.pump(lambda: client.streams[stalled].done, timeout=SEND_TIMEOUT + 5)
        assert client.streams[stalled].reset == CANCEL
        assert SEND_TIMEOUT <= time.monotonic() - began < SEND_TIMEOUT + 3
        fresh = client.get("/fresh")
        client.frame(WindowUpdateFrame(fresh, window_increment=65535))
        assert client.answer(fresh).status == 200


def test_a_whole_answer_the_window_holds_back_goes_once_the_client_opens_it(server):
    """A one-frame answer on a stream whose window is shut waits for the client's WINDOW_UPDATE, then arrives whole."""
    with RawH2("127.0.0.1", server.port, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}, auto_window=False) as client:
        stream = client.get("/held")
        client.pump(lambda: client.streams[stream].status is not None, timeout=5)
        client.pump(lambda: client.streams[stream].done, timeout=0.3)
        assert client.streams[stream].status == 200 and client.streams[stream].body == b"" and not client.streams[stream].done
        client.frame(WindowUpdateFrame(stream, window_increment=65535))
        answer = client.answer(stream)
    assert answer.ended and json.loads(answer.body)["path"] == "/held"


def test_an_answer_larger_than_the_windows_arrives_whole(server):
    with RawH2("127.0.0.1", server.port) as client:
        answer = client.answer(client.get("/stream?chunks=64"), timeout=10)  # 1 MiB through 64 KiB windows
    assert answer.ended and len(answer.body) == 64 * 16384


def test_a_body_past_the_limit_without_a_content_length_gets_413(server, seen_log):
    with RawH2("127.0.0.1", server.port) as client:
        answer = client.answer(client.request(request_fields("POST", "/too-long"), [b"x" * 3000, b"x" * 3000]))
        assert answer.status == 413
        assert client.answer(client.get("/after-413")).status == 200
    assert seen(seen_log, "/too-long") == []


def test_an_idle_connection_gets_goaway_after_the_keepalive_timeout(server):
    with RawH2("127.0.0.1", server.port) as client:
        assert client.answer(client.get("/before-idle")).status == 200
        client.pump(lambda: client.goaway is not None and client.closed, timeout=KEEPALIVE + 3)
        assert (client.goaway, client.closed) == (0, True)


def test_only_trusted_peers_get_http2(seen_log):
    """gunicorn's forwarded_allow_ips, as for its own h2c: from elsewhere a preface gets 400, an upgrade is not made."""
    with start(EDGE, "h2_echo", FORWARDED_ALLOW_IPS="10.0.0.1", SEEN_LOG=str(seen_log)) as elsewhere:
        with socket.create_connection(("127.0.0.1", elsewhere.port), timeout=5) as sock:
            sock.sendall(PREFACE + SettingsFrame(0).serialize())
            assert sock.recv(100).startswith(b"HTTP/1.1 400 ")
        curl = subprocess.run(
            [debian_tool("curl", "curl"), "-sS", "--http2", "-w", "\n%{http_version}", f"http://127.0.0.1:{elsewhere.port}/not-upgraded"],
            capture_output=True, text=True, timeout=10, check=True,
        )
        assert curl.stdout.rpartition("\n")[2] == "1.1"


def test_an_http2_connection_gives_its_place_back_when_it_closes(seen_log):
    """At SERVER_MAX_CONNECTIONS=2, ten HTTP/2 connections one after another, then HTTP/1.1: each is let in at once."""
    with start(EDGE, "h2_echo", SERVER_MAX_CONNECTIONS="2", SEEN_LOG=str(seen_log)) as small:
        for n in range(10):
            with RawH2("127.0.0.1", small.port, timeout=2) as client:
                assert client.answer(client.get(f"/place-{n}"), timeout=2).status == 200, f"connection {n}"
        with socket.create_connection(("127.0.0.1", small.port), timeout=2) as sock:
            sock.sendall(b"GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 200 ")


def posts_called(port: int) -> float:
    with RawH2("127.0.0.1", port) as client:
        text = client.answer(client.get("/metrics")).body.decode()
    return float(re.search(r'^function_calls_total\{method="POST"\} (\S+)$', text, re.MULTILINE).group(1))  # type: ignore[union-attr]


def test_trailers_after_a_body_past_the_limit_start_no_second_call(server, seen_log):
    """A content-length past the limit is answered at its head (one call, the 413); the trailers that end the stream later start none."""
    before = posts_called(server.port)
    with RawH2("127.0.0.1", server.port) as client:
        fields = [*request_fields("POST", "/past-limit-trailers"), ("content-length", str(MAX_BODY + 1))]
        stream = client.request(fields, b"x" * (MAX_BODY + 1), trailers=[("x-checksum", "1")])
        assert client.answer(stream).status == 413
        assert client.answer(client.get("/after-trailers")).status == 200
    assert posts_called(server.port) == before + 1
    assert seen(seen_log, "/past-limit-trailers") == []


def one_get(port: int, path: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """A GET on a new h2c connection (prior knowledge): the bytes received and the answer's fields."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    client.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "edge")], end_stream=True)
    raw, headers, ended = b"", [], False
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(client.data_to_send())
        while not ended:
            data = sock.recv(65536)
            assert data, "closed before the answer"
            raw += data
            for event in client.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    headers = event.headers
                ended = ended or isinstance(event, h2.events.StreamEnded)
            sock.sendall(client.data_to_send())
    return raw, headers


def test_an_answers_request_id_is_sent_plain_and_kept_out_of_the_hpack_table(server):
    """No Huffman coding (its CPU outweighs its bytes on a local hop), and the per-answer x-request-id never indexed."""
    raw, headers = one_get(server.port, "/plain")
    (request_id,) = [header for header in headers if header[0] == b"x-request-id"]
    assert isinstance(request_id, hpack.NeverIndexedHeaderTuple)
    assert request_id[1] in raw and b"application/json" in raw  # as sent, not Huffman-coded


def test_an_answer_carries_one_date_field_as_over_http1(server):
    """RFC 9110 section 6.6.1: an origin server with a clock sends Date; the edge's HTTP/1.1 answers do."""
    before = time.time()
    _, headers = one_get(server.port, "/plain")
    (date,) = [value for name, value in headers if name == b"date"]
    sent = email.utils.parsedate_to_datetime(date.decode()).timestamp()
    assert before - 1 <= sent <= time.time() + 1


def test_the_calls_of_streams_read_in_one_turn_of_the_loop_start_together_after_its_reads(monkeypatch):
    """Three connections' requests, read in one turn of the loop, start their calls after its reads, one after another.

    A call started from inside a read wakes its thread, which takes the GIL the
    loop lets go of between two reads: four thread switches a call under h2load,
    against one when the turn's calls start at its end (docs/performance.md#http2).
    """
    config = Config.from_env({"HANDLER_FOLDER": str(FUNCTIONS / "hello"), "SERVER_NUMTHREADS": "4"})
    cfg = GunicornConfig()
    for name, value in gunicorn_settings(config).items():
        if name in cfg.settings:
            cfg.set(name, value)
    loop = asyncio.new_event_loop()
    edge = Edge(FunctionService(config, load_function(config)), cfg, loop)
    install(edge, cfg)
    seen: list[str] = []  # "read", "start" (the latter "start in a read" when a read started it)
    reading = Http2Connection.data_received

    def read(conn: Http2Connection, data: bytes) -> None:
        seen.append("read")
        conn.reading = True
        try:
            reading(conn, data)
        finally:
            conn.reading = False

    run = edge.runner.start

    def started(stream: Any) -> None:
        seen.append("start in a read" if getattr(stream.conn, "reading", False) else "start")
        run(stream)

    monkeypatch.setattr(Http2Connection, "data_received", read)
    edge.runner.start = started
    server = loop.run_until_complete(loop.create_server(lambda: Http1Connection(edge), "127.0.0.1", 0))
    serving = threading.Thread(target=loop.run_forever, daemon=True)
    serving.start()
    held, release = threading.Event(), threading.Event()
    loop.call_soon_threadsafe(lambda: (held.set(), release.wait(10)))  # the loop waits while all three requests arrive
    try:
        assert held.wait(5)
        clients = [RawH2("127.0.0.1", server.sockets[0].getsockname()[1]) for _ in range(3)]
        streams = [client.get("/") for client in clients]
        release.set()
        assert [client.answer(stream).status for client, stream in zip(clients, streams, strict=True)] == [204, 204, 204]
        first = seen.index("start") if "start" in seen else len(seen)
        assert "start in a read" not in seen
        assert seen[first : first + 3] == ["start"] * 3 and seen[:first].count("read") >= 3
        for client in clients:
            client.close()
    finally:
        release.set()
        loop.call_soon_threadsafe(loop.stop)
        serving.join(5)
        server.close()
        edge.runner.shutdown()
        loop.close()
