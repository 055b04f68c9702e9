"""Azure Functions apps, v2 (function_app.py) and v1 (*/function.json), served unchanged with the azure-functions types."""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving

pytest.importorskip("azure.functions")


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            "v2": {"HANDLER_FOLDER": function_folder("azure_v2"), "FUNCTIONS_WORKER_RUNTIME": "python"},
            # Only the project files: host.json and */function.json.
            "v1": {"HANDLER_FOLDER": function_folder("azure_v1")},
        }
    ) as running:
        yield running


def test_v2_quickstart_function(servers):
    url = servers["v2"].url
    assert requests.get(url + "/api/hello?name=Ada").text == "Hello, Ada. This HTTP triggered function executed successfully."
    assert requests.post(url + "/api/hello", json={"name": "Bo"}).text.startswith("Hello, Bo.")
    assert requests.get(url + "/api/HELLO?name=c").status_code == 200  # the host matches routes case-insensitively
    # Repeated query values reach params joined by commas, as the host's query strings do.
    assert requests.get(url + "/api/hello?name=a&name=b").text.startswith("Hello, a,b.")


def test_v2_utf8_path_and_headers_are_text(servers):
    # The server's environ holds the bytes as latin-1; the host gives the worker UTF-8 text.
    got = requests.get(servers["v2"].url + "/api/p/caf%C3%A9", headers={"X-Utf": "Zoë".encode()})
    assert got.json() == {"name": "café", "url": servers["v2"].url + "/api/p/café", "utf": "Zoë"}


def test_v2_route_constraints_and_precedence(servers):
    url = servers["v2"].url
    item = requests.get(url + "/api/items/42?x=1", headers={"X-Agent": "t"})
    assert item.headers["Content-Type"].startswith("application/json")
    assert item.json() == {"id": 42, "url": servers["v2"].url + "/api/items/42?x=1", "method": "GET", "agent": "t"}
    latest = requests.get(url + "/api/items/latest")
    assert (latest.text, latest.headers["X-Route"]) == ("latest", "literal")
    assert requests.get(url + "/api/items/abc").status_code == 404  # {id:int}
    assert requests.post(url + "/api/items/42").status_code == 404  # GET only


def test_v2_blueprint_optional_and_catch_all(servers):
    url = servers["v2"].url
    assert requests.get(url + "/api/orders/acme").text == "orders of acme page 1"
    assert requests.post(url + "/api/orders/acme/3").text == "orders of acme page 3"
    upload = requests.post(url + "/api/files/a/b.txt", data=b"12345")
    assert (upload.status_code, upload.text) == (201, "upload:a/b.txt:5")


def test_v2_errors_are_plain(servers):
    failed = requests.get(servers["v2"].url + "/api/fail")
    assert (failed.status_code, failed.text) == (500, "Internal Server Error")
    servers["v2"].wait_for_output("Endpoint=sb://secret")
    assert requests.get(servers["v2"].url + "/hello").status_code == 404  # outside the route prefix


def test_v1_functions_and_route_prefix(servers):
    url = servers["v1"].url
    assert requests.get(url + "/v1/HttpExample?name=Ada").text == "Hello, Ada!"
    assert requests.post(url + "/v1/HttpExample", data={"name": "Bo"}).text == "Hello, Bo!"
    assert requests.get(url + "/v1/products/books/7").json() == {"category": "books", "id": "7"}
    assert requests.get(url + "/v1/products/books").json() == {"category": "books"}
    assert requests.get(url + "/api/HttpExample").status_code == 404
    assert "Calling it with the azure contract" in servers["v1"].stdout


@pytest.mark.parametrize(
    ("kind", "status", "content_type", "body"),
    [
        ("text", 200, "text/plain; charset=utf-8", b"plain"),
        ("html", 200, "text/html; charset=latin-1", b"<p>page</p>"),
        ("json", 200, "application/json", b'{"a": 1}'),  # no charset: the worker adds it to text/* only
        ("own", 200, "text/csv", b"own"),  # a Content-Type header wins over mimetype
        ("binary", 202, "application/octet-stream", b"\x00\x01"),
    ],
)
def test_content_type_is_the_workers_for_each_mimetype(servers, kind, status, content_type, body):
    response = requests.get(servers["v2"].url + f"/api/mimetype/{kind}")
    assert (response.status_code, response.headers["Content-Type"], response.content) == (status, content_type, body)


def test_a_header_said_twice_keeps_its_last_value_and_every_cookie_is_sent(servers):
    response = requests.get(servers["v2"].url + "/api/headers")
    assert response.headers["X-Twice"] == "second"  # the worker sends the headers as a map
    assert response.raw.headers.getlist("Set-Cookie") == ["a=1; Path=/", "b=2; Path=/"]


@pytest.mark.parametrize(
    ("kind", "status", "content_type", "body"),
    [
        ("str", 200, "text/plain; charset=utf-8", "a string"),
        # The host parses a returned str as JSON and writes what it parsed with Newtonsoft's ToString().
        ("json-str", 200, "text/plain; charset=utf-8", '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}'),
        ("response-object", 201, "application/json", '{"made":true}'),
        ("scalar", 200, "text/plain; charset=utf-8", "True"),
    ],
)
def test_a_returned_str_is_what_the_host_makes_of_it(servers, kind, status, content_type, body):
    response = requests.get(servers["v2"].url + f"/api/returns/{kind}")
    assert (response.status_code, response.headers["Content-Type"], response.text) == (status, content_type, body)
    if kind == "response-object":
        assert response.headers["X-From"] == "object"


@pytest.mark.parametrize("kind", ["none", "dict"])
def test_a_return_the_worker_cannot_encode_is_a_plain_500(servers, kind):
    response = requests.get(servers["v2"].url + f"/api/returns/{kind}")
    assert (response.status_code, response.text) == (500, "Internal Server Error")
    servers["v2"].wait_for_output("an Azure HTTP function returns func.HttpResponse or str")


def test_v1_named_http_output_binding(servers):
    """function.json's http output named "res": the function gets a func.Out; what it sets is the answer."""
    answered = requests.get(servers["v1"].url + "/v1/output/set")
    assert (answered.status_code, answered.text) == (201, "set through res")
    unset = requests.get(servers["v1"].url + "/v1/output/unset")
    assert (unset.status_code, unset.text) == (200, "")  # the host's OkResult when no output was set
