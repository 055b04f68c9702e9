"""CORS: preflights answered by the layer, allowed origins get the headers, others nothing."""

from __future__ import annotations

import pytest

from funcwsgi.config import Config
from funcwsgi.errors import ConfigError

ORIGIN = "https://shop.example"
PREFLIGHT = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-token"}


@pytest.fixture
def listed(client_for):
    return client_for("observed", environ={"SERVER_CORS_ORIGINS": f"{ORIGIN}, https://admin.example", "SERVER_CORS_MAX_AGE": "60"})


def test_off_by_default(client_for):
    client = client_for("observed")
    assert "cors" not in client.application.layers
    response = client.get("/", headers={"Origin": ORIGIN})
    assert "Access-Control-Allow-Origin" not in response.headers


def test_preflight_is_answered_without_calling_the_function(listed):
    response = listed.options("/fail", headers=PREFLIGHT)
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert response.headers["Access-Control-Allow-Methods"] == "GET, HEAD, POST, PUT, PATCH, DELETE"
    assert response.headers["Access-Control-Allow-Headers"] == "content-type, x-token"
    assert response.headers["Access-Control-Max-Age"] == "60"
    assert response.headers["Vary"] == "Origin"


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(dict(PREFLIGHT, Origin="https://evil.example"), id="origin-not-listed"),
        pytest.param(dict(PREFLIGHT, **{"Access-Control-Request-Method": "TRACE"}), id="method-not-allowed"),
    ],
)
def test_refused_preflight_is_403(listed, headers):
    response = listed.options("/", headers=headers)
    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response.headers


def test_allowed_origin_gets_headers_on_the_real_call(listed):
    response = listed.post("/", headers={"Origin": ORIGIN})
    assert response.text == "ok"
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert response.headers["Access-Control-Expose-Headers"] == "X-Request-Id"


def test_other_origins_and_plain_options_reach_the_function(listed):
    assert "Access-Control-Allow-Origin" not in listed.get("/", headers={"Origin": "https://evil.example"}).headers
    response = listed.options("/", headers={"Origin": ORIGIN})  # no Access-Control-Request-Method: not a preflight
    assert response.text == "ok" and response.headers["Access-Control-Allow-Origin"] == ORIGIN


def test_wildcard_without_credentials(client_for):
    client = client_for("observed", environ={"SERVER_CORS_ORIGINS": "*", "SERVER_CORS_HEADERS": "content-type"})
    response = client.options("/", headers=dict(PREFLIGHT, Origin="https://any.example"))
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["Access-Control-Allow-Headers"] == "content-type"
    assert "Vary" not in response.headers


def test_credentials_need_listed_origins():
    with pytest.raises(ConfigError, match="SERVER_CORS_CREDENTIALS=true with SERVER_CORS_ORIGINS='\\*' is refused"):
        Config.from_env({"SERVER_CORS_ORIGINS": "*", "SERVER_CORS_CREDENTIALS": "true"})
    config = Config.from_env({"SERVER_CORS_ORIGINS": ORIGIN, "SERVER_CORS_CREDENTIALS": "true"})
    assert config.server_cors_credentials


def test_bad_methods_are_refused():
    with pytest.raises(ConfigError, match="SERVER_CORS_METHODS='GET,P0ST' is invalid"):
        Config.from_env({"SERVER_CORS_METHODS": "GET,P0ST"})


def test_with_listed_origins_every_answer_varies_by_origin(listed):
    """Fetch, "CORS protocol and HTTP caches": a cache must not give a CORS call the answer kept for another origin's."""
    assert listed.get("/").headers["Vary"] == "Origin"  # no Origin at all
    assert listed.get("/", headers={"Origin": "https://evil.example"}).headers["Vary"] == "Origin"
    refused = listed.options("/", headers=dict(PREFLIGHT, Origin="https://evil.example"))
    assert refused.status_code == 403 and refused.headers["Vary"] == "Origin"
    assert listed.get("/", headers={"Origin": ORIGIN}).headers["Vary"] == "Origin"
