"""Checks a runtime is known to fail today, one line each: (runtime, check, reason).

Each is marked ``xfail(strict=True)`` for that runtime only: it still runs,
and the day it passes the strict mark fails the run, so the line must go.
A check is named as pytest names it without the runtime, e.g.
``test_hooks.py::test_alive_false_fails_liveness_and_healthz``.

Apart from those, :data:`HTTP1_ONLY` lists the checks that are HTTP/1.1 by
nature (they write and read HTTP/1.1's bytes on a raw socket), skipped for a
launcher spoken to over HTTP/2, and :data:`HTTP2_ONLY` those only HTTP/2 can
ask, skipped for the others: the only checks skipped.
"""

from __future__ import annotations

_CLIENT_LEAVES = "test_cancellation.py::test_a_client_that_leaves_cancels_its_call_within_half_a_second"
#: Servers that do not tell the core whether a call's client is still there (docs/sdk.md#cancellation).
_NO_CONNECTION = "the server gives the call no way to see its client leave: cancelled at the timeout only"

KNOWN_GAPS: tuple[tuple[str, str, str], ...] = (
    ("funcwsgi-waitress", _CLIENT_LEAVES, _NO_CONNECTION),
    ("funcwsgi-werkzeug", _CLIENT_LEAVES, _NO_CONNECTION),
    ("funcwsgi-granian", _CLIENT_LEAVES, _NO_CONNECTION),
)

#: The slow-client limits as HTTP/1.1 shows them: the runtime's own 408 and 503 byte for byte, quiet closes,
#: 100-continue, a kept-alive connection. HTTP/2's are its server's (docs/servers.md#http2-on-gunicorn),
#: checked by tests/reliability/test_http2.py.
_RAW_HTTP1 = "written and read as HTTP/1.1 bytes on a raw socket; HTTP/2's limits are in tests/reliability/test_http2.py"
_SLOW_CLIENTS = (
    "test_a_head_not_complete_within_the_header_timeout_gets_408_and_is_closed",
    "test_the_next_head_on_a_kept_alive_connection_has_the_header_timeout_too",
    "test_a_connection_that_sends_nothing_is_closed_quietly_at_the_header_timeout",
    "test_an_idle_keep_alive_connection_is_closed_quietly_after_the_keepalive_timeout",
    "test_a_body_that_pauses_longer_than_the_body_timeout_gets_408_and_is_closed",
    "test_a_body_that_keeps_coming_is_read_whole_however_long_it_takes",
    "test_a_client_that_does_not_read_its_response_is_dropped_after_the_send_timeout",
    "test_a_client_that_reads_slowly_gets_its_whole_response",
    "test_calls_past_the_inflight_bound_get_503_with_retry_after_and_are_counted",
    "test_at_the_connection_limit_the_longest_waiting_connection_makes_room",
    "test_when_every_connection_is_busy_a_new_one_waits_and_is_answered_when_one_closes",
)

#: Checks skipped for a launcher whose protocol is h2c: (check, reason).
HTTP1_ONLY: tuple[tuple[str, str], ...] = tuple((f"test_slow_clients.py::{name}", _RAW_HTTP1) for name in _SLOW_CLIENTS)


#: Checks of what only HTTP/2 can say, skipped for a launcher spoken to over HTTP/1.1: (check, reason).
HTTP2_ONLY: tuple[tuple[str, str], ...] = (
    (
        "test_cancellation.py::test_a_client_that_resets_its_stream_cancels_its_call",
        "over HTTP/1.1 a client leaves a call only by closing its connection, checked by test_a_client_that_leaves_cancels_its_call_within_half_a_second",
    ),
)
