"""What the edge sends of an answer HTTP does not allow, and how it reads Expect and Connection (RFC 9110, RFC 9112).

One gunicorn process with the edge worker serves tests/functions/http_rules, whose
paths answer as they are told (a raw WSGI app), whatever HTTP allows. Each case
is sent raw, with a plain request pipelined behind it where the framing matters:
that one must be answered, once, as itself.
"""

from __future__ import annotations

import re

import pytest

from ...support.processes import SERVE, start
from ...support.sockets import connect, one_answer, sent_until_closed, status_of, until_closed

PLAIN = b"GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def edge():
    with start(SERVE, "http_rules", SERVER_ADAPTER="gunicorn", SERVER_NUMTHREADS="2", SERVER_WORKERS="1", SERVER_HTTP2="false") as server:
        yield server


def get(path: str, extra: bytes = b"") -> bytes:
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n"


def answers(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (head, body) of each answer in ``data``, each framed by its Content-Length; what is left over last, head empty."""
    found = []
    while data:
        head, separator, rest = data.partition(b"\r\n\r\n")
        match = re.search(rb"(?im)^content-length: *(\d+)\r?$", head)
        if not separator or match is None:
            found.append((b"", data))
            break
        length = int(match.group(1))
        found.append((head, rest[:length]))
        data = rest[length:]
    return found


def pipelined(port: int, first: bytes) -> list[tuple[bytes, bytes]]:
    """``first`` and a plain request behind it, in one write: the answers, once the server closed the connection."""
    return answers(sent_until_closed(port, first + PLAIN)[0])


def lengths(head: bytes) -> list[bytes]:
    return re.findall(rb"(?im)^content-length: *(\S*)\r?$", head)


# -- a body longer or shorter than the function's own Content-Length (RFC 9112 section 6.3) ---------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [("/longer-than-length", b"hel"), ("/longer-than-length-streamed", b"aaa"), ("/longer-than-length-pieces", b"aabbc")],
)
def test_a_body_longer_than_its_length_is_cut_at_it_and_the_connection_goes_on(edge, path, body):
    """The bytes past the length would be read as the next answer (the pipelined request's): never sent."""
    [(head, sent), (plain_head, plain_body)] = pipelined(edge.port, get(path))
    assert (status_of(head), sent) == (200, body)
    assert b"connection: close" not in head.lower()
    assert (status_of(plain_head), plain_body) == (200, b"plain")
    edge.wait_for_output("wrote more than its Content-Length")


def test_a_body_shorter_than_its_length_closes_the_connection(edge):
    with connect(edge.port) as sock:
        sock.sendall(get("/shorter-than-length"))
        received, took = until_closed(sock, limit=5)
    assert received.startswith(b"HTTP/1.1 200 ") and received.endswith(b"\r\n\r\nabc")
    assert took < 4  # closed after the answer, not at the keep-alive timeout


# -- a head HTTP does not allow is the function's error: 500, and the connection goes on ----------------------------


@pytest.mark.parametrize(
    "query",
    ["v=-1", "v=%2B5", "v=%205", "v=5%20", "v=0_5", "v=0x5", "v=", "v=3&v=5"],
    ids=["minus", "plus", "leading-space", "trailing-space", "underscore", "hex", "empty", "two-differing"],
)
def test_a_content_length_that_is_not_1_digit_is_the_functions_500(edge, query):
    """RFC 9110 section 8.6: Content-Length = 1*DIGIT, and several must agree (int() takes "-1", "+5", " 5", "0_5")."""
    [(head, body), (plain_head, plain_body)] = pipelined(edge.port, get("/length?" + query))
    assert (status_of(head), body) == (500, b"Internal Server Error")
    assert lengths(head) == [b"21"]
    assert (status_of(plain_head), plain_body) == (200, b"plain")


def test_the_same_content_length_twice_goes_out_once(edge):
    [(head, body), (plain_head, _)] = pipelined(edge.port, get("/length?v=3&v=3"))
    assert (status_of(head), body, lengths(head)) == (200, b"abc", [b"3"])
    assert status_of(plain_head) == 200


@pytest.mark.parametrize("name", ["X%20Bad", "X-A:%20injected", "", "X(", "X%09Tab"], ids=["space", "colon", "empty", "paren", "tab"])
def test_a_field_name_that_is_not_a_token_is_the_functions_500(edge, name):
    """RFC 9110 section 5.1: field-name = token. "X-A: injected" would go out as a field the function never named."""
    [(head, body), (plain_head, _)] = pipelined(edge.port, get("/name?n=" + name))
    assert (status_of(head), body) == (500, b"Internal Server Error")
    assert b"injected" not in head and b"bad" not in head.lower()
    assert status_of(plain_head) == 200


def test_the_status_line_keeps_the_space_before_an_empty_reason(edge):
    """RFC 9112 section 4: status-line = HTTP-version SP status-code SP [ reason-phrase ]."""
    for status in ("200", "200%20"):
        [(head, body), _] = pipelined(edge.port, get("/status?s=" + status))
        assert head.startswith(b"HTTP/1.1 200 \r\n") and body == b"abc"


def test_a_functions_upgrade_field_is_dropped(edge):
    """Upgrade means nothing without Connection: upgrade (RFC 9110 section 7.8), which only a 101 carries."""
    [(head, body), _] = pipelined(edge.port, get("/upgrade"))
    assert (status_of(head), body) == (200, b"abc")
    assert b"upgrade" not in head.lower()


def test_an_interim_status_on_a_head_request_is_a_bodiless_500(edge):
    received, _ = sent_until_closed(edge.port, b"HEAD /interim?code=100 HTTP/1.1\r\nHost: x\r\n\r\n" + PLAIN)
    head, _, rest = received.partition(b"\r\n\r\n")
    assert status_of(head) == 500 and b"100 Continue" not in received
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and rest.endswith(b"\r\n\r\nplain")  # nothing of a body before it


# -- what a request asks (RFC 9110 section 10.1.1, RFC 9112 section 9.6) -----------------------------------------------

POST_EXPECTING = b"POST /plain HTTP/%s\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"


def test_expect_100_continue_is_ignored_on_http_1_0(edge):
    """RFC 9110 section 10.1.1: MUST ignore it on HTTP/1.0; section 15.2: no 1xx to an HTTP/1.0 client."""
    with connect(edge.port) as sock:
        sock.sendall(POST_EXPECTING % b"1.0")
        sock.settimeout(1)
        try:
            early = sock.recv(65536)
        except TimeoutError:
            early = b""
        assert early == b""  # nothing before the body came
        sock.sendall(b"abc")
        received, _ = until_closed(sock)
    answer = early + received
    assert b"100 Continue" not in answer and status_of(answer) == 200 and answer.endswith(b"plain")


def test_expect_100_continue_is_answered_on_http_1_1(edge):
    with connect(edge.port) as sock:
        sock.sendall(POST_EXPECTING % b"1.1")
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"abc")
        received, _ = until_closed(sock)
    assert status_of(received) == 200 and received.endswith(b"plain")


@pytest.mark.parametrize(
    "connection",
    [b"Connection: close, keep-alive\r\n", b"Connection: keep-alive, close\r\n", b"Connection: keep-alive\r\nConnection: close\r\n"],
    ids=["close-first", "close-last", "two-lines"],
)
def test_close_wins_over_keep_alive_on_http_1_0(edge, connection):
    """RFC 9112 section 9.6: a request with the close option closes its connection (llhttp let keep-alive win on HTTP/1.0)."""
    with connect(edge.port) as sock:
        sock.sendall(b"GET /plain HTTP/1.0\r\nHost: x\r\n" + connection + b"\r\n")
        received, took = until_closed(sock, limit=5)
    assert status_of(received) == 200 and b"connection: close" in received.lower()
    assert took < 4


def test_keep_alive_alone_keeps_an_http_1_0_connection(edge):
    with connect(edge.port) as sock:
        for _ in range(2):
            answer = one_answer(sock, b"GET /plain HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
            assert status_of(answer) == 200 and b"connection: keep-alive" in answer.lower()


# -- Host (RFC 9112 section 3.2): the edge refuses before the function, and closes -----------------------------------


@pytest.mark.parametrize("host", [b"a b", b"x/y", b"x@y", b"x:abc", b"x:1:2", b"[::1"])
def test_a_host_that_is_no_host_is_refused_and_the_connection_closed(edge, host):
    received, took = sent_until_closed(edge.port, b"GET /host HTTP/1.1\r\nHost: " + host + b"\r\n\r\n" + PLAIN)
    assert received.startswith(b"HTTP/1.1 400 ") and received.endswith(b"the request's Host field is not a host and port")
    assert took < 4


def test_a_host_seen_valid_is_served_again(edge):
    with connect(edge.port) as sock:
        for _ in range(3):
            answer = one_answer(sock, b"GET /host HTTP/1.1\r\nHost: again.example:81\r\n\r\n")
            assert status_of(answer) == 200 and answer.endswith(b"again.example:81")
