from __future__ import annotations

import pytest

from ..conftest import CLIENT_KINDS, client_of
from ..support.paths import function_folder


@pytest.fixture(params=CLIENT_KINDS)
def client_for(request):
    """Every test of this module twice: called plainly and through PEP 3333's validator."""
    from funcwsgi import make_app

    def build(scenario, *, environ=None, **overrides):
        return client_of(make_app(environ=environ or {}, handler_folder=function_folder(scenario), **overrides), request.param)

    return build


@pytest.fixture
def client(client_for):
    return client_for("req_res")


def test_healthz(client):
    response = client.get("/healthz")
    assert (response.status_code, response.data) == (200, b"OK")


def test_favicon(client):
    response = client.get("/favicon.ico")
    assert (response.status_code, response.data) == (204, b"")


def test_head_healthz_has_no_body(client):
    response = client.head("/healthz")
    assert (response.status_code, response.data) == (200, b"")


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@pytest.mark.parametrize("path", ["/", "/anything/deep", "/healthz/more"])
def test_every_method_and_path_reaches_the_function(client, method, path):
    response = client.open(path, method=method)
    assert response.status_code == 200
    assert response.data == f"{method} {path}".encode()


def test_post_to_healthz_reaches_the_function(client):
    assert client.post("/healthz").data == b"POST /healthz"


def test_head_reaches_the_function_without_body(client):
    response = client.head("/x")
    assert response.status_code == 200
    assert response.data == b""
    assert response.headers["Content-Length"] == str(len("HEAD /x"))
