"""Functions Framework CloudEvent and typed functions, with the framework's own test functions.

The CloudEvent functions need only Flask; the typed ones need the framework's
decorator, so they run where ``functions-framework`` is installed (the
environment of ``make test-cloudevents-1``).
"""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

from ..conftest import CLIENT_KINDS, client_of
from ..support.paths import function_folder
from . import serving

CLOUD_EVENT = {
    "specversion": "1.0", "type": "cloud_event.greet.you", "source": "from-galaxy-far-far-away",
    "id": "my-id", "time": "2020-08-16T13:58:54.471765", "data": {"name": "john"},
}


def cloud_event_client(target: str, kind: str = "plain", **settings: str) -> Client:
    environ = {"FUNCTION_TARGET": target, "FUNCTION_SIGNATURE_TYPE": "cloudevent", **settings}
    return client_of(make_app(environ=environ, handler_folder=function_folder("gcf_cloud_event")), kind)


@pytest.fixture(scope="module", params=CLIENT_KINDS)
def checking(request):
    """Called plainly and through PEP 3333's validator."""
    return cloud_event_client("function", request.param)


def test_structured_cloud_event_function(checking):
    response = checking.post("/", data=json.dumps(CLOUD_EVENT), content_type="application/cloudevents+json")
    assert (response.status_code, response.data) == (200, b"OK")


def test_binary_cloud_event_function(checking):
    headers = {f"ce-{name}": value for name, value in CLOUD_EVENT.items() if name != "data"}
    response = checking.post("/", data=json.dumps(CLOUD_EVENT["data"]), headers=headers, content_type="application/json")
    assert (response.status_code, response.data) == (200, b"OK")


def test_the_function_sees_the_attributes_as_sent(checking):
    # The framework's check fails (flask.abort(500)) on any attribute that differs: a changed time too.
    event = dict(CLOUD_EVENT, time="2020-08-16T13:58:54.471765Z")
    response = checking.post("/", data=json.dumps(event), content_type="application/cloudevents+json")
    assert response.status_code == 500


def test_a_request_that_is_no_cloud_event_is_400(checking):
    response = checking.post("/", json={"name": "john"})
    assert response.status_code == 400
    assert response.text == "Bad Request: expected a CloudEvent (ce-* headers or application/cloudevents+json)"


def test_the_examples_print_reaches_the_log(capfd):
    response = cloud_event_client("hello").post("/", data=json.dumps(CLOUD_EVENT), content_type="application/cloudevents+json")
    assert response.status_code == 200
    assert "Received event with ID: my-id and data {'name': 'john'}" in capfd.readouterr().out


def test_background_functions_are_refused_at_start_up():
    from funcwsgi.errors import StartupError

    with pytest.raises(StartupError, match="FUNCTION_SIGNATURE_TYPE"):
        cloud_event_client("hello", FUNCTION_SIGNATURE_TYPE="event")


# -- @functions_framework.typed ---------------------------------------------------


@pytest.fixture(scope="module", params=CLIENT_KINDS)
def typed(request):
    pytest.importorskip("functions_framework", reason="installed in the cloudevents 1.x environment only (make test-cloudevents-1)")

    def client(target: str) -> Client:
        return client_of(make_app(environ={"FUNCTION_TARGET": target}, handler_folder=function_folder("gcf_typed")), request.param)

    return client


@pytest.mark.parametrize(
    ("target", "sent", "status", "body"),
    [
        pytest.param("function_typed", {"name": "john", "age": 10}, 200, b'{"name": "john", "age": 10}', id="typed"),
        pytest.param("function_typed_reflect", {"name": "jane", "age": 20}, 200, b'{"name": "jane", "age": 20}', id="reflect"),
        pytest.param("function_typed_different_types", {"name": "jane", "age": 20}, 200, b'{"country": "Monaco", "population": 40000}', id="different-types"),
        pytest.param("function_typed_no_return", {"name": "jane", "age": 20}, 200, b"", id="no-return"),
        pytest.param("function_typed_string_return", {"name": "jane", "age": 20}, 200, b"Hello jane", id="string-return"),
        pytest.param("function_typed_faulty_from_dict", {"country": "Monaco", "population": 40000}, 500, b"Internal Server Error", id="faulty-from-dict"),
        pytest.param("function_typed", {"name": "x", "age": 1}, 500, b"Internal Server Error", id="function-raises"),
    ],
)
def test_typed_functions_as_the_framework_calls_them(typed, target, sent, status, body):
    response = typed(target).post("/", json=sent)
    assert (response.status_code, response.data) == (status, body)
    if body.startswith(b"{"):
        assert response.headers["Content-Type"] == "application/json"


def test_typed_body_that_is_not_json_is_400(typed):
    response = typed("function_typed").post("/", data="abc", content_type="application/json")
    assert response.status_code == 400


# -- the conformance client's http-typed validation ---------------------------------


@pytest.fixture(scope="module")
def typed_conformance_server():
    """The framework's conformance function, served as its CI serves it: the http signature type, a typed declaration."""
    pytest.importorskip("functions_framework", reason="installed in the cloudevents 1.x environment only (make test-cloudevents-1)")
    from funcwsgi.config import Config

    # funcwsgi's own thread count, not the suite's smaller one: the client's callers all run at once.
    threads = str(Config.from_env({}).server_numthreads)
    settings = {
        "HANDLER_FOLDER": function_folder("gcf_conformance_typed"), "FUNCTION_TARGET": "typed_conformance_test", "FUNCTION_SIGNATURE_TYPE": "http",
        "SERVER_NUMTHREADS": threads,
    }
    with serving({"typed": settings}) as running:
        yield running["typed"]


def test_http_typed_conformance_validation(typed_conformance_server):
    """functions-framework-conformance client/validate.go validateTyped: POST application/json, the request echoed in "payload"."""
    import requests

    sent = {"message": "Hello world!"}
    response = requests.post(typed_conformance_server.url + "/", data=json.dumps(sent), headers={"Content-Type": "application/json"})
    assert 200 <= response.status_code <= 299, response.text
    assert json.loads(response.content)["payload"] == sent


def test_http_typed_conformance_concurrent_calls(typed_conformance_server):
    """client/concurrency.go (-validate-concurrency): 10 callers at once send the typed function arbitrary JSON."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    def call(n: int) -> dict:
        response = requests.post(typed_conformance_server.url + "/", json={"n": n}, timeout=10)
        assert response.status_code == 200, (response.status_code, response.headers, response.text)
        return response.json()

    with ThreadPoolExecutor(10) as pool:
        assert list(pool.map(call, range(10))) == [{"payload": {"n": n}} for n in range(10)]
