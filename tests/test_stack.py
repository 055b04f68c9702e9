from __future__ import annotations

import logging
from types import MethodType

import pytest

from funcwsgi import make_app
from funcwsgi.config import Config
from funcwsgi.handler.calling import FunctionApp
from funcwsgi.handler.loader import wrap_callable
from funcwsgi.middleware.body_limit import BodyLimitMiddleware
from funcwsgi.middleware.http2_requests import Http2RequestsMiddleware
from funcwsgi.middleware.http_rules import HttpRulesMiddleware
from funcwsgi.middleware.server_errors import ErrorMiddleware
from funcwsgi.stack import LAYERS, Layer, Made, build_stack, inner, served_stack


def hello(req, res):
    res.set_body("hi")


def by_name(name: str) -> Layer:
    return next(layer for layer in LAYERS if layer.name == name)


def test_every_layer_is_declared_by_its_class():
    for layer in LAYERS:
        assert isinstance(layer.cls, type), f"{layer.name} is built by {layer.cls!r}, not by a middleware class"


def test_repr_names_the_class_and_where_each_option_comes_from():
    assert repr(by_name("body-limit")) == "Layer('body-limit', BodyLimitMiddleware, max_bytes=SERVER_MAX_BODY_SIZE)"
    assert repr(by_name("timeout")) == "Layer('timeout', TimeoutMiddleware, seconds=SERVER_CALL_TIMEOUT, max_threads=<call_threads>)"
    assert repr(by_name("errors")) == "Layer('errors', ErrorMiddleware)"


@pytest.mark.parametrize(
    ("overrides", "shown"),
    [
        pytest.param({}, "body-limit", id="default"),
        pytest.param({"server_max_body_size": 2048}, "body-limit(max_bytes=2048)", id="changed"),
    ],
)
def test_describe_shows_only_options_that_differ_from_the_default(overrides, shown):
    assert by_name("body-limit").describe(Config.from_env({}, **overrides)) == shown


def test_the_first_layer_is_the_outermost():
    config = Config.from_env({})
    layers = [by_name("errors"), by_name("body-limit")]
    app, built = build_stack(config, wrap_callable(hello, config), layers)
    assert built == layers
    assert isinstance(app, ErrorMiddleware)
    assert isinstance(inner(app), BodyLimitMiddleware)
    assert inner(app).too_large.status == "413 Request Entity Too Large"


def test_each_layer_calls_the_next_through_its_bound_call():
    """Called inline: an object's call goes through its type's call slot, one C recursion a layer, which a
    greenlet on the loop copies at every switch (``stack.called``)."""
    service = make_app(hello, environ={"SERVER_ACCESS_LOG": "true", "SERVER_CORS_ORIGINS": "*"})
    assert service.call_stack == service.wsgi.__call__
    layer, crossed = service.wsgi, []
    while hasattr(layer, "app"):
        assert type(layer.app) is MethodType, f"{layer!r} calls {layer.app!r}, not a bound __call__"
        assert layer.app.__func__ is type(inner(layer)).__call__
        crossed.append(type(layer))
        layer = inner(layer)
    assert type(layer) is FunctionApp
    assert len(crossed) == len(service.layers) - 1  # every layer but the function


class Checking:
    """A server's call that keeps HTTP's rules and checks HTTP/2 itself (as the edge worker's)."""

    keeps_http_rules = True
    checks_http2 = True


class Plain:
    """A server's call that declares nothing."""


def crossed(app):
    """The classes of the layers ``app`` (a bound __call__) runs through, each calling the next through its bound call."""
    layer, found = app.__self__, []
    while hasattr(layer, "app"):
        assert type(layer.app) is MethodType
        found.append(type(layer))
        layer = inner(layer)
    return found


def test_a_server_that_does_a_layers_work_itself_calls_the_stack_without_that_layer():
    service = make_app(hello, environ={"SERVER_HTTP2": "true"})
    whole = crossed(service.call_stack)
    assert whole[:3] == [HttpRulesMiddleware, ErrorMiddleware, Http2RequestsMiddleware]
    served = served_stack(service.wsgi, Checking)
    assert crossed(served) == [ErrorMiddleware, *whole[3:]]
    assert served.__self__ is not inner(service.wsgi), "the service's own errors layer was relinked"
    assert crossed(service.call_stack) == whole, "the service's own stack changed"


def test_a_server_that_declares_nothing_calls_the_whole_stack():
    service = make_app(hello, environ={"SERVER_HTTP2": "true"})
    assert served_stack(service.wsgi, Plain) == service.call_stack


def test_what_a_server_does_itself_is_declared_on_the_layers():
    assert {layer.name: layer.done_by_server for layer in LAYERS if layer.done_by_server} == {"http": "keeps_http_rules", "http2": "checks_http2"}


def test_options_are_read_from_settings_and_made_values():
    config = Config.from_env({}, server_max_body_size=10)
    seen = {}

    class Probe:
        def __init__(self, app, *, limit, made):
            seen.update(limit=limit, made=made, inner=app)
            self.app = app

        def __call__(self, environ, start_response):  # pragma: no cover - never served here
            return self.app(environ, start_response)

    layer = Layer("probe", Probe, {"limit": "server_max_body_size", "made": Made(lambda config, loaded, inner: loaded.name)})
    build_stack(config, wrap_callable(hello, config), [layer])
    assert seen["limit"] == 10 and seen["made"] == "hello"
    assert type(seen["inner"].__self__).__name__ == "FunctionApp"


def test_a_disabled_layer_is_not_in_the_stack():
    layers = make_app(hello, environ={}, server_max_body_size=0).layers
    assert "body-limit" not in layers and layers[-1] == "function"


def test_the_start_up_log_line_shows_changed_options(caplog):
    with caplog.at_level(logging.INFO, logger="funcwsgi"):
        make_app(hello, environ={}, server_max_body_size=4096, server_call_timeout=7)
    lines = [record.getMessage() for record in caplog.records if record.getMessage().startswith("Middleware stack:")]
    assert lines == [
        "Middleware stack: http > errors > http2(max_body=4096) > request-id > reserved-routes > metrics > body-limit(max_bytes=4096) > cancellation(seconds=7) > timeout(seconds=7) > cloudevents > function"
    ]


def test_the_default_log_line_is_the_plain_names(caplog):
    with caplog.at_level(logging.INFO, logger="funcwsgi"):
        service = make_app(hello, environ={})
    assert f"Middleware stack: {' > '.join(service.layers)}" in [record.getMessage() for record in caplog.records]


@pytest.mark.parametrize(
    "scenario, settings, on_loop",
    [
        pytest.param("knative_loop", {}, True, id="knative-instance"),
        pytest.param("knative_handle", {"LISTEN_ADDRESS": "127.0.0.1:8080"}, True, id="knative-module-handle"),
        pytest.param("knative_loop", {"SERVER_EVENT_LOOP": "off"}, False, id="knative-threads-asked-for"),
        pytest.param("serving", {}, False, id="sync-function"),
    ],
)
def test_a_knative_function_is_served_on_the_loop_like_any_async_one(scenario, settings, on_loop):
    from funcwsgi.compat import load_function, resolve
    from funcwsgi.stack import serves_on_loop

    from .support.paths import function_folder

    config = resolve(Config.from_env({"HANDLER_FOLDER": function_folder(scenario), **settings}))
    assert serves_on_loop(config, load_function(config)) is on_loop


def _liveness(app, path="/healthz"):
    from werkzeug.test import Client

    answer = Client(app).get(path)
    return answer.status_code, answer.text


class _Sick:
    """A layer with a liveness check: declared or not, as each test says."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):  # pragma: no cover - the probes answer before it
        return self.app(environ, start_response)

    def liveness_problem(self):
        return "the sick layer says no"


def test_a_layer_declaring_a_liveness_check_fails_the_liveness_probes():
    config = Config.from_env({})
    sick = Layer("sick", _Sick, liveness=_Sick.liveness_problem)
    app, _ = build_stack(config, wrap_callable(hello, config), [by_name("reserved-routes"), sick])
    assert _liveness(app) == (503, "the sick layer says no")
    assert _liveness(app, "/health/liveness") == (503, "the sick layer says no")
    assert _liveness(app, "/health/readiness") == (200, "OK")


def test_a_check_the_layer_does_not_declare_is_not_run():
    # The probes take the declared checks only: a method that happens to be called
    # liveness_problem is not looked for in the built layers.
    config = Config.from_env({})
    app, _ = build_stack(config, wrap_callable(hello, config), [by_name("reserved-routes"), Layer("sick", _Sick)])
    assert _liveness(app) == (200, "OK")


def test_the_timeout_layer_declares_its_stuck_threads_check():
    from funcwsgi.middleware.timeout import TimeoutMiddleware

    assert by_name("timeout").liveness is TimeoutMiddleware.liveness_problem
    assert [layer.name for layer in LAYERS if layer.liveness is not None] == ["timeout"]
