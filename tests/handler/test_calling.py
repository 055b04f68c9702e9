from __future__ import annotations

import io
import json
import subprocess
import sys
import threading

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

from ..conftest import CLIENT_KINDS, client_of
from ..support.paths import function_folder


@pytest.fixture(params=CLIENT_KINDS)
def client_for(request):
    """Every test of this module twice: called plainly and through PEP 3333's validator."""
    from funcwsgi import make_app

    def build(scenario, *, environ=None, **overrides):
        return client_of(make_app(environ=environ or {}, handler_folder=function_folder(scenario), **overrides), request.param)

    return build


def test_req_res_hello(client_for):
    response = client_for("hello").get("/")
    assert (response.status_code, response.data) == (204, b"")


def test_req_only(client_for):
    client = client_for("req_only")
    assert client.post("/", json={"name": "ada"}).get_json() == {"method": "POST", "name": "ada"}
    assert client.get("/?name=bob").get_json() == {"method": "GET", "name": "bob"}


def test_no_args_reads_the_request_through_the_sdk(client_for):
    assert client_for("no_args").get("/?id=7").get_json() == {"id": "7", "again": "7"}


def test_no_args_request_is_correct_under_many_threads(client_for):
    client_factory = client_for
    app = client_factory("no_args").application
    results: dict[int, dict] = {}

    def call(i: int) -> None:
        results[i] = Client(app).get(f"/?id={i}&sleep=0.01", buffered=True).get_json()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: {"id": str(i), "again": str(i)} for i in range(40)}


def test_sdk_get_request_is_none_outside_a_call():
    import sdk

    assert sdk.get_request() is None


def test_event_context(client_for):
    client = client_for("event_context", environ={"FUNC_NAME": "orders", "FUNC_NAMESPACE": "shop", "FUNC_TIMEOUT": "30"})
    body = client.post(
        "/",
        json={"id": 1},
        headers={"ce-type": "order.created", "ce-source": "/shop", "ce-specversion": "1.0", "ce-id": "a1"},
    ).get_json()
    assert body["data"] == {"id": 1}
    # Kyma <=3.12 (lib/ce.py) put in the event only the ce-* keys the request carried.
    assert body["ce"] == {"ce-type": "order.created", "ce-source": "/shop", "ce-specversion": "1.0", "ce-id": "a1"}
    assert body["method"] == "POST"
    context = body["context"]
    assert context["function-name"] == "orders"
    assert context["namespace"] == "shop"
    assert context["timeout"] == 30.0
    assert context["runtime"] == "python314"
    assert "memory-limit" in context


def test_event_context_non_json_body_is_raw(client_for):
    body = client_for("event_context").post("/", data=b"plain", content_type="text/plain").get_json()
    assert body["data"] == "plain"


def test_async_function_is_awaited(client_for):
    client = client_for("async_fn")
    for _ in range(3):  # the thread's loop is reused
        assert client.get("/a").get_json() == {"async": True, "path": "/a"}


@pytest.mark.parametrize(
    ("path", "status", "fragment"),
    [
        pytest.param("/missing", 404, b"Not Found", id="abort-404"),
        pytest.param("/forbidden", 403, b"members only", id="abort-with-description"),
        pytest.param("/method", 405, b"Method Not Allowed", id="abort-405"),
    ],
)
def test_http_exceptions_become_their_own_responses(client_for, path, status, fragment):
    response = client_for("http_error").get(path)
    assert response.status_code == status
    assert fragment in response.data
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_405_keeps_the_allow_header(client_for):
    assert client_for("http_error").get("/method").headers["Allow"] == "POST"


def test_bad_json_is_400_without_decoder_details(client_for):
    response = client_for("http_error").post("/json", data=b"{oops", content_type="application/json")
    assert response.status_code == 400
    assert b"not valid JSON" in response.data
    assert b"Expecting" not in response.data


def test_signature_can_be_forced(tmp_path):
    (tmp_path / "handler.py").write_text("def main(a, b):\n    return {'a': type(a).__name__}\n")
    client = Client(make_app(environ={"HANDLER_SIGNATURE": "event-context"}, handler_folder=str(tmp_path)))
    assert client.get("/").get_json() == {"a": "Event"}


def test_make_app_with_a_callable():
    def main(req, res):
        res.set_body({"path": req.path})

    assert Client(make_app(main, environ={})).get("/x").get_json() == {"path": "/x"}


def test_make_app_mounted_under_a_prefix():
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    def main(req, res):
        res.set_body({"path": req.path, "root": req.root_path, "url": req.url})

    def host(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"host app"]

    mounted = DispatcherMiddleware(host, {"/fn": make_app(main, environ={})})
    client = Client(mounted)
    body = client.get("/fn/orders/7").get_json()
    assert body["path"] == "/orders/7"
    assert body["root"] == "/fn"
    assert body["url"].endswith("/fn/orders/7")
    assert client.get("/fn/healthz").data == b"OK"
    assert client.get("/other").data == b"host app"


def test_make_app_inside_flask():
    flask = pytest.importorskip("flask")
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    host = flask.Flask("host")
    host.wsgi_app = DispatcherMiddleware(host.wsgi_app, {"/fn": make_app(lambda req: {"p": req.path}, environ={})})
    assert json.loads(host.test_client().get("/fn/a").data) == {"p": "/a"}


def _cyclic_garbage_per_call(call, calls=40):
    """Objects a served call leaves that only the garbage collector can free (reference cycles), per call."""
    import gc

    for _ in range(10):
        call()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(calls):
            call()
        gc.collect()
        left = len(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return left / calls


def _wsgi_call(app, path="/", method="GET", body=b""):
    import io

    def call():
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "test", "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "test", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
            "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/json",
            "wsgi.errors": io.StringIO(), "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        answer = app(environ, lambda status, headers, exc_info=None: None)
        for _ in answer:
            pass
        getattr(answer, "close", lambda: None)()

    return call


@pytest.mark.parametrize(
    ("scenario", "path", "method", "body"),
    [("hello", "/", "GET", b""), ("req_res", "/json", "POST", b'{"a": 1}'), ("streaming", "/", "GET", b""), ("req_only", "/", "GET", b"")],
)
def test_a_served_call_leaves_no_reference_cycles(scenario, path, method, body):
    # A cycle per call is freed only by the garbage collector, whose passes then grow with the calls
    # in flight: on the event loop that doubled the p99 at 400 connections (docs/performance.md).
    app = make_app(environ={}, handler_folder=function_folder(scenario))
    assert _cyclic_garbage_per_call(_wsgi_call(app, path, method, body)) == 0


@pytest.mark.parametrize("query", ["", "?streamed=1"])
def test_uploaded_files_are_closed_when_the_call_ends(client_for, query):
    # Both ends of a call release its request: the commonest (a list body) inline, a streamed body's as it closes.
    uploads = []
    client = client_for("uploads")
    response = client.post(
        "/" + query,
        data={"photo": (io.BytesIO(b"x" * 600_000), "photo.jpg"), "note": "hi"},
        environ_overrides={"tests.uploads": uploads},
    )
    assert response.status_code == 200
    response.close()
    assert len(uploads) == 1
    assert uploads[0].closed


def test_a_request_without_content_type_has_no_uploads_to_close(client_for):
    # werkzeug parses a form only with a content type: the function sees no files, and none is left open.
    uploads = []
    response = client_for("uploads").post("/", data=b"x" * 1000, environ_overrides={"tests.uploads": uploads})
    assert (response.status_code, response.get_json(), uploads) == (200, {}, [])


BUILT_AT_START = """
import sys
from funcwsgi import make_app
make_app(handler_folder=sys.argv[1])
print("werkzeug.wrappers" in sys.modules)
"""


@pytest.mark.parametrize(("folder", "imported"), [("modules_loaded", False), ("serving", True)])
def test_werkzeug_is_imported_at_start_only_for_a_function_that_reads_its_request(folder, imported):
    """One that reads it would otherwise import werkzeug in its first call, inside that call's timeout."""
    command = [sys.executable, "-c", BUILT_AT_START, str(function_folder(folder))]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.splitlines()[-1] == str(imported)
