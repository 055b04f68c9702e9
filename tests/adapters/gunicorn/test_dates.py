"""adapters/gunicorn/dates.py: the Date field, made again by the loop as each second begins."""

from __future__ import annotations

import asyncio
import email.utils
import time

from funcwsgi.adapters.gunicorn.dates import DateField


def test_the_date_is_made_again_by_the_loop_as_each_second_begins() -> None:
    """An answer reads the field's text as it is, so the loop must move it on without anyone asking the clock."""
    field = DateField()
    loop = asyncio.new_event_loop()
    try:
        field.keep(loop)
        first = field.text

        async def next_second() -> None:
            deadline = time.monotonic() + 3
            while field.text == first and time.monotonic() < deadline:
                await asyncio.sleep(0.01)

        loop.run_until_complete(next_second())
        made = email.utils.parsedate_to_datetime(field.text).timestamp()
        assert field.text != first
        assert time.time() - 1 <= made <= time.time()
    finally:
        loop.close()


def test_the_date_asked_for_is_current_between_the_loops_turns() -> None:
    """An answer made field by field (head()) asks for it: a second over is made again at once."""
    field = DateField()
    field.text, field.until = "Thu, 01 Jan 1970 00:00:00 GMT", 1.0  # as if its second ended long ago
    made = email.utils.parsedate_to_datetime(field.current()).timestamp()
    assert time.time() - 1 <= made <= time.time()
    assert field.text == field.current()
