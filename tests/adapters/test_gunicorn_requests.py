"""What the gunicorn worker's loop makes of a request's bytes as they arrive (adapters/_requests.py), in-process."""

from __future__ import annotations

import pytest

from funcwsgi.adapters._requests import (
    BAD_CHUNKS,
    BAD_FRAMING,
    BAD_HOST,
    BAD_REQUEST,
    BODY_IN_MEMORY,
    HEAD_LIMIT,
    HEAD_TOO_LARGE,
    UNKNOWN_CODING,
    URI_TOO_LONG,
    ChunkedScan,
    Limits,
    PendingRequest,
    Ready,
)

LIMITS = Limits(request_line=4094, body=1_000_000)


def feed_bytewise(request: PendingRequest, data: bytes):
    outcome = None
    for i in range(len(data)):
        outcome = request.feed(data[i : i + 1])
        if outcome is not None:
            return outcome, i + 1
    return outcome, len(data)


def test_a_request_without_a_body_is_ready_at_the_end_of_its_head_and_not_before():
    data = b"GET /x?y=1 HTTP/1.1\r\nHost: a\r\n\r\n"
    outcome, used = feed_bytewise(PendingRequest(LIMITS), data)
    assert isinstance(outcome, Ready) and outcome.buffered and used == len(data)


def test_empty_lines_before_the_request_line_are_skipped():
    request = PendingRequest(LIMITS)
    assert isinstance(request.feed(b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"), Ready)
    assert request.method == b"GET" and request.path == b"/"


def test_a_body_with_content_length_is_waited_for_then_kept_with_the_head():
    request = PendingRequest(LIMITS)
    assert request.feed(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab") is None
    assert request.head_complete and not request.wants_continue()
    assert isinstance(request.feed(b"cde"), Ready)
    assert request.unreader(None).buf.getvalue().endswith(b"\r\n\r\nabcde")


def test_a_large_body_goes_to_a_temporary_file():
    request = PendingRequest(LIMITS)
    body = b"x" * (BODY_IN_MEMORY + 10)
    assert isinstance(request.feed(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(body) + body), Ready)
    assert request.spool is not None and not request.body
    head = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(body)
    assert request.unreader(None).rest() == head + body  # the head in memory, then the file
    request.close()


def test_a_body_over_the_limit_is_handed_over_at_once_unbuffered():
    outcome = PendingRequest(LIMITS).feed(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000001\r\n\r\n")
    assert isinstance(outcome, Ready) and not outcome.buffered


@pytest.mark.parametrize(
    ("headers", "refusal"),
    [
        (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", BAD_FRAMING),
        (b"Content-Length: 5\r\nContent-Length: 6\r\n", BAD_FRAMING),
        (b"Content-Length: -1\r\n", BAD_FRAMING),
        (b"Content-Length: +5\r\n", BAD_FRAMING),
        (b"Transfer-Encoding: gzip\r\nContent-Length: 5\r\n", BAD_FRAMING),
        (b"Transfer-Encoding: chunked, gzip\r\n", BAD_FRAMING),
        (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", BAD_FRAMING),
        (b"Transfer-Encoding:\x0bchunked\r\n", BAD_FRAMING),
        (b"Transfer-Encoding: gzip, chunked\r\n", UNKNOWN_CODING),
        (b"Transfer-Encoding : chunked\r\n", BAD_REQUEST),
        (b"Transfer-Encoding:\r\n chunked\r\n", BAD_REQUEST),
        (b"Host: b\r\n", BAD_HOST),
    ],
    ids=["length-and-chunked", "two-lengths", "negative-length", "plus-length", "gzip-and-length", "chunked-not-last", "chunked-twice", "vertical-tab", "coding-before-chunked", "space-before-colon", "folded", "two-hosts"],
)
def test_framing_two_parsers_could_read_apart_is_refused_on_the_loop(headers, refusal):
    outcome = PendingRequest(LIMITS).feed(b"POST / HTTP/1.1\r\nHost: a\r\n" + headers + b"\r\nhello")
    assert outcome is refusal


@pytest.mark.parametrize("target", [b"*", b"x:80", b"x/y"])
def test_a_target_that_is_not_origin_or_absolute_form_is_refused(target):
    assert PendingRequest(LIMITS).feed(b"GET " + target + b" HTTP/1.1\r\nHost: a\r\n\r\n") is BAD_REQUEST


def test_an_absolute_form_target_is_framed_by_its_path():
    request = PendingRequest(LIMITS)
    assert isinstance(request.feed(b"GET http://a/healthz?x HTTP/1.1\r\nHost: a\r\n\r\n"), Ready)
    assert request.is_probe(frozenset({b"/healthz"}))


def test_http_1_0_needs_no_host_and_http_1_1_exactly_one():
    assert isinstance(PendingRequest(LIMITS).feed(b"GET / HTTP/1.0\r\n\r\n"), Ready)
    assert PendingRequest(LIMITS).feed(b"GET / HTTP/1.1\r\n\r\n") is BAD_HOST


def test_the_leftover_is_what_follows_the_body_as_this_framer_reads_it():
    request = PendingRequest(LIMITS)
    assert isinstance(request.feed(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\nGET / HT"), Ready)
    assert request.leftover_length == len(b"GET / HT")


def test_expect_100_continue_is_asked_for_until_sent_and_then_left_out_of_the_head():
    request = PendingRequest(LIMITS)
    assert request.feed(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n") is None
    assert request.wants_continue()
    request.continue_sent = True
    assert not request.wants_continue()
    assert isinstance(request.feed(b"ok"), Ready)
    assert b"expect" not in request.head_bytes().lower()


def test_heads_over_the_limits_are_refused():
    assert PendingRequest(LIMITS).feed(b"GET /" + b"a" * 5000) is URI_TOO_LONG
    assert PendingRequest(LIMITS).feed(b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: a\r\n\r\n") is URI_TOO_LONG
    assert PendingRequest(LIMITS).feed(b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"a" * HEAD_LIMIT) is HEAD_TOO_LARGE


def test_chunked_bodies_end_at_the_last_chunk_and_its_trailers():
    request = PendingRequest(LIMITS)
    data = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n10\r\n" + b"x" * 16 + b"\r\n0\r\nTrailer: t\r\n\r\n"
    outcome, used = feed_bytewise(request, data)
    assert isinstance(outcome, Ready) and outcome.buffered and used == len(data)


@pytest.mark.parametrize(
    "framing",
    [
        b"zz\r\nhello\r\n", b"3\r\nabcX\r\n", b"1" * 17 + b"\r\n", b";\r\n", b"3 \r\n", b" 3\r\n", b"0x3\r\n", b"+3\r\n",
        b"3\nabc\n", b"3;a\rb\r\n", b"3;a=\x00\r\n", b"0\r\nnocolon\r\n", b"0\r\nX: 1\r\n 2\r\n", b"0\r\nX: 1\r2\r\n", b"0\r\nX: 1\n\r\n",
    ],
)
def test_chunked_framing_that_is_not_chunked_is_refused_with_400(framing):
    request = PendingRequest(LIMITS)
    assert request.feed(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + framing) is BAD_CHUNKS


def test_a_chunk_line_that_never_ends_is_refused():
    with pytest.raises(ValueError):
        ChunkedScan().feed(b"a" * 5000)


def test_probe_paths_are_recognised_for_get_and_head_only():
    probes = frozenset({b"/healthz"})
    for method, expected in ((b"GET", True), (b"HEAD", True), (b"POST", False)):
        request = PendingRequest(LIMITS)
        request.feed(method + b" /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        assert request.is_probe(probes) is expected
