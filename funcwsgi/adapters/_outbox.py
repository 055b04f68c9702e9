"""Response bytes a client does not take at once, kept for the event loop to send, so a slow reader holds no thread.

A function thread writes the response through :class:`SpillingSocket`: each
write goes straight to the socket (never blocking); what the client's socket
does not take waits in an outbox (memory, then a temporary file), and every
later write queues behind it. When the call is done the thread is free and
the worker's loop sends the outbox as the client reads. Past
:data:`OUTBOX_LIMIT` bytes queued the thread waits for the client as before
(``SERVER_SEND_TIMEOUT`` per write), so memory and disk stay bounded.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from typing import IO, Any

#: Bytes of one response that may wait for a slow client without holding the thread (waitress keeps 16 MiB).
OUTBOX_LIMIT = 16 * 1024 * 1024
IN_MEMORY = 256 * 1024
SEND_SIZE = 256 * 1024


class SpillingSocket:
    """The client's socket as the thread sees it while it writes a response."""

    def __init__(self, sock: socket.socket, limit: int = OUTBOX_LIMIT) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.limit = limit
        self.outbox: IO[bytes] | None = None
        self.queued = 0
        self.shut = False

    def sendall(self, data: Any) -> None:
        if self.shut:
            raise BrokenPipeError(errno.EPIPE, "the connection was shut for writing")
        view = memoryview(data).cast("B")
        if not self.queued:
            view = view[self._write_now(view) :]
            if not view:
                return
        if self.queued + len(view) > self.limit:
            self.flush()
            self.sock.sendall(view)  # the thread waits for the client, SERVER_SEND_TIMEOUT at most
            return
        self._queue(view)

    def send(self, data: Any, flags: int = 0) -> int:
        self.sendall(data)
        return len(data)

    def setblocking(self, flag: bool) -> None:
        """Left as the worker set it: a timeout, under which the descriptor stays non-blocking for writes here."""

    def shutdown(self, how: int) -> None:
        # The watchdog answered the call: what the function writes later must fail, as on the socket.
        self.shut = True
        if not self.queued:
            self.sock.shutdown(how)

    def flush(self) -> None:
        """Send what is queued, waiting for the client (the socket's timeout bounds each write)."""
        outbox = self.take()
        if outbox is not None:
            while chunk := outbox.read(SEND_SIZE):
                self.sock.sendall(chunk)
            outbox.close()

    def take(self) -> IO[bytes] | None:
        """The queued bytes, rewound, for the loop to send; None when nothing is queued."""
        outbox, self.outbox, self.queued = self.outbox, None, 0
        if outbox is not None:
            outbox.seek(0)
        return outbox

    def _write_now(self, view: memoryview) -> int:
        try:
            return os.write(self.fd, view)  # the socket has a timeout, so the descriptor is non-blocking
        except BlockingIOError:
            return 0

    def _queue(self, view: memoryview) -> None:
        if self.outbox is None:
            self.outbox = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)
        self.outbox.write(view)
        self.queued += len(view)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def send_some(sock: socket.socket, outbox: IO[bytes]) -> bool:
    """On the loop: send what the client takes now; True once the outbox is empty."""
    chunk = outbox.read(SEND_SIZE)
    if not chunk:
        return True
    try:
        sent = sock.send(chunk)
    except BlockingIOError:
        sent = 0
    if sent < len(chunk):
        outbox.seek(sent - len(chunk), os.SEEK_CUR)
        return False
    return False
