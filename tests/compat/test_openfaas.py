"""OpenFaaS python3-http and python3-flask functions, in the templates' layout, behind the watchdog's variables."""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving

WATCHDOG = {"fprocess": "python index.py", "mode": "http", "upstream_url": "http://127.0.0.1:5000"}


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            "http": {"HANDLER_FOLDER": function_folder("openfaas_http"), **WATCHDOG},
            "flask": {"HANDLER_FOLDER": function_folder("openfaas_flask"), **WATCHDOG},
            "flask-raw": {"HANDLER_FOLDER": function_folder("openfaas_flask"), "RAW_BODY": "true", **WATCHDOG},
            # Only the layout: function/handler.py defining handle.
            "layout-only": {"HANDLER_FOLDER": function_folder("openfaas_http")},
        }
    ) as running:
        yield running


def test_http_template_dict_response(servers):
    response = requests.post(servers["http"].url + "/", data="world")
    assert (response.status_code, response.text) == (200, "Hello from OpenFaaS! world")
    assert response.headers["X-Host"]
    assert "functions/openfaas_http/function/handler.py:handle" in servers["http"].stdout


def test_http_template_event_fields_and_json_body(servers):
    response = requests.put(servers["http"].url + "/json?q=1&q=2", headers={"X-Agent": "t"})
    assert response.status_code == 201 and response.headers["Content-Type"] == "application/json"
    assert response.json() == {"method": "PUT", "query": ["1", "2"], "agent": "t"}


def test_http_template_other_returns(servers):
    url = servers["http"].url
    assert requests.get(url + "/bytes").content == b"\x00\x01"
    text = requests.get(url + "/text")
    assert (text.status_code, text.text) == (200, "a plain string")


def test_http_template_failure_is_plain_500(servers):
    response = requests.get(servers["http"].url + "/fail")
    assert (response.status_code, response.text) == (500, "Internal Server Error")
    servers["http"].wait_for_output("abc123")


def test_http_template_methods(servers):
    assert requests.options(servers["http"].url + "/").status_code == 405


def test_flask_template_body_as_text_or_bytes(servers):
    assert requests.post(servers["flask"].url + "/", data="héllo".encode()).text == "str:'héllo'"
    assert requests.post(servers["flask-raw"].url + "/", data=b"\xff").text == "bytes:b'\\xff'"
    assert requests.delete(servers["flask"].url + "/").status_code == 405


def test_layout_alone_is_recognised(servers):
    assert requests.post(servers["layout-only"].url + "/", data="x").text == "Hello from OpenFaaS! x"


RESPONSE_SHAPES = [
    "/headers-dict", "/headers-list", "/no-body", "/no-status", "/number-body", "/dict-body", "/dict-body-own-type",
    "/status-text", "/none", "/string", "/bytes", "/list", "/tuple", "/response",
]


@pytest.fixture(scope="module")
def template_and_funcwsgi():
    """tests/functions/openfaas_responses served by the python3-http template's own index.py (on waitress) and by funcwsgi."""
    import sys

    from ..support.ports import free_port
    from ..support.processes import Server, base_env

    root = function_folder("openfaas_responses")
    port = free_port()
    launcher = "import sys; sys.path.insert(0, sys.argv[1]); import index, waitress; waitress.serve(index.app, host='127.0.0.1', port=int(sys.argv[2]))"
    template = Server([sys.executable, "-c", launcher, root, str(port)], base_env(), port)
    try:
        template.wait_ready("/headers-dict")
        with serving({"funcwsgi": {"HANDLER_FOLDER": root, **WATCHDOG}}) as running:
            yield template, running["funcwsgi"]
    finally:
        template.stop()


@pytest.mark.parametrize("path", RESPONSE_SHAPES)
def test_every_shape_format_response_accepts_is_answered_as_the_template_answers_it(template_and_funcwsgi, path):
    theirs, ours = (requests.get(server.url + path) for server in template_and_funcwsgi)
    assert (ours.status_code, ours.reason, ours.content) == (theirs.status_code, theirs.reason, theirs.content)
    own = {"server", "date", "content-length", "x-request-id", "connection"}
    assert {k.lower(): v for k, v in ours.headers.items() if k.lower() not in own} == {k.lower(): v for k, v in theirs.headers.items() if k.lower() not in own}
