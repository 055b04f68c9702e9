"""The Date field of the edge's answers (RFC 9110 section 6.6.1): made once a second, not asked of the clock per answer."""

from __future__ import annotations

import asyncio
import email.utils
import time

#: How long after a second's start its Date is made again: a loop's timer may fire up to a millisecond early.
LATE = 0.002


class DateField:
    """The Date field's value, current to the second: a whole HTTP/1.1 answer reads :attr:`text` as it is."""

    __slots__ = ("text", "until")

    def __init__(self) -> None:
        self.text = ""
        self.until = 0.0  # when the second of :attr:`text` is over, by time.time()
        self.current()

    def current(self) -> str:
        """The value now, made again if its second is over (for answers made between two of :meth:`keep`'s turns)."""
        now = time.time()
        if now >= self.until:
            second = int(now)
            self.text = email.utils.formatdate(second, usegmt=True)
            self.until = second + 1.0
        return self.text

    def keep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make the value again as each second begins, on ``loop`` (each edge starts this once for its loop).

        Asking the clock for every answer cost about 500 instructions; a timer once a second costs nothing per answer.
        """
        self.current()
        loop.call_at(loop.time() + (self.until - time.time()) + LATE, self.keep, loop)


#: The one Date of the process: the edges of every loop keep it.
DATE = DateField()
