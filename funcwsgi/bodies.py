"""The one wrapper put around a response body to see how the stream went and when it ended."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse


class StatusNote:
    """The server's ``start_response``, noting the status line it is given on the way.

    What a layer that measures a call needs: the status is read when the call
    ends, which for a streamed body is when the server closes it. Until the
    function starts a response it reads ``"500"``, the errors layer's answer.
    """

    __slots__ = ("_start_response", "status")

    def __init__(self, start_response: StartResponse) -> None:
        self._start_response = start_response
        self.status = "500"

    def __call__(self, status: str, headers: list[tuple[str, str]], exc_info: OptExcInfo | None = None) -> Callable[[bytes], object]:
        self.status = status
        return self._start_response(status, headers, exc_info)


class StreamedBody:
    """A streamed response body, passed through chunk by chunk, that tells its layer how it went.

    A layer subclasses it and overrides the hooks it needs: :meth:`sent`
    after each chunk, :meth:`failed` when producing a chunk raised (the error
    then goes on to the server), :meth:`finished` when the body has no chunk
    left, :meth:`ended` once, when the server closes the body (after the
    body's own ``close()``). Bodies that are lists never get one: layers
    handle those on the spot.
    """

    __slots__ = ("_body", "_iterator", "_ended")

    def __init__(self, body: Iterable[bytes]) -> None:
        self._body = body
        self._iterator: Iterator[bytes] = iter(body)
        self._ended = False

    def __iter__(self) -> StreamedBody:
        return self

    def __next__(self) -> bytes:
        try:
            chunk = next(self._iterator)
        except StopIteration:
            self.finished()
            raise
        except Exception as error:
            self.failed(error)
            raise
        self.sent(chunk)
        return chunk

    def close(self) -> None:
        try:
            close_inner(self._body)
        finally:
            if not self._ended:
                self._ended = True
                self.ended()

    @property
    def closed(self) -> bool:
        """Whether the server has closed the body."""
        return self._ended

    def sent(self, chunk: bytes) -> None:
        """A chunk went to the server."""

    def failed(self, error: Exception) -> None:
        """Producing the next chunk raised ``error``."""

    def finished(self) -> None:
        """The body has no chunk left (the server may ask again: then again)."""

    def ended(self) -> None:
        """The server closed the body: the call is over."""


class ClosingBody(StreamedBody):
    """A body that calls ``on_close()`` once, when the server has closed it.

    Post-response work for a caller that needs no other hook (the adapters'
    in-flight count), as werkzeug's ``ClosingIterator`` does; unlike the
    layers, it wraps lists too, since a server closes only what has ``close``.
    """

    __slots__ = ("_on_close",)

    def __init__(self, body: Iterable[bytes], on_close: Callable[[], None]) -> None:
        super().__init__(body)
        self._on_close = on_close

    def ended(self) -> None:
        self._on_close()


class ReleasingBody:
    """A body that releases what the call held (a spooled request body, uploaded files) once it
    has been sent or closed, whichever comes first: a server closes it, a test client may only
    read it to the end."""

    __slots__ = ("_body", "_release")

    def __init__(self, body: Iterable[bytes], release: Callable[[], None]) -> None:
        self._body = body
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._body
        finally:
            self._released()

    def close(self) -> None:
        try:
            close_inner(self._body)
        finally:
            self._released()

    def _released(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


def close_inner(body: Iterable[bytes]) -> None:
    """Close a wrapped body when it has ``close()``, as PEP 3333 asks the server to."""
    close: Any = getattr(body, "close", None)
    if close is not None:
        close()
