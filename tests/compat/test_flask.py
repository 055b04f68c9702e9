"""Flask-style functions: a request context and a real flask.Request, only for those that import Flask."""

from __future__ import annotations

import sys

import flask
import pytest
from werkzeug.test import Client, EnvironBuilder

from funcwsgi import make_app
from funcwsgi.compat.flask import FlaskFunctionRequest, flask_request
from funcwsgi.errors import LoadError
from funcwsgi.request import get_or_create_request

from ..support.paths import BIN, REPO
from ..support.processes import base_env, run_to_exit


def test_a_request_an_outer_layer_made_becomes_the_flask_request():
    environ = EnvironBuilder(method="POST", data=b"body once").get_environ()
    outer = get_or_create_request(environ)
    outer.cloud_event = "decoded"
    assert outer.get_data() == b"body once"  # the stream is now consumed
    request = flask_request(environ)
    assert request is outer and isinstance(request, flask.Request)
    assert request.get_data() == b"body once" and request.cloud_event == "decoded"
    assert get_or_create_request(environ) is request


def test_without_an_earlier_request_one_is_made():
    environ = EnvironBuilder().get_environ()
    request = flask_request(environ)
    assert type(request) is FlaskFunctionRequest
    assert flask_request(environ) is request


def write(tmp_path, source: str) -> str:
    (tmp_path / "handler.py").write_text(source)
    return str(tmp_path)


def test_zero_argument_flask_function(tmp_path):
    folder = write(
        tmp_path,
        "import sdk\nfrom flask import request, jsonify, g\n"
        "def main():\n"
        "    g.seen = True\n"
        "    return jsonify(path=request.path, same=sdk.get_request() is request._get_current_object())\n",
    )
    client = Client(make_app(environ={}, handler_folder=folder))
    assert client.get("/p").get_json() == {"path": "/p", "same": True}


def test_one_argument_flask_function_gets_the_flask_request(tmp_path):
    folder = write(tmp_path, "import flask\ndef main(request):\n    return {'flask': isinstance(request, flask.Request)}\n")
    assert Client(make_app(environ={}, handler_folder=folder)).get("/").get_json() == {"flask": True}


def test_functions_without_flask_get_the_plain_request(tmp_path):
    folder = write(tmp_path, "def main(request):\n    return type(request).__name__\n")
    assert Client(make_app(environ={}, handler_folder=folder)).get("/").text == "FunctionRequest"


def test_flask_bad_json_is_400(tmp_path):
    folder = write(tmp_path, "from flask import request\ndef main():\n    return request.get_json()\n")
    response = Client(make_app(environ={}, handler_folder=folder)).post("/", data=b"{x", content_type="application/json")
    assert response.status_code == 400


def test_missing_flask_names_the_extra(tmp_path, monkeypatch):
    folder = write(tmp_path, "from flask import request\ndef main():\n    return request.path\n")
    monkeypatch.setitem(sys.modules, "flask", None)  # what an environment without Flask does
    with pytest.raises(LoadError) as caught:
        make_app(environ={}, handler_folder=folder)
    assert str(caught.value).startswith(f"{folder}/handler.py failed to import 'flask'")
    assert str(caught.value).endswith("install funcwsgi[flask]")


def test_functions_without_flask_do_not_load_it():
    """No cost for the others: serving a plain function never imports Flask."""
    code = (
        "import sys\nfrom werkzeug.test import Client\nimport funcwsgi\n"
        "def main(req, res):\n    res.set_body('x')\n"
        "assert Client(funcwsgi.make_app(main, environ={})).get('/').text == 'x'\n"
        "print('loaded:', 'flask' in sys.modules, 'bottle' in sys.modules)\n"
    )
    result = run_to_exit([str(BIN / "python"), "-c", code], base_env(), cwd=REPO)
    assert "loaded: False False" in result.stdout.splitlines(), result.stdout + result.stderr


def test_stream_with_context_reads_the_request_while_streaming(tmp_path):
    folder = write(
        tmp_path,
        "from flask import request, Response, stream_with_context\n"
        "def main():\n"
        "    def chunks():\n"
        "        yield 'a='\n"
        "        yield request.args.get('a', '?')\n"
        "    return Response(stream_with_context(chunks()), mimetype='text/plain')\n",
    )
    assert Client(make_app(environ={}, handler_folder=folder)).get("/?a=5").text == "a=5"
