from __future__ import annotations

import logging

import pytest

from funcwsgi.probes.health import HealthCheck, hook_check

from ..support.wsgi import StartResponse


def boom():
    raise RuntimeError("password=hunter2")


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        pytest.param(lambda: None, None, id="none"),
        pytest.param(lambda: True, None, id="true"),
        pytest.param(lambda: False, "ready() returned False", id="false"),
        pytest.param(lambda: "database unreachable", "database unreachable", id="message"),
        pytest.param(lambda: "", "ready() returned False", id="empty-message"),
        pytest.param(boom, "ready() failed", id="raises"),
    ],
)
def test_what_a_hook_returns_decides_the_probe(result, problem):
    assert hook_check(result, "ready", "/fn/handler.py")() == problem


async def _warming():
    return "warming up"


async def _healthy():
    return True


async def _async_boom():
    raise RuntimeError("password=hunter2")


@pytest.mark.parametrize(
    ("hook", "problem"),
    [
        pytest.param(_warming, "warming up", id="reason"),
        pytest.param(_healthy, None, id="true"),
        pytest.param(_async_boom, "ready() failed", id="raises"),
    ],
)
def test_an_async_hook_is_awaited_for_its_answer(hook, problem):
    """On threads here; on the event-loop path the call's task awaits it (the kit's python-async hooks fixture)."""
    assert hook_check(hook, "ready", "/fn/handler.py")() == problem


def test_a_raising_hook_is_logged_never_shown(caplog):
    with caplog.at_level(logging.ERROR):
        assert hook_check(boom, "alive", "/fn/handler.py")() == "alive() failed"
    assert "alive() in /fn/handler.py raised" in caplog.text
    assert "hunter2" in caplog.text  # in the log, with the traceback; never in the response


def test_the_first_failing_check_answers_503():
    start_response = StartResponse()
    app = HealthCheck([lambda: None, lambda: "cache cold", lambda: "never asked"])
    assert b"".join(app({"REQUEST_METHOD": "GET"}, start_response)) == b"cache cold"
    assert start_response.status == "503 Service Unavailable"
    assert b"".join(HealthCheck([])({"REQUEST_METHOD": "GET"}, start_response)) == b"OK"
    assert start_response.status == "200 OK"
    assert b"".join(HealthCheck([])({"REQUEST_METHOD": "HEAD"}, start_response)) == b""


def test_probe_routes_call_the_functions_hooks(client_for, monkeypatch, tmp_path):
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))
    client = client_for("serving")
    assert [client.get(path).text for path in ("/healthz", "/health/readiness", "/health/liveness")] == ["OK"] * 3
    (tmp_path / "not-ready").touch()
    response = client.get("/health/readiness")
    assert (response.status_code, response.text) == (503, "warming up the cache")
    (tmp_path / "not-alive").touch()
    assert client.get("/healthz").status_code == 503
    assert client.get("/health/liveness").text == "alive() returned False"


def test_without_hooks_the_probes_answer_ok(client_for):
    client = client_for("hello", server_call_timeout=0)
    answers = [client.get(path) for path in ("/healthz", "/health/readiness", "/health/liveness")]
    assert [(response.text, response.headers.get("Cache-Control")) for response in answers] == [("OK", "no-store")] * 3


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_probe_answers_are_never_cached(client_for, monkeypatch, tmp_path, method):
    """A cache between the platform and the pod must not answer a probe from an old answer.

    Mutation caught: ``("Cache-Control", "no-store")`` left out of the probes' headers
    (``NO_STORE`` in funcwsgi/replies.py, which ``probe_reply`` adds).
    """
    monkeypatch.setenv("HEALTH_DIR", str(tmp_path))
    client = client_for("serving")
    paths = ("/healthz", "/health/readiness", "/health/liveness")
    healthy = [client.open(path, method=method) for path in paths]
    (tmp_path / "not-ready").touch()
    (tmp_path / "not-alive").touch()
    failing = [client.open(path, method=method) for path in paths]
    assert [response.status_code for response in healthy + failing] == [200] * 3 + [503] * 3
    assert [response.headers.get("Cache-Control") for response in healthy + failing] == ["no-store"] * 6
