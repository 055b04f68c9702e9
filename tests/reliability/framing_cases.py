"""The request-framing corpus: requests whose length or target a server and a proxy in front of it could read differently.

Each case is raw bytes (``{P}`` stands for the case's own path
``/case/<name>``, ``{S}`` for a whole request to ``/smuggled/<name>`` hidden
where a lenient reader would take it for the next request) and what RFC 9112
asks of a server:

- ``REFUSE``: a 4xx (or 501) answer, the function not run, the connection closed;
- ``ACCEPT``: the function runs once on exactly ``body``;
- ``EITHER``: the RFC lets the server refuse or accept; if it accepts, the body is ``body``;
- ``PROBE``: answered by the runtime's probe, the function not run;
- ``IN_ORDER``: three pipelined requests, the function runs on each once, in order;
- ``NOT_RUN``: the client leaves mid-body; the function must not run at all;
- ``THEN_REFUSE``: a valid request, then bytes that are none: the function runs on the
  first, its answer comes first, then a 4xx and the close.

Every case but ``NOT_RUN`` is followed, on the same connection, by an
innocent ``GET /innocent/<name>``: it must reach the function exactly once,
or the connection must be closed. Sources: RFC 9112 sections 2.2, 3.2, 5,
6 and 7; the published request-smuggling research (TE.CL, CL.TE, TE.TE);
gunicorn's tests/requests/invalid corpus. Written in our own words.
"""

from __future__ import annotations

from dataclasses import dataclass

REFUSE = "refuse"
ACCEPT = "accept"
EITHER = "either"
PROBE = "probe"
IN_ORDER = "in order"
NOT_RUN = "not run"
THEN_REFUSE = "answered, then refused"

H = b"Host: x\r\n"
POST = b"POST {P} HTTP/1.1\r\n" + H
CHUNKED = POST + b"Transfer-Encoding: chunked\r\n"
#: A spooled body: larger than what the default worker keeps in memory (256 KiB).
BIG = 0x4B000


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    what: str
    data: bytes
    expect: str
    body: bytes = b""
    #: Send ``data`` up to this marker, wait for ``100 Continue`` (1 s at most), then the rest.
    wait_for_continue: bytes | None = None
    #: The client closes its connection after ``data`` (no innocent request follows).
    leaves: bool = False

    def request(self) -> bytes:
        return self.data.replace(b"{P}", self.path.encode()).replace(b"{S}", smuggled(self.name))

    @property
    def path(self) -> str:
        return f"/case/{self.name}"


def smuggled(name: str) -> bytes:
    return f"GET /smuggled/{name} HTTP/1.1\r\nHost: x\r\n\r\n".encode()


def innocent(name: str) -> bytes:
    return f"GET /innocent/{name} HTTP/1.1\r\nHost: x\r\n\r\n".encode()


TE_NOT_CHUNKED = "Transfer-Encoding not ending in chunked"
CL_TE = "Content-Length with Transfer-Encoding"
CL = "Content-Length values"
TE = "Transfer-Encoding obfuscated"
SIZE = "chunk sizes"
EXT = "chunk extensions and trailers"
LF = "bare LF line endings"
TARGET = "request targets"
HOST = "Host"
EXPECT = "Expect: 100-continue"
PIPELINE = "pipelining"
LEAVES = "client leaves mid-body"

FAMILIES = (TE_NOT_CHUNKED, CL_TE, CL, TE, SIZE, EXT, LF, TARGET, HOST, EXPECT, PIPELINE, LEAVES)

ABC = b"3\r\nabc\r\n0\r\n\r\n"
#: Exactly 0x4b000 bytes, a whole request at their start: what a reader that gives up on the size line might replay.
SPOOLED_BODY = smuggled("size-trailing-space-spooled").ljust(BIG, b"x")

CASES: tuple[Case, ...] = (
    # RFC 9112 6.3: a Transfer-Encoding whose final coding is not chunked cannot frame a request: 400 and close.
    Case("te-gzip-cl", TE_NOT_CHUNKED, "`gzip` with `Content-Length: 5`, no body sent", POST + b"Transfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\n", REFUSE),
    Case("te-identity-cl", TE_NOT_CHUNKED, "`identity` with `Content-Length: 5`", POST + b"Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n", REFUSE),
    Case("te-deflate-cl", TE_NOT_CHUNKED, "`deflate` with `Content-Length: 5`", POST + b"Transfer-Encoding: deflate\r\nContent-Length: 5\r\n\r\n", REFUSE),
    Case("te-gzip", TE_NOT_CHUNKED, "`gzip` alone", POST + b"Transfer-Encoding: gzip\r\n\r\n", REFUSE),
    Case("te-chunked-gzip", TE_NOT_CHUNKED, "`chunked, gzip`", POST + b"Transfer-Encoding: chunked, gzip\r\n\r\n" + ABC, REFUSE),
    Case("te-chunked-then-gzip-line", TE_NOT_CHUNKED, "`chunked`, then a second line `gzip`", CHUNKED + b"Transfer-Encoding: gzip\r\n\r\n" + ABC, REFUSE),
    # RFC 9112 6.1: CL and TE together may be refused, or framed by TE alone; the connection closes either way.
    Case("cl-te", CL_TE, "`Content-Length: 5` and `chunked`; a request after the last chunk", CHUNKED + b"Content-Length: 5\r\n\r\n0\r\n\r\n{S}", EITHER),
    Case("te-cl", CL_TE, "`chunked` then `Content-Length: 30`", CHUNKED + b"Content-Length: 30\r\n\r\n" + ABC + b"{S}", EITHER, b"abc"),
    # RFC 9110 8.6 and RFC 9112 6.3: a Content-Length that is not one decimal number is an unrecoverable error.
    Case("cl-differing", CL, "two differing values", POST + b"Content-Length: 3\r\nContent-Length: 5\r\n\r\nabcde", REFUSE),
    Case("cl-same-twice", CL, "the same value twice", POST + b"Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", EITHER, b"abc"),
    Case("cl-list", CL, "`3, 3`", POST + b"Content-Length: 3, 3\r\n\r\nabc", EITHER, b"abc"),
    Case("cl-plus", CL, "`+3`", POST + b"Content-Length: +3\r\n\r\nabc", REFUSE),
    Case("cl-minus", CL, "`-3`", POST + b"Content-Length: -3\r\n\r\nabc", REFUSE),
    Case("cl-leading-zeros", CL, "`003` (1*DIGIT: valid)", POST + b"Content-Length: 003\r\n\r\nabc", EITHER, b"abc"),
    Case("cl-hex", CL, "`0x3`", POST + b"Content-Length: 0x3\r\n\r\nabc", REFUSE),
    Case("cl-inner-space", CL, "`1 0`", POST + b"Content-Length: 1 0\r\n\r\nabcdefghij", REFUSE),
    Case("cl-space-before-colon", CL, "`Content-Length : 3`", POST + b"Content-Length : 3\r\n\r\nabc", REFUSE),
    Case("cl-tab-value", CL, "a tab before and after the value (OWS: valid)", POST + b"Content-Length:\t3\t\r\n\r\nabc", ACCEPT, b"abc"),
    Case("cl-overflow", CL, "20 digits, past 64 bits", POST + b"Content-Length: 18446744073709551619\r\n\r\nabc", REFUSE),
    # RFC 9112 6.1 and 7: transfer-coding names are tokens, case-insensitive; anything else is not chunked.
    Case("te-upper", TE, "`CHUNKED` (case-insensitive: valid)", POST + b"Transfer-Encoding: CHUNKED\r\n\r\n" + ABC, ACCEPT, b"abc"),
    Case("te-tab", TE, "a tab before the value (OWS: valid)", POST + b"Transfer-Encoding:\tchunked\r\n\r\n" + ABC, ACCEPT, b"abc"),
    Case("te-space-before-colon", TE, "`Transfer-Encoding : chunked`", POST + b"Transfer-Encoding : chunked\r\n\r\n" + ABC, REFUSE),
    Case("te-vertical-tab", TE, "a vertical tab before `chunked`", POST + b"Transfer-Encoding:\x0bchunked\r\n\r\n" + ABC, REFUSE),
    Case("te-quoted", TE, '`"chunked"`', POST + b'Transfer-Encoding: "chunked"\r\n\r\n' + ABC, REFUSE),
    Case("te-xchunked", TE, "`xchunked`", POST + b"Transfer-Encoding: xchunked\r\n\r\n" + ABC, REFUSE),
    Case("te-chunked-twice-list", TE, "`chunked, chunked`", POST + b"Transfer-Encoding: chunked, chunked\r\n\r\n" + ABC, REFUSE),
    Case("te-chunked-twice-lines", TE, "`chunked` on two lines", CHUNKED + b"Transfer-Encoding: chunked\r\n\r\n" + ABC, REFUSE),
    Case("te-identity-chunked", TE, "`identity, chunked`", POST + b"Transfer-Encoding: identity, chunked\r\n\r\n" + ABC, REFUSE),
    Case("te-obs-fold", TE, "`chunked` on an obs-fold line", POST + b"Transfer-Encoding:\r\n chunked\r\n\r\n" + ABC, EITHER, b"abc"),
    Case("te-nul", TE, "a NUL after `chunked`", POST + b"Transfer-Encoding: chunked\x00\r\n\r\n" + ABC, REFUSE),
    Case("te-underscore-cl", TE, "`Transfer_Encoding: chunked` beside `Content-Length: 3`", POST + b"Transfer_Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc", EITHER, b"abc"),
    # RFC 9112 7.1: chunk-size is 1*HEXDIG; whitespace is allowed only before a chunk extension's ";".
    Case("size-trailing-space", SIZE, "`3 `", CHUNKED + b"\r\n3 \r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-trailing-space-spooled", SIZE, "`4b000 `, a body large enough to be spooled, a request at its start", CHUNKED + b"\r\n4b000 \r\n" + SPOOLED_BODY + b"\r\n0\r\n\r\n", REFUSE),
    Case("size-leading-space", SIZE, "` 3`", CHUNKED + b"\r\n 3\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-0x", SIZE, "`0x3`", CHUNKED + b"\r\n0x3\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-plus", SIZE, "`+3`", CHUNKED + b"\r\n+3\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-minus", SIZE, "`-3`", CHUNKED + b"\r\n-3\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-empty", SIZE, "no size before the data", CHUNKED + b"\r\n\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("size-17-digits", SIZE, "`00000000000000003` (17 digits)", CHUNKED + b"\r\n00000000000000003\r\nabc\r\n0\r\n\r\n", EITHER, b"abc"),
    Case("size-overflow", SIZE, "`10000000000000003`: 3 once truncated to 64 bits", CHUNKED + b"\r\n10000000000000003\r\nabc\r\n0\r\n\r\n", REFUSE),
    # RFC 9110 15.5.14: a size past the body limit is refused as it comes (413), not waited for.
    Case("size-past-limit", SIZE, "`ffffffffffffffff`, no data sent", CHUNKED + b"\r\nffffffffffffffff\r\n", REFUSE),
    Case("size-data-longer", SIZE, "data longer than its size, no CRLF after it", CHUNKED + b"\r\n3\r\nabcdef\r\n0\r\n\r\n", REFUSE),
    # RFC 9112 7.1.1 and 7.1.2: extensions and trailer fields are tokens and field values; bare CR, NUL, obs-fold are not.
    Case("ext-valid", EXT, "`3;name=value` (valid)", CHUNKED + b"\r\n3;name=value\r\nabc\r\n0\r\n\r\n", ACCEPT, b"abc"),
    Case("ext-bare-cr", EXT, "a bare CR in an extension", CHUNKED + b"\r\n3;a=b\rc\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("ext-bare-lf", EXT, "a bare LF in an extension, a request after it", CHUNKED + b"\r\n3;a\n{S}\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("ext-semicolon-alone", EXT, "`3;`: an extension without a name", CHUNKED + b"\r\n3;\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("ext-name-not-token", EXT, "`3;@=1`: a name that is not a token", CHUNKED + b"\r\n3;@=1\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("ext-nul", EXT, "a NUL in an extension", CHUNKED + b"\r\n3;a=\x00\r\nabc\r\n0\r\n\r\n", REFUSE),
    Case("trailer-valid", EXT, "a trailer field (valid)", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n", ACCEPT, b"abc"),
    Case("trailer-no-colon", EXT, "a trailer line without a colon", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nnocolon\r\n\r\n", REFUSE),
    Case("trailer-obs-fold", EXT, "a folded trailer line", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n 2\r\n\r\n", EITHER, b"abc"),
    Case("trailer-bare-cr", EXT, "a bare CR in a trailer", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r2\r\n\r\n", EITHER, b"abc"),
    Case("trailer-nul", EXT, "a NUL in a trailer", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nX-Sum: 1\x002\r\n\r\n", REFUSE),
    # RFC 9110 6.5.1: framing, routing and Host fields may not be trailers; one sent as a trailer is a malformed request.
    Case("trailer-content-length", EXT, "`Content-Length` as a trailer", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nContent-Length: 3\r\n\r\n", REFUSE),
    Case("trailer-transfer-encoding", EXT, "`Transfer-Encoding` as a trailer", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n", REFUSE),
    Case("trailer-host", EXT, "`Host` as a trailer", CHUNKED + b"\r\n3\r\nabc\r\n0\r\nHost: y\r\n\r\n", REFUSE),
    Case("trailer-missing-end", EXT, "no empty line after the last chunk: the next request follows at once", CHUNKED + b"\r\n3\r\nabc\r\n0\r\n", EITHER, b"abc"),
    # RFC 9112 2.2: a recipient MAY take a bare LF for a line end; it must then agree with itself.
    Case("lf-chunked-body", LF, "a chunked body whose lines end in bare LF", CHUNKED + b"\r\n3\nabc\n0\n\n", EITHER, b"abc"),
    Case("lf-last-chunk", LF, "the last chunk and the body's end as bare LFs", CHUNKED + b"\r\n3\r\nabc\r\n0\n\n", EITHER, b"abc"),
    Case("lf-after-data", LF, "a bare LF after chunk data", CHUNKED + b"\r\n3\r\nabc\n0\r\n\r\n", EITHER, b"abc"),
    Case("lf-head", LF, "a head whose lines end in bare LF", b"POST {P} HTTP/1.1\nHost: x\nContent-Length: 3\n\nabc", EITHER, b"abc"),
    Case("lf-head-te", LF, "a bare LF inside the Transfer-Encoding line", POST + b"X: y\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nxyz", EITHER, b"xyz"),
    # RFC 9112 3.2.2: a server MUST accept the absolute form; the path is what it names.
    Case("absolute-probe", TARGET, "`GET http://x/healthz`", b"GET http://x/healthz HTTP/1.1\r\n" + H + b"\r\n", PROBE),
    Case("absolute-function", TARGET, "`GET http://x/case/...`", b"GET http://x{P} HTTP/1.1\r\n" + H + b"\r\n", ACCEPT),
    Case("asterisk-get", TARGET, "`GET *`", b"GET * HTTP/1.1\r\n" + H + b"\r\n", REFUSE),
    Case("authority-get", TARGET, "`GET x:80`", b"GET x:80 HTTP/1.1\r\n" + H + b"\r\n", REFUSE),
    # RFC 9112 3.2: an HTTP/1.1 request without Host, or with more than one, is answered 400.
    Case("host-missing", HOST, "no Host", b"GET {P} HTTP/1.1\r\n\r\n", REFUSE),
    Case("host-twice", HOST, "two Host fields", b"GET {P} HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", REFUSE),
    Case("host-list", HOST, "`Host: x, y`", b"GET {P} HTTP/1.1\r\nHost: x, y\r\n\r\n", REFUSE),
    Case("host-http10", HOST, "HTTP/1.0 without Host (valid)", b"GET {P} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", ACCEPT),
    # RFC 9110 10.1.1: a client may send the body without waiting for 100 Continue.
    Case("expect-pipelined", EXPECT, "the body and the next request sent with the head", POST + b"Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", ACCEPT, b"abc"),
    Case("expect-waits", EXPECT, "the body sent after `100 Continue`", POST + b"Expect: 100-continue\r\nContent-Length: 3\r\n\r\n|abc", ACCEPT, b"abc", wait_for_continue=b"|"),
    Case("expect-chunked", EXPECT, "a chunked body sent with the head", CHUNKED + b"Expect: 100-continue\r\n\r\n" + ABC, ACCEPT, b"abc"),
    # RFC 9112 9.3.2: pipelined requests are answered in the order they came.
    Case("pipelined-after-post", PIPELINE, "POST, GET, POST on one connection, sent at once", POST + b"Content-Length: 1\r\n\r\na" + b"GET {P}/2 HTTP/1.1\r\n" + H + b"\r\n" + POST.replace(b"{P}", b"{P}/3") + b"Content-Length: 1\r\n\r\nc", IN_ORDER),
    Case("pipelined-chunked", PIPELINE, "a chunked POST, then a GET, sent at once", CHUNKED + b"\r\n1\r\na\r\n0\r\n\r\n" + b"GET {P}/2 HTTP/1.1\r\n" + H + b"\r\n", IN_ORDER),
    # RFC 9112 9.3 and 9.6: an HTTP/1.0 request without keep-alive is answered, then the connection closes.
    Case("http10-post-closes", PIPELINE, "an HTTP/1.0 POST without keep-alive, a request after it", b"POST {P} HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", ACCEPT, b"abc"),
    # RFC 9112 9.3.2: what came before the garbage is answered first, in order.
    Case("garbage-after-request", PIPELINE, "a valid GET, then bytes that are no request", b"GET {P} HTTP/1.1\r\n" + H + b"\r\n\x00garbage\r\n\r\n", THEN_REFUSE),
    # A body that never came whole must not reach the function.
    Case("leaves-length", LEAVES, "5 of 10 bytes, then the client closes", POST + b"Content-Length: 10\r\n\r\nabcde", NOT_RUN, leaves=True),
    Case("leaves-chunked", LEAVES, "half a chunk, then the client closes", CHUNKED + b"\r\n5\r\nab", NOT_RUN, leaves=True),
    Case("leaves-last-chunk", LEAVES, "every chunk but the last, then the client closes", CHUNKED + b"\r\n3\r\nabc\r\n", NOT_RUN, leaves=True),
)

CASE_NAMES = tuple(case.name for case in CASES)
assert len(set(CASE_NAMES)) == len(CASE_NAMES)
#: The paths each IN_ORDER case calls, in order, with their bodies.
IN_ORDER_CALLS = {
    "pipelined-after-post": (("", b"a"), ("/2", b""), ("/3", b"c")),
    "pipelined-chunked": (("", b"a"), ("/2", b"")),
}
