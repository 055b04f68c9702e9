"""A raw HTTP/2 client for the tests: frames built one by one (hyperframe), headers coded by hpack.

A real client library refuses to send what the tests must send (a
``content-length`` its DATA frames contradict, a pseudo-header in trailers,
1,000 CONTINUATION frames), so this one writes frames as they are given and
only does what a connection needs to stay open: it acknowledges the server's
SETTINGS and PINGs, and opens its window as DATA arrives unless told to keep
it shut. Every read is bounded in time.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import hpack
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PROTOCOL_ERROR = 0x1
REFUSED_STREAM = 0x7
ENHANCE_YOUR_CALM = 0xB
#: Our own largest frame: the default SETTINGS_MAX_FRAME_SIZE, which every server accepts.
MAX_FRAME = 16384

Fields = Iterable[tuple[str, str] | tuple[bytes, bytes]]


@dataclass
class Answer:
    """What the server sent on one stream."""

    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    ended: bool = False
    reset: int | None = None  # the RST_STREAM error code

    @property
    def status(self) -> int | None:
        for name, value in self.headers:
            if name == ":status":
                return int(value)
        return None

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None


class RawH2:
    """One HTTP/2 connection with prior knowledge (h2c), as ``curl --http2-prior-knowledge`` opens it."""

    def __init__(self, host: str, port: int, *, timeout: float = 5.0, settings: dict[int, int] | None = None, auto_window: bool = True) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.timeout = timeout
        self.auto_window = auto_window
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 30  # what the server sends is checked by the tests, not here
        self.streams: dict[int, Answer] = {}
        self.server_settings: dict[int, int] = {}
        self.goaway: int | None = None  # its error code
        self.closed = False
        self.next_id = 1
        self._buffer = b""
        self._partial: tuple[int, bytes, bool] | None = None  # a header block awaiting CONTINUATION
        self.send(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())

    # -- sending ------------------------------------------------------------------------------

    def send(self, data: bytes) -> bool:
        """Write bytes; False once the server closed the connection."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def frame(self, *frames: Frame) -> bool:
        return self.send(b"".join(frame.serialize() for frame in frames))

    def block(self, fields: Fields) -> bytes:
        """``fields`` coded by this connection's HPACK encoder, names as given (no lowercasing)."""
        return self.encoder.encode(list(fields), huffman=False)

    def new_stream(self) -> int:
        stream_id = self.next_id
        self.next_id += 2
        self.streams[stream_id] = Answer()
        return stream_id

    def request(
        self,
        fields: Fields,
        body: bytes | list[bytes] | None = None,
        *,
        trailers: Fields | None = None,
        end: bool = True,
        pause: float = 0.0,
    ) -> int:
        """Open a stream: HEADERS (one frame), then each DATA frame of ``body``, then trailers,
        ``pause`` seconds later (reading what the server sends meanwhile)."""
        stream_id = self.new_stream()
        chunks = [body] if isinstance(body, bytes) else list(body or [])
        frames = self.header_frames(stream_id, fields, end_stream=end and not chunks and trailers is None)
        for index, chunk in enumerate(chunks):
            data = DataFrame(stream_id, chunk)
            if end and trailers is None and index == len(chunks) - 1:
                data.flags.add("END_STREAM")
            frames.append(data)
        if trailers is not None and pause > 0:
            self.frame(*frames)
            self.pump(lambda: self.closed, timeout=pause)
            frames = []
        if trailers is not None:
            frames += self.header_frames(stream_id, trailers, end_stream=end)
        self.frame(*frames)
        return stream_id

    def header_frames(self, stream_id: int, fields: Fields, *, end_stream: bool) -> list[Frame]:
        """A header block as HEADERS and, past MAX_FRAME bytes, CONTINUATION frames."""
        block = self.block(fields)
        parts = [block[start : start + MAX_FRAME] for start in range(0, len(block), MAX_FRAME)] or [b""]
        frames: list[Frame] = [HeadersFrame(stream_id, parts[0])]
        frames += [ContinuationFrame(stream_id, part) for part in parts[1:]]
        if end_stream:
            frames[0].flags.add("END_STREAM")
        frames[-1].flags.add("END_HEADERS")
        return frames

    def get(self, path: str = "/", extra: Fields = ()) -> int:
        return self.request([(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "localhost"), *extra])

    # -- receiving ----------------------------------------------------------------------------

    def pump(self, until: Callable[[], bool], timeout: float | None = None) -> bool:
        """Read and handle frames until ``until()`` holds, the connection closes, or ``timeout`` passes."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not until():
            if self.closed:
                return until()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(min(left, 0.5))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                continue
            self._buffer += chunk
            self._handle_frames()
        return True

    def answer(self, stream_id: int, timeout: float | None = None) -> Answer:
        """The stream's answer once it ended or was reset (or what came of it by the deadline)."""
        self.pump(lambda: self.streams[stream_id].done or self.goaway is not None, timeout)
        return self.streams[stream_id]

    def _handle_frames(self) -> None:
        while len(self._buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self._buffer[:9]))
            if len(self._buffer) < 9 + length:
                return
            frame.parse_body(memoryview(self._buffer[9 : 9 + length]))
            self._buffer = self._buffer[9 + length :]
            self._handle(frame)

    def _handle(self, frame: Frame) -> None:
        answer = self.streams.setdefault(frame.stream_id, Answer()) if frame.stream_id else None
        if isinstance(frame, SettingsFrame):
            if "ACK" not in frame.flags:
                self.server_settings.update(frame.settings)
                self.frame(SettingsFrame(0, flags=["ACK"]))
        elif isinstance(frame, PingFrame):
            if "ACK" not in frame.flags:
                self.frame(PingFrame(0, frame.opaque_data, flags=["ACK"]))
        elif isinstance(frame, GoAwayFrame):
            self.goaway = frame.error_code
        elif isinstance(frame, RstStreamFrame) and answer is not None:
            answer.reset = frame.error_code
        elif isinstance(frame, (HeadersFrame, ContinuationFrame)) and answer is not None:
            previous = self._partial[1] if self._partial else b""
            ends = "END_STREAM" in frame.flags if isinstance(frame, HeadersFrame) else bool(self._partial and self._partial[2])
            if "END_HEADERS" in frame.flags:
                self._partial = None
                answer.headers += [(_text(name), _text(value)) for name, value in self.decoder.decode(previous + frame.data, raw=True)]
                answer.ended = answer.ended or ends
            else:
                self._partial = (frame.stream_id, previous + frame.data, ends)
        elif isinstance(frame, DataFrame) and answer is not None:
            answer.body += frame.data
            answer.ended = answer.ended or "END_STREAM" in frame.flags
            if self.auto_window and frame.flow_controlled_length:
                self.frame(WindowUpdateFrame(0, window_increment=frame.flow_controlled_length))
                if not answer.ended:
                    self.frame(WindowUpdateFrame(frame.stream_id, window_increment=frame.flow_controlled_length))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> RawH2:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _text(raw: bytes) -> str:
    return raw.decode("latin-1")


def request_fields(method: str = "GET", path: str = "/", *, authority: str = "localhost") -> list[tuple[str, str]]:
    return [(":method", method), (":scheme", "http"), (":path", path), (":authority", authority)]


def fresh_answer(host: str, port: int, path: str = "/", timeout: float = 1.0) -> Answer:
    """One GET on a new HTTP/2 connection, waited for at most ``timeout`` seconds from connecting."""
    started = time.monotonic()
    try:
        with RawH2(host, port, timeout=timeout) as client:
            stream = client.get(path)
            return client.answer(stream, timeout=max(0.0, timeout - (time.monotonic() - started)))
    except OSError:
        return Answer()
