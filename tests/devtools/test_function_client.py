"""funcwsgi.testing (funcwsgi/devtools/function_client.py): a function called as the runtime calls it, without a server."""

from __future__ import annotations

from funcwsgi.testing import FunctionClient

from ..support.paths import function_folder


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


HOOKED = '''
import os

EVENTS = os.path.join(os.path.dirname(__file__), "events.log")


def _record(what):
    with open(EVENTS, "a") as events:
        events.write(what + "\\n")


def start():
    if os.path.exists(os.path.join(os.path.dirname(__file__), "fail-start")):
        raise RuntimeError("cannot reach the database")
    _record("start")


def stop():
    _record("stop")


def main(req, res):
    _record("call")
    return res.set_code(201).set_body("made")
'''


def hooked_function(tmp_path):
    (tmp_path / "handler.py").write_text(HOOKED)
    return tmp_path


def events(folder) -> list[str]:
    path = folder / "events.log"
    return path.read_text().splitlines() if path.exists() else []


def test_start_runs_when_the_client_is_made_and_stop_when_it_closes(tmp_path):
    folder = hooked_function(tmp_path)
    with FunctionClient(folder) as client:
        assert events(folder) == ["start"]
        response = client.get("/")
        assert (response.status_code, response.text) == (201, "made")
    assert events(folder) == ["start", "call", "stop"]
    client.close()
    assert events(folder) == ["start", "call", "stop"], "stop() runs once"


def test_a_failing_start_fails_the_client_as_it_stops_a_server(tmp_path):
    import pytest

    from funcwsgi.errors import StartupError

    folder = hooked_function(tmp_path)
    (folder / "fail-start").touch()
    with pytest.raises(StartupError, match=r"start\(\) in .*handler.py raised RuntimeError: cannot reach the database"):
        FunctionClient(folder)
