from __future__ import annotations

import pytest

from funcwsgi.bodies import StreamedBody


class Recorded(StreamedBody):
    __slots__ = ("seen",)

    def __init__(self, body):
        super().__init__(body)
        self.seen = []

    def sent(self, chunk):
        self.seen.append(("sent", chunk))

    def failed(self, error):
        self.seen.append(("failed", str(error)))

    def ended(self):
        self.seen.append(("ended",))


class Closing:
    def __init__(self, chunks, fail_on_close=False):
        self.chunks, self.closed, self.fail_on_close = chunks, False, fail_on_close

    def __iter__(self):
        yield from self.chunks

    def close(self):
        self.closed = True
        if self.fail_on_close:
            raise OSError("close failed")


def test_chunks_pass_through_and_the_end_is_seen_once_after_the_bodys_own_close():
    inner = Closing([b"a", b"bb"])
    body = Recorded(inner)
    assert list(body) == [b"a", b"bb"]
    body.close()
    body.close()  # a second close (some servers do) ends nothing twice
    assert inner.closed
    assert body.seen == [("sent", b"a"), ("sent", b"bb"), ("ended",)]


def test_a_failing_chunk_is_seen_then_goes_on_to_the_server():
    def chunks():
        yield b"a"
        raise ValueError("generator broke")

    body = Recorded(chunks())
    with pytest.raises(ValueError, match="generator broke"):
        list(body)
    body.close()
    assert body.seen == [("sent", b"a"), ("failed", "generator broke"), ("ended",)]


def test_the_end_is_seen_even_when_the_bodys_close_raises():
    body = Recorded(Closing([b"x"], fail_on_close=True))
    list(body)
    with pytest.raises(OSError, match="close failed"):
        body.close()
    assert body.seen[-1] == ("ended",)
