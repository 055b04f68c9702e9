"""Kubeless functions that import bottle get bottle's request and response bound to the call."""

from __future__ import annotations

from werkzeug.test import Client

from funcwsgi import make_app


def client(tmp_path, source: str) -> Client:
    (tmp_path / "handler.py").write_text(source)
    return Client(make_app(environ={}, handler_folder=str(tmp_path)))


def test_bottle_request_is_the_call(tmp_path):
    app = client(tmp_path, "import bottle\ndef main(event, context):\n    return {'path': bottle.request.path, 'q': bottle.request.query.q, 'json': bottle.request.json}\n")
    assert app.post("/a?q=1", json={"x": 1}).get_json() == {"path": "/a", "q": "1", "json": {"x": 1}}


def test_response_state_is_reset_per_call(tmp_path):
    app = client(
        tmp_path,
        "from bottle import response\n"
        "def main(event, context):\n"
        "    if event['data'] == b'set':\n"
        "        response.status = 418\n"
        "        response.set_header('X-Set', '1')\n"
        "    return 'ok'\n",
    )
    first = app.post("/", data=b"set")
    assert first.status_code == 418 and first.headers["X-Set"] == "1"
    second = app.post("/", data=b"other")
    assert second.status_code == 200 and "X-Set" not in second.headers
    assert second.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_http_error_body_is_plain_text(tmp_path):
    app = client(tmp_path, "import bottle\ndef main(event, context):\n    bottle.abort(401, '<b>who?</b>')\n")
    response = app.get("/")
    assert response.status_code == 401 and response.text == "<b>who?</b>"
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_tuple_return_wins_over_response_state(tmp_path):
    app = client(tmp_path, "from bottle import response\ndef main(event, context):\n    response.status = 500\n    return 'fine', 200\n")
    assert app.get("/").status_code == 200
