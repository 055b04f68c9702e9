from __future__ import annotations

import threading

import pytest

from funcwsgi.adapters import ADAPTERS, InFlight, host_port, load_adapter
from funcwsgi.config import SERVER_ADAPTERS


def test_every_configurable_name_has_an_adapter():
    assert tuple(ADAPTERS) == SERVER_ADAPTERS


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_each_adapter_loads_and_serves_through_one_interface(name):
    assert callable(load_adapter(name).serve)


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", "127.0.0.1:80"), ("::", "[::]:80"), ("::1", "[::1]:80"), ("localhost", "localhost:80")],
)
def test_host_port(host, expected):
    assert host_port(host, 80) == expected


def test_in_flight_counts_calls_until_their_body_is_closed():
    def app(environ, start_response):
        start_response("200 OK", [])
        return iter([b"a", b"b"])

    tracked = InFlight(app)
    body = tracked({}, lambda *a: None)
    assert tracked.count == 1
    assert not tracked.wait_idle(0.01)
    assert list(body) == [b"a", b"b"]
    threading.Timer(0.05, body.close).start()
    assert tracked.wait_idle(5)
    body.close()  # closing twice counts once
    assert tracked.count == 0


def test_in_flight_counts_a_call_that_raised_as_done():
    def app(environ, start_response):
        raise RuntimeError("x")

    tracked = InFlight(app)
    with pytest.raises(RuntimeError):
        tracked({}, lambda *a: None)
    assert tracked.count == 0


def test_in_flight_closes_a_body_its_server_left_open_once():
    closes = []

    class Body:
        def __iter__(self):
            return iter([b"a"])

        def close(self):
            closes.append(1)

    def app(environ, start_response):
        start_response("200 OK", [])
        return Body()

    tracked = InFlight(app)
    left_open = tracked({}, lambda *a: None)
    tracked.close_left_open()  # werkzeug's handler, when its own close was skipped
    assert tracked.count == 0 and closes == [1] and left_open.closed
    tracked.close_left_open()  # nothing left on this thread
    closed = tracked({}, lambda *a: None)
    closed.close()  # the server's own close
    tracked.close_left_open()
    assert tracked.count == 0 and closes == [1, 1]


def test_in_flight_leaves_another_threads_body_alone():
    tracked = InFlight(lambda environ, start_response: [b"a"])
    elsewhere = threading.Thread(target=lambda: tracked({}, lambda *a: None))
    elsewhere.start()
    elsewhere.join()
    tracked.close_left_open()
    assert tracked.count == 1
