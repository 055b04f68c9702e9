"""funcwsgi.testing: a function called as the runtime calls it, without a server."""

from __future__ import annotations

from funcwsgi.testing import FunctionClient

from .conftest import function_folder


def test_calls_the_function_in_a_folder():
    client = FunctionClient(function_folder("req_res"))
    assert client.get("/code").status_code == 201
    response = client.post("/json", json={"a": 1})
    assert response.json == {"ok": True, "echo": {"a": 1}}
    assert client.put("/x").text == "PUT /x"
    assert client.delete("/x", query_string={"q": "1"}).text == "DELETE /x"


def test_reserved_routes_and_errors_behave_as_in_production():
    assert FunctionClient(function_folder("req_res")).get("/healthz").status_code == 200
    failing = FunctionClient(function_folder("raises"))
    response = failing.get("/")
    assert response.status_code == 500 and response.text == "Internal Server Error"


def test_a_callable_and_settings():
    def main(*args):
        return f"{len(args)} arguments"

    assert FunctionClient(main).post("/", data=b"abc").text == "2 arguments"
    assert FunctionClient(main, environ={"HANDLER_SIGNATURE": "none"}).get("/").text == "0 arguments"
    assert FunctionClient(main, handler_signature="req").get("/").text == "1 arguments"


def test_cloud_event_in_and_out():
    def main(req, res):
        res.set_header("ce-specversion", "1.0").set_header("ce-type", req.headers["ce-type"] + ".done")
        res.set_header("ce-source", "/fn").set_header("ce-id", "r-" + req.headers["ce-id"])
        res.set_json({"got": req.get_json(), "source": req.headers["ce-source"]})

    response = FunctionClient(main).cloud_event({"n": 1}, type="com.example.ping", source="/tests", id="7")
    reply = response.cloud_event
    assert reply is not None
    assert (reply.type, reply.source, reply.id) == ("com.example.ping.done", "/fn", "r-7")
    assert reply.data == {"got": {"n": 1}, "source": "/tests"}


def test_plain_reply_has_no_cloud_event():
    assert FunctionClient(function_folder("req_res")).get("/").cloud_event is None
