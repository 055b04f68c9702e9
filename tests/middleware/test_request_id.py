"""Every response carries a request id: the caller's, else a new one."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["werkzeug", "edge"])
def client(request):
    """werkzeug's test client (no server call: the layer wraps start_response), and the edge worker's call runner
    (its call takes the answer: the layer adds the id to the call's fields)."""
    from werkzeug.test import Client

    from funcwsgi import make_app

    from ..support.edge_client import edge_client
    from ..support.paths import function_folder

    service = make_app(environ={}, handler_folder=function_folder("observed"))
    if request.param == "werkzeug":
        yield Client(service)
    else:
        yield from edge_client(service)


def test_callers_id_is_echoed(client):
    assert client.get("/", headers={"X-Request-Id": "abc-123"}).headers["X-Request-Id"] == "abc-123"


def test_new_id_when_none_is_sent(client):
    first = client.get("/").headers["X-Request-Id"]
    second = client.get("/").headers["X-Request-Id"]
    assert len(first) == 32 and int(first, 16) >= 0
    assert first != second


@pytest.mark.parametrize("sent", [pytest.param("x" * 129, id="too-long"), pytest.param("caf\u00e9", id="not-ascii"), pytest.param("a\tb", id="control")])
def test_unusable_ids_are_replaced(client, sent):
    echoed = client.get("/", headers={"X-Request-Id": sent}).headers["X-Request-Id"]
    assert echoed != sent and len(echoed) == 32


def test_failure_response_carries_the_id(client):
    response = client.get("/fail", headers={"X-Request-Id": "failing-1"})
    assert response.status_code == 500 and response.text == "Internal Server Error"
    assert response.headers["X-Request-Id"] == "failing-1"


@pytest.mark.parametrize("path", ["/", "/fail", "/stream", "/healthz"])
def test_an_answer_carries_the_id_once(client, path):
    """On the edge the errors layer's 500 quotes the id itself: the layer withdraws its field from the call when the
    call fails (mutation caught: the withdrawal left out, two X-Request-Id fields)."""
    assert client.get(path, headers={"X-Request-Id": "once"}).headers.getlist("X-Request-Id") == ["once"]


def test_reserved_routes_carry_it_too(client):
    assert client.get("/healthz", headers={"X-Request-Id": "probe"}).headers["X-Request-Id"] == "probe"


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [
        pytest.param("", False, id="empty"),
        pytest.param("a", True, id="one-character"),
        pytest.param("x" * 128, True, id="128-characters"),
        pytest.param("x" * 129, False, id="129-characters"),
    ],
)
def test_the_length_bounds_of_an_echoed_id(client, sent, echoed):
    """Mutations caught (make mutation): the bounds ``0 < len(id) <= 128`` moved by one either way."""
    answered = client.get("/", headers={"X-Request-Id": sent}).headers["X-Request-Id"]
    assert (answered == sent) is echoed
    if not echoed:
        assert len(answered) == 32


def test_new_ids_are_made_many_at_once_and_each_is_new():
    from funcwsgi.middleware.request_id import IDS_AT_ONCE, new_request_id

    made = [new_request_id() for _ in range(3 * IDS_AT_ONCE)]  # past two refills, wherever the pool stood
    assert len(set(made)) == len(made)
    assert all(len(made_id) == 32 and int(made_id, 16) >= 0 for made_id in made)


def test_a_forked_worker_makes_ids_of_its_own():
    """Mutation caught: the pool not forgotten in the child (a worker would echo ids its parent and siblings make)."""
    import os

    from funcwsgi.middleware.request_id import new_request_id

    new_request_id()  # the parent has ids in store
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:  # whatever happens, the child never returns into pytest
            os.write(writing, new_request_id().encode())
        finally:
            os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    childs = os.read(reading, 64).decode()
    os.close(reading)
    assert len(childs) == 32 and childs != new_request_id()
